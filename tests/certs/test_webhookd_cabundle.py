#!/usr/bin/env python3
"""webhookd --patch-ca-bundle: the real binary over real TLS against the fake
API server of tests/kube (fakeapi.py).

Every check that a caBundle is "right" also proves it: the bundle read back
from the API server must verify webhookd's served certificate for the
Service name, as the kube-apiserver would.

Each TestCase class is one ctest test (see CMakeLists.txt); $WEBHOOKD is the
binary, $WH_TEST_WRAPPER/$WH_TEST_SLOW as in tests/integration/whtest.py.
"""
import base64
import json
import os
import shutil
import signal
import ssl
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "kube"))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
import kubetest  # noqa: E402
from kubetest import webhook, webhook_config as config  # noqa: E402
import whtest  # noqa: E402
from whtest import scaled  # noqa: E402

ADM = "/apis/admissionregistration.k8s.io/v1/"
SERVICE = "istio-system/webhookd"
OTHER_BUNDLE = base64.b64encode(b"not ours").decode()


def fixtures(stale=None):
    """Our two configurations (one webhook of another service inside), plus one outside the selection."""
    return [
        config("MutatingWebhookConfiguration", "webhookd-inject", {"app": "webhookd"},
               [webhook("rev-a.sidecar-injector.istio.io", "istio-system", "webhookd", stale),
                webhook("other.example.com", "other", "svc", OTHER_BUNDLE)]),
        config("ValidatingWebhookConfiguration", "webhookd-validate", {"app": "webhookd"},
               [webhook("validation.istio.io", "istio-system", "webhookd", stale)]),
        config("MutatingWebhookConfiguration", "unrelated", {"app": "else"},
               [webhook("x.example.com", "istio-system", "webhookd")]),
    ]


def openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def make_ca(d, name):
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2",
            "-subj", "/CN=%s" % name, "-addext", "basicConstraints=critical,CA:TRUE",
            "-keyout", name + ".key", "-out", name + ".crt", cwd=d)


def make_leaf(d, ca, out):
    """A leaf for localhost/127.0.0.1 signed by `ca`: writes out.crt and out.key in d."""
    with open(os.path.join(d, "leaf.ext"), "w") as f:
        f.write("subjectAltName=DNS:localhost,DNS:webhookd.istio-system.svc,IP:127.0.0.1\n")
    openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj", "/CN=webhookd",
            "-keyout", out + ".key", "-out", out + ".csr", cwd=d)
    openssl("x509", "-req", "-in", out + ".csr", "-CA", ca + ".crt", "-CAkey", ca + ".key", "-CAcreateserial",
            "-days", "2", "-extfile", "leaf.ext", "-out", out + ".crt", cwd=d)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def write_atomically(path, data):
    with open(path + ".new", "wb") as f:
        f.write(data)
    os.rename(path + ".new", path)


def install(d, certs, ca, leaf):
    """cert-manager's Secret volume in `certs`: ca.crt, tls.key and tls.crt side by side, from CA `ca` and its
    leaf `leaf` made in `d` (the certificate last, as a reloader would see it)."""
    write_atomically(os.path.join(certs, "ca.crt"), read(os.path.join(d, ca + ".crt")))
    write_atomically(os.path.join(certs, "tls.key"), read(os.path.join(d, leaf + ".key")))
    write_atomically(os.path.join(certs, "tls.crt"), read(os.path.join(d, leaf + ".crt")))


