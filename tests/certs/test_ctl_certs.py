#!/usr/bin/env python3
"""webhookctl certs: generate a certificate, then patch caBundle into webhook
configurations held by the fake API server (tests/kube/fakeapi.py).

Checks: the generated pair is a P-256 certificate with the requested SANs
and a 0600 key; patch-ca-bundle sets caBundle only on the selected webhooks
(by name, by selector, by service), leaves up-to-date configurations
unwritten, reports a missing configuration while still patching the others,
rejects a CA file without certificates before talking to the server.
"""
import base64
import os
import stat
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "kube"))
import kubetest  # noqa: E402
from kubetest import webhook, webhook_config as config  # noqa: E402

CTL = sys.argv[1]
failures = []
passed = 0


def check(cond, what):
    global passed
    passed += 1 if cond else 0
    if not cond:
        failures.append(what)
        print("FAIL", what)


def run(*args):
    p = subprocess.run([CTL, "certs", *args], capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


tmp = tempfile.mkdtemp(prefix="ctl-certs-")
crt, key = os.path.join(tmp, "tls.crt"), os.path.join(tmp, "tls.key")

# generate
rc, out, err = run("generate", "--dns-name", "webhookd.istio-system.svc", "--dns-name", "127.0.0.1",
                   "--days", "30", "--cert-file", crt, "--key-file", key)
check(rc == 0, "generate exits 0 (%s)" % err)
text = subprocess.run(["openssl", "x509", "-in", crt, "-noout", "-text"], capture_output=True, text=True).stdout
check("DNS:webhookd.istio-system.svc" in text and "IP Address:127.0.0.1" in text, "generate: SANs")
check("prime256v1" in text or "P-256" in text, "generate: P-256 key")
check(stat.S_IMODE(os.stat(key).st_mode) == 0o600, "generate: key mode 0600")
check(run("generate", "--cert-file", crt, "--key-file", key)[0] == 2, "generate without --dns-name is a usage error")
check(run("generate", "--dns-name", "x", "--days", "0", "--cert-file", crt, "--key-file", key)[0] == 2,
      "generate --days 0 is a usage error")

pem = open(crt, "rb").read()
b64 = base64.b64encode(pem).decode()
api = kubetest.FakeApi()
try:
    kc = api.kubeconfig()
    api.load([
        config("MutatingWebhookConfiguration", "inject-a", {"app": "webhookd"},
               [webhook("a.sidecar-injector.istio.io", "istio-system", "webhookd"),
                webhook("other.example.com", "other", "svc")]),
        config("MutatingWebhookConfiguration", "inject-b", {"app": "webhookd"},
               [webhook("b.sidecar-injector.istio.io", "istio-system", "webhookd", bundle=b64)]),
        config("ValidatingWebhookConfiguration", "validate", {},
               [webhook("validation.istio.io", "istio-system", "webhookd")]),
        config("MutatingWebhookConfiguration", "unrelated", {"app": "else"},
               [webhook("x.example.com", "istio-system", "webhookd")]),
    ])
    rc, out, err = run("patch-ca-bundle", "--kubeconfig", kc, "--ca-file", crt, "--selector", "app=webhookd",
                       "--validating", "validate", "--service", "istio-system/webhookd")
    check(rc == 0, "patch exits 0 (%s)" % err)
    check("mutatingwebhookconfiguration/inject-a: 1 webhook updated" in out, "report for inject-a: " + out)
    check("mutatingwebhookconfiguration/inject-b: up to date" in out, "report for inject-b: " + out)
    check("validatingwebhookconfiguration/validate: 1 webhook updated" in out, "report for validate: " + out)
    state = {(o["kind"], o["metadata"]["name"]): o for o in api.state()}
    a = state[("MutatingWebhookConfiguration", "inject-a")]["webhooks"]
    check(a[0]["clientConfig"].get("caBundle") == b64, "inject-a webhook of our service patched")
    check("caBundle" not in a[1]["clientConfig"], "webhook of another service left alone")
    check("caBundle" not in state[("MutatingWebhookConfiguration", "unrelated")]["webhooks"][0]["clientConfig"],
          "configuration outside the selector left alone")
    writes = [e for e in api.log() if e.get("method") in ("PUT", "PATCH", "POST")]
    check(not any("inject-b" in e.get("path", "") for e in writes), "up-to-date configuration not written")

    # A missing configuration is reported; the others are still patched.
    rc, out, err = run("patch-ca-bundle", "--kubeconfig", kc, "--ca-file", crt, "--mutating", "missing",
                       "--mutating", "unrelated")
    check(rc == 1 and "missing" in err, "missing configuration fails the command (%d, %s)" % (rc, err))
    check("mutatingwebhookconfiguration/unrelated: 1 webhook updated" in out, "others still patched: " + out)

    # A file that is not a certificate is refused before any request.
    bad = os.path.join(tmp, "bad.crt")
    open(bad, "w").write("not a certificate\n")
    before = len(api.log())
    rc, out, err = run("patch-ca-bundle", "--kubeconfig", kc, "--ca-file", bad, "--mutating", "inject-a")
    check(rc == 1 and "no PEM certificate" in err, "bad CA file refused (%d, %s)" % (rc, err))
    check(len(api.log()) == before, "no request sent for a bad CA file")
    check(run("patch-ca-bundle", "--ca-file", crt)[0] == 2, "no target is a usage error")
finally:
    api.close()

print("%d passed, %d failed" % (passed, len(failures)))
sys.exit(1 if failures else 0)
