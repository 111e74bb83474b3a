"""`spotkube pipeline-check`'s judgement: where each step of a compiled pipeline can land on a stack.

A step whose tolerations or affinity match no pool does not fail: its pod waits in Pending forever.
This module asks the contract's matcher which pools of a stack each step (read by
`pipeline_reader`) can land on, so the mistake shows up in CI instead of in a stuck run. It judges
and returns typed results; the CLI's views render them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import field, replace
from typing import Any

from spotkube.platform import contract
from spotkube.platform.addons.argo_retries import RetryRule
from spotkube.platform.contract import Placement, PoolContract
from spotkube.platform.pipeline_reader import KFP_DEFAULT_RETRY_WINDOW_SECONDS, CompiledPipeline, Retry, Step
from spotkube.platform.records import record

#: Said once per stack when its spot steps rely on retries and the stack does not deploy spotkube's
#: Kubeflow Pipelines, whose workflow defaults say why a step is retried. Argo's retry policies:
#: https://argo-workflows.readthedocs.io/en/latest/retries/; the phases come from argo-workflows'
#: `inferFailedReason`.
CLUSTER_RETRY_POLICY_NOTE = (
    "this stack does not deploy Kubeflow Pipelines, so what its steps' retries cover depends on the cluster's "
    "Argo workflow-controller defaults: KFP compiles set_retry without a retryPolicy or expression; a pod "
    "deleted with its node ends as Error, which OnFailure (Argo's own default) skips, and a pod evicted or "
    "stopped by a node shutdown ends as Failed, which OnError (KFP's shipped default) skips "
    "(kubeflow/pipelines #4333, #9950); spotkube's defaults (docs/evictions.md) retry both, and failures "
    "only a few times"
)


# --- Checking ------------------------------------------------------------------------------------


@record
class StepResult:
    """Where one step can land (most preferred first), and what is wrong with it. `spot_pools` are
    the interruptible ones among them (spot or preemptible); `capacities` names each pool's capacity,
    so a view says "preemptible" where GKE's preemptible VMs are meant, not "spot"."""

    step: Step
    pools: tuple[str, ...]
    spot_pools: tuple[str, ...]
    error: str | None = None
    warnings: tuple[str, ...] = ()
    capacities: Mapping[str, str] = field(default_factory=dict)
    #: How many evictions, and how many failures of its own, the step survives on this stack; None
    #: when the stack's Argo defaults are not spotkube's (no Kubeflow Pipelines) and so unknown.
    evictions: int | None = None
    failures: int | None = None

    def pool_text(self, pool: str) -> str:
        """`gpuspot (spot)`, `t4-preemptible (preemptible)`, or the pool's name when on-demand."""
        capacity = self.capacities.get(pool)
        return f"{pool} ({capacity})" if pool in self.spot_pools and capacity else pool


@record
class CheckReport:
    """The verdict for one pipeline against one stack's pools."""

    pipeline: CompiledPipeline
    stack: str
    steps: tuple[StepResult, ...]
    warnings: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        """No step lands nowhere (warnings allowed)."""
        return all(result.error is None for result in self.steps)

    def to_json(self) -> dict[str, Any]:
        """The stable JSON shape of `spotkube pipeline-check --format json` (one entry per stack)."""
        return {
            "stack": self.stack,
            "ok": self.ok,
            "steps": [
                {
                    "name": r.step.name,
                    "executor": r.step.executor,
                    "gpus": r.step.placement.gpus,
                    "gpuResource": r.step.placement.gpu_resource,
                    "retries": _retry_json(r.step.retry),
                    "survives": {"evictions": r.evictions, "failures": r.failures,
                                 "failuresWanted": r.step.failures_wanted},
                    "pools": list(r.pools),
                    "spotPools": list(r.spot_pools),
                    "capacities": dict(r.capacities),
                    "queue": r.step.queue,
                    "error": r.error,
                    "warnings": list(r.warnings),
                }
                for r in self.steps
            ],
            "warnings": list(self.warnings),
        }


def _retry_json(retry: Retry | None) -> dict[str, Any] | None:
    if retry is None:
        return None
    return {"maxRetries": retry.max_retries, "backoffSeconds": retry.backoff_seconds,
            "backoffFactor": retry.backoff_factor, "windowSeconds": retry.window_seconds,
            "from": retry.source or None}


