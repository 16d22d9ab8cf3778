#!/usr/bin/env python3
"""The canary upgrade end to end on the simulated cluster (sim.py): istiod's revisions A (1-26,
Istio 1.26.0) and B (1-29, Istio 1.29.0) as ConfigMaps, the chart installed with the README's
values, webhookd run as the Deployment says, pods and Istio config created through kube-apiserver's
admission chain, and the README's commands (webhookctl tag, kubectl label) moving the upgrade on.
Every step asserts the pods and objects the API server holds.

  TestCanaryUpgrade   README "Canary upgrade with tags", step by step, to `helm uninstall`
  TestNeverInjectsItself  enableNamespacesByDefault: webhookd's own pods are never injected and
                      webhookd restarts under failurePolicy Fail
  TestApiServerOutage webhookd cut off from the API server: injection goes on, and a container
                      restarted meanwhile serves the snapshot of cluster.snapshot (without it: unready)
  TestIstiodHandover  a revision moved from istiod's injector to webhookd and back, tag included
  TestRollingUpdate   a rolling update of webhookd under steady pod creation (failurePolicy
                      Fail) loses no create: the chart's shutdown delay outlasts the endpoints lag
  TestClientCertificates  the chart's certificates.clientCA: the API server presents the client
                      certificate its admission configuration names for webhookd's Service; a
                      rotated client CA Secret reaches webhookd without a restart
"""
import base64
import json
import os
import shutil
import sys
import tempfile
import threading
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import scenario  # noqa: E402
import sim  # noqa: E402

A, A_RELEASE = "1-26", "1.26.0"
B, B_RELEASE = "1-29", "1.29.0"

if not sim.helmtest.tools_present():
    sys.exit(sim.helmtest.MISSING)
if not (sim.WEBHOOKD and sim.WEBHOOKCTL):
    sys.exit("WEBHOOKD and WEBHOOKCTL must be set (run through ctest)")


def invalid_dr(name, labels=None, duplicate_subsets=True):
    spec = {"host": "reviews.app.svc.cluster.local"}
    if duplicate_subsets:
        spec["subsets"] = [{"name": "v1", "labels": {"version": "v1"}}, {"name": "v1", "labels": {"version": "v2"}}]
    else:
        spec["exportTo"] = ["./bad namespace"]
    return {"apiVersion": "networking.istio.io/v1", "kind": "DestinationRule",
            "metadata": {"name": name, "labels": labels or {}}, "spec": spec}


def valid_dr(name, labels=None):
    return {"apiVersion": "networking.istio.io/v1", "kind": "DestinationRule",
            "metadata": {"name": name, "labels": labels or {}},
            "spec": {"host": "reviews.app.svc.cluster.local", "exportTo": ["."],
                     "subsets": [{"name": "v1", "labels": {"version": "v1"}}]}}


class Base(unittest.TestCase):
    maxDiff = None

    def setUp(self):
        self.c = sim.Cluster()
        self.addCleanup(self.c.close)

    def ok(self, out, what):
        code, stdout, stderr = out
        self.assertEqual(code, 0, "%s: %s%s" % (what, stdout, stderr))
        return stdout

    def ns(self, name, **labels):
        self.c.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
        if labels:  # the README's command
            self.ok(scenario.kubectl(self.c, "label", "namespace", name, *["%s=%s" % kv for kv in labels.items()]),
                    "kubectl label namespace " + name)

    def pod(self, namespace, release=A_RELEASE):
        return self.c.create(scenario.app_pod(release, namespace), namespace)

    def assert_injected(self, pod, release, revision):
        self.assertTrue(scenario.has_sidecar(pod), "%s: no sidecar" % pod["metadata"]["name"])
        self.assertIsNone(scenario.injection_diff(pod, release, revision),
                          "%s is not %s's golden for revision %s" % (pod["metadata"]["name"], release, revision))
        stored = self.c.get("v1", "Pod", pod["metadata"]["name"], pod["metadata"]["namespace"])
        self.assertEqual(stored, pod)

    def denied(self, obj, namespace, webhook, text):
        with self.assertRaises(sim.ApiError) as e:
            self.c.create(obj, namespace)
        msg = e.exception.status.get("message", "")
        self.assertTrue(msg.startswith('admission webhook "%s" denied the request: ' % webhook), msg)
        self.assertIn(text, msg)

    def webhookd_pods(self):
        return self.c.list("v1", "Pod", "istio-system", selector="app.kubernetes.io/name=webhookd")

    def install_b_only(self, **values):
        """istiod's revision B's ConfigMaps, then the chart serving B alone; `values` replace top-level keys."""
        for cm in scenario.revision_configmaps(B, B_RELEASE):
            self.c.create(cm)
        vals = scenario.values("canary")
        vals["injection"]["revisions"] = [B]
        vals["revision"] = B
        vals.update(values)
        self.c.install(vals)
        self.c.sync()


