"""How `spotkube simulate` shows its result: a terminal table, Markdown, or JSON."""

from __future__ import annotations

import json
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from rich.console import Console
from rich.table import Table

from spotkube.cli.figures import percent
from spotkube.platform.cost.simulate import SimResult, SimStep
from spotkube.platform.startup import PoolStartup, duration
from spotkube.platform.startup_sample import StartupSample
from spotkube.review.simulation import StartupSampled

UNPRICED = "unpriced"


def _hours(value: float) -> str:
    """`2h05m`, `45m`, `3d04h` for wall times."""
    minutes = round(value * 60)
    days, rest = divmod(minutes, 24 * 60)
    hours, mins = divmod(rest, 60)
    if days:
        return f"{days}d{hours:02d}h"
    return f"{hours}h{mins:02d}m" if hours else f"{mins}m"


def _usd(value: float | Decimal | None) -> str:
    return UNPRICED if value is None else f"${Decimal(str(value)).quantize(Decimal('0.01'))}"


def _step_rows(steps: Sequence[SimStep]) -> list[tuple[str, ...]]:
    rows = []
    for s in steps:
        checkpoint = _hours(s.checkpoint_hours) if s.checkpoint_hours else f"none (rework {s.rework_fraction:g})"
        evictions = f"{s.eviction_rate:g} of node-hours" if s.interruptible else "-"
        rows.append((s.name, s.pool, _hours(s.hours), checkpoint, evictions, str(s.retries),
                     f"{_hours(s.node_wait_hours[0])}..{_hours(s.node_wait_hours[1])}"))
    return rows


_STEP_COLUMNS = ("step", "pool", "runtime", "checkpoint", "evictions", "retries", "new node")


def _wall_time(result: SimResult) -> str:
    """The wall time over the runs that finished, with the share that didn't beside it."""
    wall, failed = result.wall_hours, result.failed_share
    if wall is None:
        return f"no run finished ({percent(failed * 100)} failed: retries used up or retry window passed)"
    text = f"median {_hours(wall.median)}, p90 {_hours(wall.p90)}"
    if not failed:
        return text + " (every run finished)"
    return (f"{text} over the {percent((1 - failed) * 100)} of runs that finished; {percent(failed * 100)} never "
            "did (retries used up or retry window passed)")


def _summary(result: SimResult) -> list[tuple[str, str]]:
    cost = result.cost_usd
    return [
        ("wall time", _wall_time(result)),
        ("cost", f"median {_usd(cost.median)}, p90 {_usd(cost.p90)} over every run" if cost else UNPRICED),
        ("linear model", f"{_usd(result.linear_usd)} (hours × (1 + eviction rate × rework fraction))"),
        ("on demand", f"{_usd(result.on_demand_usd)} (the same work, never evicted)"),
        ("evictions", f"{result.evictions_mean:.2f} per run on average"),
        ("failed runs", f"{percent(result.failed_share * 100)} (retries used up or retry window passed)"),
        ("sampled", f"{result.runs} runs, seed {result.seed}"),
    ]


#: One simulated pipeline: its name, its steps as simulated and the result.
Simulation = tuple[str, Sequence[SimStep], SimResult]


def _when(seconds: float | None) -> str:
    return "still waiting for capacity" if seconds is None else duration(seconds)


def _startup_rows(startups: Sequence[StartupSampled]) -> list[tuple[str, ...]]:
    """(pool, p50, p90, p99, out of capacity) per GPU pool the steps land on, from 0 nodes."""
    rows = []
    for startup, sample in startups:
        if sample is None:
            rows.append((startup.pool, "-", "-", "-", startup.image.note or "image time unknown"))
            continue
        share = f"(--out-of-capacity {sample.out_of_capacity:g})"
        out = (f"{percent(sample.fell_back * 100)} of runs found none and went on to on-demand {share}"
               if startup.fallback else f"{percent(sample.waited * 100)} of runs found none and waited for capacity "
               f"{share}")
        rows.append((startup.pool, _when(sample.p50), _when(sample.p90), _when(sample.p99),
                     out if startup.capacity != "on-demand" else "on-demand: none"))
    return rows


_STARTUP_COLUMNS = ("pool", "p50", "p90", "p99", "capacity out")


