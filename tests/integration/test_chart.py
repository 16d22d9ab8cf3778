#!/usr/bin/env python3
"""The Helm chart (charts/webhookd), rendered by the real helm (tests/chart/helmtest.py) in each
certificate mode: the
objects exist and fit together, the generated certificate is valid for the
service, the webhook-configuration helpers give the right caBundle, and the
injector MutatingWebhookConfigurations follow istiod's (its selector matrix, ENTRIES below)
and work with `webhookctl tag`, `check-inject` and `check` (against fakeapi.py)."""
import base64
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "kube"))
sys.path.insert(0, os.path.join(HERE, "..", "chart"))
import kubetest  # noqa: E402  (fakeapi.py, for webhookctl against the rendered objects)
import helmtest  # noqa: E402

WEBHOOKCTL = os.environ.get("WEBHOOKCTL", "")
if not helmtest.tools_present():
    sys.exit(helmtest.MISSING)


def render(*sets, extra=True):
    """{(kind, name): object} of `helm template` with "key=YAML" sets; extra adds
    chart/webhook-config.yaml (a configuration written with the chart's helpers)."""
    try:
        return helmtest.render(*sets, extra=extra)
    except helmtest.RenderError as e:
        raise RuntimeError(str(e))


def openssl(*args, data=None):
    return subprocess.run(["openssl"] + list(args), input=data, capture_output=True, text=True)


class TestChart(unittest.TestCase):
    def test_self_signed_default(self):
        objs = render()
        dep = objs[("Deployment", "wh-webhookd")]
        pod = dep["spec"]["template"]["spec"]
        c = pod["containers"][0]
        self.assertIn("--tls-cert-file=/etc/webhookd/tls/tls.crt", c["args"])
        self.assertIn("--listen=:8443", c["args"])
        self.assertIn("--http2=false", c["args"])
        self.assertTrue(c["securityContext"]["readOnlyRootFilesystem"])
        self.assertEqual(c["securityContext"]["capabilities"]["drop"], ["ALL"])
        self.assertEqual(pod["securityContext"]["runAsUser"], 65532)
        self.assertEqual(c["readinessProbe"]["httpGet"]["path"], "/readyz")
        self.assertEqual(pod["volumes"][0]["secret"]["secretName"], "wh-webhookd-tls")
        svc = objs[("Service", "wh-webhookd")]
        self.assertEqual(svc["spec"]["ports"][0]["port"], 443)
        self.assertEqual(svc["spec"]["selector"], dep["spec"]["selector"]["matchLabels"])
        self.assertIn(("ServiceAccount", "wh-webhookd"), objs)
        self.assertIn(("ClusterRole", "wh-webhookd"), objs)
        self.assertIn(("PodDisruptionBudget", "wh-webhookd"), objs)
        self.assertNotIn(("Certificate", "wh-webhookd"), objs)

        secret = objs[("Secret", "wh-webhookd-tls")]
        crt, key, ca = (base64.b64decode(secret["data"][k]).decode() for k in ("tls.crt", "tls.key", "ca.crt"))
        with tempfile.TemporaryDirectory() as d:
            for name, text in (("tls.crt", crt), ("ca.crt", ca)):
                with open(os.path.join(d, name), "w") as f:
                    f.write(text)
            out = openssl("verify", "-CAfile", os.path.join(d, "ca.crt"), os.path.join(d, "tls.crt"))
            self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
            out = openssl("x509", "-in", os.path.join(d, "tls.crt"), "-noout", "-text",
                          "-checkhost", "wh-webhookd.istio-system.svc")
            self.assertIn("does match certificate", out.stdout)
            self.assertIn("prime256v1", out.stdout)
        self.assertIn("PRIVATE KEY", key)
        # The same render gives the webhook configuration that CA (memoised).
        vwc = objs[("ValidatingWebhookConfiguration", "test-validator")]
        cc = vwc["webhooks"][0]["clientConfig"]
        self.assertEqual(base64.b64decode(cc["caBundle"]).decode(), ca)
        self.assertEqual(cc["service"], {"name": "wh-webhookd", "namespace": "istio-system", "path": "/validate",
                                         "port": 443})
        self.assertFalse(vwc["metadata"]["annotations"])

    def test_cert_manager(self):
        objs = render("certificates.mode=certManager")
        self.assertNotIn(("Secret", "wh-webhookd-tls"), objs)
        cert = objs[("Certificate", "wh-webhookd")]
        self.assertEqual(cert["spec"]["secretName"], "wh-webhookd-tls")
        self.assertIn("wh-webhookd.istio-system.svc", cert["spec"]["dnsNames"])
        self.assertEqual(cert["spec"]["privateKey"]["algorithm"], "ECDSA")
        self.assertEqual(cert["spec"]["issuerRef"]["name"], "wh-webhookd-selfsigned")
        self.assertIn(("Issuer", "wh-webhookd-selfsigned"), objs)
        vwc = objs[("ValidatingWebhookConfiguration", "test-validator")]
        self.assertEqual(vwc["metadata"]["annotations"], {"cert-manager.io/inject-ca-from": "istio-system/wh-webhookd"})
        self.assertNotIn("caBundle", vwc["webhooks"][0]["clientConfig"])
        objs = render("certificates.mode=certManager", "certificates.certManager.issuerRef={name: corp, kind: ClusterIssuer}")
        self.assertEqual(objs[("Certificate", "wh-webhookd")]["spec"]["issuerRef"], {"name": "corp", "kind": "ClusterIssuer"})
        self.assertNotIn(("Issuer", "wh-webhookd-selfsigned"), objs)

    def test_existing_secret(self):
        with self.assertRaises(RuntimeError) as e:
            render("certificates.mode=secret")
        self.assertIn("certificates.existingSecret is required", str(e.exception))
        objs = render("certificates.mode=secret", "certificates.existingSecret=mine",
                      "certificates.caBundle=PEMDATA", "replicaCount=1", "server.http2=true")
        pod = objs[("Deployment", "wh-webhookd")]["spec"]["template"]["spec"]
        self.assertEqual(pod["volumes"][0]["secret"]["secretName"], "mine")
        self.assertIn("--http2=true", pod["containers"][0]["args"])
        self.assertNotIn(("PodDisruptionBudget", "wh-webhookd"), objs)  # one replica: no PDB
        cc = objs[("ValidatingWebhookConfiguration", "test-validator")]["webhooks"][0]["clientConfig"]
        self.assertEqual(base64.b64decode(cc["caBundle"]), b"PEMDATA")


