#!/usr/bin/env python3
"""The Helm chart (charts/webhookd), rendered offline by chart/render.go
(Go text/template + Sprig + Helm's functions) in each certificate mode: the
objects exist and fit together, the generated certificate is valid for the
service, and the webhook-configuration helpers give the right caBundle."""
import base64
import os
import shutil
import subprocess
import tempfile
import unittest

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
CHART = os.path.join(HERE, "..", "..", "charts", "webhookd")
GO = os.environ.get("WH_GO", "/usr/lib/go-1.19/bin/go")


RENDER = os.path.join(tempfile.mkdtemp(prefix="wh-chart-"), "render")


def build_renderer():
    env = dict(os.environ, GOPATH="/usr/share/gocode", GO111MODULE="off",
               GOCACHE=os.path.join(tempfile.gettempdir(), "wh-gocache"))
    subprocess.run([GO, "build", "-o", RENDER, os.path.join(HERE, "chart", "render.go")], env=env, check=True)


def render(*sets, extra=True):
    env = dict(os.environ)
    if extra:
        env["RENDER_EXTRA"] = os.path.join(HERE, "chart", "webhook-config.yaml")
    out = subprocess.run([RENDER, CHART, "wh", "istio-system"] + list(sets), capture_output=True, text=True, env=env)
    if out.returncode != 0:
        raise RuntimeError(out.stderr)
    docs = [d for d in yaml.safe_load_all(out.stdout) if d]
    return {(d["kind"], d["metadata"]["name"]): d for d in docs}


def openssl(*args, data=None):
    return subprocess.run(["openssl"] + list(args), input=data, capture_output=True, text=True)


@unittest.skipUnless(os.access(GO, os.X_OK), "Go 1.19 is not installed (scripts/deps.sh test installs it)")
class TestChart(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        build_renderer()

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(os.path.dirname(RENDER), ignore_errors=True)

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


if __name__ == "__main__":
    unittest.main(verbosity=2)
