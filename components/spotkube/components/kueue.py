"""`Kueue`: the job queue in front of the GPU pools, its controller on the platform pool.

A thin shell: the changes to Kueue's release manifests are `platform.addons.kueue_transforms`, and the
queue itself is `platform.addons.kueue_preset`, built from the cluster's GPU pools.
"""

from collections.abc import Sequence
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
from pulumi_kubernetes.yaml.v2 import ConfigFile

from spotkube.clouds import plan_platform, profile
from spotkube.components.args import KueueArgs
from spotkube.platform.addons import kfp_reference, kueue_preset, kueue_transforms
from spotkube.platform.errors import Problem, SpecError
from spotkube.platform.plan import PoolPlan
from spotkube.platform.records import record
from spotkube.platform.spec import KueueSettings, PlatformSpec
from spotkube.shell.common import (
    addon_settings,
    built_from,
    built_onto_pools,
    child,
    cluster_behind,
    deployed_onto,
    enabled_refusal,
    props_transform,
    refuse_disabled,
    validated,
)
from spotkube.shell.pools import pool_builds

REFUSED = {"enabled": enabled_refusal("Kueue", "kueue")}
#: The namespace whose pods Kueue queues, and where the LocalQueue lives: Kubeflow Pipelines'.
PIPELINES_NAMESPACE = kfp_reference.NAMESPACE


@record
class KueueRequest:
    """What the component builds: the settings, and the preset's objects from the cluster's GPU pools."""

    settings: KueueSettings
    preset: tuple[dict[str, Any], ...]

    @staticmethod
    def for_pools(gpu_pools: Sequence[PoolPlan], cloud: str, settings: KueueSettings) -> "KueueRequest":
        """The preset of GPU pools: they say which take nodes by provisioning request, their cloud which
        request class serves them."""
        queued = tuple(pool.name for pool in gpu_pools if pool.queued)
        objects = kueue_preset.preset(gpu_pools, PIPELINES_NAMESPACE, settings.local_queue,
                                      queued, profile(cloud).provisioning_request_class)
        return KueueRequest(settings, tuple(objects))


