#!/usr/bin/env python3
"""Istio sidecar-injection conformance: every case of every set through both paths.

--corpus is one set (a folder with cases/) or a folder of sets
(../shared/conformance/istio-inject): the sets are found when the runner
runs, and each runs as the Istio release its `version` file names
(kube-inject gets --istio-version, webhookd's revision a `version` file).

For each case folder under SET/cases (see the corpus README for case.yaml):

* kube-inject path: `webhookctl kube-inject` on input.yaml with the case's
  settings; the output YAML is compared with golden.yaml (or the error text
  with expectedError, the warning with expectedLog).
* webhook path: every injectable document of input.yaml becomes a Pod the way
  Istio's webhook test builds it (see pods_of below) and is sent to a running webhookd
  over TLS as an admission.k8s.io/v1 AdmissionReview; the returned JSON Patch
  is applied with python3-jsonpatch and the result compared with the golden
  pod built the same way.  With --cluster, webhookd reads the revision from
  istiod's ConfigMaps served by tests/kube/fakeapi.py (cluster mode) instead
  of --revisions-dir, and must give the same results.

Comparison is semantic: both sides parsed, keys whose value is null, {} or []
dropped (Go omitempty artefacts), `sidecar.istio.io/status` dropped on the
webhook path only (as Istio's test does), then compared exactly.

A case folder may hold its own inject-config.yaml / values.json / mesh.yaml,
used instead of the corpus' (older Istio releases pre-render settings per
test case).

A corpus may list known differences (`--known-differences`): fields of the
pod spec where the golden records behaviour of that Istio release's istiod
build rather than of its templates and settings (built-in defaults, the
Kubernetes API version it was compiled against).  Those fields are removed
from both sides before comparing; everything else must still match.

One line per failing run with the first differing path, then per set the
runs passed of each path.  Runs listed in the set's expected-failures file
(`<case>/<path> <reason>`; with several sets, a folder of `<set>.txt`) may
fail; the runner fails when an unlisted run fails or a listed run passes, so
the lists can only shrink.
"""
import argparse
import base64
import copy
import hashlib
import http.server
import json
import os
import re
import shutil
import shlex
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

import jsonpatch
import yaml

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "kube"))
import kubetest  # noqa: E402  (tests/kube/fakeapi.py, the fake API server with watches)

SLOW = int(os.environ.get("WH_TEST_SLOW", "1") or 1)

INJECTABLE = {"Deployment", "DeploymentConfig", "DaemonSet", "StatefulSet", "Job", "ReplicaSet",
              "ReplicationController", "CronJob", "Pod"}
STATUS = "sidecar.istio.io/status"


# ---- settings -------------------------------------------------------------

def merge(base, over):
    """The corpus' merge rule: objects merge key by key, anything else replaces;
    an object carrying `$patch: replace` replaces the base object."""
    if isinstance(over, dict):
        if over.get("$patch") == "replace":
            return {k: copy.deepcopy(v) for k, v in over.items() if k != "$patch"}
        if not isinstance(base, dict):
            base = {}
        out = dict(base)
        for k, v in over.items():
            out[k] = merge(base.get(k), v)
        return out
    return copy.deepcopy(over)


