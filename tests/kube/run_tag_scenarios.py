#!/usr/bin/env python3
"""run_tag_scenarios.py - runs the declarative `webhookctl tag` scenarios
(tag_scenarios.yaml: before-state, command, expected objects/output/exit)
against fakeapi.py over TLS.

With --kubectl-oracle every expected object is also read back with
`kubectl get -o json` and must be identical to what the fake server holds
before the expectations are checked on kubectl's copy; without kubectl that
mode is skipped (exit 77) with a message.

Fixture macros in `before` (see tag_scenarios.yaml's header): rev, legacy,
namespace, service, object.  Strings "b64:X" become base64(X).
"""
import base64
import copy
import json
import os
import subprocess
import sys

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kubetest  # noqa: E402

ADM = "admissionregistration.k8s.io/v1"
PLURAL = {"MutatingWebhookConfiguration": "mutatingwebhookconfigurations",
          "ValidatingWebhookConfiguration": "validatingwebhookconfigurations",
          "Service": "services", "Namespace": "namespaces"}


def b64(v):
    if isinstance(v, str) and v.startswith("b64:"):
        return base64.b64encode(v[4:].encode()).decode()
    if isinstance(v, dict):
        return {k: b64(x) for k, x in v.items()}
    if isinstance(v, list):
        return [b64(x) for x in v]
    return v


def injector_entry(prefix, value, cc, reinvocation=None):
    sel_ns, sel_obj = {
        "rev.namespace.": ([("istio.io/rev", "In", [value]), ("istio-injection", "DoesNotExist", None)],
                           [("sidecar.istio.io/inject", "NotIn", ["false"])]),
        "rev.object.": ([("istio.io/rev", "DoesNotExist", None), ("istio-injection", "DoesNotExist", None)],
                        [("sidecar.istio.io/inject", "NotIn", ["false"]), ("istio.io/rev", "In", [value])]),
        "namespace.": ([("istio-injection", "In", ["enabled"])], [("sidecar.istio.io/inject", "NotIn", ["false"])]),
        "object.": ([("istio-injection", "DoesNotExist", None), ("istio.io/rev", "DoesNotExist", None)],
                    [("sidecar.istio.io/inject", "In", ["true"]), ("istio.io/rev", "DoesNotExist", None)]),
    }.get(prefix, ([], []))

    def sel(exprs):
        return {"matchExpressions": [dict(key=k, operator=o, **({"values": v} if v else {})) for k, o, v in exprs]}
    e = {"name": prefix + "sidecar-injector.istio.io" if prefix.endswith(".") else prefix,
         "clientConfig": cc, "sideEffects": "None", "admissionReviewVersions": ["v1"], "failurePolicy": "Fail",
         "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"]}],
         "namespaceSelector": sel(sel_ns), "objectSelector": sel(sel_obj)}
    if reinvocation:
        e["reinvocationPolicy"] = reinvocation
    return e