def with_cluster_defaults(placement: Placement, defaults: Placement | None) -> Placement:
    """A step's placement as its pod gets it on a cluster whose Argo workflow defaults carry
    `defaults`: Argo gives the workflow's affinity to pods whose template has none, and KFP's pod spec
    patch replaces the required node affinity only when the step has one of its own."""
    if defaults is None or placement.required is not None:
        return placement
    return replace(placement, required=defaults.required)


def check_pipeline(
    pipeline: CompiledPipeline, pools: Sequence[PoolContract], stack: str, *, retries: RetryRule | None = None,
    cluster_defaults: Placement | None = None, queue: str | None = None,
) -> CheckReport:
    """Judge every step against the stack's pools with the contract's matcher, and say how many
    evictions and failures each survives under `retries`, the rule of the stack's Argo workflow
    defaults (`kfp_transforms.retry_rule`; None when the stack deploys no Kubeflow Pipelines, whose
    retries are then unknown and get the reminder of what they need). `cluster_defaults` is the
    placement Argo's workflow defaults give every pipeline pod (spotkube's keeps them off the system
    pool), applied as Argo applies it. `queue` is the stack's Kueue LocalQueue (None: no Kueue), which a
    queued step must name.
    """
    by_name = {p.name: p for p in pools}
    results = []
    for step in pipeline.steps:
        placement = with_cluster_defaults(step.placement, cluster_defaults)
        landing = tuple(contract.landing_pools(placement, pools))
        spot = tuple(name for name in landing if by_name[name].capacity in contract.INTERRUPTIBLE)
        capacities = {name: by_name[name].capacity for name in landing}
        error = None if landing else why_step_lands_nowhere(placement, pools, stack)
        evictions, failures = survived(step, retries)
        if error is None and failures is not None and step.failures_wanted is not None \
                and failures > step.failures_wanted:
            error = (f"asks for at most {step.failures_wanted} retries after failing on its own (on_spot failures=), "
                     f"but stack {stack} retries its failures {'once' if failures == 1 else f'{failures} times'} "
                     "(kubeflow.failureRetryLimit); "
                     f"lower the stack's failureRetryLimit, or raise the step's failures")
        if error is None:
            error = _queue_error(step, queue, stack)
        results.append(StepResult(step, landing, spot, error,
                                  (*_step_warnings(step, spot, capacities, evictions, failures),
                                   *_queue_warnings(step, queue, stack, landing, spot)),
                                  capacities, evictions, failures))
    relies_on_retries = any(r.spot_pools and r.step.retry and r.step.retry.max_retries > 0 for r in results)
    return CheckReport(pipeline, stack, tuple(results),
                       (CLUSTER_RETRY_POLICY_NOTE,) if relies_on_retries and retries is None else ())


def _queue_error(step: Step, queue: str | None, stack: str) -> str | None:
    """A step that names a LocalQueue the stack doesn't have: Kueue holds its pod for ever."""
    if step.queue is None or queue is None or step.queue == queue:
        return None
    return (f"is sent to Kueue's queue {step.queue!r}, but stack {stack}'s LocalQueue is {queue!r} "
            "(kueue.localQueue): Kueue would hold its pod for ever; use to_queue(task, queue=" + repr(queue) + ")")


def _queue_warnings(step: Step, queue: str | None, stack: str, pools: Sequence[str],
                    spot_pools: Sequence[str]) -> Iterator[str]:
    if step.queue is None:
        return
    if queue is None:
        yield (f"is sent to Kueue's queue {step.queue!r}, but stack {stack} deploys no Kueue (kueue.enabled): the "
               f"label {contract.KUEUE_QUEUE_LABEL} does nothing there and the step starts without waiting for quota")
    elif spot_pools and len(spot_pools) < len(pools):
        # Kueue puts the admitted flavor's node labels (its capacity) in the pod's nodeSelector.
        yield ("can fall back to on-demand, but Kueue admits it to one tier (spot first) and pins it there: it "
               "moves to on-demand only when the spot tier's quota is used up, not when spot capacity is gone")


def survived(step: Step, rule: RetryRule | None) -> tuple[int | None, int | None]:
    """(evictions, failures) a step survives under the stack's rule: set_retry's count is the step's own
    Argo limit, which wins over the defaults' (strategic merge, `argo_retries.merged_strategy`); a step
    without it takes the defaults' limit. Unknown (None, None) without the rule."""
    if rule is None:
        return None, None
    return rule.survives(step.retry.max_retries if step.retry else None)