class Cluster:
    """A fakeapi with the fixtures, and direct access as another client."""

    def __init__(self, auth=None):
        self.api = kubetest.FakeApi(auth=auth)
        self.kubeconfig = self.api.kubeconfig()
        self.api.load(fixtures())

    def close(self):
        self.api.close()

    def objects(self):
        return {(o["kind"], o["metadata"]["name"]): o for o in self.api.state()}

    def bundle(self, kind, name, index=0):
        o = self.objects().get((kind, name))
        return o["webhooks"][index]["clientConfig"].get("caBundle") if o else None

    def ours(self):
        """The caBundles of our three webhooks (two configurations)."""
        return [self.bundle("MutatingWebhookConfiguration", "webhookd-inject"),
                self.bundle("ValidatingWebhookConfiguration", "webhookd-validate")]

    def request(self, method, path, body=None):
        ctx = ssl.create_default_context(cafile=self.api.path("ca.crt"))
        req = urllib.request.Request(self.api.server + path, method=method,
                                     data=json.dumps(body).encode() if body is not None else None,
                                     headers={"Authorization": "Bearer tok-admin",
                                              "Content-Type": "application/json"})
        with urllib.request.urlopen(req, context=ctx, timeout=10) as r:
            return json.loads(r.read())

    def overwrite(self, plural, name, bundle):
        """Someone else (a chart upgrade, a CA injector) writes the caBundle of our webhooks."""
        obj = self.request("GET", ADM + plural + "/" + name)
        for wh in obj["webhooks"]:
            if wh["clientConfig"].get("service", {}).get("name") == "webhookd":
                wh["clientConfig"]["caBundle"] = bundle
        self.request("PUT", ADM + plural + "/" + name + "?fieldManager=someone-else", obj)

    def writes(self):
        return [e for e in self.api.log() if e.get("method") in ("PUT", "PATCH", "POST")]


def patch_args(cluster, *extra):
    # The caBundle patcher alone: /inject reads nothing from this API server (cluster mode would keep
    # /readyz at 503 until its first sync, see tests/kube/test_cluster.py).
    return ["--patch-ca-bundle", "--kubeconfig", cluster.kubeconfig, "--ca-bundle-mutating", "webhookd-inject",
            "--ca-bundle-validating", "webhookd-validate", "--ca-bundle-service", SERVICE,
            "--ca-bundle-check-interval", "2s", "--kube-timeout", "2s", "--revisions-source", "builtin",
            "--native-sidecars", "false", *extra]


def wait_until(what, fn, timeout=15):
    deadline = time.time() + scaled(timeout)
    while time.time() < deadline:
        value = fn()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError("timed out waiting for " + what)


def logs(server, msg, **fields):
    return [r for r in server.records() if r.get("msg") == msg and
            all(r.get(k) == v for k, v in fields.items())]


class Base(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="cabundle-")
        self.cluster = Cluster()

    def tearDown(self):
        self.cluster.close()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def assertTrusted(self, server, bundle_b64):
        """The bundle lets a verifying client (as the API server) reach webhookd by its Service name."""
        self.assertIsNotNone(bundle_b64)
        ctx = ssl.create_default_context(cadata=base64.b64decode(bundle_b64).decode())
        ctx.set_alpn_protocols(["http/1.1"])
        raw = whtest.socket.create_connection(("127.0.0.1", server.port), timeout=scaled(10))
        with ctx.wrap_socket(raw, server_hostname="localhost") as s:
            status, _, _ = whtest.request(s, "GET", "/healthz")
        self.assertEqual(status, 200)

    def assertUntouched(self):
        c = self.cluster
        self.assertEqual(c.bundle("MutatingWebhookConfiguration", "webhookd-inject", 1), OTHER_BUNDLE,
                         "a webhook of another service must keep its caBundle")
        self.assertIsNone(c.bundle("MutatingWebhookConfiguration", "unrelated"),
                          "a configuration that is not selected must not be written")

    def readyz(self, server):
        status, _, body = whtest.once(server.port, "GET", "/readyz")
        return status, body.decode()


