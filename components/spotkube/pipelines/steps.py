"""Apply a placement and a retry policy to a KFP task, through `kfp.kubernetes` and the task API.

KFP turns each `add_node_affinity` call into one node selector term, and the terms of one pod are
OR'ed. A step placed twice (or placed by hand and then by spotkube) could therefore land wherever
either placement allows, so these calls refuse a task that already has tolerations, a
nodeSelector or node affinity.
"""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

from kfp import dsl, kubernetes

from spotkube.pipelines.targets import CpuSpot, GpuTarget, PlacementError, PoolTarget, SpotTarget
from spotkube.platform import contract
from spotkube.platform.contract import Placement

#: Evictions a step survives: the stack default (`kubeflow.evictionRetryLimit`), so a step placed
#: with on_spot behaves as one that is not. Each costs a restart from the last checkpoint.
DEFAULT_EVICTIONS = 10
#: Five minutes apart: a burst of evictions (a zone short of spot capacity) passes before the next try.
DEFAULT_BACKOFF = "5m"
#: 1 keeps the retries evenly apart. Argo reads the factor as a whole number.
DEFAULT_BACKOFF_FACTOR = 1
#: KFP's `backoff_max_duration`. Argo measures it from the first attempt's start and ends any later
#: attempt at that deadline; KFP's own default (1h) would stop a longer spot step from ever being
#: retried, so the default here is a week.
DEFAULT_RETRY_WINDOW = "7d"

Duration = int | timedelta | str

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_DURATION = re.compile(r"\s*(\d+)\s*([smhd]?)\s*")
_PLACEMENT_KEYS = ("tolerations", "nodeSelector", "nodeAffinity")


def _seconds(value: Duration, name: str) -> int:
    """Whole seconds from `300`, `timedelta(minutes=5)` or `"5m"` (units s, m, h, d)."""
    if isinstance(value, timedelta):
        total = value.total_seconds()
        if total >= 0 and total == int(total):
            return int(total)
    elif isinstance(value, int) and not isinstance(value, bool):
        if value >= 0:
            return value
    elif isinstance(value, str) and (match := _DURATION.fullmatch(value)):
        return int(match.group(1)) * _UNITS[match.group(2) or "s"]
    raise PlacementError(
        f"{name}={value!r} is not a duration; use whole seconds (300), a timedelta, or a string such as "
        "'300s', '5m', '2h' or '7d'"
    )


def _require_task(task: Any, call: str) -> dsl.PipelineTask:
    if not isinstance(task, dsl.PipelineTask):
        raise PlacementError(
            f"{call} needs the task a component call returns inside a @dsl.pipeline function "
            f"(task = train(...); {call}(task, ...)); got {type(task).__name__}"
        )
    existing = [key for key in _PLACEMENT_KEYS if (task.platform_config.get("kubernetes") or {}).get(key)]
    if existing:
        raise PlacementError(
            f"task {task.name!r} already has {', '.join(existing)}; {call} sets a step's whole placement, so "
            "call it once and before any other kfp.kubernetes placement call (KFP ORs node affinity terms)"
        )
    return task


def apply_placement(task: dsl.PipelineTask, placement: Placement) -> dsl.PipelineTask:
    """Write a contract placement into a KFP task: tolerations, nodeSelector, node affinity (each
    required term unweighted, each preferred term with its weight) and the GPU limit."""
    for toleration in placement.tolerations:
        kubernetes.add_toleration(
            task,
            key=toleration.key or None,
            operator=toleration.operator,
            value=toleration.value if toleration.operator == "Equal" else None,
            effect=toleration.effect or None,  # type: ignore[arg-type]
        )
    for key, value in placement.node_selector.items():
        kubernetes.add_node_selector(task, key, value)
    for term in placement.required or ():
        kubernetes.add_node_affinity(task, match_expressions=[r.to_k8s() for r in term])
    for weight, term in placement.preferred:
        kubernetes.add_node_affinity(task, match_expressions=[r.to_k8s() for r in term], weight=weight)
    if placement.gpus:
        task.set_accelerator_type(placement.gpu_resource).set_accelerator_limit(placement.gpus)
    return task


