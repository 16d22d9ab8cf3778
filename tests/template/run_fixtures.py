#!/usr/bin/env python3
"""Differential fixture runner: every case of cases/*.yaml goes through the C
engine (tmpl_batch) and Go's text/template + Sprig (goref); outputs and error
messages must be identical.  A case is {name, template, data?, options?,
helm?, err?}; `err: any` accepts any error text as long as both fail (for the
few messages that name Go internals).

usage: run_fixtures.py C_BATCH GO_REF CASE_FILE...
"""
import json
import os
import subprocess
import sys
import tempfile

import yaml


def load_cases(paths):
    cases = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            doc = yaml.safe_load(f) or []
        base = os.path.splitext(os.path.basename(path))[0]
        for c in doc:
            c = dict(c)
            c["name"] = f"{base}/{c['name']}"
            c.setdefault("data", {})
            c.setdefault("options", [])
            c.setdefault("helm", False)
            cases.append(c)
    return cases


def run(binary, cases, timeout=600):
    """Results of a batch of cases through an engine (tmpl_batch or goref), by case name."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(cases, f)
        path = f.name
    try:
        p = subprocess.run([binary, path], capture_output=True, timeout=timeout)
    finally:
        os.unlink(path)
    if p.returncode != 0:
        sys.exit(f"{binary} failed ({p.returncode}): {p.stderr.decode(errors='replace')[:2000]}")
    return {r["name"]: r for r in json.loads(p.stdout)}


def main():
    c_bin, go_bin, files = sys.argv[1], sys.argv[2], sys.argv[3:]
    if not os.path.exists(go_bin):
        print(f"SKIP: Go reference {go_bin} not built (Go 1.19 + sprig missing?)")
        sys.exit(77)
    cases = load_cases(files)
    names = [c["name"] for c in cases]
    if len(set(names)) != len(names):
        sys.exit("duplicate case names")
    got, want = run(c_bin, cases), run(go_bin, cases)
    failed = 0
    for c in cases:
        n = c["name"]
        g, w = got[n], want[n]
        ok = g["out"] == w["out"] and (g["err"] is None) == (w["err"] is None)
        if ok and g["err"] is not None and c.get("err") != "any":
            ok = g["err"] == w["err"]
        if not ok:
            failed += 1
            print(f"FAIL {n}\n  template: {c['template']!r}\n  go:  out={w['out']!r} err={w['err']!r}\n"
                  f"  c:   out={g['out']!r} err={g['err']!r}")
    print(f"{len(cases) - failed}/{len(cases)} cases agree with Go")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
