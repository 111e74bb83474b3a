"""The workload side of the scheduling contract: tolerations, node affinity and the placements.

A `Placement` is the scheduling part of a pod spec. Every placement spotkube offers is built from the
pool side's labels and taints (`contract.labels`), so a pool and the workloads aimed at it can't drift
apart, and a pipeline compiled against the neutral labels lands on every cloud alike. Pure: no Pulumi.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import field
from typing import Any, Literal

from spotkube.platform.contract.labels import (
    ACCELERATOR_LABEL,
    CAPACITY_LABEL,
    COMPUTE_CLASS_LABEL,
    GPU_CLIENTS_LABEL,
    GPU_PARTITION_LABEL,
    GPU_RESOURCE,
    GPU_SHARING_LABEL,
    GPU_TAINT,
    INTERRUPTIBLE,
    NO_ACCELERATOR,
    POOL_LABEL,
    ROLE_LABEL,
    MigStrategy,
    SharingMode,
    Taint,
    compute_class,
    interruptible_taints,
    is_gpu_resource,
    mig_resource,
)
from spotkube.platform.records import record


@record
class Toleration:
    """A pod toleration with the Kubernetes defaults: operator Equal, any effect."""

    key: str = ""
    operator: Literal["Equal", "Exists"] = "Equal"
    value: str = ""
    effect: str = ""

    def tolerates(self, taint: Taint) -> bool:
        """The Kubernetes rule: an empty key with Exists matches every taint; an empty effect
        matches every effect; Equal compares values, Exists ignores them."""
        if self.effect and self.effect != taint.effect:
            return False
        if not self.key:
            return self.operator == "Exists"
        if self.key != taint.key:
            return False
        return self.operator == "Exists" or self.value == taint.value

    def to_k8s(self) -> dict[str, str]:
        out = {"key": self.key, "operator": self.operator}
        if self.operator == "Equal":
            out["value"] = self.value
        if self.effect:
            out["effect"] = self.effect
        return {k: v for k, v in out.items() if v or k == "operator"}

    @staticmethod
    def from_k8s(data: Mapping[str, Any]) -> Toleration:
        return Toleration(
            key=data.get("key") or "",
            operator=data.get("operator") or "Equal",
            value=str(data.get("value") or ""),
            effect=data.get("effect") or "",
        )

    @staticmethod
    def for_taint(taint: Taint) -> Toleration:
        return Toleration(taint.key, "Equal", taint.value, taint.effect)


@record
class Requirement:
    """One node selector requirement (`matchExpressions` item)."""

    key: str
    operator: Literal["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        present = self.key in labels
        value = labels.get(self.key, "")
        if self.operator == "In":
            return present and value in self.values
        if self.operator == "NotIn":
            return not present or value not in self.values
        if self.operator == "Exists":
            return present
        if self.operator == "DoesNotExist":
            return not present
        if not present or not self.values:
            return False
        try:
            node_number, bound = int(value), int(self.values[0])
        except ValueError:
            return False
        return node_number > bound if self.operator == "Gt" else node_number < bound

    def __str__(self) -> str:
        if self.operator in ("Exists", "DoesNotExist"):
            return f"{self.key} {self.operator}"
        return f"{self.key} {self.operator} [{', '.join(self.values)}]"

    def to_k8s(self) -> dict[str, Any]:
        out: dict[str, Any] = {"key": self.key, "operator": self.operator}
        if self.values:
            out["values"] = list(self.values)
        return out

    @staticmethod
    def from_k8s(data: Mapping[str, Any]) -> Requirement:
        return Requirement(data["key"], data["operator"], tuple(str(v) for v in data.get("values") or ()))


#: A node selector term: requirements that must all hold (an AND); terms are OR'ed.
Term = tuple[Requirement, ...]


@record
class Placement:
    """The scheduling-relevant part of a pod spec, read from or written into Kubernetes form.

    `unsupported` records constraints the matcher cannot judge from pool labels (such as
    `matchFields` on node names); a pod with any of them is reported as landing nowhere rather than
    guessed at. `required` is None when the pod has no required node affinity; an empty tuple is a
    required affinity without terms, which Kubernetes matches to no node.
    """

    tolerations: tuple[Toleration, ...] = ()
    node_selector: Mapping[str, str] = field(default_factory=dict)
    required: tuple[Term, ...] | None = None
    preferred: tuple[tuple[int, Term], ...] = ()
    gpus: int = 0
    unsupported: tuple[str, ...] = ()
    #: The resource the GPUs are requested as: `nvidia.com/gpu`, or a MIG profile's own resource.
    gpu_resource: str = GPU_RESOURCE

    def affinity_k8s(self) -> dict[str, Any]:
        """`spec.affinity` for a pod template (empty when there is nothing to say)."""
        node_affinity: dict[str, Any] = {}
        if self.required is not None:
            node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {
                "nodeSelectorTerms": [
                    {"matchExpressions": [r.to_k8s() for r in term]} for term in self.required
                ]
            }
        if self.preferred:
            node_affinity["preferredDuringSchedulingIgnoredDuringExecution"] = [
                {"weight": weight, "preference": {"matchExpressions": [r.to_k8s() for r in term]}}
                for weight, term in self.preferred
            ]
        return {"nodeAffinity": node_affinity} if node_affinity else {}

    def tolerations_k8s(self) -> list[dict[str, str]]:
        return [t.to_k8s() for t in self.tolerations]

    @staticmethod
    def from_pod_spec(spec: Mapping[str, Any]) -> Placement:
        """Read a Kubernetes pod spec (camelCase, as applied) into a Placement."""
        node_affinity = (spec.get("affinity") or {}).get("nodeAffinity") or {}
        required_block = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
        unsupported: list[str] = []
        required: list[Term] = []
        for term in (required_block or {}).get("nodeSelectorTerms") or ():
            if term.get("matchFields"):
                unsupported.append("a required node affinity term uses matchFields (node names)")
            required.append(tuple(Requirement.from_k8s(e) for e in term.get("matchExpressions") or ()))
        preferred = tuple(
            (int(p.get("weight", 1)), tuple(
                Requirement.from_k8s(e) for e in (p.get("preference") or {}).get("matchExpressions") or ()
            ))
            for p in node_affinity.get("preferredDuringSchedulingIgnoredDuringExecution") or ()
        )
        gpus, gpu_resource = 0, GPU_RESOURCE
        for container in spec.get("containers") or ():
            resources = container.get("resources") or {}
            asked = {**(resources.get("requests") or {}), **(resources.get("limits") or {})}
            for name, amount in asked.items():
                if is_gpu_resource(str(name)) and int(amount or 0) > gpus:
                    gpus, gpu_resource = int(amount), str(name)
        return Placement(
            tolerations=tuple(Toleration.from_k8s(t) for t in spec.get("tolerations") or ()),
            node_selector=dict(spec.get("nodeSelector") or {}),
            required=None if required_block is None else tuple(required),
            preferred=preferred,
            gpus=gpus,
            unsupported=tuple(unsupported),
            gpu_resource=gpu_resource,
        )


def tolerate_interruptible() -> tuple[Toleration, ...]:
    """Tolerations for spot and preemptible nodes of every registered cloud."""
    return tuple(Toleration.for_taint(t) for t in interruptible_taints())


#: Every spotkube GPU placement tolerates the compute class taint of GKE GPU pools, whatever the
#: class: the placement's node affinity already picks the GPU type, and on AKS, where no pool carries
#: the taint, a toleration changes nothing.
TOLERATE_COMPUTE_CLASS = Toleration(COMPUTE_CLASS_LABEL, "Exists", effect="NoSchedule")


def tolerate_gpu_pools() -> tuple[Toleration, ...]:
    """Tolerations for every spotkube GPU pool: spot and preemptible capacity of both clouds, the GPU
    taint and GKE's compute class taint."""
    return (*tolerate_interruptible(), Toleration.for_taint(GPU_TAINT), TOLERATE_COMPUTE_CLASS)


