#!/usr/bin/env python3
"""test_kubeconfig.py - how wh_kube finds and authenticates to the cluster,
checked by who the fake API server says made the request: KUBECONFIG merge,
contexts, ~/.kube/config, CA files/data, insecure, tls-server-name, client
certificates over real TLS (files and inline data), token, tokenFile
(re-read on change), basic auth, exec plugins (v1 and v1beta1, env, args,
caching until expirationTimestamp, refresh on 401, client certificates),
in-cluster configuration (token file re-read on change), impersonation.

With --kubectl-oracle, `kubectl config view --minify` and real kubectl
requests must resolve the same context, cluster, user and identity;
skipped (exit 77) when kubectl is absent.
"""
import base64
import datetime
import json
import os
import stat
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kubetest  # noqa: E402
from kubetest import check  # noqa: E402



def b64file(path):
    with open(path, "rb") as f:
        return base64.b64encode(f.read()).decode()


class T:
    def __init__(self, api):
        self.api = api
        self.home = tempfile.mkdtemp(prefix="kchome-")

    def env(self, **extra):
        e = {k: v for k, v in os.environ.items() if k not in ("KUBECONFIG", "KUBERNETES_SERVICE_HOST",
                                                               "KUBERNETES_SERVICE_PORT")}
        e["HOME"] = self.home
        e.update(extra)
        return e

    def whoami(self, *args, env=None, n=1):
        """Run n list requests in one client; return (answers, users seen by the server)."""
        n0 = len(self.api.log())
        res = kubetest.probe_once(*args, cmds=[["list", "namespaces", "-"]] * n, env=env or self.env())
        users = [e.get("user") for e in self.api.log()[n0:]]
        return res, users

    def config(self, *args, env=None):
        return kubetest.probe_once(*args, cmds=[["config"]], env=env or self.env())[0]


def write(path, text, mode=None):
    with open(path, "w") as f:
        f.write(text)
    if mode:
        os.chmod(path, mode)


def users_across_rewrite(api, pr, path, text):
    """Two requests through probe `pr` with the credential file `path` rewritten to `text` in between (the probe
    is closed after): both answers and the users the fake API server saw, to show the file is re-read."""
    n0 = len(api.log())
    a = pr("list", "namespaces", "-")
    time.sleep(0.02)
    write(path, text)
    b = pr("list", "namespaces", "-")
    pr.close()
    return a, b, [e.get("user") for e in api.log()[n0:]]


def exec_plugin(d, name, body):
    p = os.path.join(d, name)
    write(p, "#!/usr/bin/env python3\n" + body, stat.S_IRWXU)
    return p