class TestCanaryUpgrade(Base):
    def test_canary_upgrade(self):
        c = self.c
        # 1. istiod's revisions A and B (their ConfigMaps), then the chart: webhookd serves both.
        for cm in scenario.revision_configmaps(A, A_RELEASE) + scenario.revision_configmaps(B, B_RELEASE):
            c.create(cm)
        c.install(scenario.values("canary"))
        c.sync()
        pods = self.webhookd_pods()
        self.assertEqual(len(pods), 2)
        for p in pods:
            self.assertFalse(scenario.has_sidecar(p), "webhookd injected itself")
            self.assertEqual(p["metadata"]["labels"]["sidecar.istio.io/inject"], "false")
        eps = c.get("v1", "Endpoints", "webhookd", "istio-system")
        self.assertEqual(len(eps["subsets"]), 2)
        mwcs = {o["metadata"]["name"] for o in c.list("admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration")}
        self.assertEqual(mwcs, {"webhookd-sidecar-injector-%s-istio-system" % r for r in (A, B)})

        # 2. Before any tag: objects labelled for A are validated by the chart's validator; unlabelled
        #    ones are not validated by anyone yet.
        self.ns("app")
        self.denied(invalid_dr("dr-a", {"istio.io/rev": A}), "app", "rev.validation.istio.io", "duplicate subset")
        c.create(invalid_dr("unchecked"), "app")

        # 3. Tags default and prod point at A; namespaces by legacy label, revision and tag.
        self.ok(c.ctl("tag", "set", "default", "--revision", A, "-y"), "tag set default")
        self.ok(c.ctl("tag", "set", "prod", "--revision", A, "-y"), "tag set prod")
        self.ns("legacy", **{"istio-injection": "enabled"})
        self.ns("rev-a", **{"istio.io/rev": A})
        self.ns("tagged", **{"istio.io/rev": "prod"})
        for ns in ("legacy", "rev-a", "tagged"):
            self.assert_injected(self.pod(ns), A_RELEASE, A)
        self.assertFalse(scenario.has_sidecar(self.pod("app")))
        out = self.ok(c.ctl("check"), "webhookctl check")
        self.assertNotIn("[fail]", out)
        calls = [x["webhook"] for x in c.admission_calls() if x["namespace"] == "legacy" and x["kind"] == "Pod"]
        self.assertEqual(calls, ["namespace.sidecar-injector.istio.io"])

        # 4. Validation for unlabelled objects now (istiod-default-validator of the default tag).
        self.denied(invalid_dr("dr-dup"), "app", "validation.istio.io", "duplicate subset")
        self.denied(invalid_dr("dr-export", duplicate_subsets=False), "app", "validation.istio.io", "exportTo")
        c.create(valid_dr("dr-ok"), "app")

        # 5. The upgrade: default moves to B.  New pods of istio-injection=enabled namespaces get B's
        #    sidecar; pods already running keep A's; namespaces on A or on prod stay on A.
        before = c.get("v1", "Pod", self.c.list("v1", "Pod", "legacy")[0]["metadata"]["name"], "legacy")
        self.ok(c.ctl("tag", "set", "default", "--revision", B, "--overwrite", "-y"), "tag set default B")
        self.assert_injected(self.pod("legacy", B_RELEASE), B_RELEASE, B)
        self.assert_injected(self.pod("rev-a"), A_RELEASE, A)
        self.assert_injected(self.pod("tagged"), A_RELEASE, A)
        self.assertEqual(c.get("v1", "Pod", before["metadata"]["name"], "legacy"), before)
        vwc = c.get("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", "istiod-default-validator")
        self.assertEqual(vwc["metadata"]["labels"]["istio.io/rev"], B)
        self.denied(invalid_dr("dr-dup2"), "app", "validation.istio.io", "duplicate subset")

        # 6. prod moves to B too, then is removed: its namespace is no longer injected.
        self.ok(c.ctl("tag", "set", "prod", "--revision", B, "--overwrite", "-y"), "tag set prod B")
        self.assert_injected(self.pod("tagged", B_RELEASE), B_RELEASE, B)
        out = self.ok(c.ctl("tag", "remove", "prod", "-y"), "tag remove prod")
        self.assertIn("Revision tag prod removed", out)
        self.assertFalse(scenario.has_sidecar(self.pod("tagged")))
        self.assertIsNone(c.get("v1", "Service", "istiod-revision-tag-prod", "istio-system"))

        # 7. Revision A is removed (its ConfigMaps) while B keeps serving: webhookctl refuses while pods
        #    still run A's proxy, then moves rev-a to B.
        code, out, err = c.ctl("revision", "remove", A, "-y")
        self.assertEqual(code, 1, out + err)
        self.assertIn('cannot remove revision "%s": it is still in use by' % A, err)
        self.assertIn("  namespace rev-a (istio.io/rev=%s)" % A, err)
        out = self.ok(c.ctl("revision", "migrate", "--to", B, "-n", "rev-a", "-y"), "revision migrate rev-a")
        self.assertIn("namespace rev-a relabelled: istio.io/rev=%s" % B, out)
        self.ok(scenario.kubectl(c, "-n", "istio-system", "delete", "configmap", "istio-sidecar-injector-" + A,
                                 "istio-" + A), "kubectl delete configmap")
        c.resync_volumes()
        probe = scenario.app_pod(A_RELEASE, "probe")
        probe["metadata"]["labels"]["istio.io/rev"] = A  # selected by A's injector (rev.object.)
        deadline = time.time() + sim.whtest.scaled(20)
        while True:  # until webhookd has noticed that A's files are gone
            try:
                c.create(probe, "app")
            except sim.ApiError as e:
                msg = e.status.get("message", "")
                break
            self.assertLess(time.time(), deadline, "revision %s still served after its ConfigMaps went" % A)
            time.sleep(0.2)
        self.assertIn('"rev.object.sidecar-injector.istio.io"', msg)
        self.assertIn(A, msg)
        self.assert_injected(self.pod("legacy", B_RELEASE), B_RELEASE, B)
        self.assert_injected(self.pod("rev-a", B_RELEASE), B_RELEASE, B)

        # 8. helm uninstall with the default tag left behind: webhookctl check names the dangling tag;
        #    removing it leaves nothing webhookd or webhookctl created.
        c.uninstall()
        code, out, err = c.ctl("check")
        self.assertEqual(code, 1, out + err)
        self.assertIn("istio-revision-tag-default", out)
        self.ok(c.ctl("tag", "remove", "default", "-y"), "tag remove default")
        left = [(o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]) for o in c.state()
                if o["kind"] in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration", "Endpoints",
                                 "Deployment", "Secret", "ServiceAccount", "ClusterRole", "ClusterRoleBinding",
                                 "Role", "RoleBinding", "PodDisruptionBudget", "Service")
                or (o["kind"] == "Pod" and o["metadata"]["namespace"] == "istio-system")]
        self.assertEqual(left, [])
        self.assertEqual(c.pods, {})


