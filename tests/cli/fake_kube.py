"""A Kubernetes API server on 127.0.0.1 that answers lists and streams watches as the real one does,
and fake `az` and `gcloud` CLIs, for `spotkube drill` tests.

The server keeps nodes and pods, each change numbered by a growing resourceVersion. A list answers
`{"kind": "NodeList", "apiVersion": "v1", "metadata": {"resourceVersion": ...}, "items": [...]}` (items
without their kind, as the API server sends them); `?watch=true&resourceVersion=N` answers with a
chunked stream of JSON lines `{"type": "ADDED|MODIFIED|DELETED", "object": {...}}` for every change
after N, then keeps the connection open until `timeoutSeconds`, as the API server does.

What happens after the eviction is a script of changes, run once the fake cloud CLI has been called
(it touches a trigger file): each step builds its object from the moment of the eviction, so the
objects carry the cluster's own timestamps (condition transitions, creation times) minutes apart while
the test runs in seconds.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

Obj = dict[str, Any]


def stamp(at: datetime) -> str:
    return at.strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class Change:
    """One scripted change: `make(eviction time)` builds the object; `kind` is node or pod."""

    kind: str
    type: str
    make: Callable[[datetime], Obj]


class _ApiHandler(BaseHTTPRequestHandler):
    """What both fake API servers answer alike: HTTP/1.1, quiet, JSON bodies with their length."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        return

    def _json(self, code: int, body: Obj) -> None:
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@dataclass
class FakeKube:
    nodes: list[Obj]
    pods: list[Obj]
    script: list[Change]
    trigger: Path
    #: Seconds between two scripted changes on the wire.
    pace: float = 0.05
    version: int = 100
    changes: list[tuple[int, str, str, Obj]] = field(default_factory=list)
    lock: threading.Condition = field(default_factory=threading.Condition)
    stopping: bool = False

    def __post_init__(self) -> None:
        self.state: dict[str, dict[str, Obj]] = {
            "node": {o["metadata"]["name"]: self._versioned(o) for o in self.nodes},
            "pod": {o["metadata"]["name"]: self._versioned(o) for o in self.pods},
            "event": {},
        }
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def _versioned(self, obj: Obj) -> Obj:
        self.version += 1
        obj = json.loads(json.dumps(obj))
        obj["metadata"]["resourceVersion"] = str(self.version)
        return obj

    def start(self) -> FakeKube:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        threading.Thread(target=self._play, daemon=True).start()
        return self

    def stop(self) -> None:
        with self.lock:
            self.stopping = True
            self.lock.notify_all()
        self.server.shutdown()
        self.server.server_close()

    def _play(self) -> None:
        """Wait for the cloud CLI, then apply the script, one change per `pace`."""
        # The fake CLI creates the file and then writes the time: wait for the text, not the file alone.
        while not (self.trigger.exists() and self.trigger.read_text().strip()):
            if self.stopping:
                return
            time.sleep(0.02)
        evicted_at = datetime.fromisoformat(self.trigger.read_text().strip())
        for change in self.script:
            time.sleep(self.pace)
            obj = self._versioned(change.make(evicted_at))
            with self.lock:
                name = obj["metadata"]["name"]
                if change.type == "DELETED":
                    self.state[change.kind].pop(name, None)
                else:
                    self.state[change.kind][name] = obj
                self.changes.append((int(obj["metadata"]["resourceVersion"]), change.kind, change.type, obj))
                self.lock.notify_all()

    def kubeconfig(self, path: Path) -> Path:
        path.write_text(json.dumps({
            "apiVersion": "v1", "kind": "Config", "current-context": "fake",
            "clusters": [{"name": "fake", "cluster": {"server": self.url}}],
            "contexts": [{"name": "fake", "context": {"cluster": "fake", "user": "fake"}}],
            "users": [{"name": "fake", "user": {"token": "fake-token"}}],
        }))
        return path

    def _events_after(self, kind: str, version: int, selector: str | None, deadline: float) -> Iterator[Obj]:
        sent = version
        while True:
            with self.lock:
                pending = [c for c in self.changes if c[0] > sent and c[1] == kind]
                if not pending:
                    left = deadline - time.monotonic()
                    if left <= 0 or self.stopping:
                        return
                    self.lock.wait(timeout=min(left, 0.2))
                    continue
            for number, _, event_type, obj in pending:
                sent = number
                if selector is None or selector in obj["metadata"].get("labels", {}):
                    yield {"type": event_type, "object": obj}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(_ApiHandler):
            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
                if parts.path.startswith("/api/v1/namespaces/") and parts.path.endswith("/events"):
                    self._events(parts.path.split("/")[4], query.get("fieldSelector"))
                    return
                routes = {"/api/v1/nodes": ("node", "NodeList"), "/api/v1/pods": ("pod", "PodList")}
                if parts.path not in routes:
                    self._json(404, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                                     "message": f"the server could not find the requested resource ({parts.path})",
                                     "reason": "NotFound", "code": 404})
                    return
                kind, list_kind = routes[parts.path]
                selector = query.get("labelSelector")
                if query.get("watch", "").lower() == "true":
                    self._watch(kind, int(query.get("resourceVersion") or fake.version), selector,
                                int(query.get("timeoutSeconds") or 1800))
                    return
                with fake.lock:
                    items = [{k: v for k, v in o.items() if k not in ("kind", "apiVersion")}
                             for o in fake.state[kind].values()
                             if selector is None or selector in o["metadata"].get("labels", {})]
                    body = {"kind": list_kind, "apiVersion": "v1",
                            "metadata": {"resourceVersion": str(fake.version)}, "items": items}
                self._json(200, body)

            def _events(self, namespace: str, selector: str | None) -> None:
                """A namespace's Events, as `?fieldSelector=involvedObject.name=POD` narrows them."""
                key, _, value = (selector or "").partition("=")
                with fake.lock:
                    items = [{k: v for k, v in o.items() if k not in ("kind", "apiVersion")}
                             for o in fake.state["event"].values() if o["metadata"]["namespace"] == namespace
                             and (key != "involvedObject.name" or o["involvedObject"]["name"] == value)]
                    body = {"kind": "EventList", "apiVersion": "v1",
                            "metadata": {"resourceVersion": str(fake.version)}, "items": items}
                self._json(200, body)

            def _watch(self, kind: str, version: int, selector: str | None, timeout: int) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                try:
                    for event in fake._events_after(kind, version, selector, time.monotonic() + timeout):
                        line = json.dumps(event).encode() + b"\n"
                        self.wfile.write(f"{len(line):x}\r\n".encode() + line + b"\r\n")
                        self.wfile.flush()
                    self.wfile.write(b"0\r\n\r\n")
                except (BrokenPipeError, ConnectionResetError):
                    return

        return Handler


