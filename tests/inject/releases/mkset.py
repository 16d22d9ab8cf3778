#!/usr/bin/env python3
"""Build an istio-inject conformance set for one istio/istio release tag, outside the repository.

We hold Istio's injection goldens for a few releases only (../shared/conformance/istio-inject); this
rebuilds a set in the same layout (the master set's README) for any other tag of a local istio/istio
clone, so tests/inject/conformance/run.py can check webhookd's release table on it (README.md here):

  tests/inject/releases/mkset.py --git-dir ISTIO/.git --tag 1.25.5 --out /tmp/relsets/1.25.5
  tests/inject/conformance/run.py --corpus /tmp/relsets --webhookctl ... --webhookd ...

Cases come from the tag's own pkg/kube/inject/inject_test.go (TestInjection, TestInjectionOlderVersion):
explicit entries in table order, then auto-discovered inputs in file-name order.  Inputs and goldens are the
tag's files.  Settings: the tag's pre-rendered testdata/inputs/*.gen.yaml when it ships them (default and per
case), else the tag's istio-discovery chart rendered by helm with its default values (reproduces 1.24.0's
pre-rendered files and the 1.26.0/1.29.0/1.30.0 sets byte for byte).  A case whose Go entry sets values, mesh
hooks or setup hooks takes its `settings` from a reference set whose tag has the very same Go entry (same text)
(the nearest release first); what the test's preamble and the tag's ENABLE_NATIVE_SIDECARS default decide
(kubelet versions, native sidecars, namespaces) is read from the tag itself.  A case with no such reference
is reported and left out (exit status 1).  Checked: with each held set left out of the references, the
1.21.0, 1.22.0, 1.26.0, 1.29.0 and 1.30.0 sets come back identical (settings, inputs, goldens, modes) but
for hello-tracing-disabled's mesh override, written `$patch: replace` here (the same on every base mesh).  The output is Istio's test data: never commit it.
"""
import argparse, json, os, re, shutil, subprocess, sys, yaml

HERE = os.path.dirname(os.path.abspath(__file__))
ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
ap.add_argument("--git-dir", required=True, help="an istio/istio clone's git directory (with its tags)")
ap.add_argument("--tag", required=True, help="the release tag, e.g. 1.25.5")
ap.add_argument("--out", required=True, help="folder to (re)create; keep it outside the repository")
ap.add_argument("--refs", default=os.path.join(HERE, "../../../../shared/conformance/istio-inject"),
                help="folder of held sets whose case settings are reused (default: ../shared/conformance/istio-inject)")
ap.add_argument("--exclude-ref", action="append", default=[], help="a held set not to use (to check this script on it)")
ap.add_argument("--helm", default=os.path.join(os.environ.get("WH_TOOLS_DIR", os.path.expanduser("~/.cache/webhookd/tools")),
                                               "helm/helm"), help="helm binary (scripts/deps.sh test installs it)")
args = ap.parse_args()
if os.path.realpath(args.out).startswith(os.path.realpath(os.path.join(HERE, "../../..")) + os.sep):
    sys.exit("mkset.py: --out must be outside the repository (Istio's goldens are not committed)")


def git(*a, check=True):
    return subprocess.run(["git", "--git-dir", args.git_dir] + list(a), capture_output=True, text=True,
                          check=check).stdout


def show(tag, path):
    p = subprocess.run(["git", "--git-dir", args.git_dir, "show", "%s:%s" % (tag, path)], capture_output=True)
    return p.stdout if p.returncode == 0 else None


def strip_comments(src):
    out, i, n = [], 0, len(src)
    while i < n:
        c = src[i]
        if c == '/' and src.startswith('//', i):
            j = src.find('\n', i)
            i = n if j < 0 else j
            continue
        if c in '"`':
            j = i + 1
            while j < n and src[j] != c:
                j += 2 if (c == '"' and src[j] == '\\') else 1
            out.append(src[i:j + 1])
            i = j + 1
            continue
        out.append(c)
        i += 1
    return ''.join(out)


