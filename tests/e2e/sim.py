"""sim.py - a simulated cluster for end-to-end tests: tests/kube/fakeapi.py (with kube-apiserver's
webhook admission chain, fake_admission.py) plus a minimal kubelet / Deployment / endpoints
controller that runs the chart's webhookd Deployment as local processes.

What it does, the way the cluster would:
- install(values) creates every object `helm template` renders for charts/webhookd, through the API
  (so they pass admission too); uninstall() deletes them.  (A real `helm install` cannot run against
  the fake server: helm stores its release in protobuf-encoded Secrets.)
- sync() reconciles each webhookd Deployment: creates its pods through the API (admission decides
  whether webhookd would inject itself), starts one webhookd process per pod with the container's
  own args from the Deployment, the volumes mounted (Secret, ConfigMap and projected ConfigMap
  volumes written to files, re-synced by resync_volumes() like the kubelet does; arguments under a
  mountPath point at those files), --listen on a loopback port and --kubeconfig as its service
  account; a process is added to the Service's Endpoints once /readyz answers 200.
- rollout() replaces every process the way a Deployment with maxSurge 1 / maxUnavailable 0 does:
  start a new pod, wait until ready and in the Endpoints, then terminate an old one: SIGTERM at once
  (the kubelet) while its endpoint disappears only `endpoint_lag` seconds later (the endpoints
  controller and every API server's view of it lag behind).
"""
import base64
import copy
import hashlib
import json
import os
import shutil
import signal
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
for sub in ("kube", "chart", "integration"):
    sys.path.insert(0, os.path.join(HERE, "..", sub))
import helmtest  # noqa: E402
import kubetest  # noqa: E402
import whtest  # noqa: E402

WEBHOOKD = os.environ.get("WEBHOOKD", "")
WEBHOOKCTL = os.environ.get("WEBHOOKCTL", "")
PLURALS = {"Namespace": "namespaces", "Service": "services", "Secret": "secrets", "ConfigMap": "configmaps",
           "Pod": "pods", "Endpoints": "endpoints", "Deployment": "deployments", "Node": "nodes",
           "ServiceAccount": "serviceaccounts", "ClusterRole": "clusterroles",
           "ClusterRoleBinding": "clusterrolebindings", "Role": "roles", "RoleBinding": "rolebindings",
           "PodDisruptionBudget": "poddisruptionbudgets",
           "MutatingWebhookConfiguration": "mutatingwebhookconfigurations",
           "ValidatingWebhookConfiguration": "validatingwebhookconfigurations",
           "DestinationRule": "destinationrules", "VirtualService": "virtualservices", "Gateway": "gateways",
           "ProxyConfig": "proxyconfigs"}
CLUSTER_SCOPED = {"Namespace", "Node", "ClusterRole", "ClusterRoleBinding", "MutatingWebhookConfiguration",
                  "ValidatingWebhookConfiguration"}


class ApiError(Exception):
    def __init__(self, code, status):
        super().__init__("%d %s" % (code, status.get("message")))
        self.code, self.status = code, status


def path_of(api_version, kind, namespace=None, name=None):
    base = "/api/" + api_version if "/" not in api_version else "/apis/" + api_version
    if kind not in CLUSTER_SCOPED and namespace:
        base += "/namespaces/" + namespace
    base += "/" + PLURALS[kind]
    return base + ("/" + name if name else "")