def fake_cli(folder: Path, name: str, trigger: Path, record: Path, stderr: str = "", exit_code: int = 0) -> Path:
    """An executable `name` that records its arguments, marks the eviction time in `trigger` (unless it
    fails) and answers like the real CLI: `az vmss simulate-eviction` prints nothing on success (the API
    answers 204 No Content); gcloud reports on stderr."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(
        f"#!{sys.executable}\n"
        "import datetime, json, pathlib, sys\n"
        f"pathlib.Path({str(record)!r}).write_text(json.dumps(sys.argv[1:]))\n"
        f"sys.stderr.write({stderr!r})\n"
        f"if {exit_code}:\n    sys.exit({exit_code})\n"
        f"pathlib.Path({str(trigger)!r}).write_text(datetime.datetime.now(datetime.UTC).isoformat())\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def on_path(folder: Path) -> dict[str, str]:
    """The environment with `folder` first on PATH."""
    return {**os.environ, "PATH": f"{folder}{os.pathsep}{os.environ.get('PATH', '')}"}


# --- Objects as the API server returns them --------------------------------------------------------


def node(name: str, pool: str, provider_id: str, *, ready: bool = True, ready_since: datetime | None = None,
         reason: str = "KubeletReady", extra_labels: dict[str, str] | None = None) -> Obj:
    since = ready_since or datetime(2026, 11, 25, 9, 0, tzinfo=UTC)
    return {
        "kind": "Node", "apiVersion": "v1",
        "metadata": {"name": name, "uid": f"uid-{name}", "creationTimestamp": stamp(since - timedelta(seconds=40)),
                     "labels": {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
                                "spotkube.io/pool": pool, **(extra_labels or {})}},
        "spec": {"providerID": provider_id},
        "status": {
            "conditions": [
                {"type": "MemoryPressure", "status": "False", "reason": "KubeletHasSufficientMemory",
                 "message": "kubelet has sufficient memory available", "lastHeartbeatTime": stamp(since),
                 "lastTransitionTime": stamp(since)},
                {"type": "Ready", "status": "True" if ready else "Unknown", "reason": reason,
                 "message": "kubelet is posting ready status" if ready else "Kubelet stopped posting node status.",
                 "lastHeartbeatTime": stamp(since), "lastTransitionTime": stamp(since)},
            ],
            "nodeInfo": {"architecture": "amd64", "bootID": "b", "containerRuntimeVersion": "containerd://1.7.27",
                         "kernelVersion": "6.8.0", "kubeProxyVersion": "", "kubeletVersion": "v1.33.2",
                         "machineID": "m", "operatingSystem": "linux", "osImage": "Ubuntu 24.04.2 LTS",
                         "systemUUID": "s"},
        },
    }


def pipeline_pod(name: str, workflow: str, step: str, attempt: int, *, node_name: str | None, phase: str,
                 created: datetime, scheduled: datetime | None = None, message: str | None = None,
                 reason: str | None = None, deleting: datetime | None = None, started: datetime | None = None) -> Obj:
    """An Argo pod of a KFP step; a Running one reports its containers running since `started` (default:
    when it was scheduled), as the kubelet does once their images are pulled."""
    metadata: Obj = {
        "name": name, "namespace": "kubeflow", "uid": f"uid-{name}", "creationTimestamp": stamp(created),
        "labels": {"workflows.argoproj.io/workflow": workflow, "workflows.argoproj.io/completed": "false",
                   "pipelines.kubeflow.org/v2_component": "true"},
        "annotations": {"workflows.argoproj.io/node-name": f"{workflow}.root.{step}.executor({attempt})",
                        "workflows.argoproj.io/node-id": f"{name}-node"},
    }
    if deleting:
        metadata["deletionTimestamp"] = stamp(deleting)
    status: Obj = {"phase": phase, "conditions": [
        {"type": "PodScheduled", "status": "True" if node_name else "False",
         "lastTransitionTime": stamp(scheduled or created),
         **({} if node_name else {"reason": "Unschedulable", "message": "0/5 nodes are available"})}]}
    if phase == "Running":
        since = stamp(started or scheduled or created)
        status["containerStatuses"] = [
            {"name": container, "image": image, "imageID": f"{image}@sha256:{'0' * 64}", "ready": True,
             "restartCount": 0, "started": True, "containerID": f"containerd://{container}-{name}",
             "state": {"running": {"startedAt": since}}}
            for container, image in (("main", "python:3.12-slim"), ("wait", "quay.io/argoproj/argoexec:v4.0.5"))]
    if message:
        status["message"] = message
    if reason:
        status["reason"] = reason
    spec: Obj = {"containers": [{"name": "wait", "image": "quay.io/argoproj/argoexec:v4.0.5"},
                                {"name": "main", "image": "python:3.12-slim"}],
                 "restartPolicy": "Never", "terminationGracePeriodSeconds": 30}
    if node_name:
        spec["nodeName"] = node_name
    return {"kind": "Pod", "apiVersion": "v1", "metadata": metadata, "spec": spec, "status": status}


def kubelet_event(pod: str, reason: str, message: str, at: datetime, *, container: str = "main",
                  node_name: str = "node") -> Obj:
    """A core/v1 Event the kubelet records about a pod's container (`Pulling`, `Pulled`, `Created`, `Started`):
    first and last timestamps, no eventTime, as kubectl describe shows them."""
    return {
        "kind": "Event", "apiVersion": "v1",
        "metadata": {"name": f"{pod}.{hashlib.sha256((reason + message).encode()).hexdigest()[:16]}",
                     "namespace": "kubeflow",
                     "uid": f"uid-{pod}-{reason}", "creationTimestamp": stamp(at)},
        "involvedObject": {"kind": "Pod", "namespace": "kubeflow", "name": pod, "uid": f"uid-{pod}",
                           "apiVersion": "v1", "fieldPath": f"spec.containers{{{container}}}"},
        "reason": reason, "message": message, "source": {"component": "kubelet", "host": node_name},
        "firstTimestamp": stamp(at), "lastTimestamp": stamp(at), "count": 1, "type": "Normal",
        "eventTime": None, "reportingComponent": "kubelet", "reportingInstance": node_name,
    }


# --- A cluster at rest, for `spotkube verify` ------------------------------------------------------

#: GET /version as an AKS 1.33 API server answers it.
VERSION = {"major": "1", "minor": "33", "emulationMajor": "1", "emulationMinor": "33", "minCompatibilityMajor": "1",
           "minCompatibilityMinor": "32", "gitVersion": "v1.33.2",
           "gitCommit": "6e0e6b8b1c2c0a1f8c0e6b1c0d5d7c0a3e2f1b4d",
           "gitTreeState": "clean", "buildDate": "2026-06-17T18:33:12Z", "goVersion": "go1.24.4", "compiler": "gc",
           "platform": "linux/amd64"}


def _plural(kind: str) -> str:
    lower = kind.lower()
    return f"{lower}es" if lower.endswith("s") else f"{lower}s"


def _paths(obj: Obj) -> tuple[str, list[str]]:
    """An object's own path and the list paths that include it, as the API server routes them."""
    group, _, version = obj["apiVersion"].rpartition("/")
    base = f"/apis/{group}/{version}" if group else f"/api/{version}"
    namespace = obj["metadata"].get("namespace")
    plural = _plural(obj["kind"])
    where = f"/namespaces/{namespace}" if namespace else ""
    return f"{base}{where}/{plural}/{obj['metadata']['name']}", [f"{base}/{plural}", f"{base}{where}/{plural}"]


