#!/usr/bin/env python3
"""`webhookctl validate -f FILE|DIR|-`: multi-document YAML and JSON streams, Lists,
directories and stdin; one line per object; exit 0 only when every object is valid."""
import os
import subprocess
import sys
import tempfile
import unittest

CTL = os.environ.get("WEBHOOKCTL", "webhookctl")

GOOD = """apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: reviews, namespace: bookinfo}
spec:
  host: reviews
  subsets: [{name: v1, labels: {version: v1}}]
"""
BAD = """apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: broken}
spec:
  host: reviews
  subsets: [{name: v1.0}]
"""
WARN = """apiVersion: networking.istio.io/v1
kind: Sidecar
metadata: {name: default, namespace: ns5}
spec:
  egress: [{hosts: ["*/*", "test/a.com"]}]
"""


def run(*args, stdin=None):
    p = subprocess.run([CTL, "validate"] + list(args), input=stdin, capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


class TestValidateCommand(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.dir.cleanup()

    def write(self, name, text):
        path = os.path.join(self.dir.name, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
        return path

    def test_all_valid(self):
        code, out, _ = run("-f", self.write("a.yaml", GOOD + "---\n" + WARN))
        self.assertEqual(code, 0)
        lines = out.splitlines()
        self.assertEqual(lines[0], '"DestinationRule/bookinfo/reviews" is valid')
        self.assertTrue(lines[1].startswith('"Sidecar/ns5/default" is valid with warnings: '))
        self.assertIn("`*/*` host select all resources", lines[1])

    def test_invalid_sets_exit_status_and_default_namespace(self):
        code, out, _ = run("-n", "team-a", "-f", self.write("a.yaml", GOOD + "---\n" + BAD))
        self.assertEqual(code, 1)
        self.assertIn('"DestinationRule/team-a/broken" is invalid: configuration is invalid: '
                      'subset name is invalid: v1.0', out)
        self.assertIn('"DestinationRule/bookinfo/reviews" is valid', out)

    def test_json_stream_list_and_stdin(self):
        stream = ('{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"networking.istio.io/v1",'
                  '"kind":"Gateway","metadata":{"name":"gw","namespace":"n"},"spec":{}}]}\n'
                  '{"apiVersion":"networking.istio.io/v1","kind":"DestinationRule",'
                  '"metadata":{"name":"r","namespace":"n"},"spec":{"host":"r"}}')
        code, out, _ = run("-f", "-", stdin=stream)
        self.assertEqual(code, 1)
        self.assertEqual(out.splitlines(), ['"Gateway/n/gw" is invalid: configuration is invalid: '
                                            'gateway must have at least one server',
                                            '"DestinationRule/n/r" is valid'])

    def test_directory_recursive_sorted(self):
        self.write("b/two.yml", WARN)
        self.write("a.json", '{"apiVersion":"networking.istio.io/v1","kind":"DestinationRule",'
                             '"metadata":{"name":"j","namespace":"n"},"spec":{"host":"j"}}')
        self.write("notes.txt", "not a manifest")
        code, out, _ = run("-f", self.dir.name)
        self.assertEqual(code, 0)
        self.assertEqual([l.split(" ")[0] for l in out.splitlines()],
                         ['"DestinationRule/n/j"', '"Sidecar/ns5/default"'])

    def test_unknown_kind_and_bad_yaml(self):
        code, out, _ = run("-f", self.write("k.yaml", "apiVersion: example.com/v1\nkind: Foo\nmetadata: {name: x}\n"))
        self.assertEqual(code, 1)
        self.assertIn("unrecognized type example.com/v1, Kind=Foo", out)
        code, out, _ = run("-f", self.write("y.yaml", "a: [b\n"))
        self.assertEqual(code, 1)
        self.assertIn("cannot parse YAML", out)

    def test_alpha_gateway_api_switch(self):
        # istiod knows the alpha Gateway API kinds only with PILOT_ENABLE_ALPHA_GATEWAY_API; the switch is
        # webhookd's /validate flag, declared once (WH_VALIDATE_SETTINGS) and read as strconv.ParseBool reads it
        path = self.write("udp.yaml", "apiVersion: gateway.networking.k8s.io/v1alpha2\nkind: UDPRoute\n"
                                      "metadata: {name: u, namespace: team}\nspec: {}\n")
        code, out, _ = run("-f", path)
        self.assertEqual(code, 1)
        self.assertIn("unrecognized type gateway.networking.k8s.io/v1alpha2, Kind=UDPRoute", out)
        for on in (["--enable-alpha-gateway-api"], ["--enable-alpha-gateway-api=true"],
                   ["--enable-alpha-gateway-api=T"]):
            code, out, _ = run(*on, "-f", path)
            self.assertEqual((code, out), (0, '"UDPRoute/team/u" is valid\n'), on)
        code, out, _ = run("--enable-alpha-gateway-api=false", "-f", path)
        self.assertEqual(code, 1)
        code, _, err = run("--enable-alpha-gateway-api=maybe", "-f", path)
        self.assertEqual(code, 2)
        self.assertIn('invalid argument "maybe" for "--enable-alpha-gateway-api" flag: strconv.ParseBool: '
                      'parsing "maybe": invalid syntax', err)
        _, out, _ = run("--help")
        self.assertIn("--enable-alpha-gateway-api", out)

    def test_usage(self):
        code, _, err = run()
        self.assertEqual(code, 2)
        self.assertIn("-f FILE|DIR|-", err)
        code, _, err = run("-f", self.write("empty.yaml", "---\n"))
        self.assertEqual(code, 1)
        self.assertIn("no objects found", err)
        code, out, _ = run("-f", os.path.join(self.dir.name, "missing.yaml"))
        self.assertEqual(code, 1)
        self.assertIn("missing.yaml", out)


if __name__ == "__main__":
    unittest.main(verbosity=2)
