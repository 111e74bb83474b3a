"""examples/consumer, another repo's program that imports spotkube, run under the recording mocks.

It is the adoption path the docs show, so it must keep working against the public API: one AKS
and one GKE platform with the consumer's own pools, in the resource group and VPC the consumer owns,
secret kubeconfigs, and no guardrail broken. Its own unit tests (examples/consumer/tests) run from
the built wheel in tests/cli/test_release.py.
"""

from __future__ import annotations

import ast
import runpy
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

import spotkube
from spotkube.clouds.gke.resources import gke_taint
from spotkube.components.offline import Recording, record_program
from spotkube.platform import contract
from spotkube.platform.registration import Registration
from spotkube.review.policy_rules import check_outputs, check_registrations

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "consumer"
GPU_TAINT = str(contract.GPU_TAINT)
#: The AKS platform's deployer, as the example's config names it.
DEPLOYER = "c0ffee00-0000-4000-8000-000000000001"


@pytest.fixture(scope="module")
def recording() -> Iterator[Recording]:
    """The program as Pulumi's language host runs it: its folder on sys.path, its config as strings."""
    project = yaml.safe_load((EXAMPLE / "Pulumi.yaml").read_text())["name"]
    sys.path.insert(0, str(EXAMPLE))
    try:
        yield record_program(
            lambda: runpy.run_path(str(EXAMPLE / "__main__.py"), run_name="__main__"),
            project=project, stack="dev",
            config={f"{project}:gcpProject": "vision-ml-dev",
                                                    f"{project}:deployerObjectId": DEPLOYER},
        )
    finally:
        sys.path.remove(str(EXAMPLE))
        sys.modules.pop("platforms", None)


def of_type(recording: Recording, type_token: str) -> list[Registration]:
    return [r for r in recording.registrations if r.type == type_token]


def test_it_builds_one_aks_and_one_gke_platform(recording: Recording) -> None:
    assert [r.name for r in of_type(recording, "spotkube:index:AksGpuCluster")] == ["vision-training"]
    assert [r.name for r in of_type(recording, "spotkube:index:GkeGpuCluster")] == ["vision-inference"]
    (aks,) = of_type(recording, "azure-native:containerservice:ManagedCluster")
    (gke,) = of_type(recording, "gcp:container/cluster:Cluster")
    assert aks.inputs["location"] == "northeurope"
    assert (gke.inputs["location"], gke.inputs["project"]) == ("europe-west4", "vision-ml-dev")


def test_it_wires_the_clusters_to_resources_it_owns(recording: Recording) -> None:
    """Its own resource group (spotkube makes none), its runners' egress as the only authorized range,
    its own VPC and subnetwork."""
    (group,) = of_type(recording, "azure-native:resources:ResourceGroup")
    (aks,) = of_type(recording, "azure-native:containerservice:ManagedCluster")
    assert group.parent.endswith("::pulumi:pulumi:Stack::ml-platforms-dev")  # the program's, not a component's
    assert aks.inputs["resourceGroupName"] == group.name
    assert aks.inputs["apiServerAccessProfile"]["authorizedIPRanges"] == ["203.0.113.7/32"]
    (network,) = of_type(recording, "gcp:compute/network:Network")
    (subnetwork,) = of_type(recording, "gcp:compute/subnetwork:Subnetwork")
    (gke,) = of_type(recording, "gcp:container/cluster:Cluster")
    assert gke.inputs["network"].endswith(f"/global/networks/{network.name}")
    assert gke.inputs["subnetwork"].endswith(f"/regions/europe-west4/subnetworks/{subnetwork.name}")


def test_its_own_gpu_pools_are_spot_tainted_and_labelled(recording: Recording) -> None:
    aks_pools = {r.inputs["agentPoolName"]: r.inputs
                 for r in of_type(recording, "azure-native:containerservice:AgentPool")}
    assert {"a100spot", "t4spot"} <= set(aks_pools)
    assert aks_pools["a100spot"]["spotMaxPrice"] == 2.5
    for name in ("a100spot", "t4spot"):
        pool = aks_pools[name]
        assert (pool["scaleSetPriority"], pool["minCount"]) == ("Spot", 0)
        assert GPU_TAINT in pool["nodeTaints"] and pool["nodeLabels"]["team"] == "vision"
    gke_pools = {r.inputs["name"]: r.inputs for r in of_type(recording, "gcp:container/nodePool:NodePool")}
    l4 = gke_pools["l4-spot"]["nodeConfig"]
    assert l4["spot"] is True and l4["labels"]["team"] == "vision"
    assert [a["type"] for a in l4["guestAccelerators"]] == ["nvidia-l4"]
    assert gke_taint(contract.GPU_TAINT) in l4["taints"]


def test_kubeconfigs_are_secret_outputs(recording: Recording) -> None:
    assert recording.outputs["trainingKubeconfig"].secret
    assert recording.outputs["inferenceKubeconfig"].secret
    pools = recording.outputs["inferencePools"]
    assert not pools.secret and {p["name"] for p in pools.value} >= {"system", "l4-spot"}


def test_it_breaks_no_guardrail(recording: Recording) -> None:
    assert list(check_registrations(recording.registrations)) == []
    assert list(check_outputs(recording.outputs)) == []


def test_it_uses_only_the_public_api_and_the_release_from_pypi() -> None:
    tree = ast.parse((EXAMPLE / "platforms.py").read_text())
    imported = {(node.module, alias.name) for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                for alias in node.names if node.module and node.module.startswith("spotkube")}
    assert imported and all(module == "spotkube" and name in spotkube.__all__ for module, name in imported)
    requirements = (EXAMPLE / "requirements.txt").read_text()
    pinned = [line for line in requirements.splitlines() if line and not line.startswith("#")]
    # Both clouds' extras: this program builds an AKS and a GKE platform.
    assert pinned == [f"spotkube[aks,gke]=={spotkube.__version__}"]
    # Before a release: the wheel `make dist` builds, or a commit of the project's own repository, whose
    # owner the reader fills in.
    assert "--find-links <spotkube clone>/dist" in requirements
    assert "spotkube[aks,gke] @ git+https://github.com/<owner>/spotkube@<commit>" in requirements


def test_its_device_plugin_is_built_for_the_aks_cluster(recording: Recording) -> None:
    (daemonset,) = of_type(recording, "kubernetes:apps/v1:DaemonSet")
    (provider,) = [r for r in of_type(recording, "pulumi:providers:kubernetes") if r.name == "vision-training-k8s"]
    assert daemonset.provider.startswith(provider.urn + "::")
