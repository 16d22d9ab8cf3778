#!/usr/bin/env python3
"""The chart's ValidatingWebhookConfiguration for /validate, rendered by the real helm
(tests/chart/helmtest.py, through the integration tests' render()): rules,
selectors, failure policy, revision naming and the optional default validator."""
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
import test_chart  # noqa: E402

GROUPS = ["security.istio.io", "networking.istio.io", "telemetry.istio.io", "extensions.istio.io"]


class TestValidatingWebhookConfiguration(unittest.TestCase):
    def vwcs(self, *sets):
        objs = test_chart.render(*sets, extra=False)
        return {name: o for (kind, name), o in objs.items() if kind == "ValidatingWebhookConfiguration"}

    def test_default_revision(self):
        vwcs = self.vwcs()
        self.assertEqual(list(vwcs), ["wh-webhookd-validator-istio-system"])
        vwc = vwcs["wh-webhookd-validator-istio-system"]
        self.assertEqual(vwc["metadata"]["labels"]["istio.io/rev"], "default")
        (hook,) = vwc["webhooks"]
        self.assertEqual(hook["name"], "rev.validation.istio.io")
        self.assertEqual(hook["rules"], [{"operations": ["CREATE", "UPDATE"], "apiGroups": GROUPS,
                                          "apiVersions": ["*"], "resources": ["*"]}])
        self.assertEqual(hook["objectSelector"], {"matchExpressions": [
            {"key": "istio.io/rev", "operator": "In", "values": ["default"]}]})
        self.assertEqual(hook["sideEffects"], "None")
        self.assertEqual(hook["admissionReviewVersions"], ["v1", "v1beta1"])
        self.assertEqual(hook["failurePolicy"], "Fail")
        self.assertEqual(hook["clientConfig"]["service"]["path"], "/validate")
        self.assertTrue(hook["clientConfig"]["caBundle"])

    def test_revision_default_validator_and_policy(self):
        vwcs = self.vwcs("revision=canary", "validation.defaultValidator=true",
                         "validation.failurePolicy=Ignore")
        rev = vwcs["wh-webhookd-validator-canary-istio-system"]["webhooks"][0]
        self.assertEqual(rev["objectSelector"]["matchExpressions"][0]["values"], ["canary"])
        self.assertEqual(rev["failurePolicy"], "Ignore")
        default = vwcs["wh-webhookd-default-validator"]
        self.assertEqual(default["metadata"]["labels"]["istio.io/tag"], "default")
        hook = default["webhooks"][0]
        self.assertEqual(hook["name"], "validation.istio.io")
        self.assertEqual(hook["objectSelector"], {"matchExpressions": [
            {"key": "istio.io/rev", "operator": "DoesNotExist"}]})

    def test_disabled(self):
        self.assertEqual(self.vwcs("validation.enabled=false"), {})


if __name__ == "__main__":
    unittest.main(verbosity=2)
