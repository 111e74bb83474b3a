"""Every cloud spotkube knows, in one registry (`CLOUDS`), and the platform's pure steps bound to it.

Each cloud is one folder here (`aks/`, `gke/`) whose `profile` module says everything the cloud-neutral
code needs to know about it (`spotkube.platform.cloud.CloudProfile`). The neutral code takes the
registry as an argument and never imports a cloud; the functions below hand it over, so callers that
don't know the stack's cloud (the CLI, the stack program, the judges) ask here. Adding a cloud is a
folder and one line in `CLOUDS`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from spotkube.clouds.aks import profile as aks
from spotkube.clouds.gke import profile as gke
from spotkube.platform import plan, project, validation
from spotkube.platform.cloud import CloudProfile, RegisteredPool
from spotkube.platform.contract import Cloud
from spotkube.platform.input_messages import KeyStyle
from spotkube.platform.spec import PlatformSpec

CLOUDS: dict[str, CloudProfile] = {p.cloud: p for p in (aks.PROFILE, gke.PROFILE)}


def profile(cloud: Cloud | str) -> CloudProfile:
    """The profile of a cloud the spec has already accepted."""
    return CLOUDS[cloud]


def parse_spec(values: Mapping[str, Any], source: str, style: KeyStyle = "stack") -> PlatformSpec:
    """`validation.parse_spec` over every cloud spotkube knows."""
    return validation.parse_spec(values, source, CLOUDS, style)


def checked(spec: PlatformSpec, source: str, style: KeyStyle = "stack") -> PlatformSpec:
    """`validation.checked` over every cloud spotkube knows."""
    return validation.checked(spec, source, CLOUDS, style)


def deployable(spec: PlatformSpec, source: str, style: KeyStyle = "stack") -> PlatformSpec:
    """`validation.deployable` over every cloud spotkube knows."""
    return validation.deployable(spec, source, CLOUDS, style)


def plan_platform(spec: PlatformSpec) -> plan.PlatformPlan:
    """The plan of a resolved spec, with its cloud's facts."""
    return plan.plan_platform(spec, CLOUDS[spec.cloud])


def load_stack_spec(proj: project.Project, stack: str) -> PlatformSpec:
    """The validated spec of one stack, read as `pulumi up` would read it; errors name the stack file."""
    return project.load_stack_spec(proj, stack, CLOUDS)


def read_spec(config: Mapping[str, str], proj: project.Project, stack: str) -> PlatformSpec:
    """`project.read_spec` over every cloud spotkube knows."""
    return project.read_spec(config, proj, stack, CLOUDS)


def registered_pools(type_token: str, name: str, inputs: Mapping[str, Any]) -> list[RegisteredPool]:
    """The node pools any registration declares, whichever cloud it belongs to (none for the rest):
    the policy pack judges programs without knowing their cloud."""
    return [pool for p in CLOUDS.values() for pool in p.read_pools(type_token, name, inputs)]


__all__ = [
    "CLOUDS", "CloudProfile", "RegisteredPool", "checked", "deployable", "load_stack_spec", "parse_spec",
    "plan_platform", "profile", "read_spec", "registered_pools",
]