class ConnectProxy:
    """A minimal HTTP CONNECT proxy that counts the tunnels it opened."""

    def __init__(self):
        import socket
        import threading
        self.tunnels = 0
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        import socket
        import threading
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            head = b""
            while b"\r\n\r\n" not in head:
                chunk = c.recv(4096)
                if not chunk:
                    break
                head += chunk
            parts = head.split(b" ")
            if len(parts) < 2 or parts[0] != b"CONNECT":
                c.close()
                continue
            host, port = parts[1].decode().rsplit(":", 1)
            up = socket.create_connection((host, int(port)))
            self.tunnels += 1
            c.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            for a, b in ((c, up), (up, c)):
                threading.Thread(target=self.pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def pipe(a, b):
        try:
            while True:
                data = a.recv(65536)
                if not data:
                    break
                b.sendall(data)
        except OSError:
            pass
        for s in (a, b):
            try:
                s.shutdown(2)
            except OSError:
                pass

    def close(self):
        self.sock.close()


def rfc3339(seconds_from_now):
    t = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=seconds_from_now)
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def main():
    oracle = "--kubectl-oracle" in sys.argv
    if oracle and not kubetest.kubectl():
        print("SKIP: kubectl is not installed; the kubectl oracle checks did not run")
        return kubetest.SKIP
    api = kubetest.FakeApi(auth={"tokens": {"tok-admin": "admin", "tok-file-1": "file1", "tok-file-2": "file2",
                                            "tok-exec": "exec-user", "tok-sa-1": "sa1", "tok-sa-2": "sa2"},
                                 "basic": {"bob:secret": "bob"}, "anonymous": False})
    t = T(api)
    d = api.dir
    try:
        if oracle:
            return oracle_checks(api, t, d)
        # --- authentication methods -------------------------------------------
        r, u = t.whoami("--kubeconfig", api.kubeconfig("k-token"))
        check("token", r[0]["ok"] and u == ["admin"], (r, u))

        write(os.path.join(d, "tok"), "tok-file-1\n")
        kc = api.kubeconfig("k-tokfile", user={"tokenFile": "tok"})  # relative to the kubeconfig's directory
        a, b, users = users_across_rewrite(api, kubetest.Probe("--kubeconfig", kc, env=t.env()),
                                           os.path.join(d, "tok"), "tok-file-2\n")
        check("tokenFile (relative path) is re-read when it changes", a["ok"] and b["ok"] and users == ["file1", "file2"],
              (a, b, users))

        r, u = t.whoami("--kubeconfig", api.kubeconfig("k-both", user={"token": "tok-admin", "tokenFile": "tok"}))
        check("tokenFile wins over token (as in client-go)", r[0]["ok"] and u == ["file2"], (r, u))
        r, u = t.whoami("--kubeconfig", api.kubeconfig("k-both-missing", user={"token": "tok-admin",
                                                                               "tokenFile": "no-such-file"}))
        check("token stands in while tokenFile cannot be read", r[0]["ok"] and u == ["admin"], (r, u))
        r, u = t.whoami("--kubeconfig", api.kubeconfig("k-tokfile-missing", user={"tokenFile": "no-such-file"}))
        check("a missing tokenFile is a clear error", not r[0]["ok"] and "no-such-file" in r[0]["error"] and u == [],
              (r, u))

        r, u = t.whoami("--kubeconfig", api.kubeconfig("k-basic", user={"username": "bob", "password": "secret"}))
        check("basic auth", r[0]["ok"] and u == ["bob"], (r, u))
        r, u = t.whoami("--kubeconfig", api.kubeconfig("k-basic-bad", user={"username": "bob", "password": "nope"}))
        check("rejected credentials say what to check", not r[0]["ok"] and "Unauthorized" in r[0]["error"] and
              "did not accept the credentials of user" in r[0]["error"], r)

        r, u = t.whoami("--kubeconfig", api.kubeconfig("k-cert", user={
            "client-certificate": api.path("alice.crt"), "client-key": api.path("alice.key")}))
        check("client certificate files over TLS", r[0]["ok"] and u == ["alice"], (r, u))
        r, u = t.whoami("--kubeconfig", api.kubeconfig("k-certdata", cluster={
            "certificate-authority": None, "certificate-authority-data": b64file(api.path("ca.crt"))}, user={
            "client-certificate-data": b64file(api.path("alice.crt")),
            "client-key-data": b64file(api.path("alice.key"))}))
        check("client certificate and CA as inline data", r[0]["ok"] and u == ["alice"], (r, u))
        r = kubetest.probe_once("--kubeconfig", api.kubeconfig("k-certonly", user={
            "client-certificate": api.path("alice.crt")}), cmds=[["config"]], env=t.env())[0]
        check("a certificate without its key is a configuration error", not r["ok"] and "needs its key" in r["error"], r)

        # --- server verification ------------------------------------------------
        r, _ = t.whoami("--kubeconfig", api.kubeconfig("k-wrongca", cluster={"certificate-authority": api.path("other-ca.crt")}))
        check("unknown authority names certificate-authority", not r[0]["ok"] and r[0]["code"] == "TLS error" and
              "certificate-authority" in r[0]["error"], r)
        r, u = t.whoami("--kubeconfig", api.kubeconfig("k-insecure", cluster={"certificate-authority": None,
                                                                           "insecure-skip-tls-verify": True}))
        check("insecure-skip-tls-verify", r[0]["ok"] and u == ["admin"], (r, u))
        r = t.config("--kubeconfig", api.kubeconfig("k-insecure-ca", cluster={"insecure-skip-tls-verify": True}))
        check("insecure together with a CA is refused", not r["ok"] and "insecure flag is not allowed" in r["error"], r)
        r, u = t.whoami("--kubeconfig", api.kubeconfig("k-sni", cluster={"tls-server-name": "kubernetes.test"}))
        check("tls-server-name (valid name)", r[0]["ok"] and u == ["admin"], (r, u))
        r, _ = t.whoami("--kubeconfig", api.kubeconfig("k-sni-bad", cluster={"tls-server-name": "wrong.test"}))
        check("tls-server-name is what the certificate is checked against", not r[0]["ok"] and
              r[0]["code"] == "TLS error", r)

        proxy = ConnectProxy()
        r, u = t.whoami("--kubeconfig", api.kubeconfig("k-proxy", cluster={
            "proxy-url": "http://127.0.0.1:%d" % proxy.port}))
        check("proxy-url tunnels through the proxy", r[0]["ok"] and u == ["admin"] and proxy.tunnels == 1,
              (r, u, proxy.tunnels))
        proxy.close()

        # --- merging and contexts ------------------------------------------------
        a_path, b_path = os.path.join(d, "a.yaml"), os.path.join(d, "b.yaml")
        write(a_path, """apiVersion: v1
kind: Config
current-context: ctx-a
clusters:
- name: shared
  cluster: {server: "%s", certificate-authority: ca.crt}
users:
- name: admin
  user: {token: tok-admin}
contexts:
- name: ctx-a
  context: {cluster: shared, user: admin, namespace: team-a}
""" % api.server)
        write(b_path, """apiVersion: v1
kind: Config
current-context: ctx-b
clusters:
- name: shared
  cluster: {server: "https://127.0.0.1:1"}
users:
- name: bob
  user: {username: bob, password: secret}
- name: admin
  user: {token: ignored}
contexts:
- name: ctx-b
  context: {cluster: shared, user: bob}
""")
        merged = t.env(KUBECONFIG="%s:%s:%s" % (os.path.join(d, "missing.yaml"), a_path, b_path))
        c = t.config(env=merged)
        check("KUBECONFIG merge: first current-context wins, missing files skipped",
              c["ok"] and c["result"]["context"] == "ctx-a" and c["result"]["namespace"] == "team-a" and
              c["result"]["server"] == api.server, c)
        r, u = t.whoami("--context", "ctx-b", env=merged)
        check("KUBECONFIG merge: first cluster definition wins, user from the second file", r[0]["ok"] and u == ["bob"],
              (r, u))
        r, u = t.whoami(env=merged)
        check("KUBECONFIG merge: first user definition wins", r[0]["ok"] and u == ["admin"], (r, u))
        c = t.config("--context", "nope", env=merged)
        check("unknown context lists the known ones", not c["ok"] and 'context "nope" does not exist' in c["error"] and
              '"ctx-a"' in c["error"] and '"ctx-b"' in c["error"], c)
        c = t.config("--kubeconfig", os.path.join(d, "missing.yaml"))
        check("--kubeconfig must exist", not c["ok"] and "does not exist" in c["error"], c)
        os.makedirs(os.path.join(t.home, ".kube"), exist_ok=True)
        write(os.path.join(t.home, ".kube", "config"), open(a_path).read().replace("ca.crt", api.path("ca.crt")))
        c = t.config()
        check("~/.kube/config is the default", c["ok"] and c["result"]["context"] == "ctx-a", c)
        os.remove(os.path.join(t.home, ".kube", "config"))
        c = t.config()
        check("no configuration at all says where to look", not c["ok"] and "no Kubernetes configuration found" in
              c["error"], c)

        # --- exec plugins ------------------------------------------------------------
        count = os.path.join(d, "exec-count")
        plugin = exec_plugin(d, "plugin.py", r'''
import json, os, sys
info = json.loads(os.environ["KUBERNETES_EXEC_INFO"])
assert info["kind"] == "ExecCredential" and info["spec"]["interactive"] is False, info
assert os.environ.get("PLUGIN_MODE") and sys.argv[1:] == ["get-token", "--for", "fake"], sys.argv
assert info["spec"].get("cluster", {}).get("server", "").startswith("https://127.0.0.1:"), info
n = int(open(%r).read()) if os.path.exists(%r) else 0
open(%r, "w").write(str(n + 1))
mode, ttl = os.environ["PLUGIN_MODE"], int(os.environ.get("PLUGIN_TTL", "3600"))
import datetime
exp = (datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=ttl)).strftime("%%Y-%%m-%%dT%%H:%%M:%%SZ")
status = {"expirationTimestamp": exp}
if mode == "token":
    status["token"] = "tok-exec"
elif mode == "bad-then-good":
    status["token"] = "revoked" if n == 0 else "tok-exec"
elif mode == "cert":
    status["clientCertificateData"] = open(%r).read()
    status["clientKeyData"] = open(%r).read()
elif mode == "fail":
    sys.exit(3)
print(json.dumps({"apiVersion": info["apiVersion"], "kind": "ExecCredential", "status": status}))
''' % (count, count, count, api.path("alice.crt"), api.path("alice.key")))

        def exec_kc(mode, ttl=3600, api_version="client.authentication.k8s.io/v1"):
            return api.kubeconfig("k-exec-%s-%d" % (mode, ttl), user={"exec": {
                "apiVersion": api_version, "command": plugin, "args": ["get-token", "--for", "fake"],
                "env": [{"name": "PLUGIN_MODE", "value": mode}, {"name": "PLUGIN_TTL", "value": str(ttl)}],
                "provideClusterInfo": True, "interactiveMode": "Never"}})

        def runs():
            return int(open(count).read()) if os.path.exists(count) else 0

        if os.path.exists(count):
            os.remove(count)
        r, u = t.whoami("--kubeconfig", exec_kc("token"), n=3)
        check("exec plugin (v1): token cached until it expires", all(x["ok"] for x in r) and
              u == ["exec-user"] * 3 and runs() == 1, (r, u, runs()))
        os.remove(count)
        r, u = t.whoami("--kubeconfig", exec_kc("token", api_version="client.authentication.k8s.io/v1beta1"))
        check("exec plugin (v1beta1)", r[0]["ok"] and u == ["exec-user"], (r, u))
        os.remove(count)
        pr = kubetest.Probe("--kubeconfig", exec_kc("token", ttl=2), env=t.env())
        a = pr("list", "namespaces", "-")
        b = pr("list", "namespaces", "-")
        before = runs()
        time.sleep(2.2)
        c2 = pr("list", "namespaces", "-")
        pr.close()
        check("exec plugin runs again once expirationTimestamp passed", a["ok"] and b["ok"] and c2["ok"] and
              before == 1 and runs() == 2, (before, runs()))
        os.remove(count)
        r, u = t.whoami("--kubeconfig", exec_kc("bad-then-good"))
        check("exec credential refused with 401 is refreshed once", r[0]["ok"] and u == [None, "exec-user"] and
              runs() == 2, (r, u, runs()))
        os.remove(count)
        r, u = t.whoami("--kubeconfig", exec_kc("cert"))
        check("exec plugin client certificate", r[0]["ok"] and u == ["alice"], (r, u))
        r, u = t.whoami("--kubeconfig", exec_kc("fail"))
        check("failing exec plugin is a clear error", not r[0]["ok"] and "exec plugin" in r[0]["error"] and
              "exit status 3" in r[0]["error"], r)
        missing = api.kubeconfig("k-exec-missing", user={"exec": {
            "apiVersion": "client.authentication.k8s.io/v1", "command": "no-such-plugin-xyz",
            "installHint": "install no-such-plugin-xyz from your cloud vendor", "interactiveMode": "Never"}})
        r, u = t.whoami("--kubeconfig", missing)
        check("missing exec plugin shows the install hint", not r[0]["ok"] and "install no-such-plugin-xyz" in
              r[0]["error"] and u == [], (r, u))
        slow = exec_plugin(d, "slow.py", "import time\ntime.sleep(30)\n")
        r, _ = t.whoami("--kubeconfig", api.kubeconfig("k-exec-slow", user={"exec": {
            "apiVersion": "client.authentication.k8s.io/v1", "command": slow, "interactiveMode": "Never"}}),
            "--timeout-ms", "800")
        check("a hanging exec plugin is killed at the deadline", not r[0]["ok"] and r[0]["code"] == "timeout", r)

        # --- in-cluster --------------------------------------------------------------
        sa = os.path.join(d, "sa")
        os.makedirs(sa)
        write(os.path.join(sa, "token"), "tok-sa-1")
        write(os.path.join(sa, "namespace"), "webhookd-system\n")
        with open(api.path("ca.crt")) as f:
            write(os.path.join(sa, "ca.crt"), f.read())
        incl = t.env(KUBERNETES_SERVICE_HOST="127.0.0.1", KUBERNETES_SERVICE_PORT=str(api.port))
        c = t.config("--sa-dir", sa, env=incl)
        check("in-cluster configuration", c["ok"] and c["result"]["source"] == "in-cluster" and
              c["result"]["namespace"] == "webhookd-system" and c["result"]["server"] == api.server and
              c["result"]["effectiveNamespace"] == "webhookd-system", c)
        c = t.config("--kubeconfig", api.kubeconfig("k-token"))
        check("no namespace anywhere means \"default\"", c["ok"] and c["result"]["effectiveNamespace"] == "default" and
              c["result"].get("namespace") is None, c)
        a, b, users = users_across_rewrite(api, kubetest.Probe("--sa-dir", sa, env=incl), os.path.join(sa, "token"),
                                           "tok-sa-2")
        check("in-cluster token file re-read when rotated", a["ok"] and b["ok"] and users == ["sa1", "sa2"], users)

        # --- impersonation -------------------------------------------------------------
        n0 = len(api.log())
        r = kubetest.probe_once("--kubeconfig", api.kubeconfig("k-token"), "--as", "jane",
                                cmds=[["list", "namespaces", "-"]], env=t.env())
        e = api.log()[n0]
        check("--as impersonates", r[0]["ok"] and e.get("user") == "jane" and e.get("impersonated_by") == "admin", e)
    finally:
        api.close()
    return kubetest.failed_status()


