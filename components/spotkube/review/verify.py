"""`spotkube verify`'s judgement: does the running platform match what the stack's plan promised?

After `pulumi up` every resource exists, and still a GPU pool can fail its users: nodes up but
`nvidia.com/gpu` missing (the device plugin not running there, a DaemonSet that doesn't tolerate the
pool's taint), Kubeflow's deployments not ready, or the fallback configuration absent. This module
judges what the Kubernetes API lists (its own JSON: camelCase dicts) against the stack's pool
contracts and registrations; the CLI does the I/O. `drill` uses `node_check` to say when a
replacement node is ready for GPU work. Pure module.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from spotkube.platform import contract
from spotkube.platform.cloud import items, mapping
from spotkube.platform.contract.placements import Toleration
from spotkube.platform.doctor import Finding
from spotkube.platform.identities import plural
from spotkube.platform.records import record
from spotkube.review.drill import is_ready, labels_of, name_of

Obj = Mapping[str, Any]
#: Taint effects that keep a pod off a node (PreferNoSchedule only discourages).
BLOCKING = ("NoSchedule", "NoExecute")
#: What the probe pod runs: Kubernetes' own pause image, which does nothing and is on every registry mirror.
PROBE_IMAGE = "registry.k8s.io/pause:3.10"


@record
class ObjectRef:
    """A Kubernetes object the stack applies, and where the API serves it."""

    api_version: str
    kind: str
    name: str
    namespace: str | None = None

    @property
    def path(self) -> str:
        group, _, version = self.api_version.rpartition("/")
        base = f"/apis/{group}/{version}" if group else f"/api/{version}"
        where = f"/namespaces/{self.namespace}" if self.namespace else ""
        return f"{base}{where}/{plural(self.kind).lower()}/{self.name}"

    def __str__(self) -> str:
        return f"{self.kind} {self.namespace + '/' if self.namespace else ''}{self.name}"


def node_gpus(node: Obj, resource: str) -> int:
    """What a node advertises of a resource for pods (`status.allocatable`), 0 when it lists none."""
    value = mapping(mapping(node.get("status")).get("allocatable")).get(resource)
    try:
        return int(str(value)) if value is not None else 0
    except ValueError:
        return 0


def node_check(node: Obj, pool: contract.PoolContract) -> str | None:
    """Why a node of a GPU pool isn't ready for GPU work (not Ready, or advertising fewer GPUs than the
    plan says), or None when it is."""
    if not is_ready(node):
        return f"node {name_of(node)} is not Ready"
    for resource, count in pool.advertised().items():
        found = node_gpus(node, resource)
        if found < count:
            what = f"only {found}" if found else "no"
            return (f"node {name_of(node)} advertises {what} {resource} (the plan says {count}): the device plugin "
                    "isn't serving it yet")
    return None


def pool_nodes(nodes: Iterable[Obj], pool: str) -> list[Obj]:
    return [n for n in nodes if labels_of(n).get(contract.POOL_LABEL) == pool]


def gpu_findings(pools: Sequence[contract.PoolContract], nodes: Sequence[Obj]) -> list[Finding]:
    """Each GPU pool: its nodes advertise the GPUs the plan says, or it is at 0 nodes (said as such)."""
    findings = []
    for pool in (p for p in pools if p.advertised()):
        mine = pool_nodes(nodes, pool.name)
        wanted = ", ".join(f"{n} {r}" for r, n in pool.advertised().items())
        if not mine:
            findings.append(Finding("gpus", pool.name, "warn", f"pool {pool.name} is at 0 nodes, so its GPUs can't be "
                                    "checked; --scale-up brings one node up to check it"))
            continue
        for node in mine:
            problem = node_check(node, pool)
            findings.append(Finding("gpus", pool.name, "fail", f"pool {pool.name}: {problem}") if problem else
                            Finding("gpus", pool.name, "ok", f"pool {pool.name}: node {name_of(node)} advertises "
                                    f"{wanted}"))
    return findings


def _selector_matches(selector: Obj, labels: Mapping[str, str]) -> bool:
    wanted = mapping(selector.get("matchLabels"))
    return bool(wanted) and all(labels.get(k) == v for k, v in wanted.items())


def plugin_findings(plugins: Sequence[Obj], pods: Sequence[Obj], pools: Sequence[contract.PoolContract],
                    nodes: Sequence[Obj], described: str) -> list[Finding]:
    """The device plugin (`plugins`: its DaemonSets) has a Ready pod on every GPU node."""
    if not plugins:
        return [Finding("device-plugin", described, "fail", f"{described} is not in the cluster: GPU nodes "
                        "advertise no GPUs without it")]
    selectors = [mapping(mapping(ds.get("spec")).get("selector")) for ds in plugins]
    served = {str(mapping(p.get("spec")).get("nodeName")) for p in pods
              if any(_selector_matches(s, labels_of(p)) for s in selectors)
              and mapping(p.get("status")).get("phase") == "Running"}
    findings = []
    for pool in (p for p in pools if p.advertised()):
        for node in pool_nodes(nodes, pool.name):
            name = name_of(node)
            findings.append(Finding("device-plugin", name, "ok", f"{described} runs on node {name} (pool {pool.name})")
                            if name in served else
                            Finding("device-plugin", name, "fail", f"{described} has no running pod on node {name} "
                                    f"(pool {pool.name})", "kubectl -n kube-system describe daemonset "
                                    f"{name_of(plugins[0])}"))
    return findings


def toleration_findings(daemonsets: Mapping[str, Obj | None], pools: Sequence[contract.PoolContract]) -> list[Finding]:
    """Every DaemonSet the stack deploys tolerates every GPU pool's blocking taints."""
    findings = []
    gpu_pools = [p for p in pools if p.advertised()]
    for described, daemonset in daemonsets.items():
        if daemonset is None:
            findings.append(Finding("tolerations", described, "fail", f"{described} is not in the cluster"))
            continue
        tolerations = [Toleration.from_k8s(mapping(t)) for t in
                       items(mapping(mapping(mapping(daemonset.get("spec")).get("template")).get("spec"))
                             .get("tolerations"))]
        lacking = [(pool.name, str(taint)) for pool in gpu_pools for taint in pool.taints
                   if taint.effect in BLOCKING and not any(t.tolerates(taint) for t in tolerations)]
        if lacking:
            findings += [Finding("tolerations", described, "fail", f"{described} doesn't tolerate {taint} of pool "
                                 f"{pool}: it can't run there") for pool, taint in lacking]
        else:
            findings.append(Finding("tolerations", described, "ok", f"{described} tolerates every GPU pool's taints"))
    return findings


