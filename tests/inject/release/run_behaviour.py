#!/usr/bin/env python3
"""Injection cases through webhookctl kube-inject: the release table's rows at
their edges (behaviour.yaml) and Istio's injector unit tests beyond the goldens
(../units/cases.yaml).

  run_behaviour.py WEBHOOKCTL SET_DIR CASES.yaml

SET_DIR is a conformance set (inject-config.yaml, values.json, mesh.yaml);
each case injects a small Deployment (with --istio-version when it names a
`version`) and says what istiod of that release does (see behaviour.yaml's header).
A case whose version is older than SET_DIR's runs with the templates
(inject-config.yaml) of the newest sibling set (SET_DIR/../*) not newer than it,
else the oldest, and SET_DIR's values and mesh: a release's istiod ships its own
templates, and newer ones may call functions it lacks.
"""
import copy
import json
import os
import re
import subprocess
import sys
import tempfile

import yaml

BASE = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "hello", "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": "hello"}},
                 "template": {"metadata": {"labels": {"app": "hello"}},
                              "spec": {"containers": [{"name": "hello", "image": "fake.docker.io/hello:1.0",
                                                       "ports": [{"name": "http", "containerPort": 80}]}]}}}}


def lookup(doc, path):
    """A dotted path (\\. escapes a dot; in a list a number is an index, any other
    step the item of that name); KeyError when absent."""
    cur = doc
    for step in [p.replace("\\0", ".") for p in path.replace("\\.", "\\0").split(".")]:
        if isinstance(cur, list) and not step.isdigit():
            named = [item for item in cur if isinstance(item, dict) and item.get("name") == step]
            if not named:
                raise KeyError(path)
            cur = named[0]
        elif isinstance(cur, list):
            cur = cur[int(step)]
        elif isinstance(cur, dict) and step in cur:
            cur = cur[step]
        else:
            raise KeyError(path)
    return cur


def overlay(base, over):
    """`over` merged into a copy of `base`, maps key by key."""
    out = copy.deepcopy(base)
    for k, v in over.items():
        out[k] = overlay(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def minor(version):
    return tuple(int(x) for x in re.match(r"v?(\d+)\.(\d+)", version.strip()).groups())


def set_for(set_dir, version):
    """The conformance set whose templates istiod `version` would ship (see the module doc)."""
    sets = []
    for d in os.listdir(os.path.dirname(set_dir)):
        path = os.path.join(os.path.dirname(set_dir), d)
        if os.path.isfile(os.path.join(path, "version")):
            with open(os.path.join(path, "version")) as f:
                sets.append((minor(f.read()), path))
    sets.sort()
    own = [m for m, path in sets if os.path.samefile(path, set_dir)]
    if not version or not re.match(r"v?\d+\.\d+", version) or not own or minor(version) >= own[0]:
        return set_dir
    older = [path for m, path in sets if m <= minor(version)]
    return older[-1] if older else sets[0][1]


def run(ctl, set_dir, case, tmp):
    dep = copy.deepcopy(BASE)
    tmpl = dep["spec"]["template"]
    if case.get("annotations"):
        tmpl["metadata"]["annotations"] = case["annotations"]
    if case.get("labels"):
        tmpl["metadata"]["labels"].update(case["labels"])
    if case.get("containers"):
        tmpl["spec"]["containers"] = case["containers"]
    tmpl["spec"].update(case.get("spec") or {})
    path = os.path.join(tmp, case["name"] + ".yaml")
    with open(path, "w") as f:
        yaml.safe_dump(dep, f)
    values = os.path.join(set_dir, "values.json")
    if case.get("values"):
        with open(values) as f:
            merged = overlay(json.load(f), case["values"])
        values = os.path.join(tmp, case["name"] + ".values.json")
        with open(values, "w") as f:
            json.dump(merged, f)
    templates = set_for(set_dir, case.get("version"))
    if case.get("templates_of"):
        templates = os.path.join(os.path.dirname(set_dir), case["templates_of"])
    templates = os.path.join(templates, "inject-config.yaml")
    added = dict(case.get("templates") or {})
    for name, file in (case.get("templates_file") or {}).items():
        with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), file)) as f:
            added[name] = f.read()
    if added:
        with open(templates) as f:
            config = yaml.safe_load(f)
        config["templates"].update(added)
        templates = os.path.join(tmp, case["name"] + ".inject-config.yaml")
        with open(templates, "w") as f:
            yaml.safe_dump(config, f)
    mesh = os.path.join(set_dir, "mesh.yaml")
    if case.get("mesh"):
        with open(mesh) as f:
            merged = overlay(yaml.safe_load(f) or {}, case["mesh"])
        mesh = os.path.join(tmp, case["name"] + ".mesh.yaml")
        with open(mesh, "w") as f:
            yaml.safe_dump(merged, f)
    cmd = [ctl, "kube-inject", "-f", path,
           "--injectConfigFile", templates,
           "--valuesFile", values,
           "--meshConfigFile", mesh] + case.get("flags", [])
    if case.get("version"):
        cmd += ["--istio-version", case["version"]]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    if case.get("stderr") and case["stderr"] not in p.stderr:
        return "stderr %r lacks %r" % (p.stderr[:300], case["stderr"])
    if case["expect"] == "error":
        if p.returncode == 0:
            return "expected an error, kube-inject succeeded"
        if case.get("error", "").lower() not in p.stderr.lower():
            return "error %r lacks %r" % (p.stderr.strip()[:300], case["error"])
        return None
    if p.returncode != 0:
        return "kube-inject failed: %s" % p.stderr.strip()[:300]
    out = [d for d in yaml.safe_load_all(p.stdout) if d][0]["spec"]["template"]
    names = [c.get("name") for c in (out["spec"].get("containers") or []) + (out["spec"].get("initContainers") or [])]
    injected = "istio-proxy" in names
    if injected != (case["expect"] == "injected"):
        return "expected %s, containers %r" % (case["expect"], names)
    for path, want in (case.get("check") or {}).items():
        try:
            got = lookup(out, path)
        except (KeyError, IndexError):
            got = None
        if got != want:
            return "%s is %r, want %r" % (path, got, want)
    for path, want in (case.get("check_json") or {}).items():
        try:
            got = json.loads(lookup(out, path))
        except (KeyError, IndexError, TypeError, ValueError):
            got = None
        if got != want:
            return "%s is %r, want the JSON text of %r" % (path, got, want)
    return None


def main():
    if len(sys.argv) != 4:
        raise SystemExit(__doc__)
    ctl, set_dir, cases_path = sys.argv[1:]
    with open(cases_path) as f:
        cases = yaml.safe_load(f)
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        for case in cases:
            why = run(ctl, set_dir, case, tmp)
            print("%s %s%s" % ("FAIL" if why else "ok  ", case["name"], ": " + why if why else ""))
            bad += why is not None
    print("%d passed, %d failed" % (len(cases) - bad, bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
