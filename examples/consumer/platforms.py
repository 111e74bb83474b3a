"""The vision team's GPU platforms: spot A100s and T4s on AKS for training, spot L4s on GKE for inference.

What a repository that is not spotkube writes to use it: its own resources (a resource group on Azure,
a VPC and subnetwork on Google Cloud), spotkube's components
wired to them, and this team's pools and settings as each component's typed args
(`spotkube.AksGpuClusterArgs`, `spotkube.GkeGpuClusterArgs`). Bad args fail before anything is
registered, with the key and what is accepted.

Each platform is a function, so the unit tests in tests/ build it under Pulumi's mocks
(`spotkube.testing.SpotkubeMocks`) exactly as `__main__.py` builds it under `pulumi up`.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_azure_native as azure
import pulumi_gcp as gcp

from spotkube import (
    AksGpuCluster,
    AksGpuClusterArgs,
    GkeGpuCluster,
    GkeGpuClusterArgs,
    KubeflowPipelines,
    NvidiaDevicePlugin,
)

TEAM_LABELS = {"team": "vision"}
#: The public range the CI runners leave through (their NAT gateway's, a documentation range here): the
#: only one the AKS API server admits, and the one the deployer connects from.
RUNNER_EGRESS = "203.0.113.7/32"


@dataclass
class Training:
    """The AKS platform and the resources this repository owns around it."""

    group: azure.resources.ResourceGroup
    cluster: AksGpuCluster
    pipelines: KubeflowPipelines


@dataclass
class Inference:
    """The GKE platform and the VPC this repository owns for it."""

    network: gcp.compute.Network
    subnetwork: gcp.compute.Subnetwork
    cluster: GkeGpuCluster


def training(environment: str, deployer_object_id: str, runner_egress: str = RUNNER_EGRESS) -> Training:
    """AKS in this team's own resource group, reachable from its CI runners' static egress only."""
    group = azure.resources.ResourceGroup("vision-training", location="northeurope")
    args: AksGpuClusterArgs = {
        "environment": environment,
        "region": "northeurope",
        "system_pool": {"machine": "Standard_D4s_v3", "min": 2, "max": 3},
        "gpu_pools": [
            # Never pay more than $2.50/h for a spot A100: above that, the job waits.
            {"name": "a100spot", "machine": "Standard_NC24ads_A100_v4", "max_price": 2.5, "max": 6,
             "labels": TEAM_LABELS},
            {"name": "t4spot", "machine": "Standard_NC4as_T4_v3", "max": 4, "labels": TEAM_LABELS},
            # When spot capacity is out, the autoscaler falls back to these; at 0 nodes they cost nothing.
            {"name": "a100ondemand", "machine": "Standard_NC24ads_A100_v4", "capacity": "on-demand", "max": 1,
             "labels": TEAM_LABELS},
            {"name": "t4ondemand", "machine": "Standard_NC4as_T4_v3", "capacity": "on-demand", "max": 1,
             "labels": TEAM_LABELS},
        ],
        "cluster": {
            "resource_group_name": group.name,  # another resource's output
            "authorized_ip_ranges": [runner_egress],
            # Who runs `pulumi up` (CI's deploy identity): it gets the RBAC Cluster Admin role on the cluster.
            # Its object id: az ad sp show --id <appId> --query id -o tsv. It connects from the runners' egress,
            # which the API server admits: the deploy preflight checks the two agree (README.md).
            "deployer": {"object_id": deployer_object_id, "principal_type": "ServicePrincipal",
                         "egress_ranges": [runner_egress]},
            # The guards spotkube turns on in prod, on here too: Entra ID is the only way in, `pulumi destroy`
            # must unprotect the cluster first, and a step's logs outlive the spot node that ran it.
            "local_accounts_disabled": True,
            "deletion_protection": True,
            "logs": {"enabled": True},
        },
    }
    cluster = AksGpuCluster("vision-training", args=args)
    # AKS nodes ship the NVIDIA driver but no device plugin. Built for the cluster, the plugin knows its
    # cloud and tolerates every GPU pool's taints, and deploys through the cluster's provider.
    NvidiaDevicePlugin.for_cluster("vision-training-gpus", cluster)
    pipelines = KubeflowPipelines(
        "vision-pipelines", args={"version": "2.17.0"},
        opts=pulumi.ResourceOptions(providers=[cluster.provider]),
    )
    return Training(group, cluster, pipelines)


def inference(environment: str, project: str, runner_egress: str = RUNNER_EGRESS) -> Inference:
    """GKE in a VPC and subnetwork of this team's own, in its Google Cloud project."""
    network = gcp.compute.Network("vision-vpc", project=project, auto_create_subnetworks=False)
    subnetwork = gcp.compute.Subnetwork(
        "vision-nodes", project=project, region="europe-west4", network=network.id, ip_cidr_range="10.20.0.0/20",
    )
    args: GkeGpuClusterArgs = {
        "environment": environment,
        "region": "europe-west4",
        "gpu_pools": [
            {"name": "l4-spot", "machine": "g2-standard-8", "max": 8, "labels": TEAM_LABELS},
            # Scoring falls back to it when spot L4s are out; at 0 nodes it costs nothing.
            {"name": "l4-ondemand", "machine": "g2-standard-8", "capacity": "on-demand", "max": 2,
             "labels": TEAM_LABELS},
        ],
        "cluster": {
            "project": project,
            "channel": "STABLE",
            "network": network.self_link,
            "subnetwork": subnetwork.self_link,
            # Private nodes (spotkube adds Cloud NAT for their way out), an API server the CI runners alone
            # reach, and `pulumi destroy` must unprotect the cluster first.
            "private": True,
            "authorized_ip_ranges": [runner_egress],
            "deletion_protection": True,
        },
    }
    return Inference(network, subnetwork, GkeGpuCluster("vision-inference", args=args))
