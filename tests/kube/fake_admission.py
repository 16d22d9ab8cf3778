"""fake_admission.py - kube-apiserver's webhook admission chain for fakeapi.py.

Every write that arrives as an API request (create, update, patch, delete; not /_fake/load
fixtures) passes through admit() before it is stored, the way kube-apiserver's MutatingAdmission-
Webhook and ValidatingAdmissionWebhook plugins run (k8s.io/apiserver/pkg/admission/plugin/webhook):

- MutatingWebhookConfigurations in name order, their webhooks in order, each JSONPatch applied
  before the next is called; reinvocationPolicy IfNeeded webhooks called once more when a later
  webhook changed the object; then every ValidatingWebhookConfiguration in name order;
- a webhook is called when one of its rules matches (operations, apiGroups, apiVersions,
  resources with "*" and subresources, scope), its namespaceSelector matches the namespace's labels
  (cluster-scoped objects: always; a Namespace: its own labels) and its objectSelector the labels of
  the object or the old object; matchConditions are CEL, which this server does not evaluate: a
  webhook that has them makes the request fail loudly (status 500) rather than guess;
- AdmissionReview v1 (v1beta1 when that is all the webhook accepts) over HTTPS to
  clientConfig.url or clientConfig.service: the Service's port is resolved to its Endpoints'
  address and port (tests point Endpoints at local webhookd processes, 127.0.0.1:PORT), the TLS
  handshake names <service>.<namespace>.svc and the certificate must verify against caBundle,
  ALPN http/1.1, POST <path>?timeout=<timeoutSeconds>s;
- a denial becomes `admission webhook "<name>" denied the request: <message>` with the response's
  status code; a call that fails (no Service or endpoints, refused, TLS, timeout, non-200, bad
  body, uid mismatch, patch from a validating webhook) becomes `failed calling webhook "<name>":
  failed to call webhook: ...` (500) under failurePolicy Fail and is skipped under Ignore;
- dry-run requests only call webhooks whose sideEffects are None or NoneOnDryRun;
- with an admission configuration (fakeapi.py --admission-control-config-file, configure()), each
  plugin's WebhookAdmissionConfiguration kubeConfigFile names the credentials presented to a
  webhook by its host, as kube-apiserver does (k8s.io/apiserver/pkg/util/webhook): the `users`
  entry named <service>.<namespace>.svc (":<port>" appended unless 443) or the URL's host[:port],
  else "*.<a parent domain>" from the nearest, else "*"; a client certificate (client-certificate
  or -data with client-key or -data), a token (token, tokenFile) or basic auth (username, password).

Every call is recorded (CALLS, served by fakeapi.py at GET /_fake/admission) so tests can assert
which webhooks ran and what they answered.  This module knows nothing of fakeapi.py's classes: it
gets a read-only view of the store and raises Rejected, which fakeapi.py turns into a Status.
"""
import base64
import copy
import http.client
import json
import socket
import ssl
import threading
import time
import uuid

import jsonpatch

# Istio config kinds served by fakeapi.py (plural -> (groupVersion, Kind, namespaced, shortNames)),
# so Istio objects can be created through the chain and validated by webhookd.
ISTIO_RESOURCES = {
    "destinationrules": ("networking.istio.io/v1", "DestinationRule", True, ["dr"]),
    "virtualservices": ("networking.istio.io/v1", "VirtualService", True, ["vs"]),
    "gateways": ("networking.istio.io/v1", "Gateway", True, ["gw"]),
    "serviceentries": ("networking.istio.io/v1", "ServiceEntry", True, ["se"]),
    "sidecars": ("networking.istio.io/v1", "Sidecar", True, []),
    "workloadentries": ("networking.istio.io/v1", "WorkloadEntry", True, ["we"]),
    "authorizationpolicies": ("security.istio.io/v1", "AuthorizationPolicy", True, ["ap"]),
    "peerauthentications": ("security.istio.io/v1", "PeerAuthentication", True, ["pa"]),
    "requestauthentications": ("security.istio.io/v1", "RequestAuthentication", True, ["ra"]),
    "telemetries": ("telemetry.istio.io/v1", "Telemetry", True, ["telemetry"]),
}

