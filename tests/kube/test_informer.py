#!/usr/bin/env python3
"""test_informer.py - kube/'s informer (LIST + WATCH) against fakeapi.py's watches (fake_watch.py).

Each check drives one informer_probe process and reads the API server's request log: initial sync,
events, unchanged trimmed objects, label selectors, quiet periods without LISTs, bookmarks surviving
a compaction, streams cut by a restart, 410 after an outage with compacted history, an API server
that restarts with its data, and kinds the server refuses (403) or does not have (404).
"""
import json
import os
import queue
import subprocess
import sys
import threading
import time

import kubetest
from kubetest import check

NS = "istio-system"


def cm(name, data, ns=NS, labels=None):
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": ns,
                                                                  "labels": labels or {}}, "data": data}


class Probe:
    def __init__(self, api, *args):
        self.p = subprocess.Popen([kubetest.tool("INFORMER_PROBE"), "--kubeconfig", api.kubeconfig(), *args],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.q = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.p.stdout:
            self.q.put(json.loads(line))

    def next(self, key, timeout=5):
        deadline = time.time() + timeout
        while time.time() < deadline:
            try:
                m = self.q.get(timeout=max(0.01, deadline - time.time()))
            except queue.Empty:
                break
            if key in m:
                return m[key] if key != "change" else m["cache"]
        return None

    def until(self, pred, timeout=8):
        """The first cache state satisfying pred, or None."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            c = self.next("change", deadline - time.time())
            if c is not None and pred(c):
                return c
        return None

    def status(self, synced=True):
        """The informer's status, once it says synced (the change callback runs just before)."""
        for _ in range(50):
            self.p.stdin.write("status\n")
            self.p.stdin.flush()
            st = self.next("status")
            if not synced or st["synced"]:
                break
            time.sleep(0.05)
        return st

    def close(self):
        try:
            self.p.stdin.write("quit\n")
            self.p.stdin.flush()
        except OSError:
            pass
        self.p.wait(10)


def first_state(api, *args):
    """The first cache and the synced status of a fresh informer (Probe *args) on api."""
    p = Probe(api, *args)
    try:
        return p.next("change"), p.status()
    finally:
        p.close()


def lists(api, plural="configmaps"):
    return [e for e in api.log() if e["method"] == "GET" and e["path"].endswith("/" + plural)
            and e["query"].get("watch") not in ("true", "1")]


def watches(api, plural="configmaps"):
    return [e for e in api.log() if e["method"] == "GET" and e["path"].endswith("/" + plural)
            and e["query"].get("watch") in ("true", "1")]


def names(cache):
    return sorted(cache)


def main():
    api = kubetest.FakeApi(args=("--state", os.path.join(os.environ.get("TMPDIR", "/tmp"),
                                                          "fakeapi-state-%d.json" % os.getpid())))
    try:
        api.load([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}},
                  {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "other"}},
                  cm("istio", {"mesh": "a: 1"}), cm("istio-sidecar-injector", {"config": "x"}),
                  cm("elsewhere", {"k": "v"}, ns="other")])
        p = Probe(api, "--resource", "configmaps", "--namespace", NS, "--watch-timeout", "2")
        try:
            c = p.next("change")
            check("initial sync: the namespace's objects, nothing else",
                  c is not None and names(c) == [NS + "/istio", NS + "/istio-sidecar-injector"], c)
            check("initial sync: synced", p.status()["synced"] is True)
            time.sleep(0.3)
            w = watches(api)
            lst = lists(api)
            check("one paged LIST, then a WATCH with bookmarks from the list's resourceVersion",
                  len(lst) == 1 and lst[0]["query"].get("limit") == "500" and len(w) >= 1 and
                  w[0]["query"].get("allowWatchBookmarks") == "true" and
                  w[0]["query"].get("resourceVersion") not in (None, "", "0") and
                  int(w[0]["query"]["timeoutSeconds"]) > 0, (lst, w))

            t0 = time.time()
            api.load([cm("istio-canary", {"mesh": "b: 2"})])
            c = p.until(lambda c: NS + "/istio-canary" in c)
            check("ADDED arrives within seconds", c is not None and time.time() - t0 < 3, c)

            kubetest_put(api, cm("istio", {"mesh": "a: 2"}))
            c = p.until(lambda c: c.get(NS + "/istio", {}).get("data") == {"mesh": "a: 2"})
            check("MODIFIED arrives", c is not None)

            obj = cm("istio", {"mesh": "a: 2"})
            obj["metadata"]["annotations"] = {"unrelated": "x"}
            kubetest_put(api, obj)
            check("a change outside the trimmed fields calls nobody", p.next("change", 1.5) is None)

            kubetest_delete(api, "istio-canary")
            c = p.until(lambda c: NS + "/istio-canary" not in c)
            check("DELETED arrives", c is not None)

            n = len(lists(api))
            time.sleep(5)  # two watch timeouts of 2 s
            check("a quiet period: the watch is renewed, nothing is listed",
                  len(lists(api)) == n and len(watches(api)) >= 3, (len(lists(api)), len(watches(api))))

            # Bookmarks keep the resourceVersion fresh: a compaction after other kinds moved on is no 410.
            api.control("watch/config", {"bookmark_interval": 0.2})
            api.load([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns-%d" % i}}
                      for i in range(5)])
            time.sleep(2.5)
            api.control("watch/compact", {})
            time.sleep(2.5)
            check("bookmarks: re-watching after a compaction needs no LIST", len(lists(api)) == n,
                  len(lists(api)))

            # A stream cut (an API server restart seen from the client): re-watch from the last resourceVersion.
            api.control("watch/cut", {})
            time.sleep(0.3)
            api.load([cm("after-cut", {"k": "1"})])
            c = p.until(lambda c: NS + "/after-cut" in c)
            check("cut stream: re-watched and the change arrives without a LIST",
                  c is not None and len(lists(api)) == n, len(lists(api)))

            # Outage: every request fails while the cluster changes and history is compacted -> 410 -> LIST.
            api.faults([{"method": "GET", "path_contains": "/configmaps", "action": "status", "status": 503,
                         "message": "etcdserver: leader changed", "count": 1000}])
            api.control("watch/cut", {})
            time.sleep(0.5)
            api.load([cm("during-outage", {"k": "1"})])
            kubetest_delete(api, "after-cut")
            api.control("watch/compact", {})
            time.sleep(1.5)
            st = p.status()
            check("outage: status says reconnecting, sync age grows",
                  "reconnecting" in st["describe"] and st["age"] > 0.5, st)
            api.faults([])
            c = p.until(lambda c: NS + "/during-outage" in c and NS + "/after-cut" not in c, timeout=10)
            check("after the outage: 410, a new LIST, and what changed meanwhile is there",
                  c is not None and len(lists(api)) == n + 1, (c, len(lists(api))))
            st = p.status()
            check("after the outage: healthy again", "watching" in st["describe"] and st["age"] == 0, st)

            # The API server restarts with its data (and an empty watch cache).
            api.down()
            time.sleep(1)
            api.up()
            time.sleep(0.5)
            api.load([cm("after-restart", {"k": "1"})])
            c = p.until(lambda c: NS + "/after-restart" in c, timeout=10)
            check("API server restart: reconnected, the change arrives", c is not None)

            # Lines that are no watch event (a proxy's error page, an event without its object, a
            # nesting bomb, a server error): the informer drops that stream, watches or lists again,
            # caches nothing of it, and the next change arrives.
            for i, raw in enumerate(["<html><body>502 Bad Gateway</body></html>", '{"type":"ADDED"}',
                                     '{"type":"MODIFIED","object":"x"}', "[" * 100000, '{"type":',
                                     '{"type":"ERROR","object":{"code":500,"message":"internal error"}}']):
                nw = len(watches(api))
                api.control("watch/raw", {"line": raw})
                time.sleep(0.3)
                api.load([cm("after-raw-%d" % i, {"k": "1"})])
                c = p.until(lambda c: NS + "/after-raw-%d" % i in c, timeout=10)
                check("a watch line that is no event (%s): the stream is dropped, the next change arrives, "
                      "nothing else is cached" % raw[:24],
                      c is not None and all(k.startswith(NS + "/") for k in c) and len(watches(api)) > nw,
                      (c and sorted(c)[:3], len(watches(api)), nw))
        finally:
            p.close()

        # Label selectors: objects entering and leaving the selection.
        p = Probe(api, "--resource", "configmaps", "--namespace", NS, "--selector", "istio.io/rev")
        try:
            c = p.next("change")
            check("selector: initial sync is empty", c == {}, c)
            kubetest_put(api, cm("istio", {"mesh": "a: 2"}, labels={"istio.io/rev": "default"}))
            check("selector: an object starting to match is ADDED",
                  p.until(lambda c: NS + "/istio" in c) is not None)
            kubetest_put(api, cm("istio", {"mesh": "a: 2"}))
            check("selector: an object leaving the selection is DELETED",
                  p.until(lambda c: NS + "/istio" not in c) is not None)
        finally:
            p.close()

        # Kinds the server refuses or does not have: synced, empty, unavailable.
        api.down()
        api.up()
        api.control("reset", {})
        c, st = first_state(api, "--resource", "proxyconfigs")
        check("proxyconfigs served: empty and synced", c == {} and st["synced"] and not st["unavailable"], st)
    finally:
        api.close()

    hidden = kubetest.FakeApi(args=("--hide", "proxyconfigs"))
    try:
        c, st = first_state(hidden, "--resource", "proxyconfigs")
        check("a CRD that is not installed (404): synced, empty, unavailable",
              c == {} and st["synced"] and st["unavailable"], st)
    finally:
        hidden.close()

    forbidden = kubetest.FakeApi(auth={"tokens": {"tok-admin": "admin"}, "basic": {}, "anonymous": False,
                                       "forbid": [{"user": "admin", "resource": "nodes"}]})
    try:
        c, st = first_state(forbidden, "--resource", "nodes")
        check("no RBAC for nodes (403): synced, empty, unavailable, and the reason says so",
              c == {} and st["synced"] and st["unavailable"] and "forbidden" in st["describe"], st)
    finally:
        forbidden.close()
    return kubetest.failed_status(" (informer)")


def kubetest_put(api, obj):
    """Create or replace through the control API (no faults apply there)."""
    state = [o for o in api.state() if o["kind"] == obj["kind"] and o["metadata"]["name"] == obj["metadata"]["name"]
             and o["metadata"].get("namespace") == obj["metadata"].get("namespace")]
    if state:
        api.control("replace", {"object": obj})
    else:
        api.load([obj])


def kubetest_delete(api, name, ns=NS):
    api.control("delete", {"kind": "ConfigMap", "namespace": ns, "name": name})


if __name__ == "__main__":
    sys.exit(main())
