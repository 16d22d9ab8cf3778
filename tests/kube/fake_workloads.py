"""fake_workloads.py - workloads for fakeapi.py: ReplicaSets, Deployments, StatefulSets and DaemonSets
with a tiny rollout controller, so that `webhookctl revision migrate --restart` can be tested end to end.

The controller is off until a test asks for it (POST /_fake/workloads {"controller": true}; /_fake/reset
turns it off): other tests run their own controllers for the workloads they create (tests/e2e/sim.py
runs webhookd's Deployment as processes), and two controllers must not fight over one Deployment.
metadata.generation is kept either way, as the API server does.

What the controller does, every TICK seconds, one step per workload (kube-controller-manager's rules,
much simplified):
- metadata.generation counts spec changes (before_store); status.observedGeneration follows it.
- Deployment: the ReplicaSet whose pod template equals the Deployment's is the new one (created,
  named <deployment>-<hash>, when none is); a step creates one new pod while fewer than spec.replicas
  exist, else deletes one old pod once every new pod is ready.  Status: replicas, updatedReplicas,
  readyReplicas, availableReplicas.
- StatefulSet (pods <name>-<ordinal>) and DaemonSet (one pod per fake node): a step replaces the pod
  with the highest ordinal that is not at the current template, once every other pod is ready.  Status
  as the real controllers report it (currentRevision/updateRevision, updated/desired numbers).
- New pods are created through kube-apiserver's webhook admission chain (fake_admission.py): the
  injector webhooks whose selectors match are called, and their patch is the pod.  A pod the chain
  refuses (e.g. the injector cannot be reached under failurePolicy Fail) is the workload's
  ReplicaFailure/FailedCreate condition, and is tried again on the next tick, as the real
  controllers do.
- A workload annotated fake.webhookd.io/never-ready=true gets pods that never become ready: its rollout
  never completes (the --timeout tests).  fake.webhookd.io/nodes=N sets a DaemonSet's node count (1).

Fixtures: a workload loaded through /_fake/load with "x-running": REV gets its pods created at once, all
ready and at the current template, running REV (pods that predate a tag move or relabel).
"""
import copy
import hashlib
import json
import sys
import threading
import time

TICK = 0.05
NEVER_READY = "fake.webhookd.io/never-ready"
NODES = "fake.webhookd.io/nodes"
KINDS = {"deployments": "Deployment", "statefulsets": "StatefulSet", "daemonsets": "DaemonSet"}
API = None  # the fakeapi module, set by install()
ENABLED = False  # the controller runs (and fixtures get their pods) only when a test turns it on


def template_hash(template):
    return hashlib.sha256(json.dumps(template, sort_keys=True).encode()).hexdigest()[:10]


def owner_ref(obj, kind, api_version="apps/v1"):
    return {"apiVersion": api_version, "kind": kind, "name": obj["metadata"]["name"],
            "uid": obj["metadata"].get("uid", ""), "controller": True, "blockOwnerDeletion": True}


# ---- admission -----------------------------------------------------------------------

CONTROLLER_USER = "system:serviceaccount:kube-system:replicaset-controller"


def admit(store, ns, pod):
    """A controller's pod create goes through kube-apiserver's webhook admission chain
    (fake_admission.py): the injector webhooks the API server would call inject it."""
    out, _ = API.fake_admission.admit(store.objects, API.RESOURCES, "CREATE", "pods", ns, pod["metadata"]["name"],
                                      pod, None, CONTROLLER_USER, False)
    return out


# ---- pods ------------------------------------------------------------------------------

class CreateFailed(Exception):
    """The admission chain refused a pod (e.g. the injector's webhook cannot be called)."""


def make_pod(store, owner, owner_kind, ns, name, template, extra_labels, running=None, ready=True):
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": name, "namespace": ns,
                        "labels": dict((template.get("metadata") or {}).get("labels") or {}, **extra_labels),
                        "annotations": dict((template.get("metadata") or {}).get("annotations") or {}),
                        "ownerReferences": [owner_ref(owner, owner_kind)]},
           "spec": copy.deepcopy(template.get("spec") or {"containers": [{"name": "app", "image": "app"}]}),
           "status": {}}
    if running is not None:  # a fixture: the pod was injected back then, by `running`
        pod["metadata"]["annotations"]["sidecar.istio.io/status"] = json.dumps(
            {"containers": ["istio-proxy"], "revision": running})
        pod["metadata"]["labels"]["istio.io/rev"] = running
        pod["spec"].setdefault("containers", []).append({"name": "istio-proxy", "image": "proxyv2"})
    else:
        try:
            pod = admit(store, ns, pod)
        except API.fake_admission.Rejected as e:
            raise CreateFailed(e.message)
    pod["status"] = {"phase": "Running",
                     "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}
    store.create("pods", ns, pod, "kube-controller-manager")


def pod_ready(pod):
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (pod.get("status") or {}).get("conditions") or [])


