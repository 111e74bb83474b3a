"""The gang simulator (`platform/cost/gang.py`): what it must give in the limits it can be checked against."""

from __future__ import annotations

import dataclasses
import math
from decimal import Decimal

import pytest

from spotkube.platform.cost.gang import GangJob, recommended, simulate_gang, sweep, sweep_intervals

JOB = GangJob(name="ddp", pool="a100-spot", workers=4, hours=24.0, checkpoint_hours=0.5,
              checkpoint_write_hours=2 / 60, eviction_rate=0.05, interruptible=True,
              node_wait_hours=(5 / 60, 10 / 60), queue_wait_hours=0.0,
              usd_per_node_hour=Decimal("1.50"), on_demand_usd_per_node_hour=Decimal("3.67"))


def test_never_evicted_it_costs_the_work_and_its_saves_and_never_restarts() -> None:
    calm = dataclasses.replace(JOB, interruptible=False)
    result = simulate_gang(calm, runs=200)
    saves = math.ceil(24 / 0.5) - 1
    assert result.restarts_mean == 0 and result.lost_node_hours_mean == 0 and result.failed_share == 0
    assert result.wall_hours.median == pytest.approx(24 + saves * 2 / 60)
    assert result.cost_mean_usd == pytest.approx(4 * 1.5 * (24 + saves * 2 / 60))
    assert result.physical_limit_usd == Decimal("144.00") and result.on_demand_usd == Decimal("352.32")


def test_every_eviction_loses_at_most_one_interval_and_a_save_on_every_worker() -> None:
    result = simulate_gang(JOB, runs=500)
    assert result.restarts_mean > 0
    assert result.lost_node_hours_mean <= result.restarts_mean * 4 * (0.5 + 2 / 60) + 1e-9
    assert result.cost_mean_usd is not None and result.cost_mean_usd > float(result.physical_limit_usd or 0)


def test_more_workers_mean_more_restarts_and_a_shorter_young_daly_interval() -> None:
    small, large = JOB, dataclasses.replace(JOB, workers=8)
    assert simulate_gang(large, runs=500).restarts_mean > simulate_gang(small, runs=500).restarts_mean
    assert large.young_daly_hours() == pytest.approx(small.young_daly_hours() / math.sqrt(2))
    hazard = -4 * math.log(0.95)
    assert small.young_daly_hours() == pytest.approx(math.sqrt(2 * (2 / 60) / hazard))


def test_without_checkpoints_an_eviction_loses_everything_since_the_start() -> None:
    never = dataclasses.replace(JOB, checkpoint_hours=None, hours=4.0)
    result = simulate_gang(never, runs=500)
    saved = simulate_gang(dataclasses.replace(never, checkpoint_hours=0.25), runs=500)
    assert result.lost_node_hours_mean > saved.lost_node_hours_mean
    assert result.wall_hours.p90 > saved.wall_hours.p90


def test_the_sweep_tries_the_job_s_interval_and_young_daly_s_and_recommends_the_cheapest() -> None:
    intervals = sweep_intervals(JOB)
    young_daly = JOB.young_daly_hours()
    assert 0.5 in intervals and young_daly in intervals and len(intervals) == 6
    results = sweep(JOB, runs=400)
    best = recommended(results)
    assert best.cost_mean_usd == min(r.cost_mean_usd for r in results if r.cost_mean_usd is not None)
    assert young_daly is not None and young_daly / 2 <= (best.checkpoint_hours or 0) <= young_daly * 2


def test_the_same_seed_gives_the_same_figures() -> None:
    assert simulate_gang(JOB, runs=300, seed=7) == simulate_gang(JOB, runs=300, seed=7)
    assert simulate_gang(JOB, runs=300, seed=7) != simulate_gang(JOB, runs=300, seed=8)


def test_a_job_without_workers_is_refused() -> None:
    with pytest.raises(ValueError, match="job ddp: it needs at least 1 worker, got 0"):
        dataclasses.replace(JOB, workers=0)
