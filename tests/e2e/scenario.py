"""scenario.py - what the canary-upgrade tests share: istiod's revisions as ConfigMaps from the
injection conformance sets, the chart values the README's commands use, application pods built
from the goldens' inputs, and the comparison with a release's goldens.
"""
import copy
import importlib.util
import json
import os
import subprocess

import yaml

import sim

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.environ.get("WH_SHARED_DIR") or os.path.join(HERE, "..", "..", "..", "shared")
CONFORMANCE = os.path.join(SHARED, "conformance", "istio-inject")
GOLDEN_CASE = "hello.yaml.injected"   # istio's testdata/inject/hello.yaml, a plain Deployment

_spec = importlib.util.spec_from_file_location("inject_run", os.path.join(HERE, "..", "inject", "conformance", "run.py"))
inject_run = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(inject_run)

# The README's values files (docs/canary-values.yaml is what `helm install -f` takes there).
VALUES = os.path.join(HERE, "values")


def values(name):
    with open(os.path.join(VALUES, name + ".yaml")) as f:
        return yaml.safe_load(f)


def release_set(release):
    return os.path.join(CONFORMANCE, release)


def revision_configmaps(rev, release, namespace="istio-system"):
    """istiod's ConfigMaps for revision `rev` of Istio `release` as its chart installs them:
    istio-sidecar-injector-<rev> (config, values) and istio-<rev> (mesh); no suffix for "default"."""
    d = release_set(release)
    with open(os.path.join(d, "inject-config.yaml")) as f:
        config = f.read()
    with open(os.path.join(d, "values.json")) as f:
        vals = json.load(f)
    vals["revision"] = "" if rev == "default" else rev
    suffix = "" if rev == "default" else "-" + rev
    with open(os.path.join(d, "mesh.yaml")) as f:
        mesh = f.read()
    labels = {"istio.io/rev": rev, "app.kubernetes.io/version": release, "app.kubernetes.io/part-of": "istio",
              "release": "istio"}
    return [{"apiVersion": "v1", "kind": "ConfigMap",
             "metadata": {"name": "istio-sidecar-injector" + suffix, "namespace": namespace, "labels": labels},
             "data": {"config": config, "values": json.dumps(vals, indent=2)}},
            {"apiVersion": "v1", "kind": "ConfigMap",
             "metadata": {"name": "istio" + suffix, "namespace": namespace, "labels": labels},
             "data": {"mesh": mesh}}]


def golden_case(release):
    cases = os.path.join(release_set(release), "cases")
    name = [c for c in sorted(os.listdir(cases)) if c.endswith("-" + GOLDEN_CASE)][0]
    return os.path.join(cases, name)


def app_pod(release, suffix):
    """The golden case's input as the Pod its ReplicaSet would create (as tests/inject/conformance/run.py builds it)."""
    with open(os.path.join(golden_case(release), "input.yaml")) as f:
        (pod, _), = inject_run.pods_of(f.read())
    pod["metadata"]["generateName"] = "hello-%s-" % suffix
    return pod


def golden_pod(release, revision, namespace):
    """The golden Pod of `release`, as that istiod would inject it when serving revision `revision`
    in `namespace` (the goldens were made for the revision "default" in the namespace "default")."""
    with open(os.path.join(golden_case(release), "golden.yaml")) as f:
        (pod, _), = inject_run.pods_of(f.read())
    text = json.dumps(pod)
    text = text.replace('\\"revision\\":\\"default\\"', '\\"revision\\":\\"%s\\"' % revision)
    text = text.replace("istiod.istio-system.svc", "istiod-%s.istio-system.svc" % revision)  # its discovery address
    text = text.replace("/namespaces/default/", "/namespaces/%s/" % namespace)
    pod = json.loads(text)
    for field in ("labels", "annotations"):
        m = pod["metadata"].get(field) or {}
        if m.get("istio.io/rev") == "default":
            m["istio.io/rev"] = revision
    return pod


def injection_diff(created, release, revision, known=()):
    """None when the Pod the API server stored is `release`'s golden for `revision`, else the first
    difference (the conformance runner's comparison: status annotation and server fields aside)."""
    got = copy.deepcopy(created)
    meta = got["metadata"]
    namespace = meta.get("namespace")
    for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp", "managedFields"):
        meta.pop(k, None)
    meta["generateName"] = "hello-fake-"
    want = golden_pod(release, revision, namespace)
    inject_run.clear_fieldref_api_version(got)
    for side in (got, want):
        inject_run.drop_status(side)
        side.pop("status", None)
        inject_run.drop_known(side.get("spec") or {}, inject_run.parse_known(known) if known else [])
    return inject_run.first_diff(inject_run.prune(got), inject_run.prune(want))


def has_sidecar(pod):
    spec = pod.get("spec") or {}
    return any(c.get("name") == "istio-proxy" for c in (spec.get("containers") or []) +
               (spec.get("initContainers") or []))


def kubectl(cluster, *args, stdin=None):
    """kubectl v1.33 (scripts/deps.sh test) against the simulated cluster."""
    out = subprocess.run([sim.helmtest.KUBECTL, "--kubeconfig", cluster.kubeconfig, *args], capture_output=True,
                         text=True, input=stdin, timeout=60)
    return out.returncode, out.stdout, out.stderr
