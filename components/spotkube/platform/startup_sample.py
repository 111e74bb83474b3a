"""Sampled times to a running GPU step, for `spotkube simulate`: the plan's ranges (`startup`) drawn
many times, with the pool's capacity out at a given share of the runs.

Apart from `startup`, which every plan loads: only the simulation samples. Pure module: numpy, imported
when a sample is drawn, no Pulumi.
"""

from __future__ import annotations

from spotkube.platform.records import record
from spotkube.platform.startup import PoolStartup


@record
class StartupSample:
    """Sampled times to a running step of one pool (seconds; None: the step was still waiting for
    capacity at that percentile, as a pool without a bounded fallback does when its capacity is out)."""

    pool: str
    runs: int
    out_of_capacity: float
    p50: float | None
    p90: float | None
    p99: float | None
    #: Share of the runs whose pool had no capacity and that went to the next tier.
    fell_back: float
    #: Share of the runs that waited for capacity with no bounded fallback.
    waited: float


def sample_startup(startup: PoolStartup, out_of_capacity: float, *, runs: int, seed: int) -> StartupSample | None:
    """Sample the time to a running step: the node and the image uniformly in their ranges; on an
    interruptible pool, with probability `out_of_capacity` its capacity is out, and the step waits the
    fallback bound (the worst case the plan states), then the next tier's node and image, or, without a
    bounded fallback, waits for capacity. None when the image time is unknown (no declared size)."""
    if not 0 <= out_of_capacity <= 1:
        raise ValueError(f"the out-of-capacity share must be from 0 to 1, got {out_of_capacity}")
    node, image = startup.node_span, startup.image.span
    if image is None:
        return None
    import numpy as np

    rng = np.random.default_rng(seed)
    times = rng.uniform(node.low, node.high, runs) + rng.uniform(image.low, image.high, runs)
    out = (rng.random(runs) < out_of_capacity) if startup.capacity != "on-demand" else np.zeros(runs, dtype=bool)
    fallback = startup.fallback
    then = fallback.then if fallback else None
    if fallback is not None and then is not None:
        tail = fallback.bound_seconds + rng.uniform(then.low, then.high, runs)
        times = np.where(out, tail, times)
        fell_back, waited = float(out.mean()), 0.0
    else:
        times = np.where(out, np.inf, times)
        fell_back, waited = 0.0, float(out.mean())

    def percentile(q: float) -> float | None:
        value = float(np.quantile(times, q, method="inverted_cdf"))
        return None if value == float("inf") else value

    return StartupSample(startup.pool, runs, out_of_capacity, percentile(0.5), percentile(0.9), percentile(0.99),
                         fell_back, waited)
