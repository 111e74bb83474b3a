"""What every component shares on the Pulumi side: one way to refuse bad input, child options, the
provider and the outputs.

Kept here so that the AKS and GKE modules never import each other: what both need lives in the core
or here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol, TypeVar

import pulumi
import pulumi_kubernetes as k8s

from spotkube.core.contract import Cloud
from spotkube.core.errors import Problem, SpecError
from spotkube.core.plan import PlatformPlan, plan_platform
from spotkube.core.spec import PlatformSpec
from spotkube.core.validation import checked, parse_spec
from spotkube.shells.args import GpuClusterArgs

Validated = TypeVar("Validated")


class _Buildable(Protocol):
    def _build(self, name: str, value: Any, opts: pulumi.ResourceOptions | None) -> None: ...


Buildable = TypeVar("Buildable", bound=_Buildable)


def validated(check: Callable[[], Validated]) -> Validated:
    """Run a validation before anything is registered; bad input ends the program with its message.

    `pulumi.RunError` is how a Pulumi program reports an error without a traceback. Every component
    and the stack program refuse input through here, so the message always has the same shape.
    """
    try:
        return check()
    except SpecError as err:
        raise pulumi.RunError(str(err)) from None


def plan_from_args(cloud: Cloud, args: GpuClusterArgs, where: str) -> PlatformPlan:
    """The plan of a cluster component's args, validated and resolved once. The component fixes the
    cloud, and Kubeflow is another component, so its rules don't apply to a cluster's args."""
    def parse() -> PlatformSpec:
        extra = sorted(set(args) - set(GpuClusterArgs.__annotations__)) if isinstance(args, Mapping) else []
        if extra:
            accepted = ", ".join(GpuClusterArgs.__annotations__)
            raise SpecError(where, [Problem(key, f"is not a key of the cluster's args; accepted keys: {accepted}")
                                    for key in extra])
        return parse_spec({**args, "cloud": cloud, "kubeflow": {"enabled": False}}, where)
    return plan_platform(validated(parse))


def plan_from_spec(cloud: Cloud, spec: PlatformSpec, component: str) -> PlatformPlan:
    """The plan of a typed spec (the stack program's, from `parse_spec`): no dict round trip. The
    rules run on the value itself, so a spec built by hand can't skip them."""
    if spec.cloud != cloud:
        raise pulumi.RunError(f"{component}: the spec is for {spec.cloud}; build it with the {spec.cloud} component")
    return plan_platform(validated(lambda: checked(spec, component)))


def built_from(cls: type[Buildable], name: str, value: Any, opts: pulumi.ResourceOptions | None) -> Buildable:
    """A component built from a typed, already-checked value (each component's `from_spec`).

    `__init__` keeps the signature Pulumi's schema analyzer reads (`args: <TypedDict>`), so the typed
    constructor can't go through it: it makes the instance and runs the same `_build` `__init__` runs.
    """
    component = cls.__new__(cls)
    component._build(name, value, opts)
    return component


def child(parent: pulumi.Resource, **options: object) -> pulumi.ResourceOptions:
    """Options for a child resource: always parented to the component."""
    return pulumi.ResourceOptions(parent=parent, **options)  # type: ignore[arg-type]


def kubernetes_provider(
    parent: pulumi.Resource, name: str, kubeconfig: pulumi.Output[str],
    depends_on: list[pulumi.Resource] | None = None,
) -> k8s.Provider:
    """The provider later components deploy through; the kubeconfig stays a secret.

    Every resource deployed through a provider waits for it, and it waits for `depends_on`: that is
    how the cluster's grants and network egress come before the first Kubernetes object.
    """
    return k8s.Provider(f"{name}-k8s", kubeconfig=kubeconfig, opts=child(parent, depends_on=depends_on or []))


def pool_contract_outputs(plan: PlatformPlan) -> list[dict]:
    """Pool contracts in their output shape, so other programs can target the pools."""
    return [c.to_json() for c in plan.contracts()]
