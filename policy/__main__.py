"""spotkube's policy pack: the guardrails of `spotkube.review.policy_rules`, enforced by the Pulumi engine.

Run it with any program that builds spotkube platforms, this repository's or another one's:

    pulumi preview --policy-pack policy/

This is the only module that imports `pulumi_policy` (it pins protobuf 5, kfp needs protobuf 6),
so it only adapts: each plain resource rule becomes one mandatory ResourceValidationPolicy fed the
resource's type token, name and inputs, and each advisory stack rule one advisory
StackValidationPolicy fed every resource of the stack (a GPU pool's maintenance window is on another
resource: the cluster on GKE, a MaintenanceConfiguration on AKS). The rules themselves are tested
against every shipped stack in tests/review/test_policy_rules.py.

The stack rule `kubeconfig_outputs_secret` is not adapted. Pulumi's engine sends secret markers to
policy packs, but pulumi-policy 1.21's Python SDK unwraps them before a validation sees the values
(`deserialize_properties` without `proxy_secrets` in AnalyzeStack and Analyze), so from here a secret
kubeconfig and a plain one look the same: the policy would either block every stack or none. That
rule runs on the offline plan instead, where each output's secret flag is known.
"""

from pulumi_policy import (
    EnforcementLevel,
    PolicyPack,
    ReportViolation,
    ResourceValidation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidation,
    StackValidationArgs,
    StackValidationPolicy,
)

from spotkube.review.policy_rules import ADVISORY_STACK_RULES, RESOURCE_RULES, ResourceRule, StackRule


def _validation(rule: ResourceRule) -> ResourceValidation:
    """Report each sentence the plain rule returns as one violation of this resource."""

    def validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
        for message in rule.check(args.resource_type, args.name, args.props):
            report_violation(message, None)

    return validate


def _stack_validation(rule: StackRule) -> StackValidation:
    """Report each sentence the plain stack rule returns over all of the stack's resources."""

    def validate(args: StackValidationArgs, report_violation: ReportViolation) -> None:
        resources = [(r.resource_type, r.name, r.props) for r in args.resources]
        for _, message in rule.check(resources):
            report_violation(message, None)

    return validate


def policies() -> list[ResourceValidationPolicy | StackValidationPolicy]:
    """One mandatory policy per resource rule (a guardrail that only warns gets ignored), then one
    advisory policy per stack rule (a stack may choose to let the cloud upgrade at any time)."""
    resource_policies: list[ResourceValidationPolicy | StackValidationPolicy] = [
        ResourceValidationPolicy(
            name=rule.name,
            description=rule.description,
            validate=_validation(rule),
            enforcement_level=EnforcementLevel.MANDATORY,
        )
        for rule in RESOURCE_RULES
    ]
    return resource_policies + [
        StackValidationPolicy(
            name=rule.name,
            description=rule.description,
            validate=_stack_validation(rule),
            enforcement_level=EnforcementLevel.ADVISORY,
        )
        for rule in ADVISORY_STACK_RULES
    ]


if __name__ == "__main__":
    PolicyPack(name="spotkube", policies=policies(), enforcement_level=EnforcementLevel.MANDATORY)
