"""Cluster inputs wired from other resources: another resource's Output in each of the few args that
accept one reaches the cloud resources as its resolved value, is checked by the core's rules once it
resolves, and is refused anywhere else.

The programs run under `record_program`, with mocks that also compute what the upstream resources'
providers would (a group's object id, a network's self link, an address), so every wired value
really is an Output of another resource: the registrations carry both its value and the dependency.
"""

from __future__ import annotations

import gc
import logging
import uuid
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import pulumi
import pulumi_azure_native as azure
import pulumi_gcp as gcp
import pulumi_random as random
import pytest

from recordings import only
from spotkube import AksGpuCluster, GkeGpuCluster, KubeflowPipelines, NvidiaDevicePlugin
from spotkube.clouds import CLOUDS, parse_spec
from spotkube.components import offline
from spotkube.components.offline import ProgramFailed, Recording, record_program
from spotkube.shell import common

AKS_CLUSTER = "azure-native:containerservice:ManagedCluster"
#: Who deploys an AKS cluster: every one names it.
DEPLOYER = {"object_id": "c0ffee00-0000-4000-8000-000000000001", "principal_type": "ServicePrincipal"}
AGENT_POOL = "azure-native:containerservice:AgentPool"
ROLE_ASSIGNMENT = "azure-native:authorization:RoleAssignment"
RESOURCE_GROUP = "azure-native:resources:ResourceGroup"
GKE_CLUSTER = "gcp:container/cluster:Cluster"
NODE_POOL = "gcp:container/nodePool:NodePool"
ROUTER = "gcp:compute/router:Router"
ROUTER_NAT = "gcp:compute/routerNat:RouterNat"
ACCOUNT = "gcp:serviceaccount/account:Account"
IAM_MEMBER = "gcp:projects/iAMMember:IAMMember"

PLAIN_GROUP = "3f2b1c4d-5e6f-4a1b-8c2d-3e4f5a6b7c8d"
RUNNER_IP = "198.51.100.7"
BASTION_IP = "192.0.2.200"
PROJECT_ID = "vision-ml-prod"
UUID_NAMESPACE = uuid.UUID("6ba7b811-9dad-11d1-80b4-00c04fd430c8")


class UpstreamMocks(offline.OfflineMocks):
    """The offline mocks, plus the outputs the upstream resources' providers compute."""

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict]:
        resource_id, state = super().new_resource(args)
        inputs = args.inputs
        if args.typ == RESOURCE_GROUP:
            state["name"] = inputs.get("resourceGroupName", args.name)
        elif args.typ == "random:index/randomUuid:RandomUuid":
            state["result"] = str(uuid.uuid5(UUID_NAMESPACE, args.name))
        elif args.typ == "azure-native:network:PublicIPAddress":
            state["ipAddress"] = RUNNER_IP
        elif args.typ == "gcp:compute/address:Address":
            state["address"] = BASTION_IP
        elif args.typ == "gcp:compute/network:Network":
            state["selfLink"] = f"https://www.googleapis.com/compute/v1/projects/{inputs['project']}/global/networks/" \
                                f"{inputs['name']}"
        elif args.typ == "gcp:compute/subnetwork:Subnetwork":
            state["selfLink"] = f"https://www.googleapis.com/compute/v1/projects/{inputs['project']}/regions/" \
                                f"{inputs['region']}/subnetworks/{inputs['name']}"
        return resource_id, state


def record(program: Callable[[], None]) -> Recording:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(offline, "OfflineMocks", UpstreamMocks)
        try:
            return record_program(program, project="wiring", stack="test", config={})
        finally:
            _forget_failed_outputs()


def _forget_failed_outputs() -> None:
    """Collect the futures and coroutines a failed program leaves behind now, quietly. A real program
    exits at its first error; in one test process they would otherwise be collected during a later test,
    each logging "Future exception was never retrieved" or warning that a coroutine was never awaited."""
    asyncio_log = logging.getLogger("asyncio")
    disabled, asyncio_log.disabled = asyncio_log.disabled, True
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", "coroutine .* was never awaited", RuntimeWarning)
            gc.collect()
    finally:
        asyncio_log.disabled = disabled