class TestCABundleSelfSigned(Base):
    def test_startup_patch_drift_repair_and_sighup(self):
        c = self.cluster
        with whtest.Server(*patch_args(c, "--tls-san", "webhookd.istio-system.svc")) as srv:
            rec = srv.wait_log("caBundle patched", timeout=20)
            self.assertEqual(rec["trigger"], "startup")
            self.assertEqual(rec["webhooks_updated"], "2")
            first = c.ours()
            self.assertEqual(first[0], first[1])
            self.assertTrusted(srv, first[0])
            self.assertUntouched()
            status, body = self.readyz(srv)
            self.assertEqual(status, 200)
            self.assertIn("[+]cabundle: ok at ", body)
            self.assertEqual(whtest.metric(srv, "webhookd_cabundle_patch_total", '{result="updated"}'), 1)

            # Drift checks of a right configuration write nothing.
            writes = len(c.writes())
            wait_until("two drift checks", lambda: whtest.metric(
                srv, "webhookd_cabundle_patch_total", '{result="unchanged"}') >= 2)
            self.assertEqual(len(c.writes()), writes, "an up-to-date configuration must not be written")

            # Someone overwrites it: repaired by the next drift check.
            c.overwrite("mutatingwebhookconfigurations", "webhookd-inject", OTHER_BUNDLE)
            wait_until("drift repaired", lambda: c.ours()[0] == first[0])
            wait_until("drift repair log", lambda: logs(srv, "caBundle patched", trigger="drift check"))
            # ... only our webhook: the other one keeps what was written.
            self.assertEqual(c.bundle("MutatingWebhookConfiguration", "webhookd-inject", 1), OTHER_BUNDLE)

            # SIGHUP re-checks at once (the self-signed certificate stays).
            c.overwrite("validatingwebhookconfigurations", "webhookd-validate", OTHER_BUNDLE)
            n = len(logs(srv, "caBundle patched", trigger="SIGHUP"))
            srv.proc.send_signal(signal.SIGHUP)
            wait_until("SIGHUP patch", lambda: len(logs(srv, "caBundle patched", trigger="SIGHUP")) > n)
            self.assertEqual(c.ours(), first)
            self.assertTrusted(srv, first[1])

    def test_selector_and_kube_calls_off_the_event_loops(self):
        c = self.cluster
        # Every API request takes `delay` seconds, requests to webhookd must not wait for them: a review that waited
        # for one takes at least `delay`, over the limit of 3/4 of it in every build (the delay grows with the slower
        # builds, up to 3x: valgrind's reviews take well under a second too).
        delay = 2.0 * min(whtest.SLOW, 3.0)
        c.api.faults([{"action": "delay", "delay_ms": int(delay * 1000), "count": 1000}])
        args = ["--patch-ca-bundle", "--kubeconfig", c.kubeconfig, "--ca-bundle-selector", "app=webhookd",
                "--ca-bundle-service", SERVICE, "--ca-bundle-check-interval", "1s",
                "--kube-timeout", "%ds" % (delay + 3)]
        with whtest.Server(*args, threads=1) as srv:
            t0 = time.time()
            worst = 0
            while not logs(srv, "caBundle patched") and time.time() - t0 < scaled(30):
                s = time.time()
                status, _, _ = whtest.once(srv.port, "POST", "/validate", whtest.review())
                self.assertEqual(status, 200)
                worst = max(worst, time.time() - s)
            self.assertTrue(logs(srv, "caBundle patched"), srv.log())
            self.assertLess(worst, 0.75 * delay, "a review waited for the API server")
            self.assertTrusted(srv, c.ours()[0])
            self.assertEqual(c.ours()[0], c.ours()[1])
            self.assertUntouched()


