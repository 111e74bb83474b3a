"""The eviction drill's judgement: which node to evict, what followed, and whether the platform held.

`spotkube drill` evicts one node of a spot pool through the cloud's real preemption path and
watches the Kubernetes API. This module is its pure half: it picks the node from the listed nodes
and pods, reads the watch events (the API's own JSON: camelCase dicts) into a timeline, and judges
it: every pipeline pod that was running on the node must come back as an Argo retry (a new pod of
the same workflow node), and the time to a replacement must stay within the bound the plan states
(`review/fallback.py`) plus the time a new node takes to boot. The CLI does the I/O.

Timing comes from the objects themselves where the API records it (a node condition's
`lastTransitionTime`, a pod's `creationTimestamp` and `PodScheduled` condition), so the timeline is
the cluster's, not the moment an event reached the watcher.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from spotkube.platform import contract
from spotkube.platform.cloud import items, mapping
from spotkube.platform.records import record
from spotkube.platform.startup import PoolStartup, Span

#: Pod phases of a pod that still holds its node.
ACTIVE_PHASES = ("Pending", "Running")
#: Argo names a retried node's attempts `<node>(0)`, `<node>(1)`, ...: the attempt's own suffix.
ATTEMPT_SUFFIX = re.compile(r"\(\d+\)$")


def name_of(obj: Mapping[str, Any]) -> str:
    return str(mapping(obj.get("metadata")).get("name") or "")


def labels_of(obj: Mapping[str, Any]) -> Mapping[str, str]:
    return mapping(mapping(obj.get("metadata")).get("labels"))


def timestamp(value: Any) -> datetime | None:
    """An API timestamp (RFC 3339, `2026-11-25T15:00:00Z`), or None."""
    if not value:
        return None
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None


def condition(obj: Mapping[str, Any], kind: str) -> Mapping[str, Any]:
    """A node's or pod's status condition of this type (empty when it has none)."""
    return next((mapping(c) for c in items(mapping(obj.get("status")).get("conditions"))
                 if mapping(c).get("type") == kind), {})


def is_ready(node: Mapping[str, Any]) -> bool:
    return condition(node, "Ready").get("status") == "True"


def is_pipeline_pod(pod: Mapping[str, Any]) -> bool:
    return contract.ARGO_WORKFLOW_LABEL in labels_of(pod)


def workflow_node(pod: Mapping[str, Any]) -> tuple[str, str]:
    """(workflow, Argo node without its attempt suffix): the same for every attempt of one step."""
    annotations = mapping(mapping(pod.get("metadata")).get("annotations"))
    node = str(annotations.get(contract.ARGO_NODE_NAME_ANNOTATION) or name_of(pod))
    return str(labels_of(pod).get(contract.ARGO_WORKFLOW_LABEL, "")), ATTEMPT_SUFFIX.sub("", node)


@record
class Target:
    """The node the drill evicts and the pipeline pods on it."""

    node: str
    pool: str
    provider_id: str
    pods: tuple[str, ...]


def choose_node(nodes: Sequence[Mapping[str, Any]], pods: Sequence[Mapping[str, Any]], pool: str) -> Target | None:
    """A Ready node of `pool`, the one running the most pipeline pods (so the drill has something to
    measure), then by name; None when the pool has no Ready node."""
    candidates = [n for n in nodes if labels_of(n).get(contract.POOL_LABEL) == pool and is_ready(n)]
    if not candidates:
        return None

    def running_on(node: str) -> tuple[str, ...]:
        return tuple(sorted(name_of(p) for p in pods if is_pipeline_pod(p)
                            and mapping(p.get("spec")).get("nodeName") == node
                            and mapping(p.get("status")).get("phase") in ACTIVE_PHASES))

    chosen = min(candidates, key=lambda n: (-len(running_on(name_of(n))), name_of(n)))
    return Target(name_of(chosen), pool, str(mapping(chosen.get("spec")).get("providerID") or ""),
                  running_on(name_of(chosen)))


@record
class Event:
    """One line of the timeline."""

    at: datetime
    subject: str
    what: str

    def seconds(self, start: datetime) -> float:
        return (self.at - start).total_seconds()


@dataclass
class PodFate:
    """What became of one pipeline pod that ran on the evicted node."""

    pod: str
    workflow: str
    step: str
    ended: str | None = None
    retry: str | None = None
    retry_node: str | None = None
    retry_pool: str | None = None
    retried_at: datetime | None = None
    scheduled_at: datetime | None = None
    #: The retry's namespace, and when its step's container started (`containerStatuses[].state`).
    retry_namespace: str = ""
    running_at: datetime | None = None

    @property
    def settled(self) -> bool:
        """Retried and running again (the drill has seen all there is to see of it)."""
        return self.running_at is not None

    def to_json(self, start: datetime) -> dict[str, Any]:
        def since(at: datetime | None) -> float | None:
            return None if at is None else (at - start).total_seconds()
        return {"pod": self.pod, "workflow": self.workflow, "step": self.step, "ended": self.ended,
                "retry": self.retry, "retryNode": self.retry_node, "retryPool": self.retry_pool,
                "retrySeconds": since(self.retried_at), "scheduledSeconds": since(self.scheduled_at),
                "runningSeconds": since(self.running_at), "lost": self.retry is None}


@dataclass
class Observation:
    """The watch events after the eviction, folded into a timeline and each affected pod's fate."""

    target: Target
    start: datetime
    #: Pools a replacement may come from: the target's and its fallback pools.
    replacement_pools: frozenset[str]
    nodes: dict[str, Mapping[str, Any]] = field(default_factory=dict)
    fates: dict[str, PodFate] = field(default_factory=dict)
    events: list[Event] = field(default_factory=list)
    known_nodes: frozenset[str] = frozenset()
    node_not_ready: datetime | None = None
    node_gone: datetime | None = None
    replacement: str | None = None
    replacement_ready: datetime | None = None

    @classmethod
    def begin(cls, target: Target, start: datetime, nodes: Sequence[Mapping[str, Any]],
              pods: Sequence[Mapping[str, Any]], replacement_pools: frozenset[str]) -> Observation:
        observation = cls(target, start, replacement_pools | {target.pool},
                          nodes={name_of(n): n for n in nodes}, known_nodes=frozenset(name_of(n) for n in nodes))
        for pod in pods:
            if name_of(pod) in target.pods:
                workflow, step = workflow_node(pod)
                observation.fates[name_of(pod)] = PodFate(name_of(pod), workflow, step)
        observation.events.append(Event(start, target.node, "eviction requested"))
        return observation

    def _note(self, at: datetime, subject: str, what: str) -> None:
        self.events.append(Event(at, subject, what))

    def node_event(self, kind: str, node: Mapping[str, Any], received: datetime) -> None:
        name = name_of(node)
        if kind == "DELETED":
            self.nodes.pop(name, None)
            if name == self.target.node and self.node_gone is None:
                self.node_gone = timestamp(mapping(node.get("metadata")).get("deletionTimestamp")) or received
                self._note(self.node_gone, name, "node deleted")
            return
        self.nodes[name] = node
        ready = condition(node, "Ready")
        changed = timestamp(ready.get("lastTransitionTime")) or received
        if name == self.target.node and not is_ready(node) and self.node_not_ready is None:
            self.node_not_ready = changed
            self._note(changed, name, f"node NotReady ({ready.get('reason') or 'no reason given'})")
        pool = labels_of(node).get(contract.POOL_LABEL)
        if (name not in self.known_nodes and pool in self.replacement_pools and is_ready(node)
                and self.replacement_ready is None and self._wanted(name)):
            self.replacement, self.replacement_ready = name, changed
            self._note(changed, name, f"replacement node Ready in pool {pool}")

    def _wanted(self, node: str) -> bool:
        """A new node counts as the replacement unless a retried pod already landed elsewhere."""
        landed = {f.retry_node for f in self.fates.values() if f.retry_node}
        return not landed or node in landed

    def pod_event(self, kind: str, pod: Mapping[str, Any], received: datetime) -> None:
        name = name_of(pod)
        status = mapping(pod.get("status"))
        if name in self.fates:
            fate = self.fates[name]
            if fate.ended is None and (kind == "DELETED" or status.get("phase") not in ACTIVE_PHASES):
                deleted = timestamp(mapping(pod.get("metadata")).get("deletionTimestamp"))
                fate.ended = "deleted" if kind == "DELETED" else str(status.get("phase"))
                reason = status.get("message") or status.get("reason") or ""
                self._note(deleted or received, name, f"pod {fate.ended}{': ' + str(reason) if reason else ''}")
            return
        if kind == "DELETED" or not is_pipeline_pod(pod):
            return
        workflow, step = workflow_node(pod)
        fate = next((f for f in self.fates.values() if (f.workflow, f.step) == (workflow, step)
                     and f.retry in (None, name)), None)
        if fate is None:
            return
        if fate.retry is None:
            fate.retry = name
            fate.retry_namespace = str(mapping(pod.get("metadata")).get("namespace") or "")
            fate.retried_at = timestamp(mapping(pod.get("metadata")).get("creationTimestamp")) or received
            self._note(fate.retried_at, name, f"Argo retry of {fate.pod} created")
        node = mapping(pod.get("spec")).get("nodeName")
        if node and fate.scheduled_at is None:
            fate.retry_node = str(node)
            fate.retry_pool = str(labels_of(self.nodes.get(str(node), {})).get(contract.POOL_LABEL) or "unknown")
            fate.scheduled_at = timestamp(condition(pod, "PodScheduled").get("lastTransitionTime")) or received
            self._note(fate.scheduled_at, name, f"scheduled on {node} (pool {fate.retry_pool})")
            if self.replacement_ready is None:
                self._replacement_from(str(node), fate.scheduled_at)
        started = step_started(pod)
        if started is not None and fate.scheduled_at is not None and fate.running_at is None:
            fate.running_at = started
            self._note(started, name, "step container running")

    def _replacement_from(self, node: str, scheduled: datetime) -> None:
        """The node a retried pod landed on replaces the evicted one: when it became Ready if it is
        new, when the pod was scheduled there if it already existed."""
        known = self.nodes.get(node, {})
        self.replacement = node
        if node in self.known_nodes:
            self.replacement_ready = scheduled
        else:
            self.replacement_ready = timestamp(condition(known, "Ready").get("lastTransitionTime")) or scheduled
        self._note(self.replacement_ready, node, f"replacement: {node} "
                   f"(pool {labels_of(known).get(contract.POOL_LABEL) or 'unknown'})")

    @property
    def done(self) -> bool:
        """Everything the drill waits for has happened: the node is gone or NotReady, and every
        affected pod was retried and scheduled (or none ran there and a replacement is Ready)."""
        node_lost = self.node_not_ready is not None or self.node_gone is not None
        if self.fates:
            return node_lost and all(f.settled for f in self.fates.values())
        return node_lost and self.replacement_ready is not None


