"""The typed args of the add-on components, generated from `spotkube.platform.spec` (and
`spotkube.platform.args_source`) by `python -m spotkube.cli.reference write`; do not edit. None accepts an
Output.
"""

from typing import TYPE_CHECKING, Literal, NotRequired, TypedDict

if TYPE_CHECKING:
    NvidiaDevicePluginMigStrategy = Literal["single", "mixed"]
else:
    NvidiaDevicePluginMigStrategy = str
"""`Literal` for type checkers, `str` at run time: Pulumi's analyzer accepts no `Literal`, so the
schema types them as strings and the component's checks name the accepted values."""


class NvidiaDevicePluginArgs(TypedDict):
    """The args of `NvidiaDevicePlugin`: NVIDIA's device plugin settings and the cluster's cloud and taints. `enabled` is not an arg: not creating the component says so."""

    cloud: str
    """The cluster's cloud: `aks` (deploys NVIDIA's plugin as a DaemonSet) or `gke` (keeps GKE's managed plugin, deploys nothing). Python: use `NvidiaDevicePlugin.for_cluster(name, cluster)`, which takes it from the cluster."""
    version: NotRequired[str]
    """NVIDIA k8s-device-plugin release: the image tag. Default: `v0.20.0`."""
    mig_strategy: NotRequired[NvidiaDevicePluginMigStrategy]
    """How the plugin spotkube deploys advertises MIG instances: `single` as `nvidia.com/gpu` (as a cloud's own managed plugin does, so one pipeline runs on both), `mixed` as `nvidia.com/mig-<profile>`. Default: `single`."""
    image: NotRequired[str]
    """Image repository without a tag, e.g. a mirror when nodes can't reach nvcr.io. Default: `nvcr.io/nvidia/k8s-device-plugin`."""
    extra_taints: NotRequired[list[str]]
    """Taints your GPU pools carry beyond spotkube's own, as key=value:Effect; the plugin tolerates them. Python: `NvidiaDevicePlugin.for_cluster` tolerates every GPU pool's own taints without them."""


class DevicePluginSettingsArgs(TypedDict):
    """The device plugin's own settings, for `NvidiaDevicePlugin.for_cluster` (Python only): the cluster gives the cloud and the GPU pools' taints."""

    version: NotRequired[str]
    """NVIDIA k8s-device-plugin release: the image tag. Default: `v0.20.0`."""
    mig_strategy: NotRequired[NvidiaDevicePluginMigStrategy]
    """How the plugin spotkube deploys advertises MIG instances: `single` as `nvidia.com/gpu` (as a cloud's own managed plugin does, so one pipeline runs on both), `mixed` as `nvidia.com/mig-<profile>`. Default: `single`."""
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
    platform_pool_labels: NotRequired[dict[str, str]]
    """On a cluster spotkube didn't make: node labels that pick the untainted on-demand pool KFP's own services run on, e.g. the label in which the cloud names a node's pool, with that pool's name; unset = spotkube's platform pool."""
    eviction_retry_limit: NotRequired[int]
    """Retries of a step whose pod a node took away (spot eviction, node shutdown, drain, node lost): Argo's limit in the workflow defaults, for steps that don't call set_retry (a step's own limit wins). Ten survives a bad evening on spot capacity; each eviction costs a restart from the last checkpoint, not a failed run. Default: `10`."""
    failure_retry_limit: NotRequired[int]
    """Retries of a step that failed on its own (a non-zero exit, out of memory, bad input): one covers a flaky download without spending GPU hours re-running a bug. Counted with the evictions: a failure is retried only while the step has been retried fewer times than this. Argo errors that are no eviction (a pod that never started) keep KFP's 2. Default: `1`."""
    pod_delete_delay: NotRequired[str]
    """Argo's pod garbage collection (OnPodCompletion): how long a finished, failed or evicted step's pod stays after it ends, for live logs (its logs are archived when it ends); then it is deleted, so evicted pods never pile up. Default: `1h`."""
    workflow_ttl_seconds: NotRequired[int]
    """How long a finished run's Argo Workflow is kept (KFP ships 3600); a pipeline's own TTL (PipelineConfig) wins. Default: `3600`."""
    step_grace_period_seconds: NotRequired[int]
    """terminationGracePeriodSeconds of every pipeline pod: the time a step has to save a checkpoint after SIGTERM. Unset = what the stack's cloud really gives a workload pod on a spot eviction (docs/evictions.md#how-much-time-a-step-gets)."""


class KueueArgs(TypedDict):
    """The args of `Kueue`: Kueue, the job queue: pipeline steps sent to its queue wait for the GPU pools' quota instead of piling up as pending pods, and on a queued-provisioning pool get their nodes all at once through a ProvisioningRequest. Installed from the release's manifests, its controller on the platform pool."""

    version: NotRequired[str]
    """Kueue release: the tag whose `manifests.yaml` is applied. Default: `v0.19.2`."""
    local_queue: NotRequired[str]
    """Name of the LocalQueue in Kubeflow's namespace; a step sent with `to_queue(task, queue=...)` names it. Default: `spot-gpus`."""
    platform_pool_labels: NotRequired[dict[str, str]]
    """On a cluster spotkube didn't make: node labels that pick the untainted on-demand pool Kueue's controller runs on, as for Kubeflow Pipelines; unset = spotkube's platform pool."""


class KubeflowTrainerArgs(TypedDict):
    """The args of `KubeflowTrainer`: Kubeflow Trainer, for training jobs that span several GPU nodes: a TrainJob sent to Kueue's queue is admitted whole or not at all, runs on a training runtime spotkube registers per GPU type (its pools' tolerations and affinity, the cloud's eviction notice as grace), and restarts for free when a node is evicted. Installed from the release's manifests with the JobSet it bundles, its controllers on the platform pool."""

    version: NotRequired[str]
    """Kubeflow Trainer release: the tag of the `manifests/overlays/manager` kustomization applied (v2.2.1 is the release Kueue v0.19 is built against; it bundles JobSet v0.11.1). Default: `v2.2.1`."""
    failure_restart_limit: NotRequired[int]
    """Restarts of a training job after a failure of its own (a non-zero exit, out of memory): the JobSet's `failurePolicy.maxRestarts`. A worker a node took away (spot eviction, node shutdown) restarts the job without counting (`RestartJobSetAndIgnoreMaxRestarts`). Default: `1`."""
    grace_period_seconds: NotRequired[int]
    """terminationGracePeriodSeconds of every worker: the time a training script has to save a checkpoint after SIGTERM. Unset = what the stack's cloud gives a workload pod on a spot eviction (docs/evictions.md#how-much-time-a-step-gets)."""
    checkpoint_location: NotRequired[str]
    """Where the stack's training jobs write checkpoints: an object store URI the nodes' identity can write (`gs://bucket/checkpoints`, `abfs://container/checkpoints`) or a path on a volume the workers mount. `spotkube pipeline-check` warns about a TrainJob whose `SPOTKUBE_CHECKPOINT_DIR` is not under it; unset = any place."""
    platform_pool_labels: NotRequired[dict[str, str]]
    """On a cluster spotkube didn't make: node labels that pick the untainted on-demand pool the Trainer and JobSet controllers run on, as for Kubeflow Pipelines; unset = spotkube's platform pool."""
