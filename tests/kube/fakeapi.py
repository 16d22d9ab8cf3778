#!/usr/bin/env python3
"""fakeapi.py - a small Kubernetes API server for testing webhookctl without a cluster.

It behaves like kube-apiserver for what webhookctl and kubectl use: discovery
(/version, /api, /apis, resource lists), namespaces, services, secrets,
configmaps, (mutating|validating)webhookconfigurations, pods, endpoints,
replicasets, deployments, statefulsets and daemonsets (rolled out by the tiny
controller of fake_workloads.py, an extension: see EXTENSIONS) with get, list
(label selectors, limit/continue), create, update (resourceVersion, 409),
patch (merge, JSON, strategic, server-side apply with field managers,
conflicts and force), delete; Status objects for 401/403/404/409/422;
authentication by bearer token, basic auth, client certificate (TLS) or
anonymous, with per-user forbid rules; defaulting of the fields tests read.

Writes from API requests pass kube-apiserver's webhook admission chain
(fake_admission.py: mutating then validating webhook configurations, called
over TLS through Services and Endpoints) after the request's namespace is set
on the object, and metadata.generateName is turned into a name after it; Istio
config kinds and what `helm template` of charts/webhookd renders are served too.

A control API (no auth) under /_fake/ drives tests: POST /_fake/reset,
POST /_fake/load {"objects": [...]} (no admission), POST /_fake/replace {"object": ...},
POST /_fake/delete {"kind", "namespace", "name"}, GET /_fake/state, GET /_fake/log,
GET /_fake/admission (the webhook calls made),
POST /_fake/faults [{"method", "path_contains", "action": status|delay|bump,
"status", "message", "delay_ms", "count", "retry_after", "log_at_start"}] (log_at_start: a delayed
request is logged when it arrives, so a test can act while it is under way).
Watches (?watch=true) are served by fake_watch.py, with its own /_fake/watch/ controls.

Usage: fakeapi.py [--tls-cert C --tls-key K [--client-ca CA]] [--auth FILE]
                  [--port-file F] [--port P]
"""
import argparse
import base64
import copy
import datetime
import json
import random
import re
import ssl
import sys
import threading
import time
import urllib.parse
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import jsonpatch
import yaml

import fake_admission
import fake_watch

ADM = "admissionregistration.k8s.io/v1"
# kube-apiserver generates names from consonants and digits that cannot spell words (apimachinery rand.String).
NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"

RESOURCES = {
    "namespaces": ("v1", "Namespace", False, ["ns"]),
    "services": ("v1", "Service", True, ["svc"]),
    "secrets": ("v1", "Secret", True, []),
    "configmaps": ("v1", "ConfigMap", True, ["cm"]),
    "mutatingwebhookconfigurations": (ADM, "MutatingWebhookConfiguration", False, []),
    "validatingwebhookconfigurations": (ADM, "ValidatingWebhookConfiguration", False, []),
    # read by `webhookctl check-inject` and `check` (stored as given, no controllers)
    "pods": ("v1", "Pod", True, ["po"]),
    "endpoints": ("v1", "Endpoints", True, ["ep"]),
    "deployments": ("apps/v1", "Deployment", True, ["deploy"]),
    # read by webhookd's informers in cluster mode
    "nodes": ("v1", "Node", False, ["no"]),
    "proxyconfigs": ("networking.istio.io/v1beta1", "ProxyConfig", True, []),
    # rolled out by fake_workloads.py
    "replicasets": ("apps/v1", "ReplicaSet", True, ["rs"]),
    "statefulsets": ("apps/v1", "StatefulSet", True, ["sts"]),
    "daemonsets": ("apps/v1", "DaemonSet", True, ["ds"]),
}
# what `helm install` of charts/webhookd creates (tests/e2e), stored as given
RESOURCES.update({
    "serviceaccounts": ("v1", "ServiceAccount", True, ["sa"]),
    "clusterroles": ("rbac.authorization.k8s.io/v1", "ClusterRole", False, []),
    "clusterrolebindings": ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", False, []),
    "roles": ("rbac.authorization.k8s.io/v1", "Role", True, []),
    "rolebindings": ("rbac.authorization.k8s.io/v1", "RoleBinding", True, []),
    "poddisruptionbudgets": ("policy/v1", "PodDisruptionBudget", True, ["pdb"]),
})
RESOURCES.update(fake_admission.ISTIO_RESOURCES)
HIDDEN = set()  # --hide: resources this server does not serve (a CRD that is not installed)
KIND_TO_PLURAL = {v[1]: k for k, v in RESOURCES.items()}
VERBS = ["create", "delete", "get", "list", "patch", "update", "watch"]
# Lists merged by key (listType=map) in apply and strategic merge; others are atomic.
LIST_KEYS = {"webhooks": "name", "ports": "port", "containers": "name", "env": "name"}

DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
DNS1123_SUB = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
DNS1035_LABEL = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
LABEL_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")


class ApiError(Exception):
    def __init__(self, code, reason, message, details=None):
        super().__init__(message)
        self.code, self.reason, self.message, self.details = code, reason, message, details


def status_obj(code, reason, message, details=None):
    st = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure" if code >= 400 else "Success",
          "message": message, "reason": reason, "code": code}
    if details:
        st["details"] = details
    return st


