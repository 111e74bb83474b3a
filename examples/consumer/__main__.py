"""The vision team's GPU platforms: spot A100s on AKS for training, spot L4s on GKE for inference.

What a repository that is not spotkube writes to use it: import the components, give them this
team's own pools and settings as typed args (`spotkube.GpuClusterArgs`), and export what its
workloads need. Bad args fail before anything is registered, with the key and what is accepted.
"""

import pulumi

from spotkube import AksGpuCluster, GkeGpuCluster, GpuClusterArgs, NvidiaDevicePlugin

config = pulumi.Config()
environment = config.get("environment") or "dev"

training: GpuClusterArgs = {
    "environment": environment,
    "region": "northeurope",
    "system_pool": {"machine": "Standard_D4s_v3", "min": 2, "max": 3},
    "gpu_pools": [
        # Never pay more than $2.50/h for a spot A100: above that, the job waits.
        {"name": "a100spot", "machine": "Standard_NC24ads_A100_v4", "max_price": 2.5, "max": 6,
         "labels": {"team": "vision"}},
        {"name": "t4spot", "machine": "Standard_NC4as_T4_v3", "max": 4, "labels": {"team": "vision"}},
    ],
    "cluster": {
        "authorized_ip_ranges": ["203.0.113.0/24"],
        # Who runs `pulumi up` (CI's deploy identity): it gets the RBAC Cluster Admin role on the cluster.
        # Its object id: az ad sp show --id <appId> --query id -o tsv.
        "deployer": {"object_id": config.require("deployerObjectId"), "principal_type": "ServicePrincipal"},
    },
}
aks = AksGpuCluster("vision-training", args=training)
# AKS nodes ship the NVIDIA driver but no device plugin. Built for the cluster, the plugin knows its cloud
# and tolerates every GPU pool's taints, and deploys through the cluster's provider once the cluster exists.
NvidiaDevicePlugin.for_cluster("vision-training-gpus", aks)

inference: GpuClusterArgs = {
    "environment": environment,
    "region": "europe-west4",
    "gpu_pools": [
        {"name": "l4-spot", "machine": "g2-standard-8", "max": 8, "labels": {"team": "vision"}},
    ],
    "cluster": {"project": config.require("gcpProject"), "channel": "STABLE"},
}
gke = GkeGpuCluster("vision-inference", args=inference)

pulumi.export("trainingKubeconfig", aks.kubeconfig)
pulumi.export("inferenceKubeconfig", gke.kubeconfig)
pulumi.export("trainingPools", aks.pool_contracts)
pulumi.export("inferencePools", gke.pool_contracts)
