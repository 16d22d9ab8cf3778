"""whtest - start the real webhookd binary and talk to it over real TLS.

Shared by the integration tests (and usable by other areas' tests that need a
running server).  The binary comes from $WEBHOOKD (set by ctest); a command
prefix such as valgrind comes from $WH_TEST_WRAPPER, and $WH_TEST_SLOW scales
every timeout for slow runs (valgrind).
"""
import json
import os
import re
import shlex
import signal
import socket
import ssl
import subprocess
import tempfile
import threading
import time

BINARY = os.environ.get("WEBHOOKD", "webhookd")
WRAPPER = shlex.split(os.environ.get("WH_TEST_WRAPPER", ""))
SLOW = float(os.environ.get("WH_TEST_SLOW", "1"))


def scaled(seconds):
    return seconds * SLOW


def review(uid="uid-1", api_version="admission.k8s.io/v1", **request):
    req = {"uid": uid, "kind": {"group": "", "version": "v1", "kind": "Pod"},
           "resource": {"group": "", "version": "v1", "resource": "pods"},
           "namespace": "default", "operation": "CREATE", "userInfo": {"username": "test"},
           "object": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}}
    req.update(request)
    return json.dumps({"apiVersion": api_version, "kind": "AdmissionReview", "request": req}).encode()


class Server:
    """One webhookd process; use as a context manager."""

    def __init__(self, *args, env=None, threads=2):
        self.args = list(args)
        if not any(a.startswith("--listen") for a in self.args):
            self.args.append("--listen=127.0.0.1:0")
        if not any(a.startswith("--threads") for a in self.args):
            self.args.append("--threads=%d" % threads)
        self.env = dict(os.environ)
        self.env.update(env or {})
        self.lines = []
        self.lock = threading.Lock()
        self.proc = None
        self.port = None

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, exc_type, *exc):
        """Stop the server; unless the test already failed, its exit status
        must be 0 (under valgrind/ASan a memory error makes it non-zero)."""
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(scaled(20))
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc:
            self.reader.join(scaled(5))  # the rest of the log, up to EOF
            self.proc.stderr.close()
            if exc_type is None and self.proc.returncode != 0:
                raise AssertionError("webhookd exited with status %d:\n%s" % (self.proc.returncode, self.log()))

    def start(self):
        cmd = WRAPPER + [BINARY] + self.args
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, env=self.env)
        self.reader = threading.Thread(target=self._read_stderr, daemon=True)
        self.reader.start()
        deadline = time.time() + scaled(15)
        while time.time() < deadline:
            for rec in self.records():
                if rec.get("msg") == "listening":
                    self.port = int(rec["address"].rsplit(":", 1)[1])
                    return
            if self.proc.poll() is not None:
                break
            time.sleep(0.02)
        raise RuntimeError("webhookd did not start:\n" + self.log())

    def _read_stderr(self):
        for raw in self.proc.stderr:
            with self.lock:
                self.lines.append(raw.decode(errors="replace"))

    def log(self):
        with self.lock:
            return "".join(self.lines)

    def records(self):
        """The JSON log lines so far (other lines, e.g. valgrind's, skipped)."""
        out = []
        for line in self.log().splitlines():
            if line.startswith("{"):
                try:
                    out.append(json.loads(line))
                except ValueError:
                    pass
        return out

    def wait_log(self, msg, after=0, timeout=10):
        deadline = time.time() + scaled(timeout)
        while time.time() < deadline:
            recs = self.records()[after:]
            for rec in recs:
                if rec.get("msg") == msg:
                    return rec
            time.sleep(0.02)
        raise AssertionError("no log line %r; log:\n%s" % (msg, self.log()))

    def stop(self, sig=signal.SIGTERM, timeout=20):
        """Signal the server and wait; returns (exit status, seconds taken)."""
        start = time.time()
        self.proc.send_signal(sig)
        status = self.proc.wait(scaled(timeout))
        took = time.time() - start
        self.reader.join(scaled(5))  # the whole log is in self.lines from here on
        return status, took

    @property
    def url(self):
        return "https://127.0.0.1:%d" % self.port


def client_context(alpn=("http/1.1",), cafile=None, **kw):
    ctx = ssl.create_default_context(cafile=cafile) if cafile else ssl._create_unverified_context()
    if not cafile:
        ctx.check_hostname = False
    if alpn:
        ctx.set_alpn_protocols(list(alpn))
    for k, v in kw.items():
        setattr(ctx, k, v)
    return ctx


def connect(port, ctx=None, timeout=10):
    raw = socket.create_connection(("127.0.0.1", port), timeout=scaled(timeout))
    return (ctx or client_context()).wrap_socket(raw, server_hostname="localhost")


def read_response(sock, buf=b""):
    """Read one HTTP/1.1 response (Content-Length framed) from a socket, `buf`
    being its first bytes when some were already read.
    Returns (status, headers dict with lower-case names, body bytes)."""
    while b"\r\n\r\n" not in buf:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("connection closed before the response headers: %r" % buf)
        buf += chunk
    head, body = buf.split(b"\r\n\r\n", 1)
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        k, v = line.split(":", 1)
        headers[k.strip().lower()] = v.strip()
    if "transfer-encoding" in headers:
        raise AssertionError("chunked response: %r" % headers)
    length = int(headers["content-length"])
    while len(body) < length:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("connection closed inside the body")
        body += chunk
    return status, headers, body[:length]


