"""The glue `infra/__main__.py` uses: read the stack's spec from Pulumi config, validated once.

It reads config through `pulumi.Config`, so the same code runs under `pulumi up` and under the offline
plan, and the strings go through `core.project.read_spec`, the reading `spotkube plan` uses: a stack is
refused on both paths with the same message.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pulumi
from pulumi.runtime import config as runtime_config

import spotkube
from spotkube.clouds import CLOUDS, profile, read_spec
from spotkube.platform.errors import SpotkubeError
from spotkube.platform.project import find_project, read_stack_file
from spotkube.platform.spec import CONFIG_NAMESPACE, PlatformSpec
from spotkube.shell.common import validated


def delivered_config() -> dict[str, str]:
    """Every `spotkube:` value the engine handed the program, as the strings it handed them over.

    pulumi.Config can't list keys, so the keys come from the runtime's config map (and the
    PULUMI_CONFIG variable the language host sets), and each value from pulumi.Config."""
    prefix = f"{CONFIG_NAMESPACE}:"
    config = pulumi.Config(CONFIG_NAMESPACE)
    keys = {*runtime_config.CONFIG.get(), *runtime_config.get_config_env()}
    return {key: raw for key in sorted(keys)
            if key.startswith(prefix) and (raw := config.get(key[len(prefix):])) is not None}


def read_stack_spec(program_dir: Path) -> PlatformSpec:
    """The stack's validated spec; bad input stops the program with the one clear message."""

    def read() -> PlatformSpec:
        project = find_project(program_dir)
        stack = pulumi.get_stack()
        if project.stack_file(stack).is_file():
            # The engine has read this file already; these are the checks it leaves out (a missing or
            # misspelt section or namespace, a YAML date in a setting), as `spotkube plan` makes them.
            read_stack_file(project, stack, CLOUDS)
        return read_spec(delivered_config(), project, stack)

    try:
        return validated(read)
    except SpotkubeError as err:  # no Pulumi.yaml above the program: not a spec problem, still no traceback
        raise pulumi.RunError(str(err)) from None


def cluster_component(spec: PlatformSpec) -> Any:
    """The cluster component class of the stack's cloud (`AksGpuCluster`, `GkeGpuCluster`), imported
    only now: each cloud SDK takes a second or more to load, and a stack needs only its own."""
    return getattr(spotkube, profile(spec.cloud).component)
