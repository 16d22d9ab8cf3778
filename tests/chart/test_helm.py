#!/usr/bin/env python3
"""charts/webhookd through the real helm (v4, scripts/deps.sh test): `helm lint --strict` and
`helm template` for every value set of value_sets.yaml, each rendered object checked against the
Kubernetes / cert-manager / prometheus-operator schemas (k8s_schema.js, unknown fields included),
the chart-wide invariants below, and the set's own expectations; then revisionTags against
`webhookctl tag generate` (the chart must render exactly what webhookctl would apply).

Chart-wide invariants (every set that renders):
  - no injector entry of the release (tags included) selects webhookd's own pods, whatever the
    labels of webhookd's namespace (none, istio-injection=enabled, istio.io/rev=<any revision>);
  - every webhook calls the release's Service on one of its ports;
  - every webhook configuration gets the serving CA: a caBundle, cert-manager's CA injection, or
    webhookd's --patch-ca-bundle naming it (with get/update on it in the ClusterRole);
  - every flag in the Deployment's args is one `webhookd --help` lists, and webhookd accepts the
    args and environment together (`webhookd --check-config`, the checks a start runs before it
    reads a file: flags that conflict crash-loop every pod otherwise);
  - shutdownDelay + shutdownTimeout stay below terminationGracePeriodSeconds.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "kube"))
import helmtest  # noqa: E402
import kubetest  # noqa: E402
from fake_admission import label_selector_matches  # noqa: E402

WEBHOOKD = os.environ.get("WEBHOOKD", "")
WEBHOOKCTL = os.environ.get("WEBHOOKCTL", "")
SETS = yaml.safe_load(open(os.path.join(HERE, "value_sets.yaml")))

if not helmtest.tools_present():
    sys.exit(helmtest.MISSING)

PATH_PART = re.compile(r'\.?([^.\[\]"]+)|\[(-?\d+)\]|\["([^"]+)"\]')


def get(obj, path):
    """The value at a path like 'spec.a[0].labels["x.y/z"]' (None when absent)."""
    cur = obj
    for m in PATH_PART.finditer(path):
        key, idx, quoted = m.groups()
        if idx is not None:
            if not isinstance(cur, list) or not -len(cur) <= int(idx) < len(cur):
                return None
            cur = cur[int(idx)]
        else:
            if not isinstance(cur, dict):
                return None
            cur = cur.get(quoted if quoted is not None else key)
        if cur is None:
            return None
    return cur


def seconds(d):
    if not d:
        return 0.0
    units = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1, "m": 60, "h": 3600}
    return sum(float(n) * units[u] for n, u in re.findall(r"([0-9.]+)(ns|us|ms|s|m|h)", d))


def webhookd_flags():
    if not WEBHOOKD:
        return None
    out = subprocess.run([WEBHOOKD, "--help"], capture_output=True, text=True, timeout=30)
    return set(re.findall(r"^\s+--([a-z0-9-]+)", out.stdout + out.stderr, re.M))


def check_config(container):
    """`webhookd --check-config` with the container's args and environment (entries with a value;
    a valueFrom is unknown at render time): (exit status, output)."""
    env = {e["name"]: e["value"] for e in container.get("env") or [] if "value" in e}
    out = subprocess.run([WEBHOOKD, "--check-config", *container.get("args", [])], capture_output=True, text=True,
                         env=dict(env, PATH=os.environ.get("PATH", "")), timeout=30)
    return out.returncode, out.stdout + out.stderr


class TestValueSets(unittest.TestCase):
    flags = webhookd_flags()

    def lint(self, values, namespace):
        with tempfile.NamedTemporaryFile("w", suffix=".yaml") as f:
            yaml.safe_dump(values, f)
            f.flush()
            return helmtest.helm("lint", "--strict", helmtest.CHART, "--namespace", namespace, "-f", f.name)

    def check_invariants(self, name, objs, namespace, refused=None):
        errs = helmtest.schema_errors(list(objs.values()))
        self.assertEqual(errs, [], "%s: objects the schemas refuse" % name)
        dep = objs[("Deployment", "wh-webhookd")]
        pod_labels = dep["spec"]["template"]["metadata"]["labels"]
        hooks = [(n, w) for (k, n), o in objs.items() if k == "MutatingWebhookConfiguration" for w in o["webhooks"]]
        revs = {v for _, w in hooks for x in w["namespaceSelector"].get("matchExpressions", [])
                if x["key"] == "istio.io/rev" for v in x.get("values", [])}
        variants = [{}, {"istio-injection": "enabled"}] + [{"istio.io/rev": r} for r in sorted(revs)]
        for ns_extra in variants:
            ns_labels = dict(ns_extra, **{"kubernetes.io/metadata.name": namespace})
            for cfg, w in hooks:
                self.assertFalse(label_selector_matches(w["namespaceSelector"], ns_labels) and
                                 label_selector_matches(w["objectSelector"], pod_labels),
                                 "%s: %s/%s would inject webhookd itself (namespace labels %s)"
                                 % (name, cfg, w["name"], ns_labels))
        svc = objs[("Service", "wh-webhookd")]
        ports = {p["port"] for p in svc["spec"]["ports"]}
        for (kind, cfg), o in objs.items():
            if kind.endswith("WebhookConfiguration"):
                for w in o["webhooks"]:
                    ref = w["clientConfig"]["service"]
                    self.assertEqual((ref["namespace"], ref["name"]), (namespace, "wh-webhookd"), (name, cfg))
                    self.assertIn(ref.get("port", 443), ports, (name, cfg))
        c = dep["spec"]["template"]["spec"]["containers"][0]
        self.check_ca_bundles(name, objs, c["args"])
        if self.flags is not None:
            for a in (a for a in c["args"] if a.startswith("--")):  # not a flag's value ("--f", "v")
                flag = a[2:].split("=", 1)[0]
                self.assertIn(flag, self.flags, "%s: webhookd has no flag --%s" % (name, flag))
        if WEBHOOKD:
            status, out = check_config(c)
            if refused is None:
                self.assertEqual((status, out.strip()), (0, "config ok"), "%s: webhookd refuses its args" % name)
            else:
                self.assertEqual(status, 2, "%s: webhookd accepts its args: %s" % (name, out))
                self.assertIn(refused, out, name)
        args = dict(a[2:].split("=", 1) for a in c["args"] if "=" in a)
        grace = dep["spec"]["template"]["spec"]["terminationGracePeriodSeconds"]
        self.assertLess(seconds(args.get("shutdown-delay")) + seconds(args.get("shutdown-timeout")), grace, name)

    def check_ca_bundles(self, name, objs, argv):
        """Each webhook configuration's caBundle comes from somewhere: the API server would otherwise
        verify webhookd's certificate against its own trust roots and refuse every call."""
        args = dict(a[2:].split("=", 1) for a in argv if "=" in a)
        patched = {kind: set(filter(None, args.get(flag, "").split(","))) if "--patch-ca-bundle" in argv else set()
                   for kind, flag in (("MutatingWebhookConfiguration", "ca-bundle-mutating"),
                                      ("ValidatingWebhookConfiguration", "ca-bundle-validating"))}
        role = objs.get(("ClusterRole", "wh-webhookd"), {"rules": []})
        for (kind, cfg), o in objs.items():
            if not kind.endswith("WebhookConfiguration"):
                continue
            injected = "cert-manager.io/inject-ca-from" in (o["metadata"].get("annotations") or {})
            for w in o["webhooks"]:
                self.assertTrue(w["clientConfig"].get("caBundle") or injected or cfg in patched[kind],
                                "%s: %s/%s has no CA: no caBundle, no cert-manager injection, not patched by webhookd"
                                % (name, cfg, w["name"]))
            if cfg in patched[kind]:
                resource = kind.lower() + "s"
                self.assertTrue(any(resource in r["resources"] and {"get", "update"} <= set(r["verbs"]) and
                                    cfg in r.get("resourceNames", [cfg]) for r in role["rules"] or []),
                                "%s: webhookd may not patch %s %s" % (name, kind, cfg))

    def test_schema_names_each_property_once(self):
        """A JSON object with a name twice keeps the last one: a second, looser definition would
        silently replace the strict one (as a loose "cluster" once did)."""
        twice = []

        def pairs(items):
            names = [k for k, _ in items]
            twice.extend(sorted({k for k in names if names.count(k) > 1}))
            return dict(items)
        with open(os.path.join(helmtest.CHART, "values.schema.json")) as f:
            json.load(f, object_pairs_hook=pairs)
        self.assertEqual(twice, [], "values.schema.json defines these names twice in one object")

    def test_value_sets(self):
        self.assertGreaterEqual(len([s for s in SETS if "fails" not in s]), 7)
        for vs in SETS:
            with self.subTest(vs["name"]):
                ns = vs.get("namespace", "istio-system")
                if "fails" in vs:
                    with self.assertRaises(helmtest.RenderError) as e:
                        helmtest.template_text(vs["values"], namespace=ns)
                    self.assertIn(vs["fails"], str(e.exception))
                    continue
                lint = self.lint(vs["values"], ns)
                self.assertEqual(lint.returncode, 0, lint.stdout + lint.stderr)
                objs = {(d["kind"], d["metadata"]["name"]): d
                        for d in helmtest.docs(helmtest.template_text(vs["values"], namespace=ns))}
                self.check_invariants(vs["name"], objs, ns, vs.get("webhookdRefuses"))
                for ref in vs.get("present", []):
                    self.assertIn(tuple(ref.split("/", 1)), objs, "%s: %s missing" % (vs["name"], ref))
                for ref in vs.get("absent", []):
                    self.assertNotIn(tuple(ref.split("/", 1)), objs, "%s: %s rendered" % (vs["name"], ref))
                if "clusterReads" in vs:
                    role = objs.get(("ClusterRole", "wh-webhookd"), {"rules": []})
                    reads = {r + ("." + g if g else "") for rule in role["rules"] or [] if "watch" in rule["verbs"]
                             for g in rule["apiGroups"] for r in rule["resources"]}
                    self.assertEqual(reads, set(vs["clusterReads"]), "%s: ClusterRole get/list/watch" % vs["name"])
                for ref, paths in (vs.get("paths") or {}).items():
                    obj = objs.get(tuple(ref.split("/", 1)))
                    self.assertIsNotNone(obj, "%s: %s missing" % (vs["name"], ref))
                    for path, want in paths.items():
                        self.assertEqual(get(obj, path), want, "%s: %s %s" % (vs["name"], ref, path))


