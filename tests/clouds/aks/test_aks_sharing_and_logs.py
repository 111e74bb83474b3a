"""AKS: MIG pools and Container Insights as registered, read back by the plan, and refused when impossible.

Each program runs under `spotkube.components.offline.record_program`, so the inputs checked are the ones the
AKS API would receive (azure-native's camelCase input names).
"""

from __future__ import annotations

from typing import Any

import pulumi
import pytest

from spotkube import AksGpuCluster, AksGpuClusterArgs
from spotkube.clouds import parse_spec, plan_platform, profile
from spotkube.components.offline import Recording, record_program
from spotkube.platform import contract
from spotkube.platform.errors import SpecError
from spotkube.platform.logs import LogsError, LogTarget
from spotkube.platform.registration import Registration
from spotkube.review.plan_document import pool_rows

AGENT_POOL = "azure-native:containerservice:AgentPool"
CLUSTER = "azure-native:containerservice:ManagedCluster"
WORKSPACE = "azure-native:operationalinsights:Workspace"
RULE = "azure-native:monitor:DataCollectionRule"
ASSOCIATION = "azure-native:monitor:DataCollectionRuleAssociation"
WORKSPACE_ID = ("/subscriptions/00000000-0000-0000-0000-000000000001/resourceGroups/ml-logs/providers/"
                "Microsoft.OperationalInsights/workspaces/ml-logs")

#: Who runs `pulumi up`: every AKS cluster names it.
DEPLOYER = {"object_id": "c0ffee00-0000-4000-8000-000000000001", "principal_type": "ServicePrincipal"}
PROD: AksGpuClusterArgs = {
    "environment": "prod",
    "region": "eastus",
    "cluster": {"logs": {"retention_days": 90}, "deployer": DEPLOYER},
    "gpu_pools": [
        {"name": "a100mig", "machine": "Standard_NC24ads_A100_v4", "capacity": "spot", "sharing": {"mig": "1g.10gb"}},
        {"name": "a100whole", "machine": "Standard_NC24ads_A100_v4", "capacity": "spot"},
    ],
}


def build(args: AksGpuClusterArgs) -> Recording:
    def program() -> None:
        cluster = AksGpuCluster("ml", args=args)
        pulumi.export("poolContracts", cluster.pool_contracts)
        pulumi.export("logWorkspaceId", cluster.log_workspace_id)

    return record_program(program, project="spotkube", stack="test", config={})


@pytest.fixture(scope="module")
def prod() -> Recording:
    return build(PROD)


def of_type(recording: Recording, type_token: str) -> list[Registration]:
    return [r for r in recording.registrations if r.type == type_token]


def agent_pool(recording: Recording, name: str) -> dict[str, Any]:
    return next(r.inputs for r in of_type(recording, AGENT_POOL) if r.inputs["agentPoolName"] == name)


def test_a_mig_pool_registers_the_gpu_instance_profile_that_yields_its_profile(prod: Recording) -> None:
    mig = agent_pool(prod, "a100mig")
    assert mig["gpuInstanceProfile"] == "MIG1g"  # 1g.10gb on an A100 80GB, seven per GPU
    assert "gpuInstanceProfile" not in agent_pool(prod, "a100whole")
    assert mig["nodeLabels"][contract.GPU_SHARING_LABEL] == "mig"
    assert mig["nodeLabels"][contract.GPU_PARTITION_LABEL] == "1g.10gb"
    assert contract.GPU_SHARING_LABEL not in agent_pool(prod, "a100whole")["nodeLabels"]
    options = next(r for r in of_type(prod, AGENT_POOL) if r.inputs["agentPoolName"] == "a100mig")
    assert "gpuInstanceProfile" in options.replace_on_changes, "AKS fixes the profile at creation"


def test_the_pool_contract_advertises_seven_slices_per_gpu(prod: Recording) -> None:
    contracts = {c["name"]: contract.PoolContract.from_json(c) for c in prod.outputs["poolContracts"].value}
    assert contracts["a100mig"].advertised() == {"nvidia.com/gpu": 7}
    assert contracts["a100whole"].advertised() == {"nvidia.com/gpu": 1}
    slice_step = contract.spot_gpu("nvidia-a100-80gb", shared=contract.SharedGpu("mig", partition="1g.10gb"))
    assert contract.landing_pools(slice_step, list(contracts.values())) == ["a100mig"]
    whole_step = contract.spot_gpu("nvidia-a100-80gb")
    assert contract.landing_pools(whole_step, list(contracts.values())) == ["a100whole"]