class TestCABundleFiles(Base):
    def test_cert_manager_layout_rotation_and_ca_file(self):
        d, c = self.tmp, self.cluster
        make_ca(d, "ca1")
        make_leaf(d, "ca1", "leaf1")
        # cert-manager's Secret volume: tls.crt, tls.key and ca.crt side by side.
        certs = os.path.join(d, "certs")
        os.mkdir(certs)
        install(d, certs, "ca1", "leaf1")
        args = patch_args(c, "--tls-cert-file", os.path.join(certs, "tls.crt"),
                          "--tls-key-file", os.path.join(certs, "tls.key"), "--cert-check-interval", "100ms")
        with whtest.Server(*args) as srv:
            srv.wait_log("caBundle patched", timeout=20)
            ca1 = base64.b64encode(read(os.path.join(d, "ca1.crt"))).decode()
            self.assertEqual(c.ours(), [ca1, ca1], "ca.crt beside tls.crt is the bundle")
            self.assertTrusted(srv, ca1)

            # Rotation to a new CA: the bundle follows the certificate reload.
            make_ca(d, "ca2")
            make_leaf(d, "ca2", "leaf2")
            n = len(logs(srv, "caBundle patched", trigger="certificate reload"))
            install(d, certs, "ca2", "leaf2")
            ca2 = base64.b64encode(read(os.path.join(d, "ca2.crt"))).decode()
            wait_until("re-patch after the reload", lambda: c.ours() == [ca2, ca2])
            wait_until("reload log", lambda: len(logs(srv, "caBundle patched", trigger="certificate reload")) > n
                       or logs(srv, "caBundle patched", trigger="CA file change"))
            self.assertTrusted(srv, ca2)

            # SIGHUP reloads and re-patches what someone else overwrote.
            c.overwrite("mutatingwebhookconfigurations", "webhookd-inject", ca1)
            srv.proc.send_signal(signal.SIGHUP)
            wait_until("SIGHUP re-patch", lambda: c.ours() == [ca2, ca2], timeout=5)
            self.assertUntouched()

    def test_chain_anchor_and_explicit_ca_file(self):
        d, c = self.tmp, self.cluster
        make_ca(d, "root")
        make_leaf(d, "root", "leaf")
        # No ca.crt beside the files: the chain's last certificate is the anchor.
        chain = os.path.join(d, "chain")
        os.mkdir(chain)
        write_atomically(os.path.join(chain, "tls.crt"), read(os.path.join(d, "leaf.crt")) + read(
            os.path.join(d, "root.crt")))
        write_atomically(os.path.join(chain, "tls.key"), read(os.path.join(d, "leaf.key")))
        args = patch_args(c, "--tls-cert-file", os.path.join(chain, "tls.crt"),
                          "--tls-key-file", os.path.join(chain, "tls.key"))
        root_pem = subprocess.run(["openssl", "x509", "-in", os.path.join(d, "root.crt")], check=True,
                                  capture_output=True).stdout
        with whtest.Server(*args) as srv:
            srv.wait_log("caBundle patched", timeout=20)
            self.assertEqual(base64.b64decode(c.ours()[0]), root_pem)
            self.assertTrusted(srv, c.ours()[0])

        # --ca-file wins, and a change of that file alone is published.
        make_ca(d, "extra")
        bundle = os.path.join(d, "bundle.pem")
        write_atomically(bundle, read(os.path.join(d, "root.crt")))
        with whtest.Server(*(args + ["--ca-file", bundle, "--cert-check-interval", "100ms"])) as srv:
            wait_until("ca-file bundle", lambda: c.ours() == [base64.b64encode(read(bundle)).decode()] * 2)
            both = read(os.path.join(d, "root.crt")) + read(os.path.join(d, "extra.crt"))
            write_atomically(bundle, both)
            wait_until("CA file change published", lambda: c.ours() == [base64.b64encode(both).decode()] * 2)
            wait_until("CA file change log", lambda: logs(srv, "caBundle patched", trigger="CA file change"))
            self.assertTrusted(srv, c.ours()[1])


class TestCABundleFailures(Base):
    def test_api_server_down_then_back(self):
        c = self.cluster
        c.api.down()
        with whtest.Server(*patch_args(c)) as srv:
            wait_until("two failed attempts", lambda: len(logs(srv, "caBundle patch failed; serving continues, "
                                                                "will retry")) >= 2, timeout=20)
            rec = logs(srv, "caBundle patch failed; serving continues, will retry")[0]
            self.assertIn("cannot reach the API server", rec["error"])
            self.assertEqual(rec["trigger"], "startup")
            # Serving is unaffected, and ready.
            status, _, body = whtest.once(srv.port, "POST", "/validate", whtest.review())
            self.assertEqual(status, 200)
            status, body = self.readyz(srv)
            self.assertEqual(status, 200, body)
            self.assertIn("[+]cabundle: failing: attempt ", body)
            self.assertGreaterEqual(whtest.metric(srv, "webhookd_cabundle_patch_total", '{result="failure"}'), 2)
            # Back (empty): the configurations appear later, stale; the retries patch them.
            c.api.up()
            c.api.load(fixtures(stale=OTHER_BUNDLE))
            wait_until("patched after the outage", lambda: c.ours()[0] not in (None, OTHER_BUNDLE) and
                       c.ours()[0] == c.ours()[1], timeout=20)
            self.assertTrusted(srv, c.ours()[0])
            srv.wait_log("caBundle patching recovered", timeout=10)
            wait_until("readyz ok", lambda: "[+]cabundle: ok at " in self.readyz(srv)[1])

    def test_named_configuration_missing_is_retried(self):
        c = self.cluster
        args = patch_args(c)
        args[args.index("webhookd-validate")] = "not-yet"
        with whtest.Server(*args) as srv:
            rec = srv.wait_log("caBundle patch failed; serving continues, will retry", timeout=20)
            self.assertIn("not-yet", rec["error"])
            # The others are still patched.
            wait_until("the existing one patched", lambda: c.ours()[0] is not None)
            self.assertTrusted(srv, c.ours()[0])
            c.api.load([config("ValidatingWebhookConfiguration", "not-yet", {},
                               [webhook("v.istio.io", "istio-system", "webhookd")])])
            wait_until("created later, patched", lambda: c.bundle("ValidatingWebhookConfiguration", "not-yet")
                       == c.ours()[0])


