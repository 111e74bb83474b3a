"""The training runtimes spotkube registers: one Kubeflow Trainer ClusterTrainingRuntime per GPU type.

A TrainJob names a runtime and Trainer builds a JobSet from its template, one replicated job `node` of
`numNodes` pods. Everything about spot lives in the runtime, from the scheduling contract:

- **Where the workers land**: the contract's placement for the GPU type (`contract.spot_gpu`), with the
  type's on-demand or flex-start pool accepted where the stack has one, and any taint of its own pools.
- **Time to save**: `terminationGracePeriodSeconds` is the cloud's notice between eviction and kill (30 s
  on AKS, 15 s on GKE), so a script that saves on SIGTERM is killed neither early nor long after its node.
- **A disruption is not a failure**: the Job's `podFailurePolicy` fails it at once (reason
  `PodFailurePolicy`) when a pod has the `DisruptionTarget` condition, and the JobSet's first rule
  restarts it without counting (`RestartJobSetAndIgnoreMaxRestarts`, as JobSet's "host maintenance
  event" example does); any other failure (`backoffLimit: 0`) spends `failurePolicy.maxRestarts`.
  Every worker restarts from the last checkpoint either way: DDP needs all of them.

Sources, for every field: kubernetes-sigs/jobset v0.11.1 `api/jobset/v1alpha2/jobset_types.go`
(`FailurePolicy{maxRestarts, restartStrategy, rules}`, `FailurePolicyRule{name, action,
onJobFailureReasons, onJobFailureMessagePatterns, targetReplicatedJobs}`, the three actions) and
`site/static/examples/failure-policy/host-maintenance-event-model.yaml`; kubeflow/trainer v2.2.1
`manifests/base/crds/trainer.kubeflow.org_clustertrainingruntimes.yaml` (`spec.mlPolicy{numNodes,
torch}`, `spec.template.spec` a JobSetSpec) and `manifests/base/runtimes/torch_distributed.yaml` (the
`node` job and container, the ancestor label); Kubernetes' Job API (`podFailurePolicy.rules[]{action,
onPodConditions[]{type, status}}`, which needs `restartPolicy: Never`) and "Pod disruption conditions"
(kubernetes.io/docs/concepts/workloads/pods/disruptions/#pod-disruption-conditions).
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from spotkube.platform import contract
from spotkube.platform.addons import trainer_reference
from spotkube.platform.contract import Capacity, PoolContract

KIND = "ClusterTrainingRuntime"
#: The prefix of every runtime spotkube registers; the rest is the GPU type (`spotkube-nvidia-l4`).
NAME_PREFIX = "spotkube-"
#: The label Trainer's shipped runtimes carry to say which framework they run.
FRAMEWORK_LABEL = "trainer.kubeflow.org/framework"
#: The image a worker runs when the TrainJob names none: the one Trainer v2.2.1's torch runtime ships.
DEFAULT_IMAGE = "pytorch/pytorch:2.10.0-cuda12.8-cudnn9-runtime"
#: The Job failure reason a `podFailurePolicy` FailJob rule gives (Kubernetes' `batch/v1` JobReasonPodFailurePolicy).
POD_FAILURE_POLICY_REASON = "PodFailurePolicy"
#: The pod condition Kubernetes sets on a pod a node took away.
DISRUPTION_CONDITION = "DisruptionTarget"
DISRUPTION_RULE = "disruption"
FAILURE_RULE = "failure"
RESTART_FREE = "RestartJobSetAndIgnoreMaxRestarts"
RESTART_COUNTED = "RestartJobSet"


class PlannedGpuPool(Protocol):
    """What a runtime reads of a planned GPU pool (`plan.PoolPlan`)."""

    @property
    def capacity(self) -> Capacity: ...
    @property
    def contract(self) -> PoolContract: ...


def runtime_name(gpu_type: str) -> str:
    return f"{NAME_PREFIX}{gpu_type}"


def gpu_types(gpu_pools: Sequence[PlannedGpuPool]) -> list[str]:
    """The GPU types a runtime is made for: those of pools that give whole GPUs, sorted."""
    return sorted({p.contract.accelerator for p in gpu_pools if p.contract.accelerator and p.contract.sharing is None})


def placement(gpu_type: str, gpu_pools: Sequence[PlannedGpuPool]) -> contract.Placement:
    """The contract's placement of a worker: the type's interruptible pools, and its on-demand or
    flex-start pools as a fallback where the stack has one."""
    of_type = [p for p in gpu_pools if p.contract.accelerator == gpu_type and p.contract.sharing is None]
    fallback = any(p.capacity not in contract.INTERRUPTIBLE for p in of_type)
    where = contract.spot_gpu(gpu_type, fallback_to_on_demand=fallback)
    # A team's pool may carry taints of its own (`AksGpuNodePool`'s `taints`): its workers tolerate them too.
    extra = [contract.Toleration.for_taint(taint) for pool in of_type for taint in pool.contract.taints
             if not any(t.tolerates(taint) for t in where.tolerations)]
    return dataclasses.replace(where, tolerations=(*where.tolerations, *dict.fromkeys(extra)))


def failure_policy(failure_restarts: int) -> dict[str, Any]:
    """The JobSet failure policy: disruptions restart for free, other failures spend `failure_restarts`."""
    return {
        "maxRestarts": failure_restarts,
        "rules": [
            {"name": DISRUPTION_RULE, "action": RESTART_FREE, "onJobFailureReasons": [POD_FAILURE_POLICY_REASON]},
            {"name": FAILURE_RULE, "action": RESTART_COUNTED},
        ],
    }


def runtime(gpu_type: str, gpu_pools: Sequence[PlannedGpuPool], *, grace_seconds: int,
            failure_restarts: int) -> dict[str, Any]:
    """The ClusterTrainingRuntime of one GPU type (a torch runtime, one node by default: a TrainJob's
    `trainer.numNodes` and `resourcesPerNode` say how many workers and GPUs)."""
    where = placement(gpu_type, gpu_pools)
    pod_spec: dict[str, Any] = {
        "restartPolicy": "Never",
        "terminationGracePeriodSeconds": grace_seconds,
        "tolerations": where.tolerations_k8s(),
        "affinity": where.affinity_k8s(),
        "containers": [{"name": trainer_reference.TRAINER_CONTAINER, "image": DEFAULT_IMAGE}],
    }
    if where.node_selector:
        pod_spec["nodeSelector"] = dict(where.node_selector)
    job = {
        "name": trainer_reference.TRAINER_JOB,
        "template": {
            "metadata": {"labels": {trainer_reference.ANCESTOR_LABEL: trainer_reference.ANCESTOR_TRAINER}},
            "spec": {
                "backoffLimit": 0,
                "podFailurePolicy": {"rules": [{"action": "FailJob", "onPodConditions": [
                    {"type": DISRUPTION_CONDITION, "status": "True"}]}]},
                "template": {"spec": pod_spec},
            },
        },
    }
    return {
        "apiVersion": trainer_reference.API_VERSION,
        "kind": KIND,
        "metadata": {"name": runtime_name(gpu_type), "labels": {FRAMEWORK_LABEL: "torch"}},
        "spec": {
            "mlPolicy": {"numNodes": 1, "torch": {}},
            "template": {"spec": {"failurePolicy": failure_policy(failure_restarts), "replicatedJobs": [job]}},
        },
    }


def runtimes(gpu_pools: Sequence[PlannedGpuPool], *, grace_seconds: int, failure_restarts: int) -> list[dict[str, Any]]:
    """One runtime per GPU type of the pools, in the order of the types' names."""
    return [runtime(t, gpu_pools, grace_seconds=grace_seconds, failure_restarts=failure_restarts)
            for t in gpu_types(gpu_pools)]


