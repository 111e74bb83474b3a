"""`spotkube pipeline-check` for a TrainJob: where its workers land, whether the gang fits, what it survives.

A TrainJob sent to Kueue's queue is one workload whose pod set is every worker: Kueue admits it when one
flavor (a GPU type on one capacity tier, or one queued-provisioning pool) has quota for all of them, and
never splits a pod set across flavors. So the review asks, per tier the workers may land on, whether
the tier's pools at full scale hold every worker at once; a job that fits no single tier could at best
be half-admitted, which Kueue never does, and it would wait for ever. It also reads the runtime the job
names as the stack registers it: its failure policy says whether an eviction restarts the job for free
and how many failures of its own it survives, and its grace how long a worker has to save.

Where a pool draws on a capacity reservation the stack creates (AKS), its reserved VMs are shown as a
tier of their own: it is not a Kueue flavor (the pool's quota is its whole on-demand tier), but the only
capacity a gang is sure to find when spot is gone, so a gang larger than it is warned about.

Pure module: no Pulumi.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from spotkube.clouds import plan_platform, profile
from spotkube.platform import contract
from spotkube.platform.addons import kfp_reference, training_runtime
from spotkube.platform.contract import Placement, PoolContract
from spotkube.platform.errors import SpotkubeError
from spotkube.platform.records import record
from spotkube.platform.registration import BuiltCluster, Registration
from spotkube.platform.spec import PlatformSpec
from spotkube.platform.trainjob_reader import CHECKPOINT_DIR_ENV, TrainJob
from spotkube.review.pipeline_check import why_step_lands_nowhere
from spotkube.review.placements import registered_runtimes


@record
class TierFit:
    """One tier the workers may land on: its pools, how many workers they hold at once, and whether all do."""

    tier: str
    pools: tuple[str, ...]
    workers: int

    def fits(self, wanted: int) -> bool:
        return self.workers >= wanted


@record
class TrainJobReport:
    """The verdict for one TrainJob on one stack."""

    stack: str
    job: TrainJob
    pools: tuple[str, ...] = ()
    tiers: tuple[TierFit, ...] = ()
    grace_seconds: int | None = None
    free_evictions: bool = False
    failure_restarts: int | None = None
    errors: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    #: Where the stack's jobs should save (its checkpoint store, or `checkpointLocation`); None: anywhere.
    checkpoint_location: str | None = None

    @property
    def ok(self) -> bool:
        return not self.errors

    def survives(self) -> str:
        if self.failure_restarts is None:
            return "unknown"
        evictions = "every eviction (restarts for free)" if self.free_evictions else "evictions spend restarts"
        return f"{evictions}, {self.failure_restarts} failure(s)"

    def to_json(self) -> dict[str, Any]:
        return {
            "stack": self.stack, "ok": self.ok, "job": self.job.name, "runtime": self.job.runtime,
            "queue": self.job.queue, "workers": self.job.num_nodes, "pools": list(self.pools),
            "tiers": [{"tier": t.tier, "pools": list(t.pools), "workers": t.workers,
                       "fitsAll": t.fits(self.job.num_nodes)} for t in self.tiers],
            "graceSeconds": self.grace_seconds, "survives": self.survives(),
            "checkpointDir": self.job.checkpoint_dir, "checkpointLocation": self.checkpoint_location,
            "errors": list(self.errors), "warnings": list(self.warnings),
        }


def _tier(pool: PoolContract, queued: Sequence[str]) -> str:
    """The Kueue flavor a pool's nodes belong to (`kueue_preset.flavors`' names)."""
    return f"queued-{pool.name}" if pool.name in queued else f"{pool.accelerator}-{pool.capacity}"


#: How the review names the reserved part of a pool's tier.
RESERVED = "reserved"


def tiers(placement: Placement, landing: Sequence[str], pools: Sequence[PoolContract], max_nodes: Mapping[str, int],
          queued: Sequence[str] = (), reserved: Mapping[str, int] | None = None) -> list[TierFit]:
    """The tiers of the landing pools and how many workers each holds at full scale: per pool, its max nodes
    times the workers a node holds (its GPUs over a worker's); then, per landing pool with reserved VMs
    (`reserved`, by pool name), the workers its reservation holds (never more than its max)."""
    by_name = {p.name: p for p in pools}
    grouped: dict[str, list[str]] = {}
    for name in landing:
        grouped.setdefault(_tier(by_name[name], queued), []).append(name)

    def per_node(name: str) -> int:
        gpus = by_name[name].advertised().get(placement.gpu_resource, 0)
        return gpus // placement.gpus if placement.gpus else 1

    result = [TierFit(tier, tuple(names), sum(max_nodes.get(n, 0) * per_node(n) for n in names))
              for tier, names in grouped.items()]
    for name in landing:
        vms = min((reserved or {}).get(name, 0), max_nodes.get(name, 0))
        if vms:
            result.append(TierFit(f"{_tier(by_name[name], queued)} {RESERVED}", (name,), vms * per_node(name)))
    return result


def _runtime_facts(runtime: Mapping[str, Any]) -> tuple[bool, int, int | None]:
    """(evictions restart for free, restarts after failures, grace seconds) of a registered runtime."""
    grace = training_runtime.worker_pod_spec(runtime).get("terminationGracePeriodSeconds")
    return (training_runtime.evictions_restart_for_free(runtime), training_runtime.failure_restarts(runtime),
            None if grace is None else int(grace))


def check_trainjob(job: TrainJob, stack: str, pools: Sequence[PoolContract], max_nodes: Mapping[str, int],
                   runtimes: Sequence[Mapping[str, Any]], queue: str | None,
                   queued: Sequence[str] = (), checkpoint_location: str | None = None,
                   reserved: Mapping[str, int] | None = None) -> TrainJobReport:
    """Judge one TrainJob against a stack: its registered `runtimes` (ClusterTrainingRuntime objects),
    its pools (`max_nodes` by pool name), the LocalQueue its Kueue serves (`queue`, None without Kueue),
    the pools that take nodes by provisioning request (`queued`) and the VMs reserved for a pool
    (`reserved`, by pool name)."""
    errors: list[str] = []
    warnings: list[str] = []
    by_name = {str((r.get("metadata") or {}).get("name")): r for r in runtimes}
    runtime = by_name.get(job.runtime) if job.runtime_kind == training_runtime.KIND else None
    if runtime is None:
        have = ", ".join(sorted(by_name)) or "none (set training.enabled: true)"
        return TrainJobReport(stack, job, errors=(
            f"names {job.runtime_kind} {job.runtime}, which stack {stack} doesn't register; its "
            f"{training_runtime.KIND}s: {have}",))
    free, restarts, grace = _runtime_facts(runtime)
    placement = Placement.from_pod_spec(job.worker_pod_spec(training_runtime.worker_pod_spec(runtime)))
    landing = tuple(contract.landing_pools(placement, pools))
    if not landing:
        errors.append(f"a worker can land nowhere: {why_step_lands_nowhere(placement, pools, stack)}")
        return TrainJobReport(stack, job, grace_seconds=grace, free_evictions=free, failure_restarts=restarts,
                              errors=tuple(errors))
    fits = tiers(placement, landing, pools, max_nodes, queued, reserved)
    short = [t for t in fits if t.tier.endswith(f" {RESERVED}") and not t.fits(job.num_nodes)]
    if short and any(t.fits(job.num_nodes) for t in fits):
        held = ", ".join(f"{t.workers} in {t.pools[0]}" for t in short)
        warnings.append(f"its {job.num_nodes} workers outnumber what the capacity reservation holds ({held}): "
                        "when spot is gone the gang waits for on-demand VMs the cloud may not have")
    if not any(t.fits(job.num_nodes) for t in fits):
        held = "; ".join(f"{t.tier} ({', '.join(t.pools)}) holds {t.workers}" for t in fits if t not in short)
        errors.append(f"its {job.num_nodes} workers fit no single tier at once ({held}): Kueue admits a gang "
                      "whole in one flavor or not at all, so it would wait for ever; ask for fewer nodes or raise "
                      "the pools' max")
    if queue is None:
        warnings.append(f"stack {stack} runs no Kueue: the workers are not admitted as a gang and start as nodes "
                        "come, holding GPUs idle while the rest wait")
    elif job.queue is None:
        warnings.append(f"names no queue (label {contract.KUEUE_QUEUE_LABEL}: {queue}): its workers are not admitted "
                        "as a gang and start as nodes come, holding GPUs idle while the rest wait")
    elif job.queue != queue:
        errors.append(f"names queue {job.queue}; stack {stack}'s Kueue has only LocalQueue {queue}, so the job "
                      "would never be admitted")
    elif job.namespace != kfp_reference.NAMESPACE:
        errors.append(f"runs in namespace {job.namespace}; the LocalQueue {queue} and Kueue's managed namespace are "
                      f"{kfp_reference.NAMESPACE}, so the job would never be admitted")
    if job.checkpoint_dir is None:
        warnings.append(f"names no checkpoint directory ({CHECKPOINT_DIR_ENV}): every eviction restarts the job "
                        "from the beginning")
    elif checkpoint_location and not job.checkpoint_dir.startswith(checkpoint_location.rstrip("/") + "/"):
        warnings.append(f"saves to {job.checkpoint_dir}, outside stack {stack}'s checkpoint location "
                        f"{checkpoint_location}, which its workers may not be able to write")
    if not free:
        warnings.append(f"runtime {job.runtime} counts evictions against its restarts: a few evictions end the job")
    return TrainJobReport(stack, job, landing, tuple(fits), grace, free, restarts, tuple(errors), tuple(warnings),
                          checkpoint_location)


def checkpoint_location(spec: PlatformSpec) -> str | None:
    """Where a stack's training jobs should save: its checkpoint store's location, else `checkpointLocation`."""
    store = spec.training.checkpoint_store
    return profile(spec.cloud).checkpoint_location(store.name) if store else spec.training.checkpoint_location


def stack_reports(job: TrainJob, registrations: Sequence[Registration], clusters: Sequence[BuiltCluster],
                  stack: str) -> list[TrainJobReport]:
    """The TrainJob's verdict on each cluster of a stack's offline run, against the runtimes it registers."""
    runtimes = registered_runtimes(registrations)
    reports = []
    registered = [(r.type, r.name, r.inputs) for r in registrations]
    for cluster in clusters:
        where = f"{stack}/{cluster.name}" if len(clusters) > 1 else stack
        if cluster.contracts is None:
            raise SpotkubeError(f"stack {where}: the cluster's pool_contracts output can't be read to check the "
                                "TrainJob against")
        gpu_pools = plan_platform(cluster.spec).gpu_pools
        kueue = cluster.spec.kueue
        read_reserved = profile(cluster.spec.cloud).read_reserved_nodes
        reports.append(check_trainjob(job, where, list(cluster.contracts), {p.name: p.max for p in gpu_pools},
                                      runtimes, kueue.local_queue if kueue.enabled else None,
                                      [p.name for p in gpu_pools if p.queued],
                                      checkpoint_location(cluster.spec),
                                      read_reserved(registered) if read_reserved else {}))
    return reports
