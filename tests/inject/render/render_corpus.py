#!/usr/bin/env python3
"""render_corpus.py - checks the render side against Istio's golden corpus.

For every case of the conformance corpus (as is, under shared/conformance):
build the case's revision files (settings merged as the corpus README says),
turn each injectable document into the pod Istio's webhook test builds, run
inject_render_tool on it, and compare what the templates rendered with the
golden pod: every container the templates add (istio-init, istio-proxy, ...),
the labels, annotations, volumes and imagePullSecrets they set.  What the
merge side adds afterwards (URL/cluster envs, probers, Prometheus merge, user
overrides) is left out of the comparison; cases whose pods carry user
overrides of injected containers or a previous injection are only rendered
(the merge side's conformance runner judges them).

With --embedded, cases with default settings are also rendered with
webhookd's embedded revision and its overlays must equal those of Istio's own
sidecar template.

Usage: render_corpus.py TOOL CORPUS_DIR [--embedded] [-k SUBSTRING]
Prints one line per failing case and "N passed, M failed"; exits 1 on failure.
"""
import copy
import json
import os
import re
import subprocess
import sys
import tempfile
from fractions import Fraction

import yaml

INJECTABLE = {"Deployment", "DeploymentConfig", "DaemonSet", "StatefulSet", "Job", "ReplicaSet",
              "ReplicationController", "CronJob", "Pod"}
POST_ENVS = {"ISTIO_KUBE_APP_PROBERS", "ISTIO_PROMETHEUS_ANNOTATIONS"}
POST_ANNOTATIONS = {"sidecar.istio.io/status", "prometheus.io/port", "prometheus.io/path", "prometheus.io/scrape",
                    "proxy.istio.io/overrides"}
PROBE_INTS = {"initialDelaySeconds", "timeoutSeconds", "periodSeconds", "successThreshold", "failureThreshold"}


def merge(base, over):
    """The corpus README's merge rule."""
    if isinstance(over, dict) and isinstance(base, dict):
        if over.get("$patch") == "replace":
            return {k: v for k, v in over.items() if k != "$patch"}
        out = dict(base)
        for k, v in over.items():
            out[k] = merge(base.get(k), v) if k in base else strip_patch(v)
        return out
    return strip_patch(over)


def strip_patch(v):
    if isinstance(v, dict):
        return {k: strip_patch(x) for k, x in v.items() if k != "$patch"}
    return v


# ---- Kubernetes quantities (canonical form, as Go's Quantity prints) ----
BIN = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
DEC = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
DEC_BY_EXP = {v: k for k, v in DEC.items()}


def canon_quantity(q):
    if not isinstance(q, (str, int, float)):
        return q
    m = re.fullmatch(r"([+-]?[0-9.]+)(.*)", str(q))
    if not m:
        return q
    num, suf = Fraction(m.group(1)), m.group(2)
    if suf in BIN:
        val = num * 1024 ** BIN[suf]
        if val.denominator == 1 and val >= 1024:
            k = 0
            while k < 6 and val % 1024 ** (k + 1) == 0:
                k += 1
            return "%d%s" % (val // 1024 ** k, ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"][k])
    elif suf[:1] in ("e", "E") and re.fullmatch(r"[eE][+-]?[0-9]+", suf):
        val = num * Fraction(10) ** int(suf[1:])
    elif suf in DEC:
        val = num * Fraction(10) ** DEC[suf]
    else:
        return q
    if val == 0:
        return "0"
    for e in (18, 15, 12, 9, 6, 3, 0, -3, -6, -9):
        x = val / Fraction(10) ** e
        if x.denominator == 1:
            return "%d%s" % (x, DEC_BY_EXP[e])
    return q


def normalize(v, key=None):
    """Go-struct view: empties dropped, probe zeros dropped, quantities canonical."""
    if isinstance(v, dict):
        out = {}
        for k, x in v.items():
            x = normalize(x, k)
            if x is None or x == {} or x == []:
                continue
            if k in PROBE_INTS and x == 0:
                continue
            if k == "apiVersion" and key == "fieldRef":
                continue
            out[k] = x
        if key in ("limits", "requests"):
            out = {k: canon_quantity(x) for k, x in out.items()}
        return out
    if isinstance(v, list):
        return [normalize(x, key) for x in v]
    return v


def first_diff(a, b, path=""):
    if type(a) != type(b):
        return "%s: %r != %r" % (path or "/", a, b)
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                return "%s/%s: %r != %r" % (path, k, a.get(k, "<absent>"), b.get(k, "<absent>"))
            d = first_diff(a[k], b[k], path + "/" + k)
            if d:
                return d
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return "%s: %d items != %d items (%r vs %r)" % (path, len(a), len(b), a, b)
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_diff(x, y, "%s/%d" % (path, i))
            if d:
                return d
        return None
    return None if a == b else "%s: %r != %r" % (path or "/", a, b)


def docs_of(text):
    out = []
    for part in re.split(r"\n---", text):
        d = yaml.safe_load(part)
        if not isinstance(d, dict):
            continue
        if d.get("kind") == "List":
            out.extend(i for i in d.get("items") or [] if isinstance(i, dict))
        else:
            out.append(d)
    return [d for d in out if d.get("kind") in INJECTABLE]


def pod_of(doc):
    """The pod Istio's webhook test builds from a document (as tests/inject/conformance/run.py does)."""
    kind, meta = doc["kind"], doc.get("metadata") or {}
    if kind == "Pod":
        return copy.deepcopy(doc), meta.get("namespace") or ""
    spec = doc.get("spec") or {}
    tmpl = (spec.get("jobTemplate", {}).get("spec", {}) if kind == "CronJob" else spec).get("template") or {}
    tmpl = copy.deepcopy(tmpl)
    pm = tmpl.setdefault("metadata", {}) or {}
    if kind == "CronJob" and not pm:
        # kube-inject writes a CronJob's pod metadata onto its jobTemplate
        pm = copy.deepcopy(spec.get("jobTemplate", {}).get("metadata") or {})
    tmpl["metadata"] = pm
    name = meta.get("name", "")
    if kind == "Deployment":
        pm["generateName"] = name + "-fake-"
        pm["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": name + "-fake",
                                  "controller": True}]
        pm.setdefault("labels", {})
        pm["labels"] = dict(pm["labels"] or {}, **{"pod-template-hash": "fake"})
    else:
        pm["generateName"] = name
        pm["ownerReferences"] = [{"apiVersion": doc.get("apiVersion", ""), "kind": kind, "name": name,
                                  "controller": True}]
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": pm, "spec": tmpl.get("spec") or {}}
    return pod, meta.get("namespace") or ""


