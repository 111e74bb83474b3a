"""examples/yaml/Pulumi.yaml, the Pulumi YAML consumer docs/components.md shows, against the component schema.

No Pulumi CLI or YAML runtime runs here, so the example is checked against what they would read:
every spotkube type, input, nested field and output against tests/snapshots/schema.json (another
resource's output only where the schema accepts one), every other type and property against the
installed provider SDKs, and the spotkube inputs through the components themselves under mocks.
"""

from __future__ import annotations

import importlib
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pulumi
import pytest
import yaml
from pydantic.alias_generators import to_snake

import spotkube
from spotkube.components.offline import record_program

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "yaml" / "Pulumi.yaml"
SCHEMA = json.loads((REPO / "tests" / "snapshots" / "schema.json").read_text())
PROGRAM = yaml.safe_load(EXAMPLE.read_text())
RESOURCES: dict[str, dict[str, Any]] = PROGRAM["resources"]
REFERENCE = re.compile(r"\$\{([A-Za-z0-9_-]+)(?:\.([A-Za-z0-9_]+))?\}")
SDKS = {"azure-native": "pulumi_azure_native", "gcp": "pulumi_gcp", "kubernetes": "pulumi_kubernetes"}


def references(value: Any) -> Iterator[tuple[str, str | None]]:
    """Every `${name}` or `${name.property}` in a value."""
    if isinstance(value, str):
        yield from ((m.group(1), m.group(2)) for m in REFERENCE.finditer(value))
    elif isinstance(value, dict):
        for item in value.values():
            yield from references(item)
    elif isinstance(value, list):
        for item in value:
            yield from references(item)


def wires_a_resource(value: Any) -> bool:
    return any(name in RESOURCES for name, _ in references(value))


def spotkube_problems(where: str, value: Any, prop: dict[str, Any]) -> Iterator[str]:
    """What is wrong with a value for one schema property, nested types and list items included."""
    if isinstance(value, str) and wires_a_resource(value) and prop.get("plain"):
        yield f"{where}: takes another resource's output, but the schema marks it plain"
    ref = prop.get("$ref", "")
    if ref.startswith("#/types/"):
        yield from object_problems(where, value, SCHEMA["types"][ref.removeprefix("#/types/")])
    elif prop.get("type") == "array":
        if not isinstance(value, list):
            yield f"{where}: is not a list"
            return
        for i, item in enumerate(value):
            yield from spotkube_problems(f"{where}[{i}]", item, prop["items"])


def object_problems(where: str, value: Any, definition: dict[str, Any]) -> Iterator[str]:
    if not isinstance(value, dict):
        yield f"{where}: is not an object"
        return
    properties = definition.get("inputProperties", definition.get("properties", {}))
    for key, item in value.items():
        if key not in properties:
            yield f"{where}.{key}: is not in the schema; it has {', '.join(sorted(properties))}"
        else:
            yield from spotkube_problems(f"{where}.{key}", item, properties[key])
    required = definition.get("requiredInputs", definition.get("required", []))
    yield from (f"{where}.{key}: is required" for key in required if key not in value)


def sdk_class(type_token: str) -> type:
    """The provider SDK class of a type token, short (`gcp:compute:Network`) or full."""
    if type_token == "pulumi:providers:kubernetes":
        return importlib.import_module("pulumi_kubernetes").Provider
    package, module, name = type_token.split(":")
    cls = getattr(importlib.import_module(f"{SDKS[package]}.{module.split('/')[0]}"), name)
    assert cls.pulumi_type in (type_token, f"{package}:{module}/{name[0].lower()}{name[1:]}:{name}"), type_token
    return cls


def sdk_names(cls: type) -> set[str]:
    """The schema names of a class's properties (its args class's for inputs)."""
    return {getattr(v.fget, "_pulumi_name", k) for k, v in vars(cls).items() if isinstance(v, property)}


def sdk_args_class(type_token: str) -> type:
    """The args class the SDK module of a resource exports beside it (`XArgs`, or `XInitArgs` where a
    nested type already has that name)."""
    cls = sdk_class(type_token)
    module = importlib.import_module(cls.__module__)
    (args,) = (getattr(module, n) for n in module.__all__ if n != cls.__name__ and n.endswith("Args"))
    return args


def outputs_of(name: str) -> set[str]:
    type_token = RESOURCES[name]["type"]
    if type_token.startswith("spotkube:"):
        return set(SCHEMA["resources"][type_token]["properties"])
    return sdk_names(sdk_class(type_token)) | {"id", "urn"}


@pytest.mark.parametrize("name", sorted(RESOURCES))
def test_every_resource_uses_known_types_and_properties(name: str) -> None:
    resource = RESOURCES[name]
    type_token, properties = resource["type"], resource.get("properties", {})
    if type_token.startswith("spotkube:"):
        assert type_token in SCHEMA["resources"], f"{type_token} is not a component of the schema"
        problems = list(object_problems(name, properties, SCHEMA["resources"][type_token]))
        assert not problems, "\n".join(problems)
    else:
        known = sdk_names(sdk_args_class(type_token))
        assert set(properties) <= known, f"{name}: {sorted(set(properties) - known)} are not inputs of {type_token}"


def test_every_reference_names_a_declared_config_key_or_a_real_output() -> None:
    config = set(PROGRAM.get("config", {}))
    found = list(references({"resources": RESOURCES, "outputs": PROGRAM["outputs"]}))
    assert found, "the example's ${...} references"
    for name, prop in found:
        if prop is None:
            assert name in config or name in RESOURCES, f"${{{name}}} is neither config nor a resource"
        else:
            assert name in RESOURCES, f"${{{name}.{prop}}}: no resource {name}"
            assert prop in outputs_of(name), f"${{{name}.{prop}}}: {RESOURCES[name]['type']} has no output {prop}"


