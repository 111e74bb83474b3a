"""What a cluster component's name must be, because the cloud names spotkube registers derive from it.

`AksGpuCluster("ml_gpu", ...)` makes the AKS DNS prefix `ml_gpu-dev`, which AKS refuses; a long
`GkeGpuCluster` name makes a GKE cluster name over 40 characters. Both would fail in the cloud,
after other resources exist. Checking the name first fails before anything is registered, with the
rule. The facts and their sources: docs/platform-facts.md#cluster-component-names.

One rule for both clouds (lower-case letters, digits and hyphens, a letter first, no hyphen last),
only the length differs. AKS would accept capitals in a DNS prefix, but Azure compares names without
case and DNS is case-blind, so spotkube keeps names lower-case on both clouds. Pure module: no Pulumi.
"""

from __future__ import annotations

import re

from spotkube.platform.contract import Cloud
from spotkube.platform.input_messages import shown

NAME_PATTERN = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
#: Pulumi's auto-naming adds a random suffix to a physical name: a hyphen and 7 characters.
AUTONAME_SUFFIX = 8
#: AKS: the DNS prefix (`<name>-<environment>`) has at most 54 characters; a managed cluster name 63.
AKS_DNS_PREFIX_MAX = 54
AKS_CLUSTER_NAME_MAX = 63
#: The shells' logical names for the clusters (`<name>-aks`, `<name>-gke`), auto-named by Pulumi.
AKS_CLUSTER_SUFFIX = "-aks"
GKE_CLUSTER_SUFFIX = "-gke"
#: GKE: a cluster name has at most 40 characters.
GKE_CLUSTER_NAME_MAX = 40


def longest_name(cloud: Cloud, environment: str) -> int:
    """The longest component name whose derived cloud names all fit."""
    if cloud == "aks":
        return min(AKS_DNS_PREFIX_MAX - len(f"-{environment}"),
                   AKS_CLUSTER_NAME_MAX - len(AKS_CLUSTER_SUFFIX) - AUTONAME_SUFFIX)
    return GKE_CLUSTER_NAME_MAX - len(GKE_CLUSTER_SUFFIX) - AUTONAME_SUFFIX


def name_problem(cloud: Cloud, name: str, environment: str) -> str | None:
    """Why this component name can't be used, with the rule and a name that can; None when it can."""
    longest = longest_name(cloud, environment)
    if NAME_PATTERN.fullmatch(name) and len(name) <= longest:
        return None
    if cloud == "aks":
        becomes = (f"it becomes the AKS DNS prefix {name}-{environment} and the start of the resource group's and "
                   "the managed cluster's names")
    else:
        becomes = f"it becomes the start of the GKE cluster's name ({name}{GKE_CLUSTER_SUFFIX}-<random suffix>)"
    rule = (f"use lower-case letters, digits and hyphens, starting with a letter and not ending with a hyphen, at "
            f"most {longest} characters")
    suggestion = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:longest].rstrip("-")
    if NAME_PATTERN.fullmatch(suggestion):
        rule += f" (e.g. {suggestion!r})"
    return f"the name {shown(name)} is not accepted: {becomes}; {rule}"