class Settings:
    """The three files and the flags of one case (shared by identical cases).

    kube-inject gets the effective native-sidecar decision; webhookd gets
    `--native-sidecars auto` when the case has nodes and reads their kubelet
    versions (and the namespaces, for OpenShift) from a fake API server."""

    def __init__(self, corpus, case, tmp, embedded=False, cdir=None):
        s = case.get("settings") or {}
        self.embedded = embedded
        self.flags = []
        self.webhook_flags = []
        self.kubelets = s.get("kubeletVersions")
        if s.get("nativeSidecars") is not None:
            self.flags += ["--native-sidecars", "true" if s["nativeSidecars"] else "false"]
        if s.get("enableNativeSidecars") == "auto" and self.kubelets:
            self.webhook_flags += ["--native-sidecars", "auto"]
        elif s.get("nativeSidecars") is not None:
            self.webhook_flags += ["--native-sidecars", "true" if s["nativeSidecars"] else "false"]
        common = []
        if s.get("compliancePolicy"):
            common += ["--compliance-policy", s["compliancePolicy"]]
        if s.get("platform"):
            common += ["--platform", s["platform"]]
        env = ["%s=%s" % kv for kv in sorted((s.get("env") or {}).items())]
        self.flags += common
        for pair in env:
            self.flags += ["--env", pair]
        self.webhook_flags += common + (["--env", ",".join(env)] if env else [])
        self.namespaces = s.get("namespaces") or []
        texts = {}
        for name, key, loader, dumper in (
                ("config", "injectConfig", yaml.safe_load, lambda d: yaml.safe_dump(d, sort_keys=True)),
                ("values", "values", json.loads, lambda d: json.dumps(d, indent=2, sort_keys=True)),
                ("mesh", "mesh", yaml.safe_load, lambda d: yaml.safe_dump(d, sort_keys=True))):
            base = corpus.case_file(cdir, name)
            over = s.get(key) or {}
            texts[name] = base if not over else dumper(merge(loader(base), over))
        # The set's Istio release: kube-inject's --istio-version, the revision's version file
        # (the built-in revision is the newest release's and takes neither).
        self.version = None if embedded else corpus.version
        if self.version:
            self.flags += ["--istio-version", self.version]
        digest = hashlib.sha256(json.dumps([texts, self.flags, self.webhook_flags, self.kubelets, self.namespaces,
                                            self.version], sort_keys=True).encode()).hexdigest()[:16]
        self.key = digest
        self.dir = os.path.join(tmp, "settings", digest)
        self.revdir = os.path.join(self.dir, "revisions")
        if not os.path.isdir(self.dir):
            os.makedirs(os.path.join(self.revdir, "default"))
            for name, text in texts.items():
                for path in (os.path.join(self.dir, name), os.path.join(self.revdir, "default", name)):
                    with open(path, "w") as f:
                        f.write(text)
            if self.version:
                with open(os.path.join(self.revdir, "default", "version"), "w") as f:
                    f.write(self.version + "\n")
        if embedded:  # the built-in revision: no files, an empty revisions dir
            self.revdir = os.path.join(self.dir, "empty-revisions")
            os.makedirs(self.revdir, exist_ok=True)
        self.config = os.path.join(self.dir, "config")
        self.values = os.path.join(self.dir, "values")
        self.mesh = os.path.join(self.dir, "mesh")


class Corpus:
    NAMES = (("config", "inject-config.yaml"), ("values", "values.json"), ("mesh", "mesh.yaml"))

    def __init__(self, root):
        self.root = root
        self.name = os.path.basename(os.path.normpath(root))
        self.version = None
        if os.path.isfile(os.path.join(root, "version")):
            with open(os.path.join(root, "version")) as f:
                self.version = f.read().strip() or None
        self.files = {}
        for name, fname in self.NAMES:
            with open(os.path.join(root, fname)) as f:
                self.files[name] = f.read()

    def case_file(self, cdir, name):
        """The settings file `name` of a case: its own copy when the case folder
        has one (older Istio releases pre-render settings per test case), else
        the corpus'."""
        fname = dict(self.NAMES)[name]
        if cdir and os.path.isfile(os.path.join(cdir, fname)):
            with open(os.path.join(cdir, fname)) as f:
                return f.read()
        return self.files[name]


# ---- comparison -----------------------------------------------------------

def prune(v):
    """Drop keys whose value is null, {} or [] (after pruning their children)."""
    if isinstance(v, dict):
        out = {}
        for k, x in v.items():
            x = prune(x)
            if x is None or x == {} or x == []:
                continue
            out[k] = x
        return out
    if isinstance(v, list):
        return [prune(x) for x in v]
    return v


