"""The whole program, as `pulumi up` runs it, under the same mocks: it plans, and exports what workloads need."""

from __future__ import annotations

import runpy
from pathlib import Path
from typing import Any

import pulumi
import pytest

from conftest import TeamMocks

PROGRAM = Path(__file__).resolve().parents[1] / "__main__.py"


@pytest.fixture
def exported(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """The stack outputs the program exports, by name."""
    outputs: dict[str, Any] = {}
    monkeypatch.setattr(pulumi, "export", outputs.__setitem__)
    return outputs


@pulumi.runtime.test
def test_the_program_builds_both_platforms_and_exports_secret_kubeconfigs(
    mocks: TeamMocks, exported: dict[str, Any],
) -> pulumi.Output[Any]:
    runpy.run_path(str(PROGRAM), run_name="__main__")
    assert set(exported) == {"trainingKubeconfig", "inferenceKubeconfig", "trainingPools", "inferencePools",
                             "pipelinesUi"}

    def check(secrets: list[bool]) -> None:
        assert secrets == [True, True]
        # A cluster's kubeconfig resolves only once everything it registered exists, its pools included.
        registered = {r.typ for r in mocks.resources}
        assert {"spotkube:index:AksGpuCluster", "azure-native:containerservice:AgentPool",
                "spotkube:index:GkeGpuCluster", "gcp:container/nodePool:NodePool"} <= registered

    return pulumi.Output.all(*(pulumi.Output.from_input(exported[name].is_secret())
                               for name in ("trainingKubeconfig", "inferenceKubeconfig"))).apply(check)
