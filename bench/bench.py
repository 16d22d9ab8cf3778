#!/usr/bin/env python3
"""bench.py - throughput, latency and server CPU per request of one webhookd
endpoint, next to GET /healthz as the transport baseline, in the same run.

Starts webhookd pinned to one core (taskset) with one worker thread, drives
it from another core with wrk (HTTP/1.1 keep-alive, what the kube-apiserver
uses) and h2load (HTTP/2), and prints req/s, p50/p99 latency and the server
CPU time per request (utime+stime from /proc/PID/stat around each run).

    bench/bench.py --endpoint /validate --payload bench/review-destinationrule.json
    bench/bench.py --endpoint /inject --payload bench/review-pod.json -- --inject-flag=...

Arguments after "--" go to webhookd.  Reported, not asserted: loopback only,
runs are bounded (--duration per measurement, 4 measurements).
"""
import argparse
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime (fields 14, 15)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_ready(port, timeout=10):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    sys.exit("bench: webhookd did not start")


def run_wrk(url, payload, args, cpu):
    cmd = ["taskset", "-c", cpu, "wrk", "-t1", "-c%d" % args.connections, "-d%ds" % args.duration, "--latency"]
    env = dict(os.environ)
    if payload:
        env["WH_BENCH_PAYLOAD"] = payload
        cmd += ["-s", os.path.join(HERE, "post.lua")]
    out = subprocess.run(cmd + [url], capture_output=True, text=True, env=env, check=True).stdout

    def latency(pct):
        m = re.search(r"^\s+%s%%\s+([\d.]+)(us|ms|s)\s*$" % pct, out, re.M)
        scale = {"us": 1, "ms": 1e3, "s": 1e6}[m.group(2)]
        return float(m.group(1)) * scale

    requests = int(re.search(r"(\d+) requests in", out).group(1))
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    errors = re.search(r"Socket errors: (.*)", out)
    return {"requests": requests, "rps": float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)),
            "p50": latency(50), "p99": latency(99), "non2xx": int(bad.group(1)) if bad else 0,
            "errors": errors.group(1) if errors else ""}


def run_h2load(url, payload, args, cpu):
    with tempfile.NamedTemporaryFile(suffix=".log") as log:
        cmd = ["taskset", "-c", cpu, "h2load", "-D", str(args.duration), "-c", str(args.h2_clients), "-m",
               str(args.h2_streams), "-t", "1", "--log-file=" + log.name]
        if payload:
            cmd += ["-d", payload, "-H", "content-type: application/json"]
        out = subprocess.run(cmd + [url], capture_output=True, text=True, check=True).stdout
        lat = sorted(int(line.split("\t")[2]) for line in open(log.name) if line.count("\t") == 2)
    m = re.search(r"requests: (\d+) total, \d+ started, (\d+) done, (\d+) succeeded", out)
    # With -D, "done" counts only the measured window while the status codes count every response.
    codes = re.search(r"status codes: \d+ 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx", out)
    return {"requests": int(m.group(2)), "rps": float(re.search(r"finished in [\d.]+\w+, ([\d.]+) req/s", out).group(1)),
            "p50": lat[len(lat) // 2] if lat else 0, "p99": lat[min(len(lat) - 1, len(lat) * 99 // 100)] if lat else 0,
            "non2xx": sum(int(g) for g in codes.groups()), "errors": ""}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--endpoint", default="/validate", help="path to POST to (default /validate)")
    ap.add_argument("--payload", default=os.path.join(HERE, "review-destinationrule.json"),
                    help="request body (an AdmissionReview)")
    ap.add_argument("--webhookd", default=os.environ.get("WEBHOOKD", os.path.join(ROOT, "build-bench/server/webhookd")))
    ap.add_argument("--duration", type=int, default=5, help="seconds per measurement (default 5)")
    ap.add_argument("--connections", type=int, default=32, help="wrk connections (default 32)")
    ap.add_argument("--h2-clients", type=int, default=1, help="h2load connections (default 1)")
    ap.add_argument("--h2-streams", type=int, default=32, help="h2load concurrent streams (default 32)")
    ap.add_argument("--server-cpu", default="0")
    ap.add_argument("--client-cpu", default="1")
    ap.add_argument("extra", nargs="*", help="arguments for webhookd (after --)")
    args = ap.parse_args()
    if not os.access(args.webhookd, os.X_OK):
        sys.exit("bench: no webhookd at %s (build it: cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release "
                 "&& cmake --build build-bench --target webhookd, or pass --webhookd)" % args.webhookd)

    port = free_port()
    server = subprocess.Popen(["taskset", "-c", args.server_cpu, args.webhookd, "--listen=127.0.0.1:%d" % port,
                               "--threads=1", "--http2", "--log-level=warn"] + args.extra,
                              stdin=subprocess.DEVNULL)
    try:
        wait_ready(port)
        base = "https://127.0.0.1:%d" % port
        rows = []
        for name, path, payload in (("endpoint", args.endpoint, os.path.abspath(args.payload)),
                                    ("baseline", "/healthz", None)):
            for proto, runner in (("h1 wrk c=%d" % args.connections, run_wrk),
                                  ("h2 h2load c=%d m=%d" % (args.h2_clients, args.h2_streams), run_h2load)):
                before = cpu_seconds(server.pid)
                r = runner(base + path, payload, args, args.client_cpu)
                used = cpu_seconds(server.pid) - before
                r["cpu_us"] = used * 1e6 / r["requests"] if r["requests"] else 0
                rows.append(("POST " + path if payload else "GET " + path, proto, r))
        size = os.path.getsize(args.payload)
        print("webhookd bench: server on CPU %s (1 thread), client on CPU %s, %d s per run, payload %s (%d B)"
              % (args.server_cpu, args.client_cpu, args.duration, os.path.basename(args.payload), size))
        print("%-22s %-20s %10s %10s %10s %12s %8s" % ("request", "client", "req/s", "p50 us", "p99 us",
                                                       "CPU us/req", "non-2xx"))
        for req, proto, r in rows:
            print("%-22s %-20s %10.0f %10.0f %10.0f %12.1f %8d%s" % (req, proto, r["rps"], r["p50"], r["p99"],
                                                                     r["cpu_us"], r["non2xx"],
                                                                     "  " + r["errors"] if r["errors"] else ""))
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(30)


if __name__ == "__main__":
    main()
