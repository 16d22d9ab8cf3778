#!/usr/bin/env python3
"""No dependency cycle between the C modules, and handlers/inject's stages only include forward.

A module is a source path without its extension (common/wh_buf = wh_buf.h + wh_buf.c).  Module A
depends on module B when a file of A includes B's header (the compiler's own dependency list: the
.o.d files of the build, or `cc -MM` when a build has none) or when A's object file needs a symbol
that B's object file defines (`nm`).  Any strongly connected component of more than one module
(Tarjan) is a cycle: the test prints it with one reason per edge and fails.  There is no list of
tolerated cycles: CONTRIBUTING.md ("Layers") says how to cut one.

The stages of handlers/inject are read from CONTRIBUTING.md ("handlers/inject: the pipeline's
stages"): a file of stage N may include the headers of stages <= N and the shared modules; a shared
module (the paragraph "Shared by every stage") includes no stage at all.

  check_deps.py SOURCE_DIR BUILD_DIR              check (ctest deps.cycles)
  check_deps.py SOURCE_DIR BUILD_DIR --graph      print every module's dependencies
  check_deps.py SOURCE_DIR BUILD_DIR --self-test  also prove that both checks fail on planted mistakes
"""
import json
import os
import re
import shlex
import subprocess
import sys


def compile_entries(source, build):
    """(source file, object file, flags) of every translation unit of the build that lives in SOURCE."""
    with open(os.path.join(build, "compile_commands.json")) as f:
        entries = json.load(f)
    out = []
    for e in entries:
        src = os.path.realpath(e["file"])
        if not src.startswith(source + os.sep) or in_build_dir(source, src):
            continue
        args = shlex.split(e["command"])
        obj = args[args.index("-o") + 1]
        flags = []
        for i, a in enumerate(args):
            if a.startswith(("-I", "-D", "-std")):
                flags.append(a)
            elif a == "-isystem":
                flags += [a, args[i + 1]]
        out.append((src, os.path.join(e["directory"], obj), flags))
    return out


def in_build_dir(source, path):
    rel = os.path.relpath(path, source)
    return rel.split(os.sep)[0].startswith("build")


def module(source, path):
    return os.path.splitext(os.path.relpath(path, source))[0]


def includes(source, src, obj, flags):
    """The project headers `src` includes, directly or not."""
    depfile = obj + ".d"
    if os.path.exists(depfile):
        text = open(depfile).read()
    else:
        text = subprocess.run(["cc", "-MM"] + flags + [src], check=True, capture_output=True, text=True).stdout
    files = text.replace("\\\n", " ").split(":", 1)[1].split()
    return [os.path.realpath(p) for p in files
            if os.path.realpath(p).startswith(source + os.sep) and os.path.realpath(p) != src
            and not in_build_dir(source, os.path.realpath(p))]


def direct_includes(path):
    """`#include "x.h"` lines of one file (for the stage check: what a file itself asks for)."""
    return re.findall(r'^\s*#\s*include\s+"([^"]+)"', open(path).read(), re.M)


def symbols(obj):
    defined, undefined = set(), set()
    for line in subprocess.run(["nm", "-P", obj], check=True, capture_output=True, text=True).stdout.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        name, kind = parts[0], parts[1]
        if kind == "U":
            undefined.add(name)
        elif kind in "TDBRCVW" and not name.startswith("."):
            defined.add(name)
    return defined, undefined


def build_graph(source, build):
    entries = compile_entries(source, build)
    edges = {}  # module -> {module: reason}

    def add(a, b, why):
        if a != b:
            edges.setdefault(a, {}).setdefault(b, why)
        else:
            edges.setdefault(a, {})

    definers = {}
    undefined = {}
    for src, obj, flags in entries:
        a = module(source, src)
        add(a, a, None)
        for h in includes(source, src, obj, flags):
            add(a, module(source, h), "%s includes %s" % (os.path.relpath(src, source), os.path.relpath(h, source)))
        d, u = symbols(obj)
        undefined[src] = u
        for s in d:
            definers.setdefault(s, set()).add(src)
    for src, u in undefined.items():
        for s in sorted(u):
            where = definers.get(s)
            if where is None or len(where) != 1:
                continue  # a library's symbol, or one each program defines for itself (main, fuzzer entry)
            (dst,) = where
            add(module(source, src), module(source, dst),
                "%s uses %s from %s" % (os.path.relpath(src, source), s, os.path.relpath(dst, source)))
    # headers without a .c of their own: their includes are edges too
    for src, obj, flags in entries:
        for h in includes(source, src, obj, flags):
            for h2 in direct_includes(h):
                p = os.path.realpath(os.path.join(os.path.dirname(h), h2))
                if os.path.exists(p):
                    add(module(source, h), module(source, p), "%s includes %s" % (
                        os.path.relpath(h, source), os.path.relpath(p, source)))
    return entries, edges


