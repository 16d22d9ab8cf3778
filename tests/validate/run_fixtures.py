#!/usr/bin/env python3
"""Declarative unit tests of the validator: every fixtures/*.yaml document is a
case (name, rule, expect = allowed | allowed-with-warning | denied, phrase,
and either a whole `object` or a `kind` + `spec` [+ `metadata`]).  A denied case
may give `message` instead of (or beside) `phrase`: then the whole denial text
must be exactly that (istiod's wording, character for character).  A case with
`meshNetworks` (a YAML text) instead of an object judges that document as
istiod's mesh.ParseMeshNetworks does (its error is the "message").  All cases go
through one run of the `verdicts` driver (wh_validate_object); the runner
checks each verdict and that every `rule` has examples of at least two of the
three outcomes.  Prints one line per failure and a summary.

usage: run_fixtures.py VERDICTS_BINARY FIXTURE_DIR
"""
import glob
import json
import os
import subprocess
import sys

import yaml

API = {
    "DestinationRule": "networking.istio.io/v1", "VirtualService": "networking.istio.io/v1",
    "ServiceEntry": "networking.istio.io/v1", "Gateway": "networking.istio.io/v1",
    "Sidecar": "networking.istio.io/v1", "WorkloadEntry": "networking.istio.io/v1",
    "WorkloadGroup": "networking.istio.io/v1", "EnvoyFilter": "networking.istio.io/v1alpha3",
    "ProxyConfig": "networking.istio.io/v1beta1", "AuthorizationPolicy": "security.istio.io/v1",
    "PeerAuthentication": "security.istio.io/v1", "RequestAuthentication": "security.istio.io/v1",
    "Telemetry": "telemetry.istio.io/v1", "WasmPlugin": "extensions.istio.io/v1alpha1",
    "TrafficExtension": "extensions.istio.io/v1alpha1",
    "HTTPRoute": "gateway.networking.k8s.io/v1",
}


def build(case):
    if "object" in case:
        return case["object"]
    meta = {"name": "x", "namespace": "ns5"}
    meta.update(case.get("metadata") or {})
    obj = {"apiVersion": case.get("apiVersion", API[case["kind"]]), "kind": case["kind"], "metadata": meta}
    if "spec" in case:
        obj["spec"] = case["spec"]
    return obj


def check(case, v):
    expect, phrase = case["expect"], case.get("phrase")
    warnings = v.get("warnings") or []
    if expect == "allowed":
        if not v["allowed"]:
            return "denied: %r" % v.get("message")
        if warnings:
            return "unexpected warnings %r" % warnings
    elif expect == "allowed-with-warning":
        if not v["allowed"]:
            return "denied: %r" % v.get("message")
        if not any(phrase in w for w in warnings):
            return "no warning has %r: %r" % (phrase, warnings)
    elif expect == "denied":
        if v["allowed"]:
            return "allowed (warnings %r)" % warnings
        if phrase is None and "message" not in case:
            return "a denied case needs a phrase or a message"
        if "message" in case and case["message"] != v.get("message"):
            return "message %r is not exactly %r" % (v.get("message"), case["message"])
        if phrase is not None and phrase not in (v.get("message") or ""):
            return "message %r lacks %r" % (v.get("message"), phrase)
    else:
        return "bad expect %r" % expect
    return None


def main():
    driver, fixture_dir = sys.argv[1], sys.argv[2]
    cases = []
    for path in sorted(glob.glob(os.path.join(fixture_dir, "*.yaml"))):
        with open(path) as f:
            for doc in yaml.safe_load_all(f):
                if doc:
                    doc["_file"] = os.path.basename(path)
                    cases.append(doc)
    stream = "".join(json.dumps({"meshNetworks": c["meshNetworks"]} if "meshNetworks" in c else
                                {"object": build(c), "namespace": "ns5"}) + "\n" for c in cases)
    p = subprocess.run([driver], input=stream, capture_output=True, text=True, timeout=120)
    lines = p.stdout.splitlines()
    failed = 0
    if p.returncode != 0 or len(lines) != len(cases):
        print("driver failed (exit %d, %d verdicts for %d cases): %s" % (p.returncode, len(lines), len(cases),
                                                                         p.stderr[:500]))
        return 1
    rules = {}
    names = set()
    for case, line in zip(cases, lines):
        if case["name"] in names:
            print("DUPLICATE case name %s" % case["name"])
            failed += 1
        names.add(case["name"])
        why = check(case, json.loads(line))
        if why:
            failed += 1
            print("FAIL %s/%s: %s" % (case["_file"], case["name"], why))
        rules.setdefault(case.get("rule", case["name"]), set()).add(case["expect"])
    for rule, kinds in sorted(rules.items()):
        # a rule needs two outcomes: accepted and refused/warned (a kind that always warns, such as
        # EnvoyFilter, shows its rules as warned versus refused)
        if len(kinds) < 2:
            failed += 1
            print("RULE %s has only %s examples" % (rule, next(iter(kinds))))
    print("%d passed, %d failed (%d rules)" % (len(cases) - failed if failed <= len(cases) else 0, failed,
                                               len(rules)))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