def expand(item):
    """A `before` entry -> API objects."""
    if "object" in item:
        return [b64(item["object"])]
    if "namespace" in item:
        return [{"apiVersion": "v1", "kind": "Namespace",
                 "metadata": {"name": item["namespace"], "labels": item.get("labels", {})}}]
    if "service" in item and "rev" not in item:
        s = item["service"]
        return [{"apiVersion": "v1", "kind": "Service",
                 "metadata": {"name": s["name"], "namespace": s.get("namespace", "istio-system"),
                              "labels": s.get("labels", {})},
                 "spec": {"ports": [{"name": "https-webhook", "port": 443, "targetPort": 15017}],
                          "selector": s.get("selector", {"app": "istiod"})}}]
    if "legacy" in item:
        ns = item.get("ns", "istio-system")
        cc = {"service": {"name": "istiod", "namespace": ns, "path": "/inject", "port": 443}, "caBundle": b64("b64:CA-d")}
        return [
            {"apiVersion": ADM, "kind": "MutatingWebhookConfiguration",
             "metadata": {"name": "istio-sidecar-injector", "labels": {"istio.io/rev": "default", "app": "sidecar-injector"}},
             "webhooks": [injector_entry(p, "default", cc) for p in ("rev.namespace.", "rev.object.", "namespace.", "object.")]},
            {"apiVersion": "v1", "kind": "Service",
             "metadata": {"name": "istiod", "namespace": ns, "labels": {"app": "istiod", "istio.io/rev": "default"}},
             "spec": {"ports": [{"name": "https-webhook", "port": 443, "targetPort": 15017}],
                      "selector": {"app": "istiod", "istio": "pilot"}}}]
    if "rev" in item:
        r = str(item["rev"])
        ns = item.get("ns", "istio-system")
        svc_name = item.get("service_name", "istiod-" + r)
        svc_ns = item.get("service_namespace", ns)
        if "url" in item:
            cc = {"url": item["url"]}
        else:
            cc = {"service": {"name": svc_name, "namespace": svc_ns, "path": item.get("path", "/inject"),
                              "port": item.get("port", 443)}}
        cc["caBundle"] = b64("b64:CA-" + r)
        labels = {"istio.io/rev": r, "app": "sidecar-injector", "release": "istio"}
        labels.update(item.get("labels", {}))
        meta = {"name": item.get("name", "istio-sidecar-injector-" + r), "labels": labels}
        if item.get("annotations"):
            meta["annotations"] = item["annotations"]
        entries = item.get("entries", ["rev.namespace.", "rev.object."])
        out = []
        if item.get("mwc", True):
            out.append({"apiVersion": ADM, "kind": "MutatingWebhookConfiguration", "metadata": meta,
                        "webhooks": [injector_entry(p, r, cc, item.get("reinvocation")) for p in entries]})
        if item.get("service", True) and "url" not in item:
            out.append({"apiVersion": "v1", "kind": "Service",
                        "metadata": {"name": svc_name, "namespace": svc_ns,
                                     "labels": item.get("service_labels", {"app": "istiod", "istio.io/rev": r})},
                        "spec": {"ports": [{"name": "https-webhook", "port": 443, "targetPort": 15017}],
                                 "selector": {"app": "istiod", "istio.io/rev": r}}})
        return out
    raise ValueError("unknown fixture %r" % item)


