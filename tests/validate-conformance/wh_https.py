"""wh_https - start the real webhookd over TLS and talk raw HTTP/1.1 to it.

Used by the validation conformance and robustness runners: requests are
written byte for byte (so a test can omit Content-Type or send an oversized
body) over one keep-alive TLS connection, reconnecting when the server closes.
"""
import json
import os
import shlex
import signal
import socket
import ssl
import subprocess
import tempfile
import threading
import time

SLOW = int(os.environ.get("WH_TEST_SLOW", "1") or 1)


class Webhookd:
    """One webhookd process on 127.0.0.1 with a self-signed certificate; a context manager."""

    def __init__(self, binary, *extra):
        self.binary = binary
        self.extra = list(extra)
        self.dir = tempfile.TemporaryDirectory(prefix="wh-validate-")
        self.ca = os.path.join(self.dir.name, "ca.pem")
        self.proc = None
        self.port = None
        self.log = []
        self.conn = None
        self.exit_problem = None  # set by stop() when webhookd did not end cleanly

    def __enter__(self):
        cmd = [self.binary, "--listen=127.0.0.1:0", "--threads=2", "--log-format=json", "--log-level=info",
               "--self-signed-cert-out=" + self.ca] + self.extra
        # $WH_TEST_WRAPPER (e.g. valgrind) runs in front of webhookd; $WH_TEST_SLOW scales the waits.
        cmd = shlex.split(os.environ.get("WH_TEST_WRAPPER", "")) + cmd
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, text=True)
        ready = threading.Event()

        def read():
            for line in self.proc.stderr:
                self.log.append(line)
                try:
                    rec = json.loads(line)
                except ValueError:
                    continue
                if rec.get("msg") == "listening" and self.port is None:
                    self.port = int(str(rec.get("address", "")).rsplit(":", 1)[1])
                    ready.set()

        threading.Thread(target=read, daemon=True).start()
        if not ready.wait(20 * SLOW):
            self.stop()
            raise RuntimeError("webhookd did not start:\n" + "".join(self.log[-20:]))
        return self

    def __exit__(self, *exc):
        self.stop()

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def stop(self):
        if self.conn:
            self.conn.close()
            self.conn = None
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20 * SLOW)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                self.exit_problem = "did not drain within %d s" % (20 * SLOW)
        if self.proc and self.exit_problem is None and self.proc.returncode != 0:
            # a drain ends with 0; anything else (a crash, valgrind's error exit) is a failure
            self.exit_problem = "exited with %s:\n%s" % (self.proc.returncode, "".join(self.log[-20:]))
        self.dir.cleanup()

    def _connect(self):
        ctx = ssl.create_default_context(cafile=self.ca)
        raw = socket.create_connection(("127.0.0.1", self.port), timeout=30)
        return ctx.wrap_socket(raw, server_hostname="localhost")

    def request(self, method, path, body=b"", content_type="application/json", close=False):
        """Send one request; returns (status, headers dict, body bytes) or None when the server closed
        the connection without answering."""
        head = "%s %s HTTP/1.1\r\nHost: localhost\r\nContent-Length: %d\r\n" % (method, path, len(body))
        if content_type is not None:
            head += "Content-Type: %s\r\n" % content_type
        if close:
            head += "Connection: close\r\n"
        data = head.encode() + b"\r\n" + body
        for attempt in range(2):
            if self.conn is None:
                self.conn = _Conn(self._connect())
            try:
                try:
                    self.conn.sock.sendall(data)
                except (BrokenPipeError, ConnectionResetError, ssl.SSLError):
                    pass  # the server may answer (413) before reading everything
                resp = self.conn.read_response()
            except (ConnectionError, ssl.SSLError, socket.timeout):
                resp = None
            if resp is None or close or resp[1].get("connection", "").lower() == "close":
                self.conn.close()
                self.conn = None
            if resp is not None or attempt == 1:
                return resp
        return None


class _Conn:
    def __init__(self, sock):
        self.sock = sock
        self.buf = b""

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def _fill(self):
        chunk = self.sock.recv(65536)
        if not chunk:
            raise ConnectionError("closed")
        self.buf += chunk

    def _line(self):
        while b"\r\n" not in self.buf:
            self._fill()
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _exact(self, n):
        while len(self.buf) < n:
            self._fill()
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def read_response(self):
        try:
            status_line = self._line()
        except ConnectionError:
            return None
        status = int(status_line.split()[1])
        headers = {}
        while True:
            line = self._line()
            if not line:
                break
            k, v = line.decode("latin-1").split(":", 1)
            headers[k.strip().lower()] = v.strip()
        if headers.get("transfer-encoding", "").lower() == "chunked":
            body = b""
            while True:
                size = int(self._line().split(b";")[0], 16)
                if size == 0:
                    self._line()
                    break
                body += self._exact(size)
                self._line()
        else:
            body = self._exact(int(headers.get("content-length", "0")))
        return status, headers, body


def wait_until(pred, timeout=10):
    end = time.time() + timeout
    while time.time() < end:
        if pred():
            return True
        time.sleep(0.05)
    return pred()
