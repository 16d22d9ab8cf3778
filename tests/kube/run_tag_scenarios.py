#!/usr/bin/env python3
"""run_tag_scenarios.py - runs declarative webhookctl scenarios against
fakeapi.py over TLS: the `webhookctl tag` ones (tag_scenarios.yaml) and the
`webhookctl revision` ones (revision_scenarios.yaml): before-state, command,
expected objects/output/exit; or several `steps`, each a command and its
expectations, with `then` changes to the cluster between them.

With --kubectl-oracle every expected object is also read back with
`kubectl get -o json` and must be identical to what the fake server holds
before the expectations are checked on kubectl's copy; without kubectl that
mode is skipped (exit 77) with a message.

Fixture macros in `before` (see tag_scenarios.yaml's header): rev, legacy,
namespace, service, object; and workload, pod (revision_scenarios.yaml's
header).  Strings "b64:X" become base64(X).
"""
import base64
import calendar
import copy
import json
import os
import pty
import signal
import subprocess
import sys
import time

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fakeapi  # noqa: E402
import kubetest  # noqa: E402

ADM = "admissionregistration.k8s.io/v1"
LEASE = "webhookd.io/revision-migrate-lease"
PLURAL = {"MutatingWebhookConfiguration": "mutatingwebhookconfigurations",
          "ValidatingWebhookConfiguration": "validatingwebhookconfigurations",
          "Service": "services", "Namespace": "namespaces", "Deployment": "deployments",
          "StatefulSet": "statefulsets", "DaemonSet": "daemonsets", "Pod": "pods"}


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


def workload(item):
    """{workload: NAME, namespace, kind (Deployment), replicas, running: REV, labels (pod template),
    template_annotations, annotations (the workload's), strategy} -> the workload object; with `running`
    the fake creates its pods at once, injected by REV."""
    w = item["workload"]
    labels = dict({"app": w if isinstance(w, str) else w}, **item.get("labels", {}))
    obj = {"apiVersion": "apps/v1", "kind": item.get("kind", "Deployment"),
           "metadata": {"name": w, "namespace": item["namespace"], "annotations": item.get("annotations", {})},
           "spec": {"selector": {"matchLabels": {"app": w}},
                    "template": {"metadata": {"labels": labels, "annotations": item.get("template_annotations", {})},
                                 "spec": {"containers": [{"name": "app", "image": "app:1"}]}}}}
    if obj["kind"] != "DaemonSet":
        obj["spec"]["replicas"] = item.get("replicas", 1)
    if "strategy" in item:
        obj["spec"]["updateStrategy"] = {"type": item["strategy"]}
    if "running" in item:
        obj["x-running"] = str(item["running"])
    return obj


def expand(item):
    """A `before` entry -> API objects."""
    if "workload" in item:
        return [workload(item)]
    if "pod" in item:
        pod = {"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": item["pod"], "namespace": item["namespace"], "labels": item.get("labels", {}),
                            "annotations": {}},
               "spec": {"containers": [{"name": "app", "image": "app:1"}]},
               "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}
        if "owner" in item:
            kind, name = item["owner"].split("/")
            pod["metadata"]["ownerReferences"] = [{"apiVersion": "batch/v1", "kind": kind, "name": name,
                                                   "uid": "u", "controller": True}]
        if "running" in item:
            pod["metadata"]["annotations"]["sidecar.istio.io/status"] = json.dumps(
                {"containers": ["istio-proxy"], "revision": str(item["running"])})
            pod["spec"]["containers"].append({"name": "istio-proxy", "image": "proxyv2"})
        return [pod]
    if "configmap" in item:
        cm = item["configmap"]
        return [{"apiVersion": "v1", "kind": "ConfigMap",
                 "metadata": {"name": cm["name"], "namespace": cm.get("namespace", "istio-system"),
                              "labels": cm.get("labels", {})},
                 "data": cm.get("data", {})}]
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
    last = ("Deployment", "StatefulSet", "DaemonSet", "Pod")
    return need + [o for o in objs if o["kind"] == "Namespace"] + \
        [o for o in objs if o["kind"] not in ("Namespace",) + last] + [o for o in objs if o["kind"] in last]


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
    """The value at a "spec/0/name" path (as the scenarios write them; "~1" is "/" in a step, as in
    `then`), or None."""
    return fakeapi.get_path(obj, [step.replace("~1", "/") for step in path.split("/")])


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