def changed(store, plural, obj, old):
    """An object changed in place by a controller: new resourceVersion, and a MODIFIED event for watches."""
    obj["metadata"]["resourceVersion"] = store.next_rv()
    key = (plural, obj["metadata"].get("namespace"), obj["metadata"]["name"])
    hub = getattr(getattr(API, "fake_watch", None), "HUB", None)
    if hub is not None:
        hub.record("MODIFIED", key, obj, old)


def make_ready(store, pods):
    """Pods of a workload that is no longer never-ready become ready (e.g. after a fix)."""
    for p in pods:
        if not pod_ready(p):
            old = copy.deepcopy(p)
            p["status"] = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
            changed(store, "pods", p, old)


def owned_pods(store, ns, kind, name):
    out = []
    for (plural, pns, _), o in sorted(store.objects.items(), key=lambda kv: str(kv[0])):
        if plural == "pods" and pns == ns and any(
                r.get("kind") == kind and r.get("name") == name for r in o["metadata"].get("ownerReferences") or []):
            out.append(o)
    return out


def delete(store, plural, ns, name):
    if (plural, ns, name) in store.objects:
        store.delete((plural, ns, name))


def set_status(store, plural, obj, status):
    """Write status only when it changed (a steady cluster keeps its resourceVersions)."""
    if obj.get("status") != status:
        old = copy.deepcopy(obj)
        obj["status"] = status
        changed(store, plural, obj, old)


# ---- controllers ---------------------------------------------------------------------------

def reconcile_deployment(store, d, fixture_rev=None):
    ns, name = d["metadata"]["namespace"], d["metadata"]["name"]
    tmpl = d["spec"].get("template") or {}
    want = d["spec"].get("replicas", 1)
    h = template_hash(tmpl)
    rss = [o for (p, n, _), o in store.objects.items() if p == "replicasets" and n == ns and any(
        r.get("kind") == "Deployment" and r.get("name") == name for r in o["metadata"].get("ownerReferences") or [])]
    new = next((rs for rs in rss if rs["spec"].get("template") == tmpl), None)
    if new is None:
        # fixtures get a readable ReplicaSet (and so pod) name: <deployment>-v1
        new = {"apiVersion": "apps/v1", "kind": "ReplicaSet",
               "metadata": {"name": "%s-%s" % (name, "v1" if fixture_rev is not None else h), "namespace": ns,
                            "labels": dict((tmpl.get("metadata") or {}).get("labels") or {}, **{"pod-template-hash": h}),
                            "ownerReferences": [owner_ref(d, "Deployment")]},
               "spec": {"replicas": want, "template": copy.deepcopy(tmpl)}}
        store.create("replicasets", ns, new, "kube-controller-manager")
        new = store.objects[("replicasets", ns, new["metadata"]["name"])]
    never = (d["metadata"].get("annotations") or {}).get(NEVER_READY) == "true"
    new_pods = owned_pods(store, ns, "ReplicaSet", new["metadata"]["name"])
    old_pods = [p for rs in rss if rs is not new for p in owned_pods(store, ns, "ReplicaSet", rs["metadata"]["name"])]
    if not never:
        make_ready(store, new_pods)
    failure = None
    if fixture_rev is not None:
        for i in range(len(new_pods), want):
            make_pod(store, new, "ReplicaSet", ns, "%s-%d" % (new["metadata"]["name"], i), tmpl,
                     {"pod-template-hash": h}, running=fixture_rev)
    elif len(new_pods) < want:
        failure = create_step(store, new, "ReplicaSet", ns, "%s-%s" % (new["metadata"]["name"], store.next_rv()),
                              tmpl, {"pod-template-hash": h}, ready=not never)
    elif old_pods and all(pod_ready(p) for p in new_pods):
        delete(store, "pods", ns, old_pods[-1]["metadata"]["name"])
    new_pods = owned_pods(store, ns, "ReplicaSet", new["metadata"]["name"])
    old_pods = [p for rs in rss if rs is not new for p in owned_pods(store, ns, "ReplicaSet", rs["metadata"]["name"])]
    ready = sum(pod_ready(p) for p in new_pods + old_pods)
    set_status(store, "deployments", d, with_failure({
        "observedGeneration": d["metadata"].get("generation", 1), "replicas": len(new_pods) + len(old_pods),
        "updatedReplicas": len(new_pods), "readyReplicas": ready, "availableReplicas": ready}, failure))


