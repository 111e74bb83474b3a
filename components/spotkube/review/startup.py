"""Each GPU pool's expected time to a running step from 0 nodes, as registered: the pools read back
from the registrations, each pool's image delivery as its cloud reads it from the registered inputs,
the fallback as deployed (review/fallback.py), and the image size the stack declares for the pool
(`gpuPools[].imageGb`, which nothing registers). Pure module: no Pulumi.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from spotkube.clouds import profile
from spotkube.platform.cloud import RegisteredPool
from spotkube.platform.registration import Registration
from spotkube.platform.spec import PlatformSpec
from spotkube.platform.startup import Fallback, ImageDelivery, PoolStartup, StartupFigures, image_time
from spotkube.review.fallback import GpuFallback


def _deliveries(cloud: str, resources: Sequence[Registration]) -> dict[str, ImageDelivery]:
    """Each registered pool's delivery, by the name the cloud knows it by."""
    cloud_profile = profile(cloud)
    return {pool.cloud_name: cloud_profile.image_delivery(r.type, r.inputs)
            for r in resources for pool in cloud_profile.read_pools(r.type, r.name, r.inputs)}


def _own(row: RegisteredPool, figures: StartupFigures, delivery: ImageDelivery, size_gb: float | None) -> PoolStartup:
    gpu = row.gpu_type or ""
    return PoolStartup(row.name, row.capacity, gpu, figures.node(gpu), image_time(delivery, size_gb, figures))


def pool_startups(spec: PlatformSpec, resources: Sequence[Registration], pools: Sequence[RegisteredPool],
                  fallback: Sequence[GpuFallback]) -> tuple[PoolStartup, ...]:
    """One estimate per GPU pool, in the plan's pool order; none on a cloud without figures."""
    read = profile(spec.cloud).startup_figures
    if read is None:
        return ()
    figures = read()
    deliveries = _deliveries(spec.cloud, resources)
    sizes = {p.name: p.image_gb for p in spec.gpu_pools}
    own = {row.name: _own(row, figures, deliveries.get(row.cloud_name, "pull"), sizes.get(row.name))
           for row in pools if row.gpu_type}
    by_gpu = {f.gpu_type: f for f in fallback}
    return tuple(_with_fallback(estimate, by_gpu.get(estimate.gpu_type), own) for estimate in own.values())


def _with_fallback(estimate: PoolStartup, fallback: GpuFallback | None,
                   own: dict[str, PoolStartup]) -> PoolStartup:
    """An interruptible pool's next tier when its capacity is out, or why none can be stated."""
    if estimate.capacity == "on-demand":
        return estimate
    if fallback is None or not fallback.on_demand_pools:
        return dataclasses.replace(estimate, fallback_note="no on-demand fallback: the step waits for capacity")
    if fallback.worst_case_seconds is None:
        mine = next((i for i, tier in enumerate(fallback.order) if estimate.pool in tier.pools), -1)
        later = [f"{tier.capacity} {', '.join(tier.pools)}" for tier in fallback.order[mine + 1:]]
        return dataclasses.replace(estimate, fallback_note=f"{', then '.join(later)}, after a wait the plan can't "
                                   "bound (see the fallback)")
    then = own.get(fallback.on_demand_pools[0])
    return dataclasses.replace(estimate, fallback=Fallback(
        fallback.worst_case_seconds, fallback.on_demand_pools, None if then is None else then.total))
