"""The configuration reference is generated from the spec models, and everything generated is in step.

docs/configuration.md's reference tables, Pulumi.yaml's `config:` block, schemas/stack.schema.json, the stack
files' modelines and the components' args modules must be what `python -m spotkube.cli.reference
write` would write; every shipped stack must satisfy the schema and broken ones must not, and a
stack is offered and accepted only its cloud's fields.
"""

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from pydantic import BaseModel

from spotkube.clouds import CLOUDS, parse_spec
from spotkube.platform import config_types, reference, spec
from spotkube.platform.errors import SpecError

REPO = Path(__file__).resolve().parents[2]
STACKS = sorted(REPO.glob(reference.STACK_GLOB))
ARGS_MODULES = [*(REPO / "components/spotkube/clouds" / cloud / "args.py" for cloud in CLOUDS),
                REPO / "components/spotkube/components/args.py", REPO / "components/spotkube/clouds/exports.py"]
GENERATED_PATHS = [REPO / reference.REFERENCE_PATH, REPO / reference.COVERAGE_PATH, REPO / "Pulumi.yaml",
                   REPO / reference.SCHEMA_PATH, *STACKS, *ARGS_MODULES]


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
                    f"spec models (spotkube.platform.spec, spotkube.clouds.<cloud>.spec) run `{reference.REGENERATE}` "
                    "and review the diff")


def test_a_stale_reference_is_noticed(generated: dict[Path, str]) -> None:
    """The up-to-date check compares whole texts: an edited table row between the markers is undone."""
    page = REPO / reference.REFERENCE_PATH
    text = page.read_text()
    edited = text.replace("| `cloud` |", "| `cloud` (edited) |", 1)
    assert edited != text
    regenerated = reference.replace_between(edited, reference.README_START, reference.README_END,
                                            reference.readme_reference(CLOUDS), reference.REFERENCE_PATH)
    assert regenerated == generated[page] != edited


def test_markers_are_required() -> None:
    with pytest.raises(ValueError, match="reference:start"):
        reference.replace_between("no markers here\n", reference.README_START, reference.README_END, "x\n", "README")


def test_modeline_is_the_first_line_and_replaces_an_old_one() -> None:
    assert STACKS, "the shipped stack files"
    for path in STACKS:
        assert path.read_text().splitlines()[0] == reference.MODELINE, _relative(path)
    old = "# yaml-language-server: $schema=old.json\nconfig: {}\n"
    assert reference.with_modeline(old) == f"{reference.MODELINE}\nconfig: {{}}\n"
    assert reference.with_modeline(reference.with_modeline(old)) == reference.with_modeline(old)
    schema_file = (REPO / "stacks" / reference.MODELINE.split("$schema=", 1)[1]).resolve()
    assert schema_file == (REPO / reference.SCHEMA_PATH).resolve()


# --- the models are a complete source -------------------------------------------------------------


SECTION_MODELS = [m for by_cloud in reference.cloud_sections(CLOUDS).values() for m in by_cloud.values()]
MODELS = list(dict.fromkeys([spec.PlatformSpec, *(p.spec_model for p in CLOUDS.values()), *SECTION_MODELS]))


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_every_field_is_described(model: type[BaseModel]) -> None:
    missing = [name for name, field in model.model_fields.items() if not (field.description or "").strip()]
    assert not missing, f"{model.__name__}: give these fields a description= in spotkube.platform.spec: {missing}"


def test_readme_has_a_table_for_every_nested_model() -> None:
    text = reference.readme_reference(CLOUDS)
    paths = reference.cloud_sections(CLOUDS)
    assert {"systemPool", "gpuPools[]", "gpuPools[].gpu", "cluster.deployer", "cost.workloads[]"} <= set(paths)
    for path, by_cloud in paths.items():
        assert f"**`{path}`**" in text
        assert by_cloud, path
        if len(set(by_cloud.values())) > 1:  # the clouds' fields differ: a table per cloud
            for cloud in by_cloud:
                assert f"**`{path}`** ({CLOUDS[cloud].title}): " in text, (path, cloud)
    assert spec.CONFIG_KEYS, "the spec's config keys"
    for key in spec.CONFIG_KEYS:
        assert f"| `{key}` |" in text