class Cluster:
    """One simulated cluster; use as a context manager."""

    def __init__(self, istio_namespace="istio-system", kubelets=("v1.33.0", "v1.34.0"), endpoint_lag=1.0,
                 api_args=()):
        """`api_args`: more fakeapi.py arguments (e.g. --admission-control-config-file)."""
        self.api = kubetest.FakeApi(args=api_args)
        self.kubeconfig = self.api.kubeconfig()
        self.ctx = ssl.create_default_context(cafile=self.api.path("ca.crt"))
        self.dir = tempfile.mkdtemp(prefix="wh-sim-")
        self.endpoint_lag = endpoint_lag
        self.pods = {}       # pod name -> {"server", "deployment", "volumes", "ready", "hash"}
        self.manifest = []   # the installed release's objects
        self.lock = threading.Lock()
        self.api.load([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": istio_namespace}}] +
                      [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-%d" % i},
                        "status": {"nodeInfo": {"kubeletVersion": v}}} for i, v in enumerate(kubelets)])

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        for name in list(self.pods):
            self._stop_pod(name, remove_endpoint=False)
        self.api.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    # ---- the API, as a client ---------------------------------------------------------------------

    def request(self, method, path, body=None, ctype="application/json", timeout=30):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.api.server + path, method=method, data=data,
                                     headers={"Authorization": "Bearer tok-admin", "Content-Type": ctype})
        try:
            with urllib.request.urlopen(req, context=self.ctx, timeout=timeout) as r:
                return json.loads(r.read())
        except urllib.error.HTTPError as e:
            raise ApiError(e.code, json.loads(e.read() or b"{}"))

    def create(self, obj, namespace=None):
        ns = namespace or obj.get("metadata", {}).get("namespace")
        return self.request("POST", path_of(obj["apiVersion"], obj["kind"], ns), obj)

    def get(self, api_version, kind, name, namespace=None):
        try:
            return self.request("GET", path_of(api_version, kind, namespace, name))
        except ApiError as e:
            if e.code == 404:
                return None
            raise

    def list(self, api_version, kind, namespace=None, selector=None):
        q = "?labelSelector=" + urllib.parse.quote(selector) if selector else ""
        return self.request("GET", path_of(api_version, kind, namespace) + q)["items"]

    def delete(self, api_version, kind, name, namespace=None):
        return self.request("DELETE", path_of(api_version, kind, namespace, name))

    def merge_patch(self, api_version, kind, name, patch, namespace=None):
        return self.request("PATCH", path_of(api_version, kind, namespace, name), patch,
                            ctype="application/merge-patch+json")

    def state(self):
        return self.api.state()

    def admission_calls(self):
        return self.api.control("admission")

    def ctl(self, *args, stdin=""):
        """webhookctl against this cluster: (exit status, stdout, stderr)."""
        out = subprocess.run([WEBHOOKCTL, *args, "--kubeconfig", self.kubeconfig], capture_output=True, text=True,
                             input=stdin, timeout=120)
        return out.returncode, out.stdout, out.stderr

    # ---- the release --------------------------------------------------------------------------------

    def install(self, values, release="webhookd", namespace="istio-system"):
        """Create the objects `helm template <release> charts/webhookd -n <namespace> -f values` renders."""
        docs = helmtest.docs(helmtest.template_text(values, release=release, namespace=namespace))
        for d in docs:
            if d["kind"] not in CLUSTER_SCOPED:
                d["metadata"].setdefault("namespace", namespace)
            self.create(d)
        self.manifest = docs
        self.release = (release, namespace)
        return docs

    def upgrade(self, values):
        """`helm upgrade` with new values: objects no longer rendered are deleted, the others created or
        replaced; then the Deployment controller rolls webhookd if its pod template changed."""
        release, namespace = self.release
        docs = helmtest.docs(helmtest.template_text(values, release=release, namespace=namespace))
        key = lambda d: (d["kind"], d["metadata"]["name"])  # noqa: E731
        new = {key(d) for d in docs}
        for d in reversed(self.manifest):
            if key(d) not in new:
                self.delete(d["apiVersion"], d["kind"], d["metadata"]["name"], d["metadata"].get("namespace"))
        for d in docs:
            if d["kind"] not in CLUSTER_SCOPED:
                d["metadata"].setdefault("namespace", namespace)
            ns = d["metadata"].get("namespace")
            if self.get(d["apiVersion"], d["kind"], d["metadata"]["name"], ns) is None:
                self.create(d)
            else:
                self.request("PUT", path_of(d["apiVersion"], d["kind"], ns, d["metadata"]["name"]), d)
        self.manifest = docs
        changed = [n for n, p in self.pods.items() if p["hash"].split("-r")[0] !=
                   self._hash(self.get("apps/v1", "Deployment", p["deployment"], p["namespace"]) or {"spec": {"template": {}}})]
        if changed:
            self.rollout()
        return docs

    def uninstall(self):
        """Delete what install() created (as `helm uninstall` deletes the release's manifest), stop its pods."""
        for d in reversed(self.manifest):
            try:
                self.delete(d["apiVersion"], d["kind"], d["metadata"]["name"], d["metadata"].get("namespace"))
            except ApiError as e:
                if e.code != 404:
                    raise
        self.manifest = []
        self.sync()

    # ---- kubelet, Deployment and endpoints controllers ----------------------------------------------

    def deployments(self):
        return [d for d in self.list("apps/v1", "Deployment")
                if any("webhookd" in c.get("image", "") for c in d["spec"]["template"]["spec"]["containers"])]

    def sync(self, timeout=30):
        """Reconcile: each webhookd Deployment has spec.replicas ready processes of its current template;
        processes of deleted Deployments are stopped."""
        live = {d["metadata"]["name"]: d for d in self.deployments()}
        for name, pod in list(self.pods.items()):
            if pod["deployment"] not in live:
                self._stop_pod(name, remove_endpoint=True)
        for ep in self.list("v1", "Endpoints"):  # the endpoints controller: Endpoints go with their Service
            meta = ep["metadata"]
            if self.get("v1", "Service", meta["name"], meta["namespace"]) is None:
                self.delete("v1", "Endpoints", meta["name"], meta["namespace"])
        for dep in live.values():
            h = self._hash(dep)
            mine = [n for n, p in self.pods.items() if p["deployment"] == dep["metadata"]["name"]]
            want = dep["spec"].get("replicas", 1)
            while len(mine) < want:
                mine.append(self._start_pod(dep, h, timeout))
            while len(mine) > want:
                self._stop_pod(mine.pop(), remove_endpoint=True)

    def rollout(self, timeout=30):
        """A rolling update of every webhookd Deployment (maxSurge 1, maxUnavailable 0): a new pod
        first, then an old one terminates; returns when only new pods run."""
        for dep in self.deployments():
            h = self._hash(dep) + "-r%d" % int(time.time() * 1000)
            old = [n for n, p in self.pods.items() if p["deployment"] == dep["metadata"]["name"]]
            for name in old:
                self._start_pod(dep, h, timeout)
                self._terminate_pod(name)

    def _hash(self, dep):
        return hashlib.sha256(json.dumps(dep["spec"]["template"], sort_keys=True).encode()).hexdigest()[:10]

    def _start_pod(self, dep, h, timeout):
        ns = dep["metadata"]["namespace"]
        tmpl = copy.deepcopy(dep["spec"]["template"])
        meta = tmpl.setdefault("metadata", {})
        meta["generateName"] = "%s-%s-" % (dep["metadata"]["name"], h[:10])
        meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "controller": True,
                                    "name": "%s-%s" % (dep["metadata"]["name"], h[:10]), "uid": "rs"}]
        pod = self.create({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": tmpl["spec"]}, ns)
        name = pod["metadata"]["name"]
        c = [c for c in pod["spec"]["containers"] if "webhookd" in c.get("image", "")][0]
        root = os.path.join(self.dir, name)
        mounts = {}
        for vm in c.get("volumeMounts") or []:
            mounts[vm["mountPath"]] = os.path.join(root, vm["name"])
        vols = {v["name"]: v for v in pod["spec"].get("volumes") or []}
        volumes = [(vols[vm["name"]], os.path.join(root, vm["name"]), ns) for vm in c.get("volumeMounts") or []]
        for v in volumes:
            self._write_volume(*v)
        args = []
        for a in c.get("args") or []:
            flag, eq, val = a.partition("=")
            for mp, local in mounts.items():
                if val == mp or val.startswith(mp.rstrip("/") + "/"):
                    val = local + val[len(mp.rstrip("/")):]
            if flag in ("--listen", "--threads", "--kubeconfig"):
                continue
            if flag == "--monitoring-listen":
                val = "127.0.0.1:0"  # every listener on loopback, each pod on a port of its own
            args.append(flag + eq + val)
        srv = whtest.Server(*args, "--kubeconfig=" + self.kubeconfig, threads=2)
        srv.start()
        with self.lock:
            self.pods[name] = {"server": srv, "deployment": dep["metadata"]["name"], "namespace": ns,
                               "volumes": volumes, "ready": False, "hash": h, "pod": pod, "args": args}
        if not self._wait_ready(name, timeout):
            raise AssertionError("webhookd pod %s never became ready:\n%s" % (name, srv.log()))
        return name

    def _wait_ready(self, name, timeout):
        """The readiness probe until it passes or `timeout` s pass; the Endpoints follow.  True when ready."""
        pod = self.pods[name]
        deadline = time.time() + whtest.scaled(timeout)
        while time.time() < deadline:
            try:
                if whtest.once(pod["server"].port, "GET", "/readyz")[0] == 200:
                    pod["ready"] = True
                    break
            except OSError:
                pass
            time.sleep(0.05)
        self._publish_endpoints(pod["namespace"])
        return pod["ready"]

    def restart_container(self, name, timeout=5):
        """The kubelet restarting a killed container (OOM kill, failed liveness probe): the same pod, its
        volumes as they are (an emptyDir keeps its files), the process started again.  Unready (out of
        the Endpoints) until its probe passes; True when it does within `timeout` s."""
        pod = self.pods[name]
        pod["ready"] = False
        self._publish_endpoints(pod["namespace"])
        pod["server"].proc.send_signal(signal.SIGKILL)
        pod["server"].proc.wait(60)
        pod["server"].reader.join(whtest.scaled(5))
        pod["server"].proc.stderr.close()
        pod["server"] = whtest.Server(*pod["args"], "--kubeconfig=" + self.kubeconfig, threads=2)
        pod["server"].start()
        return self._wait_ready(name, timeout)

    def _terminate_pod(self, name):
        """Pod deletion: SIGTERM now; the endpoint goes away endpoint_lag seconds later."""
        pod = self.pods[name]
        pod["server"].proc.send_signal(signal.SIGTERM)
        time.sleep(self.endpoint_lag)
        pod["ready"] = False
        self._publish_endpoints(pod["namespace"])
        status = pod["server"].proc.wait(whtest.scaled(60))
        self._forget(name)
        if status != 0:
            raise AssertionError("webhookd pod %s exited with %s after SIGTERM:\n%s" % (name, status,
                                                                                     pod["server"].log()))

    def _stop_pod(self, name, remove_endpoint):
        pod = self.pods.get(name)
        if not pod:
            return
        pod["ready"] = False
        if remove_endpoint:
            self._publish_endpoints(pod["namespace"])
        if pod["server"].proc.poll() is None:
            pod["server"].proc.send_signal(signal.SIGKILL if not remove_endpoint else signal.SIGTERM)
            pod["server"].proc.wait(60)
        self._forget(name)

    def _forget(self, name):
        pod = self.pods.pop(name)
        pod["server"].reader.join(whtest.scaled(5))
        pod["server"].proc.stderr.close()
        try:
            self.delete("v1", "Pod", name, pod["namespace"])
        except (ApiError, OSError):
            pass

    def _publish_endpoints(self, ns):
        """The Endpoints of every Service in ns selecting webhookd pods: the ready processes' ports."""
        templates = [d["spec"]["template"]["metadata"].get("labels") or {} for d in self.deployments()] + \
            [p["pod"]["metadata"].get("labels") or {} for p in self.pods.values()]
        for svc in self.list("v1", "Service", ns):
            sel = svc["spec"].get("selector") or {}
            if not sel or not any(all(t.get(k) == v for k, v in sel.items()) for t in templates):
                continue  # not a Service of webhookd's pods: someone else's endpoints
            ready = [p for p in self.pods.values() if p["namespace"] == ns and p["ready"] and sel and
                     all(p["pod"]["metadata"].get("labels", {}).get(k) == v for k, v in sel.items())]
            subsets = []
            for p in ready:
                ports = [{"name": sp.get("name", ""), "port": p["server"].port, "protocol": "TCP"}
                         for sp in svc["spec"]["ports"]]
                subsets.append({"addresses": [{"ip": "127.0.0.1", "targetRef": {
                    "kind": "Pod", "name": p["pod"]["metadata"]["name"], "namespace": ns}}], "ports": ports})
            name = svc["metadata"]["name"]
            body = {"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": name, "namespace": ns},
                    "subsets": subsets}
            if self.get("v1", "Endpoints", name, ns) is None:
                if subsets:
                    self.create(body)
            else:
                self.request("PUT", path_of("v1", "Endpoints", ns, name), body)

    def _write_volume(self, vol, path, ns):
        """Materialise one volume as files (atomically replaced, as the kubelet's AtomicWriter)."""
        files = {}
        if "secret" in vol:
            s = self.get("v1", "Secret", vol["secret"]["secretName"], ns)
            if s is None and not vol["secret"].get("optional"):
                raise AssertionError("secret %s/%s not found for a webhookd pod" % (ns, vol["secret"]["secretName"]))
            files = {k: base64.b64decode(v) for k, v in ((s or {}).get("data") or {}).items()}
        elif "configMap" in vol or "projected" in vol:
            sources = [{"configMap": vol["configMap"]}] if "configMap" in vol else vol["projected"]["sources"]
            for src in sources:
                ref = src.get("configMap")
                if ref is None:
                    raise AssertionError("sim: unsupported projected source %s" % list(src))
                cm = self.get("v1", "ConfigMap", ref["name"], ns)
                if cm is None:
                    if not ref.get("optional"):
                        raise AssertionError("configmap %s/%s not found for a webhookd pod" % (ns, ref["name"]))
                    continue
                data = cm.get("data") or {}
                items = ref.get("items") or [{"key": k, "path": k} for k in data]
                for it in items:
                    if it["key"] in data:
                        files[it["path"]] = data[it["key"]].encode()
        elif "emptyDir" in vol:
            os.makedirs(path, exist_ok=True)
            return
        else:
            raise AssertionError("sim: unsupported volume %s" % vol)
        new = path + ".new"
        shutil.rmtree(new, ignore_errors=True)
        for rel, data in files.items():
            full = os.path.join(new, rel)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "wb") as f:
                f.write(data)
        os.makedirs(new, exist_ok=True)
        if os.path.isdir(path):
            old = path + ".old"
            shutil.rmtree(old, ignore_errors=True)
            os.rename(path, old)
            os.rename(new, path)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.rename(new, path)

    def resync_volumes(self):
        """The kubelet's periodic volume sync: Secrets and ConfigMaps changed in the API reach the files."""
        for pod in list(self.pods.values()):
            for v in pod["volumes"]:
                self._write_volume(*v)
