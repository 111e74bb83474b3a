"""The configuration reference is generated from the spec models, and everything generated is in step.

README.md's reference tables, Pulumi.yaml's `config:` block, schemas/stack.schema.json and the stack
files' modelines must be what `python -m spotkube.cli.reference write` would write; every shipped
stack must satisfy the schema and broken ones must not; the args TypedDicts of the components must
have the keys, types and required keys of the models they mirror.
"""

import copy
import json
import subprocess
import sys
import typing
from pathlib import Path
from typing import Any, NotRequired, TypedDict

import jsonschema
import pytest
import yaml
from pydantic import BaseModel, ValidationError

from spotkube.clouds import CLOUDS
from spotkube.platform import reference, spec
from spotkube.shell import args as public_args

REPO = Path(__file__).resolve().parents[2]
STACKS = sorted(REPO.glob(reference.STACK_GLOB))
GENERATED_PATHS = [REPO / "README.md", REPO / "Pulumi.yaml", REPO / reference.SCHEMA_PATH, *STACKS]


def _relative(path: Path) -> str:
    return str(path.relative_to(REPO))


@pytest.fixture(scope="module")
def generated() -> dict[Path, str]:
    return reference.generated_files(REPO, CLOUDS)


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    return json.loads((REPO / reference.SCHEMA_PATH).read_text())


@pytest.fixture(scope="module")
def validator(schema: dict[str, Any]) -> jsonschema.Draft7Validator:
    jsonschema.Draft7Validator.check_schema(schema)
    return jsonschema.Draft7Validator(schema)


def _stack(name: str = "aks-dev-uksouth") -> dict[str, Any]:
    return yaml.safe_load((REPO / "stacks" / f"Pulumi.{name}.yaml").read_text())


def _errors(validator: jsonschema.Draft7Validator, document: Any) -> list[str]:
    return [f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}" for e in validator.iter_errors(document)]


# --- generated files are up to date ---------------------------------------------------------------


def test_every_generated_file_is_checked(generated: dict[Path, str]) -> None:
    assert STACKS, "no stacks/Pulumi.*.yaml found"
    assert set(generated) == set(GENERATED_PATHS)


@pytest.mark.parametrize("path", GENERATED_PATHS, ids=_relative)
def test_generated_file_is_up_to_date(path: Path, generated: dict[Path, str]) -> None:
    assert path.is_file(), f"{_relative(path)} is missing; run `{reference.REGENERATE}`"
    on_disk, expected = path.read_text(), generated[path]
    if on_disk != expected:
        first = next(i for i, (a, b) in enumerate(zip([*on_disk.splitlines(), ""], [*expected.splitlines(), ""],
                                                      strict=False)) if a != b)
        pytest.fail(f"{_relative(path)} is out of date (first difference at line {first + 1}); after changing the "
                    f"models in spotkube.platform.spec run `{reference.REGENERATE}` and review the diff")


def test_a_stale_reference_is_noticed(generated: dict[Path, str]) -> None:
    """The up-to-date check compares whole texts: an edited table row between the markers is undone."""
    readme = (REPO / "README.md").read_text()
    edited = readme.replace("| `cloud` |", "| `cloud` (edited) |", 1)
    assert edited != readme
    regenerated = reference.replace_between(edited, reference.README_START, reference.README_END,
                                            reference.readme_reference(CLOUDS), "README.md")
    assert regenerated == generated[REPO / "README.md"] != edited


def test_markers_are_required() -> None:
    with pytest.raises(ValueError, match="reference:start"):
        reference.replace_between("no markers here\n", reference.README_START, reference.README_END, "x\n", "README")


def test_modeline_is_the_first_line_and_replaces_an_old_one() -> None:
    for path in STACKS:
        assert path.read_text().splitlines()[0] == reference.MODELINE, _relative(path)
    old = "# yaml-language-server: $schema=old.json\nconfig: {}\n"
    assert reference.with_modeline(old) == f"{reference.MODELINE}\nconfig: {{}}\n"
    assert reference.with_modeline(reference.with_modeline(old)) == reference.with_modeline(old)
    schema_file = (REPO / "stacks" / reference.MODELINE.split("$schema=", 1)[1]).resolve()
    assert schema_file == (REPO / reference.SCHEMA_PATH).resolve()


# --- the models are a complete source -------------------------------------------------------------


@pytest.mark.parametrize("model", [spec.PlatformSpec, *(s.model for s in reference.sections())],
                         ids=lambda m: m.__name__)
