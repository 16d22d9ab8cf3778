#!/usr/bin/env python3
"""Feed every case of the istio-validate conformance corpus through webhookd's
/validate over real TLS (mode A) and, for object cases with CREATE/UPDATE,
through `webhookctl validate -f` (mode B), as the corpus README describes.

Prints one line per failing case and a closing "N passed, M failed" line; the
exit status is 0 only when every case passes in every mode that applies.

usage: run_conformance.py --webhookd BIN --webhookctl BIN CASES.yaml
"""
import argparse
import base64
import json
import os
import subprocess
import sys
import tempfile
import uuid

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from wh_https import Webhookd  # noqa: E402


def plural(kind):
    low = kind.lower()
    if low.endswith("y") and not low.endswith("ay"):
        return low[:-1] + "ies"
    if low.endswith("s"):
        return low + "es"
    return low + "s"


def review_for(case):
    obj = case["object"]
    api = obj.get("apiVersion", "")
    group, _, version = api.rpartition("/")
    meta = obj.get("metadata") or {}
    req = {"uid": str(uuid.uuid4()),
           "kind": {"group": group, "version": version, "kind": obj.get("kind", "")},
           "resource": {"group": group, "version": version, "resource": plural(obj.get("kind", ""))},
           "name": meta.get("name", ""), "namespace": meta.get("namespace", ""),
           "operation": case["operation"], "dryRun": bool(case.get("dry_run", False)),
           "userInfo": {"username": "conformance"}, "object": obj}
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": req}


def check_verdict(case, response):
    """None when the AdmissionResponse matches the case, else why not."""
    expect, phrase = case["expect"], case.get("phrase")
    allowed = response.get("allowed")
    warnings = response.get("warnings") or []
    message = (response.get("status") or {}).get("message", "")
    if expect == "allowed":
        if allowed is not True:
            return "denied: %r" % message
        if warnings:
            return "unexpected warnings %r" % warnings
    elif expect == "allowed-with-warning":
        if allowed is not True:
            return "denied: %r" % message
        if not any(phrase in w for w in warnings):
            return "no warning contains %r (warnings %r)" % (phrase, warnings)
    else:
        if allowed is not False:
            return "allowed (warnings %r)" % warnings
        if phrase is not None and phrase not in message:
            return "message %r lacks %r" % (message, phrase)
        if warnings:
            return "warnings sent with a denial: %r" % warnings
    return None


def request_body(r):
    if "body" in r:
        return r["body"].encode("utf-8")
    if "body_base64" in r:
        return base64.b64decode(r["body_base64"])
    if "body_file_inline" in r:
        return json.dumps(r["body_file_inline"]).encode()
    if "body_fill" in r:
        return r["body_fill"]["char"].encode() * int(r["body_fill"]["bytes"])
    return b""


def run_http(server, case):
    if "object" in case:
        review = review_for(case)
        resp = server.request("POST", "/validate", json.dumps(review).encode())
        if resp is None:
            return "connection closed without an answer"
        status, _, body = resp
        if status != 200:
            return "HTTP %d: %r" % (status, body[:200])
        out = json.loads(body)
        if out.get("response", {}).get("uid") != review["request"]["uid"]:
            return "response uid %r != %r" % (out.get("response", {}).get("uid"), review["request"]["uid"])
        if out.get("apiVersion") != "admission.k8s.io/v1" or out.get("kind") != "AdmissionReview":
            return "reply is not an admission.k8s.io/v1 AdmissionReview"
        return check_verdict(case, out.get("response", {}))
    r = case["request"]
    resp = server.request(r.get("method", "POST"), r.get("path", "/validate"), request_body(r),
                          content_type=r.get("content_type"), close="body_fill" in r)
    if resp is None:
        return None if r.get("upstream_closes_connection") else "connection closed without an answer"
    status, _, body = resp
    if status != r["expected_http_status"]:
        return "HTTP %d, want %d: %r" % (status, r["expected_http_status"], body[:200])
    if status != 200:
        text = body.decode("utf-8", "replace")
        return None if case.get("phrase") is None or case["phrase"] in text else \
            "body %r lacks %r" % (text[:200], case["phrase"])
    out = json.loads(body)
    if "expected_response_api_version" in r and out.get("apiVersion") != r["expected_response_api_version"]:
        return "apiVersion %r, want %r" % (out.get("apiVersion"), r["expected_response_api_version"])
    if "expected_response_uid" in r and out.get("response", {}).get("uid") != r["expected_response_uid"]:
        return "uid %r, want %r" % (out.get("response", {}).get("uid"), r["expected_response_uid"])
    return check_verdict(case, out.get("response", {}))


def run_ctl(webhookctl, case, workdir):
    path = os.path.join(workdir, case["name"] + ".yaml")
    with open(path, "w") as f:
        yaml.safe_dump(case["object"], f, default_flow_style=False)
    p = subprocess.run([webhookctl, "validate", "-f", path], capture_output=True, text=True, timeout=60)
    out = p.stdout
    expect, phrase = case["expect"], case.get("phrase")
    if p.returncode not in (0, 1) or p.stderr:
        return "exit %d, stderr %r" % (p.returncode, p.stderr[:200])
    if expect == "allowed":
        if p.returncode != 0 or not out.rstrip("\n").endswith(" is valid"):
            return "output %r (exit %d)" % (out[:300], p.returncode)
    elif expect == "allowed-with-warning":
        if p.returncode != 0 or "is valid with warnings" not in out or phrase not in out:
            return "output %r (exit %d)" % (out[:300], p.returncode)
    else:
        if p.returncode != 1 or " is invalid: " not in out or (phrase and phrase not in out):
            return "output %r (exit %d)" % (out[:300], p.returncode)
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--webhookd", required=True)
    ap.add_argument("--webhookctl", required=True)
    ap.add_argument("cases")
    args = ap.parse_args()

    with open(args.cases) as f:
        cases = [c for c in yaml.safe_load_all(f) if c]
    passed = failed = 0
    with Webhookd(args.webhookd) as server, tempfile.TemporaryDirectory() as workdir:
        for case in cases:
            problems = []
            why = run_http(server, case)
            if why:
                problems.append("http: " + why)
            if "object" in case and case["operation"] in ("CREATE", "UPDATE"):
                why = run_ctl(args.webhookctl, case, workdir)
                if why:
                    problems.append("webhookctl: " + why)
            if not server.alive():
                problems.append("webhookd exited")
            if problems:
                failed += 1
                print("FAIL %s (%s): %s" % (case["name"], case["expect"], "; ".join(problems)))
            else:
                passed += 1
            if not server.alive():
                break
        failed += len(cases) - passed - failed
    if server.exit_problem:
        failed += 1
        print("FAIL webhookd: %s" % server.exit_problem)
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