CALLS = []           # one dict per webhook call (or skip), newest last
WEBHOOK_USERS = {}   # plugin name -> {kubeconfig user name: user}, from configure()
PLUGINS = ("MutatingAdmissionWebhook", "ValidatingAdmissionWebhook")
_calls_lock = threading.Lock()


class Rejected(Exception):
    """The request is refused: `code` `reason` `message` become the Status the client gets."""

    def __init__(self, code, reason, message):
        super().__init__(message)
        self.code, self.reason, self.message = code, reason, message


def reset():
    with _calls_lock:
        del CALLS[:]


def calls():
    with _calls_lock:
        return list(CALLS)


def _record(entry):
    with _calls_lock:
        CALLS.append(entry)


# ---- matching ------------------------------------------------------------------------------------

def label_selector_matches(sel, labels):
    """metav1.LabelSelector semantics: matchLabels AND every matchExpression; {} or None matches all."""
    labels = labels or {}
    sel = sel or {}
    for k, v in (sel.get("matchLabels") or {}).items():
        if labels.get(k) != v:
            return False
    for x in sel.get("matchExpressions") or []:
        have, op, vals = labels.get(x["key"]), x["operator"], x.get("values") or []
        if op == "In":
            ok = have is not None and have in vals
        elif op == "NotIn":
            ok = have is None or have not in vals
        elif op == "Exists":
            ok = have is not None
        elif op == "DoesNotExist":
            ok = have is None
        else:
            raise Rejected(500, "InternalError", '"%s" is not a valid label selector operator' % op)
        if not ok:
            return False
    return True


def _one_matches(pattern, value):
    return pattern == "*" or pattern == value


def rule_matches(rule, op, group, version, resource, subresource, namespaced):
    if not any(_one_matches(o, op) for o in rule.get("operations") or []):
        return False
    if not any(_one_matches(g, group) for g in rule.get("apiGroups") or []):
        return False
    if not any(_one_matches(v, version) for v in rule.get("apiVersions") or []):
        return False
    full = resource + ("/" + subresource if subresource else "")
    ok = False
    for r in rule.get("resources") or []:
        if r == "*/*" or r == full:
            ok = True
        elif r == "*" and not subresource:
            ok = True
        elif "/" in r:
            rr, rs = r.split("/", 1)
            ok = ok or ((rr == "*" or rr == resource) and (rs == "*" or rs == subresource))
    if not ok:
        return False
    scope = rule.get("scope") or "*"
    return scope == "*" or (scope == "Namespaced") == namespaced


# ---- calling a webhook ---------------------------------------------------------------------------

class CallError(Exception):
    """A failed call: (url or None, error text).  With url the text is the transport's error
    ("failed to call webhook: Post <url>: ..."), without it the response was unusable."""


def _endpoint(store, cc):
    """(host, port, server name, path, url, credentials name) a clientConfig calls, resolved through
    Service and Endpoints."""
    if cc.get("url"):
        from urllib.parse import urlsplit
        u = urlsplit(cc["url"])
        return (u.hostname, u.port or 443, u.hostname, (u.path or "/") + ("?" + u.query if u.query else ""),
                cc["url"], u.netloc.rsplit("@", 1)[-1])
    svc_ref = cc.get("service") or {}
    ns, name, port = svc_ref.get("namespace"), svc_ref.get("name"), svc_ref.get("port") or 443
    path = svc_ref.get("path") or "/"
    host = "%s.%s.svc" % (name, ns)
    url = "https://%s:%d%s" % (host, port, path)
    svc = store.get(("services", ns, name))
    if svc is None:
        raise CallError(url, 'service "%s" not found' % name)
    port_name = None
    for p in (svc.get("spec") or {}).get("ports") or []:
        if p.get("port") == port:
            port_name = p.get("name") or ""
            break
    else:
        raise CallError(url, 'service "%s" has no port %d' % (name, port))
    eps = store.get(("endpoints", ns, name))
    targets = []
    for subset in (eps or {}).get("subsets") or []:
        for p in subset.get("ports") or []:
            if (p.get("name") or "") == port_name:
                targets += [(a["ip"], p["port"]) for a in subset.get("addresses") or []]
    if not targets:
        raise CallError(url, 'no endpoints available for service "%s"' % name)
    ip, tport = targets[_next_index(ns, name, len(targets))]
    return ip, tport, host, path, url, host if port == 443 else "%s:%d" % (host, port)