def tarjan(edges):
    index, low, on, stack, sccs = {}, {}, set(), [], []
    counter = [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            sccs.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return [c for c in sccs if len(c) > 1]


def cycle_problems(edges):
    problems = []
    for comp in tarjan(edges):
        members = set(comp)
        lines = ["dependency cycle between %d modules: %s" % (len(comp), ", ".join(comp))]
        for a in comp:
            for b, why in sorted(edges[a].items()):
                if b in members:
                    lines.append("    %s -> %s: %s" % (a, b, why))
        problems.append("\n".join(lines))
    return problems


def stages(source):
    """{stem: stage number} and the set of shared stems, from CONTRIBUTING.md."""
    text = open(os.path.join(source, "CONTRIBUTING.md")).read()
    m = re.search(r"^## handlers/inject: the pipeline's stages\n(.*?)(?=^## )", text, re.M | re.S)
    if m is None:
        raise SystemExit("CONTRIBUTING.md has no section \"handlers/inject: the pipeline's stages\"")
    section = m.group(1)
    stage_of = {}
    for row in re.finditer(r"^\|\s*(\d+)\s*\|\s*(\w+)\s*\|([^|]*)\|", section, re.M):
        for stem in stems(row.group(3), row.group(2)):
            stage_of[stem] = int(row.group(1))
    shared_text = section[section.index("Shared by every stage"):]
    shared = set(stems(shared_text.split("\n\n")[0], None)) - set(stage_of)
    return stage_of, shared


def stems(cell, stage_name):
    out = []
    for tok in re.findall(r"`([^`]+)`", cell):
        m = re.fullmatch(r"(wh_inject\w*|_\w+)\.(?:\{h,c\}|c|h)", tok)
        if m is None:
            continue
        stem = m.group(1)
        out.append("wh_inject" + stem if stem.startswith("_") else stem)
    return out


def stage_problems(source, stage_of, shared, read_includes=direct_includes):
    problems = []
    inject = os.path.join(source, "handlers", "inject")
    files = sorted({os.path.join(inject, f) for f in os.listdir(inject) if f.endswith((".c", ".h"))})
    for path in files:
        stem = os.path.splitext(os.path.basename(path))[0]
        mine = stage_of.get(stem)
        for inc in read_includes(path):
            other = os.path.splitext(os.path.basename(inc))[0]
            theirs = stage_of.get(other)
            if theirs is None or other == stem:
                continue
            rel = os.path.relpath(path, source)
            if stem in shared:
                problems.append("%s is shared by every stage but includes %s (stage %d)" % (rel, inc, theirs))
            elif mine is not None and theirs > mine:
                problems.append("%s (stage %d) includes %s of a later stage (%d)" % (rel, mine, inc, theirs))
    return problems


def check(source, build):
    entries, edges = build_graph(source, build)
    problems = cycle_problems(edges)
    stage_of, shared = stages(source)
    if not stage_of:
        problems.append("CONTRIBUTING.md lists no stage of handlers/inject")
    problems += stage_problems(source, stage_of, shared)
    return entries, edges, problems


def self_test(source, edges, stage_of, shared):
    """The checks must be able to fail: plant a cycle and a backward include."""
    planted = {k: dict(v) for k, v in edges.items()}
    planted.setdefault("common/wh_buf", {})["template/set"] = "planted"
    planted.setdefault("template/set", {})["common/wh_buf"] = "planted"
    if not cycle_problems(planted):
        raise SystemExit("self-test: a planted cycle was not reported")
    early = min(stage_of, key=lambda s: stage_of[s])
    late = max(stage_of, key=lambda s: stage_of[s])
    if stage_of[early] == stage_of[late]:
        raise SystemExit("self-test: fewer than two stages read from CONTRIBUTING.md")
    def planted_includes(path):
        found = direct_includes(path)
        if os.path.basename(path).startswith(early + "."):
            found = found + [late + ".h"]
        return found

    if not any(late in p for p in stage_problems(source, stage_of, shared, planted_includes)):
        raise SystemExit("self-test: a planted backward include was not reported")


def main():
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    source, build = os.path.realpath(sys.argv[1]), os.path.realpath(sys.argv[2])
    entries, edges, problems = check(source, build)
    if "--graph" in sys.argv:
        for a in sorted(edges):
            print("%s -> %s" % (a, " ".join(sorted(edges[a])) or "(nothing)"))
    if "--self-test" in sys.argv:
        stage_of, shared = stages(source)
        self_test(source, edges, stage_of, shared)
    for p in problems:
        print(p)
    print("%d modules, %d dependencies, %d problems" % (len(edges), sum(len(v) for v in edges.values()), len(problems)))
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
