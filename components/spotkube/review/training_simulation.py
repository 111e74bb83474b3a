"""The inputs of `spotkube simulate` for a TrainJob on one stack: where the gang lands, its prices, its
eviction rate and the wait for a replacement node, from the plan of the stack as registered.

The gang lands on the first tier (in the runtime's preference order) that holds every worker at once,
as `pipeline-check` finds it, and on that tier's first pool; its prices are the plan's for that pool, and
the wait for a new node is the node start time plus, for a GPU type whose spot fallback is bounded, up
to the worst case the plan states (review/fallback.py). Pure module: no Pulumi.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from spotkube.platform import contract
from spotkube.platform.contract import PoolContract
from spotkube.platform.cost.gang import GangJob
from spotkube.platform.cost.simulate import SECONDS_PER_HOUR
from spotkube.platform.errors import SpotkubeError
from spotkube.platform.records import record
from spotkube.platform.spec import PlatformSpec
from spotkube.platform.trainjob_reader import TrainJob
from spotkube.review.costing import CostReport
from spotkube.review.fallback import GpuFallback
from spotkube.review.trainjob_check import TrainJobReport


@record
class GangOverrides:
    """What the command line says of the job: workers, runtime, checkpoint interval and write time, the wait
    for capacity, eviction rates per pool and the node start (seconds; None: the job's own)."""

    workers: int | None
    runtime_seconds: int
    checkpoint_seconds: int | None
    checkpoint_write_seconds: int
    queue_wait_seconds: int
    eviction_rates: Mapping[str, float]
    node_start_seconds: int


def gang_job(job: TrainJob, report: TrainJobReport, spec: PlatformSpec, pools: Sequence[PoolContract],
             cost: CostReport, fallback: Sequence[GpuFallback], overrides: GangOverrides) -> GangJob:
    """The job as the simulator sees it; a job that can't land (the report's errors) is refused."""
    if not report.ok:
        raise SpotkubeError(f"{job.source}: TrainJob {job.name} can't run on stack {report.stack}: {report.errors[0]}")
    workers = overrides.workers or job.num_nodes
    tier = next(t for t in report.tiers if t.workers >= job.num_nodes)
    if workers > tier.workers:
        raise SpotkubeError(f"--workers {workers}: tier {tier.tier} of stack {report.stack} holds {tier.workers} "
                            "workers at once, so the gang would never be admitted")
    by_name = {p.name: p for p in pools}
    unknown = sorted(set(overrides.eviction_rates) - set(by_name))
    if unknown:
        raise SpotkubeError(f"--eviction-rate {unknown[0]}: stack {report.stack} has no such pool; pools: "
                            f"{', '.join(by_name)}")
    pool = by_name[tier.pools[0]]
    priced: dict[str, Any] = {p.pool.name: p for p in cost.pools}
    prices = priced.get(pool.name)
    worst = {f.gpu_type: f.worst_case_seconds for f in fallback}.get(pool.accelerator or "") or 0
    start = overrides.node_start_seconds / SECONDS_PER_HOUR
    checkpoint = overrides.checkpoint_seconds or job.checkpoint_interval_seconds
    return GangJob(
        name=job.name,
        pool=pool.name,
        workers=workers,
        hours=overrides.runtime_seconds / SECONDS_PER_HOUR,
        checkpoint_hours=checkpoint / SECONDS_PER_HOUR if checkpoint else None,
        checkpoint_write_hours=overrides.checkpoint_write_seconds / SECONDS_PER_HOUR,
        eviction_rate=overrides.eviction_rates.get(pool.name, spec.cost.eviction_rate),
        interruptible=pool.capacity in contract.INTERRUPTIBLE,
        node_wait_hours=(start, start + worst / SECONDS_PER_HOUR),
        queue_wait_hours=overrides.queue_wait_seconds / SECONDS_PER_HOUR,
        usd_per_node_hour=prices.price.usd_per_hour if prices and prices.price else None,
        on_demand_usd_per_node_hour=prices.on_demand.usd_per_hour if prices and prices.on_demand else None,
    )