class TestNeverInjectsItself(Base):
    def test_enable_namespaces_by_default(self):
        """The chart's default revision with enableNamespacesByDefault, webhookd in a namespace of its
        own without labels: every other namespace is injected, webhookd's pods never, and webhookd
        comes back after all its pods are gone (failurePolicy Fail)."""
        c = self.c
        c.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "webhookd"}})
        for cm in scenario.revision_configmaps("default", B_RELEASE, namespace="webhookd"):
            c.create(cm)
        vals = scenario.values("namespaces-by-default")
        c.install(vals, namespace="webhookd")
        c.sync()
        self.ns("app")
        pod = self.pod("app", B_RELEASE)
        self.assertTrue(scenario.has_sidecar(pod))
        for p in c.list("v1", "Pod", "webhookd"):
            self.assertFalse(scenario.has_sidecar(p), "webhookd injected itself")
        # Every webhookd replica gone at once (a node failure), then back.
        for name in list(c.pods):
            c._stop_pod(name, remove_endpoint=True)
        with self.assertRaises(sim.ApiError) as e:
            self.pod("app", B_RELEASE)
        self.assertIn('no endpoints available for service "webhookd"', e.exception.status["message"])
        c.sync()
        self.assertEqual(len(c.list("v1", "Pod", "webhookd")), 2)
        self.assertTrue(scenario.has_sidecar(self.pod("app", B_RELEASE)))