class TestCABundleForbidden(unittest.TestCase):
    def test_rbac_403_is_explained(self):
        auth = {"tokens": {"tok-admin": "admin"}, "basic": {}, "anonymous": False,
                "forbid": [{"user": "admin", "verb": "update", "resource": "mutatingwebhookconfigurations"}]}
        c = Cluster(auth=auth)
        try:
            with whtest.Server(*patch_args(c)) as srv:
                rec = srv.wait_log("caBundle patch failed; serving continues, will retry", timeout=20)
                self.assertIn('cannot update resource "mutatingwebhookconfigurations"', rec["error"])
                self.assertIn("webhookd-inject", rec["error"])
                # The validating configuration, which is allowed, is patched all the same.
                wait_until("validating patched", lambda: c.ours()[1] is not None)
                self.assertIsNone(c.ours()[0])
                status, _, _ = whtest.once(srv.port, "GET", "/healthz")
                self.assertEqual(status, 200)
        finally:
            c.close()


class TestCABundleOff(Base):
    def test_flag_off_touches_nothing(self):
        c = self.cluster
        env = {"KUBECONFIG": c.kubeconfig}
        # Even with every other flag given: without --patch-ca-bundle nothing is sent.
        args = patch_args(c)[1:]
        with whtest.Server(*args, env=env) as srv:
            time.sleep(scaled(3))
            status, body = self.readyz(srv)
            self.assertEqual(status, 200)
            self.assertNotIn("cabundle", body)
            status, _, metrics = whtest.once(srv.port, "GET", "/metrics")
            self.assertNotIn(b"webhookd_cabundle_patch_total", metrics)
        # (the inject endpoint may read nodes through $KUBECONFIG: not our business here)
        self.assertEqual([e for e in c.api.log() if "webhookconfigurations" in e["path"]], [])
        self.assertEqual(c.ours(), [None, None])

    def test_environment_and_usage_errors(self):
        c = self.cluster
        env = {"WEBHOOKD_PATCH_CA_BUNDLE": "true", "WEBHOOKD_KUBECONFIG": c.kubeconfig,
               "WEBHOOKD_CA_BUNDLE_SELECTOR": "app=webhookd", "WEBHOOKD_CA_BUNDLE_SERVICE": SERVICE}
        with whtest.Server(env=env) as srv:
            srv.wait_log("caBundle patched", timeout=20)
            self.assertTrusted(srv, c.ours()[1])
        for args, text in (
                (["--patch-ca-bundle"], "--ca-bundle-mutating"),
                (["--patch-ca-bundle", "--ca-bundle-selector", "a=b", "--ca-bundle-service", "webhookd"],
                 "NAMESPACE/NAME"),
                (["--patch-ca-bundle", "--ca-bundle-selector", "a=b", "--ca-file", "/x"], "--tls-cert-file"),
                (["--patch-ca-bundle", "--ca-bundle-selector", "a=b", "--ca-bundle-check-interval", "0s"],
                 "at least 1s")):
            p = subprocess.run(whtest.WRAPPER + [whtest.BINARY, *args], capture_output=True, text=True,
                               timeout=scaled(30))
            self.assertEqual(p.returncode, 2, (args, p.stderr))
            self.assertIn(text, p.stderr)


if __name__ == "__main__":
    unittest.main()
