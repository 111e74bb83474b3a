"""`spotkube.testing` and the components under Pulumi's own unit-test mocks, as a consumer's tests run them.

Each test does what Pulumi's unit-testing guide shows: `pulumi.runtime.set_mocks(...)`, then a
`@pulumi.runtime.test` function that builds the components and returns an Output the runtime awaits.
Under `SpotkubeMocks` every output resolves to a value shaped like the cloud's; under a plain `Mocks`
that answers `{}` to every invoke, the components still register every resource, leave what only a
cloud can tell unknown, and say so in a warning that names `spotkube.testing`.
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pytest
import yaml
from pulumi.runtime import settings

import spotkube.testing
from spotkube import AksGpuCluster, AksGpuNodePool, GkeGpuCluster, GkeGpuNodePool, KubeflowPipelines, NvidiaDevicePlugin
from spotkube.components.mock_host import owned_event_loops
from spotkube.platform import contract
from spotkube.testing import SpotkubeMocks

DEPLOYER = {"login": "workloadidentity", "object_id": "c0ffee00-0000-4000-8000-000000000001",
            "principal_type": "ServicePrincipal"}
AKS_ARGS: dict[str, Any] = {
    "environment": "dev", "region": "uksouth",
    "gpu_pools": [{"name": "t4spot", "machine": "Standard_NC4as_T4_v3", "max": 4}],
    "cluster": {"deployer": DEPLOYER},
}
GKE_ARGS: dict[str, Any] = {
    "environment": "dev", "region": "us-central1", "cluster": {"project": "vision-ml-dev"},
    "gpu_pools": [{"name": "l4-spot", "machine": "g2-standard-8", "max": 4}],
}


class PlainMocks(pulumi.runtime.Mocks):
    """The mocks of Pulumi's unit-testing guide: inputs echoed as state, `{}` for every invoke."""

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict]:
        return f"{args.name}_id", args.inputs

    def call(self, args: pulumi.runtime.MockCallArgs) -> dict:  # type: ignore[override]
        return {}


class NothingMocks(PlainMocks):
    """Stricter still: no state at all for any resource."""

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict]:
        return f"{args.name}_id", {}