def oracle_checks(api, t, d):
    """kubectl must resolve the same context/cluster/user and authenticate as the same identity."""
    a_path, b_path = os.path.join(d, "a.yaml"), os.path.join(d, "b.yaml")
    write(a_path, json.dumps({"apiVersion": "v1", "kind": "Config", "current-context": "ctx-a",
                              "clusters": [{"name": "shared", "cluster": {"server": api.server,
                                                                          "certificate-authority": "ca.crt"}}],
                              "users": [{"name": "admin", "user": {"token": "tok-admin"}}],
                              "contexts": [{"name": "ctx-a", "context": {"cluster": "shared", "user": "admin"}}]}))
    write(b_path, json.dumps({"apiVersion": "v1", "kind": "Config", "current-context": "ctx-b",
                              "clusters": [{"name": "shared", "cluster": {"server": "https://127.0.0.1:1"}}],
                              "users": [{"name": "bob", "user": {"username": "bob", "password": "secret"}},
                                        {"name": "cert", "user": {"client-certificate": "alice.crt",
                                                                  "client-key": "alice.key"}}],
                              "contexts": [{"name": "ctx-b", "context": {"cluster": "shared", "user": "bob"}},
                                           {"name": "ctx-c", "context": {"cluster": "shared", "user": "cert",
                                                                         "namespace": "ns-c"}}]}))
    env = t.env(KUBECONFIG="%s:%s" % (a_path, b_path))
    try:
        for ctx in (None, "ctx-b", "ctx-c"):
            args = ["--context", ctx] if ctx else []
            view = subprocess.run(["kubectl", "config", "view", "--minify", "-o", "json", *args], capture_output=True,
                                  text=True, env=env)
            v = json.loads(view.stdout)
            ours = t.config(*args, env=env)["result"]
            check("oracle %s: same context, cluster, user, server, namespace" % (ctx or "current"),
                  v["current-context"] == ours["context"] and v["clusters"][0]["name"] == ours["cluster"] and
                  v["users"][0]["name"] == ours["user"] and v["clusters"][0]["cluster"]["server"] == ours["server"] and
                  v["contexts"][0]["context"].get("namespace") == ours.get("namespace"), (v, ours))
            n0 = len(api.log())
            k = subprocess.run(["kubectl", "get", "namespaces", *args], capture_output=True, text=True, env=env)
            kusers = {e.get("user") for e in api.log()[n0:] if e.get("user")}
            _, u = t.whoami(*args, env=env)
            check("oracle %s: kubectl and wh_kube authenticate as the same user" % (ctx or "current"),
                  k.returncode == 0 and kusers == set(u) and len(u) == 1, (k.stderr, kusers, u))
    finally:
        api.close()
    return kubetest.failed_status(" (kubectl oracle)")


if __name__ == "__main__":
    sys.exit(main())