def top_entries(body):
    """Top-level {...} entries of a Go composite literal body."""
    ents, depth, start, i = [], 0, None, 0
    while i < len(body):
        c = body[i]
        if c in '"`':
            j = i + 1
            while body[j] != c:
                j += 2 if (c == '"' and body[j] == '\\') else 1
            i = j + 1
            continue
        if c == '{':
            if depth == 0:
                start = i
            depth += 1
        elif c == '}':
            depth -= 1
            if depth == 0:
                ents.append(body[start:i + 1])
            if depth < 0:
                return ents
        i += 1
    return ents


def go_tests(tag):
    """{test: (preamble, [entry texts])} from the tag's inject_test.go."""
    src = strip_comments(show(tag, "pkg/kube/inject/inject_test.go").decode())
    res = {}
    for test in ("TestInjection", "TestInjectionOlderVersion"):
        m = re.search(r"\nfunc %s\(t \*testing\.T\) \{" % test, src)
        if not m:
            continue
        k = src.index("cases := []testCase{", m.end())
        pre = " ".join(src[m.end():k].split())
        res[test] = (pre, [" ".join(e.split()) for e in top_entries(src[k + len("cases := []testCase{"):])],
                     src[k:src.find("\nfunc ", k)])
    return res


def field(e, name):
    m = re.search(r"[{,] ?%s: \"((?:[^\"\\]|\\.)*)\"" % name, e)
    return json.loads('"%s"' % m.group(1)) if m else None


def flag(e, name):
    return re.search(r"[{,] ?%s: true" % name, e) is not None


def native_default(tag):
    for f in ("pilot/pkg/features/pilot.go", "pilot/pkg/features/experimental.go"):
        s = show(tag, f)
        if s:
            m = re.search(r'Register\("ENABLE_NATIVE_SIDECARS", ([^,]+),', s.decode())
            if m:
                return m.group(1)
    return None


tag = args.tag


def vnum(t):
    m = re.match(r"(\d+)\.(\d+)\.(\d+)", t)
    return int(m.group(1)) * 10000 + int(m.group(2)) * 100 + int(m.group(3)) if m else 999999
tests = go_tests(tag)
injdir = "pkg/kube/inject/testdata/inject/"
files = sorted(os.path.basename(p) for p in git("ls-tree", "--name-only", tag, injdir).split())

# the cases as the tag's test runs them
runs = []
for test, (pre, ents, rest) in tests.items():
    cases = [dict(entry=e, auto=False) for e in ents]
    if test == "TestInjection" and "alreadyTested" in rest:
        done = set(field(e, "want") or (field(e, "in") + ".injected") for e in ents)
        for f in files:
            if f.endswith(".iop.yaml") or not f.endswith(".yaml") or f + ".injected" in done:
                continue
            cases.append(dict(entry='{ in: "%s", want: "%s.injected", }' % (f, f), auto=True))
    for i, c in enumerate(cases):
        e = c["entry"]
        c.update(test=test, index=i, pre=pre, rest=rest, inp=field(e, "in"), want=field(e, "want"),
                 err=field(e, "expectedError"), log=field(e, "expectedLog"), skipWebhook=flag(e, "skipWebhook"),
                 skipInjection=flag(e, "skipInjection"), iop=field(e, "inFilePath"),
                 setFlags=re.search(r"setFlags:", e) is not None, mesh=re.search(r" mesh:", e) is not None,
                 setup=re.search(r" setup:", e) is not None)
        runs.append(c)

