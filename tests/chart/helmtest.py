"""helmtest.py - the chart rendered by the real helm (v4, from scripts/deps.sh test) and checked
against the real schemas (k8s_schema.js), shared by tests/chart, tests/integration/test_chart.py,
tests/validate/test_chart_validate.py and the simulated cluster (tests/e2e).

Tools come from $WH_TOOLS_DIR (CMake passes it; default ~/.cache/webhookd/tools, where
scripts/deps.sh test puts helm/helm, kubectl/kubectl and node/node_modules).
"""
import json
import os
import shutil
import subprocess
import tempfile

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
CHART = os.path.normpath(os.path.join(HERE, "..", "..", "charts", "webhookd"))
TOOLS = os.environ.get("WH_TOOLS_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "webhookd", "tools")
HELM = os.path.join(TOOLS, "helm", "helm")
KUBECTL = os.path.join(TOOLS, "kubectl", "kubectl")
NODE = shutil.which("node") or "node"
MISSING = "helm/kubectl/schemas are not in %s: run scripts/deps.sh test" % TOOLS


def tools_present():
    return os.access(HELM, os.X_OK) and os.path.isdir(os.path.join(TOOLS, "node", "node_modules"))


class RenderError(RuntimeError):
    pass


def _set_path(values, dotted, value):
    keys = dotted.split(".")
    cur = values
    for k in keys[:-1]:
        cur = cur.setdefault(k, {})
    cur[keys[-1]] = value


def values_from_sets(sets):
    """["a.b=<YAML>", ...] -> a values dict (each right-hand side parsed as YAML)."""
    values = {}
    for kv in sets:
        k, v = kv.split("=", 1)
        _set_path(values, k, yaml.safe_load(v))
    return values


def helm(*args, timeout=120, **kw):
    return subprocess.run([HELM, *args], capture_output=True, text=True, timeout=timeout, **kw)


def template_text(values=None, release="wh", namespace="istio-system", extra_templates=None, args=()):
    """`helm template` of the chart with `values` (a dict); returns its stdout or raises RenderError
    with helm's stderr.  extra_templates {name: text} are added to a copy of the chart first."""
    with tempfile.TemporaryDirectory(prefix="wh-helm-") as d:
        chart = CHART
        if extra_templates:
            chart = os.path.join(d, "webhookd")
            shutil.copytree(CHART, chart)
            for name, text in extra_templates.items():
                with open(os.path.join(chart, "templates", name), "w") as f:
                    f.write(text)
        vf = os.path.join(d, "values.yaml")
        with open(vf, "w") as f:
            yaml.safe_dump(values or {}, f)
        out = helm("template", release, chart, "--namespace", namespace, "-f", vf, *args)
        if out.returncode != 0:
            raise RenderError(out.stderr)
        return out.stdout


def docs(text):
    return [d for d in yaml.safe_load_all(text) if d]


def render(*sets, extra=False, values=None, **kw):
    """{(kind, name): object} of `helm template` with "key=YAML" sets (and/or a values dict); extra
    adds tests/integration/chart/webhook-config.yaml (a configuration built from the helpers)."""
    vals = values_from_sets(sets)
    for k, v in (values or {}).items():
        vals[k] = v
    extras = None
    if extra:
        with open(os.path.join(HERE, "..", "integration", "chart", "webhook-config.yaml")) as f:
            extras = {"zz-test-webhook-config.yaml": f.read()}
    return {(d["kind"], d["metadata"]["name"]): d for d in docs(template_text(vals, extra_templates=extras, **kw))}


def schema_errors(objects):
    """[(kind/name, [errors])] of the objects the Kubernetes/cert-manager/prometheus-operator schemas
    refuse (unknown fields included)."""
    env = dict(os.environ, WH_TOOLS_DIR=TOOLS)
    out = subprocess.run([NODE, os.path.join(HERE, "k8s_schema.js")], input=json.dumps(objects),
                         capture_output=True, text=True, env=env, timeout=120)
    if out.returncode not in (0, 1) or not out.stdout:
        raise RuntimeError("k8s_schema.js failed (%d): %s" % (out.returncode, out.stderr))
    bad = []
    for line in out.stdout.splitlines():
        r = json.loads(line)
        if r["errors"]:
            bad.append(("%s/%s" % (r["kind"], r["name"]), r["errors"]))
    return bad