class TestApiServerOutage(Base):
    """webhookd cut off from the API server (its reads answered 503, its watches cut) while the API
    server still calls its webhooks: injection goes on from what webhookd last saw, and a webhookd
    container restarted meanwhile serves the snapshot its previous run kept in the chart's emptyDir
    (cluster.snapshot).  Without the snapshot (the control) a restarted replica stays unready, and
    once every replica restarted, pods the webhooks select are refused (failurePolicy Fail)."""
    READS = ("/api/v1/namespaces/istio-system/configmaps", "/apis/networking.istio.io/", "/api/v1/nodes")

    def run_outage(self, snapshot):
        c = self.c
        self.install_b_only(cluster={"snapshot": {"enabled": snapshot}})
        self.ns("app", **{"istio.io/rev": B})
        self.assert_injected(self.pod("app", B_RELEASE), B_RELEASE, B)
        c.api.faults([{"path_contains": p, "action": "status", "status": 503, "count": 10 ** 6} for p in self.READS])
        c.api.control("watch/cut", {})
        self.assert_injected(self.pod("app", B_RELEASE), B_RELEASE, B)
        return [c.restart_container(name) for name in sorted(c.pods)]

    def test_restart_serves_the_snapshot(self):
        self.assertEqual(self.run_outage(snapshot=True), [True, True])
        self.assert_injected(self.pod("app", B_RELEASE), B_RELEASE, B)

    def test_restart_without_snapshot_refuses_pods(self):
        self.assertEqual(self.run_outage(snapshot=False), [False, False])
        with self.assertRaises(sim.ApiError) as e:
            self.pod("app", B_RELEASE)
        self.assertIn('no endpoints available for service "webhookd"', e.exception.status["message"])


