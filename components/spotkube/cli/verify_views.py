"""`spotkube verify`: after `pulumi up`, check the running platform against the stack's plan.

The I/O half: it runs the stack offline (its pool contracts, the objects it applies, its device
plugin), reads the cluster through the stack's kubeconfig with the Kubernetes client (the `drill`
extra, as `spotkube drill` does), and prints `review.verify`'s findings, one line each. With
`--scale-up`, a GPU pool at 0 nodes gets a short probe pod that brings one node up, which is then
checked; a pool whose nodes come only through provisioning requests (GKE's queued provisioning) gets a
ProvisioningRequest first, and the probe pod consumes it once it is provisioned. What it creates is
deleted whatever happens. Exit 0 when all is well, 1 on findings, 2 on bad input
or a cluster that can't be read.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from spotkube.cli import terminal
from spotkube.cli.drill import Cluster, seconds
from spotkube.clouds import profile
from spotkube.components.offline import StackRun, run_stack
from spotkube.platform import contract, stack_names
from spotkube.platform.addons.device_plugin import DAEMONSET_TYPE
from spotkube.platform.addons.device_plugin import NAMESPACE as PLUGIN_NAMESPACE
from spotkube.platform.addons.kfp_reference import NAMESPACE as KFP_NAMESPACE
from spotkube.platform.doctor import Finding
from spotkube.platform.errors import SpotkubeError
from spotkube.platform.pipeline_reader import load_pool_contracts
from spotkube.platform.project import find_project
from spotkube.review.drill import name_of
from spotkube.review.verify import (
    PROVISIONING_API,
    ObjectRef,
    Provisioning,
    applied_objects,
    consuming_probe_pod,
    gpu_findings,
    kubeflow_findings,
    node_check,
    plugin_findings,
    pool_nodes,
    presence_findings,
    probe_pod,
    probe_template,
    provisioning_request,
    request_state,
    toleration_findings,
)

#: Where the probe pod runs, and how often the nodes are listed while it waits.
PROBE_NAMESPACE = "default"
POLL_SECONDS = 5.0
DEFAULT_KUBECONFIG = Path("~/.kube/config").expanduser()


def pools_of(run: StackRun) -> list[contract.PoolContract]:
    contracts = run.outputs.get("poolContracts")
    if contracts is None or contracts.secret:
        raise SpotkubeError(f"stack {run.stack} exports no poolContracts output to verify the cluster against")
    return load_pool_contracts(contracts.value, f"stack {run.stack}: poolContracts", run.stack)[1]


def _daemonsets(run: StackRun) -> list[tuple[str, str]]:
    """The DaemonSets the stack deploys, (namespace, name)."""
    return [(str(r.inputs.get("metadata", {}).get("namespace") or "default"), str(r.inputs["metadata"]["name"]))
            for r in run.registrations if r.type == DAEMONSET_TYPE and r.inputs.get("metadata", {}).get("name")]


#: How long the probe pod may outlive verify's wait before Kubernetes ends it (activeDeadlineSeconds).
PROBE_GRACE_S = 120


def _node_up(cluster: Cluster, pool: contract.PoolContract, deadline: float, problem: str,
             now: Callable[[], float], sleep: Callable[[float], None]) -> tuple[dict[str, Any] | None, str]:
    """Wait until a node of `pool` is ready for GPU work, by `deadline`: the node, or None and why not."""
    while now() < deadline:
        checked = [(n, node_check(n, pool)) for n in pool_nodes(cluster.list("/api/v1/nodes"), pool.name)]
        ready = next((n for n, p in checked if p is None), None)
        if ready is not None:
            return ready, ""
        problem = next((p for _, p in checked if p), problem)
        sleep(POLL_SECONDS)
    return None, problem


def _advertised(pool: contract.PoolContract) -> str:
    return ", ".join(f"{count} {resource}" for resource, count in pool.advertised().items())


def scale_up(cluster: Cluster, pool: contract.PoolContract, timeout_s: int,
             now: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep) -> Finding:
    """Bring one node of `pool` up with a probe pod and check it; the pod is deleted afterwards."""
    name = f"spotkube-verify-{pool.name}"[:63]
    path = f"/api/v1/namespaces/{PROBE_NAMESPACE}/pods"
    try:
        # Inside the try: a POST that times out after the API made the pod still gets the pod deleted.
        cluster.call("POST", path, probe_pod(pool, name, lifetime_s=timeout_s + PROBE_GRACE_S))
        ready, problem = _node_up(cluster, pool, now() + timeout_s, "no node joined", now, sleep)
    finally:
        cluster.call("DELETE", f"{path}/{name}")
    if ready is not None:
        return Finding("scale-up", pool.name, "ok", f"pool {pool.name}: node {name_of(ready)} came up for the "
                       f"probe pod and advertises {_advertised(pool)}")
    return Finding("scale-up", pool.name, "fail", f"pool {pool.name}: within {timeout_s}s of the probe pod, {problem}",
                   f"kubectl -n {PROBE_NAMESPACE} get events; kubectl get nodes -l {contract.POOL_LABEL}={pool.name}")


#: Where ProvisioningRequests are served (the cluster autoscaler's CRD), in the probe's namespace.
REQUESTS_PATH = f"/apis/{PROVISIONING_API}/namespaces/{PROBE_NAMESPACE}/provisioningrequests"


def scale_up_queued(cluster: Cluster, pool: contract.PoolContract, provisioning: Provisioning, timeout_s: int,
                    now: Callable[[], float] = time.monotonic,
                    sleep: Callable[[float], None] = time.sleep) -> Finding:
    """Bring one node of a pool that scales only through provisioning requests up: a PodTemplate, a
    ProvisioningRequest for one pod of it, and once the request is `Provisioned` the probe pod consuming it;
    all three are deleted afterwards, whatever happens."""
    name = f"spotkube-verify-{pool.name}"[:63]
    lifetime_s = timeout_s + PROBE_GRACE_S
    core = f"/api/v1/namespaces/{PROBE_NAMESPACE}"
    request = f"{REQUESTS_PATH}/{name}"
    made: list[str] = []
    deadline = now() + timeout_s
    fix = f"kubectl -n {PROBE_NAMESPACE} describe provisioningrequest {name}; kubectl get events -n {PROBE_NAMESPACE}"
    try:
        made.append(f"{core}/podtemplates/{name}")
        cluster.call("POST", f"{core}/podtemplates", probe_template(pool, name, lifetime_s, provisioning))
        made.append(request)
        if cluster.call("POST", REQUESTS_PATH, provisioning_request(name, provisioning)) is None:
            return Finding("scale-up", pool.name, "warn", f"pool {pool.name} scales only through a "
                           f"ProvisioningRequest, and the cluster serves no {PROVISIONING_API} ProvisioningRequests: "
                           "--scale-up can't bring it up", "kubectl api-resources --api-group=autoscaling.x-k8s.io")
        state, said = "waiting", "no condition yet"
        while now() < deadline:
            state, said = request_state(cluster.call("GET", request) or {})
            if state != "waiting":
                break
            sleep(POLL_SECONDS)
        if state != "provisioned":
            what = f"the ProvisioningRequest ended ({said})" if state == "failed" else \
                f"the ProvisioningRequest was not provisioned (last {said})"
            return Finding("scale-up", pool.name, "fail", f"pool {pool.name}: within {timeout_s}s, {what}", fix)
        made.append(f"{core}/pods/{name}")
        cluster.call("POST", f"{core}/pods", consuming_probe_pod(pool, name, lifetime_s, provisioning))
        ready, problem = _node_up(cluster, pool, deadline, "no node joined", now, sleep)
    finally:
        for path in reversed(made):
            cluster.call("DELETE", path)
    if ready is not None:
        return Finding("scale-up", pool.name, "ok", f"pool {pool.name}: ProvisioningRequest {name} was provisioned "
                       f"and node {name_of(ready)} came up for the probe pod and advertises {_advertised(pool)}")
    return Finding("scale-up", pool.name, "fail", f"pool {pool.name}: within {timeout_s}s, the ProvisioningRequest was "
                   f"provisioned but {problem}", fix)


def _queued(run: StackRun) -> frozenset[str]:
    """The pools whose nodes come only through a ProvisioningRequest (GKE's queued provisioning): GKE taints
    them and gives nodes to no pending pod, so only a request brings one up."""
    return frozenset(pool.name for pool in run.spec.gpu_pools if pool.by_provisioning_request())


def check(run: StackRun, cluster: Cluster, *, scale: bool, timeout_s: int) -> list[Finding]:
    cluster.kubernetes_version()
    pools = pools_of(run)
    nodes = cluster.list("/api/v1/nodes")
    findings: list[Finding] = []
    queued = _queued(run)
    cloud = profile(run.spec.cloud)
    for pool in (p for p in pools if p.advertised() and not pool_nodes(nodes, p.name) and scale):
        if pool.name not in queued:
            findings.append(scale_up(cluster, pool, timeout_s))
            continue
        assert cloud.provisioning_request_class is not None, "only a cloud with a class has queued pools"
        findings.append(scale_up_queued(
            cluster, pool, Provisioning(cloud.provisioning_request_class, cloud.provisioning_request_taint), timeout_s))
    if scale:
        nodes = cluster.list("/api/v1/nodes")
    findings += gpu_findings(pools, nodes)
    live = {(str(d["metadata"].get("namespace")), name_of(d)): d for d in cluster.list("/apis/apps/v1/daemonsets")}
    deployed = _daemonsets(run)
    managed = profile(run.spec.cloud).managed_device_plugin
    if managed is None:
        plugins = [live[key] for key in deployed if key in live]
        described = "the device plugin DaemonSet " + ", ".join(f"{ns}/{n}" for ns, n in deployed)
    else:
        plugins = [d for (ns, n), d in live.items() if ns == PLUGIN_NAMESPACE and n.startswith(managed.name)]
        described = f"the cloud's device plugin ({PLUGIN_NAMESPACE}/{managed.name}*)"
    if any(p.advertised() for p in pools):
        plugin_pods = cluster.list(f"/api/v1/namespaces/{PLUGIN_NAMESPACE}/pods")
        findings += plugin_findings(plugins, plugin_pods, pools, nodes, described)
    findings += toleration_findings({f"DaemonSet {ns}/{n}": live.get((ns, n)) for ns, n in deployed}, pools)
    if run.spec.kubeflow.enabled:
        findings += kubeflow_findings(cluster.list(f"/apis/apps/v1/namespaces/{KFP_NAMESPACE}/deployments"),
                                      cluster.list(f"/api/v1/namespaces/{KFP_NAMESPACE}/pods"), nodes, pools,
                                      KFP_NAMESPACE)
    expected: dict[ObjectRef, bool] = {ref: cluster.call("GET", ref.path) is not None
                                       for ref in applied_objects((r.type, r.inputs) for r in run.registrations)}
    findings += presence_findings(expected)
    return findings


def lines(stack: str, findings: Sequence[Finding]) -> list[str]:
    failed = sum(f.level == "fail" for f in findings)
    return [f"stack {stack}", *(f"  {f.line()}" for f in findings),
            "the platform is ready" if not failed else f"{failed} finding(s)"]


def verify(
    stack: Annotated[str, typer.Option("--stack", "-s", metavar="NAME", help="The stack to verify.")],
    kubeconfig: Annotated[Path, typer.Option(
        "--kubeconfig", metavar="FILE", envvar="KUBECONFIG",
        help="The stack's kubeconfig (pulumi stack output kubeconfig --show-secrets).")] = DEFAULT_KUBECONFIG,
    context: Annotated[str | None, typer.Option("--context", metavar="NAME",
                                                help="The kubeconfig's context to use (default: its current one).")]
    = None,
    scale: Annotated[bool, typer.Option("--scale-up", help="Bring one node of each GPU pool at 0 nodes up with a "
                                        "short probe pod (deleted afterwards) and check it; a queued-provisioning "
                                        "pool's through a ProvisioningRequest.")] = False,
    timeout: Annotated[str, typer.Option("--timeout", metavar="DURATION",
                                         help="How long --scale-up waits for a node, e.g. 15m.")] = "15m",
    output: Annotated[str, typer.Option("--format", "-f", metavar="table|json", help="How to print it.")] = "table",
    project_dir: Annotated[Path, typer.Option("--project", metavar="DIR", help="Folder with Pulumi.yaml.")]
    = Path("."),
) -> None:
    """After `pulumi up`: check the running platform. Each GPU pool's nodes advertise their GPUs, the device
    plugin runs on every GPU node, the stack's DaemonSets tolerate every GPU pool's taints, Kubeflow's
    deployments are ready on the platform pool, and the autoscaler's fallback configuration is there.

    Exit 0 when all is well, 1 on findings, 2 on bad input or a cluster that can't be read.
    """
    stderr = terminal.console(stderr=True)
    try:
        if output not in ("table", "json"):
            raise SpotkubeError(f"--format {output}: use table or json")
        timeout_s = seconds(timeout, "--timeout")
        project = find_project(project_dir)
        run = run_stack(project, stack_names.stack_name(project, stack))
        findings = check(run, Cluster(kubeconfig, context), scale=scale, timeout_s=timeout_s)
    except SpotkubeError as err:
        stderr.print(f"[red]error:[/red] {escape(str(err))}", highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None
    report: dict[str, Any] = {"stack": run.stack, "ok": not any(f.level == "fail" for f in findings),
                              "findings": [f.to_json() for f in findings]}
    if output == "json":
        typer.echo(json.dumps(report, indent=2))
    else:
        for line in lines(run.stack, findings):
            typer.echo(line)
    if not report["ok"]:
        raise typer.Exit(1)
