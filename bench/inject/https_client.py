#!/usr/bin/env python3
"""https_client.py PORT PATH BODY N [DEPTH] - N requests on one keep-alive TLS
connection to webhookd on 127.0.0.1:PORT (GET for /healthz, else POST BODY as
application/json), each answer read in full before the next: a fixed number of
requests for compare.sh's per-request instruction counts.  With DEPTH, DEPTH
requests at a time are written together (HTTP/1.1 pipelining) and their
answers read: webhookd then serves them back to back, without sleeping
between requests."""
import socket
import ssl
import sys
import time


def main():
    port, path, body_file, n = int(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])
    depth = int(sys.argv[5]) if len(sys.argv) > 5 else 1
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    for _ in range(1200):  # webhookd under valgrind starts slowly
        try:
            s = ctx.wrap_socket(socket.create_connection(("127.0.0.1", port)), server_hostname="localhost")
            break
        except OSError:
            time.sleep(0.1)
    else:
        sys.exit("no connection to 127.0.0.1:%d" % port)
    if path == "/healthz":
        req = b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n"
    else:
        body = open(body_file, "rb").read()
        req = (b"POST %s HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"
               % (path.encode(), len(body)) + body)
    buf = b""
    for done in range(0, n, depth):
        batch = min(depth, n - done)
        s.sendall(req * batch)
        for _ in range(batch):
            while b"\r\n\r\n" not in buf:
                buf += s.recv(65536)
            head, rest = buf.split(b"\r\n\r\n", 1)
            if not head.startswith(b"HTTP/1.1 200"):
                sys.exit("answer: %r" % head[:100])
            length = int([ln.split(b":", 1)[1] for ln in head.split(b"\r\n")
                          if ln.lower().startswith(b"content-length")][0])
            while len(rest) < length:
                rest += s.recv(65536)
            buf = rest[length:]
    s.close()


if __name__ == "__main__":
    main()