_rr = {}
_rr_lock = threading.Lock()


def _next_index(ns, name, n):
    with _rr_lock:
        i = _rr.get((ns, name), -1) + 1
        _rr[(ns, name)] = i
        return i % n


def configure(path):
    """Read kube-apiserver's --admission-control-config-file (AdmissionConfiguration) for the two
    webhook plugins' kubeconfigs; raises ValueError with kube-apiserver-like wording."""
    import os
    import yaml

    def load(p):
        with open(p) as f:
            return yaml.safe_load(f) or {}

    cfg = load(path)
    if cfg.get("kind") != "AdmissionConfiguration" or cfg.get("apiVersion") not in (
            "apiserver.config.k8s.io/v1", "apiserver.k8s.io/v1alpha1"):
        raise ValueError("%s: not an apiserver.config.k8s.io/v1 AdmissionConfiguration" % path)
    for plugin in cfg.get("plugins") or []:
        if plugin.get("name") not in PLUGINS:
            continue
        wc = plugin.get("configuration")
        if wc is None and plugin.get("path"):
            p = plugin["path"]
            wc = load(p if os.path.isabs(p) else os.path.join(os.path.dirname(path), p))
        if not isinstance(wc, dict) or wc.get("kind") not in ("WebhookAdmissionConfiguration", "WebhookAdmission"):
            raise ValueError("%s: plugin %s: want a WebhookAdmissionConfiguration" % (path, plugin.get("name")))
        kc_path = wc.get("kubeConfigFile") or ""
        if not os.path.isabs(kc_path):
            raise ValueError("%s: plugin %s: kubeConfigFile must be an absolute file path" % (path, plugin["name"]))
        users = {}
        for u in load(kc_path).get("users") or []:
            user = dict(u.get("user") or {})
            for key in ("client-certificate", "client-key", "tokenFile"):
                if user.get(key) and not os.path.isabs(user[key]):
                    user[key] = os.path.join(os.path.dirname(kc_path), user[key])
            users[u.get("name")] = user
        WEBHOOK_USERS[plugin["name"]] = users


def _webhook_user(plugin, target):
    """The kubeconfig user for a webhook host (exact name, then "*.<parent>" nearest first, then "*")."""
    users = WEBHOOK_USERS.get(plugin) or {}
    if target in users:
        return users[target]
    steps = target.split(".")
    for i in range(1, len(steps)):
        wildcard = "*." + ".".join(steps[i:])
        if wildcard in users:
            return users[wildcard]
    return users.get("*") or {}


def _present_credentials(ctx, user, headers):
    """Put a kubeconfig user's credentials on the TLS context (client certificate) or headers."""
    import os
    import tempfile
    cert, key = user.get("client-certificate"), user.get("client-key")
    tmp = []
    try:
        for field in ("client-certificate-data", "client-key-data"):
            if user.get(field):
                f = tempfile.NamedTemporaryFile("wb", delete=False)
                f.write(base64.b64decode(user[field]))
                f.close()
                tmp.append(f.name)
                if field == "client-certificate-data":
                    cert = f.name
                else:
                    key = f.name
        if cert or key:
            try:
                ctx.load_cert_chain(cert, key)
            except (OSError, ssl.SSLError) as e:
                raise CallError(None, "unable to load the client certificate for the webhook: %s" % e)
    finally:
        for name in tmp:
            os.unlink(name)
    token = user.get("token")
    if not token and user.get("tokenFile"):
        with open(user["tokenFile"]) as f:
            token = f.read().strip()
    if token:
        headers["Authorization"] = "Bearer " + token
    elif user.get("username"):
        headers["Authorization"] = "Basic " + base64.b64encode(
            ("%s:%s" % (user["username"], user.get("password", ""))).encode()).decode()


