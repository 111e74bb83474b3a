"""What both cloud components share on the Pulumi side: validation up front and the outputs.

Kept here so that the AKS and GKE modules never import each other: what both need lives in the core.
"""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s

from spotkube.core.contract import Cloud
from spotkube.core.errors import SpecError
from spotkube.core.plan import PlatformPlan, plan_platform
from spotkube.core.spec import parse_spec
from spotkube.shells.args import GpuClusterArgs


def plan_from_args(cloud: Cloud, args: GpuClusterArgs, where: str) -> PlatformPlan:
    """Validate component args before anything is registered; bad input ends the program cleanly.

    `pulumi.RunError` is how a Pulumi program reports an error without a traceback.
    """
    try:
        spec = parse_spec({"cloud": cloud, **args}, where)
    except SpecError as err:
        raise pulumi.RunError(str(err)) from None
    return plan_platform(spec)


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
