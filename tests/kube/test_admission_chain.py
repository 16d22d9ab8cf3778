#!/usr/bin/env python3
"""fake_admission.py, the simulated kube-apiserver's webhook admission chain, against a small
scripted HTTPS webhook: call order, selectors, rules, denials, failure policies and their error
texts, TLS verification against caBundle for <svc>.<ns>.svc, timeouts, reinvocation, dry run,
the loud refusal of matchConditions, and the credentials an admission configuration
(--admission-control-config-file) makes the chain present.  (tests/e2e drives the same chain with
webhookd.)"""
import base64
import json
import os
import ssl
import sys
import threading
import time
import unittest
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import fake_admission  # noqa: E402
import kubetest  # noqa: E402

SEEN = []  # (path, request) the scripted webhook received
PEERS = []  # (client certificate CN or None, Authorization header or None) of each call


class Hook(BaseHTTPRequestHandler):
    """POST /<behaviour>[/<arg>]: allow | deny/<msg> | label/<value> (JSONPatch adding a label
    `hit-<value>`) | slow | status500 | baduid | warn."""
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def do_POST(self):
        review = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        req = review["request"]
        path = self.path.split("?")[0].strip("/").split("/")
        SEEN.append((self.path, req))
        cert = self.connection.getpeercert()
        PEERS.append((dict(x[0] for x in cert["subject"]).get("commonName") if cert else None,
                      self.headers.get("Authorization")))
        resp = {"uid": req["uid"], "allowed": True}
        if path[0] == "deny":
            resp = {"uid": req["uid"], "allowed": False, "status": {"code": 403, "message": path[1]}}
        elif path[0] == "label":
            labels = (req["object"].get("metadata") or {}).get("labels")
            ops = [] if labels is not None else [{"op": "add", "path": "/metadata/labels", "value": {}}]
            ops.append({"op": "add", "path": "/metadata/labels/hit-" + path[1], "value": "y"})
            resp.update(patchType="JSONPatch", patch=base64.b64encode(json.dumps(ops).encode()).decode())
        elif path[0] == "slow":
            time.sleep(2.5)
        elif path[0] == "status500":
            self.send_response(500)
            self.send_header("Content-Length", "4")
            self.end_headers()
            self.wfile.write(b"oops")
            return
        elif path[0] == "baduid":
            resp["uid"] = "not-it"
        elif path[0] == "warn":
            resp["warnings"] = ["mind the gap"]
        body = json.dumps({"apiVersion": review["apiVersion"], "kind": "AdmissionReview", "response": resp}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def hook_entry(name, path, svc="hook", ca=None, **kw):
    e = {"name": name, "admissionReviewVersions": ["v1"], "sideEffects": "None",
         "clientConfig": {"service": {"namespace": "hooks", "name": svc, "path": path, "port": 443},
                          "caBundle": ca},
         "rules": [{"operations": ["CREATE", "UPDATE"], "apiGroups": ["", "networking.istio.io"],
                    "apiVersions": ["*"], "resources": ["configmaps", "destinationrules"]}]}
    e.update(kw)
    return e


class TestAdmissionChain(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.api = kubetest.FakeApi()
        d = cls.api.dir
        # The webhook's certificate: signed by the fake API server's test CA for hook.hooks.svc
        # (and one for another name, to see the name checked).
        for name, san in (("hook", "DNS:hook.hooks.svc"), ("wrongname", "DNS:other.hooks.svc")):
            with open(os.path.join(d, name + ".ext"), "w") as f:
                f.write("subjectAltName=%s\n" % san)
            kubetest.openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj",
                             "/CN=" + name, "-keyout", name + ".key", "-out", name + ".csr", cwd=d)
            kubetest.openssl("x509", "-req", "-in", name + ".csr", "-CA", "ca.crt", "-CAkey", "ca.key",
                             "-CAcreateserial", "-days", "2", "-out", name + ".crt", "-extfile", name + ".ext", cwd=d)
        # A client CA of the webhooks and the API server's certificate from it (kube-apiserver's
        # credentials for webhooks, given by an admission configuration).
        kubetest.openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days",
                         "2", "-subj", "/CN=webhook-client-ca", "-keyout", "client-ca.key", "-out", "client-ca.crt",
                         cwd=d)
        kubetest.openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj",
                         "/CN=kube-apiserver", "-keyout", "apiserver.key", "-out", "apiserver.csr", cwd=d)
        kubetest.openssl("x509", "-req", "-in", "apiserver.csr", "-CA", "client-ca.crt", "-CAkey", "client-ca.key",
                         "-CAcreateserial", "-days", "2", "-out", "apiserver.crt", cwd=d)
        cls.servers = {}
        for name in ("hook", "wrongname"):
            srv = ThreadingHTTPServer(("127.0.0.1", 0), Hook)
            srv.daemon_threads = True
            srv.handle_error = lambda *a: None  # clients that gave up (timeouts, refused certificates)
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(os.path.join(d, name + ".crt"), os.path.join(d, name + ".key"))
            ctx.load_verify_locations(os.path.join(d, "client-ca.crt"))
            ctx.verify_mode = ssl.CERT_OPTIONAL  # asks; the calls without credentials present none
            srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
            threading.Thread(target=srv.serve_forever, daemon=True).start()
            cls.servers[name] = srv
        with open(cls.api.path("ca.crt"), "rb") as f:
            cls.ca = base64.b64encode(f.read()).decode()
        with open(cls.api.path("other-ca.crt"), "rb") as f:
            cls.other_ca = base64.b64encode(f.read()).decode()

    @classmethod
    def tearDownClass(cls):
        for srv in cls.servers.values():
            srv.shutdown()
        cls.api.close()

    def setUp(self):
        self.api.reset()
        del SEEN[:]
        del PEERS[:]
        self.api.load(self.cluster_objects())

    def cluster_objects(self):
        objs = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n, "labels": l}}
                for n, l in (("hooks", {}), ("app", {"team": "a"}), ("other", {"team": "b"}))]
        for svc, srv in (("hook", "hook"), ("wrongname", "wrongname")):
            objs.append({"apiVersion": "v1", "kind": "Service", "metadata": {"name": svc, "namespace": "hooks"},
                         "spec": {"ports": [{"name": "https", "port": 443, "targetPort": 8443}]}})
            objs.append({"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": svc, "namespace": "hooks"},
                         "subsets": [{"addresses": [{"ip": "127.0.0.1"}],
                                      "ports": [{"name": "https", "port": self.servers[srv].server_address[1]}]}]})
        objs.append({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "empty", "namespace": "hooks"},
                     "spec": {"ports": [{"name": "https", "port": 443}]}})
        return objs

    def configs(self, kind, *cfgs, api=None):
        (api or self.api).load([{"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind,
                        "metadata": {"name": name}, "webhooks": hooks} for name, hooks in cfgs])

    def request(self, method, path, body=None, ctype="application/json", api=None):
        api = api or self.api
        req = urllib.request.Request(api.server + path, method=method,
                                     data=json.dumps(body).encode() if body is not None else None,
                                     headers={"Authorization": "Bearer tok-admin", "Content-Type": ctype})
        ctx = ssl.create_default_context(cafile=api.path("ca.crt"))
        try:
            with urllib.request.urlopen(req, context=ctx, timeout=30) as r:
                return r.status, json.loads(r.read()), r.headers
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read()), e.headers

    def create_cm(self, ns="app", name="cm", labels=None, query="", api=None):
        return self.request("POST", "/api/v1/namespaces/%s/configmaps%s" % (ns, query),
                            {"apiVersion": "v1", "kind": "ConfigMap",
                             "metadata": {"name": name, "labels": labels or {}}, "data": {"k": "v"}}, api=api)

    def test_credentials_from_the_admission_configuration(self):
        """kube-apiserver --admission-control-config-file: a kubeconfig whose users are named after
        the webhooks' hosts; the exact <svc>.<ns>.svc entry gives the client certificate (paths
        relative to the kubeconfig)."""
        kubeconfig = os.path.join(self.api.dir, "webhooks.kubeconfig")
        with open(kubeconfig, "w") as f:
            json.dump({"apiVersion": "v1", "kind": "Config", "users": [
                {"name": "hook.hooks.svc", "user": {"client-certificate": "apiserver.crt",
                                                    "client-key": "apiserver.key"}},
                {"name": "*.hooks.svc", "user": {"token": "tok-wildcard"}}]}, f)
        config = os.path.join(self.api.dir, "admission.yaml")
        with open(config, "w") as f:
            json.dump({"apiVersion": "apiserver.config.k8s.io/v1", "kind": "AdmissionConfiguration", "plugins": [
                {"name": plugin, "configuration": {"apiVersion": "apiserver.config.k8s.io/v1",
                                                   "kind": "WebhookAdmissionConfiguration",
                                                   "kubeConfigFile": kubeconfig}}
                for plugin in ("ValidatingAdmissionWebhook", "MutatingAdmissionWebhook")]}, f)
        api = kubetest.FakeApi(args=("--admission-control-config-file", config))
        try:
            api.load(self.cluster_objects())
            self.configs("MutatingWebhookConfiguration", ("m", [hook_entry("m.example.com", "/label/m", ca=self.ca)]),
                         api=api)
            self.configs("ValidatingWebhookConfiguration", ("v", [hook_entry("v.example.com", "/allow", ca=self.ca)]),
                         api=api)
            code, obj, _ = self.create_cm(api=api)
            self.assertEqual(code, 201, obj)
            self.assertEqual(PEERS, [("kube-apiserver", None), ("kube-apiserver", None)])
            # Without the admission configuration the same calls present nothing.
            del PEERS[:]
            self.configs("ValidatingWebhookConfiguration", ("v", [hook_entry("v.example.com", "/allow", ca=self.ca)]))
            self.assertEqual(self.create_cm()[0], 201)
            self.assertEqual(PEERS, [(None, None)])
        finally:
            api.close()

    def test_credentials_name_lookup(self):
        """Which users entry a webhook host gets: exact, then "*.<parent>" nearest first, then "*";
        a Service port other than 443 is part of the name."""
        users = {"hook.hooks.svc": {"token": "exact"}, "*.hooks.svc": {"token": "ns"}, "*.svc": {"token": "svc"},
                 "*": {"token": "any"}, "hook.hooks.svc:8443": {"token": "port"}}
        cases = [("hook.hooks.svc", "exact"), ("other.hooks.svc", "ns"), ("a.b.hooks.svc", "ns"),
                 ("webhookd.istio-system.svc", "svc"), ("hook.hooks.svc:8443", "port"),
                 ("other.hooks.svc:8443", "any"), ("webhooks.example.com", "any")]
        saved = dict(fake_admission.WEBHOOK_USERS)
        try:
            fake_admission.WEBHOOK_USERS["ValidatingAdmissionWebhook"] = users
            for target, want in cases:
                self.assertEqual(fake_admission._webhook_user("ValidatingAdmissionWebhook", target).get("token"), want,
                                 target)
            self.assertEqual(fake_admission._webhook_user("MutatingAdmissionWebhook", "hook.hooks.svc"), {})
            del users["*"]
            self.assertEqual(fake_admission._webhook_user("ValidatingAdmissionWebhook", "x.example.com"), {})
        finally:
            fake_admission.WEBHOOK_USERS.clear()
            fake_admission.WEBHOOK_USERS.update(saved)

    def test_mutating_in_name_order_then_validating(self):
        self.configs("MutatingWebhookConfiguration",
                     ("b-second", [hook_entry("b.example.com", "/label/b", ca=self.ca)]),
                     ("a-first", [hook_entry("a1.example.com", "/label/a1", ca=self.ca),
                                  hook_entry("a2.example.com", "/label/a2", ca=self.ca)]))
        self.configs("ValidatingWebhookConfiguration", ("v", [hook_entry("v.example.com", "/allow", ca=self.ca)]))
        code, obj, _ = self.create_cm()
        self.assertEqual(code, 201, obj)
        self.assertEqual(obj["metadata"]["labels"], {"hit-a1": "y", "hit-a2": "y", "hit-b": "y"})
        self.assertEqual([p.split("?")[0] for p, _ in SEEN], ["/label/a1", "/label/a2", "/label/b", "/allow"])
        path, req = SEEN[-1]
        self.assertEqual(path, "/allow?timeout=10s")
        self.assertEqual(req["object"]["metadata"]["labels"], obj["metadata"]["labels"])  # validators see the result
        self.assertEqual((req["operation"], req["namespace"], req["kind"]["kind"], req["resource"]["resource"],
                          req["userInfo"]["username"], req["dryRun"]), ("CREATE", "app", "ConfigMap", "configmaps",
                                                                        "admin", False))
        self.assertEqual([c["webhook"] for c in self.api.control("admission")],
                         ["a1.example.com", "a2.example.com", "b.example.com", "v.example.com"])

    def test_selectors_and_rules(self):
        self.configs("ValidatingWebhookConfiguration", ("v", [
            hook_entry("ns.example.com", "/deny/ns", ca=self.ca,
                       namespaceSelector={"matchExpressions": [{"key": "team", "operator": "In", "values": ["b"]}]}),
            hook_entry("obj.example.com", "/deny/obj", ca=self.ca,
                       objectSelector={"matchLabels": {"guard": "on"}}),
            hook_entry("secrets.example.com", "/deny/secrets", ca=self.ca,
                       rules=[{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"],
                               "resources": ["secrets"]}])]))
        self.assertEqual(self.create_cm()[0], 201)
        code, st, _ = self.create_cm(ns="other", name="x")
        self.assertEqual((code, st["message"]), (403, 'admission webhook "ns.example.com" denied the request: ns'))
        code, st, _ = self.create_cm(name="guarded", labels={"guard": "on"})
        self.assertEqual((code, st["message"]), (403, 'admission webhook "obj.example.com" denied the request: obj'))
        # UPDATE: the old object's labels count for objectSelector too.
        self.assertEqual(self.create_cm(name="was")[0], 201)
        self.api.control("faults", [])
        code, st, _ = self.request("PUT", "/api/v1/namespaces/app/configmaps/was",
                                   {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "was",
                                                                                         "labels": {"guard": "on"}}})
        self.assertEqual(code, 403, st)

    def test_failure_policies_and_error_texts(self):
        cases = [  # (entry overrides, expected error substring)
            ({"clientConfig": {"service": {"namespace": "hooks", "name": "missing", "path": "/allow"},
                               "caBundle": self.ca}}, 'service "missing" not found'),
            ({"clientConfig": {"service": {"namespace": "hooks", "name": "empty", "path": "/allow"},
                               "caBundle": self.ca}}, 'no endpoints available for service "empty"'),
            ({"clientConfig": {"service": {"namespace": "hooks", "name": "hook", "path": "/allow"},
                               "caBundle": self.other_ca}},
             "tls: failed to verify certificate: x509: certificate signed by unknown authority"),
            ({"clientConfig": {"service": {"namespace": "hooks", "name": "hook", "path": "/allow"}}},
             "x509: certificate signed by unknown authority"),
            ({"clientConfig": {"service": {"namespace": "hooks", "name": "wrongname", "path": "/allow"},
                               "caBundle": self.ca}}, "x509: certificate is not valid for wrongname.hooks.svc"),
            ({"clientConfig": {"service": {"namespace": "hooks", "name": "hook", "path": "/status500"},
                               "caBundle": self.ca}}, "has prevented the request from succeeding"),
            ({"clientConfig": {"service": {"namespace": "hooks", "name": "hook", "path": "/baduid"},
                               "caBundle": self.ca}}, 'received invalid webhook response: expected response.uid="'),
            ({"clientConfig": {"service": {"namespace": "hooks", "name": "hook", "path": "/slow"},
                               "caBundle": self.ca}, "timeoutSeconds": 1}, "context deadline exceeded"),
        ]
        for i, (over, want) in enumerate(cases):
            for policy in ("Fail", "Ignore"):
                with self.subTest(want=want, policy=policy):
                    self.setUp()
                    self.configs("ValidatingWebhookConfiguration",
                                 ("v", [hook_entry("v.example.com", "/allow", failurePolicy=policy, **over)]))
                    code, st, _ = self.create_cm(name="c%d" % i)
                    if policy == "Ignore":
                        self.assertEqual(code, 201, st)
                        continue
                    self.assertEqual(code, 500, st)
                    self.assertEqual(st["reason"], "InternalError")
                    self.assertTrue(st["message"].startswith('Internal error occurred: failed calling webhook '
                                                             '"v.example.com": '), st["message"])
                    self.assertIn(want, st["message"])

    def test_reinvocation_if_needed(self):
        self.configs("MutatingWebhookConfiguration",
                     ("a", [hook_entry("a.example.com", "/allow", ca=self.ca, reinvocationPolicy="IfNeeded")]),
                     ("b", [hook_entry("b.example.com", "/label/b", ca=self.ca)]))
        self.assertEqual(self.create_cm()[0], 201)
        self.assertEqual([p.split("?")[0] for p, _ in SEEN], ["/allow", "/label/b", "/allow"])
        self.assertEqual(SEEN[-1][1]["object"]["metadata"]["labels"], {"hit-b": "y"})
        # Never: called once.
        self.setUp()
        self.configs("MutatingWebhookConfiguration",
                     ("a", [hook_entry("a.example.com", "/allow", ca=self.ca)]),
                     ("b", [hook_entry("b.example.com", "/label/b", ca=self.ca)]))
        self.assertEqual(self.create_cm()[0], 201)
        self.assertEqual(len(SEEN), 2)

    def test_istio_kind_dry_run_warnings_match_conditions(self):
        self.configs("ValidatingWebhookConfiguration", ("v", [hook_entry("v.example.com", "/warn", ca=self.ca)]))
        dr = {"apiVersion": "networking.istio.io/v1", "kind": "DestinationRule", "metadata": {"name": "r"},
              "spec": {"host": "reviews"}}
        code, obj, headers = self.request("POST", "/apis/networking.istio.io/v1/namespaces/app/destinationrules"
                                          "?dryRun=All", dr)
        self.assertEqual(code, 201, obj)
        self.assertIn("mind the gap", headers.get("Warning", ""))
        self.assertTrue(SEEN[-1][1]["dryRun"])
        self.assertEqual(self.request("GET", "/apis/networking.istio.io/v1/namespaces/app/destinationrules")[1]
                         ["items"], [])
        self.setUp()
        self.configs("ValidatingWebhookConfiguration",
                     ("v", [hook_entry("v.example.com", "/allow", ca=self.ca, sideEffects="Some")]))
        code, st, _ = self.create_cm(query="?dryRun=All")
        self.assertEqual(code, 400, st)
        self.assertIn("does not support dry run", st["message"])
        self.setUp()
        self.configs("ValidatingWebhookConfiguration", ("v", [hook_entry(
            "v.example.com", "/allow", ca=self.ca, matchConditions=[{"name": "x", "expression": "true"}])]))
        code, st, _ = self.create_cm()
        self.assertEqual(code, 500, st)
        self.assertIn("matchConditions (CEL)", st["message"])


if __name__ == "__main__":
    unittest.main(verbosity=2)