def _tls_context(ca_bundle_b64):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.set_alpn_protocols(["http/1.1"])
    if ca_bundle_b64:
        try:
            pem = base64.b64decode(ca_bundle_b64).decode()
        except (ValueError, UnicodeDecodeError):
            raise CallError(None, "caBundle is not base64-encoded PEM")
        try:
            ctx.load_verify_locations(cadata=pem)
        except ssl.SSLError as e:
            raise CallError(None, "unable to load root certificates: %s" % e)
    else:
        ctx.load_default_certs()
    return ctx


def _post(store, hook, review, plugin):
    """POST the AdmissionReview to the webhook; returns the parsed response AdmissionReview."""
    cc = hook.get("clientConfig") or {}
    timeout = hook.get("timeoutSeconds") or 10
    ip, port, server_name, path, url, user_name = _endpoint(store, cc)
    url = "%s?timeout=%ds" % (url, timeout)
    headers = {"Content-Type": "application/json", "Accept": "application/json, */*",
               "User-Agent": "kube-apiserver-admission"}
    try:
        ctx = _tls_context(cc.get("caBundle"))
        _present_credentials(ctx, _webhook_user(plugin, user_name), headers)
    except CallError as e:
        raise CallError(url, e.args[1])
    body = json.dumps(review).encode()
    deadline = time.monotonic() + timeout
    try:
        raw = socket.create_connection((ip, port), timeout=timeout)
    except socket.timeout:
        raise CallError(url, "context deadline exceeded")
    except OSError as e:
        raise CallError(url, "dial tcp %s:%d: connect: %s" % (ip, port, "connection refused"
                                                              if isinstance(e, ConnectionRefusedError) else e))
    try:
        try:
            sock = ctx.wrap_socket(raw, server_hostname=server_name)
        except ssl.SSLCertVerificationError as e:
            raise CallError(url, "tls: failed to verify certificate: x509: %s" % _x509_text(e, sock_name=server_name))
        except (ssl.SSLError, OSError) as e:
            raise CallError(url, "remote error: tls: %s" % e)
        raw = sock
        conn = http.client.HTTPConnection(server_name, port, timeout=max(0.1, deadline - time.monotonic()))
        conn.sock = sock
        try:
            conn.request("POST", path + ("&" if "?" in path else "?") + "timeout=%ds" % timeout, body=body,
                         headers=headers)
            resp = conn.getresponse()
            data = resp.read()
        except socket.timeout:
            raise CallError(url, "context deadline exceeded")
        except (OSError, http.client.HTTPException) as e:
            raise CallError(url, "EOF" if isinstance(e, (http.client.RemoteDisconnected, ConnectionResetError))
                            else str(e))
    finally:
        raw.close()
    if resp.status != 200:
        raise CallError(None, 'an error on the server ("%s") has prevented the request from succeeding'
                        % data.decode(errors="replace")[:200], "call")
    try:
        out = json.loads(data)
    except ValueError as e:
        raise CallError(None, "couldn't get version/kind; json parse error: %s" % e, "call")
    return out


def _x509_text(e, sock_name):
    """Go's crypto/x509 wording for the verification failures a webhook call meets."""
    if e.verify_code in (2, 18, 19, 20, 21):
        return "certificate signed by unknown authority"
    if e.verify_code == 62:
        return "certificate is not valid for %s" % sock_name
    if e.verify_code == 10:
        return "certificate has expired or is not yet valid"
    return e.verify_message


def _review(api_version, req):
    return {"apiVersion": api_version, "kind": "AdmissionReview", "request": req}


