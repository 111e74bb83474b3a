"""AksGpuCluster registers what the AKS facts require, seen through a recording mock monitor."""

from __future__ import annotations

from typing import Any, cast

import pulumi
import pytest
import yaml

from spotkube import AksGpuCluster, AksGpuClusterArgs
from spotkube.clouds.aks.spec import AksSpec
from spotkube.components.offline import Recording, record_program
from spotkube.platform.registration import Registration
from spotkube.platform.spec import PlatformSpec

AGENT_POOL = "azure-native:containerservice:AgentPool"
CLUSTER = "azure-native:containerservice:ManagedCluster"
SPOT_TAINT = "kubernetes.azure.com/scalesetpriority=spot:NoSchedule"
GPU_TAINT = "nvidia.com/gpu=present:NoSchedule"

ARGS: AksGpuClusterArgs = {
    "environment": "dev",
    "region": "uksouth",
    "system_pool": {"machine": "Standard_D4s_v3", "min": 2, "max": 3},
    "gpu_pools": [
        {"name": "t4spot", "machine": "Standard_NC4as_T4_v3", "capacity": "spot", "max_price": 0.25, "max": 5},
        {"name": "t4demand", "machine": "Standard_NC4as_T4_v3", "capacity": "on-demand", "max": 2},
    ],
}


#: Who deploys: every AKS cluster names it (cluster.deployer), and only its grant depends on it.
DEPLOYER = {"object_id": "c0ffee00-0000-4000-8000-000000000001", "principal_type": "ServicePrincipal"}


def with_deployer(args: AksGpuClusterArgs) -> AksGpuClusterArgs:
    """`args` with DEPLOYER under cluster.deployer, unless the test names its own."""
    cluster = dict(args.get("cluster") or {})
    cluster["deployer"] = {**DEPLOYER, **(cluster.get("deployer") or {})}
    return cast(AksGpuClusterArgs, {**args, "cluster": cluster})


def build(args: AksGpuClusterArgs, deployer: bool = True) -> Recording:
    def program() -> None:
        cluster = AksGpuCluster("ml", args=with_deployer(args) if deployer else args)
        pulumi.export("kubeconfig", cluster.kubeconfig)
        pulumi.export("poolContracts", cluster.pool_contracts)

    return record_program(program, project="spotkube", stack="test", config={})


@pytest.fixture(scope="module")
def dev() -> Recording:
    return build(ARGS)


def only(recording: Recording, type_token: str, name: str) -> Registration:
    (match,) = [r for r in recording.registrations if r.type == type_token and r.name == name]
    return match


def test_spot_pool_inputs_match_the_spec(dev: Recording) -> None:
    pool: dict[str, Any] = dict(only(dev, AGENT_POOL, "ml-t4spot").inputs)
    assert pool["agentPoolName"] == "t4spot"
    assert pool["vmSize"] == "Standard_NC4as_T4_v3"
    assert pool["mode"] == "User"
    assert pool["scaleSetPriority"] == "Spot"
    assert pool["scaleSetEvictionPolicy"] == "Delete"
    assert pool["spotMaxPrice"] == 0.25
    assert (pool["minCount"], pool["maxCount"], pool["count"]) == (0, 5, 0)
    assert pool["enableAutoScaling"] is True


def test_spot_pool_repeats_the_taint_and_label_aks_adds(dev: Recording) -> None:
    pool = only(dev, AGENT_POOL, "ml-t4spot").inputs
    assert pool["nodeTaints"] == [SPOT_TAINT, GPU_TAINT]
    assert pool["nodeLabels"]["kubernetes.azure.com/scalesetpriority"] == "spot"
    assert pool["nodeLabels"]["spotkube.io/capacity"] == "spot"
    assert pool["nodeLabels"]["spotkube.io/accelerator"] == "nvidia-tesla-t4"
    assert pool["nodeLabels"]["spotkube.io/pool"] == "t4spot"


def test_on_demand_gpu_pool_has_gpu_taint_but_no_spot_fields(dev: Recording) -> None:
    pool = only(dev, AGENT_POOL, "ml-t4demand").inputs
    assert pool["nodeTaints"] == [GPU_TAINT]
    assert pool["scaleSetPriority"] == "Regular"
    assert "spotMaxPrice" not in pool and "scaleSetEvictionPolicy" not in pool


def test_create_only_fields_replace_the_pool_and_count_is_left_to_the_autoscaler(dev: Recording) -> None:
    pool = only(dev, AGENT_POOL, "ml-t4spot")
    assert pool.ignore_changes == ("count",)
    assert {"scaleSetPriority", "scaleSetEvictionPolicy", "spotMaxPrice"} <= set(pool.replace_on_changes)
    assert pool.delete_before_replace