def group_id(name: str) -> str:
    return str(uuid.uuid5(UUID_NAMESPACE, name))



def urn_of(recording: Recording, type_token: str) -> str:
    return only(recording, type_token).urn


def values_in(value: Any) -> Iterator[Any]:
    if isinstance(value, dict):
        for item in value.values():
            yield from values_in(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from values_in(item)
    else:
        yield value


# --- AKS: the resource group, the admin groups and the authorized ranges -------------------------------


def aks_program(cluster_args: Callable[[], dict[str, Any]] | None = None) -> Callable[[], None]:
    """The AKS program; `cluster_args` builds other cluster args, inside the program (Outputs need its loop)."""
    def program() -> None:
        group = azure.resources.ResourceGroup("shared", resource_group_name="ml-shared", location="uksouth")
        admins = random.RandomUuid("platform-admins")  # stands in for an Entra ID group's object id
        runner = azure.network.PublicIPAddress("runner-egress", resource_group_name=group.name,
                                               public_ip_allocation_method="Static", sku={"name": "Standard"})
        cluster = AksGpuCluster("ml", args={
            "environment": "dev",
            "region": "uksouth",
            "gpu_pools": [{"name": "t4spot", "machine": "Standard_NC4as_T4_v3", "max": 2}],
            "cluster": cluster_args() if cluster_args else {
                "resource_group_name": group.name,
                "admin_group_object_ids": [admins.result, PLAIN_GROUP],
                "authorized_ip_ranges": ["203.0.113.0/24", pulumi.Output.concat(runner.ip_address, "/32")],
                "deployer": {"egress_ranges": ["203.0.113.0/24", "198.51.100.0/24"], **DEPLOYER},
            },
        })
        pulumi.export("resourceGroupName", cluster.resource_group_name)

    return program


@pytest.fixture(scope="module")
def aks() -> Recording:
    return record(aks_program())


def test_aks_builds_in_the_wired_resource_group(aks: Recording) -> None:
    cluster = only(aks, AKS_CLUSTER)
    assert cluster.inputs["resourceGroupName"] == "ml-shared"
    assert {p.inputs["resourceGroupName"] for p in aks.registrations if p.type == AGENT_POOL} == {"ml-shared"}
    assert urn_of(aks, RESOURCE_GROUP) in cluster.dependencies
    # The group is the consumer's: the component creates none of its own.
    assert [r.name for r in aks.registrations if r.type == RESOURCE_GROUP] == ["shared"]
    assert aks.outputs["resourceGroupName"].value == "ml-shared"


def test_aks_admin_groups_take_wired_and_plain_object_ids(aks: Recording) -> None:
    admins = group_id("platform-admins")
    cluster = only(aks, AKS_CLUSTER)
    assert cluster.inputs["aadProfile"]["adminGroupObjectIDs"] == [admins, PLAIN_GROUP]
    assert urn_of(aks, "random:index/randomUuid:RandomUuid") in cluster.dependencies
    grants = {r.name: r for r in aks.registrations if r.type == ROLE_ASSIGNMENT}
    assert grants["ml-rbac-admins-0"].inputs["principalId"] == admins
    assert grants["ml-rbac-admins-1"].inputs["principalId"] == PLAIN_GROUP
    assert urn_of(aks, "random:index/randomUuid:RandomUuid") in grants["ml-rbac-admins-0"].dependencies


def test_aks_authorized_ranges_merge_the_deployer_egress_once_resolved(aks: Recording) -> None:
    access = only(aks, AKS_CLUSTER).inputs["apiServerAccessProfile"]
    # The wired /32 in its place, the deployer's egress added, the range both lists name once.
    assert access["authorizedIPRanges"] == ["203.0.113.0/24", f"{RUNNER_IP}/32", "198.51.100.0/24"]
    assert urn_of(aks, "azure-native:network:PublicIPAddress") in only(aks, AKS_CLUSTER).dependencies


def test_aks_registers_no_placeholder(aks: Recording) -> None:
    registered = {str(v) for r in aks.registrations for v in values_in(dict(r.inputs))}
    assert not registered & set(common.placeholders().values())


# --- GKE: the project, the network, the subnetwork and the authorized ranges -----------------------------


def gke_program(project_id: Callable[[], pulumi.Input[str]] | None = None) -> Callable[[], None]:
    def program() -> None:
        project = gcp.organizations.Project("vision", project_id=PROJECT_ID, name=PROJECT_ID, org_id="1234567890")
        network = gcp.compute.Network("vpc", name="ml-vpc", project=project.project_id, auto_create_subnetworks=False)
        nodes = gcp.compute.Subnetwork("nodes", name="ml-nodes", project=project.project_id, region="us-central1",
                                       network=network.id, ip_cidr_range="10.10.0.0/20")
        bastion = gcp.compute.Address("bastion", project=project.project_id, region="us-central1")
        cluster = GkeGpuCluster("ml", args={
            "environment": "prod",  # private nodes, so spotkube adds a Cloud Router and NAT on the subnetwork
            "region": "us-central1",
            "gpu_pools": [{"name": "l4-spot", "machine": "g2-standard-8", "max": 2}],
            "cluster": {
                "project": project_id() if project_id else project.project_id,
                "network": network.self_link,
                "subnetwork": nodes.self_link,
                "authorized_ip_ranges": [pulumi.Output.concat(bastion.address, "/32")],
                "deployer": {"egress_ranges": ["203.0.113.0/24"]},
            },
        })
        pulumi.export("workloadPool", cluster.workload_pool)

    return program


@pytest.fixture(scope="module")
def gke() -> Recording:
    return record(gke_program())


NETWORK_LINK = f"https://www.googleapis.com/compute/v1/projects/{PROJECT_ID}/global/networks/ml-vpc"
SUBNETWORK_LINK = f"https://www.googleapis.com/compute/v1/projects/{PROJECT_ID}/regions/us-central1/subnetworks/ml-nodes"


def test_gke_cluster_takes_the_wired_project_network_and_subnetwork(gke: Recording) -> None:
    cluster = only(gke, GKE_CLUSTER)
    assert cluster.inputs["project"] == PROJECT_ID
    assert cluster.inputs["network"] == NETWORK_LINK
    assert cluster.inputs["subnetwork"] == SUBNETWORK_LINK
    assert cluster.inputs["workloadIdentityConfig"]["workloadPool"] == f"{PROJECT_ID}.svc.id.goog"
    for upstream in ("gcp:organizations/project:Project", "gcp:compute/network:Network",
                     "gcp:compute/subnetwork:Subnetwork"):
        assert urn_of(gke, upstream) in cluster.dependencies, upstream
    assert gke.outputs["workloadPool"].value == f"{PROJECT_ID}.svc.id.goog"


def test_gke_every_resource_is_in_the_wired_project(gke: Recording) -> None:
    mine = [r for r in gke.registrations if r.type in (GKE_CLUSTER, NODE_POOL, ACCOUNT, IAM_MEMBER, ROUTER, ROUTER_NAT)]
    assert {r.type for r in mine} == {GKE_CLUSTER, NODE_POOL, ACCOUNT, IAM_MEMBER, ROUTER, ROUTER_NAT}
    assert {r.inputs["project"] for r in mine} == {PROJECT_ID}


def test_gke_nat_serves_the_wired_subnetwork_of_the_wired_network(gke: Recording) -> None:
    assert only(gke, ROUTER).inputs["network"] == NETWORK_LINK
    nat = only(gke, ROUTER_NAT).inputs
    assert nat["sourceSubnetworkIpRangesToNat"] == "LIST_OF_SUBNETWORKS"
    assert [s["name"] for s in nat["subnetworks"]] == [SUBNETWORK_LINK]


def test_gke_authorized_networks_take_the_wired_range_and_the_deployer(gke: Recording) -> None:
    config = only(gke, GKE_CLUSTER).inputs["masterAuthorizedNetworksConfig"]
    assert [b["cidrBlock"] for b in config["cidrBlocks"]] == [f"{BASTION_IP}/32", "203.0.113.0/24"]
    assert [b["displayName"] for b in config["cidrBlocks"]] == ["spotkube-0", "spotkube-1"]
    assert urn_of(gke, "gcp:compute/address:Address") in only(gke, GKE_CLUSTER).dependencies


def test_gke_registers_no_placeholder(gke: Recording) -> None:
    registered = {str(v) for r in gke.registrations for v in values_in(dict(r.inputs))}
    assert not registered & set(common.placeholders().values())


# --- a wired value is checked when it resolves ---------------------------------------------------------------


def test_a_wired_project_that_breaks_a_rule_fails_cleanly_once_resolved() -> None:
    with pytest.raises(ProgramFailed) as failure:
        record(gke_program(lambda: random.RandomPet("name", prefix="Vision_ML").prefix))
    message = str(failure.value)
    assert message == ("GkeGpuCluster 'ml' args: cluster.project: 'Vision_ML' is not a Google Cloud project "
                       "id; use 6-30 lower-case letters, digits and hyphens, starting with a letter")
    # Nothing that needs the project was registered with a wrong one.
    assert not [r for r in failure.value.registrations if r.type in (GKE_CLUSTER, NODE_POOL, ACCOUNT)]


@pytest.mark.parametrize("secret", ["Vision_ML", "Vision_ML_" + "s3cr3t" * 20], ids=["short", "long"])
def test_a_secret_wired_value_is_not_printed(secret: str) -> None:
    """Not even cut short: a message shows a long value's first characters."""
    with pytest.raises(ProgramFailed) as failure:
        record(gke_program(lambda: pulumi.Output.secret(secret)))
    assert "Vision_ML" not in str(failure.value) and "s3cr3t" not in str(failure.value)
    assert "cluster.project: [secret] is not a Google Cloud project id" in str(failure.value)


@pytest.mark.parametrize(("cluster", "message"), [
    (lambda: {"admin_group_object_ids": [pulumi.Output.from_input("platform-admins")], "deployer": DEPLOYER},
     "AksGpuCluster 'ml' args: cluster.admin_group_object_ids[0]: 'platform-admins' is not an Entra ID group "
     "object id"),
    (lambda: {"authorized_ip_ranges": ["203.0.113.0/24", pulumi.Output.from_input("10.0.0.1/8")],
              "deployer": DEPLOYER},
     "AksGpuCluster 'ml' args: cluster.authorized_ip_ranges[1]: '10.0.0.1/8' is not a CIDR"),
    (lambda: {"resource_group_name": pulumi.Output.from_input(None), "deployer": DEPLOYER},
     "AksGpuCluster 'ml' args: cluster.resource_group_name: the Output resolved to None; it must resolve to "
     "a non-empty string"),
], ids=["admin-group", "authorized-range", "nothing"])
def test_wired_aks_values_are_checked_by_the_core_rules(cluster: Callable[[], dict[str, Any]], message: str) -> None:
    with pytest.raises(ProgramFailed) as failure:
        record(aks_program(cluster))
    assert str(failure.value).startswith(message)
    assert not [r for r in failure.value.registrations if r.type == AKS_CLUSTER]


def test_a_wired_value_skips_no_other_check() -> None:
    """The project is an Output, so its own rule waits; the pool's machine is plain and still refused at
    once, before anything of the component is registered."""
    def program() -> None:
        GkeGpuCluster("ml", args={
            "environment": "dev", "region": "us-central1",
            "gpu_pools": [{"name": "l4-spot", "machine": "Standard_NC4as_T4_v3"}],
            "cluster": {"project": pulumi.Output.from_input(PROJECT_ID)},
        })

    with pytest.raises(ProgramFailed) as failure:
        record(program)
    assert "gpu_pools[0].machine" in str(failure.value)
    assert failure.value.registrations == []


def test_wired_value_problems_reads_the_rules_of_the_resolved_value() -> None:
    spec = parse_spec({"cloud": "gke", "environment": "dev", "region": "us-central1",
                       "cluster": {"project": common.placeholders()["project"]}}, "test")
    assert common.wired_value_problems(spec, "project", None, PROJECT_ID) == []
    (problem,) = common.wired_value_problems(spec, "project", None, "x")
    assert (problem.path, problem.message.startswith("'x' is not a Google Cloud project id")) == \
        ("cluster.project", True)


def test_each_cloud_s_spec_marks_its_wired_cluster_args() -> None:
    assert {cloud: set(common.wired_cluster_args(cloud)) for cloud in CLOUDS} == {
        "aks": {"resource_group_name", "admin_group_object_ids", "authorized_ip_ranges"},
        "gke": {"project", "network", "subnetwork", "authorized_ip_ranges"},
    }


@pytest.mark.parametrize(("cloud", "key"),
                         [(cloud, key) for cloud in CLOUDS for key in common.wired_cluster_args(cloud)])
def test_every_placeholder_passes_the_core_rules(cloud: str, key: str) -> None:
    """The placeholders stand in for Outputs while the other rules run, so no rule may refuse one."""
    is_list, placeholder = common.wired_cluster_args(cloud)[key]
    assert common.placeholders()[key] == placeholder
    cluster: dict[str, Any] = {"project": PROJECT_ID} if cloud == "gke" else {}
    cluster[key] = [placeholder] if is_list else placeholder
    spec = parse_spec({"cloud": cloud, "environment": "prod", "region": "uksouth" if cloud == "aks" else "us-central1",
                       "cluster": cluster}, "test")
    assert isinstance(spec, CLOUDS[cloud].spec_model)


# --- Outputs where spotkube must read the value are refused before anything is registered -----------------


@pytest.mark.parametrize(("change", "path"), [
    (lambda a: {**a, "region": pulumi.Output.from_input("uksouth")}, "region"),
    (lambda a: {**a, "gpu_pools": [{**a["gpu_pools"][0], "max": pulumi.Output.from_input(4)}]},
     "gpu_pools[0].max"),
    (lambda a: {**a, "cluster": {"kubernetes_version": pulumi.Output.from_input("1.31")}},
     "cluster.kubernetes_version"),
    (lambda a: {**a, "cluster": {"deployer": {"egress_ranges": [pulumi.Output.from_input("203.0.113.0/24")]}}},
     "cluster.deployer.egress_ranges[0]"),
    (lambda a: {**a, "cluster": pulumi.Output.from_input({"resource_group_name": "ml"})}, "cluster"),
], ids=["region", "pool-max", "version", "deployer-egress", "whole-cluster"])
def test_an_output_in_a_decision_field_is_refused(change: Callable[[dict], dict], path: str) -> None:
    args = {"environment": "dev", "region": "uksouth",
            "gpu_pools": [{"name": "t4spot", "machine": "Standard_NC4as_T4_v3"}]}
    with pytest.raises(ProgramFailed) as failure:
        record(lambda: AksGpuCluster("ml", args=change(args)))  # type: ignore[arg-type]
    assert f"AksGpuCluster 'ml' args: {path}: is an Output, but spotkube reads it before anything is registered" \
        in str(failure.value)
    assert failure.value.registrations == []


def test_a_whole_list_output_is_refused_with_the_reason() -> None:
    def program() -> None:
        AksGpuCluster("ml", args={"environment": "dev", "region": "uksouth", "cluster": {
            "admin_group_object_ids": pulumi.Output.from_input([PLAIN_GROUP])}})  # type: ignore[typeddict-item]

    with pytest.raises(ProgramFailed) as failure:
        record(program)
    assert ("cluster.admin_group_object_ids: is an Output of a whole list; give a plain list whose items "
            "may be Outputs") in str(failure.value)


@pytest.mark.parametrize(("build", "message"), [
    (lambda: NvidiaDevicePlugin("gpus", args={"cloud": "aks", "version": pulumi.Output.from_input("v0.20.0")}),
     "NvidiaDevicePlugin 'gpus' args: version: is an Output"),
    (lambda: KubeflowPipelines("kfp", args={"eviction_retry_limit": pulumi.Output.from_input(3)}),
     "KubeflowPipelines 'kfp' args: eviction_retry_limit: is an Output"),
], ids=["device-plugin", "kubeflow"])
def test_add_ons_accept_no_output(build: Callable[[], object], message: str) -> None:
    with pytest.raises(ProgramFailed) as failure:
        record(build)  # type: ignore[arg-type]
    assert message in str(failure.value) and "none of its args accepts an Output" in str(failure.value)
    assert failure.value.registrations == []