#: The container of an Argo pod that runs the step (`wait` and `init` are Argo's own).
STEP_CONTAINER = "main"


def step_started(pod: Mapping[str, Any]) -> datetime | None:
    """When the pod's step container started: Argo's `main` container (or, in another pod, the last of
    its containers to start), running or already ended; None until then."""
    starts: dict[str, datetime] = {}
    for status in map(mapping, items(mapping(pod.get("status")).get("containerStatuses"))):
        state = mapping(status.get("state"))
        at = timestamp(mapping(state.get("running")).get("startedAt")
                       or mapping(state.get("terminated")).get("startedAt"))
        if at is not None:
            starts[str(status.get("name"))] = at
    return starts.get(STEP_CONTAINER) or max(starts.values(), default=None)


#: A Go duration as the kubelet prints it: `1m2.345s`, `981ms`, `1h2m3s`.
_GO_PART = re.compile(r"([0-9]+(?:\.[0-9]+)?)(h|ms|us|µs|ns|m|s)")
_GO_UNITS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}
_PULLED = re.compile(r'^Successfully pulled image "[^"]*" in ([0-9][0-9.hmsuµn]*)')
_PRESENT = re.compile(r'^Container image "[^"]*" already present on machine')


def go_duration(text: str) -> float | None:
    """Seconds of a Go duration (`1m2.3s`), or None when `text` is not one."""
    parts = _GO_PART.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        return None
    return sum(float(n) * _GO_UNITS[u] for n, u in parts)