def test_system_pool_is_inline_on_demand_and_tainted_for_addons(dev: Recording) -> None:
    cluster = only(dev, CLUSTER, "ml-aks")
    (system,) = cluster.inputs["agentPoolProfiles"]
    assert (system["name"], system["mode"], system["scaleSetPriority"]) == ("system", "System", "Regular")
    assert system["nodeTaints"] == ["CriticalAddonsOnly=true:NoSchedule"]
    # AKS can't change these on an existing pool and azure-native can't replace the inline one.
    assert cluster.ignore_changes == ("agentPoolProfiles[0].count", "agentPoolProfiles[0].vmSize",
                                      "agentPoolProfiles[0].availabilityZones", "agentPoolProfiles[0].osType")
    platform = only(dev, AGENT_POOL, "ml-platform").inputs
    assert "nodeTaints" not in platform, "platform workloads need an untainted on-demand pool"


def test_security_baseline_is_on(dev: Recording) -> None:
    cluster = only(dev, CLUSTER, "ml-aks").inputs
    assert cluster["enableRBAC"] is True
    assert cluster["aadProfile"]["managed"] and cluster["aadProfile"]["enableAzureRBAC"]
    assert cluster["oidcIssuerProfile"] == {"enabled": True}
    assert cluster["securityProfile"]["workloadIdentity"] == {"enabled": True}
    assert cluster["networkProfile"]["networkPolicy"] == "cilium"
    assert cluster["disableLocalAccounts"] is False, "local accounts stay on outside prod by default"


def test_prod_disables_local_accounts_goes_private_and_protects(dev: Recording) -> None:
    prod = build({**ARGS, "environment": "prod"})
    cluster = only(prod, CLUSTER, "ml-aks")
    assert cluster.protect
    assert cluster.inputs["disableLocalAccounts"] is True
    assert cluster.inputs["apiServerAccessProfile"]["enablePrivateCluster"] is True
    assert not only(dev, CLUSTER, "ml-aks").protect


def test_autoscaler_prefers_spot_pools(dev: Recording) -> None:
    assert only(dev, CLUSTER, "ml-aks").inputs["autoScalerProfile"]["expander"] == "priority"
    config_map = only(dev, "kubernetes:core/v1:ConfigMap", "ml-priority-expander").inputs
    assert config_map["metadata"] == {"name": "cluster-autoscaler-priority-expander", "namespace": "kube-system"}
    priorities = yaml.safe_load(config_map["data"]["priorities"])
    assert priorities == {30: ["^aks-t4spot-[0-9]+-vmss$"], 20: ["^aks-t4demand-[0-9]+-vmss$"], 10: [".*"]}
    assert only(dev, "kubernetes:core/v1:ConfigMap", "ml-priority-expander").provider.startswith(
        only(dev, "pulumi:providers:kubernetes", "ml-k8s").urn)


def test_the_autoscaler_gives_up_on_a_pool_after_the_bounded_provision_time(dev: Recording) -> None:
    profile = only(dev, CLUSTER, "ml-aks").inputs["autoScalerProfile"]
    assert profile["maxNodeProvisionTime"] == "10m"
    assert profile["scanInterval"] == "10s"
    assert profile["newPodScaleUpDelay"] == "0s"


def test_every_child_is_parented_to_the_component(dev: Recording) -> None:
    """Each pool is an `AksGpuNodePool` of the cluster, its AgentPool aliased to the cluster, where it was
    registered before the pool component existed, so an existing stack keeps it."""
    component = only(dev, "spotkube:index:AksGpuCluster", "ml")
    children = [r for r in dev.registrations if r is not component]
    pools = {r.urn: r for r in children if r.type == "spotkube:index:AksGpuNodePool"}
    assert sorted(r.name for r in pools.values()) == ["ml-platform", "ml-t4demand", "ml-t4spot"]
    agent_pools = [r for r in children if r.type == "azure-native:containerservice:AgentPool"]
    assert sorted(r.name for r in agent_pools) == sorted(r.name for r in pools.values())
    assert all(pools[r.parent].name == r.name and r.moved_from == (component.urn,) for r in agent_pools)
    assert all(r.parent == component.urn for r in children if r not in agent_pools)


def test_kubeconfig_is_secret_and_contracts_are_not(dev: Recording) -> None:
    assert dev.outputs["kubeconfig"].secret
    assert dev.outputs["kubeconfig"].value is None
    contracts = dev.outputs["poolContracts"].value
    assert [c["name"] for c in contracts] == ["system", "platform", "t4spot", "t4demand"]


def test_existing_resource_group_is_used_by_name() -> None:
    recording = build({**ARGS, "cluster": {"resource_group_name": "shared-rg"}})
    assert not [r for r in recording.registrations if r.type == "azure-native:resources:ResourceGroup"]
    assert only(recording, CLUSTER, "ml-aks").inputs["resourceGroupName"] == "shared-rg"


