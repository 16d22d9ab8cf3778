#!/usr/bin/env python3
"""webhookctl kube-inject as a command: input from a file or stdin, -o,
objects that pass through, Lists, skip messages, usage errors, the embedded
revision.  (What it injects is checked against Istio's goldens by
tests/inject/conformance.)  Usage: run.py WEBHOOKCTL"""
import os
import subprocess
import sys
import tempfile

import yaml

DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: web:1}]
"""
CONFIGMAP = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {k: v}\n"
HOSTNET = """apiVersion: v1
kind: Pod
metadata: {name: h, namespace: ns}
spec: {hostNetwork: true, containers: [{name: a, image: a}]}
"""
LIST = """apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Pod
  metadata: {name: p}
  spec: {containers: [{name: a, image: a}]}
- apiVersion: v1
  kind: Service
  metadata: {name: s}
  spec: {ports: [{port: 80}]}
"""


def run(ctl, args, stdin=None):
    p = subprocess.run([ctl, "kube-inject"] + args, input=stdin, capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


def one(text):
    """The single object of kube-inject's output (documents end with ---)."""
    docs = [d for d in yaml.safe_load_all(text) if d is not None]
    return docs[0] if len(docs) == 1 else None


def names(pod_spec, key):
    return [c["name"] for c in pod_spec.get(key) or []]


def main():
    ctl = sys.argv[1]
    failures = []

    def check(name, cond, detail=""):
        print("%s %s" % ("ok  " if cond else "FAIL", name))
        if not cond:
            failures.append("%s %s" % (name, detail))

    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out.yaml")
        rc, so, se = run(ctl, ["-f", "-", "-o", out], DEPLOYMENT + "---\n" + CONFIGMAP)
        check("stdin in, -o out", rc == 0 and so == "", se)
        docs = [d for d in yaml.safe_load_all(open(out).read()) if d] if rc == 0 else []
        check("two documents out", len(docs) == 2, str(docs)[:200])
        if len(docs) == 2:
            spec = docs[0]["spec"]["template"]["spec"]
            # no nodes offline: auto (the default) is a classic sidecar, as istioctl on files
            check("deployment injected (embedded revision)", "istio-proxy" in names(spec, "containers") and
                  "istio-proxy" not in names(spec, "initContainers"), str(spec)[:200])
            check("owner from the top-level object", any(
                e.get("value") == "kubernetes://apis/apps/v1/namespaces/shop/deployments/web"
                for c in (spec.get("initContainers") or []) + spec["containers"] for e in c.get("env") or []))
            check("configmap passes through", docs[1] == yaml.safe_load(CONFIGMAP), str(docs[1]))
        path = os.path.join(tmp, "hostnet.yaml")
        open(path, "w").write(HOSTNET)
        rc, so, se = run(ctl, ["--filename", path])
        check("host network skipped with a reason", rc == 0 and 'Skipping injection because Pod "ns/h" has host '
              "networking enabled" in se, se)
        check("skipped pod unchanged", rc == 0 and one(so) == yaml.safe_load(HOSTNET), so[:200])
        rc, so, se = run(ctl, ["-f", "-"], LIST)
        lst = one(so) if rc == 0 else {}
        check("List items injected", rc == 0 and "istio-proxy" in
              names(lst["items"][0]["spec"], "initContainers") + names(lst["items"][0]["spec"], "containers"), se)
        check("List keeps other items", rc == 0 and lst["items"][1]["kind"] == "Service")
        rc, so, se = run(ctl, ["-f", "-"], "a: [unclosed")
        check("bad YAML is an error", rc == 1 and se.startswith("Error:"), se)
        rc, so, se = run(ctl, [])
        check("missing -f is a usage error", rc == 2, se)
        rc, so, se = run(ctl, ["-f", "-", "--bogus"], "")
        check("unknown flag is a usage error", rc == 2 and "--bogus" in se, se)
        rc, so, se = run(ctl, ["-f", "-", "--injectConfigFile", path], "")
        check("config without values is a usage error", rc == 2, se)
        rc, so, se = run(ctl, ["-f", "-", "--native-sidecars", "maybe"], "")
        check("bad --native-sidecars is a usage error", rc == 2, se)
        rc, so, se = run(ctl, ["-f", "-", "--native-sidecars=false", "--revision", "canary"], DEPLOYMENT)
        spec = one(so)["spec"]["template"] if rc == 0 else {}
        check("--native-sidecars=false: classic sidecar", rc == 0 and "istio-proxy" in names(spec["spec"], "containers"),
              se)
        check("--revision sets istio.io/rev", rc == 0 and spec["metadata"]["annotations"].get("istio.io/rev") ==
              "canary", str(spec.get("metadata"))[:200])
        rc, so, se = run(ctl, ["--help"])
        check("--help", rc == 0 and "kube-inject" in so)
    print("%d failures" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
