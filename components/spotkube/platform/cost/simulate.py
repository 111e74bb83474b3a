"""A pipeline's wall time and cost under eviction: a seeded Monte Carlo over its steps.

The linear cost model (`model.py`) says what a month costs on average, not when a pipeline finishes, nor
how that depends on checkpoints, retries, backoff and the wait for a new node; this samples it. Steps run
one after another (the reader gives no dependencies, so the wall time is an upper bound). A node is taken
away after an exponential time at `λ = −ln(1 − e)` per node-hour, so a node-hour survives with probability
`1 − e`; a step without a checkpoint interval loses `reworkFraction` of its attempt at its end (the
articles' worst case); retries wait Argo's backoff and a new node, within the retry window. In the
articles' limit the mean billed hours tend to the linear model's (`linear_cost`).

numpy is imported when a simulation runs, so the CLI's other commands never pay for it. Docs: docs/simulate.md.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from decimal import Decimal
from typing import TYPE_CHECKING

from spotkube.platform.cost.model import Assumptions, PoolUsage, pool_cost, to_cents
from spotkube.platform.records import record

if TYPE_CHECKING:
    import numpy as np

SECONDS_PER_HOUR = 3600
#: Runs sampled unless told otherwise: for a pipeline like the training example, the p90 wall time of
#: 2,000 runs varies by about 0.15 % between seeds (one standard deviation over 10 seeds, docs/simulate.md).
DEFAULT_RUNS = 2000
DEFAULT_SEED = 0


@record
class SimStep:
    """One step as the simulator sees it: where it runs, its work, and how it survives an eviction.

    Hours are floats. `usd_per_hour` is what its node (or its share of a shared GPU) costs at the pool's
    capacity and `on_demand_usd_per_hour` the yardstick; None when the price table has none.
    `node_wait_hours` is the (shortest, longest) time a replacement node takes, sampled uniformly.
    """

    name: str
    pool: str
    interruptible: bool
    hours: float
    checkpoint_hours: float | None
    eviction_rate: float
    rework_fraction: float
    retries: int
    backoff_hours: float
    backoff_factor: float
    window_hours: float | None
    node_wait_hours: tuple[float, float]
    usd_per_hour: Decimal | None
    on_demand_usd_per_hour: Decimal | None

    def __post_init__(self) -> None:
        if self.hours <= 0:
            raise ValueError(f"step {self.name}: its runtime must be above 0 hours, got {self.hours}")
        if not 0 <= self.eviction_rate < 1:
            raise ValueError(f"step {self.name}: eviction rate must be at least 0 and below 1, got "
                             f"{self.eviction_rate}")
        if self.checkpoint_hours is not None and self.checkpoint_hours <= 0:
            raise ValueError(f"step {self.name}: checkpoint interval must be above 0, got {self.checkpoint_hours}")
        low, high = self.node_wait_hours
        if not 0 <= low <= high:
            raise ValueError(f"step {self.name}: node wait must be 0 <= shortest <= longest, got {low}, {high}")

    @property
    def hazard(self) -> float:
        """Evictions per node-hour: a node-hour survives with probability 1 − eviction rate."""
        return -math.log1p(-self.eviction_rate) if self.interruptible else 0.0


@record
class Distribution:
    """The median and 90th percentile of one figure over the sampled runs."""

    median: float
    p90: float


@record
class SimResult:
    """What the runs came to. The wall time is over the runs that finished, beside the share that didn't
    (`failed_share`: a figure over all runs would fold runs that never ended into a p90); None when no run
    finished. Costs, over every run (a failed run is billed for what it ran), are None when a step's pool
    has no price."""

    runs: int
    seed: int
    wall_hours: Distribution | None
    cost_usd: Distribution | None
    billed_hours_mean: float
    failed_share: float
    evictions_mean: float
    linear_usd: Decimal | None
    on_demand_usd: Decimal | None


def _cost_per_hour(steps: Sequence[SimStep]) -> np.ndarray | None:
    import numpy as np

    prices = [s.usd_per_hour for s in steps]
    if any(p is None for p in prices):
        return None
    return np.array([float(p) for p in prices])  # type: ignore[arg-type]


def simulate(steps: Sequence[SimStep], *, runs: int = DEFAULT_RUNS, seed: int = DEFAULT_SEED) -> SimResult:
    """Sample `runs` runs of the steps, one after another, with a seeded generator (same seed, same
    figures). Vectorised over runs: each step is walked attempt by attempt for all runs at once."""
    if runs < 1:
        raise ValueError(f"runs must be at least 1, got {runs}")
    if not steps:
        raise ValueError("the pipeline has no steps to simulate")
    import numpy as np

    rng = np.random.default_rng(seed)
    wall = np.zeros(runs)
    billed = np.zeros((len(steps), runs))
    evictions = np.zeros(runs)
    failed = np.zeros(runs, dtype=bool)
    for index, step in enumerate(steps):
        remaining = np.full(runs, step.hours)
        running = ~failed
        since_start = np.zeros(runs)
        for attempt in range(step.retries + 1):
            if not running.any():
                break
            if step.checkpoint_hours is None:
                # The cost model's reading: an eviction at the end of the attempt, losing `rework` of it.
                evicted = running & (rng.random(runs) < -np.expm1(-step.hazard * remaining))
                ran = np.where(running, remaining, 0.0)
                left = np.where(evicted, remaining * step.rework_fraction, 0.0)
            else:
                at = rng.exponential(1 / step.hazard, runs) if step.hazard else np.full(runs, np.inf)
                evicted = running & (at < remaining)
                ran = np.where(running, np.minimum(at, remaining), 0.0)
                saved = np.floor(ran / step.checkpoint_hours) * step.checkpoint_hours
                left = np.where(evicted, remaining - saved, 0.0)
            billed[index] += ran
            wall += ran
            since_start += ran
            evictions += evicted
            remaining = np.where(evicted, left, 0.0)
            running = evicted
            if not running.any():
                break
            if attempt == step.retries:
                failed |= running
                break
            wait = step.backoff_hours * step.backoff_factor ** attempt
            if step.window_hours is not None:
                # Argo ends a retry whose next attempt would start after maxDuration from the first start.
                late = running & (since_start + wait > step.window_hours)
                failed |= late
                running &= ~late
            low, high = step.node_wait_hours
            delay = wait + rng.uniform(low, high, runs)
            wall += np.where(running, delay, 0.0)
            since_start += delay
    prices = _cost_per_hour(steps)
    costs = None if prices is None else (billed * prices[:, None]).sum(axis=0)
    return SimResult(
        runs=runs,
        seed=seed,
        wall_hours=(Distribution(float(np.median(wall[~failed])), float(np.quantile(wall[~failed], 0.9)))
                    if (~failed).any() else None),
        cost_usd=None if costs is None else Distribution(float(np.median(costs)), float(np.quantile(costs, 0.9))),
        billed_hours_mean=float(billed.sum(axis=0).mean()),
        failed_share=float(failed.mean()),
        evictions_mean=float(evictions.mean()),
        linear_usd=linear_cost(steps),
        on_demand_usd=on_demand_cost(steps),
    )


def linear_cost(steps: Sequence[SimStep]) -> Decimal | None:
    """The articles' linear figure for the same work: the cost model's scenario cost of the hours
    each pool runs, pool by pool as the plan prices them (None when a price is missing)."""
    pools: dict[tuple[str, bool, Decimal, Decimal, float, float], Decimal] = {}
    for step in steps:
        if step.usd_per_hour is None or step.on_demand_usd_per_hour is None:
            return None
        key = (step.pool, step.interruptible, step.usd_per_hour, step.on_demand_usd_per_hour,
               step.eviction_rate, step.rework_fraction)
        pools[key] = pools.get(key, Decimal(0)) + Decimal(str(step.hours))
    total = Decimal(0)
    for (pool, interruptible, price, on_demand, rate, rework), hours in pools.items():
        usage = PoolUsage(pool, "spot" if interruptible else "on-demand", price,
                          on_demand if interruptible else price, 0, hours)
        total += pool_cost(usage, Assumptions(Decimal(str(rate)), Decimal(str(rework)))).scenario_usd
    return total


def on_demand_cost(steps: Sequence[SimStep]) -> Decimal | None:
    """The same work on on-demand capacity: nothing evicted, nothing run twice."""
    if any(s.on_demand_usd_per_hour is None for s in steps):
        return None
    hours = (Decimal(str(s.hours)) * s.on_demand_usd_per_hour for s in steps)  # type: ignore[operator]
    return to_cents(sum(hours, Decimal(0)))
