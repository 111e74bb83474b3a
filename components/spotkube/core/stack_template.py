"""`spotkube new-stack`: a new region or environment in one step, as a stack file that plans cleanly.

Copying an existing stack file by hand carries over its GPU, zones and project, which are often wrong
in the new region (an L4 pool in a region without L4s fails only when GKE creates it). The template
here starts from safe defaults for the cloud (spot GPU pool scaling from 0, on-demand system and
platform pools) and picks a GPU the region really offers, then the new file is validated exactly as
`spotkube plan` would load it before the user is told it exists. Pure module: no Pulumi.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

import yaml

from spotkube.core.catalog import gke as gke_catalog
from spotkube.core.errors import SpecError, SpotkubeError
from spotkube.core.project import Project, load_stack_spec
from spotkube.core.spec import CONFIG_NAMESPACE, parse_spec


class CloudName(StrEnum):
    """The clouds a stack can target (`--cloud`)."""

    aks = "aks"
    gke = "gke"


#: Azure region names are lower-case letters and digits (eastus, westeurope, eastus2); a hyphen
#: means a Google Cloud region was given for an AKS stack.
AKS_REGION_PATTERN = r"^[a-z]+[0-9]*$"

#: GKE GPU pools to offer, best first: (GPU type, pool name, machine type, GPU count or None when
#: the machine type fixes it). L4 is the usual price/performance pick for inference and fine-tuning;
#: T4 is the most widely available fallback.
GKE_GPU_CHOICES: tuple[tuple[str, str, str, int | None], ...] = (
    ("nvidia-l4", "l4-spot", "g2-standard-8", None),
    ("nvidia-tesla-t4", "t4-spot", "n1-standard-8", 1),
)


class StackExists(SpotkubeError):
    """new-stack never overwrites a stack file."""


class NewStackError(SpotkubeError):
    """The flags can't make a stack (wrong cloud for a region or setting, unknown GKE region)."""


@dataclass(frozen=True)
class NewStack:
    """The stack file that was written, and the stack's name."""

    stack: str
    path: Path


def _aks_config(environment: str, region: str) -> dict[str, Any]:
    if not re.match(AKS_REGION_PATTERN, region):
        raise NewStackError(f"--region {region}: not an Azure region name; use e.g. eastus, westeurope or uksouth")
    return {
        "cloud": "aks",
        "environment": environment,
        "region": region,
        "systemPool": {"machine": "Standard_D4s_v3", "min": 2, "max": 3},
        "platformPool": {"machine": "Standard_D4s_v3", "min": 1, "max": 3},
        "gpuPools": [{
            "name": "t4spot", "machine": "Standard_NC4as_T4_v3", "capacity": "spot",
            "evictionPolicy": "Delete", "maxPrice": -1, "min": 0, "max": 4,
        }],
        "cluster": {"channel": "stable"},
    }


def _gke_gpu_pool(region: str) -> dict[str, Any]:
    """A spot pool of the first GPU in GKE_GPU_CHOICES that the region offers in some zone."""
    if region not in gke_catalog.GPU_ZONES:
        raise NewStackError(
            f"--region {region}: not in spotkube's GKE GPU zone table ({gke_catalog.GPU_ZONES_SOURCE}, "
            f"{gke_catalog.GPU_ZONES_DATE}); known regions: {', '.join(gke_catalog.GPU_ZONES)}"
        )
    for gpu_type, name, machine, count in GKE_GPU_CHOICES:
        if gke_catalog.zones_offering(region, gpu_type):
            pool: dict[str, Any] = {"name": name, "machine": machine, "capacity": "spot", "min": 0, "max": 4}
            if count is not None:
                pool["gpu"] = {"type": gpu_type, "count": count}
            return pool
    offered = ", ".join(gpu for gpu, *_ in GKE_GPU_CHOICES)
    raise NewStackError(f"--region {region}: offers none of {offered}; pick another region")


def _gke_config(environment: str, region: str, gcp_project: str | None) -> dict[str, Any]:
    if not gcp_project:
        raise NewStackError("--gcp-project is required with --cloud gke (the Google Cloud project id)")
    return {
        "cloud": "gke",
        "environment": environment,
        "region": region,
        "systemPool": {"machine": "e2-standard-4", "min": 2, "max": 3},
        "platformPool": {"machine": "e2-standard-4", "min": 1, "max": 3},
        # Zones left out on purpose: spotkube fills in the zones of the region that offer the GPU.
        "gpuPools": [_gke_gpu_pool(region)],
        "cluster": {"project": gcp_project, "channel": "REGULAR"},
    }


def render(stack: str, config: dict[str, Any]) -> str:
    """The stack file's text: a header saying where it came from, then the namespaced config."""
    body = {"config": {f"{CONFIG_NAMESPACE}:{key}": value for key, value in config.items()}}
    header = (
        f"# Stack {stack}, written by `spotkube new-stack`: an on-demand system pool, an untainted\n"
        "# on-demand platform pool for Kubeflow, and one spot GPU pool that scales from 0. Every key is\n"
        "# documented in README.md's configuration reference; check the result with\n"
        f"# `spotkube plan --stack {stack}`.\n"
    )
    return header + yaml.safe_dump(body, sort_keys=False, default_flow_style=False)


def create_stack(
    project: Project, cloud: CloudName, environment: str, region: str, gcp_project: str | None = None
) -> NewStack:
    """Write `stacks/Pulumi.<cloud>-<env>-<region>.yaml` and validate it as `spotkube plan` loads it.

    Bad flags are refused before anything is written (so no odd file names appear); a file that
    then fails to load with the project's defaults is removed again, so a refused stack leaves
    nothing behind.
    """
    if cloud is CloudName.aks and gcp_project is not None:
        raise NewStackError("--gcp-project applies to --cloud gke only")
    stack = f"{cloud.value}-{environment}-{region}"
    path = project.stack_file(stack)
    source = project.relative(path)
    config = (_aks_config(environment, region) if cloud is CloudName.aks
              else _gke_config(environment, region, gcp_project))
    parse_spec(config, source)
    if path.exists():
        raise StackExists(f"{source} already exists; edit it, or choose another --env or --region")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render(stack, config))
    try:
        load_stack_spec(project, stack)
    except SpecError:
        path.unlink()
        raise
    return NewStack(stack=stack, path=path)