#: Keeps a workload off the system pool on both clouds, whatever the system pool's taint says (a stack
#: may turn its taint off): pipeline steps, Kubeflow and node agents of spotkube's add-ons require it.
NOT_SYSTEM = Requirement(ROLE_LABEL, "NotIn", ("system",))
#: What a GPU step that asked for whole GPUs requires: a pool that shares none.
WHOLE_GPUS = Requirement(GPU_SHARING_LABEL, "DoesNotExist")


@record
class SharedGpu:
    """A step's request for a slice of a GPU: a MIG instance of a profile, or a time-shared or MPS GPU
    (optionally with a given number of clients per GPU). `mig_strategy` says how the cluster's device
    plugin advertises MIG instances, which decides the resource the step requests."""

    mode: SharingMode
    partition: str | None = None
    clients_per_gpu: int | None = None
    mig_strategy: MigStrategy = "single"

    def requirements(self) -> Term:
        reqs = [Requirement(GPU_SHARING_LABEL, "In", (self.mode,))]
        if self.partition:
            reqs.append(Requirement(GPU_PARTITION_LABEL, "In", (self.partition,)))
        if self.clients_per_gpu:
            reqs.append(Requirement(GPU_CLIENTS_LABEL, "In", (str(self.clients_per_gpu),)))
        return tuple(reqs)

    @property
    def resource(self) -> str:
        if self.mode == "mig" and self.partition and self.mig_strategy == "mixed":
            return mig_resource(self.partition)
        return GPU_RESOURCE