def _table(text: str, heading: str) -> str:
    """The rows of the README table under `heading`."""
    after = text.split(heading, 1)[1]
    return after.split("\n\n**", 1)[0]


def test_each_cloud_s_table_has_only_its_own_fields() -> None:
    text = reference.readme_reference(CLOUDS)
    aks, gke = _table(text, "**`cluster`** (AKS): "), _table(text, "**`cluster`** (GKE): ")
    for key in ("resourceGroupName", "localAccountsDisabled", "adminGroupObjectIds"):
        assert f"| `{key}` |" in aks and f"| `{key}` |" not in gke, key
    for key in ("project", "subnetwork", "egress", "dnsEndpoint"):
        assert f"| `{key}` |" in gke and f"| `{key}` |" not in aks, key
    aks_pool, gke_pool = _table(text, "**`gpuPools[]`** (AKS): "), _table(text, "**`gpuPools[]`** (GKE): ")
    assert "| `maxPrice` |" in aks_pool and "| `maxPrice` |" not in gke_pool
    assert "| `gpuDriver` |" in gke_pool and "| `gpuDriver` |" not in aks_pool
    # A default that follows from the cloud is shown for the cloud the table is about.
    assert "`Standard_D4s_v3`" in _table(text, "**`systemPool`** (AKS): ")
    assert "`e2-standard-4`" in _table(text, "**`systemPool`** (GKE): ")
    assert "AKS: " not in text and "GKE: " not in text, "a description still speaks of both clouds"


def test_each_keys_pulumi_type_is_the_type_its_json_schema_gives() -> None:
    """The program reads a key's config type from the field's Python type (cheap, on every run); it
    must be what the spec's JSON Schema says, which Pulumi.yaml's declarations once came from."""
    schema = spec.PlatformSpec.model_json_schema(by_alias=True)
    types = config_types.config_types()
    assert types, "the keys' config types"
    for key, kind in types.items():
        field = schema["properties"][key]
        assert kind == ("object" if "$ref" in field else field["type"]), key


def test_every_spec_model_builds() -> None:
    """The spec models build their validators on first use; a model that can't be built (a validator
    naming a field it lacks, a type pydantic can't handle) fails here, not in a user's stack."""
    assert {p.spec_model for p in CLOUDS.values()} <= set(spec.PlatformSpec.__subclasses__())
    models, seen = [spec._Model], set()
    while models:
        model = models.pop()
        seen.add(model)
        assert model.model_rebuild(force=True) is not False, model
        assert model.__pydantic_complete__, model
        models += [m for m in model.__subclasses__() if m not in seen]
    assert len(seen) > 40


def test_pulumi_yaml_declares_every_key_with_its_default() -> None:
    config = yaml.safe_load((REPO / "Pulumi.yaml").read_text())["config"]
    assert list(config) == list(spec.CONFIG_KEYS)
    assert config == reference.pulumi_config(CLOUDS)
    for key, declaration in config.items():
        assert declaration["type"] in {"string", "integer", "boolean", "array", "object"}, key
        assert declaration["description"], key
        assert "default" in declaration, key
    # The project defaults alone make a valid spec: a stack that sets nothing is a working platform.
    defaults = {key: declaration["default"] for key, declaration in config.items()}
    assert CLOUDS[defaults["cloud"]].spec_model.model_validate(defaults).cloud == "aks"
    # An object's description names the fields of each cloud where they differ.
    assert "Fields on AKS: " in config["cluster"]["description"]
    assert "Fields on GKE: " in config["cluster"]["description"]
    assert "resourceGroupName" in config["cluster"]["description"].split("Fields on GKE: ")[0]
    assert "resourceGroupName" not in config["cluster"]["description"].split("Fields on GKE: ")[1]


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
        with pytest.raises(SpecError):
            parse_spec(values, "stack")  # the schema refuses only what the models refuse


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