def containers_of(pod):
    spec = pod.get("spec") or {}
    return (spec.get("initContainers") or []) + (spec.get("containers") or [])


def by_name(items):
    return {c.get("name"): c for c in items if isinstance(c, dict)}


def compare(res, pod, golden):
    """None when what was rendered is in the golden pod, else the first difference."""
    envs = set((res.get("proxyEnvs") or {}).keys())
    user = by_name(containers_of(pod))
    gmeta = golden.get("metadata") or {}
    rendered = set()
    for ov in res["overlays"]:
        ospec = ov.get("spec") or {}
        rendered |= {c.get("name") for c in (ospec.get("initContainers") or []) + (ospec.get("containers") or [])}
    if rendered & set(user):
        return None  # the user overrides injected containers: the merge side's business
    # Later templates override what earlier ones rendered (per container/volume, field by field).
    merged_c, merged_v = {}, {}
    for ov in res["overlays"]:
        ospec = normalize(ov).get("spec") or {}
        for lst in ("initContainers", "containers"):
            for c in ospec.get(lst) or []:
                merged_c.setdefault((lst, c.get("name")), {}).update(c)
        for v in ospec.get("volumes") or []:
            merged_v.setdefault(v.get("name"), {}).update(v)
    for ov in res["overlays"]:
        ov = normalize(ov)
        om = ov.get("metadata") or {}
        for k, v in (om.get("labels") or {}).items():
            if (gmeta.get("labels") or {}).get(k) != v:
                return "label %s: rendered %r, golden %r" % (k, v, (gmeta.get("labels") or {}).get(k))
        for k, v in (om.get("annotations") or {}).items():
            if k in POST_ANNOTATIONS:
                continue
            if (gmeta.get("annotations") or {}).get(k) != v:
                return "annotation %s: rendered %r, golden %r" % (k, v, (gmeta.get("annotations") or {}).get(k))
    gspec = golden.get("spec") or {}
    for (lst, name), c in merged_c.items():
        same = by_name(gspec.get(lst) or [])
        other = by_name(gspec.get("containers" if lst == "initContainers" else "initContainers") or [])
        g = same.get(name) or other.get(name)
        if g is None:
            return "container %s rendered but not in the golden pod" % name
        g = normalize(g)
        c = dict(c)
        if "env" in c:
            c["env"] = [e for e in c["env"] if e.get("name") not in envs]
            g = dict(g)
            g["env"] = [e for e in g.get("env", []) if e.get("name") not in envs | POST_ENVS]
        for k in c:
            d = first_diff(c[k], g.get(k), "/%s/%s" % (name, k))
            if d:
                return d
    gvol = by_name(gspec.get("volumes") or [])
    for name, v in merged_v.items():
        d = first_diff(v, normalize(gvol.get(name)), "/volumes/%s" % name)
        if d:
            return d
    gsec = [s.get("name") for s in gspec.get("imagePullSecrets") or []]
    for ov in res["overlays"]:
        for s in (ov.get("spec") or {}).get("imagePullSecrets") or []:
            if s.get("name") not in gsec:
                return "imagePullSecret %s missing from golden" % s.get("name")
    return None