def test_the_plan_shows_each_pool_s_sharing(prod: Recording) -> None:
    rows = {row.name: row for row in pool_rows("aks", prod.registrations)}
    assert rows["a100mig"].gpu_sharing == "MIG 1g.10gb (gpuInstanceProfile MIG1g)"
    assert rows["a100whole"].gpu_sharing is None
    assert rows["a100mig"].to_json()["gpuSharing"] == "MIG 1g.10gb (gpuInstanceProfile MIG1g)"


def test_prod_keeps_container_logs_in_a_workspace_it_creates(prod: Recording) -> None:
    (workspace,) = of_type(prod, WORKSPACE)
    assert workspace.inputs["retentionInDays"] == 90 and workspace.inputs["sku"] == {"name": "PerGB2018"}
    assert workspace.protect, "prod protects the workspace with the cluster's logs"
    (cluster,) = of_type(prod, CLUSTER)
    agent = cluster.inputs["addonProfiles"]["omsagent"]
    assert agent["enabled"] is True
    assert agent["config"]["useAADAuth"] == "true"
    assert agent["config"]["logAnalyticsWorkspaceResourceID"] == prod.outputs["logWorkspaceId"].value
    (rule,) = of_type(prod, RULE)
    (extension,) = rule.inputs["dataSources"]["extensions"]
    assert extension["extensionName"] == "ContainerInsights"
    assert "Microsoft-ContainerLogV2" in extension["streams"]
    assert extension["extensionSettings"]["dataCollectionSettings"]["enableContainerLogV2"] is True
    assert rule.inputs["dataFlows"] == [{"streams": extension["streams"], "destinations": ["ciworkspace"]}]
    (association,) = of_type(prod, ASSOCIATION)
    assert association.inputs["associationName"] == "ContainerInsightsExtension"
    posture = profile("aks").read_posture(CLUSTER, cluster.name, cluster.inputs, True)
    assert posture is not None
    logs = next(s for s in posture.settings if s.name == "container logs")
    assert logs.concern is None and "ContainerLogV2" in logs.value


def test_a_stack_s_own_workspace_is_used_and_dev_keeps_logs_on_the_node_by_default() -> None:
    named = build({**PROD, "cluster": {"logs": {"workspace_id": WORKSPACE_ID}, "deployer": DEPLOYER}})
    assert of_type(named, WORKSPACE) == []
    (cluster,) = of_type(named, CLUSTER)
    assert cluster.inputs["addonProfiles"]["omsagent"]["config"]["logAnalyticsWorkspaceResourceID"] == WORKSPACE_ID
    dev = build({**PROD, "environment": "dev", "cluster": {"deployer": DEPLOYER}})
    assert of_type(dev, WORKSPACE) == [] and of_type(dev, RULE) == []
    (cluster,) = of_type(dev, CLUSTER)
    assert "addonProfiles" not in cluster.inputs
    posture = profile("aks").read_posture(CLUSTER, cluster.name, cluster.inputs, False)
    assert posture is not None
    assert "container logs: a step's logs are lost with its node" in " ".join(posture.concerns)


def test_the_plan_states_the_log_cost_basis_not_a_figure() -> None:
    from planned_costs import price_plan

    report = price_plan(plan_platform(parse_spec({"cloud": "aks", **PROD}, "test")))
    (basis,) = [line for line in report.basis if line.startswith("container logs")]
    assert "bills each GB of logs ingested" in basis and "retention 90 days" in basis
    assert "$" not in basis
    # Seven MIG instances share the node's spot price: $0.444433/h / 7, to the hundredth of a cent.
    assert "a100mig: a shared GPU costs $0.0635/h per client (spot $0.444433/h over 7 clients" in report.basis[0]
    assert report.to_json()["pools"][2]["usdPerClientHour"] == 0.0635


