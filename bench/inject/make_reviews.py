#!/usr/bin/env python3
"""Write the benchmark inputs into OUT: hello.json (the corpus' hello pod as
an AdmissionReview), big.json (a pod with 1,500 env vars, ~64 KB of spec) and
revisions/default (the corpus' default settings).  Usage: make_reviews.py CORPUS OUT"""
import json
import os
import sys


def review(pod):
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "request": {"uid": "bench", "namespace": "default", "operation": "CREATE", "object": pod}}


def main():
    corpus, out = sys.argv[1], sys.argv[2]
    os.makedirs(os.path.join(out, "revisions", "default"), exist_ok=True)
    for name, fname in (("config", "inject-config.yaml"), ("values", "values.json"), ("mesh", "mesh.yaml")):
        with open(os.path.join(corpus, fname)) as f, open(os.path.join(out, "revisions", "default", name), "w") as g:
            g.write(f.read())
    hello = {"apiVersion": "v1", "kind": "Pod",
             "metadata": {"name": "hello", "namespace": "default", "labels": {"app": "hello", "version": "v1"}},
             "spec": {"containers": [{"name": "hello", "image": "fake.docker.io/google-samples/hello-go-gke:1.0",
                                      "ports": [{"name": "http", "containerPort": 80, "protocol": "TCP"}]}]}}
    env = [{"name": "VAR_%04d" % i, "value": "value-%04d" % i} for i in range(1500)]
    big = json.loads(json.dumps(hello))
    big["metadata"]["name"] = "big"
    big["spec"]["containers"][0]["env"] = env
    for name, pod in (("hello", hello), ("big", big)):
        with open(os.path.join(out, name + ".json"), "w") as f:
            json.dump(review(pod), f)
        print("%s.json: %d bytes" % (name, os.path.getsize(os.path.join(out, name + ".json"))))


if __name__ == "__main__":
    main()
