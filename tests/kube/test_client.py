#!/usr/bin/env python3
"""test_client.py - the wh_kube REST verbs (through kube_probe) against
fakeapi.py: get/list (selectors, pagination), create, update (409), the
read-modify-write retry, the four patch types, server-side apply ownership
(conflicts, force, removal of fields no longer applied), delete, and the
error sentences for 403/404/409, deadlines and unreachable servers.
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kubetest  # noqa: E402
from kubetest import check  # noqa: E402



ADM = "admissionregistration.k8s.io/v1"


def mwc(name, labels=None, **extra):
    o = {"apiVersion": ADM, "kind": "MutatingWebhookConfiguration", "metadata": {"name": name, "labels": labels or {}},
         "webhooks": [{"name": "a.example.com", "sideEffects": "None", "admissionReviewVersions": ["v1"],
                       "clientConfig": {"url": "https://example.com/a"}}]}
    o.update(extra)
    return o


def main():
    api = kubetest.FakeApi(auth={"tokens": {"tok-admin": "admin", "tok-dev": "dev"}, "anonymous": False,
                                 "forbid": [{"user": "dev", "verb": "delete", "resource": "*"}]})
    try:
        kc = api.kubeconfig()
        p = kubetest.Probe("--kubeconfig", kc)
        j = json.dumps

        r = p("create", "mutatingwebhookconfigurations", "-", j(mwc("one", {"team": "a"})), "tester")
        check("create returns the stored object", r["ok"] and r["result"]["metadata"]["resourceVersion"], r)
        r = p("create", "mutatingwebhookconfigurations", "-", j(mwc("one")))
        check("create of an existing name is a conflict", not r["ok"] and r["code"] == "conflict" and
              'mutatingwebhookconfigurations.admissionregistration.k8s.io "one" already exists' in r["error"], r)
        p("create", "mutatingwebhookconfigurations", "-", j(mwc("two", {"team": "b"})))
        r = p("get", "mutatingwebhookconfigurations", "-", "one")
        check("get", r["ok"] and r["result"]["webhooks"][0]["failurePolicy"] == "Fail", r)
        r = p("get", "mutatingwebhookconfigurations", "-", "nope")
        check("get 404 is not found with the server's message", not r["ok"] and r["code"] == "not found" and
              'mutatingwebhookconfigurations.admissionregistration.k8s.io "nope" not found' in r["error"], r)
        r = p("list", "mutatingwebhookconfigurations", "-", "team in (b,c),!missing")
        check("list with a set-based selector", r["ok"] and [o["metadata"]["name"] for o in r["result"]] == ["two"], r)
        check("list items carry kind", r["ok"] and r["result"][0]["kind"] == "MutatingWebhookConfiguration", r)

        # pagination: 1100 objects arrive as one array, in three pages
        api.load([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "many"}}] +
                 [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm-%04d" % i, "namespace": "many"}}
                  for i in range(1100)])
        n0 = len(api.log())
        r = p("list", "configmaps", "many")
        pages = [e for e in api.log()[n0:] if e["path"].endswith("/configmaps")]
        check("list follows continue", r["ok"] and len(r["result"]) == 1100 and len(pages) == 3 and
              "continue" in pages[1]["query"], (len(r.get("result") or []), len(pages)))

        # update: stale resourceVersion
        obj = p("get", "mutatingwebhookconfigurations", "-", "one")["result"]
        obj["metadata"]["labels"]["x"] = "1"
        r1 = p("update", "mutatingwebhookconfigurations", "-", j(obj))
        r2 = p("update", "mutatingwebhookconfigurations", "-", j(obj))
        check("update with the current resourceVersion", r1["ok"], r1)
        check("update with a stale resourceVersion is a conflict", not r2["ok"] and r2["code"] == "conflict" and
              "the object has been modified" in r2["error"], r2)

        # read-modify-write retries 409s
        api.faults([{"method": "PUT", "path_contains": "/one", "action": "bump", "count": 2}])
        n0 = len(api.log())
        r = p("label", "mutatingwebhookconfigurations", "-", "one", "retried", "yes")
        puts = [e["status"] for e in api.log()[n0:] if e["method"] == "PUT"]
        check("update_retry survives concurrent writers", r["ok"] and puts == [409, 409, 200] and
              r["result"]["metadata"]["labels"]["retried"] == "yes", (r, puts))
        api.faults([{"method": "PUT", "path_contains": "/one", "action": "bump", "count": 9}])
        r = p("label", "mutatingwebhookconfigurations", "-", "one", "retried", "again")
        check("update_retry gives up after 5 attempts", not r["ok"] and r["code"] == "conflict" and
              "5 attempts" in r["error"], r)
        api.faults([])

        # patches
        r = p("patch", "mutatingwebhookconfigurations", "-", "two", "merge", j({"metadata": {"labels": {"team": None, "m": "1"}}}))
        check("merge patch", r["ok"] and r["result"]["metadata"]["labels"] == {"m": "1"}, r)
        r = p("patch", "mutatingwebhookconfigurations", "-", "two", "json",
              j([{"op": "replace", "path": "/webhooks/0/failurePolicy", "value": "Ignore"}]))
        check("json patch", r["ok"] and r["result"]["webhooks"][0]["failurePolicy"] == "Ignore", r)
        r = p("patch", "mutatingwebhookconfigurations", "-", "two", "json",
              j([{"op": "test", "path": "/webhooks/0/failurePolicy", "value": "Fail"}]))
        check("failed json patch test is an error", not r["ok"] and r["code"] == "remote error", r)
        r = p("patch", "mutatingwebhookconfigurations", "-", "two", "strategic",
              j({"webhooks": [{"name": "b.example.com", "sideEffects": "None", "admissionReviewVersions": ["v1"],
                               "clientConfig": {"url": "https://example.com/b"}}]}))
        check("strategic merge patch merges webhooks by name", r["ok"] and
              [w["name"] for w in r["result"]["webhooks"]] == ["a.example.com", "b.example.com"], r)

        # server-side apply
        cfg = mwc("applied", {"owner": "me", "extra": "1"})
        r = p("apply", "mutatingwebhookconfigurations", "-", j(cfg), "mgr-a")
        check("apply creates", r["ok"] and r["result"]["metadata"]["labels"]["extra"] == "1", r)
        n0 = len(api.log())
        cfg2 = mwc("applied", {"owner": "me"})
        r = p("apply", "mutatingwebhookconfigurations", "-", j(cfg2), "mgr-a")
        req = api.log()[n0]
        check("apply is a PATCH with apply-patch+yaml and fieldManager", req["method"] == "PATCH" and
              req["content_type"] == "application/apply-patch+yaml" and req["query"].get("fieldManager") == "mgr-a",
              req)
        check("apply removes fields the manager no longer applies", r["ok"] and
              "extra" not in r["result"]["metadata"]["labels"], r)
        r = p("apply", "mutatingwebhookconfigurations", "-", j(mwc("applied", {"owner": "you"})), "mgr-b")
        check("apply conflicting with another manager fails", not r["ok"] and r["code"] == "conflict" and
              'conflict with "mgr-a"' in r["error"], r)
        r = p("apply", "mutatingwebhookconfigurations", "-", j(mwc("applied", {"owner": "you"})), "mgr-b", "force")
        check("apply with force takes the field over", r["ok"] and r["result"]["metadata"]["labels"]["owner"] == "you", r)
        r = p("patch", "mutatingwebhookconfigurations", "-", "applied", "apply", j(mwc("applied")))
        check("apply without a field manager is refused locally", not r["ok"] and "field manager" in r["error"], r)

        # throttling: 429 with Retry-After is retried, without it is not
        api.faults([{"method": "GET", "path_contains": "/one", "action": "status", "status": 429,
                     "reason": "TooManyRequests", "message": "Too many requests, please try again later.",
                     "retry_after": 1, "count": 2}])
        n0 = len(api.log())
        r = p("get", "mutatingwebhookconfigurations", "-", "one")
        codes = [e["status"] for e in api.log()[n0:]]
        check("429 with Retry-After is retried", r["ok"] and codes == [429, 429, 200], (r, codes))
        api.faults([{"method": "GET", "path_contains": "/one", "action": "status", "status": 429,
                     "reason": "TooManyRequests", "message": "Too many requests, please try again later.", "count": 1}])
        r = p("get", "mutatingwebhookconfigurations", "-", "one")
        check("429 without Retry-After is reported", not r["ok"] and "Too many requests" in r["error"] and
              "retry later" in r["error"], r)
        api.faults([{"method": "GET", "path_contains": "/one", "action": "status", "status": 503,
                     "message": "unavailable", "retry_after": 1, "count": 9}])
        n0 = len(api.log())
        r = p("get", "mutatingwebhookconfigurations", "-", "one")
        check("Retry-After retries are bounded", not r["ok"] and len(api.log()[n0:]) == 4, (r, len(api.log()[n0:])))
        api.faults([])

        # delete and RBAC wording
        r = p("delete", "mutatingwebhookconfigurations", "-", "two")
        check("delete", r["ok"] and not p("get", "mutatingwebhookconfigurations", "-", "two")["ok"], r)
        r = p("delete", "mutatingwebhookconfigurations", "-", "two")
        check("delete of a missing object is not found", not r["ok"] and r["code"] == "not found", r)
        p.close()

        kc_dev = api.kubeconfig("kc-dev", user={"token": "tok-dev"})
        r = kubetest.probe_once("--kubeconfig", kc_dev, cmds=[["delete", "services", "istio-system", "x"]])[0]
        check("403 names the missing RBAC permission", not r["ok"] and
              'services "x" is forbidden: User "dev" cannot delete resource "services"' in r["error"] and
              'needs RBAC verb "delete" on "services" in namespace "istio-system"' in r["error"], r)

        # deadlines and unreachable servers
        api.faults([{"method": "GET", "action": "delay", "delay_ms": 3000}])
        t0 = time.time()
        r = kubetest.probe_once("--kubeconfig", kc, "--timeout-ms", "500", cmds=[["get", "namespaces", "-", "x"]])[0]
        took = time.time() - t0
        check("a slow server hits the deadline", not r["ok"] and r["code"] == "timeout" and
              "context deadline exceeded" in r["error"] and "--request-timeout" in r["error"] and took < 2.5,
              (r, took))
        api.faults([])
        closed = api.kubeconfig("kc-closed", cluster={"server": "https://127.0.0.1:1"})
        r = kubetest.probe_once("--kubeconfig", closed, cmds=[["get", "namespaces", "-", "x"]])[0]
        check("an unreachable server says what to check", not r["ok"] and "cannot reach the API server" in r["error"]
              and 'cluster "fake"' in r["error"], r)

        if kubetest.kubectl():
            env = dict(os.environ, KUBECONFIG=kc)
            import subprocess
            out = subprocess.run(["kubectl", "get", "mutatingwebhookconfigurations", "applied", "-o", "json"],
                                 capture_output=True, text=True, env=env)
            ok = out.returncode == 0 and json.loads(out.stdout)["metadata"]["labels"]["owner"] == "you"
            check("kubectl oracle reads the applied object back", ok, out.stderr)
        else:
            print("skip kubectl oracle: kubectl is not installed")
    finally:
        api.close()
    return kubetest.failed_status()


if __name__ == "__main__":
    sys.exit(main())
