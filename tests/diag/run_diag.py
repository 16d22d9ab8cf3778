#!/usr/bin/env python3
"""run_diag.py - runs the declarative scenarios of `webhookctl check-inject`
and `webhookctl check` (scenarios.yaml) against tests/kube/fakeapi.py.

Each scenario: `before` (fixtures: the macros of tests/kube/run_tag_scenarios.py
- rev, legacy, namespace, service, object - plus pod, deploy and endpoints
below, and `ca: NAME` on a rev/legacy item to give its webhooks the caBundle
of certificate NAME), optional `tty` (stdout is a pseudo-terminal), optional `setup` (webhookctl commands that must
succeed, e.g. `tag set`), `command` (words; $PKI is the certificate
directory, $SERVER a TLS server presenting $PKI/server.crt), and `expect`:
exit, stdout (exact), stdout_contains, stdout_not_contains, stderr_contains (and
the other output checks of run_tag_scenarios.output_errors),
json and yaml (subset match of the stdout parsed as JSON or YAML; lists compared
element-wise and in length), faults (fakeapi fault injection during the command), no_writes (default true: diagnostics never change the cluster).

Certificates (made with openssl, $PKI/NAME.crt, base64 via "pem:NAME"):
ca (CA, 400 days), server (signed by ca, 300 days, DNS istiod-1-9.istio-system.svc
and webhookd.istio-system.svc), other-ca (CA, 400 days), short-ca (CA,
30 days), expired-ca (expired), short-server (signed by ca, 20 days).
"""
import base64
import os
import pty
import socket
import ssl
import subprocess
import sys
import threading

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "kube"))
import kubetest  # noqa: E402
from run_tag_scenarios import expand, output_errors, subset, with_namespaces  # noqa: E402


def make_certs(d):
    def ca(name, days, extra=()):
        kubetest.openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                         "-days", str(days), "-subj", "/CN=%s" % name, "-keyout", name + ".key", "-out",
                         name + ".crt", *extra, cwd=d)

    def leaf(name, issuer, days):
        with open(os.path.join(d, name + ".ext"), "w") as f:
            f.write("subjectAltName=DNS:istiod-1-9.istio-system.svc,DNS:webhookd.istio-system.svc,IP:127.0.0.1\n")
        kubetest.openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj",
                         "/CN=%s" % name, "-keyout", name + ".key", "-out", name + ".csr", cwd=d)
        kubetest.openssl("x509", "-req", "-in", name + ".csr", "-CA", issuer + ".crt", "-CAkey", issuer + ".key",
                         "-CAcreateserial", "-days", str(days), "-out", name + ".crt", "-extfile", name + ".ext",
                         cwd=d)
    ca("ca", 400)
    ca("other-ca", 400)
    ca("short-ca", 30)
    # an expired CA: valid from two days ago for one day (openssl >= 3 has -not_after; use faketime-free x509)
    kubetest.openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "1",
                     "-subj", "/CN=expired-ca", "-keyout", "expired-ca.key", "-out", "expired-ca.csr.pem", cwd=d)
    kubetest.openssl("x509", "-in", "expired-ca.csr.pem", "-signkey", "expired-ca.key", "-days", "-1",
                     "-out", "expired-ca.crt", cwd=d)
    leaf("server", "ca", 300)
    leaf("short-server", "ca", 20)


def pem_b64(d, name):
    with open(os.path.join(d, name + ".crt"), "rb") as f:
        return base64.b64encode(f.read()).decode()


def substitute(v, d):
    if isinstance(v, str) and v.startswith("pem:"):
        return pem_b64(d, v[4:])
    if isinstance(v, dict):
        return {k: substitute(x, d) for k, x in v.items()}
    if isinstance(v, list):
        return [substitute(x, d) for x in v]
    return v


