"""Every ComputeClass a shipped GKE stack registers is one GKE accepts, checked offline.

The schema is GKE's own, as compiled from its ComputeClass CRD by the npm package
`@kubernetes-models/gke` (MIT), which `make test` installs into `.crds/` pinned by
`tests/crds/package-lock.json`; `tests/crds/validate.js` runs it under Node.js. That schema
checks types, enums and required fields, but does not refuse unknown fields (the API server prunes
them silently) nor run the CRD's CEL rules, so two checks are added here by hand from GKE's
ComputeClass reference (https://cloud.google.com/kubernetes-engine/docs/reference/crds/computeclass):
the fields spotkube writes are the ones the reference names, and a priority that names node pools
holds nothing else.
"""

from __future__ import annotations

from typing import Any

import pytest

from crd_schemas import schema_errors
from spotkube.clouds.gke.resources import COMPUTE_CLASS_TYPE
from spotkube.components.offline import run_stack
from spotkube.platform.project import Project

#: The ComputeClass fields spotkube writes, each named in GKE's ComputeClass reference: written here
#: by hand, in the reference's spelling, so that a misspelt field fails instead of being pruned.
REFERENCE_FIELDS: dict[str, Any] = {
    "apiVersion": None, "kind": None, "metadata": {"name": None},
    "spec": {
        "priorities": [{"nodepools": None}],
        "whenUnsatisfiable": None,
        "nodePoolAutoCreation": {"enabled": None},
        "activeMigration": {"optimizeRulePriority": None},
    },
}


def unknown_fields(value: Any, known: Any, path: str = "") -> list[str]:
    """Paths in `value` that REFERENCE_FIELDS does not name."""
    if isinstance(value, dict) and isinstance(known, dict):
        return [p for key, item in value.items()
                for p in ([f"{path}{key}"] if key not in known else unknown_fields(item, known[key], f"{path}{key}."))]
    if isinstance(value, list) and isinstance(known, list):
        return [p for i, item in enumerate(value) for p in unknown_fields(item, known[0], f"{path}[{i}].")]
    return []


@pytest.fixture(scope="module")
def compute_classes(repo_project: Project) -> list[dict[str, Any]]:
    found = [dict(r.inputs) for name in repo_project.stacks() if name.startswith("gke-")
             for r in run_stack(repo_project, name).of_type(COMPUTE_CLASS_TYPE)]
    assert {c["metadata"]["name"] for c in found} >= {"spotkube-nvidia-tesla-a100", "spotkube-nvidia-l4"}
    return found


def test_every_registered_compute_class_meets_gke_s_crd_schema(compute_classes: list[dict[str, Any]]) -> None:
    errors = schema_errors(compute_classes)
    assert {c["metadata"]["name"]: e for c, e in zip(compute_classes, errors, strict=True) if e} == {}


def test_every_registered_compute_class_uses_only_fields_gke_documents(compute_classes: list[dict[str, Any]]) -> None:
    assert compute_classes, "the shipped gke stacks' compute classes"
    for compute_class in compute_classes:
        assert unknown_fields(compute_class, REFERENCE_FIELDS) == [], compute_class["metadata"]["name"]
        # The CRD's rule: "Nodepool field cannot be set along with other fields".
        priorities = compute_class["spec"]["priorities"]
        assert priorities and all(set(priority) == {"nodepools"} and priority["nodepools"] for priority in priorities)


def test_the_schema_check_can_fail() -> None:
    broken = [
        {"apiVersion": "cloud.google.com/v1", "kind": "ComputeClass", "metadata": {"name": "x"},
         "spec": {"priorities": [{"nodepools": "a100-spot"}], "whenUnsatisfiable": "Never"}},
        {"apiVersion": "cloud.google.com/v1", "kind": "ComputeClass", "metadata": {"name": "x"},
         "spec": {"priorities": [], "activeMigration": {}}},
    ]
    wrong_values, missing = schema_errors(broken)
    assert "data/spec/priorities/0/nodepools must be array" in wrong_values
    assert "data/spec/whenUnsatisfiable must be equal to one of the allowed values" in wrong_values
    assert "data/spec must have required property whenUnsatisfiable" in missing
    assert "data/spec/activeMigration must have required property optimizeRulePriority" in missing
    assert unknown_fields({"spec": {"nodePools": []}}, REFERENCE_FIELDS) == ["spec.nodePools"]


def test_a_compute_class_resource_is_named_once_not_after_the_component_twice(repo_project: Project) -> None:
    """`spotkube-computeclass-nvidia-l4`, not `spotkube-spotkube-nvidia-l4`; the class keeps its name."""
    run = run_stack(repo_project, "gke-dev-us-central1")
    (registered,) = run.of_type(COMPUTE_CLASS_TYPE)
    assert registered.name == "spotkube-computeclass-nvidia-l4"
    assert registered.inputs["metadata"]["name"] == "spotkube-nvidia-l4"
    assert not [r.name for r in run.registrations if "spotkube-spotkube" in r.name]

