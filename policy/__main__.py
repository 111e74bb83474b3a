"""spotkube's policy pack: the guardrails of `spotkube.review.policy_rules`, enforced by the Pulumi engine.

Run it with any program that builds spotkube platforms, this repository's or another one's:

    pulumi preview --policy-pack policy/

This is the only module that imports `pulumi_policy` (it pins protobuf 5, kfp needs protobuf 6),
so it only adapts: each plain rule becomes one mandatory ResourceValidationPolicy fed the
resource's type token, name and inputs. The rules themselves are tested against every shipped stack
in tests/review/test_policy_rules.py.

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
)

from spotkube.review.policy_rules import RESOURCE_RULES, ResourceRule


def _validation(rule: ResourceRule) -> ResourceValidation:
    """Report each sentence the plain rule returns as one violation of this resource."""

    def validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
        for message in rule.check(args.resource_type, args.name, args.props):
            report_violation(message, None)

    return validate


def policies() -> list[ResourceValidationPolicy]:
    """One mandatory policy per resource rule: a guardrail that only warns gets ignored."""
    return [
        ResourceValidationPolicy(
            name=rule.name,
            description=rule.description,
            validate=_validation(rule),
            enforcement_level=EnforcementLevel.MANDATORY,
        )
        for rule in RESOURCE_RULES
    ]


if __name__ == "__main__":
    PolicyPack(name="spotkube", policies=policies(), enforcement_level=EnforcementLevel.MANDATORY)