def fixture(item, d):
    """Our macros, else tests/kube's."""
    if "pod" in item:
        return [{"apiVersion": "v1", "kind": "Pod",
                 "metadata": {"name": item["pod"], "namespace": item.get("ns", "default"),
                              "labels": item.get("labels", {}), "annotations": item.get("annotations", {})},
                 "spec": {"hostNetwork": bool(item.get("hostNetwork")), "containers": [{"name": "app", "image": "x"}]}}]
    if "deploy" in item:
        return [{"apiVersion": "apps/v1", "kind": "Deployment",
                 "metadata": {"name": item["deploy"], "namespace": item.get("ns", "default"),
                              "labels": {"deployment-label": "only-on-the-deployment"}},
                 "spec": {"selector": {"matchLabels": item.get("labels", {})},
                          "template": {"metadata": {"labels": item.get("labels", {}),
                                                    "annotations": item.get("annotations", {})},
                                       "spec": {"containers": [{"name": "app", "image": "x"}]}}}}]
    if "endpoints" in item:
        subsets = [{"addresses": [{"ip": "10.0.0.7"}], "ports": [{"port": 15017}]}] if item.get("ready", True) else \
            [{"notReadyAddresses": [{"ip": "10.0.0.7"}], "ports": [{"port": 15017}]}]
        return [{"apiVersion": "v1", "kind": "Endpoints",
                 "metadata": {"name": item["endpoints"], "namespace": item.get("ns", "istio-system")},
                 "subsets": subsets}]
    item = dict(item)
    ca = item.pop("ca", None)
    objs = expand(substitute(item, d))
    if ca:
        for o in objs:
            for w in o.get("webhooks", []):
                w["clientConfig"]["caBundle"] = pem_b64(d, ca) if ca != "none" else ""
                if ca == "none":
                    del w["clientConfig"]["caBundle"]
    return objs


class TlsServer:
    """Presents server.crt (+ the CA) to whoever connects; a webhook server's TLS face."""

    def __init__(self, d, cert="server"):
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(os.path.join(d, cert + ".crt"), os.path.join(d, cert + ".key"))
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.ctx = ctx
        threading.Thread(target=self.loop, daemon=True).start()

    def loop(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            try:
                s = self.ctx.wrap_socket(c, server_side=True)
                s.recv(1)
                s.close()
            except (OSError, ssl.SSLError):
                c.close()


def main():
    args = sys.argv[1:]
    with open(args[0]) as f:
        scenarios = yaml.safe_load(f)
    only = set(args[1:])
    webhookctl = kubetest.tool("WEBHOOKCTL")
    api = kubetest.FakeApi()
    kc = api.kubeconfig()
    pki = api.path("pki")
    os.mkdir(pki)
    make_certs(pki)
    tls = TlsServer(pki)
    failed = ran = 0
    try:
        for sc in scenarios:
            if only and sc["name"].split()[0] not in only:
                continue
            ran += 1
            errs = run(sc, api, kc, webhookctl, pki, tls)
            print("%s %s" % ("ok  " if not errs else "FAIL", sc["name"]))
            for e in errs:
                print("     " + e.replace("\n", "\n     "))
            failed += bool(errs)
    finally:
        api.close()
    print("%d scenario(s), %d failed" % (ran, failed))
    return 1 if failed or ran == 0 else 0


def run(sc, api, kc, webhookctl, pki, tls):
    env = dict(os.environ)
    env.pop("KUBECONFIG", None)

    def ctl(words, tty=False):
        words = [str(w).replace("$PKI", pki).replace("$SERVER", "127.0.0.1:%d" % tls.port) for w in words]
        if not tty:
            return subprocess.run([webhookctl, *words, "--kubeconfig", kc], capture_output=True, text=True,
                                  timeout=60, env=env)
        # stdout on a pseudo-terminal: the command must use its Unicode marks
        master, slave = pty.openpty()
        proc = subprocess.Popen([webhookctl, *words, "--kubeconfig", kc], stdout=slave, stderr=subprocess.PIPE,
                                env=env)
        os.close(slave)
        out = b""
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
        os.close(master)
        err = proc.stderr.read().decode()
        proc.wait(60)
        return subprocess.CompletedProcess(proc.args, proc.returncode, out.decode().replace("\r\n", "\n"), err)
    api.reset()
    objs = []
    for item in sc.get("before", []):
        objs += fixture(item, pki)
    api.load(with_namespaces(objs))
    for cmd in sc.get("setup", []):
        p = ctl(cmd)
        if p.returncode != 0:
            return ["setup %s failed: %s" % (cmd, p.stderr)]
    api.faults(sc.get("faults", []))
    log0 = len(api.log())
    p = ctl(sc["command"], sc.get("tty", False))
    writes = [(e["method"], e["path"]) for e in api.log()[log0:] if e["method"] != "GET"]
    exp = substitute(sc["expect"], pki)
    errs = output_errors(p, exp)
    if exp.get("no_writes", True) and writes:
        errs.append("write requests were sent: %s" % writes)
    if "json" in exp:
        import json
        try:
            errs += subset(exp["json"], json.loads(p.stdout), "stdout")
        except ValueError:
            errs.append("stdout is not JSON")
    if "yaml" in exp:
        try:
            errs += subset(exp["yaml"], yaml.safe_load(p.stdout), "stdout")
        except yaml.YAMLError:
            errs.append("stdout is not YAML")
    if errs:
        errs.append("stdout was:\n%s\nstderr was: %r" % (p.stdout, p.stderr))
    return errs


if __name__ == "__main__":
    sys.exit(main())
