#!/usr/bin/env python3
"""run_sweep.py - every stored version of Istio's injection templates, rendered
by webhookd and by istiod's engine.

A version is a folder of templates/ (see README.md: <template>.yaml files, and
optionally the version's own values.json / mesh.yaml; otherwise those of
MASTER_DIR) or, with --config DIR, a folder holding a whole injector config
(inject-config.yaml, values.json, mesh.yaml: the master corpus, the
tests/inject/releases corpora).  For each version and each pod of pods.yaml whose
templates (annotation inject.istio.io/templates, default "sidecar") the
version has: build the revision (the version's templates; policy and the rest
of the injector config from MASTER_DIR), render the pod with
inject_render_tool, and
 - fail when webhookd reports a render error;
 - with the Go reference (goref/, built by build_goref.sh), render the same
   template data with Go's text/template + Sprig + Istio's helpers and fail
   when one side errors and the other does not, or an overlay differs (Go's
   overlay with the fields a Pod does not have dropped, as webhookd and
   istiod drop them).
A Go-side error that webhookd reproduces passes (istiod fails too) and is
printed, so a version that needs its own values shows.

Every version also renders once per entry of values-variants.yaml: its values
with the entry's overlay merged in (settings that switch on the branches the
default values leave dark: CNI, custom lifecycle, seccomp, GKE certificates,
pull secrets, ...).

Usage: run_sweep.py TOOL GOREF|- MASTER_DIR SWEEP_DIR [--config DIR]... [-k SUBSTRING]
"""
import copy
import json
import math
import os
import subprocess
import sys
import tempfile

import yaml

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "render"))
from render_corpus import first_diff, pod_of  # noqa: E402

TEMPLATES_ANNOTATION = "inject.istio.io/templates"


def cores(q):
    """Whole cores, rounded up, of a CPU quantity; None when it does not parse."""
    try:
        q = str(q)
        return math.ceil(float(q[:-1]) / 1000) if q.endswith("m") else math.ceil(float(q))
    except ValueError:
        return None


def concurrency(pc, annotations, values):
    """istiod's EstimatedConcurrency for the template data."""
    c = pc.get("concurrency")
    if c is None:
        return 2
    if c > 0:
        return c
    for key in ("sidecar.istio.io/proxyCPULimit", "sidecar.istio.io/proxyCPU"):
        if key in annotations:
            n = cores(annotations[key])
            return 2 if n is None else n
    res = ((values.get("global") or {}).get("proxy") or {}).get("resources") or {}
    for part in ("limits", "requests"):
        n = cores((res.get(part) or {}).get("cpu", "x"))
        if n is not None:
            return n
    return 2


def numbers(v):
    """JSON has one number type: a whole float is its integer (Go's
    encoding/json writes 1e+07 as 10000000)."""
    if isinstance(v, dict):
        return {k: numbers(x) for k, x in v.items()}
    if isinstance(v, list):
        return [numbers(x) for x in v]
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return v


def owner_meta(pod):
    """TypeMeta and DeploymentMeta istiod derives from the pod's controller
    (a pod without one stands for itself)."""
    meta = pod["metadata"]
    ref = (meta.get("ownerReferences") or [{"kind": "Pod", "apiVersion": "v1", "name": meta.get("name", "")}])[0]
    kind, name, api = ref.get("kind", ""), ref.get("name", ""), ref.get("apiVersion", "")
    if kind == "ReplicaSet" and "-" in name:
        kind, name, api = "Deployment", name.rsplit("-", 1)[0], "apps/v1"
    return {"kind": kind, "apiVersion": api}, {"Namespace": meta.get("namespace", ""), "Name": name}


def deep_merge(base, over):
    """over's keys onto base, maps merged recursively (as Helm merges values)."""
    if not isinstance(base, dict) or not isinstance(over, dict):
        return copy.deepcopy(over)
    out = copy.deepcopy(base)
    for k, v in over.items():
        out[k] = deep_merge(base.get(k), v) if k in base else copy.deepcopy(v)
    return out


def versions_of(sweep, master, config_dirs, only):
    """(name, {template: text}, values file, mesh file) of every version."""
    out = []
    tdir = os.path.join(sweep, "templates")
    for ver in sorted(os.listdir(tdir)):
        vdir = os.path.join(tdir, ver)
        templates = {f[:-5]: open(os.path.join(vdir, f)).read() for f in sorted(os.listdir(vdir))
                     if f.endswith(".yaml") and f != "mesh.yaml"}
        own = {f: os.path.join(vdir, f) for f in ("values.json", "mesh.yaml") if os.path.exists(os.path.join(vdir, f))}
        out.append((ver, templates, own.get("values.json", os.path.join(master, "values.json")),
                    own.get("mesh.yaml", os.path.join(master, "mesh.yaml"))))
    for d in config_dirs:
        cfg = yaml.safe_load(open(os.path.join(d, "inject-config.yaml")))
        out.append((os.path.basename(os.path.normpath(d)), cfg["templates"], os.path.join(d, "values.json"),
                    os.path.join(d, "mesh.yaml")))
    return [v for v in out if only in v[0]]