# istiod's selector matrix, written out independently of the template: entry prefix ->
# (namespaceSelector, objectSelector) expressions; VALUE stands for the revision.
def _e(key, op, *values):
    return {"key": key, "operator": op, "values": list(values)} if values else {"key": key, "operator": op}


SYSTEM_NS = ["kube-system", "kube-public", "kube-node-lease", "local-path-storage"]
ENTRIES = {
    "rev.namespace.": ([_e("istio.io/rev", "In", "VALUE"), _e("istio-injection", "DoesNotExist")],
                       [_e("sidecar.istio.io/inject", "NotIn", "false")]),
    "rev.object.": ([_e("istio.io/rev", "DoesNotExist"), _e("istio-injection", "DoesNotExist")],
                    [_e("sidecar.istio.io/inject", "NotIn", "false"), _e("istio.io/rev", "In", "VALUE")]),
    "namespace.": ([_e("istio-injection", "In", "enabled")], [_e("sidecar.istio.io/inject", "NotIn", "false")]),
    "object.": ([_e("istio-injection", "DoesNotExist"), _e("istio.io/rev", "DoesNotExist")],
                [_e("sidecar.istio.io/inject", "In", "true"), _e("istio.io/rev", "DoesNotExist")]),
    "auto.": ([_e("istio-injection", "DoesNotExist"), _e("istio.io/rev", "DoesNotExist"),
               _e("kubernetes.io/metadata.name", "NotIn", *SYSTEM_NS)],
              [_e("sidecar.istio.io/inject", "DoesNotExist"), _e("istio.io/rev", "DoesNotExist")]),
}


def _subst(exprs, value):
    return {"matchExpressions": [dict(x, values=[value if v == "VALUE" else v for v in x["values"]])
                                 if "values" in x else x for x in exprs]}


def selector_matches(sel, labels):
    """Kubernetes label-selector semantics (matchExpressions only: all the chart uses)."""
    for x in sel.get("matchExpressions", []):
        have, op = labels.get(x["key"]), x["operator"]
        ok = {"In": have is not None and have in x.get("values", []),
              "NotIn": have is None or have not in x.get("values", []),
              "Exists": have is not None, "DoesNotExist": have is None}[op]
        if not ok:
            return False
    return not sel.get("matchLabels") or all(labels.get(k) == v for k, v in sel["matchLabels"].items())


