"""kubetest.py - shared plumbing for the kube tests: certificates made with
openssl, a running fakeapi.py over TLS, kubeconfig files, and the control API.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
SKIP = 77


def openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def make_pki(d):
    """CA, server cert (127.0.0.1, localhost, kubernetes.test), client cert CN=alice, and an unrelated CA."""
    for name in ("ca", "other-ca"):
        openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2",
                "-subj", "/CN=%s" % name, "-keyout", name + ".key", "-out", name + ".crt", cwd=d)
    with open(os.path.join(d, "server.ext"), "w") as f:
        f.write("subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes.test\n")
    for name, subj, ext in (("server", "/CN=fakeapi", ["-extfile", "server.ext"]), ("alice", "/CN=alice/O=dev", [])):
        openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj", subj,
                "-keyout", name + ".key", "-out", name + ".csr", cwd=d)
        openssl("x509", "-req", "-in", name + ".csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
                "-days", "2", "-out", name + ".crt", *ext, cwd=d)


class FakeApi:
    def __init__(self, auth=None, tls=True, args=()):
        """`args`: more fakeapi.py arguments, e.g. ("--state", path) to keep objects across down()/up()."""
        self.dir = tempfile.mkdtemp(prefix="fakeapi-")
        if tls:
            make_pki(self.dir)
        self.auth = auth or {"tokens": {"tok-admin": "admin"}, "basic": {"bob:secret": "bob"}, "anonymous": False}
        with open(os.path.join(self.dir, "auth.json"), "w") as f:
            json.dump(self.auth, f)
        portfile = os.path.join(self.dir, "port")
        cmd = [sys.executable, os.path.join(HERE, "fakeapi.py"), "--auth", os.path.join(self.dir, "auth.json"),
               "--port-file", portfile]
        if tls:
            cmd += ["--tls-cert", self.path("server.crt"), "--tls-key", self.path("server.key"),
                    "--client-ca", self.path("ca.crt")]
        cmd += list(args)
        self.cmd, self.portfile = cmd, portfile
        self._launch()
        self.scheme = "https" if tls else "http"
        self.server = "%s://127.0.0.1:%d" % (self.scheme, self.port)

    def _launch(self, extra=()):
        if os.path.exists(self.portfile):
            os.unlink(self.portfile)
        with open(self.path("fakeapi.err"), "a") as err:
            self.proc = subprocess.Popen(self.cmd + list(extra), stdout=subprocess.DEVNULL, stderr=err)
        for _ in range(200):
            if os.path.exists(self.portfile):
                break
            time.sleep(0.05)
        with open(self.portfile) as f:
            self.port = int(f.read())

    def down(self):
        """Stop the server (an API server outage); up() restarts it on the same port, empty unless
        started with --state."""
        self.proc.terminate()
        self.proc.wait(10)

    def up(self):
        self._launch(["--port", str(self.port)])

    def path(self, name):
        return os.path.join(self.dir, name)

    def control(self, path, body=None):
        import ssl
        ctx = ssl.create_default_context(cafile=self.path("ca.crt")) if self.scheme == "https" else None
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.server + "/_fake/" + path, data=data, method="POST" if data else "GET")
        with urllib.request.urlopen(req, context=ctx, timeout=10) as r:
            return json.loads(r.read())

    def reset(self):
        self.control("reset", {})

    def load(self, objects):
        self.control("load", {"objects": objects})

    def state(self):
        return self.control("state")

    def log(self):
        return self.control("log")

    def faults(self, faults):
        self.control("faults", faults)

    def kubeconfig(self, name="kubeconfig", user=None, cluster=None, context="test", extra=None):
        """A kubeconfig (JSON is YAML) for this server; user/cluster override the entries."""
        cl = {"server": self.server}
        if self.scheme == "https":
            cl["certificate-authority"] = self.path("ca.crt")
        cl.update(cluster or {})
        cfg = {"apiVersion": "v1", "kind": "Config", "current-context": context,
               "clusters": [{"name": "fake", "cluster": cl}],
               "users": [{"name": "u", "user": user if user is not None else {"token": "tok-admin"}}],
               "contexts": [{"name": context, "context": {"cluster": "fake", "user": "u"}}]}
        if extra:
            extra(cfg)
        p = self.path(name)
        with open(p, "w") as f:
            json.dump(cfg, f, indent=1)
        return p

    def close(self):
        self.proc.terminate()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        shutil.rmtree(self.dir, ignore_errors=True)


def kubectl():
    return shutil.which("kubectl")


def tool(name):
    p = os.environ.get(name)
    if not p or not os.path.exists(p):
        print("%s is not set (run through ctest)" % name, file=sys.stderr)
        sys.exit(1)
    return p


class Probe:
    """A kube_probe process: one request per call."""

    def __init__(self, *args, env=None):
        self.p = subprocess.Popen([tool("KUBE_PROBE"), *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  text=True, env=env)

    def __call__(self, *words):
        self.p.stdin.write("\t".join(words) + "\n")
        self.p.stdin.flush()
        line = self.p.stdout.readline()
        if not line:
            raise RuntimeError("kube_probe exited")
        return json.loads(line)

    def close(self):
        self.p.stdin.close()
        self.p.wait(10)


def probe_once(*args, cmds, env=None):
    p = subprocess.run([tool("KUBE_PROBE"), *args], input="".join("\t".join(c) + "\n" for c in cmds),
                       capture_output=True, text=True, env=env, timeout=60)
    return [json.loads(l) for l in p.stdout.splitlines()]


# ---- what the script-style tests share -------------------------------------------------------------------

FAILED = []


def check(name, cond, detail=""):
    """One named check: prints ok/FAIL (with the detail on failure) and remembers failures in FAILED."""
    print("%s %s%s" % ("ok  " if cond else "FAIL", name, "" if cond else ": " + str(detail)))
    if not cond:
        FAILED.append(name)


def failed_status(what=""):
    """Print how many checks failed (`what` names the run) and return the script's exit status."""
    print("%d failed%s" % (len(FAILED), what))
    return 1 if FAILED else 0


def webhook(name, svc_ns, svc_name, bundle=None):
    """A webhook entry calling Service svc_ns/svc_name at /inject, with caBundle `bundle` when given."""
    cc = {"service": {"namespace": svc_ns, "name": svc_name, "path": "/inject"}}
    if bundle:
        cc["caBundle"] = bundle
    return {"name": name, "clientConfig": cc, "admissionReviewVersions": ["v1"], "sideEffects": "None"}


def webhook_config(kind, name, labels, hooks):
    """A Mutating/ValidatingWebhookConfiguration holding `hooks`."""
    return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind,
            "metadata": {"name": name, "labels": labels}, "webhooks": hooks}
