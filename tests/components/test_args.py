"""The public args TypedDicts stay in step with the spec models and stay analyzer-friendly."""

from __future__ import annotations

import json
import typing

import pulumi
import pytest
from pulumi.provider.experimental.component import ComponentProvider
from pydantic import BaseModel

import spotkube
from spotkube.platform import spec
from spotkube.shell import args as public_args

PAIRS: list[tuple[type, type[BaseModel]]] = [
    (public_args.SystemPoolArgs, spec.SystemPool),
    (public_args.PlatformPoolArgs, spec.PlatformPool),
    (public_args.GpuPoolArgs, spec.GpuPool),
    (public_args.SpotPoolArgs, spec.SpotPool),
    (public_args.GpuArgs, spec.GpuSpec),
    (public_args.ClusterArgs, spec.ClusterSettings),
    (public_args.AutoscalerArgs, spec.AutoscalerSettings),
    (public_args.DeployerArgs, spec.DeployerSettings),
]


@pytest.mark.parametrize(("typed_dict", "model"), PAIRS, ids=[m.__name__ for _, m in PAIRS])
def test_typed_dict_keys_match_the_spec_model(typed_dict: type, model: type[BaseModel]) -> None:
    assert set(typing.get_type_hints(typed_dict)) == set(model.model_fields)


def test_cluster_args_cover_the_cluster_part_of_the_spec() -> None:
    cluster_keys = {"environment", "region", "system_pool", "platform_pool", "gpu_pools", "spot_pools", "cluster"}
    assert set(typing.get_type_hints(public_args.GpuClusterArgs)) == cluster_keys
    assert cluster_keys <= set(spec.PlatformSpec.model_fields)


def components() -> list[type[pulumi.ComponentResource]]:
    exported = (getattr(spotkube, name) for name in spotkube.__all__)
    return [c for c in exported if isinstance(c, type) and issubclass(c, pulumi.ComponentResource)]


def test_pulumi_analyzer_accepts_every_component() -> None:
    schema = json.loads(ComponentProvider(components(), "spotkube", version=spotkube.__version__).schema)
    for component in components():
        resource = schema["resources"][f"spotkube:index:{component.__name__}"]
        assert resource["isComponent"] is True
        assert resource["inputProperties"], component.__name__


def test_every_public_name_resolves_and_pure_modules_stay_free_of_pulumi() -> None:
    import subprocess
    import sys

    assert all(getattr(spotkube, name) for name in spotkube.__all__)
    code = ("import sys, spotkube.platform.contract, spotkube.platform.plan, spotkube.platform.spec; "
            "print('pulumi' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() \
        == "False"
