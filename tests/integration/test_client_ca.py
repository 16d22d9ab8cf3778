#!/usr/bin/env python3
"""--client-ca-file (issue #15, finding 8): webhookd serves its admission
paths and /metrics only to callers whose TLS client certificate verifies
against the configured CAs, keeps /healthz and /readyz open for the kubelet,
and picks up a rotated CA bundle without a restart.

The real binary over real TLS (Python's ssl, OpenSSL underneath); the
certificates are made by the openssl command for each run.  TestClientCACases
replays client_ca/cases.yaml (certificate presented, TLS version, request ->
status, body); TestClientCARotation rotates the bundle the way the kubelet
updates a mounted Secret (a new timestamped directory, then an atomic swap of
the ..data symlink) while clients keep calling.
"""
import os
import re
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import unittest

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from whtest import (BINARY, H2, WRAPPER, Server, client_context, connect, read_response, request, review,  # noqa: E402
                    scaled)

HERE = os.path.dirname(os.path.abspath(__file__))
OPENSSL_NEWKEY = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]


class PKI:
    """A throw-away PKI in a directory, made with the openssl command."""

    def __init__(self, directory):
        self.dir = directory

    def _path(self, name, ext):
        return os.path.join(self.dir, "%s.%s" % (name, ext))

    def _run(self, *args):
        subprocess.run(["openssl"] + list(args), check=True, capture_output=True)

    def root(self, name):
        """A self-signed CA (openssl req -x509 marks it CA:TRUE)."""
        crt, key = self._path(name, "crt"), self._path(name, "key")
        self._run("req", "-x509", *OPENSSL_NEWKEY, "-days", "3", "-subj", "/CN=" + name, "-keyout", key,
                  "-out", crt)
        return crt, key

    def issue(self, name, ca, days=2, ext="basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n"):
        """A certificate for `name` signed by `ca` ((crt, key)); days=-1 is already expired."""
        crt, key, csr, extfile = (self._path(name, "crt"), self._path(name, "key"), self._path(name, "csr"),
                                  self._path(name, "ext"))
        with open(extfile, "w") as f:
            f.write(ext)
        self._run("req", *OPENSSL_NEWKEY, "-subj", "/CN=" + name, "-keyout", key, "-out", csr)
        self._run("x509", "-req", "-in", csr, "-CA", ca[0], "-CAkey", ca[1], "-days", str(days), "-extfile", extfile,
                  "-out", crt)
        return crt, key

    def bundle(self, name, *crts):
        path = self._path(name, "pem")
        with open(path, "w") as out:
            for crt in crts:
                with open(crt) as f:
                    out.write(f.read())
        return path


def tls_context(cert=None, tls=None, alpn=("http/1.1",)):
    ctx = client_context(alpn)
    if cert is not None:
        ctx.load_cert_chain(cert[0], cert[1])
    if tls == "1.2":
        ctx.maximum_version = ssl.TLSVersion.TLSv1_2
    return ctx


def call(port, ctx, method, path, body=None):
    with connect(port, ctx) as s:
        return request(s, method, path, body)