class TestIstiodHandover(Base):
    """README "Move a revision from istiod's injector to webhookd and back": revision 1-29 served by
    istiod's own injector (istio-sidecar-injector-1-29 calling Service istiod-1-29, here answered by a
    webhookd standing in for that istiod), handed to webhookd with no pod created without its sidecar
    or with two, and back; the tag follows each time."""

    def injector_of(self, pod):
        calls = [x for x in self.c.admission_calls() if x["kind"] == "Pod" and x.get("patched")]
        return calls[-1]["config"] if calls else None

    def one_sidecar(self, pod):
        names = [c["name"] for c in (pod["spec"].get("initContainers") or []) + pod["spec"]["containers"]]
        self.assertEqual(names.count("istio-proxy"), 1, names)

    def test_handover_and_back(self):
        c = self.c
        for cm in scenario.revision_configmaps(B, B_RELEASE):
            c.create(cm)
        # istiod-1-29, as its chart installs it: Service, injector configuration (the stand-in serves /inject).
        d = os.path.join(c.dir, "istiod")
        os.makedirs(os.path.join(d, "revs", "default"))
        for cm in scenario.revision_configmaps(B, B_RELEASE):
            for k, v in cm["data"].items():
                with open(os.path.join(d, "revs", "default", k), "w") as f:
                    f.write(v)
        cert, key, _ = sim.whtest.self_signed(d, name="istiod-1-29.istio-system.svc")
        os.rename(cert, os.path.join(d, "tls.crt"))
        os.rename(key, os.path.join(d, "tls.key"))
        istiod = sim.whtest.Server("--tls-cert-file=" + os.path.join(d, "tls.crt"),
                                   "--tls-key-file=" + os.path.join(d, "tls.key"),
                                   "--revisions-dir=" + os.path.join(d, "revs"))
        istiod.start()
        self.addCleanup(istiod.__exit__, None, None, None)
        with open(os.path.join(d, "tls.crt"), "rb") as f:
            ca = sim.base64.b64encode(f.read()).decode()
        c.create({"apiVersion": "v1", "kind": "Service",
                  "metadata": {"name": "istiod-1-29", "namespace": "istio-system",
                               "labels": {"app": "istiod", "istio.io/rev": B}},
                  "spec": {"selector": {"app": "istiod", "istio.io/rev": B},
                           "ports": [{"name": "https-webhook", "port": 443, "targetPort": 15017}]}})
        c.create({"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "istiod-1-29", "namespace": "istio-system"},
                  "subsets": [{"addresses": [{"ip": "127.0.0.1"}],
                               "ports": [{"name": "https-webhook", "port": istiod.port}]}]})
        hooks = []
        for prefix, nsx, objx in (
                ("rev.namespace.", [{"key": "istio.io/rev", "operator": "In", "values": [B]},
                                    {"key": "istio-injection", "operator": "DoesNotExist"}],
                 [{"key": "sidecar.istio.io/inject", "operator": "NotIn", "values": ["false"]}]),
                ("rev.object.", [{"key": "istio.io/rev", "operator": "DoesNotExist"},
                                 {"key": "istio-injection", "operator": "DoesNotExist"}],
                 [{"key": "sidecar.istio.io/inject", "operator": "NotIn", "values": ["false"]},
                  {"key": "istio.io/rev", "operator": "In", "values": [B]}])):
            hooks.append({"name": prefix + "sidecar-injector.istio.io", "sideEffects": "None",
                          "admissionReviewVersions": ["v1"], "failurePolicy": "Fail",
                          "clientConfig": {"service": {"name": "istiod-1-29", "namespace": "istio-system",
                                                       "path": "/inject"}, "caBundle": ca},
                          "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"],
                                     "resources": ["pods"]}],
                          "namespaceSelector": {"matchExpressions": nsx}, "objectSelector": {"matchExpressions": objx}})
        c.create({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
                  "metadata": {"name": "istio-sidecar-injector-1-29",
                               "labels": {"istio.io/rev": B, "app": "sidecar-injector"}}, "webhooks": hooks})
        self.ns("demo", **{"istio.io/rev": "prod"})
        self.ok(c.ctl("tag", "set", "prod", "--revision", B, "-y"), "tag set prod")
        pod = self.pod("demo", B_RELEASE)
        self.one_sidecar(pod)
        self.assertEqual(self.injector_of(pod), "istio-revision-tag-prod")
        tag = c.get("admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration", "istio-revision-tag-prod")
        self.assertEqual(tag["webhooks"][0]["clientConfig"]["service"]["name"], "istiod-1-29")

        # To webhookd: save istiod's injector, install webhookd for the revision, delete istiod's.
        code, saved, err = scenario.kubectl(c, "get", "mutatingwebhookconfiguration", "istio-sidecar-injector-1-29",
                                            "-o", "yaml")
        self.assertEqual(code, 0, err)
        vals = scenario.values("canary")
        vals.update(revision=B, injection={"revisions": [B], "defaultRevision": False})
        c.install(vals)
        c.sync()
        # Both injectors select namespaces labelled with the revision itself meanwhile: the first (in
        # name order) injects, the second sees the sidecar.istio.io/status annotation and skips.
        self.ns("direct", **{"istio.io/rev": B})
        pod = self.pod("direct", B_RELEASE)
        self.one_sidecar(pod)
        code, out, err = c.ctl("tag", "set", "prod", "--revision", B, "--overwrite", "-y")
        self.assertEqual(code, 1, out)
        self.assertIn('found multiple canonical webhooks or services with revision "%s"' % B, err)
        self.ok(scenario.kubectl(c, "delete", "mutatingwebhookconfiguration", "istio-sidecar-injector-1-29"),
                "kubectl delete istiod's injector")
        self.ok(c.ctl("tag", "set", "prod", "--revision", B, "--overwrite", "-y"), "tag set prod to webhookd")
        tag = c.get("admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration", "istio-revision-tag-prod")
        self.assertEqual(tag["webhooks"][0]["clientConfig"]["service"],
                         {"name": "webhookd", "namespace": "istio-system", "path": "/inject/rev/" + B, "port": 443})
        pod = self.pod("demo", B_RELEASE)
        self.one_sidecar(pod)
        self.assertEqual(self.injector_of(pod), "istio-revision-tag-prod")
        served = [x for x in c.admission_calls() if x["kind"] == "Pod"][-1]
        self.assertTrue(served.get("patched"))
        self.assertIsNone(scenario.injection_diff(pod, B_RELEASE, B))
        code, out, err = c.ctl("check")
        self.assertEqual(code, 0, out + err)

        # And back: istiod's injector again, webhookd no longer serves the revision, the tag follows.
        self.ok(scenario.kubectl(c, "create", "-f", "-", stdin=saved), "kubectl create istiod's injector")
        vals.update(injection={"revisions": [], "defaultRevision": False})
        c.upgrade(vals)
        self.assertIsNone(c.get("admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration",
                                "webhookd-sidecar-injector-1-29-istio-system"))
        self.ok(c.ctl("tag", "set", "prod", "--revision", B, "--overwrite", "-y"), "tag set prod back to istiod")
        tag = c.get("admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration", "istio-revision-tag-prod")
        self.assertEqual(tag["webhooks"][0]["clientConfig"]["service"]["name"], "istiod-1-29")
        pod = self.pod("demo", B_RELEASE)
        self.one_sidecar(pod)


