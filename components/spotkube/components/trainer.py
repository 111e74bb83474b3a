"""`KubeflowTrainer`: Kubeflow Trainer with JobSet, for multi-node training on spot; controllers on the platform pool.

A thin shell: Trainer publishes no single release manifest, so its manager kustomization is applied (with the
changes in `platform.addons.trainer_transforms`), and `platform.addons.training_runtime` builds the runtimes.
"""

from collections.abc import Sequence
from typing import Any

import pulumi
from pulumi_kubernetes.kustomize.v2 import Directory
from pulumi_kubernetes.yaml.v2 import ConfigGroup

from spotkube.clouds import plan_platform, profile
from spotkube.components.args import KubeflowTrainerArgs
from spotkube.platform.addons import trainer_transforms, training_runtime
from spotkube.platform.errors import Problem, SpecError
from spotkube.platform.plan import PoolPlan
from spotkube.platform.records import record
from spotkube.platform.spec import PlatformSpec, TrainingSettings
from spotkube.shell.common import (
    addon_settings,
    built_from,
    built_onto_pools,
    child,
    cluster_behind,
    clusters_behind,
    deployed_onto,
    enabled_refusal,
    props_transform,
    refuse_disabled,
    validated,
)
from spotkube.shell.pools import pool_builds

REFUSED = {"enabled": enabled_refusal("Kubeflow Trainer", "training")}


@record
class TrainerRequest:
    """What the component builds: the settings, and a training runtime per GPU type of the cluster's pools."""

    settings: TrainingSettings
    runtimes: tuple[dict[str, Any], ...]

    @staticmethod
    def for_pools(gpu_pools: Sequence[PoolPlan], cloud: str, settings: TrainingSettings) -> "TrainerRequest":
        """The runtimes of GPU pools; their cloud says how long a worker has between notice and kill."""
        grace = settings.grace_period_seconds or profile(cloud).workload_notice_seconds
        objects = training_runtime.runtimes(gpu_pools, grace_seconds=grace,
                                            failure_restarts=settings.failure_restart_limit)
        return TrainerRequest(settings, tuple(objects))


def _no_whole_gpu_pools(source: str, key: str) -> SpecError:
    return SpecError(source, [Problem(key, "hold no GPU pool that gives whole GPUs, so no training runtime could "
                                      "place a worker; add one or build no KubeflowTrainer")])