def _event_time(event: Mapping[str, Any]) -> datetime | None:
    return timestamp(event.get("lastTimestamp") or event.get("eventTime") or event.get("firstTimestamp")
                     or mapping(event.get("metadata")).get("creationTimestamp"))


@record
class ImagePull:
    """The kubelet's `Pulled` event for the step container: when, and how long it says the pull took
    (0 when the image was already on the node)."""

    at: datetime
    seconds: float


def step_pull(events: Sequence[Mapping[str, Any]]) -> ImagePull | None:
    """The step container's image pull from the pod's events (core/v1 Events as the API lists them)."""
    pulled = []
    for event in events:
        if event.get("reason") != "Pulled" or (at := _event_time(event)) is None:
            continue
        message = str(event.get("message") or "")
        seconds = 0.0 if _PRESENT.match(message) else None
        if (found := _PULLED.match(message)) is not None:
            seconds = go_duration(found[1])
        if seconds is None:
            continue
        path = str(mapping(event.get("involvedObject")).get("fieldPath") or "")
        pulled.append((path == f"spec.containers{{{STEP_CONTAINER}}}", at, seconds))
    if not pulled:
        return None
    _, at, seconds = max(pulled, key=lambda p: (p[0], p[1]))
    return ImagePull(at, seconds)


