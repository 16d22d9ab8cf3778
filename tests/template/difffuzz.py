#!/usr/bin/env python3
"""Differential fuzzer: random templates and data through the C engine and
Go's text/template + Sprig; every output and error must be identical.

usage: difffuzz.py C_BATCH GO_REF [--seed N] [--cases N] [--rounds N] [--save DIR]

ctest runs a short, seeded round; a long run is manual (see README.md).
Disagreements are printed and, with --save, written as fixture YAML that
can be moved into cases/.
"""
import argparse
import json
import os
import random
import sys

from run_fixtures import run

KEYS = ["a", "b", "c", "x", "y", "Name", "list", "m"]
STRINGS = ["", "a", "x y", " pad ", "yes", "1", "1.5", "a\nb", "b,a,c", "é", "<&>", "true", "null", "ab-cd", "-"]
FLOATS = [0, 1, -1, 2, 3, 0.5, 1.5, -2.25, 100, 1e6, 123456789, 1e21, 0.0001]


def rand_data(r, depth=0):
    k = r.random()
    if depth > 2 or k < 0.45:
        return r.choice([r.choice(STRINGS), r.choice(FLOATS), r.choice([True, False]), None, r.choice(STRINGS)])
    if k < 0.7:
        return [rand_data(r, depth + 1) for _ in range(r.randint(0, 3))]
    return {r.choice(KEYS): rand_data(r, depth + 1) for _ in range(r.randint(0, 4))}


