#!/usr/bin/env python3
"""bench_cluster.py BUILD_DIR [CORPUS] - cluster mode at scale: RSS and time to first sync.

A fake API server (tests/kube/fakeapi.py, real LIST + WATCH) holds 10,000 namespaces (with
OpenShift UID/GID annotations), 5,000 nodes and 20 revisions (istio-sidecar-injector-<rev> +
istio-<rev>, the conformance corpus' master files).  Measured in the same run:

  baseline RSS      webhookd --revisions-source builtin --native-sidecars false (reads nothing)
  dir RSS           the same 20 revisions from --revisions-dir (no cluster reads)
  cluster RSS       --revisions-source cluster --platform openshift --native-sidecars auto:
                    every informer (configmaps, proxyconfigs, nodes, namespaces) after its first sync
  sync time         webhookd start -> /readyz 200 in cluster mode
  raw LIST time     a plain Python client paging through the same collections (limit=500): what the
                    API server itself costs, the floor for the sync time
Run on an idle machine; loopback only.  N_NAMESPACES / N_NODES / N_REVISIONS override the sizes.
"""
import json
import os
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "kube"))
import kubetest  # noqa: E402

N_NS = int(os.environ.get("N_NAMESPACES", 10000))
N_NODES = int(os.environ.get("N_NODES", 5000))
N_REVS = int(os.environ.get("N_REVISIONS", 20))
CTX = ssl._create_unverified_context()


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def start(binary, args, work, name, env=None):
    log = open(os.path.join(work, name + ".log"), "w")
    port_file = os.path.join(work, name + ".pem")
    p = subprocess.Popen([binary, "--listen=127.0.0.1:0", "--threads=2", "--log-level=info",
                          "--self-signed-cert-out=" + port_file] + args, stdout=log, stderr=subprocess.STDOUT,
                         env=env)
    t0 = time.time()
    url = None
    while url is None:
        if p.poll() is not None:
            raise RuntimeError("%s exited; see %s" % (name, log.name))
        with open(log.name) as f:
            for line in f:
                if '"msg":"listening"' in line:
                    url = "https://127.0.0.1:%s" % json.loads(line)["address"].rsplit(":", 1)[1]
        time.sleep(0.01)
    while True:
        try:
            with urllib.request.urlopen(url + "/readyz", context=CTX, timeout=5) as r:
                if r.status == 200:
                    break
        except Exception:
            pass
        if time.time() - t0 > 600:
            raise RuntimeError("%s not ready after 600 s" % name)
        time.sleep(0.02)
    took = time.time() - t0
    time.sleep(1)
    return p, took, rss_kib(p.pid)


def stop(p):
    p.terminate()
    p.wait(30)


def raw_list(api, paths):
    """Seconds a plain client takes to page through `paths` (limit=500), and the object count."""
    token = "tok-admin"
    ctx = ssl.create_default_context(cafile=api.path("ca.crt"))
    t0, n = time.time(), 0
    for path in paths:
        cont = ""
        while True:
            url = api.server + path + "?limit=500" + ("&continue=" + cont if cont else "")
            req = urllib.request.Request(url, headers={"Authorization": "Bearer " + token})
            with urllib.request.urlopen(req, context=ctx, timeout=120) as r:
                page = json.loads(r.read())
            n += len(page["items"])
            cont = page["metadata"].get("continue") or ""
            if not cont:
                break
    return time.time() - t0, n


