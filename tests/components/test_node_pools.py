"""`AksGpuNodePool` and `GkeGpuNodePool` on clusters spotkube didn't make, and the add-ons over them.

A pool added to a team's cluster must be the pool a spotkube cluster would build (the same inputs and
options), must refuse bad args before anything is registered, and must hand the add-ons and pipeline
steps its contract. Run under the recording mocks, and under `spotkube.testing` as a consumer's tests run.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pulumi
import pulumi_azure_native as azure
import pulumi_kubernetes as k8s
import pytest

from recordings import only
from recordings import refusal as recorded_refusal
from spotkube import (
    AksGpuCluster,
    AksGpuNodePool,
    GkeGpuCluster,
    GkeGpuNodePool,
    KubeflowTrainer,
    Kueue,
    NvidiaDevicePlugin,
)
from spotkube.components.offline import ProgramFailed, Recording, record_program
from spotkube.platform.addons import training_runtime
from spotkube.platform.contract import Placement
from spotkube.review.placements import registered_runtimes

CLUSTER_ID = ("/subscriptions/00000000-0000-4000-8000-000000000000/resourceGroups/team-rg/providers/"
              "Microsoft.ContainerService/managedClusters/team-aks")
GKE_CLUSTER_ID = "projects/vision-ml-dev/locations/us-central1/clusters/inference"
AGENT_POOL = "azure-native:containerservice:AgentPool"
NODE_POOL = "gcp:container/nodePool:NodePool"
H100 = {"name": "h100spot", "machine": "Standard_NC40ads_H100_v5", "max": 4}
L4 = {"name": "l4spot", "machine": "g2-standard-8", "max": 4}
DEPLOYER = {"object_id": "c0ffee00-0000-4000-8000-000000000001", "principal_type": "ServicePrincipal"}


def run(body: Callable[[], object]) -> Recording:
    return record_program(body, project="team", stack="dev", config={})


def refusal(body: Callable[[], object]) -> str:
    return recorded_refusal(body, project="team", stack="dev")



def without_target(inputs: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {k: v for k, v in inputs.items() if k not in keys}


def test_an_aks_pool_on_a_teams_cluster_is_the_pool_a_spotkube_cluster_builds() -> None:
    added = run(lambda: AksGpuNodePool("h100spot", args={"cluster_id": CLUSTER_ID, "region": "eastus", **H100}))
    built = run(lambda: AksGpuCluster("ml", args={"environment": "dev", "region": "eastus", "gpu_pools": [H100],
                                                  "cluster": {"deployer": DEPLOYER}}))
    pool = only(added, AGENT_POOL)
    (same,) = [r for r in built.registrations if r.type == AGENT_POOL and r.name == "ml-h100spot"]
    assert (pool.inputs["resourceGroupName"], pool.inputs["resourceName"]) == ("team-rg", "team-aks")
    assert without_target(pool.inputs, "resourceGroupName", "resourceName") == \
        without_target(same.inputs, "resourceGroupName", "resourceName")
    assert (pool.ignore_changes, pool.replace_on_changes, pool.delete_before_replace) == \
        (same.ignore_changes, same.replace_on_changes, same.delete_before_replace)
    assert pool.inputs["scaleSetPriority"] == "Spot" and pool.inputs["spotMaxPrice"] == -1
    assert "kubernetes.azure.com/scalesetpriority=spot:NoSchedule" in pool.inputs["nodeTaints"]
    component = only(added, "spotkube:index:AksGpuNodePool")
    assert pool.parent == component.urn and pool.name == component.name and pool.moved_from == ()


def test_the_pool_hands_out_its_contract_once_it_exists() -> None:
    def program() -> None:
        pool = AksGpuNodePool("h100spot", args={"cluster_id": CLUSTER_ID, "region": "eastus", **H100})
        pulumi.export("contract", pool.contract)
        pulumi.export("name", pool.pool_name)

    recording = run(program)
    contract = recording.outputs["contract"].value
    pool = only(recording, AGENT_POOL)
    assert contract["name"] == "h100spot" and contract["capacity"] == "spot"
    assert contract["gpu"]["type"] == "nvidia-h100-nvl"
    assert sorted(contract["taints"]) == sorted(pool.inputs["nodeTaints"])
    assert pool.inputs["nodeLabels"].items() <= contract["labels"].items()
    assert contract["labels"]["kubernetes.azure.com/agentpool"] == "h100spot"
    assert recording.outputs["name"].value == "h100spot"


def test_a_cluster_id_from_the_teams_own_cluster_resource_is_read_once_it_resolves() -> None:
    def program() -> None:
        group = azure.resources.ResourceGroup("team", location="eastus")
        cluster = azure.containerservice.ManagedCluster("team", resource_group_name=group.name, location="eastus",
                                                        dns_prefix="team")
        first = AksGpuNodePool("h100spot", args={"cluster_id": cluster.id, "region": "eastus", **H100})
        AksGpuNodePool("cpu", args={"cluster_id": cluster.id, "region": "eastus", "name": "cpu",
                                    "machine": "Standard_D8s_v5", "max": 10},
                       opts=pulumi.ResourceOptions(depends_on=[first]))

    recording = run(program)
    pools = {r.name: r for r in recording.registrations if r.type == AGENT_POOL}
    assert pools["h100spot"].inputs["resourceName"] == "team"
    # AKS runs one pool operation per cluster at a time: the second pool waits for the first (Pulumi
    # expands a dependency on the component into its children).
    assert pools["h100spot"].urn in pools["cpu"].dependencies
    # A machine without a GPU makes a CPU pool: spot, without the GPU taint.
    assert pools["cpu"].inputs["nodeTaints"] == ["kubernetes.azure.com/scalesetpriority=spot:NoSchedule"]
    assert pools["cpu"].inputs["nodeLabels"]["spotkube.io/role"] == "batch"


@pytest.mark.parametrize(("args", "expected"), [
    ({**H100, "max_price": -2}, "AksGpuNodePool 'p' args: max_price: -2 is not allowed; use -1"),
    ({**H100, "maxPrice": 1.0}, "AksGpuNodePool 'p' args: maxPrice: is not a known key"),
    ({**H100, "capacity": "on-demand", "capacity_reservation_group": {"create": {"count": 1}}},
     "capacity_reservation_group.create: is refused on a cluster spotkube didn't make"),
    ({**H100, "max": pulumi.Output.from_input(4)}, "AksGpuNodePool 'p' args: max: is an Output"),
])
def test_bad_pool_args_are_refused_before_anything_is_registered(args: dict[str, Any], expected: str) -> None:
    message = refusal(lambda: AksGpuNodePool("p", args={"cluster_id": CLUSTER_ID, "region": "eastus", **args}))
    assert expected in message


def test_a_cluster_id_that_is_no_cluster_and_a_missing_region_are_named() -> None:
    wrong = refusal(lambda: AksGpuNodePool("p", args={"cluster_id": "team-aks", "region": "eastus", **H100}))
    assert "cluster_id: 'team-aks' is not a managed cluster's Azure resource id" in wrong
    number = refusal(lambda: GkeGpuNodePool("p", args={"cluster_id": 5, "region": "us-central1",  # type: ignore[typeddict-item]
                                                       "project": "vision-ml-dev", **L4}))
    assert "GkeGpuNodePool 'p' args: cluster_id: 5 is a number; give text: The GKE cluster the pool joins" in number
    missing = refusal(lambda: AksGpuNodePool("p", args={"cluster_id": CLUSTER_ID, **H100}))  # type: ignore[typeddict-item]
    assert "AksGpuNodePool 'p' args: region: is required" in missing
    # A pool component has no cluster.allowUnlistedRegion, so its refusal of an unknown region offers none.
    unknown = refusal(lambda: AksGpuNodePool("p", args={"cluster_id": CLUSTER_ID, "region": "marsnorth", **H100}))
    assert "AksGpuNodePool 'p' args: region: 'marsnorth' is not" in unknown
    assert "a pool component takes only the regions spotkube knows" in unknown
    assert "allowUnlistedRegion" not in unknown


def test_a_gke_pool_on_a_teams_cluster_is_the_pool_a_spotkube_cluster_builds() -> None:
    account = "nodes@vision-ml-dev.iam.gserviceaccount.com"
    added = run(lambda: GkeGpuNodePool("l4spot", args={
        "cluster_id": GKE_CLUSTER_ID, "region": "us-central1", "project": "vision-ml-dev",
        "service_account": account, **L4}))
    built = run(lambda: GkeGpuCluster("ml", args={"environment": "dev", "region": "us-central1", "gpu_pools": [L4],
                                                  "cluster": {"project": "vision-ml-dev"}}))
    pool = only(added, NODE_POOL)
    (same,) = [r for r in built.registrations if r.type == NODE_POOL and r.name == "ml-l4spot"]
    assert (pool.inputs["cluster"], pool.inputs["project"], pool.inputs["location"]) == \
        (GKE_CLUSTER_ID, "vision-ml-dev", "us-central1")
    assert pool.inputs["nodeConfig"]["serviceAccount"] == account
    assert without_target(pool.inputs, "cluster", "nodeConfig") == without_target(same.inputs, "cluster", "nodeConfig")
    assert without_target(pool.inputs["nodeConfig"], "serviceAccount") == \
        without_target(same.inputs["nodeConfig"], "serviceAccount")
    assert pool.inputs["nodeConfig"]["spot"] is True


def test_a_gke_cluster_id_of_another_project_or_region_is_refused() -> None:
    def pool(**target: Any) -> Callable[[], object]:
        return lambda: GkeGpuNodePool("p", args={"region": "us-central1", "project": "vision-ml-dev", **target, **L4})

    assert "is in project 'other-project', not in 'vision-ml-dev'" in refusal(
        pool(cluster_id="projects/other-project/locations/us-central1/clusters/inference"))
    assert "spotkube's pools join regional clusters" in refusal(
        pool(cluster_id="projects/vision-ml-dev/locations/us-central1-a/clusters/inference"))


def test_the_device_plugin_for_pools_tolerates_their_taints_and_kueue_queues_their_gpus() -> None:
    def program() -> None:
        provider = k8s.Provider("team", kubeconfig="apiVersion: v1\nkind: Config\n")
        h100 = AksGpuNodePool("h100spot", args={"cluster_id": CLUSTER_ID, "region": "eastus",
                                                **H100, "taints": ["team=vision:NoSchedule"]})
        NvidiaDevicePlugin.for_pools("nvidia", [h100], opts=pulumi.ResourceOptions(provider=provider))
        Kueue.for_pools("kueue", [h100], opts=pulumi.ResourceOptions(providers=[provider]))

    recording = run(program)
    daemonset = only(recording, "kubernetes:apps/v1:DaemonSet")
    keys = {t.get("key") for t in daemonset.inputs["spec"]["template"]["spec"]["tolerations"]}
    assert {"team", "kubernetes.azure.com/scalesetpriority", "nvidia.com/gpu"} <= keys
    queues = [r for r in recording.registrations if r.inputs.get("kind") == "ClusterQueue"]
    assert len(queues) == 1
    flavors = queues[0].inputs["spec"]["resourceGroups"][0]["flavors"]
    gpus = [r["nominalQuota"] for f in flavors for r in f["resources"] if r["name"] == "nvidia.com/gpu"]
    assert gpus == ["4"]


def test_the_trainer_for_pools_registers_a_runtime_for_their_gpus() -> None:
    def program() -> None:
        provider = k8s.Provider("team", kubeconfig="apiVersion: v1\nkind: Config\n")
        h100 = AksGpuNodePool("h100spot", args={"cluster_id": CLUSTER_ID, "region": "eastus",
                                                **H100, "taints": ["team=vision:NoSchedule"]})
        KubeflowTrainer.for_pools("trainer", [h100], args={"platform_pool_labels": {"agentpool": "system"}},
                                  opts=pulumi.ResourceOptions(providers=[provider]))

    recording = run(program)
    (runtime,) = registered_runtimes(recording.registrations)
    worker = Placement.from_pod_spec(training_runtime.worker_pod_spec(runtime))
    assert runtime["metadata"]["name"] == "spotkube-nvidia-h100-nvl"
    assert any(t.key == "team" and t.value == "vision" for t in worker.tolerations), "the team's own taint"
    assert worker.required and any(r.key == "spotkube.io/accelerator" and r.values == ("nvidia-h100-nvl",)
                                   for r in worker.required[0])
    with pytest.raises(ProgramFailed, match="KubeflowTrainer 'trainer': pools: hold no GPU pool that gives whole GPUs"):
        run(lambda: KubeflowTrainer.for_pools("trainer", [AksGpuNodePool("cpu", args={
            "cluster_id": CLUSTER_ID, "region": "eastus", "name": "cpu", "machine": "Standard_D8s_v5"})]))


def test_the_add_ons_for_pools_refuse_what_is_no_pool_or_pools_of_two_clouds() -> None:
    def mixed() -> None:
        h100 = AksGpuNodePool("h100spot", args={"cluster_id": CLUSTER_ID, "region": "eastus", **H100})
        l4 = GkeGpuNodePool("l4spot", args={"cluster_id": GKE_CLUSTER_ID, "region": "us-central1",
                                            "project": "vision-ml-dev", **L4})
        NvidiaDevicePlugin.for_pools("nvidia", [h100, l4])

    with pytest.raises(ProgramFailed, match="NvidiaDevicePlugin 'nvidia': pools: are on aks and gke"):
        run(mixed)
    assert "pools: give a list of the pool components" in refusal(
        lambda: NvidiaDevicePlugin.for_pools("nvidia", ["h100spot"]))  # type: ignore[list-item]
    cpu = {"name": "cpu", "machine": "Standard_D8s_v5"}
    with pytest.raises(ProgramFailed, match="Kueue 'kueue': pools: hold no GPU pool"):
        run(lambda: Kueue.for_pools("kueue", [AksGpuNodePool("cpu", args={
            "cluster_id": CLUSTER_ID, "region": "eastus", **cpu})]))


def test_a_service_account_that_is_no_e_mail_is_refused() -> None:
    message = refusal(lambda: GkeGpuNodePool("p", args={"cluster_id": GKE_CLUSTER_ID, "region": "us-central1",
                                                       "project": "vision-ml-dev", "service_account": "nope", **L4}))
    assert "GkeGpuNodePool 'p' args: service_account: 'nope' is not a service account's e-mail" in message


def test_one_add_on_serves_the_pools_of_one_cluster() -> None:
    other = CLUSTER_ID.replace("team-aks", "other-aks")

    def two_clusters() -> None:
        first = AksGpuNodePool("h100spot", args={"cluster_id": CLUSTER_ID, "region": "eastus", **H100})
        second = AksGpuNodePool("other", args={"cluster_id": other, "region": "eastus", **H100})
        Kueue.for_pools("kueue", [first, second])

    with pytest.raises(ProgramFailed, match=r"Kueue .kueue.: pools: are on .*other-aks and .*team-aks: one add-on"):
        run(two_clusters)


def test_a_pool_on_a_cluster_in_the_teams_network_joins_its_subnet() -> None:
    subnet = ("/subscriptions/00000000-0000-4000-8000-000000000000/resourceGroups/team-rg/providers/"
              "Microsoft.Network/virtualNetworks/team/subnets/nodes")
    recording = run(lambda: AksGpuNodePool("h100spot", args={"cluster_id": CLUSTER_ID, "region": "eastus",
                                                             "vnet_subnet_id": subnet, **H100}))
    assert only(recording, AGENT_POOL).inputs["vnetSubnetID"] == subnet
    assert "vnetSubnetID" not in only(run(lambda: AksGpuNodePool("h100spot", args={
        "cluster_id": CLUSTER_ID, "region": "eastus", **H100})), AGENT_POOL).inputs