def kubeflow_findings(deployments: Sequence[Obj], pods: Sequence[Obj], nodes: Sequence[Obj],
                      pools: Sequence[contract.PoolContract], namespace: str) -> list[Finding]:
    """Each of Kubeflow's deployments is ready, with its pods on the platform pool."""
    if not deployments:
        return [Finding("kubeflow", namespace, "fail", f"no deployments in namespace {namespace}: Kubeflow Pipelines "
                        "isn't installed")]
    platform = {p.name for p in pools if p.role == "platform"}
    pool_of = {name_of(n): labels_of(n).get(contract.POOL_LABEL) for n in nodes}
    findings = []
    for deployment in deployments:
        name = name_of(deployment)
        wanted = int(mapping(deployment.get("spec")).get("replicas", 1) or 0)
        ready = int(mapping(deployment.get("status")).get("readyReplicas") or 0)
        selector = mapping(mapping(deployment.get("spec")).get("selector"))
        elsewhere = sorted({str(pool_of.get(str(mapping(p.get("spec")).get("nodeName")))) for p in pods
                            if _selector_matches(selector, labels_of(p)) and mapping(p.get("spec")).get("nodeName")
                            and pool_of.get(str(mapping(p.get("spec")).get("nodeName"))) not in platform})
        if ready < wanted:
            findings.append(Finding("kubeflow", name, "fail", f"deployment {namespace}/{name}: {ready}/{wanted} ready",
                                    f"kubectl -n {namespace} describe deployment {name}"))
        elif elsewhere and platform:
            findings.append(Finding("kubeflow", name, "fail", f"deployment {namespace}/{name} runs on pool(s) "
                                    f"{', '.join(elsewhere)}, not the platform pool {', '.join(sorted(platform))}"))
        else:
            findings.append(Finding("kubeflow", name, "ok", f"deployment {namespace}/{name}: {ready}/{wanted} ready"))
    return findings


def presence_findings(expected: Mapping[ObjectRef, bool]) -> list[Finding]:
    """The objects the stack applies itself exist: the autoscaler's fallback configuration (AKS's priority
    expander ConfigMap, GKE's ComputeClasses) is among them."""
    return [Finding("objects", str(ref), "ok", f"{ref} is present") if found else
            Finding("objects", str(ref), "fail", f"{ref}, which the stack applies, is missing", "pulumi up")
            for ref, found in expected.items()]


def applied_objects(registrations: Iterable[tuple[str, Mapping[str, Any]]]) -> list[ObjectRef]:
    """The Kubernetes objects a stack registers one by one (type token, inputs), DaemonSets aside (checked
    for their tolerations) and kustomize's rendered ones aside (Kubeflow, checked by its deployments)."""
    refs = []
    for token, inputs in registrations:
        if not token.startswith("kubernetes:") or token.startswith(("kubernetes:kustomize", "kubernetes:helm")):
            continue
        if token.startswith("kubernetes:apps/v1:DaemonSet") or token.count(":") != 2:
            continue
        metadata = mapping(inputs.get("metadata"))
        api_version = str(inputs.get("apiVersion") or "")
        kind = str(inputs.get("kind") or "")
        if api_version and kind and metadata.get("name"):
            refs.append(ObjectRef(api_version, kind, str(metadata["name"]),
                                  str(metadata["namespace"]) if metadata.get("namespace") else None))
    return refs