def test_the_add_ons_deploy_through_the_clusters_provider_after_the_cluster() -> None:
    for name in ("gpus", "pipelines"):
        options = RESOURCES[name]["options"]
        (provider,) = (p for p, _ in references(options["providers"]))
        assert RESOURCES[provider]["type"] == "pulumi:providers:kubernetes"
        (cluster,) = (c for c, _ in references(RESOURCES[provider]["properties"]["kubeconfig"]))
        assert [c for c, _ in references(options["dependsOn"])] == [cluster]
        assert RESOURCES[cluster]["type"] == "spotkube:index:AksGpuCluster"


def test_it_wires_every_kind_of_input_that_accepts_an_output() -> None:
    """The example shows each wired cluster input that a consumer takes from another resource."""
    wired = {(name, key) for name, r in RESOURCES.items() if r["type"].startswith("spotkube:")
             for key, value in r.get("properties", {}).get("cluster", {}).items() if wires_a_resource(value)}
    assert wired == {("training", "resourceGroupName"), ("training", "authorizedIpRanges"),
                     ("inference", "network"), ("inference", "subnetwork")}


def test_it_adds_the_package_from_this_repository() -> None:
    """The package is this checkout (a local path, as `pulumi package add ../..` writes it), never a
    repository on GitHub that may belong to someone else."""
    assert PROGRAM["runtime"] == "yaml"
    assert PROGRAM["packages"] == {"spotkube": "../.."}
    plugin = (EXAMPLE.parent / PROGRAM["packages"]["spotkube"]).resolve()
    assert yaml.safe_load((plugin / "PulumiPlugin.yaml").read_text())["runtime"] == "python"
    assert (plugin / "__main__.py").is_file() and (plugin / "pyproject.toml").is_file()


# --- the spotkube inputs through the components themselves ---------------------------------------------

#: What the mocks resolve each reference to.
RESOLVED = {
    "adminGroup": "3f2b1c4d-5e6f-4a1b-8c2d-3e4f5a6b7c8d", "deployerRange": "203.0.113.0/24",
    "deployerObjectId": "c0ffee00-0000-4000-8000-000000000001",
    "gcpProject": "vision-ml-dev", "ml-rg.name": "ml-rg", "runner-egress.ipAddress": "198.51.100.7",
    "vpc.selfLink": "https://www.googleapis.com/compute/v1/projects/vision-ml-dev/global/networks/vpc",
    "nodes.selfLink": "https://www.googleapis.com/compute/v1/projects/vision-ml-dev/regions/us-central1/subnetworks/nodes",
}


def as_args(value: Any) -> Any:
    """YAML properties as Python args: snake_case keys, config as plain values, another resource's
    output as an Output (the way the component provider receives them)."""
    if isinstance(value, dict):
        return {to_snake(k): as_args(v) for k, v in value.items()}
    if isinstance(value, list):
        return [as_args(v) for v in value]
    if isinstance(value, str) and REFERENCE.search(value):
        text = REFERENCE.sub(lambda m: RESOLVED[m.group(0)[2:-1]], value)
        return pulumi.Output.from_input(text) if wires_a_resource(value) else text
    return value


def test_the_spotkube_inputs_pass_the_components_checks() -> None:
    components = {name: r for name, r in RESOURCES.items() if r["type"].startswith("spotkube:")}

    def program() -> None:
        for name, resource in components.items():
            cls = getattr(spotkube, resource["type"].rsplit(":", 1)[-1])
            cls(name, args=as_args(resource.get("properties", {})))

    recording = record_program(program, project=PROGRAM["name"], stack="dev", config={})
    registered = {(r.type, r.name) for r in recording.registrations}
    assert {(r["type"], name) for name, r in components.items()} <= registered
    aks = next(r for r in recording.registrations if r.type == "azure-native:containerservice:ManagedCluster")
    assert aks.inputs["resourceGroupName"] == "ml-rg"
    assert aks.inputs["apiServerAccessProfile"]["authorizedIPRanges"] == ["198.51.100.7/32", "203.0.113.0/24"]
    gke = next(r for r in recording.registrations if r.type == "gcp:container/cluster:Cluster")
    assert (gke.inputs["network"], gke.inputs["subnetwork"]) == (RESOLVED["vpc.selfLink"], RESOLVED["nodes.selfLink"])


def is_part_of(part: Any, whole: Any) -> bool:
    """Whether `part` is `whole` with some keys of its mappings left out."""
    if isinstance(part, dict):
        return isinstance(whole, dict) and all(k in whole and is_part_of(v, whole[k]) for k, v in part.items())
    return bool(part == whole)


def test_the_docs_show_a_part_of_the_example() -> None:
    """docs/components.md's YAML is cut from the checked example, so it can't drift from the schema."""
    page = (REPO / "docs" / "components.md").read_text()
    section = page[page.index("### Putting the device plugin and Kubeflow on the cluster"):]
    start = section.index("```yaml") + len("```yaml")
    shown = yaml.safe_load(section[start:section.index("```", start)])
    assert {"training", "gpus", "pipelines"} <= set(shown["resources"])
    for name, resource in shown["resources"].items():
        assert is_part_of(resource, RESOURCES.get(name)), f"docs/components.md's {name} differs from the example"
        if resource["type"].startswith("spotkube:"):
            definition = SCHEMA["resources"][resource["type"]]
            problems = list(object_problems(name, resource.get("properties", {}), definition))
            assert not problems, f"docs/components.md's {name} would not deploy: {problems}"
    assert is_part_of(shown["outputs"], PROGRAM["outputs"])