def mwcs(*sets, extra=False):
    return {name: o for (kind, name), o in render(*sets, extra=extra).items() if kind == "MutatingWebhookConfiguration"}


class TestInjectorWebhooks(unittest.TestCase):
    def check_mwc(self, mwc, rev, value, path, prefixes, policy="Fail", reinvocation="Never", timeout=10):
        labels = mwc["metadata"]["labels"]
        self.assertEqual(labels["istio.io/rev"], rev)
        self.assertEqual(labels["app"], "sidecar-injector")
        self.assertEqual(labels["app.kubernetes.io/instance"], "wh")
        self.assertNotIn("istio.io/tag", labels)  # webhookctl tag: the canonical webhook is !istio.io/tag
        self.assertEqual([w["name"] for w in mwc["webhooks"]], [p + "sidecar-injector.istio.io" for p in prefixes])
        for w, p in zip(mwc["webhooks"], prefixes):
            ns, obj = ENTRIES[p]
            self.assertEqual(w["namespaceSelector"], _subst(ns, value), w["name"])
            self.assertEqual(w["objectSelector"], _subst(obj, value), w["name"])
            self.assertEqual(w["rules"], [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"],
                                           "resources": ["pods"]}])
            self.assertEqual(w["sideEffects"], "None")
            self.assertEqual(w["admissionReviewVersions"], ["v1"])
            self.assertEqual(w["failurePolicy"], policy)
            self.assertEqual(w["reinvocationPolicy"], reinvocation)
            self.assertEqual(w["timeoutSeconds"], timeout)
            self.assertEqual(w["clientConfig"]["service"], {"name": "wh-webhookd", "namespace": "istio-system",
                                                            "path": path, "port": 443})

    def test_default_install(self):
        objs = render(extra=False)
        found = {name: o for (kind, name), o in objs.items() if kind == "MutatingWebhookConfiguration"}
        self.assertEqual(list(found), ["wh-webhookd-sidecar-injector-istio-system"])
        mwc = found["wh-webhookd-sidecar-injector-istio-system"]
        self.check_mwc(mwc, "default", "default", "/inject", ["rev.namespace.", "rev.object.", "namespace.", "object."])
        # selfSigned: every entry carries the CA of the generated serving certificate.
        ca = base64.b64decode(objs[("Secret", "wh-webhookd-tls")]["data"]["ca.crt"])
        for w in mwc["webhooks"]:
            self.assertEqual(base64.b64decode(w["clientConfig"]["caBundle"]), ca)
        self.assertFalse(mwc["metadata"].get("annotations"))

    def test_revisioned_install(self):
        found = mwcs("injection.revisions=[canary, 1-24]", "injection.defaultRevision=false",
                     "injection.failurePolicy=Ignore", "sidecarInjectorWebhook.reinvocationPolicy=IfNeeded",
                     "injection.timeoutSeconds=5")
        self.assertEqual(sorted(found), ["wh-webhookd-sidecar-injector-1-24-istio-system",
                                         "wh-webhookd-sidecar-injector-canary-istio-system"])
        for rev in ("canary", "1-24"):
            self.check_mwc(found["wh-webhookd-sidecar-injector-%s-istio-system" % rev], rev, rev,
                           "/inject/rev/" + rev, ["rev.namespace.", "rev.object."],
                           policy="Ignore", reinvocation="IfNeeded", timeout=5)

    def test_namespaces_by_default(self):
        found = mwcs("sidecarInjectorWebhook.enableNamespacesByDefault=true")
        self.check_mwc(found["wh-webhookd-sidecar-injector-istio-system"], "default", "default", "/inject",
                       ["rev.namespace.", "rev.object.", "namespace.", "object.", "auto."])
        # auto. only belongs to the default revision.
        found = mwcs("sidecarInjectorWebhook.enableNamespacesByDefault=true", "injection.revisions=[canary]",
                     "injection.defaultRevision=false")
        self.check_mwc(found["wh-webhookd-sidecar-injector-canary-istio-system"], "canary", "canary",
                       "/inject/rev/canary", ["rev.namespace.", "rev.object."])

    def test_precedence(self):
        """Precedence: for each namespace/pod label combination, at most one entry of the default and
        the canary configurations matches, and it is the expected revision."""
        found = mwcs("injection.revisions=[canary]", "sidecarInjectorWebhook.enableNamespacesByDefault=true")
        cases = [  # (namespace labels, pod labels, revision that injects or None)
            ({}, {"sidecar.istio.io/inject": "false", "istio.io/rev": "canary"}, None),
            ({"istio-injection": "enabled", "istio.io/rev": "canary"}, {"istio.io/rev": "canary"}, "default"),
            ({"istio-injection": "disabled"}, {"istio.io/rev": "canary", "sidecar.istio.io/inject": "true"}, None),
            ({"istio.io/rev": "canary"}, {"istio.io/rev": "default"}, "canary"),
            ({"istio.io/rev": "other"}, {}, None),
            ({}, {"istio.io/rev": "canary", "sidecar.istio.io/inject": "true"}, "canary"),
            ({}, {"sidecar.istio.io/inject": "true"}, "default"),
            ({"kubernetes.io/metadata.name": "app"}, {}, "default"),
            ({"kubernetes.io/metadata.name": "kube-system"}, {}, None),
            ({"kubernetes.io/metadata.name": "kube-system"}, {"sidecar.istio.io/inject": "true"}, "default"),
        ]
        for ns, pod, want in cases:
            hits = [m["metadata"]["labels"]["istio.io/rev"] for m in found.values() for w in m["webhooks"]
                    if selector_matches(w["namespaceSelector"], ns) and selector_matches(w["objectSelector"], pod)]
            self.assertEqual(hits, [want] if want else [], (ns, pod))

    def test_certificate_modes(self):
        for sets, ann, ca in ((["certificates.mode=certManager"],
                               {"cert-manager.io/inject-ca-from": "istio-system/wh-webhookd"}, None),
                              (["certificates.mode=secret", "certificates.existingSecret=mine",
                                "certificates.caBundle=PEMDATA"], None, b"PEMDATA")):
            found = mwcs("injection.revisions=[canary]", *sets)
            self.assertEqual(len(found), 2, sets)
            for mwc in found.values():
                self.assertEqual(mwc["metadata"].get("annotations"), ann, sets)
                for w in mwc["webhooks"]:
                    if ca is None:
                        self.assertNotIn("caBundle", w["clientConfig"], sets)
                    else:
                        self.assertEqual(base64.b64decode(w["clientConfig"]["caBundle"]), ca, sets)

    def test_disabled_and_bad_values(self):
        self.assertEqual(mwcs("injection.enabled=false", "injection.revisions=[canary]"), {})
        self.assertEqual(mwcs("injection.defaultRevision=false"), {})
        for bad, msg in (("[default]", "set injection.defaultRevision=true instead"),
                         ("['']", "'/injection/revisions/0': '' does not match pattern"),  # values.schema.json
                         ("[canary, canary]", "a revision is listed twice")):
            with self.assertRaises(RuntimeError) as e:
                render("injection.revisions=" + bad)
            self.assertIn(msg, str(e.exception))



