"""Judging a drill on a running TrainJob: one worker's node evicted, the time until every worker runs again.

A TrainJob's workers are the pods of the JobSet Trainer names after it (label `jobset.sigs.k8s.io/jobset-name`).
When one worker's node is evicted, the runtime's failure policy restarts the whole JobSet: JobSet deletes
every worker and creates them again with the label `jobset.sigs.k8s.io/restart-attempt` one higher. The
drill is over when as many workers as ran before, all of a later attempt, have their container running:
that is the job's time back to training (every worker has then reloaded its checkpoint or is doing so).
The names of the labels are JobSet v0.11.1's (`api/jobset/v1alpha2/jobset_types.go`, `pkg/constants`).

Pure module: no Pulumi, no Kubernetes client; `cli/drill.py` feeds it the watch events.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from spotkube.platform import contract
from spotkube.platform.cloud import mapping
from spotkube.platform.records import record
from spotkube.review.drill import ACTIVE_PHASES, Event, is_ready, labels_of, name_of, step_started, timestamp

JOBSET_NAME_LABEL = "jobset.sigs.k8s.io/jobset-name"
RESTART_ATTEMPT_LABEL = "jobset.sigs.k8s.io/restart-attempt"
#: The container Trainer's torch runtime runs the training script in.
WORKER_CONTAINER = "node"


def is_worker(pod: Mapping[str, Any], job: str) -> bool:
    return labels_of(pod).get(JOBSET_NAME_LABEL) == job


def attempt(pod: Mapping[str, Any]) -> int:
    value = str(labels_of(pod).get(RESTART_ATTEMPT_LABEL) or "0")
    return int(value) if value.isdigit() else 0


def running_workers(pods: Sequence[Mapping[str, Any]], job: str) -> list[Mapping[str, Any]]:
    return [p for p in pods if is_worker(p, job) and mapping(p.get("status")).get("phase") in ACTIVE_PHASES
            and mapping(p.get("spec")).get("nodeName")]


@record
class GangTarget:
    """The node the drill evicts: one that runs a worker of the job, in a spot or preemptible pool."""

    node: str
    pool: str
    provider_id: str
    job: str
    workers: int
    attempt: int


def choose_worker_node(nodes: Sequence[Mapping[str, Any]], pods: Sequence[Mapping[str, Any]], job: str,
                       pool: str) -> GangTarget | None:
    """A Ready node of `pool` running a worker of `job` (the first by name); None when there is none."""
    workers = running_workers(pods, job)
    on = {str(mapping(p.get("spec")).get("nodeName")) for p in workers}
    candidates = sorted((n for n in nodes if name_of(n) in on and is_ready(n)
                         and labels_of(n).get(contract.POOL_LABEL) == pool), key=name_of)
    if not candidates:
        return None
    chosen = candidates[0]
    return GangTarget(name_of(chosen), pool, str(mapping(chosen.get("spec")).get("providerID") or ""), job,
                      len(workers), max(attempt(p) for p in workers))


@dataclass
class GangObservation:
    """The watch events after the eviction: the evicted node, the workers of each attempt, and when all ran again."""

    target: GangTarget
    start: datetime
    events: list[Event] = field(default_factory=list)
    node_lost: datetime | None = None
    #: Workers of later attempts: pod name -> when its training container started (None: not yet).
    restarted: dict[str, datetime | None] = field(default_factory=dict)
    restart_attempt: int | None = None
    all_running: datetime | None = None

    @classmethod
    def begin(cls, target: GangTarget, start: datetime) -> GangObservation:
        observation = cls(target, start)
        observation.events.append(Event(start, target.node, f"eviction requested (a worker of TrainJob {target.job})"))
        return observation

    def node_event(self, kind: str, node: Mapping[str, Any], received: datetime) -> None:
        if name_of(node) != self.target.node or self.node_lost is not None:
            return
        if kind == "DELETED" or not is_ready(node):
            self.node_lost = timestamp(mapping(node.get("metadata")).get("deletionTimestamp")) or received
            self.events.append(Event(self.node_lost, self.target.node, "node lost"))

    def pod_event(self, kind: str, pod: Mapping[str, Any], received: datetime) -> None:
        if not is_worker(pod, self.target.job) or attempt(pod) <= self.target.attempt:
            return
        name = name_of(pod)
        if kind == "DELETED":
            self.restarted.pop(name, None)
            return
        if self.restart_attempt is None:
            self.restart_attempt = attempt(pod)
            created = timestamp(mapping(pod.get("metadata")).get("creationTimestamp")) or received
            self.events.append(Event(created, self.target.job, f"JobSet restart {self.restart_attempt}: workers "
                                     "created again"))
        started = _container_started(pod)
        if self.restarted.get(name) is None:
            self.restarted[name] = started
            if started is not None:
                node = mapping(pod.get("spec")).get("nodeName")
                self.events.append(Event(started, name, f"worker running on {node}"))
        running = [at for at in self.restarted.values() if at is not None]
        if self.all_running is None and len(running) >= self.target.workers:
            self.all_running = max(running)
            self.events.append(Event(self.all_running, self.target.job, f"all {self.target.workers} workers running"))

    @property
    def done(self) -> bool:
        return self.all_running is not None


def _container_started(pod: Mapping[str, Any]) -> datetime | None:
    """When the worker's training container started (another pod's last container, as `step_started` reads it)."""
    for status in map(mapping, mapping(pod.get("status")).get("containerStatuses") or ()):
        if status.get("name") == WORKER_CONTAINER:
            state = mapping(status.get("state"))
            return timestamp(mapping(state.get("running")).get("startedAt")
                             or mapping(state.get("terminated")).get("startedAt"))
    return step_started(pod)


@record
class GangDrillReport:
    """The drill on a TrainJob: the node, the command, and how long until every worker ran again."""

    stack: str
    target: GangTarget
    command: tuple[str, ...]
    ran: bool
    seconds_to_all_running: float | None = None
    restart_attempt: int | None = None
    timed_out: bool = False
    timeline: tuple[Event, ...] = ()
    start: datetime | None = None

    @property
    def ok(self) -> bool:
        return not self.ran or self.seconds_to_all_running is not None

    def to_json(self) -> dict[str, Any]:
        return {
            "stack": self.stack, "ok": self.ok, "ran": self.ran, "trainJob": self.target.job, "node": self.target.node,
            "pool": self.target.pool, "workers": self.target.workers, "command": list(self.command),
            "secondsToAllRunning": self.seconds_to_all_running, "restartAttempt": self.restart_attempt,
            "timedOut": self.timed_out,
            "timeline": [{"seconds": e.seconds(self.start), "subject": e.subject, "event": e.what}
                         for e in sorted(self.timeline, key=lambda e: e.at)] if self.start else [],
        }


def judge_gang(observation: GangObservation, *, stack: str, command: Sequence[str], timed_out: bool) -> GangDrillReport:
    seconds = None if observation.all_running is None else (observation.all_running - observation.start).total_seconds()
    return GangDrillReport(stack, observation.target, tuple(command), True, seconds, observation.restart_attempt,
                           timed_out, tuple(observation.events), observation.start)