def reconcile_ordinal(store, plural, w, fixture_rev=None):
    """StatefulSet and DaemonSet: replace pods not at the current template, highest ordinal first."""
    kind = KINDS[plural]
    ns, name = w["metadata"]["namespace"], w["metadata"]["name"]
    tmpl = w["spec"].get("template") or {}
    h = "%s-%s" % (name, template_hash(tmpl))
    if plural == "statefulsets":
        want = w["spec"].get("replicas", 1)
    else:
        want = int((w["metadata"].get("annotations") or {}).get(NODES, "1"))
    never = (w["metadata"].get("annotations") or {}).get(NEVER_READY) == "true"
    on_delete = (w["spec"].get("updateStrategy") or {}).get("type") == "OnDelete"
    pods = {p["metadata"]["name"]: p for p in owned_pods(store, ns, kind, name)}
    if not never:
        make_ready(store, pods.values())
    names = ["%s-%d" % (name, i) for i in range(want)]
    label = "controller-revision-hash"
    missing = [n for n in names if n not in pods]
    stale = [n for n in names if n in pods and pods[n]["metadata"]["labels"].get(label) != h]
    failure = None
    if fixture_rev is not None:
        for n in missing:
            make_pod(store, w, kind, ns, n, tmpl, {label: h}, running=fixture_rev)
    elif missing:
        failure = create_step(store, w, kind, ns, missing[0], tmpl, {label: h}, ready=not never)
    elif stale and not on_delete and all(pod_ready(pods[n]) for n in names if n != stale[-1]):
        delete(store, "pods", ns, stale[-1])
    pods = {p["metadata"]["name"]: p for p in owned_pods(store, ns, kind, name)}
    updated = sum(p["metadata"]["labels"].get(label) == h for p in pods.values())
    ready = sum(pod_ready(p) for p in pods.values())
    gen = w["metadata"].get("generation", 1)
    if plural == "statefulsets":
        current = (w.get("status") or {}).get("currentRevision") or h
        if updated == len(pods) == want and ready == want:
            current = h
        status = {"observedGeneration": gen, "replicas": len(pods), "readyReplicas": ready,
                  "availableReplicas": ready, "updatedReplicas": updated,
                  "currentReplicas": sum(p["metadata"]["labels"].get(label) == current for p in pods.values()),
                  "currentRevision": current, "updateRevision": h}
    else:
        status = {"observedGeneration": gen, "desiredNumberScheduled": want, "currentNumberScheduled": len(pods),
                  "updatedNumberScheduled": updated, "numberReady": ready, "numberAvailable": ready}
    set_status(store, plural, w, with_failure(status, failure))


def reconcile(store, plural, obj, fixture_rev=None):
    if plural == "deployments":
        reconcile_deployment(store, obj, fixture_rev)
    else:
        reconcile_ordinal(store, plural, obj, fixture_rev)


def create_step(store, *args, **kw):
    """make_pod, or the refusal's message: the real controllers report it as the workload's
    ReplicaFailure condition (reason FailedCreate) and try again later."""
    try:
        make_pod(store, *args, **kw)
        return None
    except CreateFailed as e:
        return str(e)


def with_failure(status, failure):
    if failure:
        status["conditions"] = [{"type": "ReplicaFailure", "status": "True", "reason": "FailedCreate",
                                 "message": failure}]
    return status


def controller_loop(store):
    while True:
        time.sleep(TICK)
        if not ENABLED:
            continue
        with store.lock:
            for key in [k for k in store.objects if k[0] in KINDS]:
                obj = store.objects.get(key)
                try:
                    if obj is not None:
                        reconcile(store, key[0], obj)
                except Exception as e:  # a bad fixture must not stop every other rollout
                    sys.stderr.write("fake_workloads: %s %s: %r\n" % (key[0], key[2], e))


# ---- hooks called by fakeapi.py ---------------------------------------------------------------

def before_store(store, key, obj, old):
    """metadata.generation: 1 on create, +1 on every spec change; status is the controller's."""
    if key[0] not in KINDS:
        return
    meta = obj["metadata"]
    if old is None:
        meta["generation"] = 1
    else:
        meta["generation"] = old["metadata"].get("generation", 1) + (obj.get("spec") != old.get("spec"))
        if "status" in old:
            obj["status"] = old["status"]


def on_load(store, obj):
    """A fixture workload (with "x-running": its pods are created now, running that revision).
    False for objects that are not workloads."""
    plural = API.KIND_TO_PLURAL.get(obj.get("kind"))
    if plural not in KINDS or not ENABLED:
        return False
    rev = obj.pop("x-running", None)
    ns = obj["metadata"].get("namespace")
    store.create(plural, ns, obj, obj.pop("x-manager", "fixture"))
    reconcile(store, plural, store.objects[(plural, ns, obj["metadata"]["name"])], rev)
    return True


def control(path, raw):
    """POST /_fake/workloads {"controller": bool}."""
    global ENABLED
    if path != "/_fake/workloads":
        return False
    ENABLED = bool(json.loads(raw or b"{}").get("controller"))
    return True


def reset():
    global ENABLED
    ENABLED = False


def install(api):
    """Called by fakeapi.py once at start: remember it, start the controller."""
    global API
    API = api
    threading.Thread(target=controller_loop, args=(api.STORE,), daemon=True).start()