@unittest.skipUnless(os.access(WEBHOOKCTL, os.X_OK), "$WEBHOOKCTL is not set (run through ctest)")
class TestInjectorWithWebhookctl(unittest.TestCase):
    """The rendered configurations loaded into tests/kube/fakeapi.py: `webhookctl tag set` takes the chart's
    revision webhook as the revision's injector (and deactivates the chart's default one for the tag
    "default"), `check-inject` and `check` recognise them."""

    def setUp(self):
        objs = render("injection.revisions=[canary]", extra=False)
        self.ca = base64.b64decode(objs[("Secret", "wh-webhookd-tls")]["data"]["ca.crt"])
        load = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n, "labels": l}}
                for n, l in (("istio-system", {}), ("app", {"istio.io/rev": "prod"}),
                             ("legacy", {"istio-injection": "enabled"}))]
        for (kind, _), o in objs.items():
            if kind in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration", "Service"):
                if kind == "Service":
                    o["metadata"]["namespace"] = "istio-system"  # Helm's job
                load.append(o)
        self.api = kubetest.FakeApi()
        self.addCleanup(self.api.close)
        self.api.load(load)
        self.kc = self.api.kubeconfig()

    def ctl(self, *words):
        return subprocess.run([WEBHOOKCTL, *words, "--kubeconfig", self.kc], capture_output=True, text=True,
                              input="y\n", timeout=60)

    def mwc(self, name):
        found = [o for o in self.api.state() if o["kind"] == "MutatingWebhookConfiguration"
                 and o["metadata"]["name"] == name]
        self.assertEqual(len(found), 1, name)
        return found[0]

    def test_tags_and_diagnostics(self):
        out = self.ctl("check-inject", "-n", "legacy", "-l", "app=x")
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn('injected by revision "default" (webhook wh-webhookd-sidecar-injector-istio-system)', out.stdout)

        out = self.ctl("tag", "set", "prod", "--revision", "canary")
        self.assertEqual(out.returncode, 0, out.stderr)
        for w in self.mwc("istio-revision-tag-prod")["webhooks"]:
            self.assertEqual(w["clientConfig"]["service"], {"name": "wh-webhookd", "namespace": "istio-system",
                                                            "path": "/inject/rev/canary", "port": 443})
            self.assertEqual(base64.b64decode(w["clientConfig"]["caBundle"]), self.ca)
        out = self.ctl("check-inject", "-n", "app", "-l", "app=x")
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn('injected by revision "canary" (webhook istio-revision-tag-prod)', out.stdout)

        out = self.ctl("tag", "set", "default", "--revision", "canary")
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("wh-webhookd-sidecar-injector-istio-system deactivated", out.stdout)
        for w in self.mwc("wh-webhookd-sidecar-injector-istio-system")["webhooks"]:
            self.assertEqual(w["namespaceSelector"], {"matchLabels": {"istio.io/deactivated": "never-match"}})
        out = self.ctl("check-inject", "-n", "legacy", "-l", "app=x")
        self.assertIn('injected by revision "canary" (webhook istio-revision-tag-default)', out.stdout)

        out = self.ctl("check")
        for line in ("[ok]   injector webhook configurations exist", "[ok]   no overlapping injector webhooks",
                     "[ok]   namespace injection labels are served by an injector",
                     "[ok]   revision tags point at installed revisions"):
            self.assertIn(line, out.stdout)



