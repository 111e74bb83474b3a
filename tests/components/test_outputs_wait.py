"""A cluster's outputs resolve only once every resource it registered exists, pools included.

A consumer builds on `cluster.kubeconfig` or `cluster.provider` (a DaemonSet, a Job) and reads the
outputs inside `apply`; neither may run while a GPU pool is still being created. Under Pulumi's mocks
a resource exists once the mocks answered for it, so recording, in one list, each answer and each
output's apply shows the order; with many pools, an output that didn't wait would run among them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
import pytest
from pulumi.runtime import settings

from spotkube import AksGpuCluster, GkeGpuCluster
from spotkube.components.mock_host import owned_event_loops
from spotkube.testing import SpotkubeMocks

POOLS = 12
AKS_POOL = "azure-native:containerservice:AgentPool"
GKE_POOL = "gcp:container/nodePool:NodePool"
CONSUMERS_CONFIGMAP = "kubernetes:core/v1:ConfigMap"


class OrderMocks(SpotkubeMocks):
    """SpotkubeMocks that note each resource they create, in order, in `events` (as `(type, name)`)."""

    def __init__(self, events: list[Any]) -> None:
        self.events = events

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        answer = super().new_resource(args)
        self.events.append((args.typ, args.name))
        return answer


def aks() -> AksGpuCluster:
    return AksGpuCluster("ml", args={
        "environment": "dev", "region": "uksouth",
        "gpu_pools": [{"name": f"t4spot{i}", "machine": "Standard_NC4as_T4_v3", "max": 2} for i in range(POOLS)],
        "cluster": {"deployer": {"object_id": "c0ffee00-0000-4000-8000-000000000001",
                                 "principal_type": "ServicePrincipal"}},
    })


def gke() -> GkeGpuCluster:
    return GkeGpuCluster("ml", args={
        "environment": "dev", "region": "us-central1", "cluster": {"project": "vision-ml-dev"},
        "gpu_pools": [{"name": f"l4-spot{i}", "machine": "g2-standard-8", "max": 2} for i in range(POOLS)],
    })


OUTPUTS = {"aks": ["kubeconfig", "cluster_name", "resource_group_name", "oidc_issuer_url", "pool_contracts",
                   "log_workspace_id"],
           "gke": ["kubeconfig", "cluster_name", "endpoint", "workload_pool", "node_service_account_email",
                   "pool_contracts"]}
#: Each cloud's builder, its pool resource, and how many of them: the GPU pools, the platform pool, and
#: on GKE the system pool (AKS's is inline in the ManagedCluster).
CASES = {"aks": (aks, AKS_POOL, POOLS + 1), "gke": (gke, GKE_POOL, POOLS + 2)}


def events_of(build: Callable[[], AksGpuCluster | GkeGpuCluster], outputs: list[str]) -> list[Any]:
    """The resources the mocks created and the outputs' applies, in the order they happened; a
    consumer's ConfigMap is deployed through the cluster's provider."""
    events: list[Any] = []
    with owned_event_loops():
        settings.reset_options(project="consumer", stack="test", preview=False)
        pulumi.runtime.set_mocks(OrderMocks(events), project="consumer", stack="test", preview=False)

        @pulumi.runtime.test
        def program() -> pulumi.Output[Any]:
            cluster = build()
            k8s.core.v1.ConfigMap("team-settings", data={"team": "vision"},
                                  opts=pulumi.ResourceOptions(provider=cluster.provider))
            return pulumi.Output.all(*(
                getattr(cluster, key).apply(lambda _, key=key: events.append(f"output {key}"))
                for key in outputs
            ))

        program()
    return events


@pytest.mark.parametrize("cloud", sorted(CASES))
def test_every_output_resolves_after_every_pool_exists(cloud: str) -> None:
    build, pool_type, count = CASES[cloud]
    events = events_of(build, OUTPUTS[cloud])
    pools = [i for i, event in enumerate(events) if isinstance(event, tuple) and event[0] == pool_type]
    assert len(pools) == count
    resolved = {event: i for i, event in enumerate(events) if isinstance(event, str)}
    assert set(resolved) == {f"output {key}" for key in OUTPUTS[cloud]}
    assert min(resolved.values()) > max(pools), events
    cluster_children = [i for i, event in enumerate(events)
                        if isinstance(event, tuple) and event[1].startswith("ml-")]
    assert min(resolved.values()) > max(cluster_children), events


@pytest.mark.parametrize("cloud", sorted(CASES))
def test_what_deploys_through_the_provider_comes_after_every_pool(cloud: str) -> None:
    build, pool_type, count = CASES[cloud]
    events = events_of(build, ["kubeconfig"])
    pools = [i for i, event in enumerate(events) if isinstance(event, tuple) and event[0] == pool_type]
    (configmap,) = [i for i, event in enumerate(events) if event == (CONSUMERS_CONFIGMAP, "team-settings")]
    assert len(pools) == count and configmap > max(pools), events
