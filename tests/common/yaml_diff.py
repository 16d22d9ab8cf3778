#!/usr/bin/env python3
"""Differential test of wh_yaml against sigs.k8s.io/yaml (the Go reference).

Every tests/common/yaml/*.yaml fixture is loaded by both (documents split on
'\n---\n'; JSON values compared, 1 == 1.0 as in Go's float64 world; a file
whose first line starts "# each document alone" has each document loaded on
its own by ours too, so that one refused document does not hide the rest), and
every *.json fixture plus the JSON of every loaded YAML document is dumped by
both and compared byte for byte.
"""
import glob, json, os, subprocess, sys

tool, ref, fixtures = sys.argv[1], sys.argv[2], sys.argv[3]
passed = failed = 0

def run(cmd, data):
    return subprocess.run(cmd, input=data, capture_output=True, timeout=60).stdout.decode()

def report(ok, name, detail=""):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print(f"FAIL {name}: {detail}")

dump_inputs = []
for path in sorted(glob.glob(os.path.join(fixtures, "*.yaml"))):
    data = open(path, "rb").read()
    if data.startswith(b"# each document alone"):
        ours = [run([tool, "load"], doc).strip() for doc in data.split(b"\n---\n")]
    else:
        ours = run([tool, "load"], data).splitlines()
    theirs = run([ref, "load"], data).splitlines()
    name = os.path.basename(path)
    if len(ours) != len(theirs):
        report(False, name, f"{len(ours)} documents vs reference {len(theirs)}:\n  ours {ours}\n  ref  {theirs}")
        continue
    for i, (a, b) in enumerate(zip(ours, theirs)):
        if a == "ERROR" or b == "ERROR":
            report(a == b, f"{name}#{i}", f"ours {a!r} reference {b!r}")
            continue
        ja, jb = json.loads(a), json.loads(b)
        report(ja == jb, f"{name}#{i} load", f"\n  ours {a}\n  ref  {b}")
        dump_inputs.append((f"{name}#{i}", json.dumps(jb).encode()))
for path in sorted(glob.glob(os.path.join(fixtures, "*.json"))):
    dump_inputs.append((os.path.basename(path), open(path, "rb").read()))
for name, data in dump_inputs:
    a, b = run([tool, "dump"], data), run([ref, "dump"], data)
    report(a == b, f"{name} dump", f"\n--- ours\n{a}--- reference\n{b}")
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