def render(stack: str, simulations: Sequence[Simulation], console: Console,
           startups: Sequence[StartupSampled] = ()) -> None:
    for pipeline, steps, result in simulations:
        _render_one(pipeline, stack, steps, result, console)
    if startups:
        table = Table(title=f"{stack}: time to a running step from 0 nodes, sampled", title_justify="left")
        for column in _STARTUP_COLUMNS:
            table.add_column(column, overflow="fold")
        for row in _startup_rows(startups):
            table.add_row(*row)
        console.print(table)


def _render_one(pipeline: str, stack: str, steps: Sequence[SimStep], result: SimResult, console: Console) -> None:
    table = Table(title=f"{pipeline} on {stack}: steps as simulated", title_justify="left")
    for column in _STEP_COLUMNS:
        table.add_column(column, overflow="fold")
    for row in _step_rows(steps):
        table.add_row(*row)
    console.print(table)
    summary = Table(show_header=False, title="under eviction", title_justify="left")
    summary.add_column("figure")
    summary.add_column("value", overflow="fold")
    for row in _summary(result):
        summary.add_row(*row)
    console.print(summary)


def to_markdown(stack: str, simulations: Sequence[Simulation], startups: Sequence[StartupSampled] = ()) -> str:
    text = "".join(_markdown_one(pipeline, stack, steps, result) for pipeline, steps, result in simulations)
    if not startups:
        return text
    lines = [f"### {stack}: time to a running step from 0 nodes, sampled", "",
             "| " + " | ".join(_STARTUP_COLUMNS) + " |", "|" + "---|" * len(_STARTUP_COLUMNS)]
    lines += ["| " + " | ".join(row) + " |" for row in _startup_rows(startups)]
    return text + "\n".join(lines) + "\n"


def _markdown_one(pipeline: str, stack: str, steps: Sequence[SimStep], result: SimResult) -> str:
    lines = [f"### {pipeline} on {stack} under eviction", "", "| " + " | ".join(_STEP_COLUMNS) + " |",
             "|" + "---|" * len(_STEP_COLUMNS)]
    lines += ["| " + " | ".join(row) + " |" for row in _step_rows(steps)]
    lines += ["", *(f"- {name}: {value}" for name, value in _summary(result)), ""]
    return "\n".join(lines)


def _money(value: float | Decimal | None) -> float | None:
    return None if value is None else round(float(value), 2)


def to_json(stack: str, simulations: Sequence[Simulation], startups: Sequence[StartupSampled] = ()) -> str:
    """`{"stack", "simulations": [...], "startup": [...]}`, one entry per pipeline, and one per GPU pool the
    steps land on (its sampled seconds to a running step from 0 nodes; null: still waiting for capacity)."""
    return json.dumps({"stack": stack, "simulations": [_json_one(pipeline, steps, result)
                                                       for pipeline, steps, result in simulations],
                       "startup": [_startup_json(startup, sample) for startup, sample in startups]}, indent=2)


def _startup_json(startup: PoolStartup, sample: StartupSample | None) -> dict[str, Any]:
    if sample is None:
        return {"pool": startup.pool, "sampled": False, "note": startup.image.note}
    return {"pool": startup.pool, "sampled": True, "runs": sample.runs, "outOfCapacity": sample.out_of_capacity,
            "p50Seconds": sample.p50, "p90Seconds": sample.p90, "p99Seconds": sample.p99,
            "fellBack": sample.fell_back, "waited": sample.waited}


def _json_one(pipeline: str, steps: Sequence[SimStep], result: SimResult) -> dict[str, Any]:
    return {
        "pipeline": pipeline,
        "runs": result.runs,
        "seed": result.seed,
        "wallHours": None if result.wall_hours is None else {
            "median": result.wall_hours.median, "p90": result.wall_hours.p90, "over": "finished runs"},
        "costUsd": None if result.cost_usd is None else {"median": _money(result.cost_usd.median),
                                                          "p90": _money(result.cost_usd.p90)},
        "linearUsd": _money(result.linear_usd),
        "onDemandUsd": _money(result.on_demand_usd),
        "billedHoursMean": result.billed_hours_mean,
        "evictionsMean": result.evictions_mean,
        "failedShare": result.failed_share,
        "steps": [{"name": s.name, "pool": s.pool, "interruptible": s.interruptible, "hours": s.hours,
                   "checkpointHours": s.checkpoint_hours, "evictionRate": s.eviction_rate, "retries": s.retries,
                   "nodeWaitHours": list(s.node_wait_hours), "usdPerHour": _money(s.usd_per_hour)}
                  for s in steps],
    }