def test_bad_args_stop_before_registering_anything() -> None:
    from spotkube.components.offline import ProgramFailed

    with pytest.raises(ProgramFailed, match=r"AksGpuCluster 'ml' args: gpu_pools\[0\]\.max_price") as err:
        build({**ARGS, "gpu_pools": [{"name": "x", "machine": "Standard_NC4as_T4_v3", "max_price": -3}]})
    assert err.value.registrations == []


@pytest.mark.parametrize(("extra", "message"), [
    ({"cloud": "gke"}, r"AksGpuCluster 'ml' args: cloud: is fixed by the component, which builds aks; remove the key "
                       r"\(use GkeGpuCluster for the other cloud\)"),
    ({"kubeflow": {"enabled": True}}, r"AksGpuCluster 'ml' args: kubeflow: is not a key of a cluster's args: Kubeflow "
                                      r"Pipelines is its own component, KubeflowPipelines"),
    ({"gpu_pool": []}, r"AksGpuCluster 'ml' args: gpu_pool: is not a known key; accepted keys: environment, region, "
                       r"system_pool, platform_pool, gpu_pools, spot_pools, cluster, checkpoint_store; "
                       r"did you mean gpu_pools\?"),
])
def test_args_outside_the_cluster_s_own_keys_are_refused(extra: dict[str, object], message: str) -> None:
    from spotkube.components.offline import ProgramFailed

    with pytest.raises(ProgramFailed, match=message) as err:
        build(cast(AksGpuClusterArgs, {**ARGS, **extra}))
    assert err.value.registrations == []


def test_a_cluster_without_a_platform_pool_is_the_kubeflow_component_s_concern() -> None:
    recording = build({**ARGS, "platform_pool": {"enabled": False}, "system_pool": {"critical_addons_only": False}})
    pools = [r.inputs["agentPoolName"] for r in recording.registrations if r.type == AGENT_POOL]
    assert pools and not any(name.startswith("platform") for name in pools)


def test_from_spec_refuses_a_hand_built_spec_that_breaks_the_rules() -> None:
    from spotkube.components.offline import ProgramFailed

    spec = AksSpec.model_validate({"cloud": "aks", "environment": "dev", "region": "uksouth",
                                   "platformPool": {"name": "platformpool"}})
    with pytest.raises(ProgramFailed, match=r"AksGpuCluster 'ml': spotkube:platformPool.name: 'platformpool' is "
                                            r"too long") as err:
        record_program(lambda: AksGpuCluster.from_spec("ml", spec), project="spotkube", stack="test", config={})
    assert err.value.registrations == []


def test_from_spec_refuses_a_spec_that_is_not_its_cloud_s_model() -> None:
    """Only a cloud's own spec has its fields: the shared base, validated by hand, is refused with
    the model to use, before anything is registered."""
    from spotkube.components.offline import ProgramFailed

    spec = PlatformSpec.model_validate({"cloud": "aks", "environment": "dev", "region": "uksouth"})
    with pytest.raises(ProgramFailed, match=r"AksGpuCluster 'ml': spotkube:cloud: 'aks' in a PlatformSpec: build "
                                            r"the spec with AksSpec") as err:
        record_program(lambda: AksGpuCluster.from_spec("ml", spec), project="spotkube", stack="test", config={})
    assert err.value.registrations == []


def _depends(recording: Recording, resource: Registration, other: Registration) -> bool:
    by_urn = {r.urn: r for r in recording.registrations}
    todo, seen = list(resource.dependencies), set()
    while todo:
        urn = todo.pop()
        if urn == other.urn:
            return True
        if urn not in seen and urn in by_urn:
            seen.add(urn)
            todo += by_urn[urn].dependencies
    return False


def test_agent_pools_are_created_one_after_another(dev: Recording) -> None:
    pools = [r for r in dev.registrations if r.type == AGENT_POOL]
    assert len(pools) == 3
    for i, first in enumerate(pools):
        for second in pools[i + 1:]:  # loop may be empty: the last pool has none after it (3 pools, 3 pairs)
            assert _depends(dev, first, second) or _depends(dev, second, first), (first.name, second.name)


def test_the_platform_pool_is_replaced_create_first_under_a_versioned_name(dev: Recording) -> None:
    platform = only(dev, AGENT_POOL, "ml-platform")
    assert not platform.delete_before_replace, "the pool running Kubeflow must outlive its replacement"
    name = platform.inputs["agentPoolName"]
    assert name.startswith("platform") and len(name) == 12 and name != "platform"
    bigger = build({**ARGS, "platform_pool": {"machine": "Standard_D8s_v3"}})
    assert only(bigger, AGENT_POOL, "ml-platform").inputs["agentPoolName"] != name, "a new VM size means a new pool"
    again = build(ARGS)
    assert only(again, AGENT_POOL, "ml-platform").inputs["agentPoolName"] == name, "the same inputs keep the name"
    contracts = {c["name"]: c for c in dev.outputs["poolContracts"].value}
    assert contracts["platform"]["labels"]["kubernetes.azure.com/agentpool"] == name