def _call(store, config, hook, mutating, attrs, obj, old):
    """One webhook call.  Returns (patched object or None, warnings); raises Rejected on a denial or
    on a failed call under failurePolicy Fail; returns (None, []) for a failed call under Ignore."""
    name = hook["name"]
    versions = hook.get("admissionReviewVersions") or []
    api_version = ("admission.k8s.io/v1" if "v1" in versions else
                   "admission.k8s.io/v1beta1" if "v1beta1" in versions else None)
    uid = str(uuid.uuid4())
    req = dict(attrs, uid=uid, object=obj, oldObject=old)
    entry = {"config": config["metadata"]["name"], "webhook": name, "mutating": mutating,
             "operation": attrs["operation"], "kind": attrs["kind"]["kind"], "namespace": attrs.get("namespace"),
             "name": attrs.get("name"), "time": time.time()}
    try:
        if api_version is None:
            raise CallError(None, "webhook does not accept v1 or v1beta1 AdmissionReview")
        out = _post(store, hook, _review(api_version, req), PLUGINS[0] if mutating else PLUGINS[1])
        resp = out.get("response") if isinstance(out, dict) else None
        if not isinstance(resp, dict) or out.get("apiVersion") != api_version or out.get("kind") != "AdmissionReview":
            raise CallError(None, "expected webhook response of %s, Kind=AdmissionReview, got %s, Kind=%s"
                            % (api_version, out.get("apiVersion") if isinstance(out, dict) else None,
                               out.get("kind") if isinstance(out, dict) else None))
        if resp.get("uid") != uid:
            raise CallError(None, 'expected response.uid="%s", got "%s"' % (uid, resp.get("uid", "")))
        warnings = resp.get("warnings") or []
        entry.update(allowed=bool(resp.get("allowed")), warnings=warnings,
                     auditAnnotations=resp.get("auditAnnotations") or {})
        if not resp.get("allowed"):
            st = resp.get("status") or {}
            msg = 'admission webhook "%s" denied the request' % name
            msg += (": " + st["message"]) if st.get("message") else (": " + st["reason"]) if st.get("reason") \
                else " without explanation"
            entry["denied"] = msg
            _record(entry)
            raise Rejected(st.get("code") or 400, st.get("reason") or "BadRequest", msg)
        patched = None
        if resp.get("patch"):
            if not mutating:
                raise CallError(None, "validating webhook may not return a patch")
            if resp.get("patchType") != "JSONPatch":
                raise CallError(None, 'unsupported patch type "%s"' % resp.get("patchType"))
            try:
                ops = json.loads(base64.b64decode(resp["patch"]))
                patched = jsonpatch.apply_patch(obj, ops)
            except (ValueError, jsonpatch.JsonPatchException, jsonpatch.JsonPointerException) as e:
                raise CallError(None, "JSON patch failed: %s" % e)
            entry["patched"] = patched != obj
        _record(entry)
        return patched, warnings
    except CallError as e:
        url, err = e.args[0], e.args[1]
        if url:
            why = 'failed to call webhook: Post "%s": %s' % (url, err)
        elif len(e.args) > 2:
            why = "failed to call webhook: " + err
        else:
            why = "received invalid webhook response: " + err
        msg = 'failed calling webhook "%s": %s' % (name, why)
        policy = hook.get("failurePolicy") or "Fail"
        entry.update(error=msg, failurePolicy=policy)
        _record(entry)
        if policy == "Ignore":
            return None, []
        raise Rejected(500, "InternalError", "Internal error occurred: " + msg)


# ---- the chain -----------------------------------------------------------------------------------

