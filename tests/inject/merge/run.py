#!/usr/bin/env python3
"""Declarative runner for the merge side of injection (tests/inject/merge/cases).

Each case file names an op:
  smp       original + patch (+ type) -> expected, or `error` (a substring);
            the JSON Patch from original to expected is also generated and
            applied with python3-jsonpatch, which must reproduce expected.
  diff      from -> to: the generated patch applied with python3-jsonpatch
            must give `to`, and be the same when `to` shares the subtrees
            it has equal to `from` (as the injected pod shares the request's).
  quantity  text -> canonical form; `invalid` texts must be rejected.
  json      value -> exact compact text, Go's escaping (`go`) and plain (`plain`).
  overlays  pod + overlays (+ native) -> expected {merged, template} (step 6).
  reapply   pod + original + template (+ tproxy) -> expected pod (step 7).
  post      revision files + pod + template + rendered fields -> expected
            pod, or `error` (step 8, istiod's post-processing).
A seeded property check then diffs random mutations of every document.
"""
import argparse
import copy
import json
import os
import random
import subprocess
import sys
import tempfile

import jsonpatch
import yaml


def run_tool(tool, *args):
    p = subprocess.run([tool, *args], capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


def write_json(tmp, name, value):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        json.dump(value, f)
    return path


def check_diff(tool, tmp, a, b):
    """Return None when diff(a, b) applied to a gives b, and b sharing a's
    equal subtrees gives the same ops (diff-shared), else a message."""
    rc, out, err = run_tool(tool, "diff", write_json(tmp, "a.json", a), write_json(tmp, "b.json", b))
    if rc != 0:
        return "diff failed: " + err.strip()
    rc, shared_out, err = run_tool(tool, "diff-shared", os.path.join(tmp, "a.json"), os.path.join(tmp, "b.json"))
    if rc != 0 or shared_out != out:
        return "diff with shared subtrees differs: %s vs %s %s" % (shared_out[:200], out[:200], err.strip())
    ops = json.loads(out)
    for op in ops:
        if op["op"] not in ("add", "remove", "replace"):
            return "unexpected op " + op["op"]
    try:
        got = jsonpatch.JsonPatch(ops).apply(copy.deepcopy(a))
    except Exception as e:  # jsonpatch raises several types
        return "patch does not apply: %s (%s)" % (e, json.dumps(ops)[:300])
    if got != b:
        return "patched document differs: %s" % json.dumps(got)[:300]
    if a == b and ops:
        return "equal documents gave ops"
    return None


def expect(case, rc, out, err):
    """What one run of the tool got wrong against the case: its "error" (a
    substring of stderr) or its "expected" (the JSON on stdout)."""
    if "error" in case:
        if rc == 0:
            return ["expected an error containing %r, got %s" % (case["error"], out.strip())]
        if case["error"] not in err:
            return ["error %r lacks %r" % (err.strip(), case["error"])]
        return []
    if rc != 0:
        return ["failed: " + err.strip()]
    got = json.loads(out)
    if got != case["expected"]:
        return ["got %s\n    want %s" % (json.dumps(got), json.dumps(case["expected"]))]
    return []


def mutate(rng, doc, depth=0):
    """A random structural variant of doc (for the diff property check)."""
    if isinstance(doc, dict):
        out = {}
        for k, v in doc.items():
            r = rng.random()
            if r < 0.15:
                continue
            out[k] = mutate(rng, v, depth + 1) if r < 0.8 else "changed"
        if rng.random() < 0.3:
            out["new/key~%d" % rng.randrange(10)] = {"x": [1, 2]}
        return out
    if isinstance(doc, list):
        out = [mutate(rng, v, depth + 1) for v in doc if rng.random() > 0.1]
        if rng.random() < 0.3:
            out.insert(rng.randrange(len(out) + 1), {"name": "inserted"})
        return out
    if rng.random() < 0.2:
        return 7 if not isinstance(doc, int) else "seven"
    return doc


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", required=True)
    ap.add_argument("--cases", required=True)
    args = ap.parse_args()
    failures, passed, docs = [], 0, []
    with tempfile.TemporaryDirectory() as tmp:
        for name in sorted(os.listdir(args.cases)):
            if not name.endswith(".yaml"):
                continue
            with open(os.path.join(args.cases, name)) as f:
                case = yaml.safe_load(f)
            errs = []
            op = case["op"]
            if op == "smp":
                rc, out, err = run_tool(args.tool, "smp", case.get("type", "pod"),
                                        write_json(tmp, "o.json", case["original"]),
                                        write_json(tmp, "p.json", case["patch"]))
                errs += expect(case, rc, out, err)
                if "expected" in case:
                    docs += [case["original"], case["expected"]]
                    msg = check_diff(args.tool, tmp, case["original"], case["expected"])
                    if msg:
                        errs.append("json patch: " + msg)
            elif op == "diff":
                docs += [case["from"], case["to"]]
                for a, b in ((case["from"], case["to"]), (case["to"], case["from"]), (case["from"], case["from"])):
                    msg = check_diff(args.tool, tmp, a, b)
                    if msg:
                        errs.append(msg)
            elif op == "quantity":
                for text, want in case["cases"].items():
                    rc, out, err = run_tool(args.tool, "quantity", str(text))
                    if rc != 0 or out.strip() != str(want):
                        errs.append("quantity %s: got %r (%s), want %r" % (text, out.strip(), err.strip(), want))
                for text in case.get("invalid", []):
                    rc, out, err = run_tool(args.tool, "quantity", str(text))
                    if rc == 0:
                        errs.append("quantity %r accepted as %r" % (text, out.strip()))
            elif op == "json":
                for mode in ("go", "plain"):
                    rc, out, err = run_tool(args.tool, "json", mode, write_json(tmp, "j.json", case["value"]))
                    if rc != 0 or out != case[mode]:
                        errs.append("json %s: got %r (%s), want %r" % (mode, out, err.strip(), case[mode]))
                    elif json.loads(out) != case["value"]:
                        errs.append("json %s: %r does not parse back to the value" % (mode, out))
            elif op in ("overlays", "reapply"):
                if op == "overlays":
                    argv = ["overlays", "1" if case.get("native") else "0", write_json(tmp, "o.json", case["pod"]),
                            write_json(tmp, "p.json", case["overlays"])]
                else:
                    argv = ["reapply", "1" if case.get("tproxy") else "0", write_json(tmp, "o.json", case["pod"]),
                            write_json(tmp, "p.json", case["original"]), write_json(tmp, "t.json", case["template"])]
                rc, out, err = run_tool(args.tool, *argv)
                errs += expect(case, rc, out, err)
            elif op == "post":
                rc, out, err = run_tool(args.tool, "post", write_json(tmp, "c.json", case))
                errs += expect(case, rc, out, err)
            else:
                errs.append("unknown op " + op)
            if errs:
                failures.append((name, errs))
            else:
                passed += 1
        rng = random.Random(20261122)
        prop_fail = 0
        for i in range(200):
            base = docs[i % len(docs)]
            a, b = mutate(rng, base), mutate(rng, base)
            msg = check_diff(args.tool, tmp, a, b)
            if msg:
                prop_fail += 1
                if prop_fail <= 3:
                    failures.append(("property#%d" % i, [msg, json.dumps(a), json.dumps(b)]))
    for name, errs in failures:
        print("FAIL %s: %s" % (name, errs[0]))
        for e in errs[1:]:
            print("    " + e)
    print("%d passed, %d failed (+200 diff property checks, %d failed)" % (passed, len(failures) - min(prop_fail, 3), prop_fail))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
