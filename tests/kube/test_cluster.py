#!/usr/bin/env python3
"""test_cluster.py CORPUS - webhookd in cluster mode against fakeapi.py (with real watches).

The real binary over TLS, its revisions read from istiod's ConfigMaps (the conformance corpus' files),
checked end to end: initial sync and readiness, a ConfigMap edit served within seconds, a revision
created after start and then deleted, a broken template keeping the last good one, ProxyConfig at root,
namespace and workload level (with the annotation under the workload's resource), an invalid meshNetworks
(istiod's warning, injection unaffected), native sidecars from
node kubelet versions, a quiet period without requests, an API server outage (still injecting, still
ready), history compacted during an outage (changes made meanwhile served), no node access (native off),
readiness that waits for the first sync, and restarts during an outage served from --cluster-cache-dir.
"""
import json
import os
import re
import sys
import time
import urllib.error
import urllib.request
import ssl

import jsonpatch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
import kubetest  # noqa: E402
import whtest  # noqa: E402
from kubetest import check  # noqa: E402

NS = "istio-system"
CTX = ssl._create_unverified_context()


def ns(name, annotations=None):
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "annotations": annotations or {}}}


def cm(name, data, labels=None):
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": NS, "labels": labels or {}}, "data": data}


def node(name, version):
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
            "status": {"nodeInfo": {"kubeletVersion": version}}}


def proxyconfig(namespace, name, env, selector=None, concurrency=None):
    spec = {"environmentVariables": env}
    if selector:
        spec["selector"] = {"matchLabels": selector}
    if concurrency is not None:
        spec["concurrency"] = concurrency
    return {"apiVersion": "networking.istio.io/v1beta1", "kind": "ProxyConfig",
            "metadata": {"name": name, "namespace": namespace}, "spec": spec}


class Corpus:
    def __init__(self, path):
        self.config = open(os.path.join(path, "inject-config.yaml")).read()
        self.values = json.load(open(os.path.join(path, "values.json")))
        self.mesh = open(os.path.join(path, "mesh.yaml")).read()

    def injector(self, rev=None, hub=None, config=None, version=None):
        values = json.loads(json.dumps(self.values))
        if hub:
            values["global"]["hub"] = hub
        if rev:
            values["revision"] = rev
        labels = {"istio.io/rev": rev or "default"}
        if version:
            labels["app.kubernetes.io/version"] = version
        return cm("istio-sidecar-injector" + ("-" + rev if rev else ""),
                  {"config": config if config is not None else self.config, "values": json.dumps(values)}, labels)

    def meshcm(self, rev=None):
        return cm("istio" + ("-" + rev if rev else ""), {"mesh": self.mesh})


def readyz(server):
    try:
        with urllib.request.urlopen(server.url + "/readyz?verbose", context=CTX, timeout=5) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def inject(server, pod, path="/inject"):
    """(final pod or None, response) for one AdmissionReview."""
    body = whtest.review(object=pod, namespace=pod["metadata"].get("namespace", "default"))
    req = urllib.request.Request(server.url + path, data=body, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, context=CTX, timeout=10) as r:
        resp = json.loads(r.read())["response"]
    if not resp.get("allowed") or "patch" in resp and not resp["patch"]:
        return None, resp
    import base64
    ops = json.loads(base64.b64decode(resp["patch"])) if resp.get("patch") else []
    return jsonpatch.apply_patch(pod, ops), resp


def pod(namespace="default", labels=None, annotations=None, node_name=None):
    p = {"apiVersion": "v1", "kind": "Pod",
         "metadata": {"name": "p", "namespace": namespace, "labels": labels or {}, "annotations": annotations or {}},
         "spec": {"containers": [{"name": "app", "image": "app:1"}]}}
    if node_name:
        p["spec"]["nodeName"] = node_name
    return p


def proxy(final):
    """(the istio-proxy container, 'native' when it is an init container with restartPolicy Always)."""
    for c in final["spec"].get("initContainers") or []:
        if c["name"] == "istio-proxy":
            return c, "native"
    for c in final["spec"].get("containers") or []:
        if c["name"] == "istio-proxy":
            return c, "sidecar"
    return None, None


def image_of(server, path="/inject"):
    final, resp = inject(server, pod(), path)
    c, _ = proxy(final) if final else (None, None)
    return c["image"] if c else resp.get("status", {}).get("message")