def pod_revision(pod):
    st = (pod["metadata"].get("annotations") or {}).get("sidecar.istio.io/status")
    return json.loads(st).get("revision") if st else None


def workload_errors(state, w):
    """{kind (Deployment), name, namespace, running: REV (every pod), pods: N, restarted: bool}."""
    kind = w.get("kind", "Deployment")
    obj = find(state, kind, w["name"], w["namespace"])
    if obj is None:
        return ["%s %s/%s not found" % (kind, w["namespace"], w["name"])]
    errs, what = [], "%s %s/%s" % (kind, w["namespace"], w["name"])
    rs_names = {o["metadata"]["name"] for o in state if o["kind"] == "ReplicaSet" and any(
        r["name"] == w["name"] for r in o["metadata"].get("ownerReferences", []))}
    pods = [o for o in state if o["kind"] == "Pod" and o["metadata"]["namespace"] == w["namespace"] and any(
        (r["kind"] == kind and r["name"] == w["name"]) or (r["kind"] == "ReplicaSet" and r["name"] in rs_names)
        for r in o["metadata"].get("ownerReferences", []))]
    if "pods" in w and len(pods) != w["pods"]:
        errs.append("%s: %d pods, expected %d" % (what, len(pods), w["pods"]))
    if "running" in w:
        revs = sorted({str(pod_revision(p)) for p in pods})
        if revs != [str(w["running"])]:
            errs.append("%s: pods run %s, expected %s" % (what, revs, w["running"]))
    if "restarted" in w:
        ann = obj["spec"]["template"]["metadata"].get("annotations") or {}
        if ("kubectl.kubernetes.io/restartedAt" in ann) != w["restarted"]:
            errs.append("%s: restarted is %s, expected %s" % (what, not w["restarted"], w["restarted"]))
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