def main():
    build = sys.argv[1]
    corpus = sys.argv[2] if len(sys.argv) > 2 else os.path.join(HERE, "..", "..", "..", "shared", "conformance",
                                                               "istio-inject", "master")
    binary = os.path.join(build, "server", "webhookd")
    config = open(os.path.join(corpus, "inject-config.yaml")).read()
    values = json.load(open(os.path.join(corpus, "values.json")))
    mesh = open(os.path.join(corpus, "mesh.yaml")).read()
    work = tempfile.mkdtemp(prefix="bench-cluster-")
    api = kubetest.FakeApi()
    try:
        t0 = time.time()
        objs = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "istio-system"}}]
        revdir = os.path.join(work, "revisions")
        for i in range(N_REVS):
            rev = "rev-%02d" % i
            v = dict(values, revision=rev)
            objs.append({"apiVersion": "v1", "kind": "ConfigMap",
                         "metadata": {"name": "istio-sidecar-injector-" + rev, "namespace": "istio-system",
                                      "labels": {"istio.io/rev": rev, "app.kubernetes.io/version": "1.29.0"}},
                         "data": {"config": config, "values": json.dumps(v)}})
            objs.append({"apiVersion": "v1", "kind": "ConfigMap",
                         "metadata": {"name": "istio-" + rev, "namespace": "istio-system"}, "data": {"mesh": mesh}})
            os.makedirs(os.path.join(revdir, rev))
            for name, text in (("config", config), ("values", json.dumps(v)), ("mesh", mesh)):
                with open(os.path.join(revdir, rev, name), "w") as f:
                    f.write(text)
        for i in range(N_NS):
            objs.append({"apiVersion": "v1", "kind": "Namespace", "metadata": {
                "name": "ns-%05d" % i, "labels": {"istio.io/rev": "rev-%02d" % (i % N_REVS)},
                "annotations": {"openshift.io/sa.scc.uid-range": "%d/10000" % (1000000000 + 10000 * i),
                                "openshift.io/sa.scc.supplemental-groups": "%d/10000" % (1000000000 + 10000 * i)}}})
        for i in range(N_NODES):
            objs.append({"apiVersion": "v1", "kind": "Node", "metadata": {
                "name": "node-%05d" % i, "labels": {"kubernetes.io/hostname": "node-%05d" % i}},
                "status": {"nodeInfo": {"kubeletVersion": "v1.34.%d" % (i % 3), "osImage": "Debian GNU/Linux 12",
                                        "containerRuntimeVersion": "containerd://1.7.0"}}})
        for i in range(0, len(objs), 1000):
            api.load(objs[i:i + 1000])
        print("fake API server loaded: %d namespaces, %d nodes, %d revisions in %.1f s"
              % (N_NS, N_NODES, N_REVS, time.time() - t0), flush=True)

        env = dict(os.environ)
        env.pop("KUBECONFIG", None)
        p, _, base = start(binary, ["--revisions-source=builtin", "--native-sidecars=false"], work, "builtin", env)
        stop(p)
        p, dir_s, dirr = start(binary, ["--revisions-source=dir", "--revisions-dir=" + revdir,
                                        "--native-sidecars=false"], work, "dir", env)
        stop(p)
        raw_s, raw_n = raw_list(api, ["/api/v1/namespaces", "/api/v1/nodes",
                                      "/api/v1/namespaces/istio-system/configmaps",
                                      "/apis/networking.istio.io/v1beta1/proxyconfigs"])
        p, sync_s, clus = start(binary, ["--kubeconfig=" + api.kubeconfig(), "--revisions-source=cluster",
                                         "--platform=openshift", "--native-sidecars=auto"], work, "cluster", env)
        time.sleep(2)
        clus_later = rss_kib(p.pid)
        stop(p)
        print("| what | value |\n|---|---|")
        print("| raw LIST of the same collections (Python client, limit=500) | %.2f s for %d objects |" % (raw_s, raw_n))
        print("| webhookd cluster mode: start -> /readyz 200 (4 informers synced, %d revisions loaded) "
              "| %.2f s (%.2fx the raw LIST) |" % (N_REVS, sync_s, sync_s / raw_s))
        print("| webhookd --revisions-dir, same %d revisions: start -> ready | %.2f s |" % (N_REVS, dir_s))
        print("| RSS builtin (reads nothing) | %.1f MiB |" % (base / 1024))
        print("| RSS --revisions-dir, %d revisions | %.1f MiB |" % (N_REVS, dirr / 1024))
        print("| RSS cluster mode after sync (%d revisions + %d namespaces + %d nodes cached) | %.1f MiB "
              "(+%.1f MiB over --revisions-dir) |" % (N_REVS, N_NS, N_NODES, clus_later / 1024,
                                                      (clus_later - dirr) / 1024))
    finally:
        api.close()


if __name__ == "__main__":
    main()