class KubeflowTrainer(pulumi.ComponentResource):
    """Kubeflow Trainer and JobSet from the release's manifests, their controllers on the platform pool, with a
    training runtime per GPU type that survives spot evictions.

    Deploy it through a spotkube cluster's provider (`opts=pulumi.ResourceOptions(providers=[cluster.provider])`)
    and after `Kueue` (`depends_on`): a TrainJob names Kueue's LocalQueue, which admits its workers all at once.

    `enabled` is refused rather than honoured: a component that installed nothing would still name runtimes
    that TrainJobs would wait on for ever.

    What it registers: Trainer's `manifests/overlays/manager` kustomization at `version` (Trainer's CRDs,
    controller and webhooks, and the JobSet release it bundles, in `kubeflow-system`), both controllers kept
    on the platform pool; then a ClusterTrainingRuntime `spotkube-<gpu type>` per GPU type of the cluster's
    pools (docs/training.md): its workers tolerate and select that type's spot pools (and its on-demand
    fallback), get the cloud's eviction notice as grace, and a worker a node took away restarts the job
    without spending `failure_restart_limit`.

    Its args are `KubeflowTrainerArgs`, each with a default.

    Outputs. Both resolve at once.

    - `namespace`: the controllers' namespace, `kubeflow-system`.
    - `runtimes`: the runtimes' names, one per GPU type.
    """

    namespace: pulumi.Output[str]
    """The namespace Trainer's and JobSet's controllers run in."""
    runtimes: pulumi.Output[list[str]]
    """The ClusterTrainingRuntimes a TrainJob names (`spec.runtimeRef.name`), one per GPU type."""

    def __init__(self, name: str, args: KubeflowTrainerArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        """Kubeflow Trainer through the spotkube cluster's provider in `opts`.

        :param name: the component's name; its children's names start with it.
        :param args: `KubeflowTrainerArgs` (`{}` takes every default); bad args end the program with one line
            naming the key.
        :param opts: Pulumi's resource options: `providers=[cluster.provider]`, `depends_on=[kueue]`.
        """
        source = f"KubeflowTrainer {name!r}"

        def request() -> TrainerRequest:
            settings = addon_settings(args, KubeflowTrainerArgs, TrainingSettings, f"{source} args", refused=REFUSED)
            found = cluster_behind(opts, source, "the training runtimes come from the cluster's GPU pools")
            plan = found.cluster.plan
            if not training_runtime.gpu_types(plan.gpu_pools):
                raise _no_whole_gpu_pools(f"{source}: {found.label}", "opts")
            return TrainerRequest.for_pools(plan.gpu_pools, plan.cloud, settings)
        self._build(name, validated(request), opts)

    @classmethod
    def for_pools(cls, name: str, pools: Sequence[pulumi.ComponentResource], args: KubeflowTrainerArgs | None = None,
                  opts: pulumi.ResourceOptions | None = None) -> "KubeflowTrainer":
        """Kubeflow Trainer on a cluster spotkube may not have made, with runtimes for spotkube's pool components
        (`AksGpuNodePool`, `GkeGpuNodePool`) there. Deploy it through the cluster's Kubernetes provider (`opts`);
        `platform_pool_labels` in `args` picks the pool its controllers run on."""
        source = f"KubeflowTrainer {name!r}"

        def request() -> TrainerRequest:
            settings = addon_settings({} if args is None else args, KubeflowTrainerArgs, TrainingSettings,
                                      f"{source} args", refused=REFUSED)
            builds = pool_builds(pools, source, "the runtimes place workers on")
            gpu_pools = tuple(b.pool for b in builds if b.pool.role == "gpu")
            if not training_runtime.gpu_types(gpu_pools):
                raise _no_whole_gpu_pools(source, "pools")
            return TrainerRequest.for_pools(gpu_pools, builds[0].plan.cloud, settings)
        return built_onto_pools(cls, name, pools, "training", request, opts)

    @classmethod
    def from_spec(cls, name: str, spec: PlatformSpec, opts: pulumi.ResourceOptions | None = None) -> "KubeflowTrainer":
        """The stack's Kubeflow Trainer, from a spec `parse_spec` has already accepted."""

        def request() -> TrainerRequest:
            refuse_disabled(f"KubeflowTrainer {name!r}", "training.enabled", spec.training.enabled, "Kubeflow Trainer")
            plan = plan_platform(spec)
            return TrainerRequest.for_pools(plan.gpu_pools, plan.cloud, spec.training)
        return built_from(cls, name, validated(request), opts)

    def _build(self, name: str, request: TrainerRequest, opts: pulumi.ResourceOptions | None) -> None:
        settings = request.settings
        super().__init__(trainer_transforms.TRAINER_TYPE, name, {}, opts)
        self.settings = settings
        deployed_onto(opts, "training", settings, self)
        manifests = Directory(
            f"{name}-manifests", directory=trainer_transforms.manifest_url(settings.version),
            opts=child(self, transforms=[props_transform(
                lambda props: trainer_transforms.transform(props, settings.platform_pool_labels))]),
        )
        # ClusterTrainingRuntime is Trainer's CRD, and its webhook validates it: both come with the manifests. One
        # group holds every runtime, as the plan shows it (a runtime's type token is too long for its table).
        # What a worker needs to reach the cluster's checkpoint store (AKS: the kubelet identity's client id).
        env = {key: value for found in clusters_behind(opts) for key, value in found.cluster.training_env.items()}
        ConfigGroup(f"{name}-runtimes", objs=[training_runtime.with_worker_env(obj, env) for obj in request.runtimes],
                    opts=child(self, depends_on=[manifests]))
        self.namespace = pulumi.Output.from_input(training_runtime.trainer_reference.NAMESPACE)
        self.runtimes = pulumi.Output.from_input([obj["metadata"]["name"] for obj in request.runtimes])
        self.register_outputs({"namespace": self.namespace, "runtimes": self.runtimes})
