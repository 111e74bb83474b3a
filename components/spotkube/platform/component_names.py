"""What a cluster component's name must be, because the cloud names spotkube registers derive from it.

A bad name (`ml_gpu` in an AKS DNS prefix, a GKE cluster name over 40 characters) would fail in the
cloud after other resources exist, so it is checked first. One rule for every cloud, lower-case
because Azure and DNS compare names without case; only the length and what the name becomes differ
(`Cloud.component_naming`). Sources: docs/platform-facts.md#cluster-component-names. Pure module.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from spotkube.platform.input_messages import shown
from spotkube.platform.records import record

NAME_PATTERN = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
#: Pulumi's auto-naming adds a random suffix to a physical name: a hyphen and 7 characters.
AUTONAME_SUFFIX = 8


@record
class ComponentNaming:
    """What a cluster component's name becomes on one cloud."""

    #: The longest component name whose derived cloud names all fit, in a given environment.
    longest: Callable[[str], int]
    #: What a name becomes in a given environment, in words (`it becomes the AKS DNS prefix ...`).
    becomes: Callable[[str, str], str]


def name_problem(naming: ComponentNaming, name: str, environment: str) -> str | None:
    """Why this component name can't be used, with the rule and a name that can; None when it can."""
    longest = naming.longest(environment)
    if NAME_PATTERN.fullmatch(name) and len(name) <= longest:
        return None
    rule = (f"use lower-case letters, digits and hyphens, starting with a letter and not ending with a hyphen, at "
            f"most {longest} characters")
    suggestion = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:longest].rstrip("-")
    if NAME_PATTERN.fullmatch(suggestion):
        rule += f" (e.g. {suggestion!r})"
    return f"the name {shown(name)} is not accepted: {naming.becomes(name, environment)}; {rule}"
