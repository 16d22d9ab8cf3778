#!/usr/bin/env python3
"""Hostile and heavy input against the real webhookd /validate over TLS: every
request must get a clear answer (a denying AdmissionResponse or a 4xx) within a
deadline, and the server must stay up.  Also checks the galley_validation_*
metrics istiod exposes (passed, failed by reason except for dry runs, HTTP
errors by status).

usage: run_robustness.py WEBHOOKD_BINARY
"""
import json
import os
import random
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from wh_https import Webhookd  # noqa: E402

DEADLINE = 5.0  # seconds per request, generous for sanitizer builds


def review(obj, operation="CREATE", dry_run=False, uid="u1"):
    api = obj.get("apiVersion", "") if isinstance(obj, dict) else ""
    group, _, version = api.rpartition("/")
    kind = obj.get("kind", "") if isinstance(obj, dict) else ""
    return json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                       "request": {"uid": uid, "kind": {"group": group, "version": version, "kind": kind},
                                   "resource": {"group": group, "version": version,
                                                "resource": kind.lower() + "s"},
                                   "namespace": "ns5", "operation": operation, "dryRun": dry_run,
                                   "object": obj}}).encode()


def dr(spec, name="reviews"):
    return {"apiVersion": "networking.istio.io/v1", "kind": "DestinationRule",
            "metadata": {"name": name, "namespace": "ns5"}, "spec": spec}


def nested(depth):
    return "[" * depth + "]" * depth