def first_diff(a, b, path=""):
    """The first path where a and b differ, or None."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a:
                return "%s/%s (missing in output)" % (path, k)
            if k not in b:
                return "%s/%s (unexpected in output)" % (path, k)
            d = first_diff(a[k], b[k], "%s/%s" % (path, k))
            if d:
                return d
        return None
    if isinstance(a, list) and isinstance(b, list):
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_diff(x, y, "%s/%d" % (path, i))
            if d:
                return d
        if len(a) != len(b):
            return "%s (output has %d items, golden %d)" % (path or "/", len(a), len(b))
        return None
    if a != b or type(a) != type(b):
        return "%s (output %s, golden %s)" % (path or "/", json.dumps(a)[:120], json.dumps(b)[:120])
    return None


def load_docs(text):
    return [d for d in yaml.safe_load_all(text) if d is not None]


# ---- known differences ----------------------------------------------------

def reasoned_lines(path):
    """(key, reason) for each line `<key> <reason>` of a list file; blank lines
    and # comments are skipped, and every key needs a reason."""
    if not path:
        return
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            key, _, reason = line.partition(" ")
            if not reason.strip():
                raise SystemExit("%s: %r needs a reason" % (path, key))
            yield key, reason.strip()


def parse_known(path):
    """Lines `<field> <reason>`; a field is dot-separated steps from a pod spec,
    a step `name[key]` picking the list item whose `name` is key, e.g.
    `containers[istio-proxy].env[PROXY_CONFIG].value`."""
    out = []
    for field, _ in reasoned_lines(path):
        steps = []
        for step in field.split("."):
            key, sel = step, None
            if step.endswith("]") and "[" in step:
                key, sel = step[:-1].split("[", 1)
            steps.append((key, sel))
        out.append(steps)
    return out


def pod_specs(doc):
    """The pod specs inside a kube-inject document (Pod, workload, CronJob, List)."""
    if not isinstance(doc, dict):
        return []
    if doc.get("kind") == "List":
        return [s for item in doc.get("items") or [] for s in pod_specs(item)]
    spec = doc.get("spec")
    if not isinstance(spec, dict):
        return []
    if doc.get("kind") == "Pod":
        return [spec]
    tmpl = spec.get("template")
    if doc.get("kind") == "CronJob":
        tmpl = ((spec.get("jobTemplate") or {}).get("spec") or {}).get("template")
    s = (tmpl or {}).get("spec") if isinstance(tmpl, dict) else None
    return [s] if isinstance(s, dict) else []


def drop_known(spec, known):
    for steps in known:
        nodes = [spec]
        for i, (key, sel) in enumerate(steps):
            last = i == len(steps) - 1
            nxt = []
            for n in nodes:
                if not isinstance(n, dict) or key not in n:
                    continue
                if sel is None:
                    if last:
                        del n[key]
                    else:
                        nxt.append(n[key])
                    continue
                items = [x for x in n[key] or [] if isinstance(x, dict) and x.get("name") == sel]
                if last:
                    n[key] = [x for x in n[key] if x not in items]
                else:
                    nxt += items
            nodes = nxt


# ---- the webhook side's pods (as Istio's webhook test builds them) ---------

def pods_of(text):
    """Injectable documents as Pods, with the namespace their object had."""
    out = []

    def one(doc):
        if not isinstance(doc, dict):
            return
        kind = doc.get("kind")
        if kind == "List":
            for item in doc.get("items") or []:
                one(item)
            return
        if kind not in INJECTABLE:
            return
        meta = doc.get("metadata") or {}
        ns = meta.get("namespace", "")
        if kind == "Pod":
            out.append((copy.deepcopy(doc), ns))
            return
        name = meta.get("name", "")
        if kind == "CronJob":
            tmpl = copy.deepcopy(((doc.get("spec") or {}).get("jobTemplate") or {}).get("spec", {}).get("template") or {})
        else:
            tmpl = copy.deepcopy((doc.get("spec") or {}).get("template") or {})
        tmeta = tmpl.setdefault("metadata", {}) or {}
        tmpl["metadata"] = tmeta
        if kind == "Deployment":
            tmeta["generateName"] = name + "-fake-"
            tmeta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": name + "-fake",
                                         "controller": True}]
            tmeta.setdefault("labels", {})
            tmeta["labels"] = dict(tmeta["labels"] or {}, **{"pod-template-hash": "fake"})
        else:
            tmeta["generateName"] = name
            tmeta["ownerReferences"] = [{"apiVersion": doc.get("apiVersion", ""), "kind": kind, "name": name,
                                         "controller": True}]
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": tmeta, "spec": tmpl.get("spec") or {}}
        out.append((pod, ns))

    for doc in load_docs(text):
        one(doc)
    return out


