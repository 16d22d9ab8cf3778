#!/usr/bin/env node
// k8s_schema.js - checks Kubernetes objects against the real API schemas, offline: the OpenAPI
// schemas of Kubernetes (npm kubernetes-models) and the CRD schemas of cert-manager and the
// prometheus-operator (@kubernetes-models/*), compiled to validators by those packages and pinned
// by tests/chart/package-lock.json (scripts/deps.sh test installs them under $WH_TOOLS_DIR/node).
//
// Reads a JSON array of objects on stdin; prints one JSON line per object:
//   {"index": i, "kind": K, "name": N, "errors": ["..."]}       (errors empty when valid)
// and exits 1 when any object is invalid.  Besides the schema's own checks (types, enums,
// required fields) it reports fields the schema does not know, as `kubectl --validate=strict`
// would (the generated validators accept them): every object is wrapped in a Proxy that records
// which keys the validator looked at, and a key of a schema'd object that was never looked at is
// unknown.  An object whose keys were never looked at is free-form (labels, x-kubernetes-
// preserve-unknown-fields) unless the validator also never enumerated it.
"use strict";

const path = require("path");

// apiVersion -> the module holding its models.
function moduleFor(apiVersion) {
  const [group, version] = apiVersion.includes("/") ? apiVersion.split("/") : ["", apiVersion];
  if (group === "cert-manager.io" || group === "acme.cert-manager.io")
    return `@kubernetes-models/cert-manager/${group}/${version}`;
  if (group === "monitoring.coreos.com") return `@kubernetes-models/prometheus-operator/${group}/${version}`;
  if (group.includes(".") && !group.endsWith(".k8s.io")) return null; // a CRD we have no schema for
  return group ? `kubernetes-models/${group}/${version}` : `kubernetes-models/${version}`;
}

function modelClass(obj) {
  const mod = typeof obj.apiVersion === "string" ? moduleFor(obj.apiVersion) : null;
  if (!mod) return null;
  try {
    return require(mod)[obj.kind] || null;
  } catch (e) {
    return null;
  }
}

// Wraps `value` (recursively, lazily) so that reads of its keys are recorded in `seen`.
function track(value, where, seen) {
  if (value === null || typeof value !== "object") return value;
  const rec = { read: new Set(), enumerated: false, value };
  seen.set(where, rec);
  const cache = new Map();
  return new Proxy(value, {
    get(target, key, recv) {
      if (typeof key === "string") rec.read.add(key);
      const v = Reflect.get(target, key, recv);
      if (typeof key !== "string" || v === null || typeof v !== "object") return v;
      if (!cache.has(key)) cache.set(key, track(v, `${where}/${key}`, seen));
      return cache.get(key);
    },
    has(target, key) {
      if (typeof key === "string") rec.read.add(key);
      return Reflect.has(target, key);
    },
    ownKeys(target) {
      rec.enumerated = true;
      return Reflect.ownKeys(target);
    },
  });
}

function unknownFields(seen) {
  const out = [];
  for (const [where, rec] of seen) {
    if (Array.isArray(rec.value) || rec.enumerated || rec.read.size === 0) continue;
    for (const key of Object.keys(rec.value))
      if (!rec.read.has(key)) out.push(`data${where}/${key} is not a field of the schema (unknown field "${key}")`);
  }
  return out;
}

function check(obj) {
  if (obj === null || typeof obj !== "object" || Array.isArray(obj)) return ["not an object"];
  const cls = modelClass(obj);
  if (!cls) return [`no schema for apiVersion "${obj.apiVersion}" kind "${obj.kind}"`];
  const seen = new Map();
  const errors = [];
  try {
    cls.prototype.validate.call(track(obj, "", seen));
  } catch (e) {
    errors.push(...String(e.message).split(", "));
  }
  return errors.concat(unknownFields(seen));
}

function main() {
  let input = "";
  process.stdin.setEncoding("utf8");
  process.stdin.on("data", (d) => (input += d));
  process.stdin.on("end", () => {
    const objs = JSON.parse(input);
    let bad = 0;
    objs.forEach((obj, index) => {
      const errors = check(obj);
      if (errors.length) bad++;
      const meta = (obj && obj.metadata) || {};
      process.stdout.write(JSON.stringify({ index, kind: obj && obj.kind, name: meta.name, errors }) + "\n");
    });
    process.exitCode = bad ? 1 : 0;
  });
}

module.paths.unshift(path.join(process.env.WH_TOOLS_DIR || "", "node", "node_modules"));
main();