@dataclass
class ClusterAtRest:
    """An API server on 127.0.0.1 answering GETs of objects and lists (namespaced and across namespaces,
    items without kind and apiVersion, as the API server lists them), creating objects on POST and deleting
    objects on DELETE; `on_create(pod)` lets a test play what follows (the autoscaler adds a node).
    `unserved` list paths answer 404, as the API server does for a resource no CRD defines."""

    objects: list[Obj]
    on_create: Callable[[Obj], None] = lambda pod: None
    requests: list[tuple[str, str]] = field(default_factory=list)
    unserved: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def start(self) -> ClusterAtRest:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    kubeconfig = FakeKube.kubeconfig

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(_ApiHandler):
            def _missing(self, path: str) -> None:
                self._json(404, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                                 "message": f"{path} not found", "reason": "NotFound", "code": 404})

            def do_GET(self) -> None:
                path = urlsplit(self.path).path
                fake.requests.append(("GET", path))
                if path == "/version":
                    return self._json(200, VERSION)
                for obj in fake.objects:
                    if path == _paths(obj)[0]:
                        return self._json(200, obj)
                found = [obj for obj in fake.objects if path in _paths(obj)[1]]
                if found or path.rsplit("/", 1)[-1] in {"nodes", "pods", "daemonsets", "deployments", "configmaps",
                                                         "computeclasses"}:
                    kind = (found[0]["kind"] if found else path.rsplit("/", 1)[-1][:-1].capitalize()) + "List"
                    items = [{k: v for k, v in o.items() if k not in ("kind", "apiVersion")} for o in found]
                    return self._json(200, {"kind": kind, "apiVersion": "v1", "metadata": {"resourceVersion": "9"},
                                            "items": items})
                return self._missing(path)

            def do_POST(self) -> None:
                path = urlsplit(self.path).path
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                fake.requests.append(("POST", path))
                if path in fake.unserved:
                    return self._missing(path)
                parts = path.split("/")
                body["metadata"]["namespace"] = parts[parts.index("namespaces") + 1]
                created = json.loads(json.dumps(body))  # the API answers what it stored, before anyone acts on it
                fake.objects.append(body)
                fake.on_create(body)
                self._json(201, created)

            def do_DELETE(self) -> None:
                path = urlsplit(self.path).path
                fake.requests.append(("DELETE", path))
                gone = [o for o in fake.objects if _paths(o)[0] == path]
                if not gone:
                    return self._missing(path)
                fake.objects.remove(gone[0])
                self._json(200, {"kind": "Status", "apiVersion": "v1", "status": "Success"})

        return Handler