def clear_fieldref_api_version(pod):
    for key in ("containers", "initContainers"):
        for c in (pod.get("spec") or {}).get(key) or []:
            for e in c.get("env") or []:
                ref = (e.get("valueFrom") or {}).get("fieldRef")
                if isinstance(ref, dict):
                    ref.pop("apiVersion", None)


def drop_status(pod):
    ann = (pod.get("metadata") or {}).get("annotations")
    if isinstance(ann, dict):
        ann.pop(STATUS, None)


# ---- webhookd ---------------------------------------------------------------

class FakeAPI:
    """tests/kube/fakeapi.py (real LIST + WATCH) holding what webhookd reads of a case: the nodes
    (kubelet versions), the namespaces (annotations) and, with `cluster`, istiod's ConfigMaps
    istio-sidecar-injector (config, values) and istio (mesh) in istio-system."""

    def __init__(self, st, tmp, cluster=False):
        nodes = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-%d" % i},
                  "status": {"nodeInfo": {"kubeletVersion": v}}} for i, v in enumerate(st.kubelets or [])]
        nss = [{"apiVersion": "v1", "kind": "Namespace",
                "metadata": {"name": n["name"], "annotations": n.get("annotations") or {}}} for n in st.namespaces]
        if cluster and "istio-system" not in [n["name"] for n in st.namespaces]:
            nss.append({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "istio-system"}})
        objs = nss + nodes
        if cluster:
            def text(path):
                with open(path) as f:
                    return f.read()
            # the release as istiod's chart labels it (1.24 on), instead of a version file
            labels = {"app.kubernetes.io/version": st.version} if st.version else {}
            objs += [{"apiVersion": "v1", "kind": "ConfigMap",
                      "metadata": {"name": "istio-sidecar-injector", "namespace": "istio-system", "labels": labels},
                      "data": {"config": text(st.config), "values": text(st.values)}},
                     {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "istio", "namespace": "istio-system"},
                      "data": {"mesh": text(st.mesh)}}]
        self.api = kubetest.FakeApi(tls=False)
        self.api.load(objs)
        self.kubeconfig = self.api.kubeconfig()

    def stop(self):
        self.api.close()


class Server:
    def __init__(self, binary, revdir, flags, tmp, log, kubeconfig=None, cluster=False):
        self.port = free_port()
        self.cert = os.path.join(tmp, "tls.crt")
        self.key = os.path.join(tmp, "tls.key")
        if not os.path.exists(self.cert):
            subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                            "-nodes", "-keyout", self.key, "-out", self.cert, "-days", "2", "-subj", "/CN=localhost",
                            "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
                           check=True, capture_output=True)
        cmd = [binary, "--listen", "127.0.0.1:%d" % self.port, "--tls-cert-file", self.cert,
               "--tls-key-file", self.key, "--threads", "1"] + flags
        cmd += ["--revisions-source", "cluster"] if cluster else ["--revisions-dir", revdir]
        self.log = open(log, "ab")
        env = dict(os.environ)
        env.pop("KUBECONFIG", None)
        if kubeconfig:
            env["KUBECONFIG"] = kubeconfig
        # $WH_TEST_WRAPPER (e.g. valgrind) runs in front of webhookd; $WH_TEST_SLOW scales the waits.
        cmd = shlex.split(os.environ.get("WH_TEST_WRAPPER", "")) + cmd
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=self.log, env=env)
        self.ctx = ssl.create_default_context(cafile=self.cert)
        self.logpath = log
        deadline = time.time() + 20 * SLOW
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError("webhookd exited with %s (see %s)" % (self.proc.returncode, log))
            try:
                with urllib.request.urlopen("https://127.0.0.1:%d/readyz" % self.port, context=self.ctx,
                                            timeout=2) as r:
                    if r.status == 200:
                        break
            except Exception:
                pass
            if time.time() > deadline:
                self.stop()
                raise RuntimeError("webhookd did not become ready (see %s)" % log)
            time.sleep(0.05)

    def review(self, pod, namespace, uid):
        body = json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                           "request": {"uid": uid, "namespace": namespace, "object": pod}}).encode()
        status, reply = self.post("/inject", body)
        if status != 200:
            raise RuntimeError("HTTP %d: %r" % (status, reply[:200]))
        return json.loads(reply)

    def post(self, path, body, content_type="application/json", timeout=60):
        """(HTTP status, body bytes) of a POST."""
        req = urllib.request.Request("https://127.0.0.1:%d%s" % (self.port, path), data=body, method="POST",
                                     headers={"Content-Type": content_type} if content_type else {})
        try:
            with urllib.request.urlopen(req, context=self.ctx, timeout=timeout) as r:
                return r.status, r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.read()

    def get(self, path):
        try:
            with urllib.request.urlopen("https://127.0.0.1:%d%s" % (self.port, path), context=self.ctx,
                                        timeout=10) as r:
                return r.status, r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.read()

    def stop(self):
        """Stop webhookd; returns why its exit was wrong (a drain ends with 0), else None."""
        why = None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10 * SLOW)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                why = "did not drain within %d s" % (10 * SLOW)
        if why is None and self.proc.returncode != 0:
            why = "exited with %s (see %s)" % (self.proc.returncode, self.logpath)
        self.log.close()
        return why


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---- the two paths --------------------------------------------------------

