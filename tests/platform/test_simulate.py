"""The Monte Carlo of a pipeline under eviction (`spotkube simulate`'s model), through its public API.

The anchor is the articles' linear cost: D4s_v3 in UK South, 3,400 h of work, 5 % evicted, rework
fraction 1: $173.86 on spot against $788.80 on demand. The model must give those figures in the
limit the articles assume, and behave as retries, backoff, checkpoints and node waits say it should.
"""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

import pytest

from spotkube.platform.cost.simulate import SimStep, linear_cost, on_demand_cost, simulate

#: D4s_v3 in UK South, the bundled table's (and the articles') prices.
SPOT = Decimal("0.0487")
ON_DEMAND = Decimal("0.232")


def step(hours: float = 1.0, **changes: object) -> SimStep:
    base = SimStep(name="work", pool="cpuspot", interruptible=True, hours=hours, checkpoint_hours=None,
                   eviction_rate=0.05, rework_fraction=1.0, retries=5, backoff_hours=0.0, backoff_factor=1.0,
                   window_hours=None, node_wait_hours=(0.0, 0.0), usd_per_hour=SPOT, on_demand_usd_per_hour=ON_DEMAND)
    return replace(base, **changes)  # type: ignore[arg-type]


def test_the_linear_figures_are_the_articles() -> None:
    """3,400 h of work on the spot pool at 5 % evicted, rework 1: 3,400 × 1.05 × $0.0487 and 3,400 × $0.232."""
    work = [step(hours=3400)]
    assert linear_cost(work) == Decimal("173.86")
    assert on_demand_cost(work) == Decimal("788.80")
    # The same hours split into hour-long steps are priced alike, pool by pool as the plan does.
    assert linear_cost([step(hours=1, name=f"s{i}") for i in range(3400)]) == Decimal("173.86")


def test_in_the_articles_limit_the_sampled_cost_tends_to_the_linear_one() -> None:
    """Rare evictions (each step evicted at most once), each costing the rework fraction of the step,
    no wait for a node: the mean billed hours tend to hours × (1 + rate × rework)."""
    rate, steps = 0.002, 400
    work = [step(hours=1, eviction_rate=rate, name=f"s{i}") for i in range(steps)]
    result = simulate(work, runs=4000, seed=7)
    extra_per_hour = (result.billed_hours_mean - steps) / steps
    assert extra_per_hour == pytest.approx(rate * 1.0, rel=0.05)
    half = simulate([replace(s, rework_fraction=0.5) for s in work], runs=4000, seed=7)
    assert (half.billed_hours_mean - steps) / steps == pytest.approx(rate * 0.5, rel=0.05)


def test_the_same_seed_gives_the_same_figures_and_the_runs_are_counted() -> None:
    work = [step(hours=2, checkpoint_hours=0.25, eviction_rate=0.2, backoff_hours=0.1, node_wait_hours=(0.05, 0.2))]
    first, second = simulate(work, runs=500, seed=3), simulate(work, runs=500, seed=3)
    assert first == second
    assert first.runs == 500 and first.seed == 3
    assert simulate(work, runs=500, seed=4).wall_hours != first.wall_hours


def test_without_evictions_wall_time_and_cost_are_the_work_itself() -> None:
    result = simulate([step(hours=2, eviction_rate=0.0), step(hours=1, interruptible=False, usd_per_hour=ON_DEMAND)],
                      runs=50)
    assert result.wall_hours.median == result.wall_hours.p90 == pytest.approx(3.0)
    assert result.cost_usd is not None
    assert result.cost_usd.median == pytest.approx(float(2 * SPOT + ON_DEMAND))
    assert result.evictions_mean == 0 and result.failed_share == 0


def test_checkpoints_bound_the_rework_and_so_the_tail() -> None:
    """A long step evicted often: without checkpoints it restarts from zero and rarely finishes within
    its retries; checkpointing every 15 minutes keeps its progress."""
    long_step = step(hours=10, eviction_rate=0.2, retries=20)
    bare = simulate([long_step], runs=2000, seed=1)
    saved = simulate([replace(long_step, checkpoint_hours=0.25)], runs=2000, seed=1)
    assert saved.failed_share < bare.failed_share
    assert saved.billed_hours_mean < bare.billed_hours_mean
    assert saved.wall_hours.p90 < 14, "at most a quarter hour lost per eviction"


def test_retries_backoff_and_node_waits_add_wall_time_not_cost() -> None:
    base = step(hours=1, eviction_rate=0.5, checkpoint_hours=0.5, retries=50)
    quick = simulate([base], runs=2000, seed=5)
    slow = simulate([replace(base, backoff_hours=0.25, node_wait_hours=(0.1, 0.3))], runs=2000, seed=5)
    assert slow.wall_hours.p90 > quick.wall_hours.p90
    assert slow.billed_hours_mean == pytest.approx(quick.billed_hours_mean)


def test_used_up_retries_and_a_passed_retry_window_fail_runs() -> None:
    no_retries = simulate([step(hours=1, eviction_rate=0.5, retries=0)], runs=4000, seed=2)
    assert no_retries.failed_share == pytest.approx(0.5, abs=0.03), "one eviction fails the run"
    doubling = step(hours=1, eviction_rate=0.5, checkpoint_hours=0.1, retries=10, backoff_hours=1.0, backoff_factor=2)
    windowed = simulate([replace(doubling, window_hours=2.0)], runs=2000, seed=2)
    unbounded = simulate([doubling], runs=2000, seed=2)
    assert windowed.failed_share > unbounded.failed_share


def test_a_step_without_a_price_leaves_the_cost_unpriced() -> None:
    result = simulate([step(usd_per_hour=None, on_demand_usd_per_hour=None)], runs=10)
    assert result.cost_usd is None and result.linear_usd is None and result.on_demand_usd is None


@pytest.mark.parametrize(("changes", "said"), [
    ({"hours": 0}, "runtime must be above 0 hours"),
    ({"eviction_rate": 1.0}, "eviction rate must be at least 0 and below 1"),
    ({"checkpoint_hours": 0.0}, "checkpoint interval must be above 0"),
    ({"node_wait_hours": (2.0, 1.0)}, "node wait must be 0 <= shortest <= longest"),
])
def test_impossible_steps_are_refused(changes: dict[str, object], said: str) -> None:
    with pytest.raises(ValueError, match=said):
        step(**changes)


def test_the_wall_time_is_over_the_runs_that_finished_beside_the_share_that_did_not() -> None:
    """No retry and a long wait for a node: a run either finishes in its 2 h or fails, so a p90 over every
    run would mix in runs that never ended. The figure is over the finished runs, the share failed beside it."""
    result = simulate([step(hours=2, retries=0, eviction_rate=0.3, node_wait_hours=(10.0, 10.0))], runs=2000, seed=3)

    assert 0.2 < result.failed_share < 0.7
    assert result.wall_hours is not None
    assert result.wall_hours.median == result.wall_hours.p90 == pytest.approx(2.0)
    everything_failed = simulate([step(hours=50, retries=0, eviction_rate=0.99)], runs=200, seed=3)
    assert everything_failed.failed_share == 1.0 and everything_failed.wall_hours is None