def _other_cloud(document: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    return {**document, "config": config}


GKE_CONFIG = {"spotkube:cloud": "gke", "spotkube:environment": "dev", "spotkube:region": "us-central1",
              "spotkube:cluster": {"project": "my-ml-platform", "dnsEndpoint": True, "egress": "own"},
              "spotkube:gpuPools": [{"name": "l4", "machine": "g2-standard-8", "gpuDriver": "LATEST",
                                     "capacity": "preemptible"}]}
#: A setting of the other cloud, for a stack of each cloud: the schema offers and accepts only the
#: stack's cloud's fields (path under config, value).
OTHER_CLOUDS_SETTINGS = {
    "an AKS stack with a GKE project": ("aks", ["spotkube:cluster", "project"], "my-ml-platform"),
    "an AKS stack with a GKE DNS endpoint": ("aks", ["spotkube:cluster", "dnsEndpoint"], True),
    "an AKS stack with a GKE driver": ("aks", ["spotkube:gpuPools", 0, "gpuDriver"], "LATEST"),
    "an AKS stack with preemptible capacity": ("aks", ["spotkube:gpuPools", 0, "capacity"], "preemptible"),
    "a bare AKS stack with a GKE project": ("bare", ["spotkube:cluster", "project"], "my-ml-platform"),
    "a GKE stack with an AKS max price": ("gke", ["spotkube:gpuPools", 0, "maxPrice"], 0.5),
    "a GKE stack with an AKS resource group": ("gke", ["spotkube:cluster", "resourceGroupName"], "rg"),
    "a GKE stack with an AKS expander": ("gke", ["spotkube:cluster", "autoscaler"], {"expander": "priority"}),
    "a GKE stack with the azure policy": ("gke", ["spotkube:cluster", "networkPolicy"], "azure"),
    "a GKE stack with an AKS key spelt bare": ("gke-bare", ["cluster", "localAccountsDisabled"], True),
}


def _of_cloud(cloud: str) -> dict[str, Any]:
    if cloud == "aks":
        return _stack()
    if cloud == "bare":  # no cloud named: Pulumi.yaml's default, aks
        document = _stack()
        del document["config"]["spotkube:cloud"]
        return document
    config = copy.deepcopy(GKE_CONFIG)
    if cloud == "gke-bare":
        config = {key.removeprefix("spotkube:"): value for key, value in config.items()}
    return {"config": config}


def test_a_gke_stack_with_gke_settings_is_accepted(validator: jsonschema.Draft7Validator) -> None:
    for cloud in ("gke", "gke-bare"):
        assert not _errors(validator, _of_cloud(cloud)), cloud
    assert parse_spec({k.removeprefix("spotkube:"): v for k, v in GKE_CONFIG.items()}, "stack").cloud == "gke"


@pytest.mark.parametrize("case", OTHER_CLOUDS_SETTINGS.values(), ids=list(OTHER_CLOUDS_SETTINGS))
def test_another_cloud_s_setting_is_refused_by_the_schema(
    case: tuple[str, list[str | int], Any], validator: jsonschema.Draft7Validator
) -> None:
    cloud, path, value = case
    document = _of_cloud(cloud)
    assert not _errors(validator, document)
    assert _errors(validator, _set(document, ["config", *path], value)), f"the schema accepted {path} on {cloud}"


def test_the_schema_has_a_branch_per_cloud(schema: dict[str, Any]) -> None:
    branches = schema["allOf"]
    assert len(branches) == len(CLOUDS)
    for branch, (cloud, profile) in zip(branches, CLOUDS.items(), strict=True):
        config = branch["then"]["properties"]["config"]["properties"]
        own = profile.spec_model.model_fields["cluster"].annotation.__name__
        assert config["spotkube:cluster"] == {"allOf": [{"$ref": f"#/definitions/{own}"}],
                                              **{k: v for k, v in config["spotkube:cluster"].items()
                                                 if k != "allOf"}}, cloud


def test_missing_required_pool_keys_are_reported(validator: jsonschema.Draft7Validator) -> None:
    document = _stack()
    del document["config"]["spotkube:gpuPools"][0]["machine"]
    assert any("'machine' is a required property" in e for e in _errors(validator, document))
