"""The retry rule spotkube's Argo workflow defaults carry: each real message is retried or not as intended.

Every case below is a message exactly as Argo v4.0.5 records it in a failed attempt's node (and so in
`lastRetry.message`), with where it is written upstream. The rendered `retryStrategy.expression` is
evaluated by expr-lang itself (the Go library Argo evaluates it with, compiled into the
`enchanter-golem` wheel), over the scope Argo builds (`buildRetryStrategyLocalScope`: every value a
string), and the Python model the plan and `pipeline-check` use must agree with it on every case.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import golem
import jsonschema
import pytest
import yaml

from spotkube.platform.addons import kfp_reference, kfp_transforms
from spotkube.platform.addons.argo_retries import (
    EVICTION_PATTERN,
    EVICTION_SIGNS,
    RETRY_POLICY,
    Phase,
    RetryRule,
    is_eviction,
    limit_of,
    merged_strategy,
)
from spotkube.platform.spec import KubeflowSettings

SCHEMA = json.loads((Path(__file__).parents[1] / "fixtures" / "argo_v4.0.5_workflow_defaults_schema.json").read_text())
DEFAULT_RULE = kfp_transforms.retry_rule(KubeflowSettings())

KUBELET_SHUTDOWN = "kubernetes pkg/kubelet/nodeshutdown/nodeshutdown_manager.go"
KUBELET_EVICTION = "kubernetes pkg/kubelet/eviction/helpers.go"
ARGO_INFER = "argo-workflows v4.0.5 workflow/controller/operator.go inferFailedReason"


@dataclass(frozen=True)
class Case:
    what: str
    phase: Phase
    message: str
    source: str
    eviction: bool


CASES: tuple[Case, ...] = (
    Case("GKE spot preemption, graceful node shutdown", "Failed",
         "Pod was terminated in response to imminent node shutdown.", f"{KUBELET_SHUTDOWN} nodeShutdownMessage", True),
    Case("admitted while the node shuts down", "Failed", "Pod was rejected as the node is shutting down.",
         f"{KUBELET_SHUTDOWN} nodeShutdownNotAdmittedMessage", True),
    Case("graceful node shutdown on Kubernetes 1.20-1.21", "Failed", "Node is shutting, evicting pods",
         "kubernetes v1.21 pkg/kubelet/nodeshutdown/nodeshutdown_manager_linux.go nodeShutdownMessage", True),
    Case("drained or deleted before Argo saw it end (AKS node auto-drain, PodGC, taint manager)", "Error",
         "pod deleted", "argo-workflows v4.0.5 operator.go podReconciliation", True),
    Case("drained, SIGTERM, Argo saw it end", "Failed", "main: Error (exit code 143)", ARGO_INFER, True),
    Case("drained, SIGKILL after the grace period", "Failed", "main: Error (exit code 137)", ARGO_INFER, True),
    Case("drained, the wait container's SIGTERM", "Error", "wait: Error (exit code 143)", ARGO_INFER, True),
    Case("PodGC failed the pod of a node that is gone", "Failed",
         "pod failed: neither main nor wait container completed successfully", ARGO_INFER, True),
    Case("kubelet memory-pressure eviction", "Failed",
         "The node was low on resource: memory. Threshold quantity: 100Mi, available: 84Mi. Container main was "
         "using 7Gi, which exceeds its request of 2Gi. ", f"{KUBELET_EVICTION} nodeLowMessageFmt", True),
    Case("kubelet disk-pressure refusal", "Failed", "The node had condition: [DiskPressure]. ",
         f"{KUBELET_EVICTION} nodeConditionMessageFmt", True),
    Case("GPU node restarted before its device plugin", "Failed",
         "Node didn't have enough resource: nvidia.com/gpu, requested: 1, used: 0, capacity: 0",
         "kubernetes pkg/kubelet/lifecycle/predicate.go InsufficientResourceError", True),
    Case("node lost (legacy node controller)", "Failed",
         "Node aks-t4spot-12345678-vmss000000 which was running pod train-abc is unresponsive",
         "kubernetes pkg/util/node NodeUnreachablePodMessage", True),
    Case("the step's own bug", "Failed", "main: Error (exit code 1)", ARGO_INFER, False),
    Case("the step's own bug, with its termination message", "Failed",
         "main: Error (exit code 2): ValueError: column 'label' not found", ARGO_INFER, False),
    Case("out of memory (the container's own limit)", "Failed", "main: OOMKilled (exit code 137)", ARGO_INFER,
         False),
    Case("the pod's own ephemeral-storage limit", "Failed",
         "Pod ephemeral local storage usage exceeds the total limit of containers 10Gi. ",
         f"{KUBELET_EVICTION} podEphemeralStorageMessageFmt", False),
    Case("a deadline (backoff.maxDuration or activeDeadlineSeconds)", "Failed",
         "Pod was active on the node longer than the specified deadline", "kubernetes pkg/kubelet/active_deadline.go",
         False),
    Case("an image that can't be pulled (an Argo error, not the step's code)", "Error",
         "Pod failed before main container starts due to ErrImagePull: rpc error: code = NotFound",
         ARGO_INFER, False),
    Case("a failed DAG: Argo marks its phase only, with no message", "Failed", "",
         "argo-workflows v4.0.5 workflow/controller/dag.go executeDAG (markNodePhase without a message)", False),
    Case("a DAG whose step errored", "Error", "", "argo-workflows v4.0.5 workflow/controller/dag.go", False),
)


def argo_scope(phase: str, message: str, retries: int) -> dict[str, Any]:
    """`buildRetryStrategyLocalScope` after `env.GetFuncMap` expanded its dotted keys: all strings."""
    return {"retries": str(retries),
            "lastRetry": {"exitCode": "-1", "status": phase, "duration": "312.5", "message": message}}


@pytest.fixture(scope="module")
def expr() -> golem.Engine:
    # Argo compiles the expression against its scope; golem's non-strict mode resolves the same names.
    return golem.Engine(strict_vars=False)


def expected(rule: RetryRule, case: Case, retries: int) -> bool:
    """What the rule promises: an eviction always passes the expression; anything else with a message
    passes while fewer retries than the failure limit (or, for an Argo error, KFP's) were made."""
    if case.eviction:
        return True
    if not case.message:
        return False
    return retries < rule.failures or (case.phase == "Error" and retries < rule.errors)


@pytest.mark.parametrize("rule", [DEFAULT_RULE, RetryRule(10, 0, 2), RetryRule(5, 3, 2), RetryRule(2, 0, 0)],
                         ids=["defaults-10-1-2", "no-failures", "three-failures", "no-errors"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.what)
def test_each_real_message_is_retried_as_intended(expr: golem.Engine, rule: RetryRule, case: Case) -> None:
    assert is_eviction(case.message) is case.eviction, case.source
    for retries in range(0, 4):
        want = expected(rule, case, retries)
        assert expr.eval_bool(rule.expression(), argo_scope(case.phase, case.message, retries)) is want, (
            f"{case.what} ({case.source}) after {retries} retries")
        # The model the plan and pipeline-check use, with the limit out of the way, says the same.
        assert rule.retried(case.phase, case.message, retries, limit=100) is want


@pytest.mark.parametrize("case", [c for c in CASES if c.eviction], ids=lambda c: c.what)
def test_evictions_are_retried_up_to_the_limit_and_no_further(case: Case) -> None:
    """Argo's limit gate comes before the expression: `len(attempts) > limit` stops."""
    assert DEFAULT_RULE.retried(case.phase, case.message, retries=9)
    assert not DEFAULT_RULE.retried(case.phase, case.message, retries=10)
    assert DEFAULT_RULE.retried(case.phase, case.message, retries=4, limit=5)
    assert not DEFAULT_RULE.retried(case.phase, case.message, retries=5, limit=5), "set_retry(5) caps it"


def test_a_failure_after_an_eviction_is_not_retried() -> None:
    """`retries` counts every retry, evictions included: the failure budget is spent by then."""
    assert DEFAULT_RULE.retried("Failed", "main: Error (exit code 1)", retries=0)
    assert not DEFAULT_RULE.retried("Failed", "main: Error (exit code 1)", retries=1)


def test_the_expression_has_only_the_arms_that_can_be_true() -> None:
    assert RetryRule(10, 0, 0).expression() == f'lastRetry.message matches "{EVICTION_PATTERN}"'
    assert RetryRule(10, 2, 2).expression().endswith('lastRetry.message != "" && (int(retries) < 2)')
    assert RetryRule(10, 1, 2).expression().endswith(
        'lastRetry.message != "" && (lastRetry.status == "Error" && int(retries) < 2 || int(retries) < 1)')


def test_the_pattern_needs_no_escaping_in_an_expr_string_or_yaml() -> None:
    assert '"' not in EVICTION_PATTERN and "\\" not in EVICTION_PATTERN
    assert EVICTION_SIGNS and all(sign.source and sign.cause for sign in EVICTION_SIGNS)
    rendered = kfp_transforms.transform(kfp_reference.shipped_workflow_controller_configmap(), KubeflowSettings(),
                                        kfp_transforms.NO_CREDENTIALS)
    assert rendered is not None
    strategy = yaml.safe_load(rendered["data"]["workflowDefaults"])["spec"]["templateDefaults"]["retryStrategy"]
    assert strategy["expression"] == DEFAULT_RULE.expression(), "YAML gives Argo the text unchanged"


# --- Argo's schema --------------------------------------------------------------------------------


def validate(value: Any, definition: str) -> None:
    jsonschema.validate(value, {**SCHEMA, "$ref": f"#/definitions/io.argoproj.workflow.v1alpha1.{definition}"})


@pytest.mark.parametrize("settings", [KubeflowSettings(), KubeflowSettings(
    eviction_retry_limit=100, failure_retry_limit=0, pod_delete_delay="90s", workflow_ttl_seconds=60,
    step_grace_period_seconds=15)], ids=["defaults", "edges"])
def test_the_rendered_defaults_match_argo_s_schema(settings: KubeflowSettings) -> None:
    rendered = kfp_transforms.transform(kfp_reference.shipped_workflow_controller_configmap(), settings,
                                        kfp_transforms.NO_CREDENTIALS)
    assert rendered is not None
    spec = yaml.safe_load(rendered["data"]["workflowDefaults"])["spec"]
    validate(spec["templateDefaults"]["retryStrategy"], "RetryStrategy")
    validate(spec["podGC"], "PodGC")
    validate(spec["ttlStrategy"], "TTLStrategy")
    assert set(spec["templateDefaults"]["retryStrategy"]) <= set(
        SCHEMA["definitions"]["io.argoproj.workflow.v1alpha1.RetryStrategy"]["properties"])


def test_the_schema_fixture_refuses_what_argo_refuses() -> None:
    """The fixture bites: an integer limit is not Argo's IntOrString as its schema types it, and a
    misspelt field is no field of RetryStrategy."""
    with pytest.raises(jsonschema.ValidationError):
        validate({"limit": 10, "retryPolicy": RETRY_POLICY}, "RetryStrategy")
    with pytest.raises(jsonschema.ValidationError):
        validate({"strategy": "OnPodCompletion", "deleteDelayDuration": 60}, "PodGC")


# --- How the defaults meet KFP's compiled templates -----------------------------------------------


#: The executor template of a task with `set_retry(5, backoff_duration="300s", backoff_factor=1,
#: backoff_max_duration="604800s")`, as KFP 2.17.0 compiles it (`getTaskRetryStrategyFromInput`:
#: the limit and backoff as input parameters, no policy, no expression) once Argo substituted them.
SET_RETRY_TEMPLATE = {"limit": "5", "backoff": {"duration": "300", "factor": "1", "maxDuration": "604800"}}
KFP_SHIPPED = {"limit": "2", "retryPolicy": "OnError"}


def test_kfp_s_shipped_defaults_leave_a_set_retry_step_on_on_error() -> None:
    """Why spotkube changes them: merged with KFP's own defaults, a preempted GKE step (Failed) is
    never retried, however high its set_retry."""
    merged = merged_strategy(SET_RETRY_TEMPLATE, KFP_SHIPPED)
    assert merged == {"limit": "5", "retryPolicy": "OnError", "backoff": SET_RETRY_TEMPLATE["backoff"]}


def test_a_set_retry_step_keeps_its_limit_and_backoff_and_takes_the_expression(expr: golem.Engine) -> None:
    merged = merged_strategy(SET_RETRY_TEMPLATE, DEFAULT_RULE.strategy())
    assert merged == {"limit": "5", "retryPolicy": "Always", "expression": DEFAULT_RULE.expression(),
                      "backoff": SET_RETRY_TEMPLATE["backoff"]}
    assert limit_of(merged) == 5
    assert DEFAULT_RULE.survives(limit_of(merged)) == (5, 1)
    preempted = argo_scope("Failed", "Pod was terminated in response to imminent node shutdown.", 4)
    assert expr.eval_bool(str(merged["expression"]), preempted)


def test_a_step_without_set_retry_takes_the_whole_default() -> None:
    merged = merged_strategy(None, DEFAULT_RULE.strategy())
    assert merged == DEFAULT_RULE.strategy()
    assert DEFAULT_RULE.survives(limit_of(merged)) == (10, 1)
    assert DEFAULT_RULE.survives(0) == (0, 0), "set_retry(0): no retries at all"


def test_a_template_s_own_backoff_fields_merge_one_by_one() -> None:
    merged = merged_strategy({"backoff": {"duration": "10s"}}, {"limit": "3", "backoff": {"factor": "2"}})
    assert merged == {"limit": "3", "backoff": {"factor": "2", "duration": "10s"}}
