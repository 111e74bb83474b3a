"""The team's own clusters, made without spotkube, and spotkube's pools and add-ons on them."""

import base64

import pulumi
import pulumi_azure_native as azure
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

from spotkube import AksGpuNodePool, GkeGpuNodePool, KubeflowPipelines, NvidiaDevicePlugin
from spotkube.clouds.aks.kubeconfig import with_kubelogin_mode

config = pulumi.Config()

# --- AKS: the team's cluster, with its own system pool ----------------------------------------------
group = azure.resources.ResourceGroup("vision", location="eastus")
cluster = azure.containerservice.ManagedCluster(
    "vision",
    resource_group_name=group.name,
    location="eastus",
    dns_prefix="vision",
    identity={"type": "SystemAssigned"},
    agent_pool_profiles=[{"name": "system", "mode": "System", "vm_size": "Standard_D4s_v5", "count": 2,
                          "os_type": "Linux", "type": "VirtualMachineScaleSets"}],
    # After `pulumi refresh` the cluster lists every pool, the ones added below included
    # (pulumi-azure-native#1686): the cluster leaves its pools to their own resources.
    opts=pulumi.ResourceOptions(ignore_changes=["agentPoolProfiles"]),
)

# Spot H100 nodes from zero, and an on-demand A100 pool to fall back to; AKS runs one pool operation
# at a time, so the second waits for the first.
h100 = AksGpuNodePool("h100spot", args={
    "cluster_id": cluster.id, "region": "eastus",
    "name": "h100spot", "machine": "Standard_NC40ads_H100_v5", "min": 0, "max": 4,
})
a100 = AksGpuNodePool("a100demand", args={
    "cluster_id": cluster.id, "region": "eastus",
    "name": "a100demand", "machine": "Standard_NC24ads_A100_v4", "capacity": "on-demand", "max": 2,
}, opts=pulumi.ResourceOptions(depends_on=[h100]))

# AKS hands out a kubeconfig whose kubelogin asks a person for a device code; CI signs in as itself.
credentials = azure.containerservice.list_managed_cluster_user_credentials_output(
    resource_group_name=group.name, resource_name=cluster.name)
kubeconfig = pulumi.Output.secret(credentials.kubeconfigs[0].value.apply(
    lambda v: with_kubelogin_mode(base64.b64decode(v).decode(), "azurecli")))
aks = k8s.Provider("vision-aks", kubeconfig=kubeconfig, opts=pulumi.ResourceOptions(depends_on=[h100, a100]))

NvidiaDevicePlugin.for_pools("nvidia", [h100, a100], opts=pulumi.ResourceOptions(provider=aks))
# Kubeflow's own services run on the team's untainted system pool, which spotkube didn't make.
KubeflowPipelines("kfp", args={
    "version": "2.17.0", "platform_pool_labels": {"kubernetes.azure.com/agentpool": "system"},
}, opts=pulumi.ResourceOptions(providers=[aks]))

# --- GKE: the team's regional cluster, and a spot L4 pool on it --------------------------------------
project = config.require("gcpProject")
gke = gcp.container.Cluster(
    "inference", project=project, location="us-central1", initial_node_count=1, remove_default_node_pool=True,
    workload_identity_config={"workload_pool": f"{project}.svc.id.goog"}, deletion_protection=False,
)
nodes = gcp.serviceaccount.Account("inference-nodes", account_id="inference-nodes", project=project)
# Spot L4 nodes for the GPU steps, and spot CPU nodes for the steps around them, from zero.
l4 = GkeGpuNodePool("l4spot", args={
    "cluster_id": gke.id, "region": "us-central1", "project": project, "service_account": nodes.email,
    "name": "l4spot", "machine": "g2-standard-8", "max": 4,
})
cpu = GkeGpuNodePool("cpuspot", args={
    "cluster_id": gke.id, "region": "us-central1", "project": project, "service_account": nodes.email,
    "name": "cpuspot", "machine": "n2-standard-8", "max": 10,
})

pulumi.export("aksPools", [h100.contract, a100.contract])
pulumi.export("gkePools", [l4.contract, cpu.contract])