def main():
    argv = sys.argv[1:]
    only, config_dirs = "", []
    while "-k" in argv or "--config" in argv:
        i = argv.index("-k") if "-k" in argv else argv.index("--config")
        if argv[i] == "-k":
            only = argv[i + 1]
        else:
            config_dirs.append(argv[i + 1])
        del argv[i:i + 2]
    tool, goref, master, sweep = argv
    if goref != "-" and not os.path.exists(goref):
        goref = "-"
    base_cfg = yaml.safe_load(open(os.path.join(master, "inject-config.yaml")))
    pods = []
    for p in yaml.safe_load(open(os.path.join(sweep, "pods.yaml"))):
        docs = [p["doc"]] if "doc" in p else \
            [d for d in yaml.safe_load_all(open(os.path.join(master, "cases", p["corpus"], "input.yaml"))) if d]
        for i, doc in enumerate(docs):
            pods.append((p["name"] + ("" if len(docs) == 1 else "-%d" % i), pod_of(doc)[0]))

    variants = [("", None)]
    vv = os.path.join(sweep, "values-variants.yaml")
    if os.path.exists(vv):
        variants += [(v["name"], v["values"]) for v in yaml.safe_load(open(vv))]

    failures, cases, ours = [], [], {}
    tmp = tempfile.mkdtemp(prefix="sweep-")
    versions = versions_of(sweep, master, config_dirs, only)
    runs = [(ver + ("/" + vname if vname else ""), templates, values_file, mesh_file, over)
            for ver, templates, values_file, mesh_file in versions for vname, over in variants]
    for ver, templates, values_file, mesh_file, over in runs:
        cfg = copy.deepcopy(base_cfg)
        cfg["templates"] = templates
        cfg["defaultTemplates"] = ["sidecar"]
        cfg_file = os.path.join(tmp, ver.replace("/", "_") + ".yaml")
        with open(cfg_file, "w") as f:
            yaml.safe_dump(cfg, f, width=1 << 30)
        values = json.load(open(values_file))
        if over is not None:
            values = deep_merge(values, over)
            values_file = os.path.join(tmp, ver.replace("/", "_") + ".values.json")
            with open(values_file, "w") as f:
                json.dump(values, f)
        mesh = open(mesh_file).read()
        for pname, pod in pods:
            wanted = (pod["metadata"].get("annotations") or {}).get(TEMPLATES_ANNOTATION, "sidecar").split(",")
            if any(t not in templates for t in wanted):
                continue
            name = "%s/%s" % (ver, pname)
            p = subprocess.run([tool, "--config", cfg_file, "--values", values_file, "--mesh", mesh_file],
                               input=json.dumps(pod), capture_output=True, text=True, timeout=60)
            if p.returncode != 0:
                failures.append("%s: inject_render_tool failed: %s" % (name, p.stderr.strip()))
                continue
            res = json.loads(p.stdout)
            if not res.get("inject"):
                failures.append("%s: not injected: %s" % (name, res.get("reason")))
                continue
            ours[name] = res
            tm, dm = owner_meta(pod)
            pc = res.get("proxyConfig") or {}
            cases.append({"name": name, "templates": [templates[t] for t in res.get("names") or wanted],
                          "values": values, "mesh": mesh, "pod": pod, "typeMeta": tm,
                          "deploymentMeta": dm, "revision": res.get("revision") or "",
                          "native": bool(res.get("native")),
                          "concurrency": concurrency(pc, pod["metadata"].get("annotations") or {}, values)})

    go = {}
    if goref != "-" and cases:
        cases_file = os.path.join(tmp, "cases.json")
        with open(cases_file, "w") as f:
            json.dump(cases, f)
        p = subprocess.run([goref, cases_file], capture_output=True, text=True, timeout=300)
        if p.returncode != 0:
            failures.append("Go reference failed: " + p.stderr.strip())
        else:
            go = {r["name"]: r for r in json.loads(p.stdout)}
            # drop what a core/v1 Pod has no field for, as webhookd does with
            # its own overlays (istiod's decode into the Pod type drops it too)
            rendered = [r for r in go.values() if not r.get("err")]
            p = subprocess.run([tool, "--prune"], input=json.dumps([o for r in rendered for o in r["overlays"]]),
                               capture_output=True, text=True, timeout=60)
            if p.returncode != 0:
                failures.append("inject_render_tool --prune failed: " + p.stderr.strip())
            else:
                pruned = iter(json.loads(p.stdout))
                for r in rendered:
                    r["overlays"] = [next(pruned) for _ in r["overlays"]]

    for c in cases:
        name, res = c["name"], ours[c["name"]]
        err = res.get("error")
        g = go.get(name)
        if g is None:
            if err:
                failures.append("%s: render error: %s" % (name, err))
            continue
        if g.get("err"):
            if err:
                print("%s: both fail (istiod would too): go: %s | ours: %s" % (name, g["err"], err))
            else:
                failures.append("%s: Go fails, webhookd renders: %s" % (name, g["err"]))
            continue
        if err:
            failures.append("%s: webhookd fails, Go renders: %s" % (name, err))
            continue
        diff = first_diff(numbers(g["overlays"]), numbers(res.get("overlays") or []))
        if diff:
            failures.append("%s: overlay differs from Go's: %s" % (name, diff[:600]))

    for f in failures:
        print("FAIL " + f)
    print("%d versions, %d renders (%s), %d failed" %
          (len(versions), len(cases), "compared with Go" if go else "no Go reference", len(failures)))
    return 1 if failures or not versions else 0


if __name__ == "__main__":
    sys.exit(main())