class Injector:
    """A scripted sidecar injector behind every revision's Service, for scenarios with workloads: the
    fake's controllers create pods through the admission chain (fake_admission.py), which calls the
    injector webhooks the API server would call, over TLS, through the Services' Endpoints.  It answers
    what istiod's injector does to what webhookctl reads: the sidecar.istio.io/status annotation with
    the revision, the istio.io/rev label, an istio-proxy container; pods annotated
    sidecar.istio.io/inject=false are left alone.  The revision is the path's (/inject/rev/R, webhookd)
    or the Service's (istiod-R, from the Host the API server calls)."""

    def __init__(self, api):
        import ssl
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
        d = api.dir
        with open(os.path.join(d, "svc.ext"), "w") as f:
            f.write("subjectAltName=DNS:*.istio-system.svc\n")
        kubetest.openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj",
                         "/CN=injector", "-keyout", "svc.key", "-out", "svc.csr", cwd=d)
        kubetest.openssl("x509", "-req", "-in", "svc.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
                         "-days", "2", "-out", "svc.crt", "-extfile", "svc.ext", cwd=d)
        with open(os.path.join(d, "ca.crt"), "rb") as f:
            self.ca_bundle = base64.b64encode(f.read()).decode()
        self.revisions = {}  # Service name -> revision

        injector = self

        class Hook(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def do_POST(self):
                review = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                body = json.dumps({"apiVersion": review["apiVersion"], "kind": "AdmissionReview",
                                   "response": injector.inject(self.path, self.headers.get("Host", ""),
                                                               review["request"])}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.srv = ThreadingHTTPServer(("127.0.0.1", 0), Hook)
        self.srv.daemon_threads = True
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(os.path.join(d, "svc.crt"), os.path.join(d, "svc.key"))
        self.srv.socket = ctx.wrap_socket(self.srv.socket, server_side=True)
        self.port = self.srv.server_address[1]
        threading.Thread(target=self.srv.serve_forever, daemon=True).start()

    def inject(self, path, host, req):
        resp = {"uid": req["uid"], "allowed": True}
        pod = req.get("object") or {}
        meta = pod.get("metadata") or {}
        parts = path.split("?")[0].strip("/").split("/")
        rev = parts[2] if len(parts) >= 3 and parts[:2] == ["inject", "rev"] else \
            self.revisions.get(host.split(".")[0])
        if req.get("kind", {}).get("kind") != "Pod" or rev is None or \
                (meta.get("annotations") or {}).get("sidecar.istio.io/inject") == "false":
            return resp
        ops = []
        for field in ("annotations", "labels"):
            if meta.get(field) is None:
                ops.append({"op": "add", "path": "/metadata/" + field, "value": {}})
        ops += [{"op": "add", "path": "/metadata/annotations/sidecar.istio.io~1status",
                 "value": json.dumps({"containers": ["istio-proxy"], "revision": rev})},
                {"op": "add", "path": "/metadata/labels/istio.io~1rev", "value": rev},
                {"op": "add", "path": "/spec/containers/-", "value": {"name": "istio-proxy", "image": "proxyv2"}}]
        resp.update(patchType="JSONPatch", patch=base64.b64encode(json.dumps(ops).encode()).decode())
        return resp

    def wire(self, objs):
        """Point the fixtures' injectors at this server: caBundles it verifies against, Endpoints."""
        out = []
        for o in objs:
            if o["kind"] == "MutatingWebhookConfiguration":
                rev = (o["metadata"].get("labels") or {}).get("istio.io/rev")
                for w in o.get("webhooks") or []:
                    svc = (w.get("clientConfig") or {}).get("service")
                    if svc:
                        w["clientConfig"]["caBundle"] = self.ca_bundle
                        self.revisions.setdefault(svc["name"], rev)
            if o["kind"] == "Service" and o["metadata"].get("namespace") == "istio-system":
                out.append({"apiVersion": "v1", "kind": "Endpoints",
                            "metadata": {"name": o["metadata"]["name"], "namespace": "istio-system"},
                            "subsets": [{"addresses": [{"ip": "127.0.0.1"}],
                                         "ports": [{"name": p.get("name", ""), "port": self.port}
                                                   for p in o["spec"].get("ports") or []]}]})
        return objs + out

    def close(self):
        self.srv.shutdown()


class Runner:
    def __init__(self, oracle):
        self.api = kubetest.FakeApi()
        self.kc = self.api.kubeconfig()
        self.webhookctl = kubetest.tool("WEBHOOKCTL")
        self.oracle = oracle
        self.injector = None  # started for the first scenario with workloads
        self.background = {}  # name -> webhookctl started by a `background` step, collected by `join`

    def argv(self, args):
        env = dict(os.environ)
        env.pop("KUBECONFIG", None)
        return [self.webhookctl, *[str(a) for a in args], "--kubeconfig", self.kc], env

    def wait_past_lease(self, ns, timeout=60):
        """Wait until namespace `ns` carries a migrate lease, then until the wall clock is past the expiry that
        lease first named: a run that never renewed it would have lost it by then."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            obj = find(self.api.state(), "Namespace", ns)
            lease = (obj or {}).get("metadata", {}).get("annotations", {}).get(LEASE)
            if lease:
                expires = calendar.timegm(time.strptime(json.loads(lease)["expires"], "%Y-%m-%dT%H:%M:%SZ"))
                while time.time() < expires + 1:
                    time.sleep(0.1)
                return None
            time.sleep(0.05)
        return "namespace %s never got a migrate lease" % ns

    def ctl(self, args, stdin="", tty=False, kill_after_writes=None, signals=("SIGKILL",)):
        """Run webhookctl; stdin from a pseudo-terminal with `tty`; with kill_after_writes=N it gets `signals`
        (default SIGKILL: a killed run; SIGINT is Ctrl-C), one a second, once the server has logged N write
        requests."""
        argv, env = self.argv(args)
        if not tty and kill_after_writes is None:
            return subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=120, env=env)
        master = slave = None
        if tty:
            master, slave = pty.openpty()
        p = subprocess.Popen(argv, stdin=slave if tty else subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=env)
        if tty:
            os.close(slave)
            os.write(master, stdin.encode())
        else:
            p.stdin.write(stdin)
            p.stdin.close()
            p.stdin = None  # communicate() below must not flush it again
        if kill_after_writes is not None:
            start = len(self.api.log())
            deadline = time.time() + 60
            while p.poll() is None and time.time() < deadline:
                if sum(e["method"] != "GET" for e in self.api.log()[start:]) >= kill_after_writes:
                    for i, name in enumerate(signals):
                        if i > 0:
                            time.sleep(1.0)
                        if p.poll() is None:
                            p.send_signal(getattr(signal, name))
                    break
                time.sleep(0.02)
        out, err = p.communicate(timeout=120)
        if master is not None:
            os.close(master)
        return subprocess.CompletedProcess(argv, p.returncode, out, err)

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
        workloads = any("workload" in b or "pod" in b for b in sc.get("before", []))
        if workloads and self.injector is None:
            self.injector = Injector(self.api)
        if workloads:
            self.injector.revisions.clear()
            before = self.injector.wire(before)
            self.api.control("workloads", {"controller": True})
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
        try:
            for i, step in enumerate(sc.get("steps") or [sc]):
                if workloads:
                    self.settle()
                errs += ["step %d: %s" % (i + 1, e) for e in self.step(step)] if "steps" in sc else self.step(step)
                if errs:
                    break
                for change in step.get("then", []):
                    self.replace(change)
        finally:
            for bg in self.background.values():  # a scenario that failed before joining them
                bg.kill()
                bg.communicate()
            self.background.clear()
        return errs

    def settle(self, timeout=20):
        """Wait until the fake's controllers have finished (no object changes for a while)."""
        deadline, last, quiet = time.time() + timeout, None, 0
        while time.time() < deadline and quiet < 3:
            cur = json.dumps(self.api.state())
            quiet = quiet + 1 if cur == last else 0
            last = cur
            time.sleep(0.06)  # a little more than the controller's tick

    def step(self, sc):
        errs = []
        if "wait_past_lease" in sc:
            err = self.wait_past_lease(sc["wait_past_lease"])
            if err:
                return [err]
        if "background" in sc:
            argv, env = self.argv(sc["command"])
            self.background[sc["background"]] = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
            return []
        state0 = strip_volatile(self.api.state())
        log0 = len(self.api.log())
        if "join" in sc:
            bg = self.background.pop(sc["join"])
            out, err = bg.communicate(timeout=120)
            p = subprocess.CompletedProcess(bg.args, bg.returncode, out, err)
        else:
            p = self.ctl(sc["command"], sc.get("stdin", ""), sc.get("tty", False), sc.get("kill_after_writes"),
                         sc.get("signals", ["SIGKILL"]))
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
            for pth in o.get("present_paths", []):
                if get_path(actual, pth) is None:
                    errs.append("%s %s: %s should be present" % (o["kind"], o["name"], pth))
        for w in exp.get("workloads", []):
            errs += workload_errors(state, w)
        for ns, want in exp.get("namespace_labels", {}).items():
            obj = find(state, "Namespace", ns)
            labels = obj["metadata"].get("labels", {}) if obj else {}
            for k, v in want.items():
                if labels.get(k) != v:
                    errs.append("namespace %s: label %s is %r, expected %r" % (ns, k, labels.get(k), v))
        if "stdout_order" in exp:
            at = 0
            for line in exp["stdout_order"]:
                found = p.stdout.find(line, at)
                if found < 0:
                    errs.append("stdout lacks %r after position %d" % (line, at))
                    break
                at = found + len(line)
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
            parts = [p.replace("~1", "/") for p in pth.split("/")]  # ~1 escapes "/" (JSON pointer's rule)
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
        if r.injector is not None:
            r.injector.close()
        r.api.close()
    print("%d scenario(s), %d failed%s" % (len(scenarios) if not only else len(only), failed,
                                            " (kubectl oracle)" if oracle else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
