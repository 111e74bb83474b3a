// Validates custom resources against the schemas @kubernetes-models/gke compiles from GKE's CRDs, and
// Kubeflow Trainer's against the schema derived from its CRDs beside this file (trainer-v2.2.1.schema.json),
// compiled by the Ajv that @kubernetes-models/validate installs.
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
const Ajv = requireInstalled("ajv").default;
const trainerSchema = require(path.join(__dirname, "trainer-v2.2.1.schema.json"));
const ajv = new Ajv({ allErrors: true, strict: false });
ajv.addSchema(trainerSchema, "trainer");
const derived = {
  "trainer.kubeflow.org/v1alpha1/ClusterTrainingRuntime": ajv.getSchema("trainer#/$defs/ClusterTrainingRuntime"),
  "trainer.kubeflow.org/v1alpha1/TrainJob": ajv.getSchema("trainer#/$defs/TrainJob"),
};

let input = "";
process.stdin.on("data", (chunk) => { input += chunk; });
process.stdin.on("end", () => {
  const results = JSON.parse(input).map((object) => {
    const check = derived[`${object.apiVersion}/${object.kind}`];
    if (check) {
      return check(object) ? [] : check.errors.map((e) => `${e.instancePath || "/"} ${e.message}`);
    }
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