class TestPatchCABundle(unittest.TestCase):
    """certificates.patchCABundle: webhookd's flags and RBAC name exactly the rendered
    configurations, and the real webhookd run with the chart's args patches them."""

    def configs(self, objs):
        return ({n for k, n in objs if k == "MutatingWebhookConfiguration"},
                {n for k, n in objs if k == "ValidatingWebhookConfiguration"})

    def args(self, objs):
        return objs[("Deployment", "wh-webhookd")]["spec"]["template"]["spec"]["containers"][0]["args"]

    def flag(self, args, name):
        vals = [a.split("=", 1)[1] for a in args if a.startswith("--%s=" % name)]
        return vals[0] if vals else None

    def test_off_by_default(self):
        objs = render(extra=False)
        self.assertFalse([a for a in self.args(objs) if "ca-bundle" in a])
        rules = objs[("ClusterRole", "wh-webhookd")]["rules"]
        self.assertFalse([r for r in rules if "admissionregistration.k8s.io" in r["apiGroups"]])

    def test_flags_and_rbac_name_the_rendered_configurations(self):
        objs = render("certificates.patchCABundle.enabled=true", "injection.revisions=[canary]",
                      "validation.defaultValidator=true", extra=False)
        mut, val = self.configs(objs)
        args = self.args(objs)
        self.assertIn("--patch-ca-bundle", args)
        self.assertEqual(set(self.flag(args, "ca-bundle-mutating").split(",")), mut)
        self.assertEqual(set(self.flag(args, "ca-bundle-validating").split(",")), val)
        self.assertEqual(self.flag(args, "ca-bundle-service"), "istio-system/wh-webhookd")
        self.assertIsNone(self.flag(args, "ca-bundle-selector"))
        rules = [r for r in objs[("ClusterRole", "wh-webhookd")]["rules"]
                 if "admissionregistration.k8s.io" in r["apiGroups"]]
        self.assertEqual(sorted((r["resources"][0], tuple(sorted(r["resourceNames"])), tuple(r["verbs"]))
                                for r in rules),
                         [("mutatingwebhookconfigurations", tuple(sorted(mut)), ("get", "update")),
                          ("validatingwebhookconfigurations", tuple(sorted(val)), ("get", "update"))])
        # A selector needs list over all configurations; no injector and no validator: a clear error.
        objs = render("certificates.patchCABundle.enabled=true", "certificates.patchCABundle.selector=istio.io/rev=canary",
                      extra=False)
        self.assertEqual(self.flag(self.args(objs), "ca-bundle-selector"), "istio.io/rev=canary")
        self.assertIn(["get", "list", "update"], [r["verbs"] for r in objs[("ClusterRole", "wh-webhookd")]["rules"]])
        with self.assertRaises(RuntimeError) as e:
            render("certificates.patchCABundle.enabled=true", "injection.enabled=false", "validation.enabled=false",
                   extra=False)
        self.assertIn("no webhook configuration to patch", str(e.exception))

    @unittest.skipUnless(os.environ.get("WEBHOOKD"), "WEBHOOKD is not set (run through ctest)")
    def test_webhookd_with_the_charts_args_patches_them(self):
        sys.path.insert(0, HERE)
        import whtest
        # secret mode without certificates.caBundle: the configurations carry no CA until webhookd's.
        objs = render("certificates.mode=secret", "certificates.existingSecret=mine",
                      "certificates.patchCABundle.enabled=true", extra=False)
        configs = [o for (k, _), o in objs.items() if k.endswith("WebhookConfiguration")]
        for o in configs:
            for wh in o["webhooks"]:
                self.assertNotIn("caBundle", wh["clientConfig"])
        d = tempfile.mkdtemp(prefix="wh-chart-patch-")
        api = kubetest.FakeApi()
        try:
            api.load(configs)
            cert, key, _ = whtest.self_signed(d, name="wh-webhookd.istio-system.svc")
            # The chart's args, with the test's files, port and API server.
            args = [a for a in self.args(objs) if not a.startswith(("--listen", "--threads", "--tls-", "--shutdown-delay"))]
            args += ["--tls-cert-file=" + cert, "--tls-key-file=" + key, "--kubeconfig=" + api.kubeconfig()]
            with whtest.Server(*args) as srv:
                srv.wait_log("caBundle patched", timeout=20)
                with open(cert, "rb") as f:
                    pem = f.read()
                state = [o for o in api.state() if o["kind"].endswith("WebhookConfiguration")]
                self.assertEqual(len(state), len(configs))
                for o in state:
                    for wh in o["webhooks"]:
                        self.assertEqual(base64.b64decode(wh["clientConfig"].get("caBundle", "")), pem,
                                         o["metadata"]["name"] + "/" + wh["name"])
        finally:
            api.close()
            shutil.rmtree(d, ignore_errors=True)