def until(fn, pred, timeout=10):
    deadline = time.time() + whtest.scaled(timeout)
    v = fn()
    while not pred(v) and time.time() < deadline:
        time.sleep(0.1)
        v = fn()
    return v


def requests(api):
    return [e for e in api.log() if not e["path"].startswith("/_fake/")]


def lists(api):
    return [e for e in requests(api) if e["method"] == "GET" and e["query"].get("watch") not in ("true", "1")]


def main():
    if len(sys.argv) < 2 or not os.path.isdir(sys.argv[1]):
        print("usage: test_cluster.py CORPUS (the istio-inject/master folder)")
        return kubetest.SKIP
    corpus = Corpus(sys.argv[1])
    # The canary revision is Istio 1.29.0 with that release's own ConfigMaps (master's template calls
    # functions 1.29's istiod lacks, and such a revision is refused as it would be there).
    corpus_129 = Corpus(os.path.join(os.path.dirname(os.path.abspath(sys.argv[1])), "1.29.0"))
    corpus_122 = Corpus(os.path.join(os.path.dirname(os.path.abspath(sys.argv[1])), "1.22.0"))
    state = os.path.join(os.environ.get("TMPDIR", "/tmp"), "cluster-state-%d.json" % os.getpid())
    api = kubetest.FakeApi(args=("--state", state))
    try:
        api.load([ns(NS), ns("app"), corpus.injector(hub="example.com/first"), corpus.meshcm(),
                  node("n1", "v1.34.1")])
        with whtest.Server("--kubeconfig=" + api.kubeconfig(), "--self-signed-cert-out=" + api.path("wh.pem"),
                           "--shutdown-timeout=2s") as s:
            st, body = until(lambda: readyz(s), lambda r: r[0] == 200)
            check("initial sync: ready, every source listed", st == 200 and "configmaps in istio-system: watching"
                  in body and "nodes: watching" in body and "proxyconfigs: watching" in body, body)
            check("initial sync: the cluster's revision answers", image_of(s) == "example.com/first/proxyv2:latest",
                  image_of(s))
            check("a revision without a release label or version tag injects as the newest release",
                  re.search(r'^webhookd_inject_revision_release\{revision="default",release="[0-9.]+",'
                            r'source="newest"\} 1$', whtest.once(s.port, "GET", "/metrics")[2].decode(), re.M))

            # An edit is served within seconds.
            t0 = time.time()
            api.control("replace", {"object": corpus.injector(hub="example.com/edited")})
            img = until(lambda: image_of(s), lambda v: v.startswith("example.com/edited/"))
            check("ConfigMap edit served within seconds", img.startswith("example.com/edited/") and
                  time.time() - t0 < whtest.scaled(5), (img, time.time() - t0))

            # A revision created after start, then deleted.
            api.load([corpus_129.injector(rev="canary", hub="example.com/canary", version="1.29.0"),
                      corpus_129.meshcm("canary")])
            img = until(lambda: image_of(s, "/inject/rev/canary"), lambda v: v.startswith("example.com/canary/"))
            check("revision created after start is served", img.startswith("example.com/canary/"), img)
            check("its release comes from app.kubernetes.io/version",
                  whtest.metric(s, "webhookd_inject_revision_release",
                                '{revision="canary",release="1.29",source="configmap-label"}') == 1)
            # meshNetworks: istiod validates it and, when it is invalid, warns and keeps its last networks; injection
            # does not read them, so the revision keeps injecting and no other revision notices.
            mcm = corpus_129.meshcm("canary")
            mcm["data"]["meshNetworks"] = ("networks:\n  n1:\n    endpoints: [{fromRegistry: cluster.local}]\n"
                                           "    gateways: [{address: 1.2.3.4}]\n")
            api.control("replace", {"object": mcm})
            want = ("2 errors occurred:\n\t* invalid network n1: invalid registry name: cluster.local\n\t* invalid "
                    "network n1: port number 0 must be in the range 1..65535\n\n")
            recs = until(lambda: [r for r in s.records() if r.get("msg") == "invalid mesh networks, using last known "
                                  "state"], lambda v: v)
            check("invalid meshNetworks: istiod's warning with its error text, for that revision only",
                  [(r.get("revision"), r.get("configmap"), r.get("error")) for r in recs] ==
                  [("canary", "istio-canary", want)], recs)
            check("invalid meshNetworks: the revision still injects, nothing refused",
                  image_of(s, "/inject/rev/canary").startswith("example.com/canary/") and
                  "config refused" not in readyz(s)[1], readyz(s)[1])
            check("invalid meshNetworks: the other revision is untouched", image_of(s).startswith("example.com/edited/"))
            api.control("delete", {"kind": "ConfigMap", "namespace": NS, "name": "istio-sidecar-injector-canary"})
            msg = until(lambda: image_of(s, "/inject/rev/canary"), lambda v: "unknown revision" in v)
            check("deleted revision answers like any unknown one",
                  msg == 'unknown revision "canary": this webhookd serves no such revision', msg)
            check("the other revision is untouched", image_of(s).startswith("example.com/edited/"))

            # A broken template keeps the last good one.
            fails = whtest.metric(s, "webhookd_inject_revision_reload_total", '{revision="default",result="failure"}')
            bad = corpus.config.replace("templates:\n", "templates:\n  broken: |\n    {{ if }}\n", 1)
            api.control("replace", {"object": corpus.injector(hub="example.com/broken", config=bad)})
            until(lambda: readyz(s)[1], lambda b: "config refused" in b)
            st, body = readyz(s)
            check("broken template: the reason is in /readyz", "revision default" in body and
                  "config refused" in body, body)
            check("broken template: counted", whtest.metric(s, "webhookd_inject_revision_reload_total",
                                                            '{revision="default",result="failure"}') == fails + 1)
            check("broken template: the last good one keeps serving", image_of(s).startswith("example.com/edited/"),
                  image_of(s))
            check("broken template: logged with the reason", any(
                r.get("msg") == "revision config rejected; previous config keeps serving" and
                r.get("revision") == "default" for r in s.records()))
            # A template that parses but fails when it runs is rejected too (check render).
            api.control("replace", {"object": corpus.injector(
                hub="example.com/broken2",
                config=corpus.config.replace("templates:\n  sidecar: |\n", "templates:\n  sidecar: |\n"
                                             "    {{ index .Values.nope.deeper \"x\" }}\n", 1))})
            until(lambda: readyz(s)[1], lambda b: "check render" in b)
            check("a template failing its check render keeps the last good one",
                  "check render" in readyz(s)[1] and image_of(s).startswith("example.com/edited/"), readyz(s)[1])
            api.control("replace", {"object": corpus.injector(hub="example.com/fixed")})
            # /readyz stays 200 while a refused config is reported (#15), so wait for the report to go.
            st, body = until(lambda: readyz(s), lambda r: r[0] == 200 and "config refused" not in r[1])
            check("fixed: ready again, the new one serves", st == 200 and
                  image_of(s).startswith("example.com/fixed/"), body)

            # ProxyConfig at root, namespace and workload level; the annotation under the workload's resource.
            # The oldest of each namespace has a selector without labels: istiod counts it at neither level.
            empty = [proxyconfig(ns, "aaa-empty-selector", {"A": "empty", "B": "empty", "C": "empty"}) for ns in (NS, "app")]
            for pc in empty:
                pc["spec"]["selector"] = {}
            api.load(empty)
            api.load([proxyconfig(NS, "root", {"A": "root", "B": "root"}, concurrency=3),
                      proxyconfig("app", "ns", {"B": "ns", "C": "ns"}),
                      proxyconfig("app", "web", {"C": "workload"}, selector={"app": "web"})])

            def envs(p):
                final, _ = inject(s, p)
                c, _ = proxy(final)
                return {e["name"]: e.get("value") for e in c.get("env") or []}, c.get("args") or []
            ann = {"proxy.istio.io/config": "proxyMetadata:\n  C: annotation\n  D: annotation\n"}
            env, args = until(lambda: envs(pod("app", {"app": "web"}, ann)), lambda r: r[0].get("C") == "workload")
            check("ProxyConfig: root < namespace < workload, the annotation under the workload",
                  (env.get("A"), env.get("B"), env.get("C"), env.get("D")) == ("root", "ns", "workload", "annotation"),
                  {k: env.get(k) for k in "ABCD"})
            check("ProxyConfig: concurrency from the root namespace's resource (PROXY_CONFIG)",
                  json.loads(env.get("PROXY_CONFIG") or "{}").get("concurrency") == 3, env.get("PROXY_CONFIG"))
            env, _ = envs(pod("app", {"app": "other"}, ann))
            check("ProxyConfig: no workload match -> the annotation wins over the namespace",
                  (env.get("B"), env.get("C"), env.get("D")) == ("ns", "annotation", "annotation"),
                  {k: env.get(k) for k in "ABCD"})
            env, _ = envs(pod("default"))
            check("ProxyConfig: another namespace gets the root's only",
                  (env.get("A"), env.get("B"), env.get("C")) == ("root", "root", None), {k: env.get(k) for k in "ABC"})

            # Two namespace-level ProxyConfigs created in the same second: from 1.23 the first by name counts
            # ("x"), up to 1.22 the first by "<name>.<namespace>" ("x-y.tie" < "x.tie").
            api.load([corpus_122.injector(rev="old", hub="example.com/old", version="1.22.0"),
                      corpus_122.meshcm("old"), {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "tie"}}])
            until(lambda: image_of(s, "/inject/rev/old"), lambda v: v.startswith("example.com/old/"))
            while True:
                api.load([proxyconfig("tie", n, {"T": n}) for n in ("x", "x-y")])
                created = {o["metadata"]["name"]: o["metadata"]["creationTimestamp"] for o in api.state()
                           if o["kind"] == "ProxyConfig" and o["metadata"]["namespace"] == "tie"}
                if created["x"] == created["x-y"]:
                    break
                for n in created:
                    api.control("delete", {"kind": "ProxyConfig", "namespace": "tie", "name": n})

            def envs_of(server, p, path):
                return {e["name"]: e.get("value") for e in proxy(inject(server, p, path)[0])[0].get("env") or []}

            def env_t(path):
                return envs_of(s, pod("tie"), path).get("T")
            t_new = until(lambda: env_t("/inject"), lambda t: t is not None)
            check("ProxyConfig: a creation-time tie goes to the first name (1.23 on)", t_new == "x", t_new)
            check("ProxyConfig: a creation-time tie goes to the first <name>.<namespace> (1.22)",
                  env_t("/inject/rev/old") == "x-y", env_t("/inject/rev/old"))

            # A mesh whose rootNamespace is "": no mesh-wide level, the namespace level in every namespace.
            noroot = corpus.meshcm("noroot")
            noroot["data"]["mesh"] = noroot["data"]["mesh"].replace("rootNamespace: istio-system", 'rootNamespace: ""')
            api.load([corpus.injector(rev="noroot", hub="example.com/noroot"), noroot])
            until(lambda: image_of(s, "/inject/rev/noroot"), lambda v: v.startswith("example.com/noroot/"))
            env = envs_of(s, pod(NS), "/inject/rev/noroot")
            check("ProxyConfig: rootNamespace \"\" -> no mesh-wide resource, istio-system's own for its pods",
                  (env.get("A"), env.get("B")) == ("root", "root") and
                  envs_of(s, pod("default"), "/inject/rev/noroot").get("A") is None, env)

            # Native sidecars, auto: every node >= 1.33, else the pod's node.
            check("native auto: every node is 1.34 -> native", proxy(inject(s, pod())[0])[1] == "native")
            api.load([node("n2", "v1.32.3")])
            kind = until(lambda: proxy(inject(s, pod())[0])[1], lambda k: k == "sidecar")
            check("native auto: a 1.32 node joins -> not native", kind == "sidecar")
            check("native auto: the pod's node decides when known",
                  proxy(inject(s, pod(node_name="n1"))[0])[1] == "native" and
                  proxy(inject(s, pod(node_name="n2"))[0])[1] == "sidecar")

            # A quiet cluster costs no requests.
            time.sleep(1)
            n = len(requests(api))
            time.sleep(whtest.scaled(4))
            check("a quiet period: no requests at all (no LIST, no re-watch)", len(requests(api)) == n,
                  requests(api)[n:])

            # API server down: still injecting, still ready; back: changes served.
            api.down()
            time.sleep(1)
            check("API server down: still injecting", image_of(s).startswith("example.com/fixed/"))
            check("API server down: still ready", readyz(s)[0] == 200, readyz(s))
            time.sleep(1.5)
            check("API server down: the sync age shows it",
                  whtest.metric(s, "webhookd_kube_sync_age_seconds", '{resource="configmaps"}') > 0.5)
            api.up()
            api.control("replace", {"object": corpus.injector(hub="example.com/after-restart")})
            img = until(lambda: image_of(s), lambda v: v.startswith("example.com/after-restart/"), timeout=40)
            check("API server back: changes served", img.startswith("example.com/after-restart/"), img)

            # History compacted while webhookd could not reach the API server: 410, relist, changes served.
            n_lists = len(lists(api))
            api.faults([{"path_contains": "/api", "action": "status", "status": 503, "count": 100000}])
            api.control("watch/cut", {})
            api.control("replace", {"object": corpus.injector(hub="example.com/compacted")})
            api.control("watch/compact", {})
            time.sleep(1)
            check("outage: the old revision still serves", image_of(s).startswith("example.com/after-restart/"))
            api.faults([])
            img = until(lambda: image_of(s), lambda v: v.startswith("example.com/compacted/"), timeout=40)
            check("back with compacted history: the change made meanwhile is served",
                  img.startswith("example.com/compacted/") and len(lists(api)) > n_lists, (img, len(lists(api))))
            check("relists are counted", whtest.metric(s, "webhookd_kube_relists_total", '{resource="configmaps"}') >= 1)
    finally:
        api.close()

    # No access to nodes (RBAC): native sidecars off under auto.  Readiness waits for the first sync.
    api = kubetest.FakeApi(auth={"tokens": {"tok-admin": "admin"}, "basic": {}, "anonymous": False,
                                 "forbid": [{"user": "admin", "resource": "nodes"}]})
    try:
        api.load([ns(NS), corpus.injector(hub="example.com/first"), corpus.meshcm(), node("n1", "v1.34.1")])
        api.down()
        with whtest.Server("--kubeconfig=" + api.kubeconfig(), "--self-signed-cert-out=" + api.path("wh.pem")) as s:
            time.sleep(1)
            check("API server unreachable at start: not ready", readyz(s)[0] == 503, readyz(s))
            api.up()
            api.load([ns(NS), corpus.injector(hub="example.com/first"), corpus.meshcm(), node("n1", "v1.34.1")])
            st, body = until(lambda: readyz(s), lambda r: r[0] == 200, timeout=20)
            check("ready after the first sync", st == 200, body)
            check("no node access: reported", "nodes: not available" in body, body)
            check("no node access: native sidecars off under auto", proxy(inject(s, pod())[0])[1] == "sidecar")
    finally:
        api.close()

    # Restarted while the API server is away (a container restart: the cache directory is the chart's emptyDir).
    # Without --cluster-cache-dir webhookd waits, unready (above); with it, it serves what it last saw, revisions,
    # ProxyConfigs and nodes alike, and is ready, until a LIST answers.  A snapshot of another collection is not
    # taken for this one.
    cache = os.path.join(os.environ.get("TMPDIR", "/tmp"), "cluster-cache-%d" % os.getpid())
    os.makedirs(cache, exist_ok=True)
    state2 = state + ".2"
    api = kubetest.FakeApi(args=("--state", state2))
    try:
        api.load([ns(NS), ns("app"), corpus.injector(hub="example.com/cached"), corpus.meshcm(),
                  corpus_129.injector(rev="canary", hub="example.com/canary", version="1.29.0"),
                  corpus_129.meshcm("canary"),
                  corpus.injector(rev="bad", config="templates: [\n"),
                  proxyconfig(NS, "root", {"A": "root"}), node("n1", "v1.32.3")])
        args = ("--kubeconfig=" + api.kubeconfig(), "--self-signed-cert-out=" + api.path("wh.pem"),
                "--cluster-cache-dir=" + cache, "--shutdown-timeout=2s")

        def env_a(s):
            final, _ = inject(s, pod("app"))
            return {e["name"]: e.get("value") for e in proxy(final)[0].get("env") or []}.get("A") if final else None
        def isolated(s, when):
            bad = image_of(s, "/inject/rev/bad")
            check(when + ": a revision broken from the start is refused with its reason, ready all the same",
                  bad.startswith('revision "bad" is not served: its config was refused: ') and readyz(s)[0] == 200,
                  bad)
            check(when + ": the broken revision affects no other", image_of(s).startswith("example.com/cached/") and
                  image_of(s, "/inject/rev/canary").startswith("example.com/canary/"),
                  (image_of(s), image_of(s, "/inject/rev/canary")))
        with whtest.Server(*args) as s:
            until(lambda: readyz(s), lambda r: r[0] == 200)
            until(lambda: env_a(s), lambda v: v == "root")
            isolated(s, "first start")
        check("a snapshot per source", sorted(os.listdir(cache)) == ["configmaps.json", "nodes.json",
                                                                      "proxyconfigs.json"], os.listdir(cache))
        with whtest.Server(*(args[:2] + ("--cluster-cache-dir=/proc/no-such-dir",))) as s:
            until(lambda: readyz(s), lambda r: r[0] == 200)
            warned = until(lambda: [r["resource"] for r in s.records()
                                    if r.get("msg", "").startswith("kube: cannot write the snapshot")],
                           lambda v: len(v) >= 3)
            check("an unwritable cache directory: a warning per source, injection unaffected",
                  sorted(warned) == ["configmaps in istio-system", "nodes", "proxyconfigs"] and
                  image_of(s).startswith("example.com/cached/"), warned)
        api.down()
        with whtest.Server(*args) as s:
            st, body = until(lambda: readyz(s), lambda r: r[0] == 200, timeout=20)
            check("restarted during an outage, with a snapshot: ready, and says so",
                  st == 200 and body.count("from the snapshot") == 3, body)
            isolated(s, "restarted during an outage")
            check("restarted during an outage: ProxyConfigs as last seen", env_a(s) == "root", env_a(s))
            check("restarted during an outage: nodes as last seen (a 1.32 kubelet: not native)",
                  proxy(inject(s, pod())[0])[1] == "sidecar")
            api.up()
            api.control("replace", {"object": corpus.injector(hub="example.com/live")})
            img = until(lambda: image_of(s), lambda v: v.startswith("example.com/live/"), timeout=40)
            check("API server back: the snapshot gives way to the cluster", img.startswith("example.com/live/") and
                  "snapshot" not in until(lambda: readyz(s)[1], lambda b: "snapshot" not in b), img)
        api.down()
        with whtest.Server(*(args + ("--istio-namespace=mesh",))) as s:
            time.sleep(1.5)
            st, body = readyz(s)
            check("a snapshot of another namespace's ConfigMaps is not served", st == 503 and
                  "configmaps in mesh: waiting for the first list" in body and
                  any(r.get("msg", "").startswith("kube: snapshot of another collection") for r in s.records()), body)
        with open(os.path.join(cache, "nodes.json"), "w") as f:
            f.write("{not json")
        with whtest.Server(*args) as s:
            time.sleep(1.5)
            st, body = readyz(s)
            check("a damaged snapshot is not served (that source waits)", st == 503 and
                  "nodes: waiting for the first list" in body and
                  "configmaps in istio-system: 5 objects from the snapshot" in body, body)
    finally:
        api.close()
        for f in os.listdir(cache):
            os.remove(os.path.join(cache, f))
        os.rmdir(cache)

    # A revision on OpenShift (its own values.global.platform) without RBAC on namespaces: the error names
    # the cost and the fix, readiness shows it, and its proxies get 1337 (no namespace range is known).
    api = kubetest.FakeApi(auth={"tokens": {"tok-admin": "admin"}, "basic": {}, "anonymous": False,
                                 "forbid": [{"user": "admin", "resource": "namespaces"}]})
    try:
        inj = corpus.injector(hub="example.com/os")
        values = json.loads(inj["data"]["values"])
        values["global"]["platform"] = "openshift"
        inj["data"]["values"] = json.dumps(values)
        api.load([ns(NS, annotations={"openshift.io/sa.scc.uid-range": "1000620000/10000"}), inj, corpus.meshcm(),
                  node("n1", "v1.34.1")])
        with whtest.Server("--kubeconfig=" + api.kubeconfig(), "--self-signed-cert-out=" + api.path("wh.pem")) as s:
            st, body = until(lambda: readyz(s), lambda r: r[0] == 200 and "namespaces: not available" in r[1],
                             timeout=20)
            check("OpenShift revision, no namespace access: reported in readiness",
                  st == 200 and "namespaces: not available" in body, body)
            recs = until(lambda: [r for r in s.records() if r.get("msg", "").startswith(
                "inject: namespaces cannot be read: pods of revisions on OpenShift get the proxy UID/GID 1337")],
                lambda v: v)
            check("OpenShift revision, no namespace access: the error says what it costs and what to grant",
                  len(recs) == 1 and "get/list/watch on namespaces" in recs[0]["msg"], recs)
            final = inject(s, pod(namespace=NS))[0]
            check("OpenShift revision, no namespace access: the proxy runs as 1337",
                  final and proxy(final)[0]["securityContext"].get("runAsUser") == 1337, final)
    finally:
        api.close()
    return kubetest.failed_status(" (cluster mode)")


if __name__ == "__main__":
    sys.exit(main())
