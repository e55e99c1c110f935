// The submit page's routing of each document (web/src/lib/manifest.js):
// run by ctest as WebManifestTest (node web/tests/manifest_test.mjs).
import assert from "node:assert/strict";
import { splitDocuments } from "../src/lib/manifest.js";

const header = (yaml) => splitDocuments(yaml).map(({ text, contentType, ...rest }) => rest);

// Block and flat flow metadata, quoted or not, a comment after it.
assert.deepEqual(header("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y\n  namespace: team-b\n"),
  [{ apiVersion: "v1", kind: "ConfigMap", name: "y", namespace: "team-b" }]);
assert.deepEqual(header('apiVersion: v1\nkind: ConfigMap\nmetadata: {name: "train-1", namespace: "team-a"}\n'),
  [{ apiVersion: "v1", kind: "ConfigMap", name: "train-1", namespace: "team-a" }]);
assert.deepEqual(header("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}  # {c}\n"),
  [{ apiVersion: "v1", kind: "ConfigMap", name: "x", namespace: "" }]);
// A nested flow mapping could hide a namespace in a string: not guessed.
const nested = header('apiVersion: batch/v1\nkind: Job\nmetadata: {name: x, annotations: {note: "a,namespace: prod/jobs#"}}\n');
assert.equal(nested.length, 1);
assert.ok(nested[0].unsure, "a nested flow mapping is refused");
assert.notEqual(nested[0].namespace, "prod/jobs#\"}");
// Several documents, JSON too.
assert.equal(header("kind: A\n---\nkind: B\n").length, 2);
assert.deepEqual(header('{"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}}'),
  [{ apiVersion: "v1", kind: "Secret", name: "s", namespace: "" }]);
console.log("manifest routing: ok");
