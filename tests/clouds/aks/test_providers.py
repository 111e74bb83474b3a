"""The Azure resource provider namespaces a stack needs registered follow from what its program registers."""

from __future__ import annotations

from pathlib import Path

from spotkube.clouds.aks.providers import needed_namespaces
from spotkube.components.offline import run_stack
from spotkube.platform.project import find_project

REPO = Path(__file__).resolve().parents[3]


def test_every_type_the_shipped_aks_stacks_register_has_its_namespace() -> None:
    project = find_project(REPO)
    runs = [run_stack(project, name) for name in project.stacks() if name.startswith("aks-")]
    types = {r.type for run in runs for r in run.registrations}
    namespaces = needed_namespaces(types)
    assert namespaces.unknown_types == (), "add these types to RESOURCE_TYPES in clouds/aks/identities.py"
    # aks-prod-eastus sends its logs to Container Insights: a workspace and data collection rules; its
    # capacity reservation makes the cluster run as a user-assigned identity
    assert namespaces.needed == ("Microsoft.Compute", "Microsoft.ContainerService", "Microsoft.Insights",
                                 "Microsoft.ManagedIdentity", "Microsoft.Network", "Microsoft.OperationalInsights",
                                 "Microsoft.Storage")


def test_a_type_spotkube_does_not_know_is_named_not_dropped() -> None:
    namespaces = needed_namespaces(["azure-native:network:VirtualNetwork", "kubernetes:core/v1:ConfigMap",
                                    "azure-native:containerservice:ManagedCluster"])
    assert namespaces.unknown_types == ("azure-native:network:VirtualNetwork",)
    assert "Microsoft.ContainerService" in namespaces.needed
