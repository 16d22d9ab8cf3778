#!/usr/bin/env python3
"""Runs cli.yaml against the real webhookctl: every command's --help against its golden file in help/, and
command lines that must fail with cobra/pflag's exact messages and exit status 2 before touching a cluster.

Usage: WEBHOOKCTL=build/ctl/webhookctl run_cli.py cli.yaml   (WH_UPDATE_GOLDEN=1 rewrites the goldens)"""
import os
import subprocess
import sys

import yaml


def main():
    path = sys.argv[1]
    golden_dir = os.path.join(os.path.dirname(os.path.abspath(path)), "help")
    update = bool(os.environ.get("WH_UPDATE_GOLDEN"))
    with open(path) as f:
        cases = yaml.safe_load(f)
    env = dict(os.environ, KUBECONFIG="/nonexistent/kubeconfig", HOME="/nonexistent")
    env.pop("ISTIOCTL_ISTIONAMESPACE", None)
    failures = 0
    for case in cases:
        args = [str(a) for a in case["args"]]
        name = "webhookctl " + " ".join(args)
        p = subprocess.run([os.environ["WEBHOOKCTL"]] + args, capture_output=True, text=True, env=env, timeout=20)
        problems = []
        want_exit = case.get("exit", 0)
        if p.returncode != want_exit:
            problems.append("exit %d, want %d" % (p.returncode, want_exit))
        if "stdout_file" in case:
            golden = os.path.join(golden_dir, case["stdout_file"])
            if update and want_exit == 0:
                with open(golden, "w") as f:
                    f.write(p.stdout)
            with open(golden) as f:
                want = f.read()
            if p.stdout != want:
                problems.append("stdout differs from %s:\n%s" % (golden, p.stdout))
        elif "stdout" in case and p.stdout != case["stdout"]:
            problems.append("stdout %r, want %r" % (p.stdout, case["stdout"]))
        want_err = case.get("stderr", "")
        if p.stderr != want_err:
            problems.append("stderr %r, want %r" % (p.stderr, want_err))
        print("%s %s" % ("FAIL" if problems else "ok  ", name))
        for problem in problems:
            print("     " + problem)
        failures += bool(problems)
    print("%d command lines, %d failed" % (len(cases), failures))
    return 1 if failures or not cases else 0


if __name__ == "__main__":
    sys.exit(main())