class TestClusterMode(unittest.TestCase):
    """values `cluster`: webhookd reads revisions from istiod's ConfigMaps by default, and RBAC is
    get/list/watch on exactly what it then reads."""

    def rules(self, objs, kind="ClusterRole"):
        return sorted((tuple(r["apiGroups"]), tuple(r["resources"]), tuple(r["verbs"]))
                      for r in objs[(kind, "wh-webhookd")]["rules"] or []
                      if "admissionregistration.k8s.io" not in r["apiGroups"])

    def args(self, objs):
        return objs[("Deployment", "wh-webhookd")]["spec"]["template"]["spec"]["containers"][0]["args"]

    def test_default_is_cluster_mode(self):
        objs = render(extra=False)
        args = self.args(objs)
        self.assertIn("--revisions-source=cluster", args)
        self.assertIn("--istio-namespace=istio-system", args)
        self.assertIn("--native-sidecars=auto", args)
        rwl = ("get", "list", "watch")
        # namespaces: any revision read from the cluster may run on OpenShift (values.global.platform)
        self.assertEqual(self.rules(objs), [(("",), ("namespaces",), rwl), (("",), ("nodes",), rwl),
                                            (("networking.istio.io",), ("proxyconfigs",), rwl)])
        role = objs[("Role", "wh-webhookd")]
        self.assertEqual(role["metadata"]["namespace"], "istio-system")
        self.assertEqual(self.rules(objs, "Role"), [(("",), ("configmaps",), rwl)])
        self.assertEqual(objs[("RoleBinding", "wh-webhookd")]["metadata"]["namespace"], "istio-system")

    def test_reads_only_what_is_configured(self):
        objs = render("cluster.revisionsSource=builtin", "cluster.nativeSidecars=false", extra=False)
        self.assertIn("--revisions-source=builtin", self.args(objs))
        self.assertFalse([a for a in self.args(objs) if a.startswith("--istio-namespace")])
        self.assertEqual(self.rules(objs), [])
        self.assertNotIn(("Role", "wh-webhookd"), objs)
        objs = render("cluster.istioNamespace=istio-control", "cluster.platform=openshift", extra=False)
        self.assertIn("--platform=openshift", self.args(objs))
        self.assertIn((("",), ("namespaces",), ("get", "list", "watch")), self.rules(objs))
        self.assertEqual(objs[("Role", "wh-webhookd")]["metadata"]["namespace"], "istio-control")


if __name__ == "__main__":
    unittest.main(verbosity=2)