class Kueue(pulumi.ComponentResource):
    """Kueue from its release manifests, its controller on the platform pool, with a queue over the GPU pools.

    Deploy it through a spotkube cluster's provider (`opts=pulumi.ResourceOptions(providers=[cluster.provider])`)
    and after `KubeflowPipelines` (`depends_on`): the queue's quota comes from that cluster's GPU pools,
    and its LocalQueue lives in Kubeflow's namespace.

    `enabled` is refused rather than honoured: a component that installed nothing would still export a
    queue name that pipelines would send their steps to, and they would wait for ever.

    What it registers: the release's `manifests.yaml` at `version`, its controller kept on the platform
    pool and its manager configured to queue the pods of Kubeflow's namespace that name a queue; then
    a ResourceFlavor per GPU tier (a GPU type on one capacity; and per queued-provisioning pool, with the
    ProvisioningRequest admission check), the ClusterQueue `spotkube-gpus` whose quota is what the GPU
    pools hold at full scale, and the LocalQueue `local_queue` in Kubeflow's namespace.

    Its args are `KueueArgs`: `version` and `local_queue`, each with a default.

    Outputs. Both resolve at once (they are fixed).

    - `cluster_queue`: the ClusterQueue's name, `spotkube-gpus`.
    - `local_queue`: the LocalQueue a step names (`to_queue(task, queue=...)`).
    """

    cluster_queue: pulumi.Output[str]
    """The ClusterQueue over the GPU pools."""
    local_queue: pulumi.Output[str]
    """The LocalQueue in Kubeflow's namespace that pipeline steps name (`kueue.x-k8s.io/queue-name`)."""

    def __init__(self, name: str, args: KueueArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        """Kueue through the spotkube cluster's provider in `opts`.

        :param name: the component's name; its children's names start with it.
        :param args: `KueueArgs` (`{}` takes every default); bad args end the program with one line naming the key.
        :param opts: Pulumi's resource options: `providers=[cluster.provider]`, `depends_on=[kubeflow]`.
        """
        source = f"Kueue {name!r}"

        def request() -> KueueRequest:
            settings = addon_settings(args, KueueArgs, KueueSettings, f"{source} args", refused=REFUSED)
            found = cluster_behind(opts, source, "the queue's GPU quota comes from the cluster's GPU pools")
            plan = found.cluster.plan
            if not plan.gpu_pools:
                raise SpecError(source, [Problem("opts", f"{found.label} has no GPU pools, so the queue would have "
                                                 "no quota and admit no step; add a GPU pool or build no Kueue")])
            return KueueRequest.for_pools(plan.gpu_pools, plan.cloud, settings)
        self._build(name, validated(request), opts)

    @classmethod
    def for_pools(cls, name: str, pools: Sequence[pulumi.ComponentResource], args: KueueArgs | None = None,
                  opts: pulumi.ResourceOptions | None = None) -> "Kueue":
        """Kueue on a cluster spotkube may not have made, with its queue over spotkube's pool components
        (`AksGpuNodePool`, `GkeGpuNodePool`) there: their GPU pools give the quota. Deploy it through the
        cluster's Kubernetes provider (`opts`); `platform_pool_labels` in `args` picks the pool its
        controller runs on."""
        source = f"Kueue {name!r}"

        def request() -> KueueRequest:
            settings = addon_settings({} if args is None else args, KueueArgs, KueueSettings,
                                      f"{source} args", refused=REFUSED)
            builds = pool_builds(pools, source, "the queue serves")
            gpu_pools = tuple(b.pool for b in builds if b.pool.role == "gpu")
            if not gpu_pools:
                raise SpecError(source, [Problem("pools", "hold no GPU pool, so the queue would have no quota and "
                                                 "admit no step; give the GPU pools")])
            return KueueRequest.for_pools(gpu_pools, builds[0].plan.cloud, settings)
        return built_onto_pools(cls, name, pools, "kueue", request, opts)

    @classmethod
    def from_spec(cls, name: str, spec: PlatformSpec, opts: pulumi.ResourceOptions | None = None) -> "Kueue":
        """The stack's Kueue, from a spec `parse_spec` has already accepted."""

        def request() -> KueueRequest:
            refuse_disabled(f"Kueue {name!r}", "kueue.enabled", spec.kueue.enabled, "Kueue")
            plan = plan_platform(spec)
            return KueueRequest.for_pools(plan.gpu_pools, plan.cloud, spec.kueue)
        return built_from(cls, name, validated(request), opts)

    def _build(self, name: str, request: KueueRequest, opts: pulumi.ResourceOptions | None) -> None:
        settings = request.settings
        super().__init__(kueue_transforms.KUEUE_TYPE, name, {}, opts)
        self.settings = settings
        deployed_onto(opts, "kueue", settings, self)
        manifests = ConfigFile(
            f"{name}-manifests", file=kueue_transforms.manifest_url(settings.version),
            opts=child(self, transforms=[props_transform(lambda props: kueue_transforms.transform(
                props, [PIPELINES_NAMESPACE], settings.platform_pool_labels))]),
        )
        # The preset's kinds are Kueue's CRDs, and its webhooks validate them: both come with the manifests.
        for obj in request.preset:
            metadata = obj["metadata"]
            k8s.apiextensions.CustomResource(
                f"{name}-{obj['kind'].lower()}-{metadata['name']}", api_version=obj["apiVersion"], kind=obj["kind"],
                metadata=metadata, spec=obj["spec"], opts=child(self, depends_on=[manifests]),
            )
        self.cluster_queue = pulumi.Output.from_input(kueue_preset.CLUSTER_QUEUE)
        self.local_queue = pulumi.Output.from_input(settings.local_queue)
        self.register_outputs({"clusterQueue": self.cluster_queue, "localQueue": self.local_queue})

