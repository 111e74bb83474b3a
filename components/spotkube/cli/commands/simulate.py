"""`spotkube simulate`: a compiled pipeline's wall time and cost on a stack, evictions sampled."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated

import typer

from spotkube.cli import gang_views, simulate_views, terminal
from spotkube.cli.app import Format, FormatOption, PricesOption, ProjectOption, fail
from spotkube.clouds import price_table
from spotkube.components.offline import StackRun, run_stack
from spotkube.platform import stack_names
from spotkube.platform.cost.gang import recommended, sweep
from spotkube.platform.cost.simulate import DEFAULT_RUNS, DEFAULT_SEED
from spotkube.platform.cost.simulate import simulate as run_simulation
from spotkube.platform.errors import SpotkubeError
from spotkube.platform.pipeline_reader import CompiledPipeline
from spotkube.platform.project import find_project
from spotkube.platform.registration import BuiltCluster
from spotkube.platform.trainjob_reader import TrainJob, read_check_file
from spotkube.review.program_review import stack_documents
from spotkube.review.simulation import Overrides, sim_steps, startup_samples
from spotkube.review.training_simulation import GangOverrides, gang_job
from spotkube.review.trainjob_check import stack_reports

_DURATION = re.compile(r"([0-9]+)(s|m|h|d)")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def _duration(option: str, text: str, *, zero: bool = False) -> int:
    """Whole seconds from `90s`, `30m`, `2h` or `1d` (`0` too where `zero`); anything else is a user error."""
    match = _DURATION.fullmatch(text.strip())
    if zero and text.strip() == "0":
        return 0
    if match is None or int(match[1]) == 0:
        raise fail(f"{option} {text}: use a whole number above 0 followed by s, m, h or d, e.g. 30m or 2h")
    return int(match[1]) * _UNIT_SECONDS[match[2]]


def _pairs(option: str, pairs: list[str], what: str) -> dict[str, str]:
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key or not value:
            raise fail(f"{option} {pair}: use {what}")
        out[key] = value
    return out


def _cluster(run: StackRun, name: str | None) -> BuiltCluster:
    """The cluster the pipeline runs on: the one the program builds or joins, or the one `--cluster` names."""
    names = [c.name for c in run.clusters]
    if name is None and len(names) == 1:
        return run.clusters[0]
    found = next((c for c in run.clusters if c.name == name), None)
    if found is None:
        given = f"--cluster {name}: not a cluster" if name else "the program builds or joins several clusters"
        raise fail(f"stack {run.stack}: {given}; name one with --cluster: {', '.join(names)}")
    return found


def _rate(pair: str, text: str) -> float:
    try:
        rate = float(text)
    except ValueError:
        rate = -1.0
    if not 0 <= rate < 1:
        raise fail(f"--eviction-rate {pair}: use POOL=RATE with RATE from 0 up to (not including) 1, e.g. 0.05")
    return rate


def simulate(
    compiled: Annotated[list[Path], typer.Argument(
        metavar="PIPELINE.yaml...", help="Pipeline(s) compiled by kfp.compiler.Compiler().compile(...), or one "
        "Kubeflow Trainer TrainJob manifest (spotkube.training.train_job).")],
    stack: Annotated[str, typer.Option("--stack", "-s", metavar="NAME",
                                       help="The stack whose pools the pipeline runs on.")],
    cluster: Annotated[str | None, typer.Option(
        "--cluster", metavar="NAME",
        help="The cluster whose pools the pipeline runs on, when the stack's program builds or joins several.")]
    = None,
    runs: Annotated[int, typer.Option("--runs", min=1, max=1_000_000, metavar="N",
                                      help="Runs to sample, 1 to 1,000,000.")] = DEFAULT_RUNS,
    seed: Annotated[int, typer.Option("--seed", min=0, metavar="N",
                                      help="Seed of the random generator: same seed, same figures.")]
    = DEFAULT_SEED,
    runtime: Annotated[list[str] | None, typer.Option(
        "--runtime", metavar="STEP=DURATION",
        help="A step's runtime, STEP=DURATION (e.g. train=3h); overrides what the step declares.")]
    = None,
    default_runtime: Annotated[str, typer.Option(
        "--default-runtime", metavar="DURATION",
        help="Runtime of a step that declares none (spotkube.pipelines.declare_timing).")]
    = "1h",
    eviction_rate: Annotated[list[str] | None, typer.Option(
        "--eviction-rate", metavar="POOL=RATE",
        help="A pool's eviction rate, POOL=RATE (share of node-hours evicted); default: "
        "the stack's cost.evictionRate.")] = None,
    node_start: Annotated[str, typer.Option(
        "--node-start", metavar="DURATION",
        help="How long a new node takes to be ready (VM, boot, driver, device plugin).")] = "5m",
    out_of_capacity: Annotated[float, typer.Option(
        "--out-of-capacity", min=0.0, max=1.0, metavar="SHARE",
        help="Share of scale-ups of a spot or preemptible GPU pool that find no capacity, for the sampled "
        "time to a running step (no cloud publishes it; docs/time-to-gpu.md).")] = 0.1,
    workers: Annotated[int | None, typer.Option(
        "--workers", min=1, max=10_000, metavar="N",
        help="TrainJob: how many workers (nodes) the job runs; default: its numNodes.")] = None,
    checkpoint_interval: Annotated[str | None, typer.Option(
        "--checkpoint-interval", metavar="DURATION",
        help="TrainJob: how often it saves; default: its SPOTKUBE_CHECKPOINT_INTERVAL_SECONDS, else never.")]
    = None,
    checkpoint_write: Annotated[str, typer.Option(
        "--checkpoint-write", metavar="DURATION",
        help="TrainJob: how long one save takes (all workers wait).")] = "2m",
    queue_wait: Annotated[str, typer.Option(
        "--queue-wait", metavar="DURATION",
        help="TrainJob: mean wait for capacity for every worker at once before it starts (0: none).")] = "0",
    output: FormatOption = Format.table,
    prices: PricesOption = None,
    project_dir: ProjectOption = Path("."),
) -> None:
    """Median and p90 wall time and cost of a compiled pipeline on a stack, with evictions, retries,
    backoff, checkpoints and the wait for new nodes sampled (a seeded Monte Carlo), next to the linear
    cost model's figure and the same work on demand. Several pipelines share one offline run of the stack.

    Given a TrainJob, it samples the gang instead (one eviction restarts every worker from the last
    checkpoint) at the job's checkpoint interval and at multiples of Young and Daly's, and recommends the
    interval of the lowest mean cost, against on-demand and the physical limit (spot with nothing lost).
    """
    overrides = Overrides(
        runtimes={step: _duration("--runtime", text)
                  for step, text in _pairs("--runtime", runtime or [], "STEP=DURATION, e.g. train=3h").items()},
        eviction_rates={pool: _rate(f"{pool}={text}", text)
                        for pool, text in _pairs("--eviction-rate", eviction_rate or [], "POOL=RATE").items()},
        default_runtime_seconds=_duration("--default-runtime", default_runtime),
        node_start_seconds=_duration("--node-start", node_start),
    )
    try:
        files = [read_check_file(path) for path in compiled]
        jobs = [f for f in files if isinstance(f, TrainJob)]
        if jobs:
            if len(files) > 1:
                raise fail("simulate takes one TrainJob manifest at a time, without pipelines")
            gang = GangOverrides(
                workers=workers,
                runtime_seconds=overrides.runtimes.get(jobs[0].name, overrides.default_runtime_seconds),
                checkpoint_seconds=None if checkpoint_interval is None
                else _duration("--checkpoint-interval", checkpoint_interval),
                checkpoint_write_seconds=_duration("--checkpoint-write", checkpoint_write, zero=True),
                queue_wait_seconds=_duration("--queue-wait", queue_wait, zero=True),
                eviction_rates=overrides.eviction_rates, node_start_seconds=overrides.node_start_seconds)
            _simulate_trainjob(jobs[0], gang, stack, cluster, runs, seed, output, prices, project_dir)
            return
        pipelines: list[CompiledPipeline] = [f for f in files if isinstance(f, CompiledPipeline)]
        project = find_project(project_dir)
        name = stack_names.stack_name(project, stack)
        run = run_stack(project, name)
        chosen = _cluster(run, cluster)
        if chosen.contracts is None:
            raise fail(f"stack {name}: {chosen.name}'s pool contracts can't be read to place the pipeline's steps on")
        document = next(d for d in stack_documents(run, price_table(prices)) if d.cluster == chosen.name)
        simulations = []
        for pipeline in pipelines:
            steps = sim_steps(pipeline, chosen.spec, name, list(chosen.contracts), document.cost, document.fallback,
                              overrides)
            simulations.append((pipeline.name, steps, run_simulation(steps, runs=runs, seed=seed)))
        startups = startup_samples(document.startup, [s for _, steps, _ in simulations for s in steps],
                                   out_of_capacity, runs=runs, seed=seed)
    except SpotkubeError as err:
        raise fail(str(err)) from None
    if output is Format.json:
        typer.echo(simulate_views.to_json(name, simulations, startups))
    elif output is Format.markdown:
        typer.echo(simulate_views.to_markdown(name, simulations, startups), nl=False)
    else:
        simulate_views.render(name, simulations, terminal.console(), startups)


def _simulate_trainjob(job: TrainJob, overrides: GangOverrides, stack: str, cluster: str | None, runs: int, seed: int,
                       output: Format, prices: Path | None, project_dir: Path) -> None:
    """The gang's sweep over checkpoint intervals on the stack, shown in `output`."""
    project = find_project(project_dir)
    name = stack_names.stack_name(project, stack)
    run = run_stack(project, name)
    chosen = _cluster(run, cluster)
    report = next(r for c, r in zip(run.clusters, stack_reports(job, run.registrations, run.clusters, name),
                                    strict=True) if c is chosen)
    document = next(d for d in stack_documents(run, price_table(prices)) if d.cluster == chosen.name)
    gang = gang_job(job, report, chosen.spec, list(chosen.contracts or ()), document.cost, document.fallback,
                    overrides)
    try:
        results = sweep(gang, runs=runs, seed=seed)
    except ValueError as err:
        raise fail(str(err)) from None
    best = recommended(results)
    if output is Format.json:
        typer.echo(gang_views.to_json(name, gang, results, best))
    elif output is Format.markdown:
        typer.echo(gang_views.to_markdown(name, gang, results, best), nl=False)
    else:
        gang_views.render(name, gang, results, best, terminal.console())
