"""How `spotkube simulate` shows a TrainJob's result: a terminal table per checkpoint interval, Markdown, JSON."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.table import Table

from spotkube.cli.simulate_views import _hours, _usd
from spotkube.platform.cost.gang import GangJob, GangResult

_COLUMNS = ("checkpoint every", "finish p50", "finish p90", "cost p50", "cost p90", "mean cost", "over limit",
            "restarts", "goodput lost", "failed")


def _interval(result: GangResult) -> str:
    return _hours(result.checkpoint_hours) if result.checkpoint_hours else "never"


def _row(result: GangResult, job: GangJob, best: GangResult) -> tuple[str, ...]:
    overhead = result.overhead()
    mark = " (recommended)" if result is best else " (the job's)" if result.checkpoint_hours == job.checkpoint_hours \
        else ""
    cost = result.cost_usd
    return (
        _interval(result) + mark,
        _hours(result.wall_hours.median), _hours(result.wall_hours.p90),
        _usd(cost.median) if cost else "unpriced", _usd(cost.p90) if cost else "unpriced",
        _usd(result.cost_mean_usd), "-" if overhead is None else f"{overhead:+.0%}",
        f"{result.restarts_mean:.1f}", f"{result.lost_node_hours_mean:.1f} node-h", f"{result.failed_share:.1%}",
    )


def _recommendation(job: GangJob, results: Sequence[GangResult], best: GangResult) -> str:
    """The interval of the lowest mean cost, and how Young and Daly's fares next to it."""
    young_daly = job.young_daly_hours()
    text = f"checkpoint every {_interval(best)}"
    at_young_daly = next((r for r in results if r.checkpoint_hours == young_daly), None)
    if at_young_daly is not None and at_young_daly.cost_mean_usd and best.cost_mean_usd:
        gap = at_young_daly.cost_mean_usd / best.cost_mean_usd - 1
        text += f" (Young/Daly's {_interval(at_young_daly)} costs {gap:+.1%} in the simulation)"
    return text


def _facts(job: GangJob, results: Sequence[GangResult], best: GangResult) -> list[tuple[str, str]]:
    young_daly = job.young_daly_hours()
    first = results[0]
    mtbe = 1 / job.gang_hazard if job.gang_hazard else None
    return [
        ("job", f"{job.name}: {job.workers} workers on {job.pool}, {_hours(job.hours)} of work each"),
        ("evictions", f"any node: the gang every {_hours(mtbe)} on average" if mtbe else "none (not interruptible)"),
        ("checkpoint write", _hours(job.checkpoint_write_hours) if job.checkpoint_write_hours else "free"),
        ("Young/Daly", f"√(2 × write × time between evictions) = {_hours(young_daly)}" if young_daly else "-"),
        ("queueing", f"{_hours(first.queue_hours_mean)} on average for all {job.workers} at once"),
        ("on demand", f"{_usd(first.on_demand_usd)} (the same work, never evicted)"),
        ("physical limit", f"{_usd(first.physical_limit_usd)} (the same work on spot, nothing lost)"),
        ("recommended", _recommendation(job, results, best)),
        ("sampled", f"{first.runs} runs, seed {first.seed}"),
    ]


def render(stack: str, job: GangJob, results: Sequence[GangResult], best: GangResult, console: Console) -> None:
    facts = Table(title=f"TrainJob {job.name} on {stack}", title_justify="left", show_header=False)
    facts.add_column("what")
    facts.add_column("value", overflow="fold")
    for key, value in _facts(job, results, best):
        facts.add_row(key, value)
    console.print(facts)
    table = Table(title="by checkpoint interval", title_justify="left")
    for column in _COLUMNS:
        table.add_column(column)
    for result in results:
        table.add_row(*_row(result, job, best))
    console.print(table)


def to_markdown(stack: str, job: GangJob, results: Sequence[GangResult], best: GangResult) -> str:
    lines = [f"### TrainJob {job.name} on {stack}", ""]
    lines += [f"- {key}: {value}" for key, value in _facts(job, results, best)]
    lines += ["", "| " + " | ".join(_COLUMNS) + " |", "|" + "---|" * len(_COLUMNS)]
    lines += ["| " + " | ".join(_row(r, job, best)) + " |" for r in results]
    return "\n".join(lines) + "\n"


def _result_json(result: GangResult) -> dict[str, Any]:
    cost = result.cost_usd
    return {
        "checkpointHours": result.checkpoint_hours,
        "wallHours": {"median": result.wall_hours.median, "p90": result.wall_hours.p90},
        "costUsd": None if cost is None else {"median": cost.median, "p90": cost.p90, "mean": result.cost_mean_usd},
        "overPhysicalLimit": result.overhead(),
        "restartsMean": result.restarts_mean,
        "goodputLostNodeHoursMean": result.lost_node_hours_mean,
        "queueHoursMean": result.queue_hours_mean,
        "failedShare": result.failed_share,
    }


def to_json(stack: str, job: GangJob, results: Sequence[GangResult], best: GangResult) -> str:
    first = results[0]
    return json.dumps({
        "stack": stack, "trainJob": job.name, "pool": job.pool, "workers": job.workers, "hours": job.hours,
        "youngDalyHours": job.young_daly_hours(), "recommendedCheckpointHours": best.checkpoint_hours,
        "onDemandUsd": None if first.on_demand_usd is None else str(first.on_demand_usd),
        "physicalLimitUsd": None if first.physical_limit_usd is None else str(first.physical_limit_usd),
        "runs": first.runs, "seed": first.seed, "intervals": [_result_json(r) for r in results],
    }, indent=2)
