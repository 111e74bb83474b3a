"""Argo retries that tell an eviction from a bug: the `retryStrategy` spotkube's workflow defaults carry.

Argo Workflows v4.0.5 (the controller Kubeflow Pipelines 2.17.0 ships) retries a failed node when
three gates all allow it, in this order (`workflow/controller/operator.go`, `processNodeRetries`):
the retry policy (`Always` retries both Failed and Error nodes), the limit (`len(attempts) > limit`
stops), then `retryStrategy.expression`, an expr-lang boolean over the last attempt
(`buildRetryStrategyLocalScope`: `retries`, `lastRetry.status`, `lastRetry.message`,
`lastRetry.exitCode`, `lastRetry.duration`, all strings). `limit` can't depend on the reason, so the
defaults set it to the eviction limit and let the expression refuse everything that is not an
eviction once the failure budget is spent:

    lastRetry.message matches "<eviction signs>"
    || lastRetry.message != "" && (lastRetry.status == "Error" && int(retries) < <errors>
                                   || int(retries) < <failures>)

- `retries` counts the retries made so far (0 after the first attempt), evictions included: a
  failure is retried only while the step has been retried fewer than `failures` times.
- Argo's Error phase is the platform's, never the step's code (a pod that never started, an init or
  wait container that failed): it keeps the retries Kubeflow Pipelines ships for it (2), so spotkube's
  defaults never retry less than KFP's own.
- A failed DAG node carries no message (`dag.go` marks its phase only), so the `!= ""` guard keeps
  DAGs from being retried: a retried DAG would run its steps again with fresh budgets, multiplying
  them at every level of the pipeline.
- `int` is expr-lang's builtin; Argo's documented `asInt` is an alias of it
  (`util/expr/env/env.go`, `env["asInt"] = builtin.Int`).

What Argo writes into `lastRetry.message` for each way a node takes a pod away is in `EVICTION_SIGNS`,
with the upstream source of every message. Argo never reads a pod's `DisruptionTarget` condition
(`inferFailedReason` reads `pod.Status.Message`, then the container statuses), so the condition's
reasons reach the expression as what the deletion leaves behind: "pod deleted" when the pod is gone
before Argo saw it end, the main container's SIGTERM or SIGKILL exit otherwise.

Pure module: no Pulumi. docs/evictions.md explains the choices to users.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

from spotkube.platform.records import record

Phase = Literal["Failed", "Error"]
#: The policy the defaults write. It must be explicit: KFP ships `OnError`, and once a policy is set
#: Argo no longer defaults to `Always` for a strategy with an expression (`RetryPolicyActual`).
RETRY_POLICY = "Always"


@record
class EvictionSign:
    """One way a node takes a pod away, as Argo records it in the failed node's message."""

    #: A Go RE2 (and Python `re`) pattern, matched case-insensitively anywhere in the message.
    pattern: str
    #: A message exactly as Argo records it, for the docs and the tests.
    example: str
    #: The node phase Argo gives it.
    phase: Phase
    #: What takes the pod away, in words.
    cause: str
    #: Where the message is written, upstream.
    source: str


#: Every message an eviction leaves in `lastRetry.message`, in Argo v4.0.5 with the kubelet and
#: control plane of Kubernetes 1.31 and later.
EVICTION_SIGNS: tuple[EvictionSign, ...] = (
    EvictionSign(
        "imminent node shutdown",
        "Pod was terminated in response to imminent node shutdown.",
        "Failed",
        "graceful node shutdown: a spot or preemptible VM reclaimed with an ACPI soft-off; DisruptionTarget "
        "TerminationByKubelet",
        "kubernetes pkg/kubelet/nodeshutdown/nodeshutdown_manager*.go, nodeShutdownMessage; Argo "
        "operator.go inferFailedReason (pod.Status.Message)",
    ),
    EvictionSign(
        "node is shutting",
        "Pod was rejected as the node is shutting down.",
        "Failed",
        "a pod admitted while its node shuts down (and Kubernetes 1.20-1.21's 'Node is shutting, "
        "evicting pods')",
        "kubernetes pkg/kubelet/nodeshutdown/nodeshutdown_manager_linux.go, nodeShutdownNotAdmittedMessage",
    ),
    EvictionSign(
        "^pod deleted$",
        "pod deleted",
        "Error",
        "the pod vanished before Argo saw it end: Eviction API (kubectl drain, a cloud's node auto-drain on a "
        "Preempt scheduled event, upgrades, autoscaler scale-down), NoExecute taint, PodGC of a node that "
        "is gone, scheduler preemption (DisruptionTarget EvictionByEvictionAPI, DeletionByTaintManager, "
        "DeletionByPodGC, PreemptionByScheduler)",
        "argo-workflows workflow/controller/operator.go podReconciliation, markNodeError(\"pod deleted\")",
    ),
    EvictionSign(
        "^[a-z0-9-]+: error [(]exit code (137|143)[)]",
        "main: Error (exit code 143)",
        "Failed",
        "the same deletions when Argo sees the pod end first: the kubelet stops its containers with "
        "SIGTERM (143), then SIGKILL (137) when the grace period runs out (an out-of-memory kill reads "
        "'OOMKilled', not 'Error', and is not matched)",
        "argo-workflows operator.go inferFailedReason ('%s: %s (exit code %d)'); the kubelet's "
        "Terminated reason 'Error'",
    ),
    EvictionSign(
        "^pod failed: (neither main nor wait|main) container",
        "pod failed: neither main nor wait container completed successfully",
        "Failed",
        "a pod marked Failed while its containers still ran: PodGC fails the pods of a node that is gone "
        "before it deletes them (DisruptionTarget DeletionByPodGC, 'PodGC: node no longer exists')",
        "argo-workflows operator.go inferFailedReason; kubernetes pkg/controller/podgc/gc_controller.go "
        "markFailedAndDeletePodWithCondition",
    ),
    EvictionSign(
        "the node was low on resource",
        "The node was low on resource: memory. Threshold quantity: 100Mi, available: 84Mi. ",
        "Failed",
        "kubelet node-pressure eviction (reason Evicted; DisruptionTarget TerminationByKubelet). A pod that "
        "exceeds its own limit is OOMKilled or told so ('exceeds the total limit'), and is not matched",
        "kubernetes pkg/kubelet/eviction/helpers.go, nodeLowMessageFmt",
    ),
    EvictionSign(
        "the node had condition",
        "The node had condition: [DiskPressure]. ",
        "Failed",
        "kubelet eviction or admission refusal on a node under pressure",
        "kubernetes pkg/kubelet/eviction/helpers.go, nodeConditionMessageFmt",
    ),
    EvictionSign(
        "node didn't have enough resource",
        "Node didn't have enough resource: nvidia.com/gpu, requested: 1, used: 0, capacity: 0",
        "Failed",
        "the kubelet refused the pod at admission: on a GPU node that restarted, before the device "
        "plugin advertised its GPUs again (reason OutOfnvidia.com/gpu)",
        "kubernetes pkg/kubelet/lifecycle/predicate.go, InsufficientResourceError",
    ),
    EvictionSign(
        "which was running pod .* is unresponsive",
        "Node t4spot-node-0 which was running pod train-abc is unresponsive",
        "Failed",
        "a node lost (reason NodeLost), from node controllers that predate taint-based eviction",
        "kubernetes pkg/util/node/node.go, NodeUnreachablePodMessage",
    ),
)