def run_kube_inject(args, case, cdir, st):
    cmd = [args.webhookctl, "kube-inject", "-f", os.path.join(cdir, case["input"])] + st.flags
    if not st.embedded:
        cmd += ["--injectConfigFile", st.config, "--meshConfigFile", st.mesh, "--valuesFile", st.values]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if case.get("expectedError"):
        if p.returncode == 0:
            return "expected an error containing %r, got success" % case["expectedError"]
        if case["expectedError"] not in p.stderr.lower():
            return "error %r does not contain %r" % (p.stderr.strip()[:200], case["expectedError"])
        return None
    if p.returncode != 0:
        return "kube-inject failed: %s" % p.stderr.strip()[:300]
    if case.get("expectedLog") and case["expectedLog"] not in p.stderr:
        return "expected a warning containing %r, stderr: %r" % (case["expectedLog"], p.stderr.strip()[:200])
    with open(os.path.join(cdir, case["golden"])) as f:
        want = load_docs(f.read())
    try:
        got = load_docs(p.stdout)
    except yaml.YAMLError as e:
        return "output is not YAML: %s" % e
    for d in got + want:
        for spec in pod_specs(d):
            drop_known(spec, args.known)
    got, want = [prune(d) for d in got], [prune(d) for d in want]
    if len(got) != len(want):
        return "output has %d documents, golden %d" % (len(got), len(want))
    for i, (g, w) in enumerate(zip(got, want)):
        d = first_diff(g, w)
        if d:
            return "doc %d: %s" % (i, d)
    return None