@pytest.mark.parametrize(("pool", "key", "said"), [
    ({"name": "t4", "machine": "Standard_NC4as_T4_v3", "sharing": {"mig": "1g.5gb"}}, "gpuPools[0].sharing.mig",
     "'1g.5gb' is not possible on Standard_NC4as_T4_v3: its nvidia-tesla-t4 has no MIG"),
    ({"name": "a100", "machine": "Standard_NC24ads_A100_v4", "sharing": {"mig": "1g.5gb"}}, "gpuPools[0].sharing.mig",
     "'1g.5gb' is not a MIG profile AKS makes of nvidia-a100-80gb; use one of 1g.10gb, 2g.20gb, 3g.40gb, 4g.40gb"),
    ({"name": "a100", "machine": "Standard_NC24ads_A100_v4", "sharing": {"strategy": "time-sharing",
                                                                            "clientsPerGpu": 4}},
     "gpuPools[0].sharing.strategy", "'time-sharing' is a GKE setting; remove it from an AKS stack"),
])
def test_impossible_sharing_is_refused_with_the_key_and_what_is_accepted(
    pool: dict[str, Any], key: str, said: str,
) -> None:
    with pytest.raises(SpecError) as refused:
        parse_spec({"cloud": "aks", "environment": "dev", "region": "eastus", "gpuPools": [pool]}, "stack.yaml")
    assert f"spotkube:{key}: {said}" in str(refused.value)


def test_sharing_on_a_cpu_pool_and_a_bad_workspace_are_refused() -> None:
    with pytest.raises(SpecError) as refused:
        parse_spec({"cloud": "aks", "environment": "dev", "region": "eastus",
                    "spotPools": [{"name": "cpu", "machine": "Standard_D4s_v3", "sharing": {"mig": "1g.10gb"}}]},
                   "stack.yaml")
    assert "spotkube:spotPools[0].sharing: is not a known key; accepted keys: name, machine" in str(refused.value)
    with pytest.raises(SpecError) as refused:
        parse_spec({"cloud": "aks", "environment": "dev", "region": "eastus",
                    "cluster": {"logs": {"workspaceId": "my-workspace"}}}, "stack.yaml")
    text = str(refused.value)
    assert "spotkube:cluster.logs.workspaceId: 'my-workspace' is not a Log Analytics workspace resource id" in text


def test_the_kql_for_a_pod_and_a_run_names_the_table_the_namespace_and_the_pod() -> None:
    spec = parse_spec({"cloud": "aks", **PROD}, "test")
    writer = profile("aks").commands.log_query
    assert writer is not None
    pod = writer(spec, LogTarget(pod="train-abc-system-container-impl-42", workspace=WORKSPACE_ID))
    assert pod.query.splitlines()[0] == "ContainerLogV2"
    assert '| where PodNamespace == "kubeflow" and PodName == "train-abc-system-container-impl-42"' in pod.query
    assert "| where TimeGenerated > ago(90d)" in pod.query, "as far back as the workspace keeps logs"
    assert pod.link == f"https://portal.azure.com/#resource{WORKSPACE_ID}/logs"
    assert pod.command is not None and f"--ids {WORKSPACE_ID}" in pod.command
    run = writer(spec, LogTarget(run="3f2b1c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d"))
    assert run.query.startswith("let pods = KubePodInventory")
    assert 'PodLabel contains "\\"pipeline/runid\\":\\"3f2b1c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d\\""' in run.query
    assert "PodName in (pods)" in run.query
    assert run.link is None and "pulumi stack output logWorkspaceId" in " ".join(run.notes)
    with pytest.raises(LogsError, match="not a Log Analytics workspace resource id"):
        writer(spec, LogTarget(pod="p", workspace="ws"))


def test_the_mixed_strategy_is_refused_where_aks_could_never_scale_a_mig_pool_from_zero() -> None:
    pool = {"name": "a100mig", "machine": "Standard_NC24ads_A100_v4", "sharing": {"mig": "1g.10gb"}}
    values = {"cloud": "aks", "environment": "dev", "region": "eastus", "devicePlugin": {"migStrategy": "mixed"}}
    with pytest.raises(SpecError) as refused:
        parse_spec({**values, "gpuPools": [pool]}, "stack.yaml")
    assert ("spotkube:gpuPools[0].min: 0 leaves the pool empty, and AKS's autoscaler never grows it for pods asking "
            "nvidia.com/mig-1g.10gb") in str(refused.value)
    spec = parse_spec({**values, "gpuPools": [{**pool, "min": 1, "max": 2}]}, "stack.yaml")
    (mig,) = plan_platform(spec).gpu_pools
    assert mig.contract.advertised() == {"nvidia.com/mig-1g.10gb": 7}