def qualified(plural):
    gv = RESOURCES[plural][0]
    return plural if gv == "v1" else "%s.%s" % (plural, gv.split("/")[0])


def group_of(plural):
    gv = RESOURCES[plural][0]
    return "" if gv == "v1" else gv.split("/")[0]


def not_found(plural, name):
    return ApiError(404, "NotFound", '%s "%s" not found' % (qualified(plural), name),
                    {"name": name, "group": group_of(plural), "kind": plural})


def now():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


# ---- label selectors ---------------------------------------------------------

def parse_selector(text):
    """String selector -> list of (key, op, values)."""
    reqs = []
    if not text:
        return reqs
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    for p in parts:
        p = p.strip()
        m = re.match(r"^([^\s!=]+)\s+(in|notin)\s+\((.*)\)$", p)
        if m:
            reqs.append((m.group(1), m.group(2), [v.strip() for v in m.group(3).split(",")]))
        elif p.startswith("!"):
            reqs.append((p[1:].strip(), "!", []))
        elif "!=" in p:
            k, v = p.split("!=", 1)
            reqs.append((k.strip(), "!=", [v.strip()]))
        elif "==" in p or "=" in p:
            k, v = p.split("==", 1) if "==" in p else p.split("=", 1)
            reqs.append((k.strip(), "=", [v.strip()]))
        else:
            reqs.append((p, "exists", []))
        key, _, vals = reqs[-1]
        if not LABEL_NAME.match(key.split("/")[-1]) or any(not LABEL_VALUE.match(v) for v in vals):
            raise ApiError(400, "BadRequest", 'unable to parse requirement: invalid label selector "%s"' % text)
    return reqs


def selector_matches(reqs, labels):
    labels = labels or {}
    for key, op, vals in reqs:
        have = labels.get(key)
        if op == "=" and have != vals[0]:
            return False
        if op == "!=" and have == vals[0]:
            return False
        if op == "in" and have not in vals:
            return False
        if op == "notin" and have in vals:
            return False
        if op == "exists" and have is None:
            return False
        if op == "!" and have is not None:
            return False
    return True


# ---- field ownership (server-side apply) -------------------------------------

SKIP_META = {"name", "namespace", "resourceVersion", "uid", "creationTimestamp", "generation", "managedFields"}


def leaves(obj, prefix=()):
    out = {}
    if isinstance(obj, dict):
        for k, v in obj.items():
            if not prefix and k in ("apiVersion", "kind", "status"):
                continue
            if prefix == ("metadata",) and k in SKIP_META:
                continue
            key = LIST_KEYS.get(k)
            if key and isinstance(v, list) and v and all(isinstance(e, dict) and key in e for e in v):
                for e in v:
                    out.update(leaves(e, prefix + (k, ("k", key, json.dumps(e[key])))))
            elif isinstance(v, dict) and v:
                out.update(leaves(v, prefix + (k,)))
            else:
                out[prefix + (k,)] = v
    return out


def _find_item(lst, key, val):
    for e in lst:
        if isinstance(e, dict) and json.dumps(e.get(key)) == val:
            return e
    return None


def get_path(obj, path):
    """The value at `path` in obj, or None: each step a key of an object, a
    ("k", key, json value) list item of a keyed list, or the index (digits) of
    a plain list item."""
    cur = obj
    for p in path:
        if isinstance(p, tuple):
            cur = _find_item(cur if isinstance(cur, list) else [], p[1], p[2])
        elif isinstance(cur, list):
            cur = cur[int(p)] if str(p).isdigit() and int(p) < len(cur) else None
        elif isinstance(cur, dict):
            cur = cur.get(p)
        else:
            return None
        if cur is None:
            return None
    return cur


def del_path(obj, path):
    parent = get_path(obj, path[:-1]) if len(path) > 1 else obj
    if isinstance(parent, dict):
        parent.pop(path[-1], None)


def merge_apply(cur, new):
    for k, v in new.items():
        key = LIST_KEYS.get(k)
        if isinstance(v, dict) and isinstance(cur.get(k), dict):
            merge_apply(cur[k], v)
        elif key and isinstance(v, list) and isinstance(cur.get(k), list) and \
                all(isinstance(e, dict) and key in e for e in v + cur[k]):
            for e in v:
                old = _find_item(cur[k], key, json.dumps(e[key]))
                if old is None:
                    cur[k].append(copy.deepcopy(e))
                else:
                    merge_apply(old, e)
        else:
            cur[k] = copy.deepcopy(v)


def fields_tree(paths):
    tree = {}
    for p in sorted(paths, key=str):
        node = tree
        for e in p:
            name = "k:" + json.dumps({e[1]: json.loads(e[2])}, separators=(",", ":")) if isinstance(e, tuple) \
                else "f:" + e
            node = node.setdefault(name, {})
    return tree


# ---- the store -----------------------------------------------------------------

