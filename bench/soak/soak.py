#!/usr/bin/env python3
"""soak.py - webhookd under millions of mixed requests: does its memory and
CPU per request stay flat?  (issue #15; README "Memory and soak".)

Starts the real webhookd (TLS, the corpus' default revision, --threads 2),
drives it with wrk (C, HTTP/1.1 keep-alive, bench/soak/mix.lua: 60 % /inject,
20 % /validate, 10 % /healthz+/readyz, 5 % /metrics, 5 % malformed or
denied) until webhookd has answered --requests requests, and every
--interval seconds samples webhookd's RSS (/proc/PID/status) and CPU time
(/proc/PID/stat utime+stime) beside the requests answered so far (its own
webhookd_http_requests_total, scraped over one keep-alive connection).
First 10 s of GET /healthz alone give the same run's transport baseline.
Prints RSS start/peak/end, CPU us per request in ten phases of equal request
counts, the first and last 10 % compared, and the answers by status code.

    bench/soak/soak.py --webhookd build/server/webhookd --requests 5000000

Reported, not asserted (shared machines are noisy); loopback only.
"""
import argparse
import http.client
import json
import os
import re
import signal
import socket
import ssl
import subprocess
import sys
import shutil
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime


def status_kib(pid, field):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise KeyError(field)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Scraper:
    """webhookd's answers so far, by path and code, over one keep-alive connection."""

    def __init__(self, port):
        ctx = ssl.create_default_context()
        ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
        self.conn = http.client.HTTPSConnection("127.0.0.1", port, context=ctx, timeout=30)

    def answered(self):
        try:
            self.conn.request("GET", "/metrics")
            text = self.conn.getresponse().read().decode()
        except (http.client.RemoteDisconnected, ConnectionError):  # idle past webhookd's keep-alive timeout
            self.conn.close()
            self.conn.request("GET", "/metrics")
            text = self.conn.getresponse().read().decode()
        by = {}
        for m in re.finditer(r'^webhookd_http_requests_total\{path="([^"]*)",code="(\d+)"\} (\d+)', text, re.M):
            by[(m.group(1), m.group(2))] = int(m.group(3))
        self.reviews = {"%s %s" % m.groups()[:2]: int(m.group(3)) for m in re.finditer(
            r'^webhookd_admission_reviews_total\{endpoint="([^"]*)",result="([^"]*)"\} (\d+)', text, re.M)}
        return by


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--webhookd", default=os.environ.get("WEBHOOKD", os.path.join(ROOT, "build/server/webhookd")))
    ap.add_argument("--corpus", default=os.path.join(ROOT, "..", "shared", "conformance", "istio-inject", "master"),
                    help="an injection golden set (its default settings become the revision)")
    ap.add_argument("--requests", type=int, default=5000000, help="answers to wait for (default 5,000,000)")
    ap.add_argument("--interval", type=float, default=5, help="seconds between samples (default 5)")
    ap.add_argument("--connections", type=int, default=16, help="wrk keep-alive connections (default 16)")
    ap.add_argument("--threads", type=int, default=2, help="webhookd worker threads (default 2)")
    ap.add_argument("--baseline", type=int, default=10, help="seconds of GET /healthz alone first (default 10)")
    ap.add_argument("--json", help="also write the samples and the summary to this file")
    ap.add_argument("--markdown", action="store_true", help="also print the phases as a Markdown table (for READMEs)")
    args = ap.parse_args()
    if not os.access(args.webhookd, os.X_OK):
        sys.exit("soak: no webhookd at %s (build it, or pass --webhookd)" % args.webhookd)

    work = tempfile.mkdtemp(prefix="wh-soak-")
    subprocess.run([sys.executable, os.path.join(ROOT, "bench", "inject", "make_reviews.py"), args.corpus, work],
                   check=True, stdout=subprocess.DEVNULL)
    port = free_port()
    log = open(os.path.join(work, "webhookd.log"), "w")
    server = subprocess.Popen([args.webhookd, "--listen=127.0.0.1:%d" % port, "--threads=%d" % args.threads,
                               "--revisions-dir=" + os.path.join(work, "revisions"),
                               "--self-signed-cert-out=" + os.path.join(work, "ca.pem"), "--log-level=error"],
                              stdin=subprocess.DEVNULL, stdout=log, stderr=log)
    wrk = None
    try:
        deadline = time.time() + 15
        while True:
            try:
                scraper = Scraper(port)
                scraper.answered()
                break
            except OSError:
                if time.time() > deadline or server.poll() is not None:
                    sys.exit("soak: webhookd did not start (see %s)" % log.name)
                time.sleep(0.1)
        pid = server.pid
        env = dict(os.environ, WH_SOAK_INJECT=os.path.join(work, "hello.json"),
                   WH_SOAK_VALIDATE=os.path.join(ROOT, "bench", "review-destinationrule.json"))
        rss_start = status_kib(pid, "VmRSS")
        # The transport baseline of this run: GET /healthz alone, same connections, same machine load.
        before, c0 = sum(scraper.answered().values()), cpu_seconds(pid)
        subprocess.run(["wrk", "-t1", "-c%d" % args.connections, "-d%ds" % args.baseline,
                        "https://127.0.0.1:%d/healthz" % port], check=True, stdout=subprocess.DEVNULL)
        n = sum(scraper.answered().values()) - before
        baseline_us = (cpu_seconds(pid) - c0) * 1e6 / max(n, 1)
        t0, cpu0 = time.time(), cpu_seconds(pid)
        samples = [{"t": 0.0, "requests": sum(scraper.answered().values()), "cpu": 0.0, "rss_kib": rss_start}]
        wrk = subprocess.Popen(["wrk", "-t1", "-c%d" % args.connections, "-d24h", "-s", os.path.join(HERE, "mix.lua"),
                                "https://127.0.0.1:%d" % port], env=env, stdout=subprocess.PIPE, text=True)
        while True:
            time.sleep(args.interval)
            if wrk.poll() is not None or server.poll() is not None:
                sys.exit("soak: %s exited early" % ("wrk" if server.poll() is None else "webhookd"))
            by = scraper.answered()
            s = {"t": time.time() - t0, "requests": sum(by.values()), "cpu": cpu_seconds(pid) - cpu0,
                 "rss_kib": status_kib(pid, "VmRSS")}
            samples.append(s)
            print("soak: %7.0f s %9d answered  RSS %6.1f MiB  CPU %7.1f s" %
                  (s["t"], s["requests"], s["rss_kib"] / 1024, s["cpu"]), file=sys.stderr, flush=True)
            if s["requests"] - samples[0]["requests"] >= args.requests:
                break
        wrk.send_signal(signal.SIGINT)  # wrk prints its summary and exits
        wrk_out = wrk.communicate(timeout=30)[0]
        wrk = None
        by = scraper.answered()
        rss_peak, rss_end = status_kib(pid, "VmHWM"), status_kib(pid, "VmRSS")
    finally:
        if wrk is not None:
            wrk.kill()
            wrk.wait()
        server.send_signal(signal.SIGTERM)
        server.wait(30)
        shutil.rmtree(work, ignore_errors=True)

    # Ten phases of (about) equal request counts, from the samples.
    total = samples[-1]["requests"] - samples[0]["requests"]
    phases, start = [], samples[0]
    for k in range(1, 11):
        goal = samples[0]["requests"] + total * k / 10
        end = next(s for s in samples if s["requests"] >= goal) if k < 10 else samples[-1]
        if end["requests"] > start["requests"]:
            phases.append({"requests": end["requests"] - start["requests"],
                           "cpu_us": (end["cpu"] - start["cpu"]) * 1e6 / (end["requests"] - start["requests"]),
                           "rps": (end["requests"] - start["requests"]) / max(end["t"] - start["t"], 1e-9),
                           "rss_kib": end["rss_kib"]})
            start = end
    wall = samples[-1]["t"]
    summary = {"requests": total, "seconds": wall, "rss_start_kib": rss_start, "rss_peak_kib": rss_peak,
               "rss_end_kib": rss_end, "cpu_us_per_request": samples[-1]["cpu"] * 1e6 / total, "phases": phases,
               "healthz_baseline_cpu_us": baseline_us,
               "answers": {"%s %s" % k: v for k, v in sorted(by.items())}, "reviews": scraper.reviews}
    print("webhookd soak: %d requests in %.0f s (%.0f req/s), wrk -c%d over TLS, webhookd --threads %d" %
          (total, wall, total / wall, args.connections, args.threads))
    print("RSS start %.1f MiB, peak %.1f MiB, end %.1f MiB" % (rss_start / 1024, rss_peak / 1024, rss_end / 1024))
    print("CPU %.1f us/request overall; baseline GET /healthz alone, same run: %.1f us/request (%.1fx)" %
          (summary["cpu_us_per_request"], baseline_us, summary["cpu_us_per_request"] / baseline_us))
    print("%-6s %10s %10s %12s %10s" % ("phase", "requests", "req/s", "CPU us/req", "RSS MiB"))
    for i, p in enumerate(phases):
        print("%-6d %10d %10.0f %12.1f %10.1f" % (i + 1, p["requests"], p["rps"], p["cpu_us"], p["rss_kib"] / 1024))
    if len(phases) >= 2:
        first, last = phases[0], phases[-1]
        print("flat? first vs last 10 %%: CPU %.1f -> %.1f us/req (%+.1f %%), RSS %.1f -> %.1f MiB (%+.1f MiB)" %
              (first["cpu_us"], last["cpu_us"], (last["cpu_us"] / first["cpu_us"] - 1) * 100,
               first["rss_kib"] / 1024, last["rss_kib"] / 1024, (last["rss_kib"] - first["rss_kib"]) / 1024))
    print("answers by path and code:", ", ".join("%s=%d" % kv for kv in summary["answers"].items()))
    print("reviews by endpoint and result:", ", ".join("%s=%d" % kv for kv in sorted(scraper.reviews.items())))
    print("wrk:", " ".join(line.strip() for line in wrk_out.splitlines() if re.search(r"requests in|errors|Non-2xx", line)))
    if args.markdown:
        print("\n| phase (10 % of requests each) | req/s | webhookd CPU µs/request | RSS at its end |\n|---|---|---|---|")
        for i, p in enumerate(phases):
            print("| %d | %s | %.1f | %.1f MiB |" % (i + 1, format(round(p["rps"]), ","), p["cpu_us"], p["rss_kib"] / 1024))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"summary": summary, "samples": samples}, f, indent=1)


if __name__ == "__main__":
    main()
