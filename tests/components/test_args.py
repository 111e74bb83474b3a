"""The public args TypedDicts are generated from the spec models, stay analyzer-friendly, and lose
nothing on the way to other languages: every key, its type, whether it is required, whether it
accepts an Output, and its description."""

from __future__ import annotations

import json
import typing
from typing import Any

import pulumi
import pytest
from pulumi.provider.experimental.component import ComponentProvider
from pydantic.alias_generators import to_camel

import spotkube
from spotkube.clouds import CLOUDS
from spotkube.platform import args_source
from spotkube.platform.cloud import Cloud
from spotkube.platform.spec import wired_fields


def components() -> list[type[pulumi.ComponentResource]]:
    exported = (getattr(spotkube, name) for name in spotkube.__all__)
    return [c for c in exported if isinstance(c, type) and issubclass(c, pulumi.ComponentResource)]


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    return json.loads(ComponentProvider(components(), "spotkube", version=spotkube.__version__).schema)


def test_pulumi_analyzer_accepts_every_component(schema: dict[str, Any]) -> None:
    assert components(), "spotkube exports its components"
    for component in components():
        resource = schema["resources"][f"spotkube:index:{component.__name__}"]
        assert resource["isComponent"] is True
        assert resource["inputProperties"], component.__name__


def test_every_public_name_resolves_and_pure_modules_stay_free_of_pulumi() -> None:
    import subprocess
    import sys

    assert spotkube.__all__ and all(getattr(spotkube, name) for name in spotkube.__all__)
    code = ("import sys, spotkube.platform.contract, spotkube.platform.plan, spotkube.platform.spec, "
            "spotkube.platform.args_source; print('pulumi' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() \
        == "False"


def _pairs(cloud: Cloud) -> list[tuple[type, args_source.ArgsType]]:
    """(the public TypedDict, what it is generated from)."""
    return [(getattr(spotkube, a.name), a) for a in args_source.cluster_args(cloud)]


PAIRS = [(cloud, *pair) for cloud in CLOUDS.values() for pair in _pairs(cloud)]


def _unwrap(hint: Any) -> tuple[Any, bool]:
    """A TypedDict value's type without NotRequired, and whether it was NotRequired."""
    if typing.get_origin(hint) is typing.NotRequired:
        return typing.get_args(hint)[0], True
    return hint, False


@pytest.mark.parametrize(("cloud", "typed", "made"), PAIRS, ids=[f"{t.__name__}" for _, t, _ in PAIRS])
def test_each_args_type_has_its_model_s_keys_required_ness_and_wiring(
    cloud: Cloud, typed: type, made: args_source.ArgsType
) -> None:
    model, extras = made.model, {extra.name: extra for extra in made.extra}
    hints = typing.get_type_hints(typed, include_extras=True)
    assert list(hints) == [*(e.name for e in made.extra if e.first),
                           *(name for name in model.model_fields if name not in made.exclude),
                           *(e.name for e in made.extra if not e.first)]
    wired = wired_fields(model)
    for name, hint in hints.items():
        kind, optional = _unwrap(hint)
        extra = extras.get(name)
        required = extra.required if extra else args_source.required_arg(model.model_fields[name])
        assert optional == (not required), name
        accepts_output = "Output" in repr(kind)
        assert accepts_output == (extra.annotation.startswith("Input[") if extra else name in wired), name


def test_what_the_clouds_rules_require_the_args_require_on_the_way_down() -> None:
    """A stack file may leave these out (the rules then say how to find the value); a program's args
    can't, so a type checker reports the gap before anything runs."""
    required = {
        "AksGpuClusterArgs": "cluster", "AksClusterArgs": "deployer", "AksDeployerArgs": "object_id",
        "GkeGpuClusterArgs": "cluster", "GkeClusterArgs": "project",
    }
    for typed, key in required.items():
        assert key in getattr(spotkube, typed).__required_keys__, (typed, key)
    assert "principal_type" in spotkube.AksDeployerArgs.__required_keys__
    assert "gpu" not in spotkube.AksGpuPoolArgs.__required_keys__


def test_the_cluster_args_are_the_spec_without_what_a_cluster_component_does_not_take() -> None:
    assert CLOUDS, "the registered clouds"
    for cloud in CLOUDS.values():
        typed = getattr(spotkube, args_source.cluster_args_name(cloud))
        keys = set(typing.get_type_hints(typed))
        assert keys == {"environment", "region", "system_pool", "platform_pool", "gpu_pools", "spot_pools", "cluster",
                        "checkpoint_store"}
        assert (keys - {"checkpoint_store"}) | set(args_source.NOT_CLUSTER_ARGS) == set(cloud.spec_model.model_fields)


def test_the_schema_keeps_every_description_of_the_models(schema: dict[str, Any]) -> None:
    """The analyzer reads descriptions from the generated source: each one reaches the schema as the
    model words it (with its default), on every cloud's types."""
    assert CLOUDS, "the registered clouds"
    for cloud in CLOUDS.values():
        cluster_args = args_source.cluster_args(cloud)
        assert cluster_args, cloud.title
        for args in cluster_args:
            if args.model is cloud.spec_model:
                properties = schema["resources"][f"spotkube:index:{cloud.title.capitalize()}GpuCluster"][
                    "inputProperties"]
            elif args.name == f"{cloud.node_pool.component}Args":
                properties = schema["resources"][f"spotkube:index:{cloud.node_pool.component}"][
                    "inputProperties"]
                assert args.extra, args.name
                for extra in args.extra:
                    assert properties[to_camel(extra.name)]["description"] == extra.description, extra.name
            else:
                properties = schema["types"][f"spotkube:index:{args.name}"]["properties"]
            assert args.model.model_fields, args.name
            for name, info in args.model.model_fields.items():
                if name in args.exclude:
                    continue
                described = properties[to_camel(name)]["description"]
                assert described.startswith(" ".join((info.description or "").split())), (args.name, name)
                assert "\n" not in described, (args.name, name)


def test_a_stale_args_module_is_noticed() -> None:
    """The reference test compares each generated module with what the models generate now: a changed
    description changes the module."""
    aks = CLOUDS["aks"]
    path = args_source.args_module_path(aks)
    assert path.read_text() == args_source.cloud_args_source(aks)
    field = aks.spec_model.model_fields["region"]
    original = field.description
    try:
        field.description = "Where the cluster runs."
        assert '"""Where the cluster runs."""' in args_source.cloud_args_source(aks)
        assert args_source.cloud_args_source(aks) != path.read_text()
    finally:
        field.description = original