#: The patterns as one expr-lang (Go RE2) regular expression: case-insensitive alternatives. No
#: backslash and no double quote, so the text is the same in YAML, inside an expr-lang "..." literal
#: and in Python.
EVICTION_PATTERN = "(?i)" + "|".join(f"({sign.pattern})" for sign in EVICTION_SIGNS)
_EVICTION = re.compile(EVICTION_PATTERN)


def is_eviction(message: str) -> bool:
    """Whether Argo's message for a failed attempt says a node took the pod away."""
    return bool(_EVICTION.search(message))


@record
class RetryRule:
    """How many times a step is retried, by why its last attempt failed.

    `evictions` is Argo's `limit`, the ceiling for every retry; `failures` is how many retries a step
    gets for anything else; `errors` is how many an Argo Error that is no eviction gets (what KFP ships).
    """

    evictions: int
    failures: int
    errors: int

    def expression(self) -> str:
        """The `retryStrategy.expression`, with only the arms that can be true."""
        arms = [f'lastRetry.message matches "{EVICTION_PATTERN}"']
        other = []
        if self.errors > self.failures:
            other.append(f'lastRetry.status == "Error" && int(retries) < {self.errors}')
        if self.failures > 0:
            other.append(f"int(retries) < {self.failures}")
        if other:
            arms.append(f'lastRetry.message != "" && ({" || ".join(other)})')
        return " || ".join(arms)

    def strategy(self) -> dict[str, Any]:
        """The templateDefaults `retryStrategy`. `limit` is an IntOrString that Argo's JSON schema
        types as a string, and KFP writes it as one."""
        return {"limit": str(self.evictions), "retryPolicy": RETRY_POLICY, "expression": self.expression()}

    def retried(self, phase: Phase, message: str, retries: int, limit: int | None = None) -> bool:
        """Whether Argo retries an attempt that ended so, after `retries` retries, under `limit` (the
        step's own, from set_retry, or the defaults'): the three gates of `processNodeRetries`."""
        if retries + 1 > (self.evictions if limit is None else limit):
            return False
        if is_eviction(message):
            return True
        if not message:
            return False
        return (phase == "Error" and retries < self.errors) or retries < self.failures

    def survives(self, limit: int | None = None) -> tuple[int, int]:
        """(evictions, failures) a step survives under `limit` (None: the defaults' own): failures
        count only before the first eviction, since `retries` counts every retry."""
        ceiling = self.evictions if limit is None else limit
        return ceiling, min(self.failures, ceiling)


def merged_strategy(template: Mapping[str, Any] | None, defaults: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A template's retryStrategy once Argo has merged the templateDefaults into it.

    `mergedTemplateDefaultsInto` (operator.go) runs `strategicpatch.StrategicMergePatch(defaults,
    template, wfv1.Template{})`: the template is the patch, so every field it sets wins and every field
    it leaves out comes from the defaults; RetryStrategy and Backoff carry no patch strategy, so they
    merge field by field. KFP's `set_retry` compiles to `{limit, backoff}`, so such a step keeps its
    limit and backoff and takes the defaults' policy and expression.
    """
    if template is None and defaults is None:
        return None
    merged = {**(defaults or {})}
    for key, value in (template or {}).items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = {**merged[key], **value}
        else:
            merged[key] = value
    return merged


def limit_of(strategy: Mapping[str, Any] | None) -> int | None:
    """A strategy's `limit` as a number; None when there is none or it is not a whole number."""
    if strategy is None or "limit" not in strategy or isinstance(strategy["limit"], bool):
        return None
    try:
        return int(str(strategy["limit"]))
    except ValueError:
        return None