# reference cases indexed by (test, preamble, native default, entry text)
ref = {}
nd = native_default(tag)
for s in sorted(os.listdir(args.refs)):
    sdir = os.path.join(args.refs, s)
    if s in args.exclude_ref or not os.path.isdir(os.path.join(sdir, "cases")):
        continue
    stag = open(os.path.join(sdir, "version")).read().strip() if os.path.exists(os.path.join(sdir, "version")) \
        else re.search(r"\| commit \| `([0-9a-f]+)`", open(os.path.join(sdir, "README.md")).read()).group(1)
    rt = go_tests(stag)
    for cdir in os.listdir(os.path.join(sdir, "cases")):
        case = yaml.safe_load(open(os.path.join(sdir, "cases", cdir, "case.yaml")))
        t = rt.get(case["test"])
        if not t:
            continue
        ents = t[1]
        if case["index"] < len(ents):
            key = ents[case["index"]]
        elif case["source"]["autoDiscovered"]:
            key = '{ in: "%s", want: "%s.injected", }' % ((os.path.basename(case["source"]["input"]),) * 2)
        else:
            continue
        iop = field(key, "inFilePath")
        iopsrc = show(stag, injdir + iop) if iop else None
        ref.setdefault((case["test"], key), []).append((s, stag, case, iopsrc, t[0]))

gen = bool(git("ls-tree", "--name-only", tag, "pkg/kube/inject/testdata/inputs/").strip())
if os.path.exists(args.out):
    shutil.rmtree(args.out)
os.makedirs(os.path.join(args.out, "cases"))
names = {"template": "inject-config.yaml", "values": "values.json", "mesh": "mesh.yaml"}
if gen:
    for k, v in names.items():
        open(os.path.join(args.out, v), "wb").write(show(tag, "pkg/kube/inject/testdata/inputs/default.%s.gen.yaml" % k))
