"""The inputs of `spotkube simulate` for one pipeline on one stack: each step's pool, prices, eviction
rate, retries and the wait for a new node, from the plan of the stack as registered.

Where a step lands is the contract's matcher's favourite pool (as pipeline-check finds it), its prices
are the plan's (a shared GPU priced per client: the node's price over the slices it advertises), its
retries are what it compiled to (or the cluster's Argo default for a step without set_retry), and the
wait for a new node is the node start time plus, for a GPU type whose spot fallback is bounded, up to
the worst case the plan states (review/fallback.py). Pure module: no Pulumi.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal

from spotkube.platform import contract
from spotkube.platform.addons.kfp_transforms import retry_rule
from spotkube.platform.contract import Placement, PoolContract
from spotkube.platform.cost.simulate import SECONDS_PER_HOUR, SimStep
from spotkube.platform.errors import SpotkubeError
from spotkube.platform.pipeline_reader import CompiledPipeline, Retry
from spotkube.platform.records import record
from spotkube.platform.spec import PlatformSpec
from spotkube.platform.startup import PoolStartup
from spotkube.platform.startup_sample import StartupSample, sample_startup
from spotkube.review.costing import CostReport
from spotkube.review.fallback import GpuFallback
from spotkube.review.pipeline_check import why_step_lands_nowhere, with_cluster_defaults


class SimulationError(SpotkubeError):
    """A pipeline that can't be simulated on a stack (a step that lands nowhere, a bad override)."""


@record
class Overrides:
    """What the command line adds: runtimes per step (seconds), eviction rates per pool, the runtime
    of a step that declares none, and how long a new node takes to start."""

    runtimes: Mapping[str, int]
    eviction_rates: Mapping[str, float]
    default_runtime_seconds: int
    node_start_seconds: int


def cluster_retry(spec: PlatformSpec) -> Retry | None:
    """The evictions Argo retries for a step without set_retry: spotkube's Kubeflow sets its template
    default's limit to the stack's `kubeflow.evictionRetryLimit` (`kfp_transforms.retry_rule`), without
    backoff. A step with set_retry keeps its own limit, and the defaults' expression retries every
    eviction up to it; the failure limit only counts a step's own failures, which are not simulated."""
    if not spec.kubeflow.enabled:
        return None
    return Retry(max_retries=retry_rule(spec.kubeflow).evictions, source="cluster default")


def _per_pod_price(price: Decimal | None, pool: PoolContract, placement: Placement) -> Decimal | None:
    """What one pod pays an hour: the node's price, or on a shared GPU pool its slices' share of it."""
    if price is None or pool.sharing is None or not placement.gpus:
        return price
    slots = pool.advertised().get(placement.gpu_resource, 0)
    return price * placement.gpus / slots if slots else price


def sim_steps(
    pipeline: CompiledPipeline, spec: PlatformSpec, stack: str, pools: Sequence[PoolContract], cost: CostReport,
    fallback: Sequence[GpuFallback], overrides: Overrides,
) -> list[SimStep]:
    """One SimStep per step of the pipeline, in the file's order."""
    defaults = contract.pipeline_pod_default() if spec.kubeflow.enabled else None
    by_name = {p.name: p for p in pools}
    priced = {p.pool.name: p for p in cost.pools}
    bounds = {f.gpu_type: f.worst_case_seconds for f in fallback}
    unknown = sorted(set(overrides.runtimes) - {s.name for s in pipeline.steps})
    if unknown:
        raise SimulationError(f"--runtime {unknown[0]}: the pipeline has no such step; steps: "
                              f"{', '.join(s.name for s in pipeline.steps)}")
    unknown = sorted(set(overrides.eviction_rates) - set(by_name))
    if unknown:
        raise SimulationError(f"--eviction-rate {unknown[0]}: stack {stack} has no such pool; pools: "
                              f"{', '.join(by_name)}")
    steps = []
    for step in pipeline.steps:
        placement = with_cluster_defaults(step.placement, defaults)
        landing = contract.landing_pools(placement, pools)
        if not landing:
            raise SimulationError(f"{pipeline.source}: step {step.name} can land nowhere on stack {stack}: "
                                  f"{why_step_lands_nowhere(placement, pools, stack)}")
        pool = by_name[landing[0]]
        seconds = overrides.runtimes.get(step.name, step.runtime_seconds or overrides.default_runtime_seconds)
        retry = step.retry or cluster_retry(spec)
        node_start = overrides.node_start_seconds / SECONDS_PER_HOUR
        worst = bounds.get(pool.accelerator or "")
        prices = priced.get(pool.name)
        steps.append(SimStep(
            name=step.name,
            pool=pool.name,
            interruptible=pool.capacity in contract.INTERRUPTIBLE,
            hours=seconds / SECONDS_PER_HOUR,
            checkpoint_hours=step.checkpoint_seconds / SECONDS_PER_HOUR if step.checkpoint_seconds else None,
            eviction_rate=overrides.eviction_rates.get(pool.name, spec.cost.eviction_rate),
            rework_fraction=spec.cost.rework_fraction,
            retries=retry.max_retries if retry else 0,
            backoff_hours=(retry.backoff_seconds or 0) / SECONDS_PER_HOUR if retry else 0.0,
            backoff_factor=(retry.backoff_factor or 1) if retry else 1.0,
            window_hours=retry.window_seconds / SECONDS_PER_HOUR if retry and retry.window_seconds else None,
            node_wait_hours=(node_start, node_start + (worst or 0) / SECONDS_PER_HOUR),
            usd_per_hour=_per_pod_price(prices.price.usd_per_hour if prices and prices.price else None,
                                        pool, placement),
            on_demand_usd_per_hour=_per_pod_price(
                prices.on_demand.usd_per_hour if prices and prices.on_demand else None, pool, placement),
        ))
    return steps


#: A GPU pool's estimate and its sample (None: its image size is not declared, so it isn't sampled).
StartupSampled = tuple[PoolStartup, StartupSample | None]


def startup_samples(startups: Sequence[PoolStartup], steps: Sequence[SimStep], out_of_capacity: float, *,
                    runs: int, seed: int) -> list[StartupSampled]:
    """The sampled time to a running step of each GPU pool the pipelines' steps land on, from 0 nodes."""
    used = {s.pool for s in steps}
    return [(startup, sample_startup(startup, out_of_capacity, runs=runs, seed=seed))
            for startup in startups if startup.pool in used]