def test_every_field_is_described(model: type[BaseModel]) -> None:
    missing = [name for name, field in model.model_fields.items() if not (field.description or "").strip()]
    assert not missing, f"{model.__name__}: give these fields a description= in spotkube.platform.spec: {missing}"


def test_readme_has_a_table_for_every_nested_model() -> None:
    text = reference.readme_reference(CLOUDS)
    paths = [s.path for s in reference.sections()]
    assert {"systemPool", "gpuPools[]", "gpuPools[].gpu", "cluster.deployer", "cost.workloads[]"} <= set(paths)
    for path in paths:
        assert f"**`{path}`**" in text
    for key in spec.CONFIG_KEYS:
        assert f"| `{key}` |" in text


def test_pulumi_yaml_declares_every_key_with_its_default() -> None:
    config = yaml.safe_load((REPO / "Pulumi.yaml").read_text())["config"]
    assert list(config) == list(spec.CONFIG_KEYS)
    assert config == reference.pulumi_config()
    for key, declaration in config.items():
        assert declaration["type"] in {"string", "integer", "boolean", "array", "object"}, key
        assert declaration["description"], key
        assert "default" in declaration, key
    # The project defaults alone make a valid spec: a stack that sets nothing is a working platform.
    defaults = {key: declaration["default"] for key, declaration in config.items()}
    assert spec.PlatformSpec.model_validate(defaults).cloud == "aks"


# --- the stack schema -----------------------------------------------------------------------------


@pytest.mark.parametrize("path", STACKS, ids=_relative)
def test_shipped_stack_matches_the_schema(path: Path, validator: jsonschema.Draft7Validator) -> None:
    assert not _errors(validator, yaml.safe_load(path.read_text()))


def test_check_jsonschema_accepts_the_shipped_stacks() -> None:
    """The same check an editor or CI hook runs, on the YAML files themselves."""
    result = subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--schemafile", str(REPO / reference.SCHEMA_PATH),
         *map(str, STACKS)], capture_output=True, text=True, check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def _set(document: dict[str, Any], path: list[str | int], value: Any) -> dict[str, Any]:
    out = copy.deepcopy(document)
    target: Any = out
    for part in path[:-1]:
        target = target[part]
    target[path[-1]] = value
    return out


BROKEN = {
    "unknown key in a GPU pool": (["config", "spotkube:gpuPools", 0, "maxPrise"], 0.5),
    "wrong type in a GPU pool": (["config", "spotkube:gpuPools", 0, "min"], "two"),
    "negative node count": (["config", "spotkube:gpuPools", 0, "max"], -1),
    "unknown capacity": (["config", "spotkube:spotPools", 0, "capacity"], "cheap"),
    "unknown top-level key": (["config", "spotkube:gpuPool"], []),
    "unknown key without namespace": (["config", "gpuPool"], []),
    "bad value without namespace": (["config", "cloud"], "azure"),
    "unknown cloud": (["config", "spotkube:cloud"], "azure"),
    "bad environment name": (["config", "spotkube:environment"], "Prod"),
    "pool list instead of object": (["config", "spotkube:systemPool"], []),
    "unknown key in a nested setting": (["config", "spotkube:cluster", "deployer", "logon"], "spn"),
    "unknown key at the root": (["configs"], {}),
}


@pytest.mark.parametrize("path_value", BROKEN.values(), ids=list(BROKEN))
def test_broken_stack_is_rejected(
    path_value: tuple[list[str | int], Any], validator: jsonschema.Draft7Validator
) -> None:
    path, value = path_value
    document = _set(_stack(), path, value)
    assert _errors(validator, document), f"the schema accepted {path} = {value!r}"
    if path[0] == "config" and str(path[1]).startswith("spotkube:"):
        values = {k.split(":", 1)[1]: v for k, v in document["config"].items()}
        with pytest.raises(ValidationError):
            spec.PlatformSpec.model_validate(values)  # the schema refuses only what the models refuse


ACCEPTED = {
    "another provider's key": (["config", "azure-native:location"], "uksouth"),
    "a secret of another namespace": (["config", "gcp:credentials"], {"secure": "v1:abc"}),
    "a Pulumi key": (["config", "pulumi:tags"], {"team": "ml"}),
    "a key without namespace": (["config", "cloud"], "gke"),
    "the passphrase salt": (["encryptionsalt"], "v1:abc"),
    "the secrets provider": (["secretsprovider"], "azurekeyvault://vault.vault.azure.net/keys/pulumi"),
    "the encrypted key": (["encryptedkey"], "abc"),
    "ESC environments": (["environment"], ["ml/dev"]),
    "a nullable setting left null": (["config", "spotkube:cluster", "private"], None),
}


