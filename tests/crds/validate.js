// Validates custom resources against the schemas @kubernetes-models/gke compiles from GKE's CRDs.
// Usage: node validate.js <install dir with node_modules> < objects.json
// Reads a JSON array of objects and prints a JSON array with, for each, the schema's errors
// (an empty list when the object is valid).
"use strict";
const { createRequire } = require("module");
const path = require("path");

const requireInstalled = createRequire(path.join(path.resolve(process.argv[2]), "package.json"));
const models = {
  "cloud.google.com/v1/ComputeClass":
    requireInstalled("@kubernetes-models/gke/cloud.google.com/v1/ComputeClass").ComputeClass,
};

let input = "";
process.stdin.on("data", (chunk) => { input += chunk; });
process.stdin.on("end", () => {
  const results = JSON.parse(input).map((object) => {
    const model = models[`${object.apiVersion}/${object.kind}`];
    if (!model) {
      return [`no schema for ${object.apiVersion} ${object.kind}`];
    }
    try {
      new model(object).validate();
      return [];
    } catch (error) {
      return String(error.message).split(", ");
    }
  });
  process.stdout.write(JSON.stringify(results));
});