class Store:
    def __init__(self):
        self.lock = threading.RLock()
        self.reset()

    def reset(self):
        self.objects = {}   # (plural, ns, name) -> object
        self.managers = {}  # (plural, ns, name) -> {manager: [operation, set(paths)]}
        self.rv = 1000
        self.generation = getattr(self, "generation", 0) + 1  # requests from before a reset are not logged
        self.log = []
        self.faults = []
        fake_watch.HUB.reset(self.rv)

    def next_rv(self):
        self.rv += 1
        return str(self.rv)

    # defaulting, the way the real API server fills what tests read back
    def default(self, plural, obj):
        if plural in ("mutatingwebhookconfigurations", "validatingwebhookconfigurations"):
            for w in obj.get("webhooks") or []:
                w.setdefault("failurePolicy", "Fail")
                w.setdefault("matchPolicy", "Equivalent")
                w.setdefault("namespaceSelector", {})
                w.setdefault("objectSelector", {})
                w.setdefault("timeoutSeconds", 10)
                if plural == "mutatingwebhookconfigurations":
                    w.setdefault("reinvocationPolicy", "Never")
                svc = (w.get("clientConfig") or {}).get("service")
                if isinstance(svc, dict):
                    svc.setdefault("port", 443)
                for r in w.get("rules") or []:
                    r.setdefault("scope", "*")
        elif plural == "services":
            spec = obj.setdefault("spec", {})
            spec.setdefault("type", "ClusterIP")
            spec.setdefault("sessionAffinity", "None")
            for p in spec.get("ports") or []:
                p.setdefault("protocol", "TCP")
                p.setdefault("targetPort", p.get("port"))
        elif plural == "namespaces":
            obj["metadata"].setdefault("labels", {})["kubernetes.io/metadata.name"] = obj["metadata"]["name"]
            obj.setdefault("spec", {"finalizers": ["kubernetes"]})
            obj.setdefault("status", {"phase": "Active"})

    def validate(self, plural, obj):
        kind = RESOURCES[plural][1]
        gv = RESOURCES[plural][0]
        name = obj["metadata"].get("name", "")
        what = '%s%s "%s"' % (kind, "" if gv == "v1" else "." + gv.split("/")[0], name)
        errs = []
        rx, rule = (DNS1035_LABEL, "a DNS-1035 label") if plural == "services" else (DNS1123_SUB, "a lowercase RFC 1123 subdomain")
        if not rx.match(name) or len(name) > (63 if plural == "services" else 253):
            errs.append('metadata.name: Invalid value: "%s": must be %s' % (name, rule))
        for k, v in (obj["metadata"].get("labels") or {}).items():
            if not isinstance(v, str) or not LABEL_VALUE.match(v) or len(v) > 63:
                errs.append('metadata.labels: Invalid value: "%s": a valid label must be an empty string or consist '
                            "of alphanumeric characters, '-', '_' or '.'" % v)
        for i, w in enumerate(obj.get("webhooks") or []):
            if not w.get("sideEffects"):
                errs.append("webhooks[%d].sideEffects: Required value" % i)
            if not w.get("admissionReviewVersions"):
                errs.append("webhooks[%d].admissionReviewVersions: Required value" % i)
        names = [w.get("name") for w in obj.get("webhooks") or []]
        if len(set(names)) != len(names):
            errs.append("webhooks: Duplicate value: webhook names must be unique")
        if errs:
            raise ApiError(422, "Invalid", "%s is invalid: %s" % (what, ", ".join(errs)),
                           {"name": name, "group": group_of(plural), "kind": kind})

    def own_update(self, key, manager, old, new):
        mgrs = self.managers.setdefault(key, {})
        ol, nl = leaves(old or {}), leaves(new)
        changed = {p for p, v in nl.items() if p not in ol or ol[p] != v}
        gone = set(ol) - set(nl)
        for m, (op, paths) in list(mgrs.items()):
            paths -= changed | gone
            if not paths and m != manager:
                del mgrs[m]
        entry = mgrs.setdefault(manager, ["Update", set()])
        if entry[0] == "Apply" and changed:
            mgrs[manager] = entry = ["Update", set()]
        entry[1] |= changed

    def render_managed(self, key, obj):
        gv = RESOURCES[key[0]][0]
        obj["metadata"]["managedFields"] = [
            {"manager": m, "operation": op, "apiVersion": gv, "time": now(), "fieldsType": "FieldsV1",
             "fieldsV1": fields_tree(paths)}
            for m, (op, paths) in sorted(self.managers.get(key, {}).items())]

    def put(self, key, obj, manager, old):
        self.own_update(key, manager, old, obj)
        self.finish(key, obj, old)

    def finish(self, key, obj, old):
        plural = key[0]
        meta = obj["metadata"]
        meta["name"] = key[2]
        if RESOURCES[plural][2]:
            meta["namespace"] = key[1]
        else:
            meta.pop("namespace", None)
        meta["uid"] = old["metadata"]["uid"] if old else str(uuid.uuid4())
        meta["creationTimestamp"] = old["metadata"]["creationTimestamp"] if old else now()
        meta["resourceVersion"] = self.next_rv()
        obj["apiVersion"], obj["kind"] = RESOURCES[plural][0], RESOURCES[plural][1]
        for ext in EXTENSIONS:
            if hasattr(ext, "before_store"):
                ext.before_store(self, key, obj, old)
        self.default(plural, obj)
        self.validate(plural, obj)
        self.render_managed(key, obj)
        self.objects[key] = obj
        fake_watch.HUB.record("MODIFIED" if old else "ADDED", key, obj, old)

    def delete(self, key):
        obj = self.objects.pop(key)
        self.managers.pop(key, None)
        obj["metadata"]["resourceVersion"] = self.next_rv()
        fake_watch.HUB.record("DELETED", key, obj, obj)
        return obj

    def check_namespace(self, plural, ns):
        if RESOURCES[plural][2] and ("namespaces", None, ns) not in self.objects:
            raise ApiError(404, "NotFound", 'namespaces "%s" not found' % ns,
                           {"name": ns, "kind": "namespaces"})

    def create(self, plural, ns, obj, manager):
        obj = copy.deepcopy(obj)
        obj.setdefault("metadata", {}).pop("managedFields", None)
        name = obj["metadata"].get("name")
        if not name:
            raise ApiError(422, "Invalid", "%s is invalid: metadata.name: Required value: name or generateName is required"
                           % RESOURCES[plural][1])
        key = (plural, ns if RESOURCES[plural][2] else None, name)
        self.check_namespace(plural, ns)
        if key in self.objects:
            raise ApiError(409, "AlreadyExists", '%s "%s" already exists' % (qualified(plural), name),
                           {"name": name, "group": group_of(plural), "kind": plural})
        self.managers.pop(key, None)
        self.put(key, obj, manager, None)
        return obj

    def update(self, key, obj, manager):
        old = self.objects.get(key)
        if old is None:
            raise not_found(key[0], key[2])
        obj = copy.deepcopy(obj)
        obj.setdefault("metadata", {}).pop("managedFields", None)
        if obj["metadata"].get("name", key[2]) != key[2]:
            raise ApiError(400, "BadRequest", "the name of the object (%s) does not match the name on the URL (%s)"
                           % (obj["metadata"].get("name"), key[2]))
        rv = obj["metadata"].get("resourceVersion")
        if rv and rv != old["metadata"]["resourceVersion"]:
            raise ApiError(409, "Conflict", 'Operation cannot be fulfilled on %s "%s": the object has been modified; '
                           "please apply your changes to the latest version and try again" % (qualified(key[0]), key[2]),
                           {"name": key[2], "group": group_of(key[0]), "kind": key[0]})
        self.put(key, obj, manager, old)
        return obj

    def apply(self, key, cfg, manager, force):
        plural = key[0]
        if not manager:
            raise ApiError(422, "Invalid", "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is "
                           "required for apply patch")
        if cfg.get("kind") != RESOURCES[plural][1] or cfg.get("apiVersion") != RESOURCES[plural][0]:
            raise ApiError(400, "BadRequest", "apply patch must name kind %s and apiVersion %s"
                           % (RESOURCES[plural][1], RESOURCES[plural][0]))
        old = self.objects.get(key)
        if old is None:
            self.check_namespace(plural, key[1])
        mgrs = self.managers.setdefault(key, {})
        cur = copy.deepcopy(old) if old else {"metadata": {}}
        cur["metadata"].pop("managedFields", None)
        new = leaves(cfg)
        conflicts = []
        for m, (op, paths) in mgrs.items():
            if m == manager:
                continue
            for p in paths & set(new):
                if get_path(cur, p) != new[p]:
                    conflicts.append((m, p))
        if conflicts and not force:
            def show(p):
                return "".join('[%s=%s]' % (e[1], e[2]) if isinstance(e, tuple) else "." + e for e in p)
            raise ApiError(409, "Conflict", "Apply failed with %d conflict%s: %s" % (
                len(conflicts), "" if len(conflicts) == 1 else "s",
                "; ".join('conflict with "%s": %s' % (m, show(p)) for m, p in conflicts)))
        for m, p in conflicts:
            mgrs[m][1].discard(p)
        prev = mgrs.get(manager, ["Apply", set()])
        prev_paths = prev[1] if prev[0] == "Apply" else set()
        others = set().union(*[paths for m, (op, paths) in mgrs.items() if m != manager])
        for p in prev_paths - set(new):
            if p not in others:
                del_path(cur, p)
        # drop keyed-list items that nobody owns any more
        owned = others | set(new)
        for k, key_field in LIST_KEYS.items():
            lst = cur.get(k) if isinstance(cur.get(k), list) else None
            if lst is not None:
                cur[k] = [e for e in lst if not isinstance(e, dict) or key_field not in e or any(
                    len(p) > 1 and p[0] == k and p[1] == ("k", key_field, json.dumps(e[key_field])) for p in owned)
                    or not any(len(p) > 1 and p[0] == k and p[1] == ("k", key_field, json.dumps(e[key_field]))
                               for p in prev_paths)]
        body = {k: v for k, v in cfg.items() if k not in ("apiVersion", "kind")}
        body.setdefault("metadata", {})
        body["metadata"] = {k: v for k, v in body["metadata"].items() if k not in SKIP_META}
        merge_apply(cur, body)
        for m in [m for m, (op, paths) in mgrs.items() if not paths and m != manager]:
            del mgrs[m]
        mgrs[manager] = ["Apply", set(new)]
        self.finish(key, cur, old)
        return cur