def run_webhook(server, case, cdir, known):
    with open(os.path.join(cdir, case["input"])) as f:
        inputs = pods_of(f.read())
    with open(os.path.join(cdir, case["golden"])) as f:
        goldens = pods_of(f.read())
    if len(inputs) != len(goldens):
        return "input has %d pods, golden %d" % (len(inputs), len(goldens))
    for i, ((pod, ns), (golden, _)) in enumerate(zip(inputs, goldens)):
        try:
            review = server.review(pod, ns, "case-%d" % i)
        except Exception as e:
            return "pod %d: request failed: %s" % (i, e)
        resp = review.get("response") or {}
        if review.get("apiVersion") != "admission.k8s.io/v1" or review.get("kind") != "AdmissionReview":
            return "pod %d: reply is not a v1 AdmissionReview" % i
        if resp.get("uid") != "case-%d" % i:
            return "pod %d: response uid %r" % (i, resp.get("uid"))
        if not resp.get("allowed"):
            return "pod %d: denied: %s" % (i, ((resp.get("status") or {}).get("message") or "")[:300])
        # The audit annotations say which revision answered and whether it injected.
        audit = resp.get("auditAnnotations") or {}
        injected = "true" if resp.get("patch") else "false"
        if audit.get("revision") != "default" or audit.get("injected") != injected or \
                ("skip-reason" in audit) != (injected == "false"):
            return "pod %d: auditAnnotations %r for a %s pod" % (i, audit, "patched" if resp.get("patch") else "skipped")
        result = pod
        if resp.get("patch"):
            if resp.get("patchType") != "JSONPatch":
                return "pod %d: patchType %r" % (i, resp.get("patchType"))
            try:
                ops = json.loads(base64.b64decode(resp["patch"]))
                result = jsonpatch.JsonPatch(ops).apply(copy.deepcopy(pod))
            except Exception as e:
                return "pod %d: patch does not apply: %s" % (i, e)
        for c in ((result.get("spec") or {}).get("containers") or []) + \
                ((result.get("spec") or {}).get("initContainers") or []):
            for e in c.get("env") or []:
                if e.get("name", "").startswith("ISTIO_METAJSON_"):
                    try:
                        json.loads(e.get("value", ""))
                    except ValueError:
                        return "pod %d: %s is not JSON" % (i, e["name"])
        clear_fieldref_api_version(result)
        drop_status(result)
        golden = copy.deepcopy(golden)
        drop_status(golden)
        for side in (result, golden):
            drop_known(side.get("spec") or {}, known)
        d = first_diff(prune(result), prune(golden))
        if d:
            return "pod %d: %s" % (i, d)
    return None


def load_expected(path):
    return dict(reasoned_lines(path)) if path and os.path.exists(path) else {}


def behaves(version):
    """The release whose behaviour webhookd gives `version`: its major.minor,
    1.20 for anything older (the oldest its table knows)."""
    m = re.match(r"v?(\d+)\.(\d+)", version)
    major, minor = int(m.group(1)), int(m.group(2))
    return "1.20" if (major, minor) < (1, 20) else "%d.%d" % (major, minor)


def check_release(server, version, cluster=False):
    """webhookd's /readyz names the release it injects the revision as, read
    from the revision's version file (cluster mode: its ConfigMap's label);
    None when it does."""
    if not version:
        return None
    status, body = server.get("/readyz")
    want = "revision default: Istio %s (from %s %s)" % (behaves(version), "configmap-label" if cluster else "file",
                                                        version)
    if status != 200 or want.encode() not in body:
        return "/readyz (%d) does not say %r: %r" % (status, want, body[:300])
    return None


def find_sets(root):
    """The conformance sets under `root`, found when the runner runs: `root`
    itself when it is one set (it has cases/), else every folder of it that
    is one, in name order."""
    if os.path.isdir(os.path.join(root, "cases")):
        return [root]
    return [os.path.join(root, n) for n in sorted(os.listdir(root))
            if os.path.isdir(os.path.join(root, n, "cases"))]


def release_key(corpus):
    """Sort key of a set's release: (major, minor, patch); no version sorts first."""
    m = re.match(r"v?(\d+)\.(\d+)(?:\.(\d+))?", corpus.version or "")
    return tuple(int(x or 0) for x in m.groups()) if m else (-1,)


def expected_file(path, corpus):
    """--expected-failures is a file (one set) or a folder of `<set>.txt`."""
    if path and os.path.isdir(path):
        return os.path.join(path, corpus.name + ".txt")
    return path