def _wants(store, hook, attrs, namespaced, obj, old, ns_labels, dry):
    """Whether `hook` is called for this request (rules, selectors); raises on what we cannot judge."""
    if not any(rule_matches(r, attrs["operation"], attrs["resource"]["group"], attrs["resource"]["version"],
                            attrs["resource"]["resource"], attrs.get("subResource") or "", namespaced)
               for r in hook.get("rules") or []):
        return False
    if namespaced or attrs["kind"]["kind"] == "Namespace":
        labels = ns_labels if namespaced else ((obj or old or {}).get("metadata") or {}).get("labels")
        if not label_selector_matches(hook.get("namespaceSelector"), labels):
            return False
    osel = hook.get("objectSelector")
    if osel and not any(label_selector_matches(osel, ((o or {}).get("metadata") or {}).get("labels"))
                        for o in (obj, old) if o is not None):
        return False
    if hook.get("matchConditions"):
        raise Rejected(500, "InternalError", "fake_admission: webhook \"%s\" has matchConditions (CEL), which this "
                       "simulated API server does not evaluate" % hook["name"])
    if dry and hook.get("sideEffects") not in ("None", "NoneOnDryRun"):
        raise Rejected(400, "BadRequest", 'admission webhook "%s" has sideEffects %s and does not support dry run'
                       % (hook["name"], hook.get("sideEffects")))
    return True


def admit(store, resources, operation, plural, namespace, name, obj, old, user, dry_run):
    """Run the chain for one request.  `store` maps (plural, ns, name) -> object (read under the
    caller's lock); `resources` is fakeapi.py's RESOURCES.  Returns (object to store, warnings)."""
    gv, kind, namespaced, _ = resources[plural]
    group, version = (gv.split("/") if "/" in gv else ("", gv))
    ns_labels = None
    if namespaced:
        ns_obj = store.get(("namespaces", None, namespace)) or {}
        ns_labels = (ns_obj.get("metadata") or {}).get("labels") or {}
    attrs = {"kind": {"group": group, "version": version, "kind": kind},
             "resource": {"group": group, "version": version, "resource": plural},
             "requestKind": {"group": group, "version": version, "kind": kind},
             "requestResource": {"group": group, "version": version, "resource": plural},
             "name": name or ((obj or {}).get("metadata") or {}).get("name", ""),
             "operation": operation,
             "userInfo": {"username": user or "system:anonymous",
                          "groups": ["system:authenticated"] if user and user != "system:anonymous" else
                          ["system:unauthenticated"]},
             "dryRun": bool(dry_run),
             "options": {"apiVersion": "meta.k8s.io/v1",
                         "kind": {"CREATE": "CreateOptions", "UPDATE": "UpdateOptions",
                                  "DELETE": "DeleteOptions"}[operation]}}
    if namespaced:
        attrs["namespace"] = namespace
    warnings = []

    def configs(plural_cfg):
        return sorted((o for (p, _, _), o in store.items() if p == plural_cfg),
                      key=lambda o: o["metadata"]["name"])

    # Mutating, in name order; IfNeeded webhooks again when a later one changed the object.
    cur = copy.deepcopy(obj)
    if operation != "DELETE":
        invoked = []  # (config, hook, object as that hook returned it)
        for cfg in configs("mutatingwebhookconfigurations"):
            for hook in cfg.get("webhooks") or []:
                if not _wants(store, hook, attrs, namespaced, cur, old, ns_labels, dry_run):
                    continue
                patched, w = _call(store, cfg, hook, True, attrs, cur, old)
                warnings += w
                if patched is not None:
                    cur = patched
                invoked.append((cfg, hook, copy.deepcopy(cur)))
        for cfg, hook, seen in invoked:
            if hook.get("reinvocationPolicy") == "IfNeeded" and seen != cur:
                if _wants(store, hook, attrs, namespaced, cur, old, ns_labels, dry_run):
                    patched, w = _call(store, cfg, hook, True, attrs, cur, old)
                    warnings += w
                    if patched is not None:
                        cur = patched
    # Validating, in name order (kube-apiserver calls them in parallel; the first denial wins here).
    for cfg in configs("validatingwebhookconfigurations"):
        for hook in cfg.get("webhooks") or []:
            target = cur if operation != "DELETE" else None
            if _wants(store, hook, attrs, namespaced, target, old, ns_labels, dry_run):
                _, w = _call(store, cfg, hook, False, attrs, target, old)
                warnings += w
    return cur, warnings

