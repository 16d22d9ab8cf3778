#!/usr/bin/env python3
"""The Global Flags are one table (ctl/cluster.c): every command that talks to the cluster must honour each of
them the same way.  Runs every cluster command against tests/kube/fakeapi.py with each flag and checks the effect:
--kubeconfig/-c picks the server, --context the context, --as the impersonated user (fakeapi forbids user "dev"),
--request-timeout (also bare seconds and its alias --kubeclient-timeout) bounds a delayed answer,
-i/--istioNamespace/--istio-namespace/$ISTIOCTL_ISTIONAMESPACE the namespace `tag list` reads Services from.

Usage: WEBHOOKCTL=build/ctl/webhookctl test_cluster_flags.py"""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "kube"))
import kubetest  # noqa: E402
from kubetest import check  # noqa: E402

# Each cluster command, with arguments that make it read the cluster.
COMMANDS = {
    "tag list": ["tag", "list"],
    "tag set": ["tag", "set", "prod", "--revision", "x"],
    "tag remove": ["tag", "remove", "prod"],
    "check": ["check"],
    "check-inject": ["check-inject", "-l", "app=a", "-n", "default"],
    "certs patch-ca-bundle": ["certs", "patch-ca-bundle", "--ca-file", "CA", "--mutating", "m"],
}


def run(args, env_extra=None, timeout=30):
    env = dict(os.environ, HOME="/nonexistent")
    env.pop("KUBECONFIG", None)
    env.pop("ISTIOCTL_ISTIONAMESPACE", None)
    env.update(env_extra or {})
    return subprocess.run([kubetest.tool("WEBHOOKCTL")] + args, capture_output=True, text=True, env=env,
                          timeout=timeout, stdin=subprocess.DEVNULL)


def main():
    api = kubetest.FakeApi(auth={"tokens": {"tok-admin": "admin"}, "anonymous": False,
                                 "forbid": [{"user": "dev", "verb": "*", "resource": "*"}]})
    tmp = tempfile.mkdtemp(prefix="ctl-flags-")
    try:
        kc = api.kubeconfig()
        ca = os.path.join(tmp, "ca.crt")
        p = run(["certs", "generate", "--dns-name", "x", "--cert-file", ca, "--key-file", os.path.join(tmp, "k")])
        check("certs generate for the CA file", p.returncode == 0, p.stderr)
        for name, words in COMMANDS.items():
            words = [ca if w == "CA" else w for w in words]
            # --kubeconfig and -c: the fake server is reached (its log grows)
            for flag in ("--kubeconfig", "-c"):
                api.reset()
                p = run(words + [flag, kc])
                check("%s %s reaches the server" % (name, flag), len(api.log()) > 0, p.stderr)
            # before the command name too, for the groups (cobra finds commands among inherited flags)
            if words[0] == "tag":  # certs is no cluster group: `certs generate` is offline
                api.reset()
                p = run([words[0], "-c", kc] + words[1:])
                check("%s: -c before the subcommand" % name, len(api.log()) > 0, p.stderr)
            # --as: the API server sees the impersonated user
            p = run(words + ["--kubeconfig", kc, "--as", "dev", "--as-group", "g1", "--as-group", "g2"])
            check("%s --as dev is impersonated" % name, p.returncode == 1 and 'User "dev" cannot' in p.stderr,
                  (p.returncode, p.stderr))
            # --context: an unknown context is refused by the kubeconfig loader
            p = run(words + ["--kubeconfig", kc, "--context", "nope"])
            check("%s --context nope" % name, p.returncode == 1 and "nope" in p.stderr, (p.returncode, p.stderr))
            # --request-timeout (bare seconds, alias, duration) bounds a stalled API server
            for spelling in (["--request-timeout", "1"], ["--kubeclient-timeout=1s"], ["--request-timeout=700ms"]):
                api.reset()
                api.faults([{"method": "GET", "action": "delay", "delay_ms": 4000, "count": 100}])
                p = run(words + ["--kubeconfig", kc] + spelling, timeout=30)
                api.faults([])
                check("%s %s times out" % (name, " ".join(spelling)),
                      p.returncode == 1 and "context deadline exceeded" in p.stderr, (p.returncode, p.stderr))
            # a malformed value is a usage error before any request
            api.reset()
            p = run(words + ["--kubeconfig", kc, "--request-timeout", "-1s"])
            check("%s --request-timeout -1s refused" % name,
                  p.returncode == 1 and 'invalid --request-timeout "-1s"' in p.stderr and not api.log(),
                  (p.returncode, p.stderr))
        # -i and its spellings: `tag list` lists the tag Services in that namespace
        for args, env in ((["-i", "istio-a"], None), (["--istioNamespace=istio-a"], None),
                          (["--istio-namespace", "istio-a"], None), ([], {"ISTIOCTL_ISTIONAMESPACE": "istio-a"}),
                          (["-i", "istio-a"], {"ISTIOCTL_ISTIONAMESPACE": "istio-b"})):
            api.reset()
            p = run(["tag", "list", "--kubeconfig", kc] + args, env)
            paths = [e["path"] for e in api.log()]
            check("tag list %s %s reads istio-a" % (" ".join(args), env or ""),
                  p.returncode == 0 and "/api/v1/namespaces/istio-a/services" in paths, (p.stderr, paths))
        api.reset()
        p = run(["tag", "list", "--kubeconfig", kc])
        check("tag list defaults to istio-system",
              "/api/v1/namespaces/istio-system/services" in [e["path"] for e in api.log()], p.stderr)
    finally:
        api.close()
    return kubetest.failed_status()


if __name__ == "__main__":
    sys.exit(main())