def spot_gpu(
    gpu_type: str | Sequence[str] | None = None,
    *,
    pool: str | None = None,
    gpus: int = 1,
    fallback_to_on_demand: bool = False,
    spot_preference_weight: int = 100,
    shared: SharedGpu | None = None,
) -> Placement:
    """Run on an interruptible GPU pool: by GPU type, or by pool name.

    With `fallback_to_on_demand`, spot is preferred and an on-demand GPU pool of the same type is
    accepted when spot capacity is gone; otherwise spot or preemptible capacity is required.

    The fallback also selects the GPU type's compute class with a nodeSelector, the one way GKE
    lets a pod select a class: GKE then tries the class's spot pools first and grows an on-demand
    pool only when spot can't be had. Every spotkube GPU pool carries the class label on both
    clouds, so the same pod spec still lands on AKS, where the priority expander orders the pools.

    Without `shared` the step gets whole GPUs, on pools that share none; with it, `gpus` slices of a
    pool that shares its GPUs that way (docs/gpu-sharing.md). Several GPU types (a sequence) accept
    any of them, for a step that runs on whichever a stack has; the fallback, which selects one GPU
    type's compute class, takes one.
    """
    if (gpu_type is None) == (pool is None):
        raise ValueError("name exactly one target: a GPU type or a pool")
    types = (gpu_type,) if isinstance(gpu_type, str) else tuple(gpu_type or ())
    if gpu_type is not None and not types:
        raise ValueError("name at least one GPU type")
    if fallback_to_on_demand and len(types) > 1:
        raise ValueError("fallback_to_on_demand selects one GPU type's compute class; name one GPU type")
    target = (Requirement(ACCELERATOR_LABEL, "In", types) if types
              else Requirement(POOL_LABEL, "In", (pool,)))  # type: ignore[arg-type]
    spot = Requirement(CAPACITY_LABEL, "In", INTERRUPTIBLE)
    sharing: Term = shared.requirements() if shared else (WHOLE_GPUS,)
    selector: dict[str, str] = {}
    if fallback_to_on_demand:
        required: Term = (target, Requirement(ACCELERATOR_LABEL, "NotIn", (NO_ACCELERATOR,)), *sharing)
        preferred: tuple[tuple[int, Term], ...] = ((spot_preference_weight, (spot,)),)
        if types:
            selector[COMPUTE_CLASS_LABEL] = compute_class(types[0])
    else:
        required = (target, spot, Requirement(ACCELERATOR_LABEL, "NotIn", (NO_ACCELERATOR,)), *sharing)
        preferred = ()
    return Placement(
        tolerations=tolerate_gpu_pools(),
        node_selector=selector,
        required=(required,),
        preferred=preferred,
        gpus=gpus,
        gpu_resource=shared.resource if shared else GPU_RESOURCE,
    )


def spot_cpu(
    *, pool: str | None = None, fallback_to_on_demand: bool = True, spot_preference_weight: int = 100
) -> Placement:
    """Run a CPU step on interruptible nodes without GPUs (preprocessing, downloads); `pool` pins
    it to one named pool, such as a stack's spot CPU pool. Never the system pool, even untainted."""
    no_gpu: Term = (Requirement(ACCELERATOR_LABEL, "In", (NO_ACCELERATOR,)), NOT_SYSTEM)
    if pool is not None:
        no_gpu = (*no_gpu, Requirement(POOL_LABEL, "In", (pool,)))
    spot = Requirement(CAPACITY_LABEL, "In", INTERRUPTIBLE)
    if fallback_to_on_demand:
        return Placement(tolerations=tolerate_interruptible(), required=(no_gpu,),
                         preferred=((spot_preference_weight, (spot,)),))
    return Placement(tolerations=tolerate_interruptible(), required=((*no_gpu, spot),))


