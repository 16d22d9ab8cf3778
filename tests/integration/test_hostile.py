#!/usr/bin/env python3
"""Hostile clients and hostile revisions (issue #15): each finding of the
outside probe of webhookd, replayed against the real binary on loopback.

Each TestCase class is one ctest test (see CMakeLists.txt); every load-style
case is bounded in time and in size so that it runs in seconds, and each
asserts the bound that the finding broke (memory, latency, readiness).
"""
import json
import os
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from whtest import Server, connect, once, request, review, scaled  # noqa: E402


def validate_review(group, version, resource, uid="u"):
    return review(uid=uid, kind={"group": group, "version": version, "kind": "DestinationRule"},
                  resource={"group": group, "version": version, "resource": resource},
                  object={"apiVersion": "%s/%s" % (group, version), "kind": "DestinationRule",
                          "metadata": {"name": "dr"}, "spec": {"host": "a"}})


class TestMetricLabels(unittest.TestCase):
    """Finding 1: galley_validation_* labels came from the request, so any
    client could add unbounded series (400 x 1 MB groups = 400 MB RSS)."""

    def test_labels_from_closed_sets(self):
        with Server() as srv:
            with connect(srv.port) as s:
                for i in range(40):
                    big = "g%d-" % i + "x" * 100000
                    status, _, _ = request(s, "POST", "/validate", validate_review(big, "v%d" % i, big))
                    self.assertEqual(status, 200)
                status, _, _ = request(s, "POST", "/validate",
                                       validate_review("networking.istio.io", "v1", "destinationrules"))
                self.assertEqual(status, 200)
                status, _, _ = request(s, "POST", "/validate",
                                       validate_review("networking.istio.io", "v9-" + "y" * 1000, "destinationrules"))
                status, _, body = request(s, "GET", "/metrics")
            self.assertEqual(status, 200)
            text = body.decode()
            self.assertLess(len(body), 64 * 1024, "metrics grew with the requests' labels")
            self.assertNotIn("xxxxxxxx", text)
            self.assertIn('galley_validation_failed{group="other",version="other",resource="other",reason="unknown_type"} 40', text)
            self.assertIn('galley_validation_passed{group="networking.istio.io",version="v1",'
                          'resource="destinationrules"} 1', text)
            self.assertIn('galley_validation_passed{group="networking.istio.io",version="other",'
                          'resource="destinationrules"} 1', text)


if __name__ == "__main__":
    unittest.main()