def run_set(args, corpus, paths, tmp):
    """Every case of one set through the asked paths: {run: None or why}."""
    cases_dir = os.path.join(corpus.root, "cases")
    os.makedirs(tmp, exist_ok=True)
    results = {}
    servers = {}
    apis = []
    try:
        names = sorted(n for n in os.listdir(cases_dir) if os.path.isfile(os.path.join(cases_dir, n, "case.yaml")))
        for name in names:
            if args.only and args.only not in name:
                continue
            cdir = os.path.join(cases_dir, name)
            with open(os.path.join(cdir, "case.yaml")) as f:
                case = yaml.safe_load(f)
            if args.embedded and case.get("differsFromDefault"):
                continue
            st = Settings(corpus, case, tmp, embedded=args.embedded, cdir=cdir)
            if "kube" in paths and case.get("kubeInject"):
                results[name + "/kube"] = run_kube_inject(args, case, cdir, st)
            if "webhook" in paths and case.get("webhook") and case.get("golden"):
                if st.key not in servers:
                    api = FakeAPI(st, tmp, cluster=args.cluster)
                    apis.append(api)
                    try:
                        servers[st.key] = Server(args.webhookd, st.revdir, st.webhook_flags, tmp,
                                                 os.path.join(tmp, "webhookd-%s.log" % st.key), api.kubeconfig,
                                                 cluster=args.cluster)
                    except RuntimeError as e:
                        servers[st.key] = str(e)
                    else:
                        why = check_release(servers[st.key], st.version, args.cluster)
                        if why:
                            results["webhookd-%s/release" % st.key] = why
                srv = servers[st.key]
                results[name + "/webhook"] = (("webhookd: " + srv) if isinstance(srv, str)
                                              else run_webhook(srv, case, cdir, args.known))
                if not isinstance(srv, str) and srv.proc.poll() is not None:
                    results[name + "/webhook"] = "webhookd died (exit %s)" % srv.proc.returncode
    finally:
        for key, srv in servers.items():
            if not isinstance(srv, str):
                why = srv.stop()
                if why is not None:
                    results["webhookd-%s/exit" % key] = "webhookd " + why
        for api in apis:
            api.stop()
    return results


def report(corpus, results, expected, expected_path):
    """Print one line per unexpected outcome and the set's counts per path;
    returns how many outcomes were unexpected."""
    bad = 0
    for run in sorted(results):
        why = results[run]
        if why is not None:
            tag = "XFAIL" if run in expected else "FAIL"
            bad += run not in expected
            print("%s %s/%s: %s" % (tag, corpus.name, run, why))
        elif run in expected:
            bad += 1
            print("XPASS %s/%s: listed in %s but passes; remove it" % (corpus.name, run, expected_path))
    counts = []
    for path in ("kube", "webhook"):
        runs = [r for r in results if r.endswith("/" + path)]
        if runs:
            counts.append("%s %d/%d" % (path, sum(1 for r in runs if results[r] is None), len(runs)))
    print("set %s (Istio %s): %s passed%s" % (corpus.name, corpus.version or "unknown", ", ".join(counts) or "nothing",
                                              "" if not bad else "; %d unexpected" % bad))
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", required=True,
                    help="one istio-inject/<set> folder, or istio-inject/ itself: every set found in it")
    ap.add_argument("--webhookctl", required=True)
    ap.add_argument("--webhookd", help="webhookd binary (webhook path skipped when absent)")
    ap.add_argument("--expected-failures",
                    help="file of `<case>/<kube|webhook> <reason>` lines, or a folder of such files named <set>.txt")
    ap.add_argument("--known-differences", help="file of `<pod spec field> <reason>` lines masked on both sides")
    ap.add_argument("--only", help="substring filter on case folder names")
    ap.add_argument("--paths", default="kube,webhook")
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder")
    ap.add_argument("--cluster", action="store_true",
                    help="webhook path: webhookd reads the revision from istiod's ConfigMaps in a fake API server "
                         "(--revisions-source cluster) instead of --revisions-dir")
    ap.add_argument("--embedded", action="store_true",
                    help="use the built-in default revision (no config files, empty --revisions-dir) and run "
                         "only the cases whose settings are all defaults")
    args = ap.parse_args()

    sets = [Corpus(d) for d in find_sets(args.corpus)]
    if not sets:
        print("no conformance set found in %s" % args.corpus)
        return 1
    if args.embedded:  # the built-in revision is the newest release's
        sets = [max(sets, key=release_key)]
    args.known = parse_known(args.known_differences)
    paths = set(args.paths.split(","))
    if "webhook" in paths and not args.webhookd:
        print("webhook path skipped: no --webhookd given")
        paths.discard("webhook")
    tmp = tempfile.mkdtemp(prefix="inject-conformance-")
    bad = 0
    try:
        for corpus in sets:
            path = expected_file(args.expected_failures, corpus)
            expected = load_expected(path)
            results = run_set(args, corpus, paths, os.path.join(tmp, corpus.name))
            bad += report(corpus, results, expected, path)
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            print("kept", tmp)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
