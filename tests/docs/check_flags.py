#!/usr/bin/env python3
"""README.md's Flags section documents every flag `webhookd --help` prints,
and nothing the binary does not have (ctest docs.flags).

Why a check rather than a generated section: the table says what --help has
no room for (why a default, what the chart sets, how flags interact), so it
is written by hand; this keeps it from drifting.  Flags are declared beside
what they configure (server/wh_server_flags.c, the endpoints' own tables),
and --help is generated from those declarations, so --help is the truth.

    check_flags.py WEBHOOKD README.md
"""
import re
import subprocess
import sys


def help_flags(binary):
    out = subprocess.run([binary, "--help"], capture_output=True, text=True, timeout=30)
    text = out.stdout + out.stderr
    flags = re.findall(r"^  --([a-z0-9][a-z0-9-]*)\b", text, re.M)
    if not flags:
        sys.exit("docs.flags: no flags found in `%s --help` (exit %d):\n%s" % (binary, out.returncode, text))
    return set(flags)


def readme_flags(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"^## Flags\n(.*?)(?=^## )", text, re.M | re.S)
    if m is None:
        sys.exit("docs.flags: %s has no \"## Flags\" section" % path)
    flags = set()
    for row in re.findall(r"^\|([^|\n]*)\|", m.group(1), re.M):  # the first cell of each table row
        flags.update(re.findall(r"`--([a-z0-9][a-z0-9-]*)`", row))
    if not flags:
        sys.exit("docs.flags: the Flags section of %s has no table of `--flag` rows" % path)
    return flags


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    have, documented = help_flags(sys.argv[1]), readme_flags(sys.argv[2])
    missing, stale = sorted(have - documented), sorted(documented - have)
    for flag in missing:
        print("README.md Flags: --%s is in `webhookd --help` but has no row" % flag)
    for flag in stale:
        print("README.md Flags: --%s has a row but webhookd has no such flag" % flag)
    if missing or stale:
        sys.exit(1)
    print("docs.flags: %d flags, each documented in README.md" % len(have))


if __name__ == "__main__":
    main()
