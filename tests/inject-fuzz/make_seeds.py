#!/usr/bin/env python3
"""Seed corpus for fuzz_inject: AdmissionReviews built from the conformance
inputs (one per injectable document), a revision dir with the corpus'
default settings, and a few malformed bodies.  Usage: make_seeds.py CORPUS OUT"""
import json
import os
import sys

import yaml

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "inject-conformance"))
import run as conformance  # noqa: E402


def main():
    corpus, out = sys.argv[1], sys.argv[2]
    seeds = os.path.join(out, "seeds")
    rev = os.path.join(out, "revisions", "default")
    os.makedirs(seeds, exist_ok=True)
    os.makedirs(rev, exist_ok=True)
    for name, fname in (("config", "inject-config.yaml"), ("values", "values.json"), ("mesh", "mesh.yaml")):
        with open(os.path.join(corpus, fname)) as f, open(os.path.join(rev, name), "w") as g:
            g.write(f.read())
    n = 0
    cases = os.path.join(corpus, "cases")
    for case in sorted(os.listdir(cases)):
        path = os.path.join(cases, case, "input.yaml")
        if not os.path.exists(path):
            continue
        with open(path) as f:
            try:
                pods = conformance.pods_of(f.read())
            except yaml.YAMLError:
                continue
        for pod, ns in pods:
            review = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                      "request": {"uid": "u%d" % n, "namespace": ns, "object": pod}}
            with open(os.path.join(seeds, "review-%03d.json" % n), "w") as g:
                json.dump(review, g)
            n += 1
    for i, body in enumerate(["", "{", "[]", '{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1"}',
                              '{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"object":7}}']):
        with open(os.path.join(seeds, "bad-%d.json" % i), "w") as g:
            g.write(body)
    print("%d seeds in %s" % (n + 5, seeds))


if __name__ == "__main__":
    main()
