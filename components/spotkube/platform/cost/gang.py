"""A multi-node training job's finish time and cost under eviction: a seeded Monte Carlo of one gang.

A job of N workers makes progress only while all N run: when any node is evicted (at `N·λ`, `λ` as in
`simulate.py`), JobSet restarts every worker from the last checkpoint, saved every `τ` hours of work at
`C` hours each; the N−1 nodes not evicted stay billed while a replacement comes up, and Kueue keeps the
workload admitted meanwhile. A run not finished after `MAX_RESTARTS` restarts fails. The yardsticks are
the work on on-demand nodes and on spot with nothing lost; `sweep` checks Young and Daly's optimum
interval `√(2·C·M)` (M = `1/(N·λ)`) against the simulated cost around it.

numpy, no Pulumi. Docs: docs/training.md#cost-and-finish-time.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from decimal import Decimal

from spotkube.platform.cost.simulate import DEFAULT_RUNS, DEFAULT_SEED, Distribution
from spotkube.platform.records import record

#: Restarts after which a run is counted as failed.
MAX_RESTARTS = 1000
#: The multiples of Young and Daly's interval the sweep tries, besides the job's own.
SWEEP_FACTORS = (0.25, 0.5, 1.0, 2.0, 4.0)


@record
class GangJob:
    """One multi-node job as the simulator sees it. Hours are floats; prices are per node-hour (None: unpriced)."""

    name: str
    pool: str
    workers: int
    hours: float
    checkpoint_hours: float | None
    checkpoint_write_hours: float
    eviction_rate: float
    interruptible: bool
    node_wait_hours: tuple[float, float]
    queue_wait_hours: float
    usd_per_node_hour: Decimal | None
    on_demand_usd_per_node_hour: Decimal | None

    def __post_init__(self) -> None:
        if self.workers < 1:
            raise ValueError(f"job {self.name}: it needs at least 1 worker, got {self.workers}")
        if self.hours <= 0:
            raise ValueError(f"job {self.name}: its runtime must be above 0 hours, got {self.hours}")
        if not 0 <= self.eviction_rate < 1:
            raise ValueError(f"job {self.name}: eviction rate must be at least 0 and below 1, got {self.eviction_rate}")
        if self.checkpoint_hours is not None and self.checkpoint_hours <= 0:
            raise ValueError(f"job {self.name}: checkpoint interval must be above 0, got {self.checkpoint_hours}")

    @property
    def gang_hazard(self) -> float:
        """Evictions of the gang per hour: any of its N nodes."""
        return -self.workers * math.log1p(-self.eviction_rate) if self.interruptible else 0.0

    def young_daly_hours(self) -> float | None:
        """√(2·C·M): the interval that minimises the expected time lost, to first order (None: no evictions
        or free saves, so any interval, or none, will do)."""
        if not self.gang_hazard or not self.checkpoint_write_hours:
            return None
        return math.sqrt(2 * self.checkpoint_write_hours / self.gang_hazard)


@record
class GangResult:
    """What the runs came to, for one checkpoint interval. Costs are None when the pool has no price."""

    checkpoint_hours: float | None
    runs: int
    seed: int
    wall_hours: Distribution
    cost_usd: Distribution | None
    cost_mean_usd: float | None
    restarts_mean: float
    lost_node_hours_mean: float
    queue_hours_mean: float
    failed_share: float
    on_demand_usd: Decimal | None
    physical_limit_usd: Decimal | None

    def overhead(self) -> float | None:
        """The mean cost over the physical limit, as a share of it (0.12: 12 % more)."""
        if self.cost_mean_usd is None or not self.physical_limit_usd:
            return None
        return self.cost_mean_usd / float(self.physical_limit_usd) - 1


def _cents(value: float) -> Decimal:
    return Decimal(str(value)).quantize(Decimal("0.01"))


def simulate_gang(job: GangJob, *, runs: int = DEFAULT_RUNS, seed: int = DEFAULT_SEED) -> GangResult:
    """Sample `runs` runs of the job with a seeded generator (same seed, same figures), vectorised over runs."""
    if runs < 1:
        raise ValueError(f"runs must be at least 1, got {runs}")
    import numpy as np

    rng = np.random.default_rng(seed)
    n = job.workers
    tau = job.checkpoint_hours
    write = job.checkpoint_write_hours if tau is not None else 0.0
    queue = rng.exponential(job.queue_wait_hours, runs) if job.queue_wait_hours > 0 else np.zeros(runs)
    wall = queue.copy()
    billed = np.zeros(runs)
    lost = np.zeros(runs)
    restarts = np.zeros(runs)
    remaining = np.full(runs, job.hours)
    running = np.ones(runs, dtype=bool)
    for _ in range(MAX_RESTARTS + 1):
        # Every full interval but the last is followed by a save.
        need = remaining if tau is None else remaining + np.maximum(np.ceil(remaining / tau) - 1, 0) * write
        at = rng.exponential(1 / job.gang_hazard, runs) if job.gang_hazard else np.full(runs, np.inf)
        evicted = running & (at < need)
        ran = np.where(running, np.minimum(at, need), 0.0)
        if tau is None:
            saved, since_save = np.zeros(runs), ran
        else:
            periods = np.floor(ran / (tau + write))
            saved, since_save = periods * tau, ran - periods * (tau + write)
        billed += n * ran
        wall += ran
        lost += np.where(evicted, n * since_save, 0.0)
        restarts += evicted
        remaining = np.where(evicted, remaining - saved, 0.0)
        running = evicted
        if not running.any():
            break
        low, high = job.node_wait_hours
        delay = np.where(running, rng.uniform(low, high, runs), 0.0)
        wall += delay
        billed += (n - 1) * delay
    price = None if job.usd_per_node_hour is None else float(job.usd_per_node_hour)
    costs = None if price is None else billed * price
    work = job.hours * n
    return GangResult(
        checkpoint_hours=tau,
        runs=runs,
        seed=seed,
        wall_hours=Distribution(float(np.median(wall)), float(np.quantile(wall, 0.9))),
        cost_usd=None if costs is None else Distribution(float(np.median(costs)), float(np.quantile(costs, 0.9))),
        cost_mean_usd=None if costs is None else float(costs.mean()),
        restarts_mean=float(restarts.mean()),
        lost_node_hours_mean=float(lost.mean()),
        queue_hours_mean=float(queue.mean()),
        failed_share=float(running.mean()),
        on_demand_usd=None if job.on_demand_usd_per_node_hour is None
        else _cents(work * float(job.on_demand_usd_per_node_hour)),
        physical_limit_usd=None if price is None else _cents(work * price),
    )


def sweep_intervals(job: GangJob) -> list[float | None]:
    """The intervals the sweep tries: the job's own, and multiples of Young and Daly's shorter than the job."""
    young_daly = job.young_daly_hours()
    tried = {job.checkpoint_hours}
    if young_daly is not None:
        tried |= {young_daly * f for f in SWEEP_FACTORS if young_daly * f < job.hours}
    return sorted(tried, key=lambda h: math.inf if h is None else h)


def sweep(job: GangJob, *, runs: int = DEFAULT_RUNS, seed: int = DEFAULT_SEED) -> list[GangResult]:
    """The job simulated at each interval of `sweep_intervals`, the same seed for each."""
    from dataclasses import replace

    return [simulate_gang(replace(job, checkpoint_hours=h), runs=runs, seed=seed) for h in sweep_intervals(job)]


def recommended(results: Sequence[GangResult]) -> GangResult:
    """The interval with the lowest mean cost (without prices: the shortest median finish); ties go to the
    longer interval (fewer saves)."""
    def key(r: GangResult) -> tuple[float, float, float]:
        figure = r.cost_mean_usd if r.cost_mean_usd is not None else r.wall_hours.median
        return (r.failed_share, round(figure, 6), -(r.checkpoint_hours or math.inf))
    return min(results, key=key)
