#!/usr/bin/env python3
"""Integration tests: the real webhookd binary over real TLS.

Each TestCase class is one ctest test (see CMakeLists.txt).  Clients are
Python's ssl module (byte-exact control over what is sent), curl, nghttp and
openssl, as the kube-apiserver and operators would use them.
"""
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from whtest import (BINARY, H2, SLOW, Server, client_context, connect, install, metric, once,  # noqa: E402
                    peer_serial, read_response, request, review, scaled, self_signed)

JSON = "application/json"


def curl(*args, check=True):
    out = subprocess.run(["curl", "-sS", "-k", "--max-time", str(scaled(20))] + list(args),
                         capture_output=True, text=True)
    if check and out.returncode != 0:
        raise AssertionError("curl %s failed: %s" % (args, out.stderr))
    return out


class TestHTTP1(unittest.TestCase):
    """Routes, headers and framing over HTTP/1.1 (curl and raw sockets)."""

    @classmethod
    def setUpClass(cls):
        cls.server = Server()
        cls.server.start()

    @classmethod
    def tearDownClass(cls):
        status, _ = cls.server.stop()
        assert status == 0, cls.server.log()

    def test_health_endpoints(self):
        status, headers, body = once(self.server.port, "GET", "/healthz")
        self.assertEqual((status, body), (200, b"ok\n"))
        self.assertEqual(headers["server"], "webhookd")  # no h2o version leak
        self.assertEqual(headers["content-length"], "3")
        status, _, body = once(self.server.port, "GET", "/readyz")
        self.assertEqual(status, 200, body)
        self.assertIn(b"[+]certificates ok", body)
        self.assertIn(b"readyz check passed", body)
        status, _, body = once(self.server.port, "GET", "/version")
        self.assertEqual(status, 200)
        self.assertEqual(json.loads(body)["name"], "webhookd")
        status, headers, body = once(self.server.port, "GET", "/metrics")
        self.assertEqual(status, 200)
        self.assertTrue(headers["content-type"].startswith("text/plain; version=0.0.4"))
        self.assertIn(b"# TYPE webhookd_http_requests_total counter", body)

    def test_not_found_and_methods(self):
        status, headers, body = once(self.server.port, "GET", "/nope")
        self.assertEqual(status, 404)
        self.assertEqual(json.loads(body), {"error": "not found"})
        self.assertEqual(headers["content-type"], JSON)
        self.assertEqual(once(self.server.port, "POST", "/injectx", b"{}")[0], 404)
        # istiod's /inject takes any method: a client that follows our 301
        # for an unclean path with a GET gets istiod's 400, not a 405.
        status, headers, _ = once(self.server.port, "GET", "//inject")
        self.assertEqual((status, headers["location"]), (301, "/inject"))
        status, headers, body = once(self.server.port, "GET", headers["location"])
        self.assertEqual((status, body, "allow" in headers), (400, b"no body found\n", False))
        status, headers, _ = once(self.server.port, "POST", "/healthz", b"x")
        self.assertEqual((status, headers["allow"]), (405, "GET, HEAD"))
        out = curl("-I", self.server.url + "/healthz")
        self.assertIn("HTTP/1.1 200", out.stdout)

    def test_head_has_no_body(self):
        """HEAD gets GET's status and Content-Length and no body (RFC 9110 9.3.2, as Go's server answers it): on a
        keep-alive connection a body would be read as the start of the next answer."""
        with connect(self.server.port) as s:
            s.sendall(b"HEAD /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n"
                      b"GET /version HTTP/1.1\r\nHost: localhost\r\n\r\n")
            buf = b""
            while buf.count(b"\r\n\r\n") < 2:
                buf += s.recv(65536)
            head, rest = buf.split(b"\r\n\r\n", 1)
            self.assertIn(b"\r\nContent-Length: 3\r\n", head)
            self.assertTrue(rest.startswith(b"HTTP/1.1 200 OK\r\n"), rest[:40])
            status, _, body = read_response(s, rest)
            self.assertEqual((status, json.loads(body)["name"]), (200, "webhookd"))

    @unittest.skipIf(os.environ.get("WH_TEST_WRAPPER"), "valgrind's own scheduling is counted too")
    def test_idle_workers_sleep(self):
        """A worker with no connection sleeps until one arrives: its sweep (write timeouts, the in-flight bound)
        has nothing to look at.  It woke every 10 ms (200 times a second for two workers)."""
        def switches(pid):
            total = 0
            for task in os.listdir("/proc/%d/task" % pid):
                with open("/proc/%d/task/%s/schedstat" % (pid, task)) as f:
                    total += int(f.read().split()[2])  # timeslices run on a CPU
            return total
        with Server() as server:
            self.assertEqual(once(server.port, "GET", "/healthz")[0], 200)  # a connection came and went
            time.sleep(0.2)
            before = switches(server.proc.pid)
            time.sleep(1)
            self.assertLess(switches(server.proc.pid) - before, 20)
            self.assertEqual(once(server.port, "GET", "/healthz")[0], 200)  # and the next one is served

    def test_query_string_ignored_for_routing(self):
        status, _, body = once(self.server.port, "POST", "/validate?timeout=10s", review("q"))
        self.assertEqual(status, 200)
        self.assertEqual(json.loads(body)["response"]["uid"], "q")

    def test_reviews_v1_and_v1beta1(self):
        for version in ("admission.k8s.io/v1", "admission.k8s.io/v1beta1"):
            for path in ("/inject", "/inject/cluster/c1", "/validate", "/validate/networking"):
                out = curl("-X", "POST", "-H", "Content-Type: application/json", "--data-binary",
                           review("u-" + version[-2:], version).decode(), "-w", "\n%{http_code} %{http_version}",
                           self.server.url + path)
                body, meta = out.stdout.rsplit("\n", 1)
                self.assertEqual(meta, "200 1.1")
                doc = json.loads(body)
                self.assertEqual(list(doc), ["kind", "apiVersion", "response"])
                self.assertEqual((doc["kind"], doc["apiVersion"]), ("AdmissionReview", version))
                self.assertEqual(doc["response"]["uid"], "u-" + version[-2:])
                self.assertIsInstance(doc["response"]["allowed"], bool)
                if not doc["response"]["allowed"]:  # a denial always says why
                    self.assertTrue(doc["response"]["status"]["message"])

    def test_bad_inputs(self):
        p = self.server.port
        cases = [
            # (body, content type, status, phrase)
            (b"", JSON, 400, b"no body found"),
            (b"", "text/plain", 400, b"no body found"),
            (review(), "application/json; charset=utf-8", 415, b"invalid Content-Type, want `application/json`"),
            (review(), None, 415, b"invalid Content-Type, want `application/json`"),
            (bytes(range(6)), JSON, 200, b"could not decode body"),
            (b"{}", JSON, 200, b"could not decode body"),
            (b'{"apiVersion":"admission.k8s.io/v1","kind":"Pod"}', JSON, 200, b"could not decode body"),
            (review(api_version="admission.k8s.io/v2"), JSON, 200, b"could not decode body"),
            (b'{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}', JSON, 200, b"has no request"),
            (b'{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":', JSON, 200,
             b"could not decode body"),
        ]
        for body, ctype, want, phrase in cases:
            for path in ("/inject", "/validate"):
                status, headers, answer = once(p, "POST", path, body, content_type=ctype)
                self.assertEqual(status, want, (body, ctype, answer))
                self.assertIn(phrase, answer)
                if status == 200:
                    self.assertIs(json.loads(answer)["response"]["allowed"], False)
                else:
                    self.assertTrue(headers["content-type"].startswith("text/plain"))
        # No body at all (no Content-Length): 400 as well.
        status, _, answer = once(p, "POST", "/validate", None)
        self.assertEqual((status, answer), (400, b"no body found\n"))

    def test_body_one_byte_over_the_cap(self):
        body = b"x" * (6 * 1024 * 1024 + 1)
        with connect(self.server.port) as s:
            status, _, answer = request(s, "POST", "/validate", body)
            self.assertEqual(status, 413)
            self.assertEqual(answer, b"Request entity too large: limit is 6291456\n")
            # The connection is still usable: no reset, nothing for a client to retry.
            self.assertEqual(request(s, "GET", "/healthz")[0], 200)
        status, _, _ = once(self.server.port, "POST", "/validate", b"x" * (6 * 1024 * 1024))
        self.assertEqual(status, 200)  # exactly the cap is fine (then undecodable)

    def test_truncated_bodies(self):
        p = self.server.port
        # Content-Length promises more than is sent, then the client hangs up.
        for sent in (0, 10, 1000):
            with connect(p) as s:
                s.sendall(b"POST /validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                          b"Content-Length: 5000\r\n\r\n" + review()[:sent])
        # A truncated chunked body.
        with connect(p) as s:
            s.sendall(b"POST /inject HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                      b"Transfer-Encoding: chunked\r\n\r\n10\r\n{\"apiVersion\":")
        # A body cut short that stays open must not block anyone.
        hanging = connect(p)
        hanging.sendall(b"POST /validate HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{")
        for _ in range(20):
            self.assertEqual(once(p, "POST", "/validate", review())[0], 200)
        hanging.close()
        # A complete chunked body is read as a whole.
        with connect(p) as s:
            body = review("chunked")
            s.sendall(b"POST /validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                      b"Transfer-Encoding: chunked\r\n\r\n" + b"%x\r\n" % len(body) + body + b"\r\n0\r\n\r\n")
            status, _, answer = read_response(s)
            self.assertEqual(status, 200)
            self.assertEqual(json.loads(answer)["response"]["uid"], "chunked")
        self.assertEqual(self.server.proc.poll(), None)

    def test_keepalive_1000_sequential(self):
        before = metric(self.server, "webhookd_connections_accepted_total", '{listener="webhook"}')
        with connect(self.server.port) as s:
            for i in range(1000):
                status, headers, body = request(s, "POST", "/validate", review("ka-%d" % i))
                self.assertEqual(status, 200)
                self.assertEqual(json.loads(body)["response"]["uid"], "ka-%d" % i)
                self.assertNotEqual(headers.get("connection"), "close")
        after = metric(self.server, "webhookd_connections_accepted_total", '{listener="webhook"}')
        self.assertEqual(after - before, 2)  # our connection + the first metric() call's

    def test_concurrent_clients(self):
        errors = []

        def client(n):
            try:
                with connect(self.server.port) as s:
                    for i in range(50):
                        uid = "c%d-%d" % (n, i)
                        status, _, body = request(s, "POST", "/inject", review(uid))
                        if status != 200 or json.loads(body)["response"]["uid"] != uid:
                            errors.append((uid, status, body))
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(repr(e))

        threads = [threading.Thread(target=client, args=(n,)) for n in range(16)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])

    def test_slow_client_does_not_block_others(self):
        stop = threading.Event()
        slow = connect(self.server.port)
        sent = []

        def trickle():
            data = b"POST /validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 900\r\n\r\n"
            for b in data:
                if stop.is_set():
                    return
                slow.sendall(bytes([b]))
                sent.append(b)
                stop.wait(1.0)  # one byte a second

        t = threading.Thread(target=trickle)
        t.start()
        try:
            time.sleep(1.5)
            start = time.time()
            for i in range(50):
                self.assertEqual(once(self.server.port, "POST", "/validate", review("fast%d" % i))[0], 200)
            self.assertLess(time.time() - start, scaled(30))  # each new TLS connection served meanwhile
            self.assertGreaterEqual(len(sent), 2)  # the slow client was really mid-request
        finally:
            stop.set()
            t.join()
            slow.close()

    def test_tls_versions_and_alpn(self):
        ctx = client_context(minimum_version=ssl.TLSVersion.TLSv1_2, maximum_version=ssl.TLSVersion.TLSv1_2)
        with connect(self.server.port, ctx) as s:
            self.assertEqual(s.version(), "TLSv1.2")
            self.assertIn("ECDHE", s.cipher()[0])
        out = subprocess.run(["openssl", "s_client", "-connect", "127.0.0.1:%d" % self.server.port, "-tls1_1"],
                             input="", capture_output=True, text=True, timeout=scaled(20))
        self.assertIn("Cipher is (NONE)", out.stdout)
        self.assertNotEqual(out.returncode, 0)
        # HTTP/2 is off by default: h2 is not negotiated, and the h2 preface on
        # an HTTP/1.1 connection is refused (pitfall P5).
        with connect(self.server.port, client_context(alpn=("h2", "http/1.1"))) as s:
            self.assertEqual(s.selected_alpn_protocol(), "http/1.1")
            s.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
            self.assertTrue(s.recv(100).startswith(b"HTTP/1.1 400"))
        out = curl("--http2", "-o", "/dev/null", "-w", "%{http_version}", self.server.url + "/healthz")
        self.assertEqual(out.stdout, "1.1")


GO = os.environ.get("WH_GO", "/usr/lib/go-1.19/bin/go")


@unittest.skipUnless(os.access(GO, os.X_OK), "Go 1.19 is not installed (scripts/deps.sh test installs it)")
class TestGoClient(unittest.TestCase):
    """Go's net/http + crypto/tls, configured like the kube-apiserver's webhook client."""

    def test_like_the_apiserver(self):
        d = tempfile.mkdtemp(prefix="wh-go-")
        try:
            ca = os.path.join(d, "ca.crt")
            binary = os.path.join(d, "client")
            env = dict(os.environ, GOPATH="/usr/share/gocode", GO111MODULE="off",
                       GOCACHE=os.path.join(tempfile.gettempdir(), "wh-gocache"))
            subprocess.run([GO, "build", "-o", binary, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                                     "goclient", "apiserver_client.go")],
                           env=env, check=True, timeout=300)
            with Server("--self-signed-cert-out", ca, "--tls-san", "webhookd.istio-system.svc") as server:
                for path in ("/validate", "/inject/cluster/c1"):
                    out = subprocess.run([binary, "-url", server.url + path, "-ca", ca, "-server-name",
                                          "webhookd.istio-system.svc", "-n", "300", "-c", "16"],
                                         capture_output=True, text=True, timeout=scaled(120))
                    self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
                    self.assertIn("ok=300 errors=0 protocols=map[HTTP/1.1:300]", out.stdout)
                # Connections were reused: far fewer than requests.
                accepted = metric(server, "webhookd_connections_accepted_total", '{listener="webhook"}')
                self.assertTrue(0 < accepted < 100, accepted)
                # A name the certificate does not carry is refused by Go's verifier.
                out = subprocess.run([binary, "-url", server.url + "/validate", "-ca", ca, "-server-name",
                                      "other.istio-system.svc", "-n", "1", "-c", "1"],
                                     capture_output=True, text=True, timeout=scaled(60))
                self.assertNotEqual(out.returncode, 0)
                self.assertIn("certificate is valid for", out.stderr)
        finally:
            shutil.rmtree(d, ignore_errors=True)


class TestHTTP2(unittest.TestCase):
    """With --http2: h2 over ALPN for curl and nghttp, HTTP/1.1 still served."""

    def test_http2(self):
        with Server("--http2") as server:
            out = curl("--http2", "-X", "POST", "-H", "Content-Type: application/json", "--data-binary",
                       review("h2", "admission.k8s.io/v1beta1").decode(), "-w", "\n%{http_code} %{http_version}",
                       server.url + "/validate/x")
            body, meta = out.stdout.rsplit("\n", 1)
            self.assertEqual(meta, "200 2")
            doc = json.loads(body)
            self.assertEqual((doc["apiVersion"], doc["response"]["uid"]), ("admission.k8s.io/v1beta1", "h2"))
            with tempfile.NamedTemporaryFile() as f:
                f.write(review("ng"))
                f.flush()
                out = subprocess.run(["nghttp", "-nv", "-d", f.name, "-H", "content-type: application/json",
                                      server.url + "/inject"], capture_output=True, text=True, timeout=scaled(20))
                self.assertEqual(out.returncode, 0, out.stderr)
                self.assertIn(":status: 200", out.stdout)
            out = subprocess.run(["nghttp", "-v", "-d", "/dev/null", "-H", "content-type: application/json",
                                  server.url + "/inject"], capture_output=True, text=True, timeout=scaled(20))
            self.assertIn(":status: 400", out.stdout)
            out = curl("--http2", "-X", "POST", "-H", "Content-Type: text/plain", "--data-binary", "x",
                       "-w", "\n%{http_code}", server.url + "/validate")
            self.assertTrue(out.stdout.endswith("\n415"))
            # Oversize h2 body: a real 413, not a REFUSED_STREAM that clients retry.
            big = os.path.join(tempfile.gettempdir(), "wh-big-%d" % os.getpid())
            with open(big, "wb") as f:
                f.write(b"x" * (6 * 1024 * 1024 + 1))
            try:
                out = curl("-v", "--http2", "-X", "POST", "-H", "Content-Type: application/json", "--data-binary",
                           "@" + big, "-w", "\n%{http_code}", server.url + "/validate")
            finally:
                os.unlink(big)
            self.assertTrue(out.stdout.endswith("limit is 6291456\n\n413"), out.stdout[-200:])
            self.assertNotIn("REFUSED_STREAM", out.stderr)
            self.assertNotIn("retry", out.stderr)
            h2 = H2(server.port, client_context(alpn=("h2",)))
            sid = h2.headers("HEAD", "/healthz", end=True)
            self.assertEqual(h2.response(sid), (200, b"", None))  # no DATA for HEAD
            sid = h2.headers("GET", "/healthz", end=True)
            self.assertEqual(h2.response(sid), (200, b"ok\n", None))
            h2.close()
            with connect(server.port) as s:  # HTTP/1.1 clients are still served
                self.assertEqual(request(s, "GET", "/healthz")[0], 200)
            status, _ = server.stop()
            self.assertEqual(status, 0, server.log())


class TestCertificates(unittest.TestCase):
    """Certificate files: hot reload under load, SIGHUP, bad pairs, self-signed."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="wh-it-")
        self.cert = os.path.join(self.dir, "tls.crt")
        self.key = os.path.join(self.dir, "tls.key")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def test_reload_under_load_loses_nothing(self):
        c, k, first = self_signed(self.dir)
        install(c, k, self.cert, self.key)
        with Server("--tls-cert-file", self.cert, "--tls-key-file", self.key, "--cert-check-interval=100ms",
                    threads=2) as server:
            self.assertEqual(peer_serial(server.port), first)
            stop = threading.Event()
            counts = {"ok": 0, "failed": []}
            lock = threading.Lock()

            def load(new_connections):
                s = None
                while not stop.is_set():
                    try:
                        if s is None or new_connections:
                            if s is not None:
                                s.close()
                            s = connect(server.port)
                        status, _, _ = request(s, "POST", "/validate", review("load"))
                        with lock:
                            if status == 200:
                                counts["ok"] += 1
                            else:
                                counts["failed"].append(status)
                    except Exception as e:  # noqa: BLE001 - every failure is counted
                        with lock:
                            counts["failed"].append(repr(e))
                        s = None
                if s is not None:
                    s.close()

            threads = [threading.Thread(target=load, args=(n % 2 == 0,)) for n in range(4)]
            for t in threads:
                t.start()
            serials = [first]
            try:
                for _ in range(3):
                    time.sleep(0.4)
                    c, k, serial = self_signed(self.dir)
                    install(c, k, self.cert, self.key)
                    serials.append(serial)
                    deadline = time.time() + scaled(5)
                    while peer_serial(server.port) != serial and time.time() < deadline:
                        time.sleep(0.05)
                    self.assertEqual(peer_serial(server.port), serial)
                time.sleep(0.3)
            finally:
                stop.set()
                for t in threads:
                    t.join()
            self.assertEqual(counts["failed"], [])
            self.assertGreater(counts["ok"], 50)
            self.assertEqual(len(set(serials)), 4)
            status, _ = server.stop()
            self.assertEqual(status, 0, server.log())

    def test_sighup_and_bad_pairs(self):
        c, k, first = self_signed(self.dir)
        install(c, k, self.cert, self.key)
        # A long poll interval: only SIGHUP triggers reloads here.
        with Server("--tls-cert-file", self.cert, "--tls-key-file", self.key, "--cert-check-interval=1h") as server:
            c, k, second = self_signed(self.dir)
            install(c, k, self.cert, self.key)
            time.sleep(0.2)
            self.assertEqual(peer_serial(server.port), first)  # not polled
            n = len(server.records())
            server.proc.send_signal(signal.SIGHUP)
            server.wait_log("certificate loaded", after=n)
            deadline = time.time() + scaled(2)  # the workers switch on their next loop turn
            while peer_serial(server.port) != second and time.time() < deadline:
                time.sleep(0.02)
            self.assertEqual(peer_serial(server.port), second)
            # A key that does not match: refused, the previous pair keeps serving.
            c, k, _ = self_signed(self.dir)
            os.rename(c, self.cert)
            os.unlink(k)
            n = len(server.records())
            server.proc.send_signal(signal.SIGHUP)
            rec = server.wait_log("certificate reload failed; keeping the previous certificate", after=n)
            self.assertIn("does not match", rec["error"])
            self.assertEqual(peer_serial(server.port), second)
            self.assertEqual(once(server.port, "GET", "/healthz")[0], 200)
            self.assertGreaterEqual(metric(server, "webhookd_certificate_loads_total", '{result="failure"}'), 1)
            status, _ = server.stop()
            self.assertEqual(status, 0, server.log())

    def test_bad_files_at_start(self):
        with open(self.cert, "w") as f:
            f.write("not a certificate")
        with open(self.key, "w") as f:
            f.write("nor a key")
        out = subprocess.run([BINARY, "--listen=127.0.0.1:0", "--tls-cert-file", self.cert, "--tls-key-file",
                              self.key], capture_output=True, text=True, timeout=scaled(20))
        self.assertEqual(out.returncode, 1)
        self.assertIn("no PEM certificate", out.stderr)
        out = subprocess.run([BINARY, "--tls-cert-file", self.cert], capture_output=True, text=True)
        self.assertEqual(out.returncode, 2)
        self.assertIn("go together", out.stderr)

    def test_self_signed_default(self):
        out_file = os.path.join(self.dir, "ca.crt")
        with Server("--self-signed-cert-out", out_file, "--tls-san", "webhookd.istio-system.svc") as server:
            # The written certificate verifies the server for its names.
            out = subprocess.run(["curl", "-sS", "--cacert", out_file, "https://localhost:%d/healthz" % server.port],
                                 capture_output=True, text=True, timeout=scaled(20))
            self.assertEqual(out.stdout, "ok\n", out.stderr)
            ctx = client_context(cafile=out_file)
            raw = socket.create_connection(("127.0.0.1", server.port))
            with ctx.wrap_socket(raw, server_hostname="webhookd.istio-system.svc") as s:
                cert = s.getpeercert()
                self.assertIn(("DNS", "webhookd.istio-system.svc"), cert["subjectAltName"])
                self.assertIn(("IP Address", "127.0.0.1"), cert["subjectAltName"])
            der = ssl.PEM_cert_to_DER_cert(open(out_file).read())
            text = subprocess.run(["openssl", "x509", "-inform", "der", "-noout", "-text"], input=der,
                                  capture_output=True).stdout.decode()
            self.assertIn("ASN1 OID: prime256v1", text)
            self.assertIn("ecdsa-with-SHA256", text)
            # SIGHUP does not replace a self-signed certificate clients were given.
            before = peer_serial(server.port)
            n = len(server.records())
            server.proc.send_signal(signal.SIGHUP)
            server.wait_log("SIGHUP: reloading", after=n)
            time.sleep(0.2)
            self.assertEqual(peer_serial(server.port), before)


class TestShutdown(unittest.TestCase):
    """SIGTERM/SIGINT: in-flight requests answered, idle keep-alives closed, deadline."""

    def test_sigterm_with_requests_in_flight(self):
        with Server("--shutdown-timeout=10s", threads=2) as server:
            results = []
            started = threading.Barrier(9)

            def slow_upload(n):
                # The body goes out in 20 pieces over about a second: the
                # request is in flight when SIGTERM arrives.
                body = review("inflight-%d" % n)
                step = len(body) // 20 + 1
                try:
                    with connect(server.port) as s:
                        s.sendall(b"POST /validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                                  b"Content-Length: %d\r\n\r\n" % len(body))
                        started.wait()
                        for i in range(0, len(body), step):
                            s.sendall(body[i:i + step])
                            time.sleep(0.05)
                        status, headers, answer = read_response(s)
                        results.append((status, json.loads(answer)["response"]["uid"], headers.get("connection")))
                except Exception as e:  # noqa: BLE001 - reported below
                    results.append(repr(e))

            threads = [threading.Thread(target=slow_upload, args=(n,)) for n in range(8)]
            for t in threads:
                t.start()
            idle = connect(server.port)  # an idle keep-alive connection
            self.assertEqual(request(idle, "GET", "/healthz")[0], 200)
            started.wait()
            time.sleep(0.2)
            status, took = server.stop(signal.SIGTERM)
            for t in threads:
                t.join()
            self.assertEqual(status, 0, server.log())
            self.assertEqual(sorted(r[:2] for r in results if isinstance(r, tuple)),
                             sorted((200, "inflight-%d" % n) for n in range(8)), results)
            self.assertTrue(all(r[2] == "close" for r in results), results)
            self.assertEqual(idle.recv(10), b"")  # the idle connection was closed by the server
            self.assertLess(took, scaled(5))
            server.wait_log("stopped")

    def test_sigterm_under_keepalive_load(self):
        with Server("--shutdown-timeout=10s", threads=2) as server:
            stop = threading.Event()
            results = {"ok": 0, "closed_by_header": 0, "failed": []}
            lock = threading.Lock()

            def hammer(n):
                try:
                    with connect(server.port) as s:
                        i = 0
                        while True:
                            status, headers, body = request(s, "POST", "/validate", review("h%d-%d" % (n, i)))
                            with lock:
                                if status != 200 or json.loads(body)["response"]["uid"] != "h%d-%d" % (n, i):
                                    results["failed"].append((status, body))
                                results["ok"] += 1
                            i += 1
                            if headers.get("connection") == "close":
                                with lock:
                                    results["closed_by_header"] += 1
                                return
                            if stop.is_set():
                                return
                except Exception as e:  # noqa: BLE001 - a request without an answer
                    with lock:
                        results["failed"].append(repr(e))

            threads = [threading.Thread(target=hammer, args=(n,)) for n in range(4)]
            for t in threads:
                t.start()
            time.sleep(scaled(0.5))
            status, took = server.stop(signal.SIGTERM)
            stop.set()
            for t in threads:
                t.join()
            self.assertEqual(status, 0, server.log())
            self.assertEqual(results["failed"], [])
            self.assertEqual(results["closed_by_header"], 4)  # every busy connection was told to close
            self.assertGreater(results["ok"], 8)
            self.assertLess(took, scaled(5))  # nowhere near the 10 s deadline

    def test_sigint_idle_only_is_quick(self):
        with Server("--log-level=debug") as server:
            conns = [connect(server.port) for _ in range(4)]
            for s in conns:
                self.assertEqual(request(s, "GET", "/healthz")[0], 200)
            status, took = server.stop(signal.SIGINT)
            self.assertEqual(status, 0, server.log())
            # Each was recognised as between requests (closed after 100 ms of
            # quiet), not as a stalled upload (1 s).
            reasons = [r["reason"] for r in server.records() if r.get("msg") == "draining: closing a connection"]
            self.assertEqual(reasons, ["idle"] * 4)
            self.assertLess(took, scaled(3))
            for s in conns:
                s.close()
            with self.assertRaises(OSError):
                socket.create_connection(("127.0.0.1", server.port), timeout=1).close()

    def test_sigint_request_begun_after_answer_is_stalled(self):
        # Between requests means nothing arrived since the last answer: a
        # connection whose next request has begun (its head cut short) is
        # given the stalled delay, not closed as idle.
        with Server("--log-level=debug") as server:
            idle, begun = connect(server.port), connect(server.port)
            for s in (idle, begun):
                self.assertEqual(request(s, "GET", "/healthz")[0], 200)
            begun.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
            time.sleep(0.2)
            status, took = server.stop(signal.SIGINT)
            self.assertEqual(status, 0, server.log())
            reasons = [r["reason"] for r in server.records() if r.get("msg") == "draining: closing a connection"]
            self.assertEqual(sorted(reasons), ["idle", "stalled"])
            self.assertGreater(took, 0.5)  # the begun request had its second of quiet
            for s in (idle, begun):
                s.close()

    def test_deadline_cuts_stragglers(self):
        with Server("--shutdown-timeout=1s") as server:
            s = connect(server.port)
            # A request that never completes but keeps sending: not idle.
            s.sendall(b"POST /validate HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n")
            stop = threading.Event()

            def dribble():
                while not stop.is_set():
                    try:
                        s.sendall(b"x")
                    except OSError:
                        return
                    stop.wait(0.02)

            t = threading.Thread(target=dribble)
            t.start()
            time.sleep(0.2)
            status, took = server.stop(signal.SIGTERM)
            stop.set()
            t.join()
            s.close()
            self.assertEqual(status, 0, server.log())
            self.assertGreater(took, 0.9)
            self.assertLess(took, scaled(4))
            server.wait_log("shutdown deadline reached; closing remaining connections")


class TestCommandLine(unittest.TestCase):
    """--help, --version, bad flags, WEBHOOKD_* environment, access log."""

    def test_help_version_errors(self):
        out = subprocess.run([BINARY, "--help"], capture_output=True, text=True)
        self.assertEqual(out.returncode, 0)
        for flag in ("--listen", "--tls-cert-file", "--tls-key-file", "--threads", "--http2", "--max-request-bytes",
                     "--shutdown-timeout", "--log-level", "--log-format", "WEBHOOKD_LISTEN"):
            self.assertIn(flag, out.stdout)
        out = subprocess.run([BINARY, "--version"], capture_output=True, text=True)
        self.assertTrue(out.stdout.startswith("webhookd "))
        for bad in (["--nope"], ["--threads=x"], ["--log-level=loud"], ["stray"]):
            out = subprocess.run([BINARY] + bad, capture_output=True, text=True)
            self.assertEqual(out.returncode, 2, bad)
            self.assertIn("webhookd:", out.stderr)
        out = subprocess.run([BINARY], capture_output=True, text=True, env=dict(os.environ, WEBHOOKD_THREADS="x"))
        self.assertEqual(out.returncode, 2)
        self.assertIn("WEBHOOKD_THREADS", out.stderr)

    def test_check_config(self):
        """--check-config: a start's checks and its very error, before any file is read."""
        run = lambda args, **env: subprocess.run([BINARY, *args], capture_output=True, text=True, timeout=scaled(20),
                                                 env=dict(os.environ, **env))  # noqa: E731
        out = run(["--check-config", "--tls-cert-file=/nonexistent/tls.crt", "--tls-key-file=/nonexistent/tls.key",
                   "--revisions-dir=/nonexistent/revisions"])
        self.assertEqual((out.returncode, out.stdout, out.stderr), (0, "config ok\n", ""))
        for args, env, want in (
                (["--revisions-dir=/nonexistent"], {"WEBHOOKD_REVISIONS_SOURCE": "cluster"},
                 "--revisions-dir is read only with --revisions-source dir (or auto), not cluster"),
                (["--revisions-source=dir"], {}, "--revisions-source dir needs --revisions-dir"),
                (["--patch-ca-bundle"], {}, "--patch-ca-bundle needs --ca-bundle-mutating"),
                (["--tls-cert-file=/nonexistent"], {}, "--tls-cert-file and --tls-key-file go together"),
                (["--enable-alpha-gateway-api=maybe"], {}, "strconv.ParseBool"),
                (["--threads=2000"], {}, "--threads must be 0..1024")):
            with self.subTest(args=args, env=env):
                checked = run(["--check-config", *args], **env)
                self.assertEqual(checked.returncode, 2, checked.stdout + checked.stderr)
                self.assertIn(want, checked.stderr)
                started = run(["--listen=127.0.0.1:0", *args], **env)
                self.assertEqual((started.returncode, started.stderr), (2, checked.stderr))

    def test_environment_and_access_log(self):
        env = {"WEBHOOKD_LOG_LEVEL": "debug", "WEBHOOKD_MAX_REQUEST_BYTES": "1KiB", "WEBHOOKD_THREADS": "1"}
        with Server(env=env) as server:
            status, _, body = once(server.port, "POST", "/validate", b"x" * 1025)
            self.assertEqual((status, body), (413, b"Request entity too large: limit is 1024\n"))
            once(server.port, "POST", "/inject/rev/a", review("logged", dryRun=True))
            deadline = time.time() + scaled(10)
            while not [r for r in server.records() if r.get("uid") == "logged"] and time.time() < deadline:
                time.sleep(0.02)
            rec = [r for r in server.records() if r.get("uid") == "logged"][0]
            self.assertEqual((rec["level"], rec["endpoint"], rec["uid"], rec["status"], rec["dryRun"]),
                             ("debug", "inject", "logged", "200", "true"))
            self.assertEqual(rec["path"], "/inject/rev/a")
            results = ("allowed", "patched", "denied", "undecodable", "rejected")
            self.assertEqual(sum(metric(server, "webhookd_admission_reviews_total",
                                        '{endpoint="inject",result="%s"}' % r) for r in results), 1)


if __name__ == "__main__":
    unittest.main(verbosity=2)