def on_spot(
    task: dsl.PipelineTask,
    target: SpotTarget,
    *,
    evictions: int = DEFAULT_EVICTIONS,
    failures: int | None = None,
    backoff: Duration = DEFAULT_BACKOFF,
    backoff_factor: int = DEFAULT_BACKOFF_FACTOR,
    retry_window: Duration = DEFAULT_RETRY_WINDOW,
) -> dsl.PipelineTask:
    """Send a step to spot or preemptible capacity and let it survive evictions.

    The step tolerates the spot taints of both clouds (and the GPU taint for GPU targets), gets
    node affinity for its target on spotkube's neutral labels, a GPU limit for GPU targets, and up
    to `evictions` retries `backoff` apart (times `backoff_factor` after each one), for at most
    `retry_window` after its first attempt started.

    Why a retry happens is decided by the cluster: spotkube's Kubeflow Pipelines deployment sets
    Argo's workflow defaults to retry a step a node took away up to its limit and a step that failed
    on its own at most `kubeflow.failureRetryLimit` times (docs/evictions.md). `evictions` becomes the
    step's own Argo limit (KFP's set_retry), which caps both. KFP 2.17 compiles nothing else per step,
    so `failures` can't change the cluster's rule: it states what the step needs (0 for a step that must
    not run again after failing on its own), and `spotkube pipeline-check` fails when a stack retries
    the step's failures more often than that. The step must be safe to run again: write outputs
    atomically, resume from checkpoints and save one on SIGTERM (docs/pipelines.md).

    Returns the task, so calls can be chained.
    """
    if isinstance(target, str):
        raise PlacementError(f"target {target!r} is a string; wrap a GPU type as GpuTarget({target!r})")
    if not isinstance(target, GpuTarget | CpuSpot | PoolTarget):
        raise PlacementError(f"target must be GpuTarget, CpuSpot or PoolTarget; got {type(target).__name__}")
    if isinstance(evictions, bool) or not isinstance(evictions, int) or evictions < 0:
        raise PlacementError(f"evictions={evictions!r} is not allowed; use a whole number >= 0 (default "
                             f"{DEFAULT_EVICTIONS})")
    if failures is not None and (isinstance(failures, bool) or not isinstance(failures, int)
                                 or not 0 <= failures <= evictions):
        raise PlacementError(f"failures={failures!r} is not allowed; use a whole number from 0 to evictions "
                             f"({evictions}): Argo's limit caps every retry")
    if isinstance(backoff_factor, bool) or not isinstance(backoff_factor, int) or backoff_factor < 1:
        raise PlacementError(f"backoff_factor={backoff_factor!r} is not allowed; Argo needs a whole number >= 1 "
                             "(1 keeps retries evenly apart, 2 doubles the wait each time)")
    wait = _seconds(backoff, "backoff")
    window = _seconds(retry_window, "retry_window")
    if evictions and window <= wait:
        raise PlacementError(f"retry_window={retry_window!r} must be longer than backoff={backoff!r}, or Argo "
                             "gives up before the first retry")
    apply_placement(_require_task(task, "on_spot"), target.placement())
    # Always written, 0 included: without a limit of its own the step would take the workflow defaults'.
    task.set_retry(num_retries=evictions, backoff_duration=f"{wait}s", backoff_factor=float(backoff_factor),
                   backoff_max_duration=f"{window}s")
    if failures is not None:
        kubernetes.add_pod_annotation(task, contract.FAILURE_RETRIES_ANNOTATION, str(failures))
    return task


def declare_timing(
    task: dsl.PipelineTask, *, runtime: Duration | None = None, checkpoint_every: Duration | None = None
) -> dsl.PipelineTask:
    """Say how long a step's work takes on one node and how often it saves a checkpoint it resumes
    from, as pod annotations `spotkube simulate` reads (and Kubernetes ignores): an evicted step then
    loses only the work since its last checkpoint. Both are durations as for `on_spot` (`"2h"`,
    `"10m"`, seconds, a timedelta), above zero.
    """
    if not isinstance(task, dsl.PipelineTask):
        raise PlacementError(f"declare_timing needs the task a component call returns; got {type(task).__name__}")
    for value, name, key in ((runtime, "runtime", contract.RUNTIME_ANNOTATION),
                             (checkpoint_every, "checkpoint_every", contract.CHECKPOINT_ANNOTATION)):
        if value is None:
            continue
        seconds = _seconds(value, name)
        if seconds == 0:
            raise PlacementError(f"{name}={value!r} must be above zero")
        kubernetes.add_pod_annotation(task, key, str(seconds))
    return task


#: A LocalQueue's name is a Kubernetes object name, and a label value: a DNS label.
_QUEUE_NAME = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")


def to_queue(task: dsl.PipelineTask, queue: str = contract.KUEUE_LOCAL_QUEUE) -> dsl.PipelineTask:
    """Send a step to Kueue's queue: its pod waits, gated, until the queue has GPU quota for it.

    Sets the pod label `kueue.x-k8s.io/queue-name` to `queue`, the LocalQueue of the pipelines'
    namespace (a stack's `kueue.localQueue`, `spot-gpus` unless it names another). Kueue then admits the
    step to the first GPU tier with quota left that its placement allows (spot before on-demand), and
    on a queued-provisioning pool only once the cloud has provisioned its nodes. Place the step as
    usual (`on_spot`, `on_demand`); the two compose. On a cluster without Kueue the label does nothing.
    """
    if not isinstance(task, dsl.PipelineTask):
        raise PlacementError(f"to_queue needs the task a component call returns; got {type(task).__name__}")
    if not isinstance(queue, str) or not _QUEUE_NAME.fullmatch(queue):
        raise PlacementError(f"queue={queue!r} is not a LocalQueue name; use a DNS label such as "
                             f"{contract.KUEUE_LOCAL_QUEUE!r} (the stack's kueue.localQueue)")
    kubernetes.add_pod_label(task, contract.KUEUE_QUEUE_LABEL, queue)
    return task


def on_demand(task: dsl.PipelineTask) -> dsl.PipelineTask:
    """Keep a step off spot capacity and GPUs: on-demand nodes without GPUs only.

    For steps that must not be interrupted or repeated: publishing a model, writing to a database,
    anything that is not safe to run twice.
    """
    return apply_placement(_require_task(task, "on_demand"), contract.on_demand_only())
