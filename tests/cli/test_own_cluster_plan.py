"""`spotkube plan` in a team's repository that adds spotkube's pools and add-ons to clusters it built
itself (examples/own-cluster, copied to a fresh folder): each cluster is reviewed as external, with the
pools the program adds, where its workloads land, their cost, fallback and quota, and what only the
cluster's owner can set named as warnings."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from in_process import run_spotkube

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "own-cluster"
Run = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    copy = tmp_path_factory.mktemp("team") / "own-cluster"
    shutil.copytree(EXAMPLE, copy)
    return copy


@pytest.fixture(scope="module")
def planned(folder: Path) -> dict[str, Any]:
    result = run_spotkube("plan", "-s", "dev", "--format", "json", cwd=folder)
    assert result.returncode == 0, result.stderr
    return {d["cluster"]: d for d in json.loads(result.stdout)["stacks"]}


def ids(document: dict[str, Any]) -> set[str]:
    return {w["id"] for w in document["warnings"]}


def test_each_team_cluster_is_reviewed_as_external_with_the_pools_the_program_adds(planned: dict[str, Any]) -> None:
    assert set(planned) == {"vision", "inference"}
    assert all(d["external"] for d in planned.values())
    aks, gke = planned["vision"], planned["inference"]
    assert {p["name"]: (p["capacity"], p["machine"]) for p in aks["pools"]} == {
        "h100spot": ("spot", "Standard_NC40ads_H100_v5"), "a100demand": ("on-demand", "Standard_NC24ads_A100_v4")}
    assert sorted(p["name"] for p in gke["pools"]) == ["cpuspot", "l4spot"]
    # The team's own cluster is read, not reviewed as spotkube's: no security warnings about it.
    assert not {i for i in ids(aks) | ids(gke) if i.startswith("security-")}


def test_kubeflow_lands_on_the_teams_own_pool_and_the_device_plugin_on_the_gpu_pools(planned: dict[str, Any]) -> None:
    placements = {p["workload"]: p["pools"] for p in planned["vision"]["placements"]}
    assert placements["ml-pipeline"] == ["system"]
    assert sorted(placements["nvidia-device-plugin-daemonset"]) == ["a100demand", "h100spot"]
    assert planned["vision"]["errors"] == []


def test_what_only_the_clusters_owner_can_set_is_named(planned: dict[str, Any]) -> None:
    assert "external-compute-class:nvidia-l4" in ids(planned["inference"])
    # The team's GKE cluster is in the program with Workload Identity on, and its pools name their nodes'
    # service account: nothing to name there.
    assert not {"external-workload-identity:inference", "external-service-account:l4spot"} & ids(planned["inference"])


def test_the_strict_plan_fails_until_the_team_acknowledges_them(folder: Path, spotkube: Run) -> None:
    strict = spotkube("plan", "-s", "dev", "--strict", cwd=folder)
    assert strict.returncode == 1
    assert "[external-compute-class:nvidia-l4]" in " ".join(strict.stdout.split())


def test_a_cluster_the_program_does_not_register_has_its_settings_named(tmp_path: Path, spotkube: Run) -> None:
    """Pools joined to clusters made elsewhere (their ids given): the autoscaler, the API server and
    Workload Identity can't be read, so each is named."""
    shutil.copy(EXAMPLE / "Pulumi.yaml", tmp_path)
    shutil.copy(EXAMPLE / "Pulumi.dev.yaml", tmp_path)
    (tmp_path / "__main__.py").write_text('''
import pulumi
import pulumi_kubernetes as k8s
from spotkube import AksGpuNodePool, GkeGpuNodePool, NvidiaDevicePlugin

aks = ("/subscriptions/00000000-0000-4000-8000-000000000000/resourceGroups/team-rg/providers/"
       "Microsoft.ContainerService/managedClusters/team-aks")
spot = AksGpuNodePool("a100spot", args={"cluster_id": aks, "region": "eastus", "name": "a100spot",
                                         "machine": "Standard_NC24ads_A100_v4"})
demand = AksGpuNodePool("a100demand", args={"cluster_id": aks, "region": "eastus", "name": "a100demand",
                                             "machine": "Standard_NC24ads_A100_v4", "capacity": "on-demand"},
                        opts=pulumi.ResourceOptions(depends_on=[spot]))
provider = k8s.Provider("team", kubeconfig="apiVersion: v1\\nkind: Config\\n")
NvidiaDevicePlugin.for_pools("nvidia", [spot, demand], opts=pulumi.ResourceOptions(provider=provider))
GkeGpuNodePool("l4spot", args={"cluster_id": "inference", "region": "us-central1", "project": "vision-ml-dev",
                               "name": "l4spot", "machine": "g2-standard-8"})
''')
    result = spotkube("plan", "-s", "dev", "--format", "json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    documents = {d["cluster"]: d for d in json.loads(result.stdout)["stacks"]}
    assert {"external-autoscaler:team-aks", "external-api-server:team-aks"} <= ids(documents["team-aks"])
    assert {"external-workload-identity:inference", "external-service-account:l4spot"} <= ids(documents["inference"])


def test_simulate_runs_a_pipeline_on_the_cluster_it_names(folder: Path, spotkube: Run) -> None:
    pipeline = REPO / "examples" / "pipelines" / "train_checkpointed.yaml"
    several = spotkube("simulate", "-s", "dev", str(pipeline), cwd=folder)
    assert several.returncode == 2
    assert "name one with --cluster: vision, inference" in " ".join(several.stderr.split())
    named = spotkube("simulate", "-s", "dev", "--cluster", "inference", "--runs", "200", "-f", "json", str(pipeline),
                     cwd=folder)
    assert named.returncode == 0, named.stderr
    steps = {s["name"]: s for s in json.loads(named.stdout)["simulations"][0]["steps"]}
    assert (steps["stage-dataset"]["pool"], steps["train"]["pool"]) == ("cpuspot", "l4spot")


def plan_of(folder: Path, program: str, spotkube: Run) -> subprocess.CompletedProcess[str]:
    shutil.copy(EXAMPLE / "Pulumi.yaml", folder)
    shutil.copy(EXAMPLE / "Pulumi.dev.yaml", folder)
    (folder / "__main__.py").write_text(program)
    return spotkube("plan", "-s", "dev", cwd=folder)


POOLS = '''
import pulumi
from spotkube import AksGpuNodePool

aks = ("/subscriptions/00000000-0000-4000-8000-000000000000/resourceGroups/team-rg/providers/"
       "Microsoft.ContainerService/managedClusters/team-aks")
first = AksGpuNodePool("first", args={"cluster_id": aks, "region": "eastus", "name": "a100spot",
                                      "machine": "Standard_NC24ads_A100_v4"})
AksGpuNodePool("second", args={"cluster_id": aks.upper(), "region": "eastus", "name": "SECOND",
                               "machine": "Standard_NC24ads_A100_v4", "capacity": "on-demand"}OPTIONS)
'''


def test_pools_on_one_aks_cluster_that_may_run_at_once_fail_the_preflight(tmp_path: Path, spotkube: Run) -> None:
    """However its id is spelt, it is one cluster, and AKS runs one pool operation on it at a time."""
    unchained = plan_of(tmp_path, POOLS.replace('"SECOND"', '"a100demand"').replace("OPTIONS", ""), spotkube)
    assert unchained.returncode == 1
    assert "AgentPools first and second of the cluster may run at once" in " ".join(unchained.stderr.split())
    chained = plan_of(tmp_path, POOLS.replace('"SECOND"', '"a100demand"').replace(
        "OPTIONS", ", opts=pulumi.ResourceOptions(depends_on=[first])"), spotkube)
    assert chained.returncode == 0, chained.stderr


def test_two_pools_of_one_name_or_two_regions_on_one_cluster_are_one_clear_error(
        tmp_path: Path, spotkube: Run) -> None:
    same = plan_of(tmp_path, POOLS.replace('"SECOND"', '"a100spot"').replace("OPTIONS", ""), spotkube)
    assert same.returncode != 0 and "Traceback" not in same.stderr
    assert "second and first: both add the pool 'a100spot'" in " ".join(same.stderr.split())
    regions = plan_of(tmp_path, POOLS.replace('"SECOND"', '"a100demand"').replace(
        '"region": "eastus", "name": "a100demand"', '"region": "westeurope", "name": "a100demand"')
        .replace("OPTIONS", ""), spotkube)
    assert "name the regions eastus and westeurope" in " ".join(regions.stderr.split())


def test_a_pool_outside_the_subnet_the_clusters_pools_join_is_named(tmp_path: Path, spotkube: Run) -> None:
    program = '''
import pulumi
import pulumi_azure_native as azure
from spotkube import AksGpuNodePool

subnet = ("/subscriptions/00000000-0000-4000-8000-000000000000/resourceGroups/team-rg/providers/"
          "Microsoft.Network/virtualNetworks/team/subnets/nodes")
cluster = azure.containerservice.ManagedCluster("team", resource_group_name="team-rg", location="eastus",
    dns_prefix="team", agent_pool_profiles=[{"name": "system", "mode": "System", "vm_size": "Standard_D4s_v5",
                                             "count": 2, "vnet_subnet_id": subnet}])
inside = AksGpuNodePool("inside", args={"cluster_id": cluster.id, "region": "eastus", "vnet_subnet_id": subnet,
                                        "name": "inside", "machine": "Standard_NC24ads_A100_v4"})
AksGpuNodePool("outside", args={"cluster_id": cluster.id, "region": "eastus", "name": "outside",
                                "machine": "Standard_NC24ads_A100_v4"},
               opts=pulumi.ResourceOptions(depends_on=[inside]))
'''
    result = plan_of(tmp_path, program, spotkube)
    assert result.returncode == 0, result.stderr
    assert "[external-vnet-subnet:outside]" in result.stdout and "external-vnet-subnet:inside" not in result.stdout


def test_a_gpu_pool_of_the_teams_own_cluster_has_the_gpu_its_machine_carries() -> None:
    """A pool spotkube didn't make carries no spotkube label: its GPU comes from its machine, as the cloud
    labels such a node by itself, so a workload that asks for the GPU can be judged against it."""
    from spotkube.clouds import registered_pools
    from spotkube.review.program_review import registered_contract

    (pool,) = [p for p in registered_pools("azure-native:containerservice:ManagedCluster", "team", {
        "agentPoolProfiles": [{"name": "t4", "mode": "User", "vmSize": "Standard_NC4as_T4_v3", "count": 1}]})
        if p.cloud_name == "t4"]
    contract = registered_contract("aks", "eastus", pool)
    assert (contract.accelerator, contract.gpu_count, contract.role) == ("nvidia-tesla-t4", 1, "gpu")
    assert contract.labels["kubernetes.azure.com/agentpool"] == "t4"
    assert contract.labels["node.kubernetes.io/instance-type"] == "Standard_NC4as_T4_v3"
