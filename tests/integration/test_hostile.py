#!/usr/bin/env python3
"""Hostile clients and hostile revisions (issue #15): each finding of the
outside probe of webhookd, replayed against the real binary on loopback.

Each TestCase class is one ctest test (see CMakeLists.txt); every load-style
case is bounded in time and in size so that it runs in seconds, and each
asserts the bound that the finding broke (memory, latency, readiness).
"""
import json
import os
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from whtest import Server, connect, once, read_response, request, review, scaled  # noqa: E402

WEBHOOKCTL = os.environ.get("WEBHOOKCTL", "")


def closed_after(sock, timeout=5):
    """True when the server closes the connection (EOF) within `timeout`."""
    sock.settimeout(scaled(timeout))
    try:
        return sock.recv(1) == b""
    except (ConnectionError, socket.timeout, OSError):
        return False


def validate_review(group, version, resource, uid="u"):
    return review(uid=uid, kind={"group": group, "version": version, "kind": "DestinationRule"},
                  resource={"group": group, "version": version, "resource": resource},
                  object={"apiVersion": "%s/%s" % (group, version), "kind": "DestinationRule",
                          "metadata": {"name": "dr"}, "spec": {"host": "a"}})


class TestMetricLabels(unittest.TestCase):
    """Finding 1: galley_validation_* labels came from the request, so any
    client could add unbounded series (400 x 1 MB groups = 400 MB RSS)."""

    def test_labels_from_closed_sets(self):
        with Server() as srv:
            with connect(srv.port) as s:
                for i in range(40):
                    big = "g%d-" % i + "x" * 100000
                    status, _, _ = request(s, "POST", "/validate", validate_review(big, "v%d" % i, big))
                    self.assertEqual(status, 200)
                status, _, _ = request(s, "POST", "/validate",
                                       validate_review("networking.istio.io", "v1", "destinationrules"))
                self.assertEqual(status, 200)
                status, _, _ = request(s, "POST", "/validate",
                                       validate_review("networking.istio.io", "v9-" + "y" * 1000, "destinationrules"))
                status, _, body = request(s, "GET", "/metrics")
            self.assertEqual(status, 200)
            text = body.decode()
            self.assertLess(len(body), 64 * 1024, "metrics grew with the requests' labels")
            self.assertNotIn("xxxxxxxx", text)
            self.assertIn('galley_validation_failed{group="other",version="other",resource="other",reason="unknown_type"} 40', text)
            self.assertIn('galley_validation_passed{group="networking.istio.io",version="v1",'
                          'resource="destinationrules"} 1', text)
            self.assertIn('galley_validation_passed{group="networking.istio.io",version="other",'
                          'resource="destinationrules"} 1', text)


class TestFraming(unittest.TestCase):
    """Finding 9: conflicting framing was accepted and kept alive (request
    smuggling behind a proxy), and a uid holding \\u0000 came back cut."""

    def raw(self, port, head, body, wait=5):
        with connect(port) as s:
            s.sendall(head.encode() + b"\r\n" + body)
            status, headers, answer = read_response(s)
            return status, headers, answer, closed_after(s, wait)

    def test_conflicting_lengths_and_chunked(self):
        body = review()
        with Server() as srv:
            base = "POST /validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            cases = [
                ("Content-Length: %d\r\nContent-Length: %d\r\n" % (len(body), len(body) + 5), body + b"xxxxx"),
                ("Content-Length: %d, %d\r\n" % (len(body), len(body) - 1), body),
                ("Content-Length: %d\r\nTransfer-Encoding: chunked\r\n" % len(body),
                 b"%x\r\n" % len(body) + body + b"\r\n0\r\n\r\n"),
                ("Transfer-Encoding: chunked\r\nContent-Length: %d\r\n" % len(body),
                 b"%x\r\n" % len(body) + body + b"\r\n0\r\n\r\n"),
            ]
            for extra, payload in cases:
                status, headers, answer, closed = self.raw(srv.port, base + extra, payload)
                self.assertEqual(status, 400, (extra, answer))
                self.assertTrue(b"conflicting Content-Length" in answer or b"broken content-length" in answer)
                self.assertTrue(closed, "connection kept alive after %r" % extra)
            # The same value twice is one length (RFC 9112 allows it): served, kept alive.
            status, _, answer, closed = self.raw(
                srv.port, base + "Content-Length: %d\r\ncontent-length: %d\r\n" % (len(body), len(body)), body, wait=0.5)
            self.assertEqual(status, 200, answer)
            self.assertFalse(closed)

    def test_uid_echoed_byte_exact(self):
        with Server() as srv:
            for path in ("/validate", "/inject"):
                for uid in ("a\u0000b", "\u0000", "x\u0000\u00e9\u2028y"):
                    status, _, answer = once(srv.port, "POST", path, review(uid=uid))
                    self.assertEqual(status, 200)
                    self.assertEqual(json.loads(answer)["response"]["uid"], uid)