def cases():
    rnd = random.Random(42)
    garbage = bytes(rnd.getrandbits(8) for _ in range(4096))
    subsets = [{"name": "v%d" % i, "labels": {"version": "v%d" % i}} for i in range(10000)]
    dup_subsets = [{"name": "same", "labels": {"a": "b c"}} for _ in range(10000)]
    yield "garbage-bytes", garbage, (200, False, "could not decode body")
    yield "truncated-json", review(dr({"host": "r"}))[:-7], (200, False, "could not decode body")
    yield "json-array", b"[1,2,3]", (200, False, "could not decode body")
    yield "deep-nesting-body", nested(100000).encode(), (200, False, "could not decode body")
    deep = nested(1000).encode()
    yield "deep-nesting-in-spec", review(dr({"host": "r", "x": "NEST"})).replace(b'"NEST"', deep), \
        (200, True, None)
    deep_struct = {"apiVersion": "networking.istio.io/v1alpha3", "kind": "EnvoyFilter",
                   "metadata": {"name": "ef", "namespace": "ns5"},
                   "spec": {"configPatches": [{"applyTo": "CLUSTER", "patch": {"operation": "MERGE",
                                                                               "value": {"a": "NEST"}}}]}}
    yield "deep-nesting-in-struct", review(deep_struct).replace(b'"NEST"', deep), (200, True, None)
    yield "object-is-string", review("DestinationRule"), (200, False, "cannot decode configuration")
    yield "spec-wrong-types", review(dr({"host": ["r"], "subsets": {"a": 1}})), \
        (200, False, "error decoding configuration")
    yield "subsets-wrong-element", review(dr({"host": "r", "subsets": [1, 2]})), \
        (200, False, "error decoding configuration")
    yield "labels-not-strings", review(dr({"host": "r", "subsets": [{"name": "a", "labels": {"a": {}}}]})), \
        (200, False, "error decoding configuration")
    yield "huge-string-host", review(dr({"host": "a" * 3000000})), (200, False, "too long (max 255)")
    yield "huge-number", review(dr({"host": "r", "trafficPolicy": {"connectionPool": {"tcp": {
        "maxConnections": 1e300}}}})), (200, False, "error decoding configuration")
    yield "10k-subsets", review(dr({"host": "r", "subsets": subsets})), (200, True, None)
    yield "10k-bad-subsets", review(dr({"host": "r", "subsets": dup_subsets})), \
        (200, False, "duplicate subset names: same")
    yield "4096-port-policies", review(dr({"host": "r", "trafficPolicy": {"portLevelSettings": [
        {"port": {"number": i % 65535 + 1}, "connectionPool": {"tcp": {"maxConnections": i}}}
        for i in range(4096)]}})), (200, True, None)
    yield "many-vs-hosts", review({"apiVersion": "networking.istio.io/v1", "kind": "VirtualService",
                                   "metadata": {"name": "vs", "namespace": "ns5"},
                                   "spec": {"hosts": ["h%d.example.com" % i for i in range(3000)],
                                            "http": [{"route": [{"destination": {"host": "a"}}]}]}}), \
        (200, True, None)
    yield "many-vs-rules", review({"apiVersion": "networking.istio.io/v1", "kind": "VirtualService",
                                   "metadata": {"name": "vs", "namespace": "ns5"},
                                   "spec": {"hosts": ["a"], "http": [
                                       {"match": [{"uri": {"prefix": "/p%d" % i}}],
                                        "route": [{"destination": {"host": "a"}}]} for i in range(5000)]}}), \
        (200, True, None)
    yield "100k-vs-hosts", review({"apiVersion": "networking.istio.io/v1", "kind": "VirtualService",
                                   "metadata": {"name": "vs", "namespace": "ns5"},
                                   "spec": {"hosts": ["h%d.example.com" % i for i in range(100000)],
                                            "tls": [{"match": [{"sniHosts": ["s%d.example.com" % i
                                                                             for i in range(20000)]}],
                                                     "route": [{"destination": {"host": "a"}}]}]}}), \
        (200, False, "virtual service has 100000 hosts")
    yield "20k-egress-hosts", review({"apiVersion": "networking.istio.io/v1", "kind": "Sidecar",
                                      "metadata": {"name": "default", "namespace": "ns5"},
                                      "spec": {"egress": [{"hosts": ["ns%d/*" % i for i in range(20000)]},
                                                          ]}}), (200, True, None)
    yield "50k-locality-weights", review(dr({"host": "r", "trafficPolicy": {"loadBalancer": {"localityLbSetting": {
        "distribute": [{"from": "r%d/*" % i, "to": {"t%d/z%d/*" % (i, j): 1 for j in range(100)}}
                       for i in range(500)]}}}})), (200, True, None)
    yield "20k-se-ports", review({"apiVersion": "networking.istio.io/v1", "kind": "ServiceEntry",
                                  "metadata": {"name": "se", "namespace": "ns5"},
                                  "spec": {"hosts": ["a.example.com"], "resolution": "STATIC",
                                           "ports": [{"number": i % 65535 + 1, "name": "p%d" % i,
                                                      "protocol": "HTTP"} for i in range(20000)],
                                           "endpoints": [{"address": "10.0.0.1", "ports": {
                                               "p%d" % i: 80 for i in range(20000)}}]}}), \
        (200, True, None)
    yield "invalid-utf8-in-string", b'{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":' \
        b'{"uid":"u","operation":"CREATE","object":{"kind":"\xff"}}}', (200, False, "could not decode body")
    yield "pathological-regex", review({"apiVersion": "networking.istio.io/v1", "kind": "VirtualService",
                                        "metadata": {"name": "vs", "namespace": "ns5"},
                                        "spec": {"hosts": ["a"], "http": [{"match": [{"uri": {
                                            "regex": "(" * 1000 + ")" * 1000}}],
                                            "route": [{"destination": {"host": "a"}}]}]}}), \
        (200, False, "regex is too large")
    yield "maglev-huge-table", review(dr({"host": "r", "trafficPolicy": {"loadBalancer": {"consistentHash": {
        "useSourceIp": True, "maglev": {"tableSize": "18446744073709551557"}}}}})), \
        (200, False, "tableSize must be less than 5000011 for maglev")