def request(sock, method, path, body=None, content_type="application/json", extra=b""):
    """Send one HTTP/1.1 request on a connected socket and read the answer."""
    head = "%s %s HTTP/1.1\r\nHost: localhost\r\n" % (method, path)
    if content_type is not None and body is not None:
        head += "Content-Type: %s\r\n" % content_type
    if body is not None:
        head += "Content-Length: %d\r\n" % len(body)
    sock.sendall(head.encode() + extra + b"\r\n" + (body or b""))
    return read_response(sock)


class FirstFlight:
    """A TLS client connection (the socket calls H2 makes) whose first bytes
    leave with the handshake's last flight, the client's Finished and them in
    one write, as a client that writes at once after connecting sends them:
    the server reads both at once (server/wh_server_h2o.c, P17)."""

    def __init__(self, port, ctx, first, timeout=10):
        self.raw = socket.create_connection(("127.0.0.1", port), timeout=scaled(timeout))
        self.incoming, self.outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
        self.tls = ctx.wrap_bio(self.incoming, self.outgoing, server_hostname="localhost")
        while True:
            try:
                self.tls.do_handshake()
                break
            except ssl.SSLWantReadError:
                self.raw.sendall(self.outgoing.read())
                self.fill()
        self.sendall(first)  # after the Finished still in `outgoing`

    def fill(self):
        got = self.raw.recv(65536)
        if not got:
            raise ConnectionError("connection closed")
        self.incoming.write(got)

    def selected_alpn_protocol(self):
        return self.tls.selected_alpn_protocol()

    def sendall(self, data):
        self.tls.write(data)
        self.raw.sendall(self.outgoing.read())

    def recv(self, n):
        while True:
            try:
                return self.tls.read(n)
            except ssl.SSLWantReadError:
                try:
                    self.fill()
                except ConnectionError:
                    return b""
            except ssl.SSLZeroReturnError:
                return b""

    def close(self):
        self.raw.close()


