#!/usr/bin/env python3
"""Every message the validator can produce is istiod's, and listed.

Reads the C sources of handlers/validate and collects the format string of
every call that makes a message a user sees (wh_verr, wh_vwarn,
wh_verr_listed, wh_vfmt, wh_err_set, wh_asprintf); each must have a line in
messages.tsv (`<format>\\t<istiod function it comes from>\\t<note>`), and every
line of messages.tsv must still match a call.  So a message added to the
validator without saying which istiod function says it fails this test
(ctest validate.messages).

  check_messages.py SRC_DIR messages.tsv          check
  check_messages.py SRC_DIR messages.tsv --list   print the formats found
  check_messages.py SRC_DIR messages.tsv --self-test
      also proves the check fails on a copy of SRC_DIR with one unlisted message
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

CALLS = ("wh_verr", "wh_vwarn", "wh_verr_listed", "wh_vfmt", "wh_err_set", "wh_asprintf", "wh_vnetip_fail", "wh_vnetip_prefix_fail")
CALL_RE = re.compile(r"\b(%s)\s*\(" % "|".join(CALLS))
# A format whose text outside its conversions has no letter ("%s", "%s: %s",
# "%s/%s", "%lld") only joins or forwards other messages.
CONVERSION_RE = re.compile(r"%[-+ #0-9.*]*(?:hh|h|ll|l|z|j|t)?[diouxXeEfgGcspa%]")


def says_something(fmt):
    return re.search(r"[A-Za-z]", CONVERSION_RE.sub("", fmt)) is not None


def strip_comments(text):
    """Comments blanked (newlines kept), string and character literals untouched."""
    out, i, n = [], 0, len(text)
    while i < n:
        ch = text[i]
        if ch in "\"'":
            j = i + 1
            while j < n and text[j] != ch:
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def c_string(text, i):
    """The C string literal starting at text[i] == '"', concatenated with the
    literals that follow it; (value, end index)."""
    out = []
    while True:
        assert text[i] == '"'
        i += 1
        while text[i] != '"':
            if text[i] == "\\":
                esc = text[i + 1]
                out.append({"n": "\n", "t": "\t", '"': '"', "\\": "\\", "'": "'"}.get(esc, "\\" + esc))
                i += 2
                continue
            out.append(text[i])
            i += 1
        i += 1
        j = i
        while j < len(text) and text[j].isspace():
            j += 1
        if j < len(text) and text[j] == '"':
            i = j
            continue
        return "".join(out), i


def formats(src_dir):
    """{format: [file:line, ...]} of every message-making call."""
    found = {}
    sources = sorted(os.path.relpath(os.path.join(d, n), src_dir)
                     for d, _, names in os.walk(src_dir) for n in names if n.endswith(".c"))
    for name in sources:
        with open(os.path.join(src_dir, name)) as f:
            text = strip_comments(f.read())
        for m in CALL_RE.finditer(text):
            if m.start() > 0 and (text[m.start() - 1].isalnum() or text[m.start() - 1] == "_"):
                continue
            # the format is the first string literal among the call's arguments
            depth, i = 1, m.end()
            fmt = None
            while i < len(text) and depth > 0:
                ch = text[i]
                if ch == '"':
                    fmt, i = c_string(text, i)
                    break
                if ch in "([{":
                    depth += 1
                elif ch in ")]}":
                    depth -= 1
                elif ch == "'":
                    i = text.index("'", i + 2 if text[i + 1] == "\\" else i + 1)
                i += 1
            if fmt is None or not says_something(fmt):
                continue
            line = text.count("\n", 0, m.start()) + 1
            found.setdefault(fmt, []).append("%s:%d" % (name, line))
    return found


def escape(fmt):
    return fmt.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")


def unescape(s):
    return re.sub(r"\\(.)", lambda m: {"t": "\t", "n": "\n"}.get(m.group(1), m.group(1)), s)


def read_list(path):
    entries = {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            parts = line.split("\t")
            if len(parts) < 2 or not parts[1].strip():
                raise SystemExit("%s:%d: want `<format>\\t<istiod function>[\\t<note>]`" % (path, n))
            fmt = unescape(parts[0])
            if fmt in entries:
                raise SystemExit("%s:%d: %r listed twice" % (path, n, parts[0]))
            entries[fmt] = parts[1].strip()
    return entries


def main():
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    found = formats(sys.argv[1])
    if "--list" in sys.argv[3:]:
        for fmt in sorted(found):
            print("%s\t%s" % (escape(fmt), " ".join(found[fmt])))
        return 0
    if "--self-test" in sys.argv[3:]:
        with tempfile.TemporaryDirectory() as tmp:
            copy = os.path.join(tmp, "validate")
            shutil.copytree(sys.argv[1], copy)
            with open(os.path.join(copy, "zz_new.c"), "w") as f:
                f.write('static void f(wh_vctx *c) { wh_verr(c, "a message %s nobody listed", "x"); }\n')
            p = subprocess.run([sys.executable, __file__, copy, sys.argv[2]], capture_output=True, text=True)
            if p.returncode == 0 or "a message %s nobody listed" not in p.stdout:
                print("self-test: an unlisted message was not reported:\n" + p.stdout)
                return 1
    listed = read_list(sys.argv[2])
    bad = 0
    for fmt in sorted(set(found) - set(listed)):
        print("unlisted message %r (%s): add it to %s with the istiod function it comes from"
              % (fmt, ", ".join(found[fmt]), os.path.basename(sys.argv[2])))
        bad += 1
    for fmt in sorted(set(listed) - set(found)):
        print("listed message %r is no longer produced: remove it from %s" % (fmt, os.path.basename(sys.argv[2])))
        bad += 1
    print("%d messages, %d listed, %d problems" % (len(found), len(listed), bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