def main():
    binary = sys.argv[1]
    failed = passed = 0
    with Webhookd(binary) as server:
        for name, body, (want_status, want_allowed, phrase) in cases():
            start = time.time()
            resp = server.request("POST", "/validate", body)
            took = time.time() - start
            why = None
            if resp is None:
                why = "no answer"
            else:
                status, _, data = resp
                if status != want_status:
                    why = "HTTP %d, want %d" % (status, want_status)
                else:
                    out = json.loads(data).get("response", {})
                    msg = (out.get("status") or {}).get("message", "")
                    if out.get("allowed") is not want_allowed:
                        why = "allowed=%r (%s)" % (out.get("allowed"), msg[:200])
                    elif phrase and phrase not in msg:
                        why = "message %r lacks %r" % (msg[:300], phrase)
            if why is None and took > DEADLINE:
                why = "took %.2fs" % took
            if why is None and not server.alive():
                why = "webhookd died"
            if why:
                failed += 1
                print("FAIL %s: %s" % (name, why))
            else:
                passed += 1
            if not server.alive():
                break

        # Transport errors and the metrics istiod exports.
        checks = [
            ("oversize-body", server.request("POST", "/validate", b"x" * (6 * 1024 * 1024 + 1), close=True), 413),
            ("no-content-type", server.request("POST", "/validate", review(dr({"host": "r"})),
                                               content_type=None), 415),
            ("empty-body", server.request("POST", "/validate", b""), 400),
        ]
        for name, resp, want in checks:
            if resp is None or resp[0] != want:
                failed += 1
                print("FAIL %s: got %r, want HTTP %d" % (name, resp and resp[0], want))
            else:
                passed += 1
        server.request("POST", "/validate", review(dr({"host": ""}), dry_run=True, uid="dry"))
        server.request("POST", "/validate", review(dr({"host": ""}), uid="wet"))
        server.request("POST", "/validate", review(dr({"host": "r"}), operation="DELETE"))
        resp = server.request("GET", "/metrics", b"", content_type=None)
        text = resp[2].decode() if resp else ""

        def metric(name, **labels):
            for line in text.splitlines():
                if line.startswith(name + "{") and all('%s="%s"' % kv in line for kv in labels.items()):
                    return float(line.rsplit(" ", 1)[1])
            return 0.0

        expectations = [
            (metric("galley_validation_passed", group="networking.istio.io", version="v1",
                    resource="destinationrules") >= 1, "passed counter for destinationrules"),
            (metric("galley_validation_failed", reason="invalid_resource", resource="destinationrules") >= 1,
             "failed counter with reason invalid_resource"),
            (metric("galley_validation_failed", reason="crd_conversion_error") >= 1,
             "failed counter with reason crd_conversion_error"),
            (metric("galley_validation_failed", reason="unsupported_operation") == 1,
             "DELETE counted once as unsupported_operation"),
            (metric("galley_validation_http_error", status="415") == 1, "http_error for 415"),
            (metric("galley_validation_http_error", status="400") == 1, "http_error for 400"),
        ]
        before = metric("galley_validation_failed", reason="invalid_resource", resource="destinationrules")
        server.request("POST", "/validate", review(dr({"host": ""}), dry_run=True, uid="dry2"))
        resp = server.request("GET", "/metrics", b"", content_type=None)
        text = resp[2].decode() if resp else ""
        expectations.append((metric("galley_validation_failed", reason="invalid_resource",
                                    resource="destinationrules") == before, "dry runs are not counted as failed"))
        for ok, what in expectations:
            if ok:
                passed += 1
            else:
                failed += 1
                print("FAIL metrics: %s" % what)
        health = server.request("GET", "/healthz", b"", content_type=None)
        if health is None or health[0] != 200 or not server.alive():
            failed += 1
            print("FAIL webhookd is not healthy after the run")
    p, f = alpha_switch(binary)
    passed, failed = passed + p, failed + f
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 else 1


def alpha_switch(binary):
    """--enable-alpha-gateway-api (declared once with `webhookctl validate`'s, WH_VALIDATE_SETTINGS): on, the
    alpha Gateway API kinds are known as with istiod's PILOT_ENABLE_ALPHA_GATEWAY_API=true; a value
    strconv.ParseBool refuses stops webhookd at start with Go's message."""
    failed = 0
    udp = {"apiVersion": "gateway.networking.k8s.io/v1alpha2", "kind": "UDPRoute",
           "metadata": {"name": "u", "namespace": "ns5"}, "spec": {}}
    with Webhookd(binary, "--enable-alpha-gateway-api=true") as server:
        resp = server.request("POST", "/validate", review(udp))
        out = json.loads(resp[2]).get("response", {}) if resp and resp[0] == 200 else {}
        if out.get("allowed") is not True:
            failed += 1
            print("FAIL alpha switch on: UDPRoute not allowed: %r" % (resp,))
    p = subprocess.run([binary, "--listen=127.0.0.1:0", "--enable-alpha-gateway-api=maybe"],
                       capture_output=True, text=True, timeout=30)
    want = '--enable-alpha-gateway-api: strconv.ParseBool: parsing "maybe": invalid syntax'
    if p.returncode == 0 or want not in p.stderr:
        failed += 1
        print("FAIL alpha switch 'maybe': exit %d, %s" % (p.returncode, p.stderr[-300:]))
    return 2 - failed, failed


if __name__ == "__main__":
    sys.exit(main())