def with_namespaces(objs):
    have = {o["metadata"]["name"] for o in objs if o["kind"] == "Namespace"}
    need = []
    for o in objs:
        ns = o["metadata"].get("namespace")
        if ns and ns not in have:
            have.add(ns)
            need.append({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    return need + [o for o in objs if o["kind"] == "Namespace"] + [o for o in objs if o["kind"] != "Namespace"]


def subset(expected, actual, path="", errors=None):
    """Every field of expected is in actual; lists match element-wise and in length."""
    if errors is None:
        errors = []
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            errors.append("%s: expected a mapping, got %r" % (path or "/", actual))
        else:
            for k, v in expected.items():
                if k not in actual:
                    errors.append("%s/%s: missing" % (path, k))
                else:
                    subset(v, actual[k], "%s/%s" % (path, k), errors)
    elif isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            errors.append("%s: expected %d items, got %r" % (path, len(expected), actual))
        else:
            for i, (e, a) in enumerate(zip(expected, actual)):
                subset(e, a, "%s/%d" % (path, i), errors)
    elif expected != actual:
        errors.append("%s: expected %r, got %r" % (path, expected, actual))
    return errors


def get_path(obj, path):
    cur = obj
    for p in path.split("/"):
        if isinstance(cur, list):
            cur = cur[int(p)] if p.isdigit() and int(p) < len(cur) else None
        elif isinstance(cur, dict):
            cur = cur.get(p)
        else:
            return None
        if cur is None:
            return None
    return cur


def output_errors(p, exp):
    """What a finished webhookctl run `p` got wrong against a scenario's `expect`: exit, stdout (exact),
    stdout_contains, stdout_not_contains, stderr_contains, stderr_not_contains, stderr_empty."""
    errs = []
    if p.returncode != exp.get("exit", 0):
        errs.append("exit %d, expected %d" % (p.returncode, exp.get("exit", 0)))
    if "stdout" in exp and p.stdout != exp["stdout"]:
        errs.append("stdout:\n%s\nexpected:\n%s" % (p.stdout, exp["stdout"]))
    for s in exp.get("stdout_contains", []):
        if s not in p.stdout:
            errs.append("stdout lacks %r" % s)
    for s in exp.get("stdout_not_contains", []):
        if s in p.stdout:
            errs.append("stdout has %r" % s)
    for s in exp.get("stderr_contains", []):
        if s not in p.stderr:
            errs.append("stderr lacks %r" % s)
    for s in exp.get("stderr_not_contains", []):
        if s in p.stderr:
            errs.append("stderr has %r" % s)
    if exp.get("stderr_empty") and p.stderr:
        errs.append("stderr not empty: %r" % p.stderr)
    return errs


def find(state, kind, name, ns=None):
    for o in state:
        if o["kind"] == kind and o["metadata"]["name"] == name and (ns is None or o["metadata"].get("namespace") == ns):
            return o
    return None


def strip_volatile(objs):
    out = []
    for o in objs:
        o = copy.deepcopy(o)
        o["metadata"].pop("managedFields", None)
        out.append(o)
    return out


class Runner:
    def __init__(self, oracle):
        self.api = kubetest.FakeApi()
        self.kc = self.api.kubeconfig()
        self.webhookctl = kubetest.tool("WEBHOOKCTL")
        self.oracle = oracle

    def ctl(self, args, stdin=""):
        env = dict(os.environ)
        env.pop("KUBECONFIG", None)
        return subprocess.run([self.webhookctl, *[str(a) for a in args], "--kubeconfig", self.kc], input=stdin,
                              capture_output=True, text=True, timeout=60, env=env)

    def kubectl_get(self, kind, name, ns):
        cmd = [kubetest.kubectl(), "--kubeconfig", self.kc, "get", PLURAL[kind], name, "-o", "json"]
        if ns:
            cmd += ["-n", ns]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        return json.loads(p.stdout) if p.returncode == 0 else None, p.stderr

    def run(self, sc):
        errs = []
        self.api.reset()
        before = []
        for item in sc.get("before", []):
            before += expand(item)
        self.api.load(with_namespaces(before))
        for cmd in sc.get("setup", []):
            p = self.ctl(cmd, "")
            if p.returncode != 0:
                return ["setup %s failed: %s" % (cmd, p.stderr)]
        for gone in sc.get("after_setup_delete", []):
            probe = kubetest.Probe("--kubeconfig", self.kc)
            r = probe("delete", PLURAL[gone["kind"]], gone.get("namespace", "-"), gone["name"])
            probe.close()
            if not r["ok"]:
                return ["cannot delete %s: %s" % (gone["name"], r)]
        for change in sc.get("after_setup", []):
            # objects replaced after setup (e.g. istiod flipping a policy): delete + recreate via control API
            self.replace(change)
        self.api.faults(sc.get("faults", []))
        state0 = strip_volatile(self.api.state())
        log0 = len(self.api.log())
        p = self.ctl(sc["command"], sc.get("stdin", ""))
        log = self.api.log()[log0:]
        state = self.api.state()
        exp = b64(sc["expect"])
        errs += output_errors(p, exp)
        writes = [(e["method"], e["path"]) for e in log if e["method"] != "GET"]
        if exp.get("unchanged"):
            if strip_volatile(state) != state0:
                errs.append("the cluster changed")
            if writes:
                errs.append("write requests were sent: %s" % writes)
        if exp.get("no_requests") and log:
            errs.append("requests were sent: %s" % [(e["method"], e["path"]) for e in log])
        if "writes" in exp:
            got = ["%s %s" % (m, pth.rsplit("/", 2)[-2] + "/" + pth.rsplit("/", 1)[-1]) for m, pth in writes]
            if got != exp["writes"]:
                errs.append("writes %s, expected %s" % (got, exp["writes"]))
        for ab in exp.get("apply_body_absent", []):
            bodies = [e["body"] for e in log if e["method"] == "PATCH" and e["path"].endswith("/" + ab["name"])]
            if not bodies:
                errs.append("no apply of %s" % ab["name"])
            for b in bodies:
                if get_path(b, ab["path"]) is not None:
                    errs.append("apply body of %s has %s" % (ab["name"], ab["path"]))
        for e in log:
            if e["method"] == "PATCH" and e["content_type"] == "application/apply-patch+yaml" and \
                    (e["query"].get("fieldManager") != "istio-ci" or e["query"].get("force") != "true"):
                errs.append("apply without field manager istio-ci and force: %s" % e["query"])
        for o in exp.get("objects", []):
            ns = o.get("namespace")
            actual = find(state, o["kind"], o["name"], ns)
            if actual is None:
                errs.append("%s %s not found" % (o["kind"], o["name"]))
                continue
            if self.oracle:
                viewed, err = self.kubectl_get(o["kind"], o["name"], ns)
                # kubectl hides managedFields unless asked
                if viewed is None or strip_volatile([viewed]) != strip_volatile([actual]):
                    errs.append("kubectl sees %s %s differently: %s" % (o["kind"], o["name"], err or viewed))
                    continue
                actual = viewed
            for e in subset(o.get("match", {}), actual):
                errs.append("%s %s: %s" % (o["kind"], o["name"], e))
            labels = actual["metadata"].get("labels", {})
            if "labels_exact" in o and labels != o["labels_exact"]:
                errs.append("%s %s: labels %s, expected %s" % (o["kind"], o["name"], labels, o["labels_exact"]))
            if "no_label_containing" in o:
                bad = [k for k in labels if o["no_label_containing"] in k]
                if bad:
                    errs.append("%s %s: unexpected labels %s" % (o["kind"], o["name"], bad))
            for pth in o.get("absent_paths", []):
                if get_path(actual, pth) is not None:
                    errs.append("%s %s: %s should be absent" % (o["kind"], o["name"], pth))
        for o in exp.get("absent", []):
            if find(state, o["kind"], o["name"], o.get("namespace")) is not None:
                errs.append("%s %s should not exist" % (o["kind"], o["name"]))
            elif self.oracle and self.kubectl_get(o["kind"], o["name"], o.get("namespace"))[0] is not None:
                errs.append("kubectl still sees %s %s" % (o["kind"], o["name"]))
        if "yaml_docs" in exp:
            docs = [d for d in yaml.safe_load_all(p.stdout) if d is not None]
            for e in subset(exp["yaml_docs"], docs, "stdout"):
                errs.append(e)
        if "json_stdout" in exp:
            try:
                if json.loads(p.stdout) != exp["json_stdout"]:
                    errs.append("json stdout %s" % p.stdout)
            except ValueError:
                errs.append("stdout is not JSON: %r" % p.stdout)
        if errs:
            errs.append("stdout was: %r\nstderr was: %r" % (p.stdout, p.stderr))
        return errs

    def replace(self, change):
        """Overwrite fields of an existing object as another field manager would (PUT through the control API)."""
        st = self.api.state()
        o = find(st, change["kind"], change["name"], change.get("namespace"))
        merged = copy.deepcopy(o)
        for pth, v in change["set"].items():
            cur = merged
            parts = pth.split("/")
            for p in parts[:-1]:
                cur = cur[int(p)] if isinstance(cur, list) else cur[p]
            cur[parts[-1]] = v
        kc = self.api.kubeconfig("kc-istiod")
        probe = kubetest.Probe("--kubeconfig", kc)
        merged["metadata"].pop("managedFields", None)
        r = probe("update", PLURAL[change["kind"]], change.get("namespace", "-"), json.dumps(merged),
                  change.get("manager", "pilot-discovery"))
        probe.close()
        if not r["ok"]:
            raise RuntimeError("cannot replace %s: %s" % (change["name"], r))


def main():
    args = sys.argv[1:]
    oracle = "--kubectl-oracle" in args
    args = [a for a in args if a != "--kubectl-oracle"]
    if oracle and not kubetest.kubectl():
        print("SKIP: kubectl is not installed; the kubectl oracle checks did not run")
        return kubetest.SKIP
    with open(args[0]) as f:
        scenarios = yaml.safe_load(f)
    only = set(args[1:])
    r = Runner(oracle)
    failed = 0
    try:
        for sc in scenarios:
            if only and sc["name"].split()[0] not in only:
                continue
            errs = r.run(sc)
            print("%s %s" % ("ok  " if not errs else "FAIL", sc["name"]))
            for e in errs:
                print("     " + e.replace("\n", "\n     "))
            failed += bool(errs)
    finally:
        r.api.close()
    print("%d scenario(s), %d failed%s" % (len(scenarios) if not only else len(only), failed,
                                            " (kubectl oracle)" if oracle else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