def test_deployer_and_admin_groups_become_rbac_cluster_admins_before_any_kubernetes_object() -> None:
    group = "3f2b1c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d"
    person = "5e6f7a8b-0000-4000-8000-000000000002"
    # azurecli, a person's sign-in: the principal type is the deployer's own, never the login mode's
    recording = build({**ARGS, "cluster": {"admin_group_object_ids": [group], "deployer": {
        "login": "azurecli", "object_id": person, "principal_type": "User"}}})
    grants = {r.inputs["principalId"]: r for r in recording.registrations
              if r.type == "azure-native:authorization:RoleAssignment"}
    assert set(grants) == {person, group}
    assert grants[person].inputs["principalType"] == "User"
    ci = build({**ARGS, "cluster": {"deployer": {"login": "azurecli"}}})
    (grant,) = [r for r in ci.registrations if r.type == "azure-native:authorization:RoleAssignment"]
    assert (grant.inputs["principalId"], grant.inputs["principalType"]) == (
        DEPLOYER["object_id"], "ServicePrincipal"), "azurecli from CI, after azure/login: a service principal"
    assert not [i for i in ci.invokes if i.token == "azure-native:authorization:getClientConfig"]
    assert grants[group].inputs["principalType"] == "Group"
    for grant in grants.values():
        assert grant.inputs["scope"].endswith("/providers/Microsoft.ContainerService/managedClusters/ml-aks")
        assert grant.inputs["roleDefinitionId"].endswith("/roleDefinitions/b1ff04bb-8a4e-4dc4-8eb5-8693973ce19b")
        assert grant.inputs["roleDefinitionId"].split("/")[2] == grant.inputs["scope"].split("/")[2], \
            "the role as defined in the cluster's own subscription"
    provider = only(recording, "pulumi:providers:kubernetes", "ml-k8s")
    (wait,) = [r for r in recording.registrations if r.type == "time:index/sleep:Sleep"]
    assert wait.inputs["createDuration"] == "5m"
    assert _depends(recording, provider, wait) and all(_depends(recording, wait, g) for g in grants.values())


@pytest.mark.parametrize("mode", ["azurecli", "workloadidentity", "spn", "msi"])
def test_the_provider_kubeconfig_signs_in_without_a_person(mode: str) -> None:
    recording = build({**ARGS, "cluster": {"deployer": {"login": mode}}})
    kubeconfig = only(recording, "pulumi:providers:kubernetes", "ml-k8s").inputs["kubeconfig"]
    assert "4dabf18193072939515e22adb298388d" in kubeconfig, "the kubeconfig reaches the provider as a secret"
    (user,) = yaml.safe_load(kubeconfig["value"])["users"]
    args = user["user"]["exec"]["args"]
    assert args[:3] == ["get-token", "--login", mode] and "devicecode" not in args
    assert "--server-id" in args


def test_a_system_pool_machine_change_is_refused_with_the_migration(monkeypatch: pytest.MonkeyPatch) -> None:
    from spotkube import testing
    from spotkube.components.offline import ProgramFailed

    real = testing.computed_outputs

    def deployed_with_another_size(type_token: str, name: str, inputs: Any) -> dict[str, Any]:
        outputs = real(type_token, name, inputs)
        if type_token == CLUSTER:
            (profile,) = inputs["agentPoolProfiles"]
            outputs["agentPoolProfiles"] = [{**profile, "vmSize": "Standard_D2s_v3"}]
        return outputs

    monkeypatch.setattr(testing, "computed_outputs", deployed_with_another_size)
    with pytest.raises(ProgramFailed) as err:
        build(ARGS)
    message = str(err.value)
    assert "spotkube:systemPool: vmSize 'Standard_D2s_v3' -> 'Standard_D4s_v3' is refused" in message
    assert "az aks nodepool add --mode System" in message and "pulumi refresh" in message
    assert not [r for r in err.value.registrations if r.type in (AGENT_POOL, "pulumi:providers:kubernetes")]


def test_a_cluster_without_a_deployer_is_refused_before_anything_is_registered() -> None:
    from spotkube.components.offline import ProgramFailed

    with pytest.raises(ProgramFailed) as failure:
        build(ARGS, deployer=False)
    message = str(failure.value)
    assert "AksGpuCluster 'ml'" in message and "cluster.deployer.object_id: is required on AKS" in message
    assert "az ad sp show --id <appId> --query id -o tsv" in message
    assert "az ad signed-in-user show --query id -o tsv" in message
    assert "cluster.deployer.principal_type: is required" in message
    assert failure.value.registrations == []
