"""`spotkube drill`: evict one node of a spot pool the way the cloud does, and watch what follows.

The I/O half of the drill: it reads the stack's plan (the pool, its GPU type's fallback bound), lists
the cluster's nodes and pipeline pods through the Kubernetes API with the stack's kubeconfig, runs
the cloud's own CLI (`az vmss simulate-eviction`, `gcloud compute instances
simulate-maintenance-event`; the cloud profile builds the command from the node's provider ID), and
streams node and pod watch events into `review.drill.Observation`, which judges them.

The Kubernetes Python client is the `drill` extra (`pip install "spotkube[drill]"`): only this
command needs it. Watches run in threads that feed one queue, so nodes and pods are followed at once
from the resourceVersion of the first list, and nothing that happens while the cloud command runs is
missed.
"""

from __future__ import annotations

import json
import queue
import re
import shutil
import subprocess
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from spotkube.clouds import profile
from spotkube.components.offline import StackRun
from spotkube.platform import contract
from spotkube.platform.errors import SpotkubeError
from spotkube.platform.pipeline_reader import load_pool_contracts
from spotkube.platform.records import record
from spotkube.platform.startup import PoolStartup, duration
from spotkube.review.drill import (
    DrillReport,
    Observation,
    StartupMeasure,
    Target,
    choose_node,
    judge,
    labels_of,
    measure_startup,
)
from spotkube.review.fallback import stack_fallback
from spotkube.review.gang_drill import (
    JOBSET_NAME_LABEL,
    GangDrillReport,
    GangObservation,
    GangTarget,
    choose_worker_node,
    judge_gang,
)
from spotkube.review.plan_document import pool_rows
from spotkube.review.startup import pool_startups
from spotkube.review.verify import node_check

#: How long the cloud CLI may take to ask for the eviction.
COMMAND_TIMEOUT_S = 300
_DURATION = re.compile(r"^([0-9]+)(s|m|h)$")


class DrillError(SpotkubeError):
    """A drill that can't start: a pool or node that isn't there, no kubeconfig, no cloud CLI."""


def seconds(text: str, option: str) -> int:
    """`90s`, `10m` or `1h` in seconds."""
    match = _DURATION.fullmatch(text)
    if not match:
        raise DrillError(f"{option} {text}: use a whole number followed by s, m or h, e.g. 10m")
    return int(match[1]) * {"s": 1, "m": 60, "h": 3600}[match[2]]


@record
class PoolFacts:
    """What the plan says about the drilled pool: its GPU type's other pools and fallback bound."""

    replacement_pools: frozenset[str]
    bound_seconds: int | None
    #: The plan's time to a running step of each GPU pool, by pool (review/startup.py).
    startups: Mapping[str, PoolStartup] = field(default_factory=dict)


def pool_facts(run: StackRun, pool: str) -> PoolFacts:
    """The pool as the stack's offline plan registers it, or a DrillError naming the pools there are."""
    rows = pool_rows(run.spec.cloud, run.registrations)
    row = next((r for r in rows if r.name == pool), None)
    if row is None:
        raise DrillError(f"stack {run.stack} has no pool {pool!r}; pools: {', '.join(r.name for r in rows)}")
    if row.capacity not in contract.INTERRUPTIBLE:
        spot = [r.name for r in rows if r.capacity in contract.INTERRUPTIBLE]
        raise DrillError(f"pool {pool!r} of stack {run.stack} is {row.capacity} capacity, which the cloud never "
                         f"evicts; drill a spot or preemptible pool: {', '.join(spot) or 'the stack has none'}")
    if row.gpu_type is None:
        return PoolFacts(frozenset(), None)
    fallbacks = stack_fallback(run.spec.cloud, run.registrations, rows)
    fallback = next((f for f in fallbacks if f.gpu_type == row.gpu_type), None)
    others = frozenset(r.name for r in rows if r.gpu_type == row.gpu_type)
    startups = {s.pool: s for s in pool_startups(run.spec, run.registrations, rows, fallbacks)}
    return PoolFacts(others, fallback.worst_case_seconds if fallback else None, startups)


