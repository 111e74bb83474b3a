"""This repository's own Pulumi program: one spotkube platform per stack.

Thin wiring only: read the stack's config, build the cluster for its cloud, export the outputs.
The offline plan (`spotkube plan`) runs this very file under Pulumi mocks.
"""

from pathlib import Path

import pulumi

from spotkube import KubeflowPipelines, KubeflowTrainer, Kueue, NvidiaDevicePlugin
from spotkube.components.program import cluster_component, read_stack_spec

spec = read_stack_spec(Path(__file__).parent)
# AksGpuCluster or GkeGpuCluster: only this stack's cloud is imported, each cloud SDK taking a second or
# more to load.
cluster = cluster_component(spec).from_spec("spotkube", spec)

# The add-ons deploy through the cluster's provider, which waits for its pools and grants: depending on the
# cluster component as well would make each add-on depend on every resource of the cluster, one by one.
on_cluster = pulumi.ResourceOptions(providers=[cluster.provider])
if spec.device_plugin.enabled and spec.gpu_pools:
    NvidiaDevicePlugin.from_spec("nvidia-device-plugin", spec, opts=on_cluster)
if spec.kubeflow.enabled:
    kubeflow = KubeflowPipelines.from_spec("kubeflow-pipelines", spec, opts=on_cluster)
    # Kueue's LocalQueue lives in Kubeflow's namespace (the stack's rules refuse Kueue without Kubeflow).
    if spec.kueue.enabled:
        kueue = Kueue.from_spec("kueue", spec, opts=pulumi.ResourceOptions.merge(on_cluster, pulumi.ResourceOptions(
            depends_on=[kubeflow])))
        # TrainJobs name Kueue's LocalQueue, which admits their workers at once (the stack's rules refuse
        # training without Kueue).
        if spec.training.enabled:
            KubeflowTrainer.from_spec("kubeflow-trainer", spec, opts=pulumi.ResourceOptions.merge(
                on_cluster, pulumi.ResourceOptions(depends_on=[kueue])))

pulumi.export("kubeconfig", cluster.kubeconfig)
pulumi.export("clusterName", cluster.cluster_name)
pulumi.export("poolContracts", cluster.pool_contracts)
# A cluster that keeps container logs in a workspace of its own (AKS's Log Analytics) names it:
# `spotkube logs --workspace` needs its id.
if hasattr(cluster, "log_workspace_id"):
    pulumi.export("logWorkspaceId", cluster.log_workspace_id)
