"""The glue `infra/__main__.py` uses: read the stack's spec from Pulumi config and build it.

It reads config through `pulumi.Config`, so the same code runs under `pulumi up` (where the
engine supplies the config) and under the offline plan (where `spotkube.tools.offline` does).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pulumi
from pulumi.runtime import config as runtime_config

from spotkube.core.errors import SpecError
from spotkube.core.project import find_project
from spotkube.core.spec import CONFIG_NAMESPACE, PlatformSpec, parse_spec

#: The spec fields the cluster components take; the rest configure other components or the plan.
CLUSTER_KEYS = {"environment", "region", "system_pool", "platform_pool", "gpu_pools", "spot_pools", "cluster"}


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
    try:
        return parse_spec(values, source)
    except SpecError as err:
        raise pulumi.RunError(str(err)) from None


def cluster_args(spec: PlatformSpec) -> dict[str, Any]:
    """The cluster part of the spec as component args (snake_case, plain lists)."""
    return spec.model_dump(mode="json", include=CLUSTER_KEYS, exclude_none=True)


def device_plugin_args(spec: PlatformSpec) -> dict[str, Any]:
    """`NvidiaDevicePlugin` args: the stack's settings, its cloud, and the GPU pools' own taints,
    which the plugin must tolerate to run on those pools."""
    extra_taints = sorted({taint for pool in spec.gpu_pools for taint in pool.taints})
    settings = spec.device_plugin.model_dump(mode="json", exclude={"enabled"})
    return {"cloud": spec.cloud, **settings, "extra_taints": extra_taints}


def kubeflow_args(spec: PlatformSpec) -> dict[str, Any]:
    """`KubeflowPipelines` args: the stack's settings without the on/off switch."""
    return spec.kubeflow.model_dump(mode="json", exclude={"enabled"}, exclude_none=True)