class TestShutdownDelay(unittest.TestCase):
    """Finding 9: SIGTERM closed the listener at once, so connections the
    API server opened before the endpoint was removed were refused."""

    def test_keeps_serving_during_the_delay(self):
        srv = Server("--shutdown-delay=2s")
        srv.start()
        try:
            keep = connect(srv.port)
            self.assertEqual(request(keep, "GET", "/healthz")[0], 200)
            start = time.time()
            srv.proc.send_signal(signal.SIGTERM)
            srv.wait_log("shutdown delay: still serving before closing the listener")
            # New connections are still accepted and served ...
            status, headers, _ = once(srv.port, "POST", "/validate", review())
            self.assertEqual(status, 200)
            self.assertEqual(headers.get("connection"), "close")
            # ... readiness says we are going away, and keep-alives are told to move.
            self.assertEqual(once(srv.port, "GET", "/readyz")[0], 503)
            status, headers, _ = request(keep, "GET", "/healthz")
            self.assertEqual((status, headers.get("connection")), (200, "close"))
            keep.close()
            status = srv.proc.wait(scaled(20))
            self.assertEqual(status, 0)
            self.assertGreaterEqual(time.time() - start, 1.9)
            with self.assertRaises(OSError):
                once(srv.port, "GET", "/healthz")
        finally:
            if srv.proc.poll() is None:
                srv.proc.kill()
            srv.proc.wait()

    def test_second_signal_ends_the_delay(self):
        srv = Server("--shutdown-delay=60s")
        srv.start()
        start = time.time()
        srv.proc.send_signal(signal.SIGTERM)
        srv.wait_log("shutdown delay: still serving before closing the listener")
        srv.proc.send_signal(signal.SIGTERM)
        self.assertEqual(srv.proc.wait(scaled(20)), 0)
        self.assertLess(time.time() - start, 20)


@unittest.skipUnless(os.access(WEBHOOKCTL, os.X_OK), "$WEBHOOKCTL is not set (run through ctest)")
class TestKeyFiles(unittest.TestCase):
    """Finding 9: `certs generate` opened the key with O_CREAT|O_TRUNC 0666
    then chmod'ed it (following a symlink planted at that path, and readable
    in between), and --self-signed-cert-out used a predictable temp name."""

    def test_generate_replaces_a_symlink_instead_of_following_it(self):
        with tempfile.TemporaryDirectory() as d:
            victim = os.path.join(d, "victim")
            with open(victim, "w") as f:
                f.write("precious\n")
            os.chmod(victim, 0o644)
            key, crt = os.path.join(d, "tls.key"), os.path.join(d, "tls.crt")
            os.symlink(victim, key)
            old = os.umask(0)
            try:
                out = subprocess.run([WEBHOOKCTL, "certs", "generate", "--dns-name", "x.svc", "--cert-file", crt,
                                      "--key-file", key], capture_output=True, text=True, timeout=60)
            finally:
                os.umask(old)
            self.assertEqual(out.returncode, 0, out.stderr)
            with open(victim) as f:
                self.assertEqual(f.read(), "precious\n")
            st = os.lstat(key)
            self.assertTrue(stat.S_ISREG(st.st_mode))
            self.assertEqual(stat.S_IMODE(st.st_mode), 0o600)
            self.assertEqual(stat.S_IMODE(os.lstat(crt).st_mode), 0o644)
            self.assertEqual(sorted(os.listdir(d)), ["tls.crt", "tls.key", "victim"])  # no temporary left

    def test_self_signed_cert_out_through_a_unique_temporary(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "ca.crt")
            victim = os.path.join(d, "victim")
            with open(victim, "w") as f:
                f.write("precious\n")
            os.symlink(victim, out)
            # The old code wrote through "<out>.tmp.<pid>": plant that for the next pids.
            base = os.getpid()
            for pid in range(base, base + 200):
                os.symlink(victim, "%s.tmp.%d" % (out, pid))
            with Server("--self-signed-cert-out=" + out):
                pass
            with open(victim) as f:
                self.assertEqual(f.read(), "precious\n")
            self.assertTrue(stat.S_ISREG(os.lstat(out).st_mode))
            with open(out) as f:
                self.assertIn("BEGIN CERTIFICATE", f.read())


if __name__ == "__main__":
    unittest.main()