else:
    chart = os.path.join(args.out, ".chart")
    os.makedirs(chart)
    a = subprocess.run(["git", "--git-dir", args.git_dir, "archive", tag, "manifests/charts/istio-control/istio-discovery"],
                       capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", chart], input=a, check=True)
    cdir = os.path.join(chart, "manifests/charts/istio-control/istio-discovery")

    def render(t):
        return [d for d in yaml.safe_load_all(subprocess.run(
            [args.helm, "template", "istiod", cdir, "-n", "istio-system", "--show-only", "templates/" + t],
            capture_output=True, text=True, check=True).stdout) if d]
    inj = [d for d in render("istiod-injector-configmap.yaml") if d["metadata"]["name"] == "istio-sidecar-injector"][0]
    mesh = [d for d in render("configmap.yaml") if d["metadata"]["name"] == "istio"][0]
    open(os.path.join(args.out, "inject-config.yaml"), "w").write(inj["data"]["config"])
    open(os.path.join(args.out, "values.json"), "w").write(inj["data"]["values"])
    open(os.path.join(args.out, "mesh.yaml"), "w").write(mesh["data"]["mesh"])
    shutil.rmtree(chart)
open(os.path.join(args.out, "version"), "w").write(tag + "\n")

CASE_KEYS = ("values", "mesh", "injectConfig", "platform", "compliancePolicy", "env")


def replace_empty(v):
    """An empty message assigned in a Go mesh hook replaces whatever the base mesh has there."""
    if isinstance(v, dict):
        return {k: ({"$patch": "replace"} if x == {} else replace_empty(x)) for k, x in v.items()}
    return v


def era_settings(c, case_settings):
    """Settings the test's preamble and the tag's feature default decide, for this case."""
    st = {k: case_settings.get(k) if case_settings else None for k in CASE_KEYS}
    if st["mesh"]:
        st["mesh"] = replace_empty(st["mesh"])
    for k, empty in (("values", {}), ("mesh", {}), ("injectConfig", {}), ("env", {})):
        if st[k] is None:
            st[k] = empty
    m = re.search(r'SetEnvForTest\(t, features\.EnableNativeSidecars\.Name, "(\w+)"\)', c["entry"])
    f = re.search(r'SetForTest\(t, &features\.EnableNativeSidecars, features\.NativeSidecarMode(\w+)\)', c["entry"])
    enable = nd.strip('"')
    if m:
        enable = m.group(1)
        st["env"] = dict(st["env"], ENABLE_NATIVE_SIDECARS=enable)
    elif f:
        enable = {"Disabled": "false", "Enabled": "true", "Auto": "auto"}[f.group(1)]
    kubelets = re.findall(r'KubeletVersion: "([^"]+)"', c["pre"]) or None
    if enable == "auto":
        native = bool(kubelets) and all(tuple(map(int, re.findall(r"\d+", k)[:2])) >= (1, 33) for k in kubelets)
    else:
        native = enable == "true"
    ns = []
    if "UIDRangeAnnotation" in c["pre"] + c["rest"]:
        ns = [dict(name="test-ns", annotations={"openshift.io/sa.scc.uid-range": "1000620000/10000",
                                                "openshift.io/sa.scc.supplemental-groups": "1000620000/10000"})]
    return dict(values=st["values"], mesh=st["mesh"], injectConfig=st["injectConfig"], nativeSidecars=native,
                enableNativeSidecars=enable, kubeletVersions=kubelets, platform=st["platform"],
                compliancePolicy=st["compliancePolicy"], env=st["env"], namespaces=ns)


skipped, written = [], 0
for c in runs:
    golden = None if c["err"] else c["want"]
    label = c["inp"] if c["err"] else c["want"]
    folder = "%s-%03d-%s" % (c["test"], c["index"], label)
    cands = ref.get((c["test"], c["entry"]), [])
    if c["iop"]:
        mine = show(tag, injdir + c["iop"])
        cands = [x for x in cands if x[3] == mine]
    native_only = re.sub(r'setup: func\(t test\.Failer\) \{ (test\.(SetEnvForTest\(t, features\.EnableNativeSidecars\.Name, "\w+"\)|'
                         r'SetForTest\(t, &features\.EnableNativeSidecars, features\.NativeSidecarMode\w+\)) )+\},?',
                         "", c["entry"])
    plain = not (c["mesh"] or " setup:" in native_only or (not gen and (c["setFlags"] or c["iop"])))
    if cands:
        cands.sort(key=lambda x: abs(vnum(x[1]) - vnum(tag)))
        settings, origin = era_settings(c, cands[0][2]["settings"]), "reference set " + cands[0][0]
    elif plain:
        settings, origin = era_settings(c, None), "defaults"
    else:
        skipped.append("%s: no reference case with this Go entry: %s" % (folder, c["entry"][:160]))
        continue
    d = os.path.join(args.out, "cases", folder)
    os.makedirs(d)
    open(os.path.join(d, "input.yaml"), "wb").write(show(tag, injdir + c["inp"]))
    if golden:
        g = show(tag, injdir + golden)
        if g is None:
            skipped.append("%s: golden %s missing" % (folder, golden))
            shutil.rmtree(d)
            continue
        open(os.path.join(d, "golden.yaml"), "wb").write(g)
    if gen and (c["setFlags"] or c["iop"]):
        for k, v in names.items():
            b = show(tag, "pkg/kube/inject/testdata/inputs/%s.%d.%s.gen.yaml" % (c["inp"], c["index"], k))
            if b is None:
                skipped.append("%s: pre-rendered %s missing" % (folder, k))
            else:
                open(os.path.join(d, v), "wb").write(b)
    mode = "kube-inject-only" if (c["err"] or c["skipWebhook"]) else ("webhook-only" if c["skipInjection"] else "both")
    case = dict(name="%s/[%02d] %s" % (c["test"], c["index"], label), test=c["test"], index=c["index"],
                input="input.yaml", golden="golden.yaml" if golden else None,
                source=dict(input=injdir + c["inp"], golden=injdir + golden if golden else None,
                            autoDiscovered=c["auto"], settingsFrom=origin),
                mode=mode, kubeInject=not c["skipInjection"], webhook=not (c["err"] or c["skipWebhook"]),
                revision=dict(kubeInject="", webhook="default"), expectedError=c["err"], expectedLog=c["log"],
                settings=settings, unsupported_reason=None)
    yaml.safe_dump(case, open(os.path.join(d, "case.yaml"), "w"), sort_keys=False)
    written += 1
print("%s: %d runs written, %d skipped (%s settings)" % (tag, written, len(skipped), "pre-rendered" if gen else "helm"))
for s in skipped:
    print("  skipped " + s)
sys.exit(1 if skipped else 0)
