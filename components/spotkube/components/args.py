"""The typed args of the add-on components, generated from `spotkube.platform.spec` by `python -m
spotkube.cli.reference write`; do not edit: change the models (or `spotkube.platform.args_source` for the keys
they don't have) and regenerate. They are the components' public, cross-language API, as the cluster
components' are; none of them accepts an Output.
"""

from typing import NotRequired, TypedDict


class NvidiaDevicePluginArgs(TypedDict):
    """The args of `NvidiaDevicePlugin`: NVIDIA's device plugin settings and the cluster's cloud and taints. `enabled` is not an arg: not creating the component says so."""

    cloud: str
    """The cluster's cloud: `aks` (deploys NVIDIA's plugin as a DaemonSet) or `gke` (keeps GKE's managed plugin, deploys nothing). Python: use `NvidiaDevicePlugin.for_cluster(name, cluster)`, which takes it from the cluster."""
    version: NotRequired[str]
    """NVIDIA k8s-device-plugin release: the image tag. Default: `v0.20.0`."""
    mig_strategy: NotRequired[str]
    """How the plugin spotkube deploys (AKS) advertises MIG instances: `single` as `nvidia.com/gpu` (as GKE's own plugin does, so one pipeline runs on both), `mixed` as `nvidia.com/mig-<profile>`. Default: `single`."""
    image: NotRequired[str]
    """Image repository without a tag, e.g. a mirror when nodes can't reach nvcr.io. Default: `nvcr.io/nvidia/k8s-device-plugin`."""
    extra_taints: NotRequired[list[str]]
    """Taints your GPU pools carry beyond spotkube's own, as key=value:Effect; the plugin tolerates them. Python: `NvidiaDevicePlugin.for_cluster` tolerates every GPU pool's own taints without them."""


class DevicePluginSettingsArgs(TypedDict):
    """The device plugin's own settings, for `NvidiaDevicePlugin.for_cluster` (Python only): the cluster gives the cloud and the GPU pools' taints."""

    version: NotRequired[str]
    """NVIDIA k8s-device-plugin release: the image tag. Default: `v0.20.0`."""
    mig_strategy: NotRequired[str]
    """How the plugin spotkube deploys (AKS) advertises MIG instances: `single` as `nvidia.com/gpu` (as GKE's own plugin does, so one pipeline runs on both), `mixed` as `nvidia.com/mig-<profile>`. Default: `single`."""
    image: NotRequired[str]
    """Image repository without a tag, e.g. a mirror when nodes can't reach nvcr.io. Default: `nvcr.io/nvidia/k8s-device-plugin`."""


class KubeflowPipelinesArgs(TypedDict):
    """The args of `KubeflowPipelines`: Kubeflow Pipelines standalone, installed from its kustomize manifests and kept on on-demand nodes, with its default credentials replaced and spot-safe retries for pipeline steps."""

    version: NotRequired[str]
    """KFP release: the git ref of the manifests. Default: `2.17.0`."""
    repository: NotRequired[str]
    """Git repository of the manifests, e.g. a mirror (it must keep KFP's layout); needs git at deploy time. Default: `https://github.com/kubeflow/pipelines`."""
    expose_ui: NotRequired[bool]
    """Give the UI a public LoadBalancer, with a warning: KFP standalone has no login, so prefer kubectl port-forward. Default: `false`."""
    ui_source_ranges: NotRequired[list[str]]
    """With `exposeUi` only: CIDRs allowed to reach the UI (the Service's loadBalancerSourceRanges)."""
    storage_class: NotRequired[str]
    """StorageClass of the MySQL and SeaweedFS volumes; unset = the cluster's default class."""
    retry_policy: NotRequired[str]
    """Argo retryPolicy every step inherits. Always (default) retries a pod deleted with its node (an Error to Argo) and a pod evicted or stopped by a node shutdown (a Failure); OnError, KFP's own default, retries only the first. Default: `Always`."""
    retry_limit: NotRequired[int]
    """Raises the retry limit of steps that don't call set_retry above KFP's shipped one (2 in 2.17.0); unset keeps KFP's, and a lower value never weakens it. Argo gives it to DAG templates too."""