def _probe_spec(pool: contract.PoolContract, lifetime_s: int, tolerate: Sequence[str] = ()) -> dict[str, Any]:
    """The probe's pod spec: the pool's label, its taints and `tolerate` (keys, NoSchedule) tolerated, one of
    what the pool advertises asked for, and a deadline after which Kubernetes ends it."""
    resource = next(iter(pool.advertised()), contract.GPU_RESOURCE)
    return {
        "restartPolicy": "Never", "terminationGracePeriodSeconds": 0, "activeDeadlineSeconds": lifetime_s,
        "nodeSelector": {contract.POOL_LABEL: pool.name},
        "tolerations": [*(Toleration.for_taint(t).to_k8s() for t in pool.taints),
                        *({"key": key, "operator": "Exists", "effect": "NoSchedule"} for key in tolerate)],
        "containers": [{"name": "probe", "image": PROBE_IMAGE,
                        "resources": {"limits": {resource: "1"}, "requests": {"cpu": "10m", "memory": "16Mi"}}}],
    }


def probe_pod(pool: contract.PoolContract, name: str, lifetime_s: int) -> dict[str, Any]:
    """A pod that brings one node of `pool` up: it selects the pool by the contract's pool label, tolerates
    the pool's taints and asks for one of what the pool advertises. Kubernetes ends it after `lifetime_s`
    even if verify never deletes it (a cancelled job), so it can't hold a GPU node up for good."""
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": dict(PROBE_LABELS)},
            "spec": _probe_spec(pool, lifetime_s)}


#: The labels of everything verify creates to probe a pool.
PROBE_LABELS = {"app.kubernetes.io/name": "spotkube-verify-probe"}
#: The cluster autoscaler's ProvisioningRequest API and the annotations of a pod that consumes one
#: (kubernetes/autoscaler `cluster-autoscaler/apis/provisioningrequest/autoscaling.x-k8s.io/v1`).
PROVISIONING_API = "autoscaling.x-k8s.io/v1"
CONSUME_ANNOTATION = "autoscaling.x-k8s.io/consume-provisioning-request"
CLASS_ANNOTATION = "autoscaling.x-k8s.io/provisioning-class-name"


@record
class Provisioning:
    """How a pool's nodes are asked for when they come only through provisioning requests: the request's
    class (GKE: `queued-provisioning.gke.io`) and the taint key its nodes carry (GKE's `gke-queued`)."""

    class_name: str
    taint_key: str | None = None


def probe_template(pool: contract.PoolContract, name: str, lifetime_s: int, provisioning: Provisioning) -> Obj:
    """The PodTemplate a ProvisioningRequest names: the probe pod's spec, which the consuming pod repeats
    (the autoscaler provisions for the template, the scheduler places the pod)."""
    tolerate = (provisioning.taint_key,) if provisioning.taint_key else ()
    return {"apiVersion": "v1", "kind": "PodTemplate", "metadata": {"name": name, "labels": dict(PROBE_LABELS)},
            "template": {"metadata": {"labels": dict(PROBE_LABELS)},
                         "spec": _probe_spec(pool, lifetime_s, tolerate)}}


def provisioning_request(name: str, provisioning: Provisioning) -> Obj:
    """A ProvisioningRequest for one node: one pod of the template of the same name."""
    return {"apiVersion": PROVISIONING_API, "kind": "ProvisioningRequest",
            "metadata": {"name": name, "labels": dict(PROBE_LABELS)},
            "spec": {"provisioningClassName": provisioning.class_name,
                     "podSets": [{"count": 1, "podTemplateRef": {"name": name}}]}}


def consuming_probe_pod(pool: contract.PoolContract, name: str, lifetime_s: int, provisioning: Provisioning) -> Obj:
    """The probe pod that lands on the node the request `name` provisioned: the template's spec, with the
    annotations that tell the autoscaler it consumes that request."""
    template = probe_template(pool, name, lifetime_s, provisioning)
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "labels": dict(PROBE_LABELS),
                         "annotations": {CONSUME_ANNOTATION: name, CLASS_ANNOTATION: provisioning.class_name}},
            "spec": template["template"]["spec"]}


def request_state(request: Obj) -> tuple[str, str]:
    """Where a ProvisioningRequest stands, from its conditions: ("provisioned" | "failed" | "waiting", what
    its latest condition says). `Failed`, `CapacityRevoked` and `BookingExpired` end it."""
    conditions = {str(c.get("type")): mapping(c) for c in items(mapping(request.get("status")).get("conditions"))}

    def said(condition: Obj) -> str:
        return f"{condition.get('type')}: {condition.get('reason') or ''} {condition.get('message') or ''}".strip()

    for ended in ("Failed", "CapacityRevoked", "BookingExpired"):
        if conditions.get(ended, {}).get("status") == "True":
            return "failed", said(conditions[ended])
    if conditions.get("Provisioned", {}).get("status") == "True":
        return "provisioned", said(conditions["Provisioned"])
    latest = max(conditions.values(), key=lambda c: str(c.get("lastTransitionTime") or ""), default=None)
    return "waiting", said(latest) if latest else "no condition yet"