def run_tool(tool, files, flags, pod, ns_file=None, embedded=False):
    cmd = [tool] + (["--embedded"] if embedded else
                    ["--config", files[0], "--values", files[1], "--mesh", files[2]]) + flags
    if ns_file:
        cmd += ["--namespace", ns_file]
    p = subprocess.run(cmd, input=json.dumps(pod), capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        raise RuntimeError("tool failed: " + p.stderr.strip())
    return json.loads(p.stdout)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--") and a != "-k"]
    filt = sys.argv[sys.argv.index("-k") + 1] if "-k" in sys.argv else None
    if filt:
        args.remove(filt)
    embedded = "--embedded" in sys.argv
    tool, corpus = args[0], args[1]
    base_values = json.load(open(os.path.join(corpus, "values.json")))
    base_mesh = yaml.safe_load(open(os.path.join(corpus, "mesh.yaml")))
    base_config = yaml.safe_load(open(os.path.join(corpus, "inject-config.yaml")))
    passed = failed = 0
    tmp = tempfile.mkdtemp(prefix="inject-render-")
    for name in sorted(os.listdir(os.path.join(corpus, "cases"))):
        if filt and filt not in name:
            continue
        cdir = os.path.join(corpus, "cases", name)
        case = yaml.safe_load(open(os.path.join(cdir, "case.yaml")))
        s = case["settings"]
        files = [os.path.join(tmp, f) for f in ("config", "values", "mesh")]
        with open(files[0], "w") as f:
            yaml.safe_dump(merge(base_config, s.get("injectConfig") or {}), f)
        with open(files[1], "w") as f:
            json.dump(merge(base_values, s.get("values") or {}), f)
        with open(files[2], "w") as f:
            yaml.safe_dump(merge(base_mesh, s.get("mesh") or {}), f)
        flags = ["--set", "native-sidecars=%s" % (s.get("enableNativeSidecars") or "auto")]
        for i, v in enumerate(s.get("kubeletVersions") or []):
            flags += ["--node", "node%d=%s" % (i, v)]
        if s.get("platform"):
            flags += ["--set", "platform=%s" % s["platform"]]
        if s.get("compliancePolicy"):
            flags += ["--set", "compliance-policy=%s" % s["compliancePolicy"]]
        for k, v in (s.get("env") or {}).items():
            flags += ["--set", "env=%s=%s" % (k, v)]
        namespaces = {n["name"]: n for n in s.get("namespaces") or []}

        inputs = docs_of(open(os.path.join(cdir, "input.yaml")).read())
        goldens = docs_of(open(os.path.join(cdir, case["golden"])).read()) if case.get("golden") else []
        problem = None
        try:
            for i, doc in enumerate(inputs):
                pod, ns = pod_of(doc)
                if ns and not pod["metadata"].get("namespace"):
                    pod["metadata"]["namespace"] = ns
                ns_file = None
                if pod["metadata"].get("namespace") in namespaces:
                    ns_file = os.path.join(tmp, "namespace.json")
                    n = namespaces[pod["metadata"]["namespace"]]
                    json.dump({"metadata": {"name": n["name"], "annotations": n.get("annotations") or {}}},
                              open(ns_file, "w"))
                res = run_tool(tool, files, flags, pod, ns_file)
                if case.get("expectedError"):
                    if case["expectedError"] not in (res.get("error") or "").lower():
                        problem = "expected an error containing %r, got %r" % (case["expectedError"], res)
                    break
                if "error" in res:
                    problem = "render failed: " + res["error"]
                    break
                golden, _ = pod_of(goldens[i])
                if not res["inject"]:
                    if "sidecar.istio.io/status" in ((golden.get("metadata") or {}).get("annotations") or {}):
                        problem = "skipped (%s) but the golden pod is injected" % res["reason"]
                    continue
                if embedded and not case.get("differsFromDefault"):
                    emb = run_tool(tool, files, flags, pod, ns_file, embedded=True)
                    if "error" in emb:
                        problem = "embedded render failed: " + emb["error"]
                        break
                    d = first_diff(normalize(emb["overlays"]), normalize(res["overlays"]), "/embedded")
                    if d:
                        problem = d
                        break
                annotations = (pod.get("metadata") or {}).get("annotations") or {}
                if "sidecar.istio.io/status" in annotations:
                    continue  # re-injection: the merge side's business
                problem = compare(res, pod, golden)
                if problem:
                    break
        except Exception as e:  # a broken case must fail, not stop the run
            problem = "%s: %s" % (type(e).__name__, e)
        if problem:
            failed += 1
            print("FAIL %s: %s" % (name, problem))
        else:
            passed += 1
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed or passed == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