@unittest.skipUnless(WEBHOOKCTL, "WEBHOOKCTL is not set (run through ctest)")
class TestRevisionTagsAsWebhookctl(unittest.TestCase):
    """revisionTags renders what `webhookctl tag generate` prints for the release's revision."""
    maxDiff = None

    def compare(self, values, tags, namespace="istio-system"):
        rendered = helmtest.docs(helmtest.template_text(values, namespace=namespace))
        tag_names = {"istio-revision-tag-" + t + ("" if namespace == "istio-system" else "-" + namespace)
                     for t in tags} | {"istiod-default-validator"} | {"istiod-revision-tag-" + t for t in tags}
        from_chart = [d for d in rendered if d["metadata"]["name"] in tag_names]
        cluster = [d for d in rendered if d["metadata"]["name"] not in tag_names
                   and d["kind"] in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration", "Service")]
        for d in cluster:
            d["metadata"].setdefault("namespace", namespace) if d["kind"] == "Service" else None
        api = kubetest.FakeApi()
        self.addCleanup(api.close)
        api.load([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}] + cluster)
        generated = []
        auto = ["--auto-inject-namespaces"] if values.get("sidecarInjectorWebhook", {}).get("enableNamespacesByDefault") else []
        for t in tags:
            out = subprocess.run([WEBHOOKCTL, "tag", "generate", t, "--revision", values.get("revision") or "default",
                                  "-i", namespace, "-y", "--kubeconfig", api.kubeconfig()] + auto,
                                 capture_output=True, text=True, timeout=60)
            self.assertEqual(out.returncode, 0, out.stderr)
            generated += helmtest.docs(out.stdout)
        key = lambda d: (d["kind"], d["metadata"]["name"])  # noqa: E731
        self.assertEqual(sorted(map(key, from_chart)), sorted(map(key, generated)))
        for want, got in zip(sorted(generated, key=key), sorted(from_chart, key=key)):
            self.assertEqual(got, want, key(want))

    def test_named_revision(self):
        self.compare({"revision": "canary", "injection": {"revisions": ["canary"], "defaultRevision": False},
                      "revisionTags": ["prod", "default"]}, ["prod", "default"])

    def test_default_tag_injects_unlabelled_namespaces(self):
        # istiod's chart gives the default tag the auto. entry when enableNamespacesByDefault.
        self.compare({"revision": "canary", "injection": {"revisions": ["canary"], "defaultRevision": False},
                      "sidecarInjectorWebhook": {"enableNamespacesByDefault": True},
                      "revisionTags": ["default"]}, ["default"])

    def test_default_revision_cert_manager_other_namespace(self):
        self.compare({"certificates": {"mode": "certManager"}, "revisionTags": ["stable"],
                      "sidecarInjectorWebhook": {"reinvocationPolicy": "IfNeeded"}}, ["stable"], namespace="mesh")


if __name__ == "__main__":
    unittest.main(verbosity=2)
