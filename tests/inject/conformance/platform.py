#!/usr/bin/env python3
"""OpenShift is a revision's own setting: two revisions in one webhookd, one whose
values say `global.platform: openshift` and one whose values do not, each inject
as their own istiod would (issue #13's leftover; handlers/inject/wh_inject_settings.h,
wh_inject_settings_revision_platform).

istiod reads PLATFORM from its environment, which its chart sets from the revision's
`values.global.platform`; webhookd serves every revision from one process, so it must
read the platform from each revision's values, not from one process-wide flag.

For every set of the corpus (../shared/conformance/istio-inject) and every OpenShift
webhook case of it (settings.platform: openshift), with the case's settings minus the
platform:
* revision `os-N`: the case's files, values with global.platform=openshift;
  revision `plain-N`: the same files as they are.  One webhookd serves all of them,
  with no --platform, reading nodes and namespaces from a fake API server
  (tests/kube/fakeapi.py) that holds the case's namespace with its OpenShift
  UID/GID annotations;
* each pod of the case sent to /inject/rev/os-N must give Istio's golden (what
  istiod with PLATFORM=openshift gives);
* the same pod sent to /inject/rev/plain-N must give what a webhookd serving only
  the plain revisions gives (istiod without PLATFORM), and differ from os-N's;
* `webhookctl kube-inject` of the case's input gives the same output with the
  openshift values, the plain values, and the plain values with --platform
  openshift: istioctl kube-inject never applies OpenShift's namespace UID/GID or
  proxy-user reset (only istiod's webhook does).

With --cluster the webhookd serving both revisions reads them from istiod's ConfigMaps
(istio-sidecar-injector-<rev>, istio-<rev>) in the fake API server instead of a
--revisions-dir: the namespace watch then starts when the openshift revision's
ConfigMap arrives.
"""
import argparse
import base64
import copy
import json
import os
import shutil
import subprocess
import sys
import tempfile

import jsonpatch
import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run  # noqa: E402  (the conformance runner: settings, fake API, webhookd, comparison)


def without_platform(case):
    """The case with its platform (setting and PLATFORM env) taken out."""
    c = copy.deepcopy(case)
    s = c.setdefault("settings", {}) or {}
    s.pop("platform", None)
    env = dict(s.get("env") or {})
    env.pop("PLATFORM", None)
    s["env"] = env
    c["settings"] = s
    return c


def write_revision(revdir, name, st, platform):
    d = os.path.join(revdir, name)
    os.makedirs(d)
    for f in ("config", "mesh"):
        shutil.copy(getattr(st, f), os.path.join(d, f))
    with open(st.values) as f:
        values = json.load(f)
    if platform:
        values.setdefault("global", {})["platform"] = platform
    with open(os.path.join(d, "values"), "w") as f:
        json.dump(values, f, indent=2)
    if st.version:
        with open(os.path.join(d, "version"), "w") as f:
            f.write(st.version + "\n")
    return os.path.join(d, "values")


def configmaps(revdir):
    """istiod's ConfigMaps of every revision under `revdir`, as the cluster holds them."""
    objs = []
    for rev in sorted(os.listdir(revdir)):
        def text(name):
            with open(os.path.join(revdir, rev, name)) as f:
                return f.read()
        labels = {"istio.io/rev": rev}
        if os.path.exists(os.path.join(revdir, rev, "version")):
            labels["app.kubernetes.io/version"] = text("version").strip()
        meta = {"namespace": "istio-system", "labels": labels}
        objs += [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": dict(meta, name="istio-sidecar-injector-" + rev),
                  "data": {"config": text("config"), "values": text("values")}},
                 {"apiVersion": "v1", "kind": "ConfigMap", "metadata": dict(meta, name="istio-" + rev),
                  "data": {"mesh": text("mesh")}}]
    return objs


def inject(server, rev, pod, ns, uid):
    """The pod as webhookd's revision `rev` injects it (normalized as the conformance
    runner does), or a string saying why not."""
    body = json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                       "request": {"uid": uid, "namespace": ns, "object": pod}}).encode()
    status, reply = server.post("/inject/rev/" + rev, body)
    if status != 200:
        return "HTTP %d: %r" % (status, reply[:200])
    resp = json.loads(reply).get("response") or {}
    if not resp.get("allowed"):
        return "denied: %s" % ((resp.get("status") or {}).get("message") or "")[:300]
    if (resp.get("auditAnnotations") or {}).get("revision") != rev:
        return "answered by revision %r" % (resp.get("auditAnnotations") or {}).get("revision")
    result = copy.deepcopy(pod)
    if resp.get("patch"):
        result = jsonpatch.JsonPatch(json.loads(base64.b64decode(resp["patch"]))).apply(result)
    run.clear_fieldref_api_version(result)
    run.drop_status(result)
    return run.prune(result)


def kube_inject(webhookctl, cdir, case, st, values, extra):
    cmd = [webhookctl, "kube-inject", "-f", os.path.join(cdir, case["input"]), "--injectConfigFile", st.config,
           "--meshConfigFile", st.mesh, "--valuesFile", values] + st.flags + extra
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        return "kube-inject %s failed: %s" % (" ".join(extra), p.stderr.strip()[:300])
    return [run.prune(d) for d in run.load_docs(p.stdout)]


