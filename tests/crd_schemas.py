"""Custom resources checked against their CRD schemas offline, by tests/crds/validate.js under Node.js.

GKE's ComputeClass against the schema `@kubernetes-models/gke` compiles from GKE's CRD; Kubeflow Trainer's
kinds against tests/crds/trainer-v2.2.1.schema.json, derived from Trainer's CRDs (no npm package ships
them). `make test` (or `make crds`) installs the packages into .crds/, pinned by tests/crds/package-lock.json.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
CRDS = REPO / ".crds"
VALIDATOR = REPO / "tests" / "crds" / "validate.js"


def schema_errors(objects: list[dict[str, Any]]) -> list[list[str]]:
    """The CRD schema's errors for each object (empty when it is valid)."""
    if shutil.which("node") is None or not (CRDS / "node_modules").is_dir():
        pytest.fail("the CRD schemas are not installed: run `make test` (or `make crds`), which installs them "
                    "with npm into .crds/")
    done = subprocess.run(["node", str(VALIDATOR), str(CRDS)], input=json.dumps(objects), capture_output=True,
                          text=True, timeout=60, check=True)
    return json.loads(done.stdout)
