#!/usr/bin/env python3
"""Bad input against a running webhookd's /inject: every request gets a clear
answer (a denial naming the problem, or a 4xx) and the server stays up.

Cases: undecodable bodies, pods of the wrong shape, 10,000 containers, a
1 MiB annotation, deep nesting, a revision whose template fails while
rendering, an unknown revision, wrong content type, empty body.  After each
one /healthz must still answer 200.

  run.py --webhookd BIN --corpus DIR
"""
import argparse
import base64
import http.client
import json
import os
import shutil
import sys
import tempfile
import time

import jsonpatch
import yaml

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "conformance"))
import run as conformance  # noqa: E402

BROKEN_CONFIG = """policy: enabled
defaultTemplates: [sidecar]
templates:
  sidecar: |
    metadata:
      annotations:
        broken: {{ fail "this template always fails" }}
"""


def review(pod, uid="bad"):
    return json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                       "request": {"uid": uid, "namespace": "default", "object": pod}}).encode()


def hello(**spec):
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
           "spec": {"containers": [{"name": "app", "image": "app:1"}]}}
    pod["spec"].update(spec)
    return pod


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--webhookd", required=True)
    ap.add_argument("--corpus", required=True)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="inject-bad-input-")
    failures = []
    try:
        revs = os.path.join(tmp, "revisions")
        for rev in ("default", "broken", "meshzero"):
            os.makedirs(os.path.join(revs, rev))
        for name, fname in (("config", "inject-config.yaml"), ("values", "values.json"), ("mesh", "mesh.yaml")):
            for rev in ("default", "broken", "meshzero"):
                shutil.copy(os.path.join(args.corpus, fname), os.path.join(revs, rev, name))
        # a mesh whose defaultConfig sets fields to their zero value (istiod's /inject ignores them)
        with open(os.path.join(revs, "meshzero", "mesh"), "a") as f:
            f.write("\n# webhookd test: zero values\n")
        with open(os.path.join(revs, "meshzero", "mesh")) as f:
            text = f.read()
        with open(os.path.join(revs, "meshzero", "mesh"), "w") as f:
            f.write(text.replace("defaultConfig:\n", "defaultConfig:\n  statusPort: 0\n  configPath: \"\"\n", 1)
                    .replace("discoveryAddress: istiod.istio-system.svc:15012", 'discoveryAddress: ""'))
        with open(os.path.join(revs, "meshzero", "config")) as f:
            config = yaml.safe_load(f)
        config["templates"]["zeroes"] = ('metadata:\n  annotations:\n'
                                         '    test/discovery: "{{ .ProxyConfig.DiscoveryAddress }}"\n'
                                         '    test/status-port: "{{ .ProxyConfig.StatusPort }}"\n'
                                         '    test/config-path: "{{ .ProxyConfig.ConfigPath }}"\n')
        with open(os.path.join(revs, "meshzero", "config"), "w") as f:
            yaml.safe_dump(config, f)
        with open(os.path.join(revs, "broken", "config"), "w") as f:
            f.write(BROKEN_CONFIG)
        srv = conformance.Server(args.webhookd, revs, [], tmp, os.path.join(tmp, "webhookd.log"))
        try:
            many = hello()
            many["spec"]["containers"] = [{"name": "c%05d" % i, "image": "img", "ports": [
                {"containerPort": 1000 + i % 5000, "name": "p%d" % i}]} for i in range(10000)]
            big_ann = hello()
            big_ann["metadata"]["annotations"] = {"big": "x" * (1 << 20)}
            deep = review(hello()).replace(b'"metadata": {', b'"metadata": {"x": ' + b'{"x": ' * 5000 + b'{}' +
                                           b'}' * 5001 + b', ', 1)
            cases = [
                # name, path, body, content type, expected HTTP status, expected allowed, text in message
                ("not json", "/inject", b"{not json", "application/json", 200, False, "could not decode"),
                ("not a review", "/inject", b"[1,2]", "application/json", 200, False, ""),
                ("no object", "/inject", json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                                                     "request": {"uid": "x"}}).encode(),
                 "application/json", 200, False, "request.object"),
                ("object is a list", "/inject", review([1, 2]), "application/json", 200, False, "request.object"),
                ("containers is a string", "/inject", review(hello(containers="nope")), "application/json", 200,
                 False, "containers"),
                ("container is a number", "/inject", review(hello(containers=[7])), "application/json", 200, False,
                 "containers"),
                ("annotations not strings", "/inject",
                 review({"metadata": {"annotations": {"a": {"b": 1}}}, "spec": {"containers": []}}),
                 "application/json", 200, False, "annotations"),
                ("10k containers", "/inject", review(many), "application/json", 200, True, None),
                ("1 MiB annotation", "/inject", review(big_ann), "application/json", 200, True, None),
                ("deep nesting", "/inject", deep, "application/json", 200, None, None),
                ("template fails to render", "/inject/rev/broken", review(hello()), "application/json", 200, False,
                 "this template always fails"),
                ("unknown revision", "/inject/rev/nosuch", review(hello()), "application/json", 200, False,
                 "nosuch"),
                ("empty body", "/inject", b"", "application/json", 400, None, None),
                ("wrong content type", "/inject", review(hello()), "text/plain", 415, None, None),
                # Istio's TestRunAndServe (webhook_test.go): random bytes are a denial, YAML is
                # refused; serveInject wants the exact type and reads the body before the type
                ("bad content (TestRunAndServe)", "/inject", bytes([0, 1, 2, 3, 4, 5]), "application/json", 200,
                 False, "could not decode"),
                ("yaml content type (TestRunAndServe)", "/inject", review(hello()), "application/yaml", 415, None,
                 None),
                ("content type with parameters", "/inject", review(hello()), "application/json; charset=utf-8", 415,
                 None, None),
                ("empty body beats content type", "/inject", b"", "application/yaml", 400, None, None),
            ]
            for name, path, body, ctype, want_status, want_allowed, text in cases:
                t0 = time.time()
                try:
                    status, reply = srv.post(path, body, ctype, timeout=60)
                except Exception as e:
                    failures.append("%s: no answer: %s" % (name, e))
                    status, reply = None, b""
                took = time.time() - t0
                if status is not None:
                    if status != want_status:
                        failures.append("%s: HTTP %s, want %s (%r)" % (name, status, want_status, reply[:200]))
                    elif status == 200:
                        resp = json.loads(reply).get("response") or {}
                        msg = (resp.get("status") or {}).get("message") or ""
                        if want_allowed is not None and bool(resp.get("allowed")) != want_allowed:
                            failures.append("%s: allowed=%s, want %s (%s)" % (name, resp.get("allowed"),
                                                                               want_allowed, msg[:200]))
                        if text is not None and text not in msg:
                            failures.append("%s: message %r lacks %r" % (name, msg[:300], text))
                        if not resp.get("allowed") and not msg:
                            failures.append("%s: denial without a message" % name)
                hs, _ = srv.get("/healthz")
                if hs != 200 or srv.proc.poll() is not None:
                    failures.append("%s: server not healthy afterwards" % name)
                    break
                print("ok  %-26s HTTP %s in %.2fs" % (name, status, took))
            # Behaviours of a well-formed review: URL key/value segments, v1beta1, a named revision, a skip.
            def patched(path, body_pod, api="admission.k8s.io/v1"):
                body = json.dumps({"apiVersion": api, "kind": "AdmissionReview",
                                   "request": {"uid": "u1", "namespace": "default", "object": body_pod}}).encode()
                status, reply = srv.post(path, body)
                rv = json.loads(reply)
                resp = rv.get("response") or {}
                pod = body_pod
                if resp.get("patch"):
                    pod = jsonpatch.JsonPatch(json.loads(base64.b64decode(resp["patch"]))).apply(body_pod)
                return rv, resp, pod

            def proxy_env(pod):
                for c in (pod["spec"].get("initContainers") or []) + pod["spec"]["containers"]:
                    if c["name"] == "istio-proxy":
                        return {e["name"]: e.get("value") for e in c.get("env") or []}
                return None

            rv, resp, pod = patched("/inject/cluster/c1/net/n--slash--1", hello())
            env = proxy_env(pod) or {}
            if env.get("ISTIO_META_CLUSTER_ID") != "c1" or env.get("ISTIO_META_NETWORK") != "n/1" or \
                    (pod["metadata"].get("labels") or {}).get("topology.istio.io/network") != "n/1":
                failures.append("URL segments: cluster/network not applied: %s" % json.dumps(env)[:300])
            rv, resp, pod = patched("/inject", hello(), "admission.k8s.io/v1beta1")
            if rv.get("apiVersion") != "admission.k8s.io/v1beta1" or not resp.get("allowed") or \
                    resp.get("patchType") != "JSONPatch" or proxy_env(pod) is None:
                failures.append("v1beta1 review not answered in kind: %s" % json.dumps(rv)[:300])
            rv, resp, pod = patched("/inject/rev/default", hello())
            if (pod["metadata"].get("annotations") or {}).get("istio.io/rev") != "default":
                failures.append("/inject/rev/default did not inject as revision default")
            rv, resp, pod = patched("/inject", hello(hostNetwork=True))
            if not resp.get("allowed") or resp.get("patch"):
                failures.append("host-network pod not skipped: %s" % json.dumps(resp)[:300])
            # TestRunAndServe's "skipped": sidecar.istio.io/inject=false is allowed, unpatched, answered in kind
            skip = hello()
            skip["metadata"]["annotations"] = {"sidecar.istio.io/inject": "false"}
            rv, resp, pod = patched("/inject", skip, "admission.k8s.io/v1beta1")
            if not resp.get("allowed") or resp.get("patch") or rv.get("apiVersion") != "admission.k8s.io/v1beta1":
                failures.append("inject=false pod not skipped: %s" % json.dumps(rv)[:300])
            # istiod's URL.Path: percent-decoded, without the query; a trailing slash is trimmed
            for path, want_c, want_n in (("/inject/cluster/c%31/net/n1?timeout=10s", "c1", "n1"),
                                         ("/inject/cluster/c1/net/n%2F1/x", "c1", "n"),  # n/1/x: "x" dangles
                                         ("/inject/cluster/c1/net/n1/", "c1", "n1"),
                                         ("/inject/rev/default/cluster/c2/?x=/net/n9", "c2", None)):
                rv, resp, pod = patched(path, hello())
                env = proxy_env(pod) or {}
                if env.get("ISTIO_META_CLUSTER_ID") != want_c or env.get("ISTIO_META_NETWORK") != want_n:
                    failures.append("%s: cluster %r network %r, want %r %r" % (
                        path, env.get("ISTIO_META_CLUSTER_ID"), env.get("ISTIO_META_NETWORK"), want_c, want_n))
            # paths as istiod's Go ServeMux takes them: a route matches segment by segment, each
            # decoded (so an escaped slash does not end "inject"); escaped dots are a name
            for path, want_c in (("/inj%65ct/cluster/c1", "c1"), ("/inject/%2E%2E", "Kubernetes")):
                rv, resp, pod = patched(path, hello())
                env = proxy_env(pod) or {}
                if env.get("ISTIO_META_CLUSTER_ID") != want_c:
                    failures.append("%s: cluster %r, want %r" % (path, env.get("ISTIO_META_CLUSTER_ID"), want_c))
            # ... a path that is not clean is redirected (301, no body for a POST) to its clean
            # form, a bad escape is a 400; what the caller sees before following anything
            for path, want_status, want_location in (("//inject", 301, "/inject"),
                                                     ("/inject/./cluster/c1?timeout=10s", 301,
                                                      "/inject/cluster/c1?timeout=10s"),
                                                     ("/inject/cluster/c1/..", 301, "/inject/cluster"),
                                                     ("/inject%2Fcluster%2Fc1", 404, None),
                                                     ("/inject/cluster/c%3", 400, None)):
                conn = http.client.HTTPSConnection("127.0.0.1", srv.port, context=srv.ctx, timeout=30)
                conn.request("POST", path, review(hello()), {"Content-Type": "application/json"})
                r = conn.getresponse()
                body = r.read()
                conn.close()
                if r.status != want_status or r.getheader("Location") != want_location or (
                        want_status == 301 and body):
                    failures.append("%s: %d Location %r body %r, want %d Location %r" % (
                        path, r.status, r.getheader("Location"), body[:100], want_status, want_location))
            # an annotation value holding a NUL: istiod's message quotes it whole
            nul = hello()
            nul["metadata"]["annotations"] = {"sidecar.istio.io/proxyCPU": "100m\u0000x",
                                              "sidecar.istio.io/interceptionMode": "TPROXY\u0000x"}
            rv, resp, pod = patched("/inject", nul)
            msg = (resp.get("status") or {}).get("message") or ""
            want = ("2 errors occurred:\n\t* invalid value 'TPROXY\u0000x' for annotation "
                    "'sidecar.istio.io/interceptionMode': interceptionMode invalid, use REDIRECT,TPROXY,NONE: "
                    "TPROXY\u0000x\n\t* invalid value '100m\u0000x' for annotation 'sidecar.istio.io/proxyCPU': "
                    "value contains control characters\n\n")
            if resp.get("allowed") or want not in msg:
                failures.append("NUL in annotations: message %r, want it to hold %r" % (msg[:400], want))
            # the mesh's zero-valued defaultConfig fields: /inject starts from DefaultProxyConfig's
            zp = hello()
            zp["metadata"]["annotations"] = {"inject.istio.io/templates": "sidecar,zeroes"}
            rv, resp, pod = patched("/inject/rev/meshzero", zp)
            got = {k: v for k, v in (pod["metadata"].get("annotations") or {}).items() if k.startswith("test/")}
            want = {"test/discovery": "istiod.istio-system.svc:15012", "test/status-port": "15020",
                    "test/config-path": "./etc/istio/proxy"}
            if got != want:
                failures.append("mesh zero values: .ProxyConfig gave %r, want %r (%s)" % (got, want,
                                                                                            json.dumps(resp)[:300]))
            print("ok  URL segments, v1beta1, named revision, skip, odd paths, NUL, mesh zero values")
            # istiod's metric names, plus our per-revision series
            ms, metrics = srv.get("/metrics")
            text = metrics.decode(errors="replace")
            for want in ("sidecar_injection_requests_total", "sidecar_injection_success_total",
                         "sidecar_injection_failure_total", "sidecar_injection_skip_total",
                         "sidecar_injection_time_seconds_bucket", 'webhookd_inject_requests_total{revision="broken"'):
                if want not in text:
                    failures.append("/metrics lacks %s" % want)
            for line in text.splitlines():
                if line.startswith("sidecar_injection_requests_total "):
                    if float(line.split()[1]) < len(cases) - 2:
                        failures.append("sidecar_injection_requests_total is %s after %d reviews" %
                                        (line.split()[1], len(cases) - 2))
        finally:
            srv.stop()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for f in failures:
        print("FAIL", f)
    print("%d failures" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