class Gen:
    def __init__(self, r):
        self.r = r
        self.vars = ["$"]
        self.defs = []

    def field(self):
        r = self.r
        path = "".join("." + r.choice(KEYS) for _ in range(r.randint(1, 3)))
        base = r.choice(["", "", "", "$"] + [v for v in self.vars if v != "$"])
        if base == "$" and r.random() < 0.3:
            return "$"
        return base + path if base else path

    def const(self):
        r = self.r
        c = r.random()
        if c < 0.35:
            return json.dumps(r.choice(STRINGS), ensure_ascii=False)
        if c < 0.6:
            return str(r.choice([0, 1, 2, 3, -1, 10, 42]))
        if c < 0.7:
            return r.choice(["1.5", "0.25", "1e3", "-2.0"])
        if c < 0.8:
            return r.choice(["true", "false"])
        if c < 0.85:
            return "nil"
        return "`raw " + r.choice(["x", "y"]) + "`"

    def arg(self, depth):
        r = self.r
        c = r.random()
        if c < 0.35:
            return self.field()
        if c < 0.7 or depth > 2:
            return self.const()
        if c < 0.75:
            return "."
        return "(" + self.pipeline(depth + 1) + ")"

    FUNCS = {
        "default": 2, "empty": 1, "coalesce": 3, "ternary": 3, "quote": 1, "squote": 2, "indent": 2,
        "nindent": 2, "trim": 1, "trimAll": 2, "trimPrefix": 2, "trimSuffix": 2, "trunc": 2, "lower": 1,
        "upper": 1, "title": 1, "replace": 3, "contains": 2, "hasPrefix": 2, "hasSuffix": 2, "split": 2,
        "splitList": 2, "join": 2, "list": 3, "append": 2, "dict": 4, "get": 2, "hasKey": 2, "pick": 2,
        "omit": 2, "toString": 1, "int": 1, "int64": 1, "float64": 1, "atoi": 1, "add": 2, "sub": 2, "mul": 2,
        "div": 2, "mod": 2, "max": 2, "min": 2, "b64enc": 1, "b64dec": 1, "sha256sum": 1, "toJson": 1,
        "toPrettyJson": 1, "len": 1, "index": 2, "eq": 2, "ne": 2, "lt": 2, "le": 2, "gt": 2, "ge": 2,
        "and": 2, "or": 2, "not": 1, "print": 2, "println": 2, "first": 1, "last": 1, "rest": 1,
        "reverse": 1, "uniq": 1, "without": 2, "has": 2, "compact": 1, "concat": 2, "toYaml": 1,
        "fromJson": 1, "typeOf": 1, "kindOf": 1, "cat": 2, "repeat": 2, "substr": 3, "nospace": 1,
        "plural": 3, "until": 1, "sortAlpha": 1, "semverCompare": 2, "slice": 2, "merge": 2, "deepEqual": 2,
        "toStrings": 1, "initial": 1, "dig": 3, "round": 2, "ceil": 1, "floor": 1, "html": 1, "js": 1,
        "urlquery": 1, "required": 2, "fromYaml": 1, "tpl": 2, "include": 2, "abbrev": 2, "abbrevboth": 3,
        "wrap": 2, "wrapWith": 3, "swapcase": 1, "osBase": 1, "osDir": 1, "osClean": 1, "osExt": 1, "seq": 2,
        "mustChunk": 2,
    }

    def call(self, depth):
        r = self.r
        if r.random() < 0.12:
            fmt = r.choice(["%v", "%s", "%d", "%q", "%5.2f", "%-4s|", "%x", "%t", "%v-%v", "%03d", "%T", "%%",
                            "%e", "%g", "%+d", "%8.3s"])
            n = fmt.count("%") - 2 * fmt.count("%%") + r.choice([0, 0, 0, 1, -1])
            return "printf " + json.dumps(fmt) + "".join(" " + self.arg(depth) for _ in range(max(n, 0)))
        name = r.choice(list(self.FUNCS))
        n = self.FUNCS[name] + r.choice([0, 0, 0, 0, 0, -1, 1])
        if name == "include" and self.defs:
            return f'include {json.dumps(r.choice(self.defs))} {self.arg(depth)}'
        if name in ("include", "tpl"):
            return 'tpl "{{ .a }}" ' + self.arg(depth)
        return name + "".join(" " + self.arg(depth) for _ in range(max(n, 0)))

    def command(self, depth):
        c = self.r.random()
        if c < 0.55:
            return self.call(depth)
        if c < 0.85:
            return self.field()
        return self.const()

    def pipeline(self, depth=0):
        r = self.r
        p = self.command(depth)
        for _ in range(r.choice([0, 0, 0, 1, 1, 2])):
            name = r.choice(["quote", "upper", "default \"d\"", "len", "toString", "trim", "indent 2", "toJson",
                             "printf \"%v\"", "eq 1", "not", "lower", "b64enc", "trunc 3", "first", "toYaml"])
            p += " | " + name
        return p

    def block(self, depth=0, in_range=False):
        r = self.r
        out = []
        for _ in range(r.randint(1, 4)):
            c = r.random()
            trim_l = "-" if r.random() < 0.2 else ""
            trim_r = "-" if r.random() < 0.2 else ""
            if c < 0.25:
                out.append(r.choice(["x", " ", "\n", "  a\n", "text "]))
            elif c < 0.55 or depth > 2:
                out.append("{{%s %s %s}}" % (trim_l, self.pipeline(), trim_r))
            elif c < 0.62:
                v = "$v%d" % len(self.vars)
                out.append("{{ %s := %s }}" % (v, self.pipeline()))
                self.vars.append(v)
            elif c < 0.72:
                mark = len(self.vars)
                body = self.block(depth + 1, in_range)
                els = ("{{ else }}" + self.block(depth + 1, in_range)) if r.random() < 0.4 else ""
                out.append("{{ if %s }}%s%s{{ end }}" % (self.pipeline(), body, els))
                del self.vars[mark:]
            elif c < 0.8:
                mark = len(self.vars)
                body = self.block(depth + 1, in_range)
                out.append("{{ with %s }}%s{{ end }}" % (self.pipeline(), body))
                del self.vars[mark:]
            elif c < 0.92:
                mark = len(self.vars)
                decl = ""
                if r.random() < 0.5:
                    k, v = "$k%d" % len(self.vars), "$e%d" % len(self.vars)
                    self.vars += [k, v]
                    decl = "%s, %s := " % (k, v)
                body = self.block(depth + 1, True)
                if r.random() < 0.15:
                    body += r.choice(["{{ break }}", "{{ continue }}"])
                els = ("{{ else }}" + self.block(depth + 1, in_range)) if r.random() < 0.3 else ""
                out.append("{{ range %s%s }}%s%s{{ end }}" % (decl, self.field() if r.random() < 0.7 else self.pipeline(),
                                                               body, els))
                del self.vars[mark:]
            elif self.defs:
                out.append('{{ template %s %s }}' % (json.dumps(r.choice(self.defs)), self.arg(1)))
            else:
                out.append("{{/* c */}}")
        return "".join(out)

    def template(self):
        r = self.r
        text = ""
        for i in range(r.choice([0, 0, 1, 2])):
            name = "d%d" % i
            saved = self.vars
            self.vars = ["$"]
            text += '{{ define "%s" }}%s{{ end }}' % (name, self.block(1))
            self.vars = saved
            self.defs.append(name)
        return text + self.block()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("c_bin")
    ap.add_argument("go_bin")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cases", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--save")
    a = ap.parse_args()
    if not os.path.exists(a.go_bin):
        print(f"SKIP: Go reference {a.go_bin} not built")
        sys.exit(77)
    failed = total = 0
    for rnd in range(a.rounds):
        r = random.Random(a.seed + rnd)
        cases = []
        for i in range(a.cases):
            g = Gen(r)
            cases.append({"name": f"f{rnd}-{i}", "template": g.template(), "data": rand_data(r, 0),
                          "helm": True, "options": []})
        got, want = run(a.c_bin, cases, timeout=900), run(a.go_bin, cases, timeout=900)
        for c in cases:
            g, w = got[c["name"]], want[c["name"]]
            total += 1
            if g["out"] == w["out"] and g["err"] == w["err"]:
                continue
            failed += 1
            print(f"DIFF {c['name']} (seed {a.seed + rnd})\n  template: {c['template']!r}\n  data: {json.dumps(c['data'])}\n"
                  f"  go: out={w['out']!r} err={w['err']!r}\n  c:  out={g['out']!r} err={g['err']!r}")
            if a.save:
                os.makedirs(a.save, exist_ok=True)
                with open(os.path.join(a.save, c["name"] + ".json"), "w") as f:
                    json.dump(c, f)
    print(f"{total - failed}/{total} random cases agree with Go")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