@pytest.mark.parametrize("path_value", ACCEPTED.values(), ids=list(ACCEPTED))
def test_valid_stack_file_content_is_accepted(
    path_value: tuple[list[str | int], Any], validator: jsonschema.Draft7Validator
) -> None:
    path, value = path_value
    assert not _errors(validator, _set(_stack(), path, value))


def test_missing_required_pool_keys_are_reported(validator: jsonschema.Draft7Validator) -> None:
    document = _stack()
    del document["config"]["spotkube:gpuPools"][0]["machine"]
    assert any("'machine' is a required property" in e for e in _errors(validator, document))


# --- the args TypedDicts mirror the models --------------------------------------------------------

PAIRS: dict[type, type[BaseModel]] = {
    public_args.GpuArgs: spec.GpuSpec,
    public_args.SystemPoolArgs: spec.SystemPool,
    public_args.PlatformPoolArgs: spec.PlatformPool,
    public_args.SpotPoolArgs: spec.SpotPool,
    public_args.GpuPoolArgs: spec.GpuPool,
    public_args.AutoscalerArgs: spec.AutoscalerSettings,
    public_args.DeployerArgs: spec.DeployerSettings,
    public_args.ClusterArgs: spec.ClusterSettings,
    public_args.GpuClusterArgs: spec.PlatformSpec,
    public_args.NvidiaDevicePluginArgs: spec.DevicePluginSettings,
    public_args.DevicePluginSettingsArgs: spec.DevicePluginSettings,
    public_args.KubeflowPipelinesArgs: spec.KubeflowSettings,
}
#: The intended differences: (keys only the model has, keys only the args have).
DIFFERENCES: dict[type, tuple[tuple[str, ...], tuple[str, ...]]] = {
    # Each cluster component is one cloud; the add-ons, the cost scenario and the plan's acknowledged
    # warnings are separate.
    public_args.GpuClusterArgs: (("cloud", "cost", "device_plugin", "kubeflow", "acknowledgements"), ()),
    # The component is the switch; it needs the cloud and the GPU pools' own taints instead.
    public_args.NvidiaDevicePluginArgs: (("enabled",), ("cloud", "extra_taints")),
    # NvidiaDevicePlugin.for_cluster: the cluster gives the cloud and the taints.
    public_args.DevicePluginSettingsArgs: (("enabled",), ()),
    public_args.KubeflowPipelinesArgs: (("enabled",), ()),
}


@pytest.mark.parametrize("typed_dict", list(PAIRS), ids=lambda t: t.__name__)
def test_args_mirror_their_model(typed_dict: type) -> None:
    only_in_model, only_in_args = DIFFERENCES.get(typed_dict, ((), ()))
    problems = reference.typed_dict_mismatches(typed_dict, PAIRS[typed_dict], PAIRS, only_in_model, only_in_args)
    assert not problems, "\n".join(problems)


def test_every_public_args_typed_dict_is_checked() -> None:
    typed_dicts = {obj for obj in vars(public_args).values() if typing.is_typeddict(obj)}
    outputs = {public_args.PoolContractOutput, public_args.PoolContractGpu}  # outputs: no model to mirror
    assert typed_dicts - outputs == set(PAIRS)


# Class syntax needs real annotations: this module has no `from __future__ import annotations`, under which
# Python 3.11's TypedDict can't see NotRequired.
class _DriftedPoolArgs(TypedDict):
    name: NotRequired[str]
    machine: str
    min: NotRequired[str]
    gpu: NotRequired[public_args.GpuArgs]
    max_nodes: NotRequired[int]


def test_the_args_check_reports_drift() -> None:
    problems = reference.typed_dict_mismatches(_DriftedPoolArgs, spec.GpuPool, PAIRS, only_in_model=("machine",))
    text = "\n".join(problems)
    assert "the model has 'max'" in text
    assert "the args have 'max_nodes'" in text
    assert "'min' is string in the args and integer in the model" in text
    assert "'name' is required in the model and optional in the args" in text
    assert "'machine' is listed as only in the model, but isn't" in text
    assert "'gpu'" not in text  # GpuArgs is GpuSpec's mirror: same shape