class H2:
    """A minimal HTTP/2 client (h2 over ALPN; HPACK literals out, the static
    table and literal :status in) for tests that need frame-level control:
    streams opened and bodies sent piece by piece, every frame the server
    sends seen (GOAWAY, RST_STREAM).  SETTINGS and PING are acknowledged.
    `first`: frames sent with the preface and the handshake's last flight
    (FirstFlight); their streams are the client's first (1, 3, ...), as are
    those of `then`, sent with the preface in one write once the handshake
    is over (a client that writes them at once).  prior_knowledge: the
    context does not offer h2 in ALPN; the preface alone says HTTP/2
    (RFC 9113 3.3)."""

    PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
    STATIC_STATUS = {0x88: 200, 0x89: 204, 0x8a: 206, 0x8b: 304, 0x8c: 400, 0x8d: 404, 0x8e: 500}

    def __init__(self, port, ctx, timeout=10, first=b"", first_streams=0, then=b"", prior_knowledge=False):
        hello = self.PREFACE + self.frame(4, 0, 0)
        self.sock = FirstFlight(port, ctx, hello + first, timeout) if first else connect(port, ctx, timeout)
        want = (None, "http/1.1") if prior_knowledge else ("h2",)
        assert self.sock.selected_alpn_protocol() in want, self.sock.selected_alpn_protocol()
        self.inbuf, self.next_id = b"", 1 + 2 * first_streams
        self.goaway = None  # (last stream id, error code) of the last GOAWAY
        self.resets, self.status, self.body, self.ended = {}, {}, {}, set()
        self.conn_credit = 0  # what the server's WINDOW_UPDATEs on the connection gave back
        if not first:
            self.sock.sendall(hello + then)

    @staticmethod
    def frame(ftype, flags, sid, payload=b""):
        return len(payload).to_bytes(3, "big") + bytes([ftype, flags]) + sid.to_bytes(4, "big") + payload

    @classmethod
    def headers_frame(cls, sid, method, path, length=None, end=False):
        def literal(name, value):
            return b"\x00" + bytes([len(name)]) + name + bytes([len(value)]) + value
        fields = [(b":method", method.encode()), (b":scheme", b"https"), (b":authority", b"localhost"),
                  (b":path", path.encode()), (b"content-type", b"application/json")]
        if length is not None:
            fields.append((b"content-length", str(length).encode()))
        return cls.frame(1, 4 | (1 if end else 0), sid, b"".join(literal(k, v) for k, v in fields))

    def headers(self, method, path, length=None, end=False):
        """Open a stream; returns its id."""
        sid, self.next_id = self.next_id, self.next_id + 2
        self.sock.sendall(self.headers_frame(sid, method, path, length, end))
        return sid

    def data(self, sid, payload, end=False):
        for off in range(0, max(len(payload), 1), 16384):  # SETTINGS_MAX_FRAME_SIZE's default
            last = end and off + 16384 >= len(payload)
            self.sock.sendall(self.frame(0, 1 if last else 0, sid, payload[off:off + 16384]))

    def read_frame(self):
        """The next frame (type, flags, stream id, payload); None at the end of the connection."""
        while len(self.inbuf) < 9 or len(self.inbuf) < 9 + int.from_bytes(self.inbuf[:3], "big"):
            try:
                got = self.sock.recv(65536)
            except (ConnectionError, ssl.SSLError):
                got = b""
            if not got:
                return None
            self.inbuf += got
        n = int.from_bytes(self.inbuf[:3], "big")
        ftype, flags, sid = self.inbuf[3], self.inbuf[4], int.from_bytes(self.inbuf[5:9], "big") & 0x7FFFFFFF
        payload, self.inbuf = self.inbuf[9:9 + n], self.inbuf[9 + n:]
        if ftype == 4 and not flags & 1:
            self.sock.sendall(self.frame(4, 1, 0))
        elif ftype == 6 and not flags & 1:
            self.sock.sendall(self.frame(6, 1, 0, payload))
        elif ftype == 7:
            self.goaway = (int.from_bytes(payload[:4], "big") & 0x7FFFFFFF, int.from_bytes(payload[4:8], "big"))
        elif ftype == 3:
            self.resets[sid] = int.from_bytes(payload[:4], "big")
        elif ftype == 8 and sid == 0:
            self.conn_credit += int.from_bytes(payload[:4], "big") & 0x7FFFFFFF
        elif ftype == 1:
            if payload[0] in (0x08, 0x18, 0x48) and payload[1] == 3:  # literal :status (static name 8)
                self.status[sid] = int(payload[2:5])
            else:
                self.status[sid] = self.STATIC_STATUS.get(payload[0], -1)
        elif ftype == 0:
            self.body[sid] = self.body.get(sid, b"") + payload
        if ftype in (0, 1) and flags & 1:
            self.ended.add(sid)
        return ftype, flags, sid, payload

    def ping(self):
        """PING and wait for its ACK: the server has handled every frame sent before."""
        self.sock.sendall(self.frame(6, 0, 0, b"wh-ping!"))
        while True:
            got = self.read_frame()
            if got is None:
                raise ConnectionError("connection closed before the PING ACK")
            if got[0] == 6 and got[1] & 1 and got[3] == b"wh-ping!":
                return

    def response(self, sid):
        """Read until stream `sid` ends or is reset: (status or None, body, RST_STREAM code or None)."""
        while sid not in self.ended and sid not in self.resets:
            if self.read_frame() is None:
                raise ConnectionError("connection closed before stream %d ended" % sid)
        return self.status.get(sid), self.body.get(sid, b""), self.resets.get(sid)

    def request(self, method, path, body):
        sid = self.headers(method, path, len(body))
        self.data(sid, body, end=True)
        return self.response(sid)

    def read_until_closed(self):
        """Read every frame until the server ends the connection; False if it stays open past the timeout."""
        try:
            while self.read_frame() is not None:
                pass
        except socket.timeout:
            return False
        return True

    def close(self):
        self.sock.close()


def once(port, method, path, body=None, **kw):
    with connect(port) as s:
        return request(s, method, path, body, **kw)


def metric(server, name, labels=""):
    """The value of one series from /metrics (0 when absent)."""
    status, _, body = once(server.port, "GET", "/metrics")
    assert status == 200
    pat = re.compile(r"^%s%s (\S+)$" % (re.escape(name), re.escape(labels)), re.M)
    m = pat.search(body.decode())
    return float(m.group(1)) if m else 0.0


def self_signed(directory, name="localhost"):
    """Write a fresh P-256 cert/key pair with openssl; returns (cert, key, serial)."""
    cert = os.path.join(directory, "tls.crt")
    key = os.path.join(directory, "tls.key")
    tmpc, tmpk = cert + ".new", key + ".new"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                    "-nodes", "-days", "2", "-subj", "/CN=" + name,
                    "-addext", "subjectAltName=DNS:%s,IP:127.0.0.1" % name,
                    "-keyout", tmpk, "-out", tmpc], check=True, capture_output=True)
    serial = subprocess.run(["openssl", "x509", "-in", tmpc, "-noout", "-serial"], check=True,
                            capture_output=True, text=True).stdout.strip().split("=")[1]
    return tmpc, tmpk, serial


def install(tmpc, tmpk, cert, key):
    """Replace a pair the way a careful writer does: each file atomically."""
    os.rename(tmpk, key)
    os.rename(tmpc, cert)


def peer_serial(port, ctx=None):
    with connect(port, ctx) as s:
        der = s.getpeercert(binary_form=True)
    with tempfile.NamedTemporaryFile(suffix=".der") as f:
        f.write(der)
        f.flush()
        out = subprocess.run(["openssl", "x509", "-inform", "der", "-in", f.name, "-noout", "-serial"],
                             check=True, capture_output=True, text=True).stdout
    return out.strip().split("=")[1]