class TestClientCACases(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        pki = PKI(cls.tmp.name)
        ca, other = pki.root("client-ca"), pki.root("other-ca")
        inter = pki.issue("intermediate", ca,
                          ext="basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n")
        chain_leaf = pki.issue("chain", inter)
        cls.certs = {
            "none": None,
            "good": pki.issue("good", ca),
            "other_ca": pki.issue("other", other),
            "expired": pki.issue("expired", ca, days=-1),
            "server_only": pki.issue("server-only", ca,
                                     ext="basicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n"),
            # the leaf followed by its intermediate, as a client sends its chain
            "chain": (pki.bundle("chain-full", chain_leaf[0], inter[0]), chain_leaf[1]),
        }
        cls.server = Server("--client-ca-file=" + ca[0])
        cls.server.start()

    @classmethod
    def tearDownClass(cls):
        cls.server.__exit__(None)
        cls.tmp.cleanup()

    def test_cases(self):
        with open(os.path.join(HERE, "client_ca", "cases.yaml")) as f:
            cases = yaml.safe_load(f)
        self.assertGreater(len(cases), 20)
        for case in cases:
            with self.subTest(**{k: case[k] for k in ("cert", "method", "path") if k in case}, tls=case.get("tls")):
                ctx = tls_context(self.certs[case["cert"]], case.get("tls"))
                body = review() if case.get("review") else (b"{}" if case["method"] == "POST" else None)
                status, _, text = call(self.server.port, ctx, case["method"], case["path"], body)
                self.assertEqual(status, case["status"], text)
                if "body" in case:
                    if case.get("exact"):
                        self.assertEqual(text.decode(), case["body"])
                    else:
                        self.assertTrue(text.decode().startswith(case["body"]), text)
                if case.get("review"):
                    self.assertIn(b'"kind":"AdmissionReview"', text)

    def test_refusals_are_counted_and_logged(self):
        good = tls_context(self.certs["good"])
        call(self.server.port, tls_context(self.certs["other_ca"]), "POST", "/validate", b"{}")
        _, _, text = call(self.server.port, good, "GET", "/metrics")
        text = text.decode()
        self.assertRegex(text, r'webhookd_client_certificate_refusals_total\{path="/validate",reason="untrusted"\} [1-9]')
        self.assertRegex(text, r'webhookd_client_certificate_refusals_total\{path="/inject",reason="missing"\} [1-9]')
        self.assertRegex(text, r'webhookd_client_ca_loads_total\{result="success"\} 1\b')
        refusals = [r for r in self.server.records() if r.get("msg", "").startswith("request refused")]
        self.assertTrue(refusals, self.server.log())
        self.assertIn(refusals[0]["reason"], ("missing", "untrusted", "expired", "invalid"))

    def test_monitoring_listener_needs_no_certificate(self):
        with Server("--client-ca-file=" + os.path.join(self.tmp.name, "client-ca.crt"),
                    "--monitoring-listen=127.0.0.1:0") as s:
            rec = s.wait_log("monitoring listening")
            port = int(rec["address"].rsplit(":", 1)[1])
            with socket.create_connection(("127.0.0.1", port), timeout=scaled(5)) as raw:
                status, _, text = request(raw, "GET", "/metrics")
            self.assertEqual(status, 200)
            self.assertIn(b"webhookd_client_ca_loads_total", text)


class TestClientCAErrors(unittest.TestCase):
    def test_unusable_bundle_stops_start_up(self):
        with tempfile.TemporaryDirectory() as d:
            cases = {"missing": os.path.join(d, "absent.pem"), "garbage": os.path.join(d, "garbage.pem"),
                     "key only": os.path.join(d, "key.pem")}
            with open(cases["garbage"], "w") as f:
                f.write("-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydA==\n-----END CERTIFICATE-----\n")
            subprocess.run(["openssl", "genpkey", "-algorithm", "ed25519", "-out", cases["key only"]], check=True,
                           capture_output=True)
            for what, path in cases.items():
                with self.subTest(what):
                    p = subprocess.run(WRAPPER + [BINARY, "--listen=127.0.0.1:0", "--client-ca-file=" + path],
                                       capture_output=True, text=True, timeout=scaled(20))
                    self.assertEqual(p.returncode, 1, p.stderr)
                    self.assertIn("--client-ca-file " + path, p.stderr)


class Kubelet:
    """A Secret/ConfigMap volume the way the kubelet writes it: ca.crt ->
    ..data/ca.crt, ..data -> ..<timestamp>/, swapped by one rename."""

    def __init__(self, directory):
        self.dir = directory
        self.n = 0
        os.symlink("..data/ca.crt", os.path.join(directory, "ca.crt"))

    @classmethod
    def volume(cls, parent, pem_file):
        """A volume in parent/volume with `pem_file` published."""
        directory = os.path.join(parent, "volume")
        os.mkdir(directory)
        volume = cls(directory)
        volume.publish(pem_file)
        return volume

    @property
    def path(self):
        return os.path.join(self.dir, "ca.crt")

    def publish(self, pem_file):
        self.n += 1
        version = "..2026_11_26_%02d" % self.n
        os.mkdir(os.path.join(self.dir, version))
        with open(pem_file) as src, open(os.path.join(self.dir, version, "ca.crt"), "w") as dst:
            dst.write(src.read())
        os.symlink(version, os.path.join(self.dir, "..data_tmp"))
        os.rename(os.path.join(self.dir, "..data_tmp"), os.path.join(self.dir, "..data"))


class TestClientCARotation(unittest.TestCase):
    def test_rotation_under_load(self):
        with tempfile.TemporaryDirectory() as d:
            pki = PKI(d)
            old_ca, new_ca = pki.root("old-ca"), pki.root("new-ca")
            old_cert, new_cert = pki.issue("apiserver-old", old_ca), pki.issue("apiserver-new", new_ca)
            volume = Kubelet.volume(d, old_ca[0])
            contexts = {"old": tls_context(old_cert), "new": tls_context(new_cert)}

            with Server("--client-ca-file=" + volume.path, "--cert-check-interval=100ms") as server:
                state = {"cert": "old", "stop": False, "ok": 0, "failures": []}
                lock = threading.Lock()
                body = review()

                def load(keep_alive):
                    sock, sock_cert = None, None
                    while not state["stop"]:
                        cert = state["cert"]
                        try:
                            if keep_alive:
                                if sock is None or sock_cert != cert:
                                    if sock is not None:
                                        sock.close()
                                    sock, sock_cert = connect(server.port, contexts[cert]), cert
                                status, _, text = request(sock, "POST", "/validate", body)
                            else:
                                status, _, text = call(server.port, contexts[cert], "POST", "/validate", body)
                        except (OSError, ConnectionError) as e:
                            status, text, sock = None, repr(e).encode(), None
                        with lock:
                            if status == 200:
                                state["ok"] += 1
                            else:
                                state["failures"].append((cert, status, text[:200]))
                    if sock is not None:
                        sock.close()

                threads = [threading.Thread(target=load, args=(i == 0,)) for i in range(4)]
                for t in threads:
                    t.start()

                def until(cert, want, timeout=5):
                    """Poll new connections with `cert` until /validate answers `want`."""
                    deadline = time.time() + scaled(timeout)
                    while time.time() < deadline:
                        if call(server.port, contexts[cert], "POST", "/validate", body)[0] == want:
                            return time.time()
                        time.sleep(0.02)
                    self.fail("%s certificate never got %d; log:\n%s" % (cert, want, server.log()))

                try:
                    time.sleep(scaled(0.3))
                    self.assertEqual(call(server.port, contexts["new"], "POST", "/validate", body)[0], 403)
                    # 1. both CAs: the new client certificate is honoured without a restart
                    t0 = time.time()
                    volume.publish(pki.bundle("both", old_ca[0], new_ca[0]))
                    took = until("new", 200) - t0
                    # 2. the API server moves to its new certificate
                    state["cert"] = "new"
                    time.sleep(scaled(0.3))
                    # 3. the old CA goes: its certificates are refused on new connections
                    volume.publish(new_ca[0])
                    until("old", 403)
                    time.sleep(scaled(0.3))
                    # 4. a damaged bundle keeps the last good one
                    with open(os.path.join(d, "damaged.pem"), "w") as f:
                        f.write("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n")
                    volume.publish(os.path.join(d, "damaged.pem"))
                    server.wait_log("certificate reload failed; keeping the previous certificate")
                    time.sleep(scaled(0.3))
                finally:
                    state["stop"] = True
                    for t in threads:
                        t.join(scaled(20))
                self.assertEqual(state["failures"], [])
                self.assertGreater(state["ok"], 20)
                self.assertLess(took, scaled(2))
                self.assertEqual(call(server.port, contexts["old"], "POST", "/validate", body)[0], 403)
                _, _, text = call(server.port, contexts["new"], "GET", "/metrics")
                text = text.decode()
                self.assertRegex(text, r'webhookd_client_ca_loads_total\{result="success"\} 3\b')
                self.assertRegex(text, r'webhookd_client_ca_loads_total\{result="failure"\} 1\b')
                self.assertTrue(re.search(r"client CA file change", server.log()), server.log())


def closed_by_server(sock, timeout=5):
    """True when the server ends the connection (EOF or reset) within `timeout`."""
    sock.settimeout(scaled(timeout))
    try:
        return sock.recv(1) == b""
    except (ConnectionError, ssl.SSLError):
        return True
    except socket.timeout:
        return False


class TestClientCAKeptConnections(unittest.TestCase):
    """A keep-alive connection is judged against the bundle in force, not the
    one of its handshake: after a rotation that drops its CA an idle
    connection is closed (its client reconnects and is verified afresh) and a
    request already arriving on it gets 403 and "Connection: close"; one whose
    certificate the new bundle trusts is served on the same connection."""

    def test_verdicts_follow_the_bundle(self):
        with tempfile.TemporaryDirectory() as d:
            pki = PKI(d)
            old_ca, new_ca = pki.root("old-ca"), pki.root("new-ca")
            old, new = tls_context(pki.issue("old", old_ca)), tls_context(pki.issue("new", new_ca))
            volume = Kubelet.volume(d, old_ca[0])
            body = review()

            def until(ctx, want):
                deadline = time.time() + scaled(5)
                while time.time() < deadline:
                    if call(server.port, ctx, "POST", "/validate", body)[0] == want:
                        return
                    time.sleep(0.02)
                self.fail("a new connection never got %d; log:\n%s" % (want, server.log()))

            with Server("--client-ca-file=" + volume.path, "--cert-check-interval=100ms") as server, \
                    connect(server.port, old) as idle_old, connect(server.port, old) as arriving_old, \
                    connect(server.port, new) as kept_new:
                self.assertEqual(request(idle_old, "POST", "/validate", body)[0], 200)
                self.assertEqual(request(arriving_old, "POST", "/validate", body)[0], 200)
                self.assertEqual(request(kept_new, "POST", "/validate", body)[0], 403)

                # The new CA joins: the connection refused a moment ago is served as it is.
                volume.publish(pki.bundle("both", old_ca[0], new_ca[0]))
                until(new, 200)
                self.assertEqual(request(kept_new, "POST", "/validate", body)[0], 200)
                self.assertEqual(request(idle_old, "POST", "/validate", body)[0], 200)

                # The old CA goes while a request is half-way in on one old connection.
                arriving_old.sendall(b"POST /validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                                     b"Content-Length: %d\r\n\r\n" % len(body) + body[:10])
                volume.publish(new_ca[0])
                until(old, 403)
                self.assertTrue(closed_by_server(idle_old), "an idle connection verified by the removed CA stayed open")
                arriving_old.sendall(body[10:])
                status, headers, text = read_response(arriving_old)
                self.assertEqual(status, 403, text)
                self.assertIn(b"client certificate refused", text)
                self.assertEqual(headers.get("connection"), "close")
                self.assertTrue(closed_by_server(arriving_old))
                for _ in range(3):
                    self.assertEqual(request(kept_new, "POST", "/validate", body)[0], 200)
                rejudged = [r for r in server.records() if r.get("msg") == "client CA changed: connections re-verified"]
                # (connections the polls above closed may still be open on the server's side: at least)
                self.assertGreaterEqual(sum(int(r["verified"]) for r in rejudged), 1, rejudged)
                self.assertGreaterEqual(sum(int(r["refused"]) for r in rejudged), 2, rejudged)

    def test_resumed_sessions_keep_their_chain(self):
        """A connection resumed from a session ticket is judged again with the
        intermediates its client sent in the first handshake (a ticket holds
        only the leaf): a rotation that keeps the root keeps it served.  A
        chain too large to ride in a ticket is not resumed (the full
        handshake sends it again)."""
        with tempfile.TemporaryDirectory() as d:
            pki = PKI(d)
            ca, other = pki.root("ca"), pki.root("other-ca")
            inter = pki.issue("intermediate", ca,
                              ext="basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n")
            leaf = pki.issue("chain", inter)
            chain = (pki.bundle("chain-full", leaf[0], inter[0]), leaf[1])
            big_inter = pki.issue("big-intermediate", ca,
                                  ext="basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n"
                                  "nsComment=" + "x" * 17000 + "\n")
            big_leaf = pki.issue("big-chain", big_inter)
            big_chain = (pki.bundle("big-chain-full", big_leaf[0], big_inter[0]), big_leaf[1])
            other_cert = pki.issue("other", other)
            volume = Kubelet.volume(d, ca[0])
            body = review()
            with Server("--client-ca-file=" + volume.path, "--cert-check-interval=100ms") as server:
                kept = {}
                for name, cert, tls, resumed in (("chain", chain, "1.3", True), ("chain", chain, "1.2", True),
                                                 ("big chain", big_chain, "1.3", False)):
                    ctx = tls_context(cert, tls if tls == "1.2" else None)
                    with connect(server.port, ctx) as first:
                        self.assertEqual(request(first, "POST", "/validate", body)[0], 200)
                        session = first.session
                    raw = socket.create_connection(("127.0.0.1", server.port), timeout=scaled(10))
                    kept[name, tls] = ctx.wrap_socket(raw, server_hostname="localhost", session=session)
                    self.assertEqual(kept[name, tls].session_reused, resumed, (name, tls))
                    self.assertEqual(request(kept[name, tls], "POST", "/validate", body)[0], 200)
                try:
                    volume.publish(pki.bundle("both", ca[0], other[0]))
                    deadline = time.time() + scaled(5)
                    while call(server.port, tls_context(other_cert), "POST", "/validate", body)[0] != 200:
                        self.assertLess(time.time(), deadline, "the new bundle never took effect")
                        time.sleep(0.02)
                    for (name, tls), sock in kept.items():
                        with self.subTest(chain=name, tls=tls):
                            status, _, text = request(sock, "POST", "/validate", body)
                            self.assertEqual(status, 200, text)
                    self.assertEqual(sum(int(r["refused"]) for r in server.records()
                                         if r.get("msg") == "client CA changed: connections re-verified"), 0)
                finally:
                    for sock in kept.values():
                        sock.close()

    def test_http2_connection_gets_goaway(self):
        """HTTP/2: the connection whose CA went gets GOAWAY (NO_ERROR, its last
        stream), the stream still arriving on it is answered by the new
        verdict, and then the server closes it, as HTTP/1.1 answers
        "Connection: close"."""
        with tempfile.TemporaryDirectory() as d:
            pki = PKI(d)
            old_ca, new_ca = pki.root("old-ca"), pki.root("new-ca")
            old_cert = pki.issue("old", old_ca)
            volume = Kubelet.volume(d, old_ca[0])
            body = review()
            with Server("--http2", "--client-ca-file=" + volume.path, "--cert-check-interval=100ms") as server:
                h2 = H2(server.port, tls_context(old_cert, alpn=("h2",)))
                try:
                    self.assertEqual(h2.request("POST", "/validate", body)[0], 200)
                    arriving = h2.headers("POST", "/validate", len(body))
                    h2.data(arriving, body[:10])
                    h2.ping()  # the server has opened the stream
                    volume.publish(new_ca[0])
                    deadline = time.time() + scaled(10)
                    while h2.goaway is None and time.time() < deadline:
                        self.assertIsNotNone(h2.read_frame(), "closed without GOAWAY; log:\n" + server.log())
                    self.assertEqual(h2.goaway, (arriving, 0))
                    h2.data(arriving, body[10:], end=True)
                    status, text, reset = h2.response(arriving)
                    self.assertEqual((status, reset), (403, None), text)
                    self.assertIn(b"client certificate refused", text)
                    self.assertTrue(h2.read_until_closed(), "the connection stayed open after its last answer")
                finally:
                    h2.close()


if __name__ == "__main__":
    unittest.main()