class Cluster:
    """The cluster's API through the Kubernetes Python client, as raw JSON (the API's own shape)."""

    def __init__(self, kubeconfig: Path, context: str | None = None) -> None:
        try:
            from kubernetes import client, config
        except ImportError:
            raise DrillError("spotkube drill needs the Kubernetes client; install it with: "
                             "pip install 'spotkube[drill]'") from None
        if not kubeconfig.is_file():
            raise DrillError(f"{kubeconfig}: no kubeconfig there; save the stack's with `pulumi stack output "
                             "kubeconfig --show-secrets > kubeconfig.yaml` and pass --kubeconfig kubeconfig.yaml")
        try:
            self.api_client = config.new_client_from_config(config_file=str(kubeconfig), context=context)
        except Exception as err:  # the client raises ConfigException, ValueError, yaml errors...
            raise DrillError(f"{kubeconfig}: not a usable kubeconfig ({type(err).__name__}: {err})") from None
        self.core = client.CoreV1Api(self.api_client)

    def _list(self, call: Callable[..., Any], **kwargs: Any) -> tuple[list[dict[str, Any]], str]:
        try:
            response = call(_preload_content=False, **kwargs)
        except Exception as err:
            raise DrillError(f"the Kubernetes API refused the list: {err}") from None
        body = json.loads(response.data)
        return list(body.get("items") or []), str((body.get("metadata") or {}).get("resourceVersion") or "")

    def call(self, method: str, path: str, body: dict[str, Any] | None = None,
             **query: str) -> dict[str, Any] | None:
        """Any API path as raw JSON (`spotkube verify` reads lists, objects and creates its probe); None
        when the object isn't there (404)."""
        from kubernetes.client.exceptions import ApiException

        try:
            response = self.api_client.call_api(
                path, method, query_params=list(query.items()), body=body, auth_settings=["BearerToken"],
                header_params={"Accept": "application/json", "Content-Type": "application/json"},
                _preload_content=False, _return_http_data_only=True)
        except ApiException as err:
            if err.status == 404:
                return None
            raise DrillError(f"the Kubernetes API answered {err.status} to {method} {path}: {err.reason}") from None
        except Exception as err:  # urllib3's connection errors, TLS, a kubeconfig's exec plugin
            reason = getattr(err, "reason", None) or err  # urllib3's MaxRetryError carries the cause
            raise DrillError(f"the Kubernetes API could not be reached at {self.api_client.configuration.host} "
                             f"({type(reason).__name__}: {reason}); check the kubeconfig and the network") from None
        data = response.data
        try:
            return json.loads(data) if data else {}
        except ValueError:
            raise DrillError(f"{self.api_client.configuration.host} answered {method} {path} with something that is "
                             "not JSON: it is not a Kubernetes API server; check the kubeconfig's server") from None

    def kubernetes_version(self) -> str:
        """The API server's version (`GET /version`): a server that isn't Kubernetes's (a proxy, a web page,
        a wrong port) is said to be so, before its 404s read as objects the stack lacks."""
        found = self.call("GET", "/version")
        if not isinstance(found, dict) or not found.get("gitVersion") or "major" not in found:
            answer = "404" if found is None else "no gitVersion"
            raise DrillError(f"{self.api_client.configuration.host} is not a Kubernetes API server: GET /version "
                             f"answered {answer}; check the kubeconfig's server")
        return str(found["gitVersion"])

    def list(self, path: str, **query: str) -> list[dict[str, Any]]:
        """The items of a list path; none when the API doesn't serve it."""
        return list((self.call("GET", path, **query) or {}).get("items") or [])

    def nodes(self) -> tuple[list[dict[str, Any]], str]:
        return self._list(self.core.list_node)

    def pipeline_pods(self, selector: str = contract.ARGO_WORKFLOW_LABEL) -> tuple[list[dict[str, Any]], str]:
        """The pods the drill follows: pipeline pods, or with `selector` a JobSet's workers."""
        return self._list(self.core.list_pod_for_all_namespaces, label_selector=selector)

    def watch(self, events: queue.Queue[tuple[str, str, dict[str, Any]]], timeout_s: int,
              node_version: str, pod_version: str, selector: str = contract.ARGO_WORKFLOW_LABEL) -> None:
        """Stream node and pod events into `events` from the lists' resourceVersions, each in a thread
        (daemon threads: a watch blocked on a quiet connection must not keep the command alive)."""
        from kubernetes import watch

        def follow(kind: str, call: Callable[..., Any], version: str, **kwargs: Any) -> None:
            try:
                for event in watch.Watch(return_type="object").stream(
                        call, resource_version=version, timeout_seconds=timeout_s, **kwargs):
                    events.put((kind, str(event["type"]), event["raw_object"]))
            except Exception as err:
                events.put((kind, "ERROR", {"message": str(err)}))

        for kind, call, version, kwargs in (
                ("node", self.core.list_node, node_version, {}),
                ("pod", self.core.list_pod_for_all_namespaces, pod_version, {"label_selector": selector})):
            threading.Thread(target=follow, args=(kind, call, version), kwargs=kwargs, daemon=True,
                             name=f"drill-watch-{kind}").start()


