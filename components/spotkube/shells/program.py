"""The glue `infra/__main__.py` uses: read the stack's spec from Pulumi config, validated once.

The program then hands that typed spec to the components (`from_spec`), never a dict of it.

It reads config through `pulumi.Config`, so the same code runs under `pulumi up` (where the
engine supplies the config) and under the offline plan (where `spotkube.tools.offline` does).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pulumi
from pulumi.runtime import config as runtime_config

from spotkube.core.project import find_project
from spotkube.core.spec import CONFIG_NAMESPACE, PlatformSpec
from spotkube.core.validation import parse_spec
from spotkube.shells.common import validated


def _value(raw: str) -> Any:
    """Pulumi hands objects and arrays over as JSON text and scalars as plain text."""
    return json.loads(raw) if raw[:1] in "[{" else raw


def _stack_keys() -> list[str]:
    """Every key the stack sets in our namespace, so that a misspelt key is refused rather than
    silently ignored. pulumi.Config cannot list keys; the runtime's config map can."""
    prefix = f"{CONFIG_NAMESPACE}:"
    keys = {*runtime_config.CONFIG.get(), *runtime_config.get_config_env()}
    return sorted(k[len(prefix):] for k in keys if k.startswith(prefix))


def read_stack_spec(program_dir: Path) -> PlatformSpec:
    """The stack's validated spec; bad input stops the program with the one clear message."""
    config = pulumi.Config(CONFIG_NAMESPACE)
    values = {key: _value(raw) for key in _stack_keys() if (raw := config.get(key)) is not None}
    project = find_project(program_dir)
    source = project.relative(project.stack_file(pulumi.get_stack()))
    return validated(lambda: parse_spec(values, source))