class TestRollingUpdate(Base):
    def rolling_update(self, shutdown_delay):
        """Roll webhookd while pods are created without pause; returns the create outcomes."""
        c = self.c
        self.install_b_only(**({} if shutdown_delay is None else {"server": {"shutdownDelay": shutdown_delay}}))
        self.ns("app", **{"istio.io/rev": B})
        results = []
        stop = threading.Event()

        def creator():
            while not stop.is_set():
                try:
                    results.append(("ok", scenario.has_sidecar(self.pod("app", B_RELEASE))))
                except sim.ApiError as e:
                    results.append(("error", e.status.get("message")))
                time.sleep(0.02)

        t = threading.Thread(target=creator)
        t.start()
        try:
            time.sleep(0.5)
            c.rollout()
            time.sleep(0.5)
        finally:
            stop.set()
            t.join(60)
        self.assertEqual(len(c.pods), 2)
        self.assertGreater(len(results), 20)
        return results

    def test_no_create_lost(self):
        """The chart's server.shutdownDelay (5s) outlasts the endpoints' lag (1s): nothing is lost."""
        results = self.rolling_update(None)
        self.assertEqual([r for r in results if r[0] != "ok"], [])
        self.assertTrue(all(r[1] for r in results), "a pod was created without its sidecar")

    def test_without_delay_creates_are_refused(self):
        """The control: without the delay the same rollout refuses pods (what the delay is for)."""
        results = self.rolling_update("")
        errors = [r[1] for r in results if r[0] != "ok"]
        self.assertTrue(errors, "no create failed without a shutdown delay: the test would not see a regression")
        for e in errors:
            self.assertIn('failed calling webhook "rev.namespace.sidecar-injector.istio.io"', e)