def on_demand_only() -> Placement:
    """Stay on on-demand nodes without GPUs and off the system pool: steps that must not be
    interrupted, notebooks, datastores, serving."""
    return Placement(required=((
        Requirement(CAPACITY_LABEL, "In", ("on-demand",)),
        Requirement(ACCELERATOR_LABEL, "In", (NO_ACCELERATOR,)),
        NOT_SYSTEM,
    ),))


def pipeline_pod_default() -> Placement:
    """What every pipeline pod gets from Argo's workflow defaults unless its own step says where it
    goes: stay off the system pool. KFP's driver pods and steps without a placement would otherwise
    land on an untainted system pool (a stack may turn its taint off); a step with its own required
    node affinity replaces this one, which is why every spotkube placement says it too."""
    return Placement(required=((NOT_SYSTEM,),))


def on_platform_pool() -> Placement:
    """Only the platform pool: the on-demand, GPU-free pool kept for platform control planes such as
    Kubeflow Pipelines. Selecting the role (not just "on-demand, no GPU") keeps them off the system
    pool too, which on GKE is untainted and would otherwise attract them."""
    return Placement(required=((
        Requirement(ROLE_LABEL, "In", ("platform",)),
        Requirement(CAPACITY_LABEL, "In", ("on-demand",)),
        Requirement(ACCELERATOR_LABEL, "In", (NO_ACCELERATOR,)),
    ),))


def on_platform_pool_of(labels: Mapping[str, str]) -> Placement:
    """The platform pool, or on a cluster spotkube didn't make, the pool these node labels pick (the
    team's own untainted on-demand pool); no labels: `on_platform_pool`."""
    if not labels:
        return on_platform_pool()
    return Placement(required=(tuple(Requirement(key, "In", (value,)) for key, value in sorted(labels.items())),))


def constrain_workload(workload: Mapping[str, Any], placement: Placement) -> dict[str, Any]:
    """A Deployment or StatefulSet whose pods also obey `placement` (`constrain_pod_spec` on its template)."""
    spec = workload.get("spec") or {}
    template = spec.get("template") or {}
    pod_spec = constrain_pod_spec(template.get("spec") or {}, placement)
    return {**workload, "spec": {**spec, "template": {**template, "spec": pod_spec}}}


def on_any_gpu_pool() -> Placement:
    """Every GPU pool whatever its capacity, and no other: node agents such as the device plugin."""
    return Placement(
        tolerations=tolerate_gpu_pools(),
        required=((Requirement(ACCELERATOR_LABEL, "NotIn", (NO_ACCELERATOR,)),
                   Requirement(ACCELERATOR_LABEL, "Exists")),),
    )


def constrain_pod_spec(pod_spec: Mapping[str, Any], placement: Placement) -> dict[str, Any]:
    """A copy of a Kubernetes pod spec that also obeys `placement`, keeping what it already says.

    Required node affinity is ANDed in: every existing nodeSelectorTerm gains the placement's
    requirements, because Kubernetes ORs terms, so appending a term would widen where the pod may
    go instead of narrowing it. Tolerations and preferred terms are added to, the nodeSelector is
    merged, and everything else (pod affinity, anti-affinity) stays as it was.
    """
    spec = {**pod_spec}
    affinity = {**(spec.get("affinity") or {})}
    node_affinity = {**(affinity.get("nodeAffinity") or {})}
    if placement.required:
        block = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution") or {}
        terms = []
        for term in block.get("nodeSelectorTerms") or [{}]:
            for extra in placement.required:
                expressions = list(term.get("matchExpressions") or ())
                expressions += [r.to_k8s() for r in extra if r.to_k8s() not in expressions]
                terms.append({**term, "matchExpressions": expressions})
        node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {**block, "nodeSelectorTerms": terms}
    if placement.preferred:
        node_affinity["preferredDuringSchedulingIgnoredDuringExecution"] = [
            *(node_affinity.get("preferredDuringSchedulingIgnoredDuringExecution") or ()),
            *placement.affinity_k8s()["nodeAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"],
        ]
    if node_affinity:
        spec["affinity"] = {**affinity, "nodeAffinity": node_affinity}
    tolerations = list(spec.get("tolerations") or ())
    tolerations += [t for t in placement.tolerations_k8s() if t not in tolerations]
    if tolerations:
        spec["tolerations"] = tolerations
    if placement.node_selector:
        spec["nodeSelector"] = {**(spec.get("nodeSelector") or {}), **placement.node_selector}
    return spec