@record
class StartupMeasure:
    """A retried step's way back to running, measured from the cluster's own timestamps, next to what
    the plan expects of the pool it landed on (from 0 nodes)."""

    pod: str
    pool: str
    created: datetime
    #: When the node it ran on became Ready; None when that node was already up.
    node_ready: datetime | None
    pull: ImagePull | None
    running: datetime
    #: The plan's estimate of that pool; the drilled pool's when the step fell back to another pool.
    expected: PoolStartup | None = None
    fell_back: bool = False

    def _seconds(self, start: datetime | None, end: datetime | None) -> float | None:
        return None if start is None or end is None else max(0.0, (end - start).total_seconds())

    @property
    def intervals(self) -> dict[str, float | None]:
        """Seconds of each stage: pending to node Ready, node Ready (or creation) to image pulled, image
        pulled to running, and the total."""
        ready = self.node_ready or self.created
        pulled = self.pull.at if self.pull else None
        return {"pendingToNodeReady": self._seconds(self.created, self.node_ready),
                "nodeReadyToImagePulled": self._seconds(ready, pulled),
                "kubeletPull": self.pull.seconds if self.pull else None,
                "imagePulledToRunning": self._seconds(pulled, self.running),
                "total": self._seconds(self.created, self.running)}

    @property
    def expected_total(self) -> Span | None:
        if self.expected is None:
            return None
        return self.expected.out_of_capacity if self.fell_back else self.expected.total

    def to_json(self) -> dict[str, Any]:
        total = self.expected_total
        return {"pod": self.pod, "pool": self.pool, "fellBack": self.fell_back,
                "measuredSeconds": self.intervals,
                "expected": None if self.expected is None else self.expected.to_json(),
                "expectedTotal": None if total is None else total.to_json()}


def measure_startup(observation: Observation, fate: PodFate, events: Sequence[Mapping[str, Any]],
                    startups: Mapping[str, PoolStartup]) -> StartupMeasure | None:
    """The retry's time to running, or None when it never ran; `startups` is the plan's estimate by pool."""
    if fate.retry is None or fate.retried_at is None or fate.running_at is None:
        return None
    new_node = fate.retry_node not in observation.known_nodes
    node = observation.nodes.get(fate.retry_node or "", {})
    ready = timestamp(condition(node, "Ready").get("lastTransitionTime")) if new_node else None
    if new_node and fate.retry_node == observation.replacement:
        ready = observation.replacement_ready
    pool = fate.retry_pool or "unknown"
    fell_back = pool != observation.target.pool
    expected = startups.get(observation.target.pool if fell_back else pool)
    return StartupMeasure(fate.retry, pool, fate.retried_at, ready, step_pull(events), fate.running_at,
                          expected, fell_back)