class TestClientCertificates(Base):
    def setUp(self):
        """The API server's credentials for webhooks (README "Client certificates"): a client CA,
        its certificate for kube-apiserver, a kubeconfig whose users entry is named after webhookd's
        Service, and the AdmissionConfiguration naming that kubeconfig for both webhook plugins."""
        d = tempfile.mkdtemp(prefix="wh-client-ca-")
        self.addCleanup(shutil.rmtree, d, True)
        for ca in ("apiserver-client-ca", "other-ca"):
            sim.kubetest.openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                                 "-days", "2", "-subj", "/CN=" + ca, "-keyout", ca + ".key", "-out", ca + ".crt",
                                 cwd=d)
        with open(os.path.join(d, "client.ext"), "w") as f:
            f.write("extendedKeyUsage=clientAuth\n")
        sim.kubetest.openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj",
                             "/CN=kube-apiserver", "-keyout", "apiserver.key", "-out", "apiserver.csr", cwd=d)
        sim.kubetest.openssl("x509", "-req", "-in", "apiserver.csr", "-CA", "apiserver-client-ca.crt", "-CAkey",
                             "apiserver-client-ca.key", "-CAcreateserial", "-days", "2", "-extfile", "client.ext",
                             "-out", "apiserver.crt", cwd=d)
        kubeconfig = os.path.join(d, "webhooks.kubeconfig")
        with open(kubeconfig, "w") as f:
            json.dump({"apiVersion": "v1", "kind": "Config", "users": [
                {"name": "webhookd.istio-system.svc", "user": {"client-certificate": "apiserver.crt",
                                                               "client-key": "apiserver.key"}}]}, f)
        admission = os.path.join(d, "admission.yaml")
        with open(admission, "w") as f:
            json.dump({"apiVersion": "apiserver.config.k8s.io/v1", "kind": "AdmissionConfiguration", "plugins": [
                {"name": plugin, "configuration": {"apiVersion": "apiserver.config.k8s.io/v1",
                                                   "kind": "WebhookAdmissionConfiguration",
                                                   "kubeConfigFile": kubeconfig}}
                for plugin in ("ValidatingAdmissionWebhook", "MutatingAdmissionWebhook")]}, f)
        self.pem = {}
        for ca in ("apiserver-client-ca", "other-ca"):
            with open(os.path.join(d, ca + ".crt"), "rb") as f:
                self.pem[ca] = base64.b64encode(f.read()).decode()
        self.c = sim.Cluster(api_args=("--admission-control-config-file", admission))
        self.addCleanup(self.c.close)

    def client_ca(self, ca):
        """Put `ca` in the Secret and let the kubelet's sync write it to the pods' volume."""
        self.c.request("PUT", sim.path_of("v1", "Secret", "istio-system", "apiserver-client-ca"),
                       {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "apiserver-client-ca",
                                                                          "namespace": "istio-system"},
                        "data": {"ca.crt": self.pem[ca]}})
        self.c.resync_volumes()

    def until_pod(self, refused, timeout=10):
        """Create pods until their admission is refused (or not) for the client certificate."""
        deadline = time.time() + sim.whtest.scaled(timeout)
        while True:
            try:
                pod = self.pod("app", B_RELEASE)
                if not refused:
                    return pod
            except sim.ApiError as e:
                msg = e.status.get("message", "")
                if refused and "client certificate refused" in msg:
                    return msg
                if not refused and "client certificate" not in msg:
                    raise
            if time.time() > deadline:
                self.fail("admission never %s" % ("refused" if refused else "accepted"))
            time.sleep(0.2)

    def test_api_server_presents_its_client_certificate(self):
        c = self.c
        c.create({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "apiserver-client-ca"},
                  "data": {"ca.crt": self.pem["apiserver-client-ca"]}}, "istio-system")
        for cm in scenario.revision_configmaps("default", B_RELEASE):
            c.create(cm)
        c.install(scenario.values("client-ca"))
        c.sync()
        self.ns("app", **{"istio-injection": "enabled"})
        self.assertTrue(scenario.has_sidecar(self.pod("app", B_RELEASE)))
        self.denied(invalid_dr("dup", {"istio.io/rev": "default"}), "app", "rev.validation.istio.io",
                    "duplicate subset")
        # Anyone else, at the pods' own port: refused without the certificate.
        port = next(iter(c.pods.values()))["server"].port
        self.assertEqual(sim.whtest.once(port, "POST", "/inject", b"{}")[0], 403)
        self.assertEqual(sim.whtest.once(port, "GET", "/readyz")[0], 200)
        # The Secret rotated to a CA that did not sign the API server's certificate: webhookd
        # picks it up without a restart and refuses the API server (failurePolicy Fail) ...
        pods = set(c.pods)
        self.client_ca("other-ca")
        msg = self.until_pod(refused=True)
        self.assertIn('failed calling webhook "', msg)
        # ... and back.
        self.client_ca("apiserver-client-ca")
        self.assertTrue(scenario.has_sidecar(self.until_pod(refused=False)))
        self.assertEqual(set(c.pods), pods)  # no restart


if __name__ == "__main__":
    unittest.main(verbosity=2)