def _step_warnings(
    step: Step, spot_pools: Sequence[str], capacities: Mapping[str, str], evictions: int | None, failures: int | None
) -> Iterator[str]:
    if not spot_pools:
        return
    where = ", ".join(spot_pools)
    kinds = " or ".join(dict.fromkeys(capacities[p] for p in spot_pools))
    retry = step.retry
    if evictions == 0 or (evictions is None and (retry is None or retry.max_retries <= 0)):
        yield (f"can land on {kinds} capacity ({where}) but has no retries: one eviction fails the run; "
               "use spotkube.pipelines.on_spot(...) or task.set_retry(...)")
        return
    if failures is not None and step.failures_wanted is not None and failures < step.failures_wanted:
        yield (f"asks for {step.failures_wanted} retries after failing on its own, but the stack gives "
               f"{failures} (kubeflow.failureRetryLimit, or the step's own evictions)")
    if retry is None:
        return
    if retry.window_seconds is not None and retry.window_seconds <= KFP_DEFAULT_RETRY_WINDOW_SECONDS:
        yield (f"its retries stop {retry.window_seconds:g}s after the first attempt started "
               "(backoffMaxDuration), and Argo ends a running retry at that deadline: if the step runs "
               "longer, an eviction is not retried; raise it (on_spot(..., retry_window='7d'))")
    if retry.backoff_factor is not None and retry.backoff_factor != int(retry.backoff_factor):
        yield (f"its backoffFactor {retry.backoff_factor:g} is not a whole number, which Argo's retry "
               "backoff requires; use 1 (constant) or 2 (doubling)")


def required_values(placement: Placement, key: str) -> set[str] | None:
    """The label values a placement insists on for `key`, or None if it accepts any.

    A nodeSelector pins one value; otherwise every required term must say `key In [...]` for the
    placement to insist (terms are OR'ed, so one unconstrained term accepts any value).
    """
    if key in placement.node_selector:
        return {placement.node_selector[key]}
    if not placement.required:
        return None
    allowed: set[str] = set()
    for term in placement.required:
        values = [set(r.values) for r in term if r.key == key and r.operator == "In"]
        if not values:
            return None
        allowed |= set.intersection(*values)
    return allowed


def _and_list(items: Sequence[str]) -> str:
    if len(items) <= 1:
        return "".join(items) or "none"
    return f"{', '.join(items[:-1])} and {items[-1]}"


def why_step_lands_nowhere(placement: Placement, pools: Sequence[PoolContract], stack: str) -> str:
    """The reason a user can act on: a missing GPU type, pool or GPU count before the per-pool detail."""
    if placement.unsupported:
        return placement.unsupported[0]
    gpu_types = required_values(placement, contract.ACCELERATOR_LABEL)
    have_types = sorted({p.accelerator for p in pools if p.accelerator})
    if gpu_types is not None and contract.NO_ACCELERATOR not in gpu_types \
            and not gpu_types & set(have_types):
        wanted = " or ".join(sorted(gpu_types))
        has = f"has only {_and_list(have_types)}" if have_types else "has no GPU pools"
        return f"needs GPU type {wanted}; stack {stack} {has}"
    pool_names = required_values(placement, contract.POOL_LABEL)
    if pool_names is not None and not pool_names & {p.name for p in pools}:
        return (f"needs pool {' or '.join(sorted(pool_names))}; stack {stack} has pools "
                f"{_and_list([p.name for p in pools])}")
    capacities = required_values(placement, contract.CAPACITY_LABEL)
    if capacities is not None:
        kind_pools = [p for p in pools if gpu_types is None or (p.accelerator or contract.NO_ACCELERATOR) in gpu_types]
        if not any(p.capacity in capacities for p in kind_pools):
            kind = "without GPUs" if gpu_types == {contract.NO_ACCELERATOR} else \
                f"with {' or '.join(sorted(gpu_types))}" if gpu_types else "of any kind"
            return (f"needs {' or '.join(sorted(capacities))} capacity {kind}; stack {stack} has no such pool "
                    "(fallback_to_on_demand=True prefers spot and accepts on-demand)")
    if placement.gpus:
        candidates = [p for p in pools if p.accelerator and (gpu_types is None or p.accelerator in gpu_types)]
        resource = placement.gpu_resource
        most = max((p.advertised().get(resource, 0) for p in candidates), default=0)
        if candidates and placement.gpus > most:
            kinds = _and_list(sorted({p.accelerator for p in candidates if p.accelerator}))
            what = "GPUs" if resource == contract.GPU_RESOURCE else resource
            return (f"needs {placement.gpus} {what} on one node; the largest {kinds} node of stack {stack} "
                    f"has {most}")
    return f"no pool of stack {stack} fits: {contract.why_nowhere(placement, pools)}"