def eviction_command(run: StackRun, node: str, provider_id: str) -> tuple[str, ...]:
    """The stack's cloud's command that evicts `node`, from its provider ID."""
    cloud = profile(run.spec.cloud)
    build = cloud.commands.eviction_command
    command = build(provider_id) if build else None
    if command is None:
        raise DrillError(f"node {node} has provider ID {provider_id!r}, from which no {cloud.title} eviction "
                         "command can be built")
    return command


def plan_drill(run: StackRun, pool: str, cluster: Cluster) -> tuple[Target, tuple[str, ...], PoolFacts]:
    """The node to evict and the cloud command, without touching anything."""
    facts = pool_facts(run, pool)
    nodes, _ = cluster.nodes()
    pods, _ = cluster.pipeline_pods()
    target = choose_node(nodes, pods, pool)
    if target is None:
        raise DrillError(f"pool {pool!r} of stack {run.stack} has no Ready node to evict; start a pipeline step "
                         "on it first (its pool scales from zero)")
    return target, eviction_command(run, target.node, target.provider_id), facts


def run_command(command: Sequence[str]) -> None:
    """The cloud CLI, as the user would run it; a failure is a DrillError with what the CLI said."""
    if shutil.which(command[0]) is None:
        raise DrillError(f"{command[0]} is not on PATH; install it and sign in, or run the printed command yourself")
    try:
        done = subprocess.run(list(command), capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        raise DrillError(f"{' '.join(command)} did not finish in {COMMAND_TIMEOUT_S}s") from None
    if done.returncode != 0:
        said = (done.stderr or done.stdout).strip()
        raise DrillError(f"{' '.join(command)} failed (exit {done.returncode}): {said}")


def observe(events: queue.Queue[tuple[str, str, dict[str, Any]]], observation: Observation | GangObservation,
            timeout_s: int, now: Callable[[], datetime]) -> bool:
    """Fold events into the observation until it is done or the timeout passes; True if it timed out."""
    deadline = observation.start.timestamp() + timeout_s
    while not observation.done:
        left = deadline - now().timestamp()
        if left <= 0:
            return True
        try:
            kind, event_type, obj = events.get(timeout=min(left, 1.0))
        except queue.Empty:
            continue
        if event_type == "ERROR":
            raise DrillError(f"the {kind} watch stopped: {obj.get('message') or obj}")
        if event_type not in ("ADDED", "MODIFIED", "DELETED"):
            continue
        received = now()
        if kind == "node":
            observation.node_event(event_type, obj, received)
        else:
            observation.pod_event(event_type, obj, received)
    return False


def run_drill(run: StackRun, pool: str, cluster: Cluster, *, timeout_s: int, boot_allowance_s: int,
              now: Callable[[], datetime] = lambda: datetime.now(UTC)) -> DrillReport:
    """Evict the chosen node through the cloud's CLI and watch until the platform has recovered (or not)."""
    target, command, facts = plan_drill(run, pool, cluster)
    nodes, node_version = cluster.nodes()
    pods, pod_version = cluster.pipeline_pods()
    events: queue.Queue[tuple[str, str, dict[str, Any]]] = queue.Queue()
    cluster.watch(events, timeout_s, node_version, pod_version)
    start = now()
    observation = Observation.begin(target, start, nodes, pods, facts.replacement_pools)
    run_command(command)
    timed_out = observe(events, observation, timeout_s, now)
    report = judge(observation, stack=run.stack, cloud=run.spec.cloud, command=command,
                   bound_seconds=facts.bound_seconds, boot_allowance_seconds=boot_allowance_s, timed_out=timed_out)
    return replace(report, replacement_check=replacement_check(run, observation),
                   startup=startup_measures(cluster, observation, facts.startups))


def startup_measures(cluster: Cluster, observation: Observation,
                     startups: Mapping[str, PoolStartup]) -> tuple[StartupMeasure, ...]:
    """Each retried step's time back to running, with its image pull read from its pod's events."""
    measures = []
    for fate in observation.fates.values():
        if fate.retry is None or fate.running_at is None:
            continue
        events = cluster.list(f"/api/v1/namespaces/{fate.retry_namespace}/events",
                              fieldSelector=f"involvedObject.name={fate.retry}")
        measure = measure_startup(observation, fate, events, startups)
        if measure is not None:
            measures.append(measure)
    return tuple(measures)


def replacement_check(run: StackRun, observation: Observation) -> str | None:
    """Whether the replacement node, as last seen, is ready for GPU work: `spotkube verify`'s node check
    against its pool's contract (None without a replacement or for a pool without GPUs)."""
    node = observation.nodes.get(observation.replacement or "")
    contracts = run.outputs.get("poolContracts")
    if node is None or contracts is None or contracts.secret:
        return None
    _, pools = load_pool_contracts(contracts.value, f"stack {run.stack}: poolContracts", run.stack)
    pool = next((p for p in pools if p.name == labels_of(node).get(contract.POOL_LABEL)), None)
    if pool is None or not pool.advertised():
        return None
    problem = node_check(node, pool)
    gpus = ", ".join(f"{count} {resource}" for resource, count in pool.advertised().items())
    return problem or f"ready for GPU work: advertises {gpus}"


def dry_report(run: StackRun, pool: str, cluster: Cluster, boot_allowance_s: int) -> DrillReport:
    """What `--run` would do: the node and the command, nothing evicted."""
    target, command, facts = plan_drill(run, pool, cluster)
    return DrillReport(stack=run.stack, cloud=run.spec.cloud, target=target, command=command, ran=False,
                       bound_seconds=facts.bound_seconds, boot_allowance_seconds=boot_allowance_s)


def timeline_lines(report: DrillReport) -> Iterator[str]:
    """The drill as text: the target, the command, then the timeline and the verdict."""
    yield f"stack {report.stack}: pool {report.target.pool}, node {report.target.node}"
    pods = ", ".join(report.target.pods) or "none"
    yield f"pipeline pods on it: {pods}"
    yield f"command: {' '.join(report.command)}"
    if report.bound_seconds is None:
        yield "the plan states no fallback bound"
    else:
        yield f"the plan's bound: {report.bound_seconds}s, plus {report.boot_allowance_seconds}s for a node to boot"
    if not report.ran or report.start is None:
        yield "not run: add --run to evict the node and watch what follows"
        return
    for event in report.events:
        yield f"  +{event.seconds(report.start):7.0f}s  {event.subject}: {event.what}"
    for fate in report.fates:
        where = f"retried as {fate.retry} on {fate.retry_node} (pool {fate.retry_pool})" if fate.retry_node else (
            f"retried as {fate.retry}, not yet scheduled" if fate.retry else "LOST: no retry")
        yield f"pod {fate.pod}: {fate.ended or 'still running'}; {where}"
    if report.replacement_seconds is not None:
        yield f"replacement: {report.replacement} after {report.replacement_seconds:.0f}s"
    if report.replacement_check is not None:
        yield f"replacement {report.replacement}: {report.replacement_check}"
    for measure in report.startup:
        yield from startup_lines(measure)
    yield "ok" if report.ok else "FAILED: " + "; ".join(report.failures)


def _took(seconds: float | None) -> str:
    return "-" if seconds is None else duration(seconds)


def startup_lines(measure: StartupMeasure) -> Iterator[str]:
    """A retried step's time back to running, measured, next to the plan's expectation."""
    took = measure.intervals
    expected = measure.expected
    how = "its fallback" if measure.fell_back else "its pool"
    yield f"time to running of {measure.pod} (pool {measure.pool}): measured | the plan's, from 0 nodes ({how})"
    node = "already up" if measure.node_ready is None else _took(took["pendingToNodeReady"])
    yield f"  pending -> node Ready:       {node} | {expected.node_span.text() if expected else '-'}"
    pull = f" (the kubelet's pull: {_took(took['kubeletPull'])})" if measure.pull else " (no Pulled event)"
    image = expected.image.span.text() if expected and expected.image.span else (
        expected.image.note if expected and expected.image.note else "-")
    yield f"  node Ready -> image pulled:  {_took(took['nodeReadyToImagePulled'])}{pull} | {image}"
    yield f"  image pulled -> running:     {_took(took['imagePulledToRunning'])}"
    total = measure.expected_total
    yield f"  total:                       {_took(took['total'])} | {total.text() if total else 'not stated'}"


def report_json(report: DrillReport) -> str:
    return json.dumps(report.to_json(), indent=2)


# --- a drill on a running TrainJob: one worker's node evicted -------------------------------------------


def plan_gang_drill(run: StackRun, pool: str, job: str, cluster: Cluster) -> tuple[GangTarget, tuple[str, ...]]:
    """The node of one of the job's workers to evict, and the cloud command, without touching anything."""
    pool_facts(run, pool)
    nodes, _ = cluster.nodes()
    pods, _ = cluster.pipeline_pods(JOBSET_NAME_LABEL)
    target = choose_worker_node(nodes, pods, job, pool)
    if target is None:
        raise DrillError(f"no worker of TrainJob {job!r} runs on a Ready node of pool {pool!r} of stack {run.stack}; "
                         "start the job first, or name the pool its workers run on")
    return target, eviction_command(run, target.node, target.provider_id)


def run_gang_drill(run: StackRun, pool: str, job: str, cluster: Cluster, *, timeout_s: int,
                   now: Callable[[], datetime] = lambda: datetime.now(UTC)) -> GangDrillReport:
    """Evict the node of one worker and watch until every worker of the job runs again (or the timeout)."""
    target, command = plan_gang_drill(run, pool, job, cluster)
    _, node_version = cluster.nodes()
    _, pod_version = cluster.pipeline_pods(JOBSET_NAME_LABEL)
    events: queue.Queue[tuple[str, str, dict[str, Any]]] = queue.Queue()
    cluster.watch(events, timeout_s, node_version, pod_version, JOBSET_NAME_LABEL)
    observation = GangObservation.begin(target, now())
    run_command(command)
    timed_out = observe(events, observation, timeout_s, now)
    return judge_gang(observation, stack=run.stack, command=command, timed_out=timed_out)


def dry_gang_report(run: StackRun, pool: str, job: str, cluster: Cluster) -> GangDrillReport:
    target, command = plan_gang_drill(run, pool, job, cluster)
    return GangDrillReport(run.stack, target, command, ran=False)


def gang_lines(report: GangDrillReport) -> Iterator[str]:
    """The drill on a TrainJob as text: the worker's node, the command, the timeline and the time back."""
    target = report.target
    yield (f"stack {report.stack}: TrainJob {target.job}, {target.workers} workers; evicting node {target.node} "
           f"(pool {target.pool})")
    yield f"command: {' '.join(report.command)}"
    if not report.ran or report.start is None:
        yield "not run: add --run to evict the node and time how long until every worker runs again"
        return
    for event in sorted(report.timeline, key=lambda e: e.at):
        yield f"  +{event.seconds(report.start):7.0f}s  {event.subject}: {event.what}"
    if report.seconds_to_all_running is not None:
        yield f"all {target.workers} workers running again after {duration(report.seconds_to_all_running)}"
    yield "ok" if report.ok else "FAILED: the workers did not all run again before the timeout"