def with_worker_env(runtime_object: Mapping[str, Any], env: Mapping[str, Any]) -> dict[str, Any]:
    """The runtime with `env` in its workers' container, values as given (a Pulumi Output is fine). A TrainJob's
    own `trainer.env` is upserted over it by name (Trainer v2.2.1 `pkg/runtime/framework/plugins/jobset/
    builder.go`, `apply.UpsertEnvVars`), so a job can still set any of these itself."""
    if not env:
        return dict(runtime_object)
    changed = copy.deepcopy(dict(runtime_object))
    for container in worker_pod_spec(changed).get("containers") or ():
        if container.get("name") == trainer_reference.TRAINER_CONTAINER:
            container["env"] = [{"name": name, "value": value} for name, value in env.items()]
    return changed


def _jobset_spec(runtime_object: Mapping[str, Any]) -> Mapping[str, Any]:
    return ((runtime_object.get("spec") or {}).get("template") or {}).get("spec") or {}


def _node_job_spec(runtime_object: Mapping[str, Any]) -> Mapping[str, Any]:
    """The Job spec of a runtime's `node` job, as registered; empty when it has none."""
    for job in _jobset_spec(runtime_object).get("replicatedJobs") or ():
        if job.get("name") == trainer_reference.TRAINER_JOB:
            return (job.get("template") or {}).get("spec") or {}
    return {}


def worker_pod_spec(runtime_object: Mapping[str, Any]) -> dict[str, Any]:
    """The pod spec of a runtime's workers (of its `node` job), as registered; empty when it has none."""
    return dict((_node_job_spec(runtime_object).get("template") or {}).get("spec") or {})


def evictions_restart_for_free(runtime_object: Mapping[str, Any]) -> bool:
    """Whether a worker a node took away restarts the JobSet without counting: the Job fails on the
    `DisruptionTarget` condition, and a JobSet rule answers that reason with `RestartJobSetAndIgnoreMaxRestarts`
    before any other rule can match it."""
    pod_rules = (_node_job_spec(runtime_object).get("podFailurePolicy") or {}).get("rules") or ()
    conditions = [condition.get("type") for rule in pod_rules if rule.get("action") == "FailJob"
                  for condition in rule.get("onPodConditions") or ()]
    for rule in (_jobset_spec(runtime_object).get("failurePolicy") or {}).get("rules") or ():
        reasons = rule.get("onJobFailureReasons") or ()
        if not reasons or POD_FAILURE_POLICY_REASON in reasons:
            return rule.get("action") == RESTART_FREE and DISRUPTION_CONDITION in conditions
    return False


def failure_restarts(runtime_object: Mapping[str, Any]) -> int:
    """How many restarts the JobSet's failures may spend (`failurePolicy.maxRestarts`, 0 when unset)."""
    return int((_jobset_spec(runtime_object).get("failurePolicy") or {}).get("maxRestarts") or 0)