@record
class DrillReport:
    """The drill's result, for the timeline view and `--format json`."""

    stack: str
    cloud: str
    target: Target
    command: tuple[str, ...]
    ran: bool
    start: datetime | None = None
    events: tuple[Event, ...] = ()
    fates: tuple[PodFate, ...] = ()
    replacement: str | None = None
    replacement_seconds: float | None = None
    #: The plan's worst case before on-demand is used, None when the plan states none.
    bound_seconds: int | None = None
    #: What a new node may take to boot and join, added to the plan's bound (which excludes it).
    boot_allowance_seconds: int = 0
    failures: tuple[str, ...] = ()
    #: Whether the replacement node is ready for GPU work (`spotkube verify`'s node check), in words.
    replacement_check: str | None = None
    #: Each retried step's time back to running, next to the plan's expectation.
    startup: tuple[StartupMeasure, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.failures

    def to_json(self) -> dict[str, Any]:
        start = self.start
        return {
            "stack": self.stack, "cloud": self.cloud, "pool": self.target.pool, "node": self.target.node,
            "providerId": self.target.provider_id, "pipelinePods": list(self.target.pods),
            "command": list(self.command), "ran": self.ran,
            "startedAt": start.isoformat() if start else None,
            "timeline": [{"seconds": e.seconds(start), "subject": e.subject, "event": e.what}
                         for e in self.events] if start else [],
            "pods": [f.to_json(start) for f in self.fates] if start else [],
            "replacement": {"node": self.replacement, "seconds": self.replacement_seconds,
                            "check": self.replacement_check},
            "bound": {"planSeconds": self.bound_seconds, "bootAllowanceSeconds": self.boot_allowance_seconds},
            "startup": [m.to_json() for m in self.startup],
            "ok": self.ok, "failures": list(self.failures),
        }


def judge(observation: Observation, *, stack: str, cloud: str, command: Sequence[str], bound_seconds: int | None,
          boot_allowance_seconds: int, timed_out: bool) -> DrillReport:
    """The report: a pipeline pod that never came back as a retry is lost; a replacement later than the
    plan's bound plus the boot allowance (or none at all while pods waited) misses the bound."""
    failures = []
    start = observation.start
    for fate in observation.fates.values():
        if fate.retry is None:
            failures.append(f"pipeline pod {fate.pod} ({fate.workflow}) was lost: no Argo retry "
                            f"{'before the drill timed out' if timed_out else 'followed'}")
        elif fate.scheduled_at is not None and fate.running_at is None and timed_out:
            failures.append(f"retry {fate.retry} was scheduled on {fate.retry_node} but its step container was not "
                            "running before the drill timed out")
    if observation.node_not_ready is None and observation.node_gone is None:
        failures.append(f"node {observation.target.node} never went NotReady or away: the eviction did not happen")
    waited = bool(observation.fates)
    seconds = None if observation.replacement_ready is None else (observation.replacement_ready - start).total_seconds()
    limit = None if bound_seconds is None else bound_seconds + boot_allowance_seconds
    if limit is not None and seconds is not None and seconds > limit:
        failures.append(f"the replacement took {seconds:.0f}s, more than the plan's bound of {bound_seconds}s "
                        f"plus {boot_allowance_seconds}s for a node to boot")
    if limit is not None and seconds is None and waited and timed_out:
        failures.append(f"no replacement within the drill's timeout; the plan's bound is {bound_seconds}s plus "
                        f"{boot_allowance_seconds}s for a node to boot")
    return DrillReport(stack=stack, cloud=cloud, target=observation.target, command=tuple(command), ran=True,
                       start=start, events=tuple(sorted(observation.events, key=lambda e: e.at)),
                       fates=tuple(observation.fates.values()), replacement=observation.replacement,
                       replacement_seconds=seconds, bound_seconds=bound_seconds,
                       boot_allowance_seconds=boot_allowance_seconds, failures=tuple(failures))