STORE = Store()
# Modules that extend this server (fake_workloads.py): each may define before_store(store, key, obj, old),
# called before an object is stored; on_load(store, obj) -> bool, which takes over loading a fixture;
# control(path, raw) -> bool, which answers a /_fake/ path; reset(), on /_fake/reset; install(this
# module) runs once at start.
EXTENSIONS = []


def merge_patch(target, patch):
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    target = copy.deepcopy(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            target.pop(k, None)
        else:
            target[k] = merge_patch(target.get(k), v)
    return target


def strategic_patch(target, patch):
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    target = copy.deepcopy(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        key = LIST_KEYS.get(k)
        if v is None:
            target.pop(k, None)
        elif key and isinstance(v, list) and isinstance(target.get(k), list):
            for e in v:
                old = _find_item(target[k], key, json.dumps(e.get(key))) if isinstance(e, dict) else None
                if old is None:
                    target[k].append(copy.deepcopy(e))
                else:
                    target[k][target[k].index(old)] = strategic_patch(old, e)
        else:
            target[k] = strategic_patch(target.get(k), v)
    return target


# ---- HTTP --------------------------------------------------------------------

AUTH = {"tokens": {}, "basic": {}, "anonymous": True, "forbid": []}


def discovery_list(gv):
    res = []
    for plural, (g, kind, namespaced, short) in sorted(RESOURCES.items()):
        if g == gv:
            res.append({"name": plural, "singularName": kind.lower(), "namespaced": namespaced, "kind": kind,
                        "verbs": VERBS, "shortNames": short} if short else
                       {"name": plural, "singularName": kind.lower(), "namespaced": namespaced, "kind": kind,
                        "verbs": VERBS})
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": res}


def api_group(group):
    gvs = sorted({g for g, _, _, _ in RESOURCES.values() if g.startswith(group + "/")},
                 key=lambda g: (g.split("/")[1] != "v1", g))  # v1 preferred when served
    vers = [{"groupVersion": gv, "version": gv.split("/")[1]} for gv in gvs]
    return {"kind": "APIGroup", "apiVersion": "v1", "name": group, "versions": vers, "preferredVersion": vers[0]}


GROUPS = sorted({g.split("/")[0] for g, _, _, _ in RESOURCES.values() if "/" in g})
DISCOVERY = {
    "/version": {"major": "1", "minor": "32", "gitVersion": "v1.32.0-fakeapi", "platform": "linux/amd64"},
    "/api": {"kind": "APIVersions", "versions": ["v1"],
             "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}]},
    "/apis": {"kind": "APIGroupList", "apiVersion": "v1", "groups": [
        {k: v for k, v in api_group(g).items() if k not in ("kind", "apiVersion")} for g in GROUPS]},
    "/api/v1": discovery_list("v1"),
}
for _g in GROUPS:
    DISCOVERY["/apis/" + _g] = api_group(_g)
    for _v in api_group(_g)["versions"]:
        DISCOVERY["/apis/" + _v["groupVersion"]] = discovery_list(_v["groupVersion"])


def openapi_v3(gv):
    """OpenAPI v3 for one group/version, only as far as clients read it: every write path takes the
    fieldValidation parameter, so kubectl leaves validation to the server (which stores what it is
    given) instead of validating against schemas this server does not have."""
    param = [{"name": "fieldValidation", "in": "query", "schema": {"type": "string"}}]
    group, version = gv.split("/") if "/" in gv else ("", gv)
    paths = {}
    for plural, (g, kind, namespaced, _) in RESOURCES.items():
        if g != gv:
            continue
        base = ("/api/" if "/" not in gv else "/apis/") + gv + ("/namespaces/{namespace}" if namespaced else "")

        def op(action):
            return {"parameters": param, "x-kubernetes-action": action,
                    "x-kubernetes-group-version-kind": {"group": group, "version": version, "kind": kind}}
        paths["%s/%s" % (base, plural)] = {"post": op("post")}
        paths["%s/%s/{name}" % (base, plural)] = {"put": op("put"), "patch": op("patch")}
    return {"openapi": "3.0.0", "info": {"title": "Kubernetes", "version": "v1.32.0"}, "paths": paths,
            "components": {"schemas": {}}}


for _gv in sorted({g for g, _, _, _ in RESOURCES.values()}):
    _p = ("api/" if "/" not in _gv else "apis/") + _gv
    DISCOVERY.setdefault("/openapi/v3", {"paths": {}})["paths"][_p] = {"serverRelativeURL": "/openapi/v3/" + _p}
    DISCOVERY["/openapi/v3/" + _p] = openapi_v3(_gv)



class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fakeapi/1"

    def log_message(self, fmt, *args):
        pass

    def admit(self, operation, plural, ns, name, obj, old):
        """kube-apiserver's webhook admission (fake_admission.py) of a write from an API request;
        returns the object to store (mutated)."""
        try:
            out, warnings = fake_admission.admit(STORE.objects, RESOURCES, operation, plural, ns, name, obj, old,
                                                 self.user, self.dry)
        except fake_admission.Rejected as e:
            raise ApiError(e.code, e.reason, e.message)
        self.warnings += warnings
        return out

    def send_json(self, code, obj, headers=None):
        data = json.dumps(obj).encode()
        self.send_response(code)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def read_body(self):
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            data = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return data
                data += self.rfile.read(size)
                self.rfile.readline()
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def authenticate(self):
        cert = self.connection.getpeercert() if isinstance(self.connection, ssl.SSLSocket) else None
        if cert:
            for rdn in cert.get("subject", ()):
                for k, v in rdn:
                    if k == "commonName":
                        return v
        h = self.headers.get("Authorization") or ""
        if h.startswith("Bearer "):
            user = AUTH["tokens"].get(h[7:])
            if user is None:
                raise ApiError(401, "Unauthorized", "Unauthorized")
            return user
        if h.startswith("Basic "):
            user = AUTH["basic"].get(base64.b64decode(h[6:]).decode(errors="replace"))
            if user is None:
                raise ApiError(401, "Unauthorized", "Unauthorized")
            return user
        if not AUTH["anonymous"]:
            raise ApiError(401, "Unauthorized", "Unauthorized")
        return "system:anonymous"

    def authorize(self, user, verb, plural, ns, name):
        for rule in AUTH["forbid"]:
            if rule.get("user", "*") in ("*", user) and rule.get("verb", "*") in ("*", verb) and \
                    rule.get("resource", "*") in ("*", plural):
                what = '%s "%s"' % (qualified(plural), name) if name else qualified(plural)
                scope = 'in the namespace "%s"' % ns if ns else "at the cluster scope"
                raise ApiError(403, "Forbidden", '%s is forbidden: User "%s" cannot %s resource "%s" in API group "%s" %s'
                               % (what, user, verb, plural, group_of(plural), scope),
                               {"name": name or "", "group": group_of(plural), "kind": plural})

    def handle_any(self, method):
        url = urllib.parse.urlsplit(self.path)
        query = dict(urllib.parse.parse_qsl(url.query, keep_blank_values=True))
        raw = self.read_body() if method in ("POST", "PUT", "PATCH", "DELETE") else b""
        entry = {"method": method, "path": url.path, "query": query,
                 "content_type": self.headers.get("Content-Type"), "user_agent": self.headers.get("User-Agent")}
        try:
            entry["body"] = json.loads(raw) if raw else None
        except ValueError:
            entry["body"] = raw.decode(errors="replace")
        if url.path.startswith("/_fake/"):
            try:
                return self.control(method, url.path, raw)
            except ApiError as e:  # a bad fixture: say which
                return self.send_json(e.code, status_obj(e.code, e.reason, e.message, e.details))
        code = 500
        extra_headers = {}
        self.warnings = []
        generation = STORE.generation
        logged = False
        try:
            with STORE.lock:
                faults = [f for f in STORE.faults if f.get("method", method) == method and
                          f.get("path_contains", "") in self.path and f.get("count", 1) > 0]
                fault = faults[0] if faults else None
                if fault:
                    fault["count"] = fault.get("count", 1) - 1
            if fault and fault.get("action") == "delay":
                if fault.get("log_at_start"):
                    with STORE.lock:
                        STORE.log.append(entry)  # completed in place below
                    logged = True
                time.sleep(fault.get("delay_ms", 1000) / 1000.0)
            user = self.authenticate()
            entry["user"] = user
            if self.headers.get("Impersonate-User"):
                entry["impersonated_by"] = user
                user = entry["user"] = self.headers["Impersonate-User"]
            if fault and fault.get("retry_after"):
                extra_headers["Retry-After"] = str(fault["retry_after"])
            if fault and fault.get("action") == "status":
                raise ApiError(fault["status"], fault.get("reason", "InternalError"),
                               fault.get("message", "injected failure"))
            self.log_entry = entry
            code, obj = self.route(method, url.path, query, raw, user, fault)
            if code is None:
                return  # a watch, logged when it started and answered as it went
        except ApiError as e:
            code, obj = e.code, status_obj(e.code, e.reason, e.message, e.details)
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            code, obj = 400, status_obj(400, "BadRequest", "cannot handle the request: %s" % e)
        entry["status"] = code
        if self.warnings:
            extra_headers["Warning"] = ", ".join('299 - "%s"' % w.replace('"', "'") for w in self.warnings)
        with STORE.lock:
            if STORE.generation == generation and not logged:
                STORE.log.append(entry)
        try:
            self.send_json(code, obj, extra_headers)
        except OSError:
            pass  # the client gave up (deadline tests)

    def control(self, method, path, raw):
        with STORE.lock:
            if path == "/_fake/reset":
                STORE.reset()
                fake_admission.reset()
                for ext in EXTENSIONS:
                    if hasattr(ext, "reset"):
                        ext.reset()
                return self.send_json(200, {})
            if any(hasattr(ext, "control") and ext.control(path, raw) for ext in EXTENSIONS):
                return self.send_json(200, {})
            if path == "/_fake/admission":
                return self.send_json(200, fake_admission.calls())
            if path == "/_fake/log":
                return self.send_json(200, STORE.log)
            if path == "/_fake/state":
                return self.send_json(200, [o for _, o in sorted(STORE.objects.items(), key=lambda kv: str(kv[0]))])
            if path == "/_fake/faults":
                STORE.faults = json.loads(raw or b"[]")
                return self.send_json(200, {})
            if path in ("/_fake/replace", "/_fake/delete"):  # {"object": ...} / {"kind", "namespace", "name"}
                spec = json.loads(raw)
                o = spec.get("object") or {"kind": spec["kind"], "metadata": spec}
                plural = KIND_TO_PLURAL[o["kind"]]
                key = (plural, o["metadata"].get("namespace") if RESOURCES[plural][2] else None, o["metadata"]["name"])
                if path == "/_fake/replace":
                    STORE.update(key, o, "fixture")
                elif key in STORE.objects:
                    STORE.delete(key)
                return self.send_json(200, {})
            if fake_watch.HUB.control(path, raw):
                return self.send_json(200, {})
            if path == "/_fake/load":
                spec = json.loads(raw)
                for o in spec.get("objects", []):
                    if any(hasattr(ext, "on_load") and ext.on_load(STORE, o) for ext in EXTENSIONS):
                        continue
                    plural = KIND_TO_PLURAL[o["kind"]]
                    ns = o["metadata"].get("namespace") if RESOURCES[plural][2] else None
                    mgr = o.pop("x-manager", "fixture")
                    STORE.create(plural, ns, o, mgr)
                return self.send_json(200, {})
        self.send_json(404, {})

    def route(self, method, path, query, raw, user, fault):
        if method == "GET" and path.rstrip("/") in DISCOVERY:
            return 200, DISCOVERY[path.rstrip("/")]
        m = re.match(r"^/(?:api/(v1)|apis/([^/]+/[^/]+))/(.*)$", path)
        if not m:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        gv, segs = m.group(1) or m.group(2), [urllib.parse.unquote(s) for s in m.group(3).split("/") if s]
        ns = None
        if len(segs) >= 3 and segs[0] == "namespaces":
            ns, segs = segs[1], segs[2:]
        plural = segs[0] if segs else ""
        name = segs[1] if len(segs) > 1 else None
        if plural not in RESOURCES or plural in HIDDEN or RESOURCES[plural][0] != gv or len(segs) > 2 or \
                (ns is not None and not RESOURCES[plural][2]):
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        namespaced = RESOURCES[plural][2]
        verb = {"GET": "get" if name else "list", "POST": "create", "PUT": "update", "PATCH": "patch",
                "DELETE": "delete"}[method]
        if verb == "list" and query.get("watch") in ("1", "true"):
            self.authorize(user, "watch", plural, ns if namespaced else None, None)
            self.log_entry["status"] = 200
            with STORE.lock:
                STORE.log.append(self.log_entry)
            fake_watch.serve(self, STORE, RESOURCES, plural, ns if namespaced else None, query, selector_matches,
                             parse_selector(query.get("labelSelector", "")))
            return None, None
        self.authorize(user, verb, plural, ns if namespaced else None, name)
        manager = query.get("fieldManager") or (self.headers.get("User-Agent") or "unknown").split("/")[0]
        dry = query.get("dryRun") == "All"
        self.user, self.dry = user, dry
        with STORE.lock:
            if fault and fault.get("action") == "bump" and name:
                k = (plural, ns, name)
                if k in STORE.objects:
                    STORE.objects[k]["metadata"]["resourceVersion"] = STORE.next_rv()
            saved = (copy.deepcopy(STORE.objects), copy.deepcopy(STORE.managers), STORE.rv) if dry else None
            fake_watch.HUB.muted += 1 if dry else 0
            try:
                return self.route_locked(method, plural, ns if namespaced else None, name, query, raw, manager)
            finally:
                if saved:
                    STORE.objects, STORE.managers, STORE.rv = saved
                    fake_watch.HUB.muted -= 1

    def route_locked(self, method, plural, ns, name, query, raw, manager):
        key = (plural, ns, name)
        ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip()
        if method in ("POST", "PUT") and ctype not in ("application/json", "application/yaml"):
            raise ApiError(415, "UnsupportedMediaType", 'the body of the request was in an unknown format - '
                           'accepted media types include: application/json, application/yaml')
        if method == "GET" and name:
            if key not in STORE.objects:
                raise not_found(plural, name)
            return 200, STORE.objects[key]
        if method == "GET":
            reqs = parse_selector(query.get("labelSelector", ""))
            items = [o for (p, n, _), o in sorted(STORE.objects.items(), key=lambda kv: (kv[0][1] or "", kv[0][2]))
                     if p == plural and (ns is None or n == ns) and selector_matches(reqs, o["metadata"].get("labels"))]
            start = int(base64.b64decode(query["continue"]).decode()) if query.get("continue") else 0
            limit = int(query.get("limit") or 0)
            page = items[start:start + limit] if limit else items[start:]
            meta = {"resourceVersion": str(STORE.rv)}
            if limit and start + limit < len(items):
                meta["continue"] = base64.b64encode(str(start + limit).encode()).decode()
            out = []
            for o in page:
                o = copy.deepcopy(o)
                o.pop("kind", None)
                o.pop("apiVersion", None)
                out.append(o)
            return 200, {"kind": RESOURCES[plural][1] + "List", "apiVersion": RESOURCES[plural][0],
                         "metadata": meta, "items": out}
        if method in ("POST", "PUT") and RESOURCES[plural][2]:
            body = json.loads(raw or b"{}")
            meta = body.setdefault("metadata", {}) if isinstance(body, dict) else {}
            if meta.get("namespace", ns) != ns:
                raise ApiError(400, "BadRequest", "the namespace of the provided object does not match the namespace "
                               "sent on the request")
            meta["namespace"] = ns  # before admission, as kube-apiserver: webhooks see it
            raw = json.dumps(body).encode()
        if method == "POST" and not name:
            obj = json.loads(raw or b"{}")
            obj = self.admit("CREATE", plural, ns, (obj.get("metadata") or {}).get("name"), obj, None)
            meta = obj.setdefault("metadata", {})
            if meta.get("name") or not meta.get("generateName"):
                return 201, STORE.create(plural, ns, obj, manager)
            # Named after admission from kube-apiserver's alphabet; a generated name that collides is
            # drawn again (RetryGenerateName, on by default since 1.31: 8 tries).
            for attempt in range(8):
                meta["name"] = meta["generateName"] + "".join(random.choice(NAME_ALPHABET) for _ in range(5))
                try:
                    return 201, STORE.create(plural, ns, obj, manager)
                except ApiError as e:
                    if e.code != 409 or attempt == 7:
                        raise
        if method == "PUT" and name:
            obj = json.loads(raw or b"{}")
            if key in STORE.objects:
                obj = self.admit("UPDATE", plural, ns, name, obj, STORE.objects[key])
            return 200, STORE.update(key, obj, manager)
        if method == "DELETE" and name:
            if key not in STORE.objects:
                raise not_found(plural, name)
            self.admit("DELETE", plural, ns, name, None, STORE.objects[key])
            obj = STORE.delete(key)
            if plural == "namespaces":
                for k in [k for k in STORE.objects if k[1] == name]:
                    STORE.delete(k)
            return 200, status_obj(200, "", "", {"name": name, "group": group_of(plural), "kind": plural,
                                                 "uid": obj["metadata"]["uid"]})
        if method == "PATCH" and name:
            if ctype == "application/apply-patch+yaml":
                try:
                    cfg = yaml.safe_load(raw)
                except yaml.YAMLError as e:
                    raise ApiError(400, "BadRequest", "error decoding YAML: %s" % e)
                # Admission sees the applied configuration merged onto the live object; a webhook
                # that mutates it is refused loudly (the patch would be owned by no field manager).
                old = STORE.objects.get(key)
                seen = merge_patch(old or {}, {k: v for k, v in cfg.items() if k != "status"})
                if self.admit("UPDATE" if old else "CREATE", plural, ns, name, seen, old) != seen:
                    raise ApiError(500, "InternalError", "fakeapi: a mutating webhook changed a server-side apply "
                                   "request, which this simulated API server does not support")
                return (200 if key in STORE.objects else 201), STORE.apply(key, cfg, query.get("fieldManager"),
                                                                              query.get("force") == "true")
            if key not in STORE.objects:
                raise not_found(plural, name)
            cur = copy.deepcopy(STORE.objects[key])
            cur["metadata"].pop("managedFields", None)
            try:
                patch = json.loads(raw)
            except ValueError as e:
                raise ApiError(400, "BadRequest", "error decoding patch: %s" % e)
            if ctype == "application/merge-patch+json":
                new = merge_patch(cur, patch)
            elif ctype == "application/strategic-merge-patch+json":
                new = strategic_patch(cur, patch)
            elif ctype == "application/json-patch+json":
                try:
                    new = jsonpatch.apply_patch(cur, patch)
                except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException) as e:
                    raise ApiError(422, "Invalid", "the server rejected our request due to an error in our request: %s"
                                   % e)
            else:
                raise ApiError(415, "UnsupportedMediaType", 'the body of the request was in an unknown format - '
                               'accepted media types include: application/json-patch+json, '
                               'application/merge-patch+json, application/apply-patch+yaml')
            new = self.admit("UPDATE", plural, ns, name, new, STORE.objects[key])
            return 200, STORE.update(key, new, manager)
        raise ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")

    def do_GET(self):
        self.handle_any("GET")

    def do_POST(self):
        self.handle_any("POST")

    def do_PUT(self):
        self.handle_any("PUT")

    def do_PATCH(self):
        self.handle_any("PATCH")

    def do_DELETE(self):
        self.handle_any("DELETE")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tls-cert")
    ap.add_argument("--tls-key")
    ap.add_argument("--client-ca")
    ap.add_argument("--auth", help="JSON: {tokens: {tok: user}, basic: {'u:p': user}, anonymous, forbid: [...]}")
    ap.add_argument("--port-file")
    ap.add_argument("--port", type=int, default=0, help="default: any free port")
    ap.add_argument("--state", help="keep the objects in this file across restarts (fake_watch.persist)")
    ap.add_argument("--hide", action="append", default=[], help="a resource (plural) not to serve, e.g. a CRD")
    ap.add_argument("--admission-control-config-file",
                    help="kube-apiserver's AdmissionConfiguration: the credentials presented to webhooks")
    args = ap.parse_args()
    if args.admission_control_config_file:
        try:
            fake_admission.configure(args.admission_control_config_file)
        except (OSError, ValueError) as e:
            sys.exit("fakeapi.py: --admission-control-config-file: %s" % e)
    HIDDEN.update(args.hide)
    if args.state:
        fake_watch.persist(args.state, STORE, lambda o: (KIND_TO_PLURAL[o["kind"]], o["metadata"].get("namespace"),
                                                         o["metadata"]["name"]))
    import fake_workloads
    EXTENSIONS.append(fake_workloads)
    for ext in EXTENSIONS:
        ext.install(sys.modules[__name__])
    if args.auth:
        with open(args.auth) as f:
            AUTH.update(json.load(f))
    srv = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    srv.daemon_threads = True
    if args.tls_cert:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(args.tls_cert, args.tls_key)
        if args.client_ca:
            ctx.load_verify_locations(args.client_ca)
            ctx.verify_mode = ssl.CERT_OPTIONAL
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    port = srv.server_address[1]
    if args.port_file:
        with open(args.port_file + ".tmp", "w") as f:
            f.write(str(port))
        import os
        os.rename(args.port_file + ".tmp", args.port_file)
    print(port, flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