def run_set(args, corpus, tmp):
    """[(run, None or why)] for the OpenShift cases of one set."""
    cases_dir = os.path.join(corpus.root, "cases")
    found = []
    for name in sorted(os.listdir(cases_dir)):
        path = os.path.join(cases_dir, name, "case.yaml")
        if not os.path.isfile(path):
            continue
        with open(path) as f:
            case = yaml.safe_load(f)
        s = case.get("settings") or {}
        if s.get("platform") == "openshift" and case.get("webhook") and case.get("golden"):
            found.append((name, case))
    if not found:
        return []
    results = []
    # One webhookd per set of flags/nodes/namespaces (the corpus' OpenShift cases share them).
    groups = {}
    for i, (name, case) in enumerate(found):
        st = run.Settings(corpus, without_platform(case), tmp, cdir=os.path.join(cases_dir, name))
        key = json.dumps([st.webhook_flags, st.kubelets, st.namespaces], sort_keys=True)
        groups.setdefault(key, []).append((i, name, case, st))
    for gi, members in enumerate(groups.values()):
        both, plain_only = os.path.join(tmp, "both-%d" % gi), os.path.join(tmp, "plain-%d" % gi)
        values = {}
        for i, name, case, st in members:
            values["os-%d" % i] = write_revision(both, "os-%d" % i, st, "openshift")
            values["plain-%d" % i] = write_revision(both, "plain-%d" % i, st, None)
            write_revision(plain_only, "plain-%d" % i, st, None)
        st0 = members[0][3]
        api = run.FakeAPI(st0, tmp, cluster=args.cluster)
        servers = []
        try:
            if args.cluster:
                api.api.load(configmaps(both))
            for d in (both, plain_only):
                servers.append(run.Server(args.webhookd, d, st0.webhook_flags, tmp,
                                          os.path.join(tmp, "webhookd-%s.log" % os.path.basename(d)), api.kubeconfig,
                                          cluster=args.cluster and d == both))
            srv, ref = servers
            for i, name, case, st in members:
                cdir = os.path.join(cases_dir, name)
                with open(os.path.join(cdir, case["input"])) as f:
                    pods = run.pods_of(f.read())
                with open(os.path.join(cdir, case["golden"])) as f:
                    goldens = run.pods_of(f.read())
                why = None
                for k, ((pod, ns), (golden, _)) in enumerate(zip(pods, goldens)):
                    got_os = inject(srv, "os-%d" % i, pod, ns, "os-%d" % k)
                    got_plain = inject(srv, "plain-%d" % i, pod, ns, "plain-%d" % k)
                    want_plain = inject(ref, "plain-%d" % i, pod, ns, "ref-%d" % k)
                    golden = copy.deepcopy(golden)
                    run.drop_status(golden)
                    # istiod of revision R names R where the corpus' (revision `default`) says default
                    for where in ("annotations", "labels"):
                        m = (golden.get("metadata") or {}).get(where) or {}
                        if m.get("istio.io/rev") == "default":
                            m["istio.io/rev"] = "os-%d" % i
                    for label, got in (("os", got_os), ("plain", got_plain), ("reference plain", want_plain)):
                        if isinstance(got, str):
                            why = why or "pod %d, %s revision: %s" % (k, label, got)
                    if why:
                        break
                    why = (run.first_diff(got_os, run.prune(golden)) and
                           "pod %d, openshift revision vs Istio's golden: %s" % (
                               k, run.first_diff(got_os, run.prune(golden))))
                    why = why or (run.first_diff(got_plain, want_plain) and
                                  "pod %d, plain revision vs a webhookd without OpenShift revisions: %s" % (
                                      k, run.first_diff(got_plain, want_plain)))
                    if not why and got_plain == got_os:
                        why = "pod %d: the plain revision injected exactly as the openshift one" % k
                    if why:
                        break
                results.append(("%s/%s/webhook" % (corpus.name, name), why))
                outs = [kube_inject(args.webhookctl, cdir, case, st, values["os-%d" % i], []),
                        kube_inject(args.webhookctl, cdir, case, st, values["plain-%d" % i], []),
                        kube_inject(args.webhookctl, cdir, case, st, values["plain-%d" % i],
                                    ["--platform", "openshift"])]
                why = next((o for o in outs if isinstance(o, str)), None)
                if why is None and not outs[0] == outs[1] == outs[2]:
                    why = "outputs differ (openshift values vs plain: %s; --platform openshift vs plain: %s)" % (
                        run.first_diff(outs[0], outs[1]), run.first_diff(outs[2], outs[1]))
                results.append(("%s/%s/kube-inject" % (corpus.name, name), why))
        except RuntimeError as e:
            results.append(("%s/group-%d" % (corpus.name, gi), str(e)))
        finally:
            for s in servers:
                why = s.stop()
                if why:
                    results.append(("%s/group-%d/exit" % (corpus.name, gi), "webhookd " + why))
            api.stop()
    return results


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", required=True, help="istio-inject/ (every set in it) or one set")
    ap.add_argument("--webhookctl", required=True)
    ap.add_argument("--webhookd", required=True)
    ap.add_argument("--cluster", action="store_true",
                    help="the webhookd serving both revisions reads istiod's ConfigMaps from the fake API server")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="inject-platform-")
    results = []
    try:
        for d in run.find_sets(args.corpus):
            corpus = run.Corpus(d)
            results += run_set(args, corpus, os.path.join(tmp, corpus.name))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    bad = [(r, why) for r, why in results if why]
    for r, why in bad:
        print("FAIL %s: %s" % (r, why))
    print("%d of %d runs pass" % (len(results) - len(bad), len(results)))
    if not results:
        print("no OpenShift case found in %s" % args.corpus)
        return 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