@dataclass
class Run:
    """What a program registered (type, name), the warnings it logged and the values it handed back."""

    registered: list[tuple[str, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    values: dict[str, Any] = field(default_factory=dict)


class _Warnings(logging.Handler):
    def __init__(self, into: list[str]) -> None:
        super().__init__(logging.WARNING)
        self.into = into

    def emit(self, record: logging.LogRecord) -> None:
        self.into.append(record.getMessage())


def _recording(mocks: pulumi.runtime.Mocks, run: Run) -> pulumi.runtime.Mocks:
    """The mocks, with every resource they are asked for noted in `run` (their answers untouched)."""
    answer = mocks.new_resource

    def new_resource(args: pulumi.runtime.MockResourceArgs) -> tuple[Any, dict]:
        run.registered.append((args.typ, args.name))
        return answer(args)

    mocks.new_resource = new_resource  # type: ignore[method-assign]
    return mocks


def run_under(mocks: pulumi.runtime.Mocks, program: Callable[[], dict[str, pulumi.Output[Any]]]) -> Run:
    """`program` as a consumer's unit test runs it; each returned Output's (known, value) lands in `values`."""
    run = Run()
    logger = logging.getLogger(f"spotkube.tests.mocks.{id(run)}")
    logger.propagate = False
    logger.addHandler(_Warnings(run.warnings))
    with owned_event_loops():
        settings.reset_options(project="consumer", stack="test", preview=False)
        pulumi.runtime.set_mocks(_recording(mocks, run), project="consumer", stack="test", preview=False, logger=logger)

        @pulumi.runtime.test
        def test() -> pulumi.Output[Any]:
            outputs = program()
            pairs = [pulumi.Output.all(pulumi.Output.from_input(o.is_known()), o.apply(lambda v: v, True))
                     .apply(lambda known_value, key=key: run.values.__setitem__(key, tuple(known_value)), True)
                     for key, o in outputs.items()]
            return pulumi.Output.all(*pairs)

        test()
    return run


def aks_platform() -> dict[str, pulumi.Output[Any]]:
    cluster = AksGpuCluster("ml", args=AKS_ARGS)
    NvidiaDevicePlugin.for_cluster("gpus", cluster)
    KubeflowPipelines("kfp", args={}, opts=pulumi.ResourceOptions(providers=[cluster.provider]))
    return {"kubeconfig": cluster.kubeconfig, "pools": cluster.pool_contracts}


def gke_platform() -> dict[str, pulumi.Output[Any]]:
    cluster = GkeGpuCluster("ml", args=GKE_ARGS)
    NvidiaDevicePlugin.for_cluster("gpus", cluster)
    KubeflowPipelines("kfp", args={}, opts=pulumi.ResourceOptions(providers=[cluster.provider]))
    return {"kubeconfig": cluster.kubeconfig, "pools": cluster.pool_contracts}


PLATFORMS = {"aks": aks_platform, "gke": gke_platform}
#: What each cloud's platform registers whatever the mocks answer: cluster, pools, the provider and add-ons.
EXPECTED = {
    "aks": {("azure-native:containerservice:ManagedCluster", "ml-aks"),
            ("azure-native:containerservice:AgentPool", "ml-t4spot"),
            ("azure-native:authorization:RoleAssignment", "ml-rbac-deployer"),
            ("time:index/sleep:Sleep", "ml-rbac-propagation"),
            ("pulumi:providers:kubernetes", "ml-k8s"),
            ("kubernetes:apps/v1:DaemonSet", "gpus"),
            ("spotkube:index:KubeflowPipelines", "kfp")},
    "gke": {("gcp:container/cluster:Cluster", "ml-gke"),
            ("gcp:container/nodePool:NodePool", "ml-l4-spot"),
            ("gcp:serviceaccount/account:Account", "ml-nodes"),
            ("pulumi:providers:kubernetes", "ml-k8s"),
            ("spotkube:index:KubeflowPipelines", "kfp")},
}


@pytest.fixture(scope="module", params=sorted(PLATFORMS))
def cloud(request: pytest.FixtureRequest) -> Iterator[str]:
    yield request.param


@pytest.mark.parametrize("mocks", [PlainMocks, NothingMocks], ids=["inputs-as-state", "no-state"])
def test_under_a_plain_mocks_everything_registers_and_the_kubeconfig_stays_unknown(
    cloud: str, mocks: type[pulumi.runtime.Mocks],
) -> None:
    run = run_under(mocks(), PLATFORMS[cloud])
    assert EXPECTED[cloud] <= set(run.registered)
    known, _ = run.values["kubeconfig"]
    assert known is False
    pools_known, pools = run.values["pools"]
    assert pools_known and {p["name"] for p in pools} >= {"system", "platform"}
    unanswered = [w for w in run.warnings if "spotkube.testing.SpotkubeMocks" in w]
    assert unanswered, run.warnings
    assert all(w.startswith(("AksGpuCluster 'ml': ", "GkeGpuCluster 'ml': ")) for w in unanswered)


def pools_on_a_teams_clusters() -> dict[str, pulumi.Output[Any]]:
    """A consumer's program that adds spotkube's pools to clusters it made itself."""
    import pulumi_azure_native as azure
    import pulumi_gcp as gcp

    group = azure.resources.ResourceGroup("team", location="eastus")
    aks = azure.containerservice.ManagedCluster("team", resource_group_name=group.name, location="eastus",
                                                dns_prefix="team")
    gke = gcp.container.Cluster("team", project="vision-ml-dev", location="us-central1", initial_node_count=1)
    h100 = AksGpuNodePool("h100spot", args={"cluster_id": aks.id, "region": "eastus", "name": "h100spot",
                                            "machine": "Standard_NC40ads_H100_v5"})
    l4 = GkeGpuNodePool("l4spot", args={"cluster_id": gke.id, "region": "us-central1", "project": "vision-ml-dev",
                                        "name": "l4spot", "machine": "g2-standard-8"})
    return {"h100": h100.contract, "l4": l4.contract}


def test_under_spotkube_mocks_pools_on_a_teams_clusters_hand_out_their_contracts() -> None:
    run = run_under(SpotkubeMocks(), pools_on_a_teams_clusters)
    assert {("azure-native:containerservice:AgentPool", "h100spot"), ("gcp:container/nodePool:NodePool", "l4spot")} \
        <= set(run.registered)
    (h100_known, h100), (l4_known, l4) = run.values["h100"], run.values["l4"]
    assert h100_known and l4_known
    assert "kubernetes.azure.com/scalesetpriority=spot:NoSchedule" in h100["taints"]
    assert l4["labels"]["cloud.google.com/gke-nodepool"] == "l4spot"
    assert not [w for w in run.warnings if "spotkube.testing" in w]


def test_under_spotkube_mocks_the_aks_kubeconfig_is_the_rewritten_aks_one() -> None:
    run = run_under(SpotkubeMocks(), aks_platform)
    known, kubeconfig = run.values["kubeconfig"]
    assert known
    (user,) = yaml.safe_load(kubeconfig)["users"]
    assert user["user"]["exec"]["command"] == "kubelogin"
    assert user["user"]["exec"]["args"][:3] == ["get-token", "--login", "workloadidentity"]
    assert not [w for w in run.warnings if "spotkube.testing" in w]


def test_under_spotkube_mocks_the_gke_kubeconfig_uses_the_dns_endpoint() -> None:
    run = run_under(SpotkubeMocks(), gke_platform)
    known, kubeconfig = run.values["kubeconfig"]
    assert known
    (cluster,) = yaml.safe_load(kubeconfig)["clusters"]
    assert cluster["cluster"]["server"] == f"https://{spotkube.testing.GKE_DNS_ENDPOINT}"
    (pool,) = [p for p in run.values["pools"][1] if p["name"] == "l4-spot"]
    assert str(contract.GPU_TAINT) in pool["taints"]


def test_the_mocks_answer_with_the_clouds_shapes() -> None:
    credentials = spotkube.testing.call_result(spotkube.testing.AKS_CREDENTIALS_TOKEN)
    assert credentials is not None
    (kubeconfig,) = credentials["kubeconfigs"]
    assert kubeconfig["name"] == "clusterUser"
    assert base64.b64decode(kubeconfig["value"]).decode() == spotkube.testing.AKS_USER_KUBECONFIG
    config = spotkube.testing.call_result(spotkube.testing.AZURE_CLIENT_CONFIG_TOKEN)
    assert set(config or {}) == {"clientId", "objectId", "subscriptionId", "tenantId"}
    assert spotkube.testing.call_result("aws:index/getRegion:getRegion") is None
    network = spotkube.testing.computed_outputs("gcp:compute/network:Network", "vpc", {"project": "p-1", "name": "ml"})
    assert network["selfLink"] == "https://www.googleapis.com/compute/v1/projects/p-1/global/networks/ml"


def test_a_consumers_mocks_subclass_it_and_hand_the_rest_back() -> None:
    """A consumer answers its own invoke and leaves spotkube's to `SpotkubeMocks`."""

    class TeamMocks(SpotkubeMocks):
        def call(self, args: pulumi.runtime.MockCallArgs) -> dict:  # type: ignore[override]
            if args.token == "azure-native:resources:getResourceGroup":
                return {"location": "uksouth", "name": args.args["resourceGroupName"]}
            return super().call(args)

    def program() -> dict[str, pulumi.Output[Any]]:
        import pulumi_azure_native as azure

        group = azure.resources.get_resource_group_output(resource_group_name="ml-shared")
        cluster = AksGpuCluster("ml", args={**AKS_ARGS, "cluster": {"resource_group_name": group.name,
                                                                  "deployer": DEPLOYER}})
        return {"kubeconfig": cluster.kubeconfig, "group": group.location}

    run = run_under(TeamMocks(), program)
    assert run.values["group"] == (True, "uksouth")
    assert run.values["kubeconfig"][0] is True
    assert ("azure-native:resources:ResourceGroup", "ml-rg") not in run.registered
