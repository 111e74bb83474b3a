"""The cross-language API: the schema `pulumi package add` generates SDKs from, against a snapshot.

A renamed, removed or retyped input breaks every consumer in every language, so the inferred
schema is checked in (tests/snapshots/schema.json) and any change to it shows up in review.
After an intended change, regenerate it with `make schema` (SPOTKUBE_UPDATE_SNAPSHOTS=1).
"""

from __future__ import annotations

import inspect
import json
import os
import runpy
from pathlib import Path
from typing import Any

import pulumi
import pytest
import yaml
from pydantic.alias_generators import to_camel

import spotkube
from spotkube.clouds import CLOUDS
from spotkube.components import provider
from spotkube.shell.common import wired_cluster_args

REPO = Path(__file__).resolve().parents[2]
SNAPSHOT = REPO / "tests" / "snapshots" / "schema.json"
UPDATE = os.environ.get("SPOTKUBE_UPDATE_SNAPSHOTS") == "1"


def _changes(old: Any, new: Any, path: str = "") -> list[str]:
    """Where two JSON documents differ, as readable paths (the first few are enough to act on)."""
    if isinstance(old, dict) and isinstance(new, dict):
        out = [f"{path}/{k}: removed" for k in old.keys() - new.keys()]
        out += [f"{path}/{k}: added" for k in new.keys() - old.keys()]
        for key in old.keys() & new.keys():
            out += _changes(old[key], new[key], f"{path}/{key}")
        return sorted(out)
    return [] if old == new else [f"{path}: {old!r} -> {new!r}"]


@pytest.mark.parametrize("component", provider.components(), ids=lambda c: c.__name__)
def test_component_args_are_real_types(component: type[pulumi.ComponentResource]) -> None:
    """The analyzer needs `args` annotated with a real TypedDict: a module with
    `from __future__ import annotations` hands it a string and schema inference crashes."""
    parameters = inspect.signature(component.__init__).parameters
    assert "args" in parameters, f"{component.__name__}.__init__ must take `args` (Pulumi's analyzer needs it)"
    annotation = parameters["args"].annotation
    assert not isinstance(annotation, str), (
        f"{component.__module__} annotates {component.__name__}'s args as the string {annotation!r}; "
        "remove `from __future__ import annotations` from modules that define components or their args"
    )


def test_every_exported_component_is_hosted() -> None:
    exported = {name for name in spotkube.__all__
                if inspect.isclass(obj := getattr(spotkube, name)) and issubclass(obj, pulumi.ComponentResource)}
    assert {"AksGpuCluster", "GkeGpuCluster"} <= exported
    assert {c.__name__ for c in provider.components()} == exported


def test_schema_matches_the_snapshot() -> None:
    schema = json.loads(provider.schema())
    assert schema["name"] == "spotkube" and schema["version"] == spotkube.__version__
    assert provider.components(), "the provider's components"
    for component in provider.components():
        assert f"spotkube:index:{component.__name__}" in schema["resources"]
    if UPDATE:
        SNAPSHOT.parent.mkdir(parents=True, exist_ok=True)
        SNAPSHOT.write_text(json.dumps(schema, indent=2, sort_keys=True) + "\n")
    assert SNAPSHOT.is_file(), "no schema snapshot yet; run `make schema`"
    changes = _changes(json.loads(SNAPSHOT.read_text()), schema)
    assert not changes, (
        "the component schema changed (this breaks SDKs in other languages); if intended, run `make schema` "
        "and review tests/snapshots/schema.json:\n" + "\n".join(changes[:20])
    )


def test_the_plugin_manifest_runs_the_provider() -> None:
    """`pulumi package add` needs PulumiPlugin.yaml (runtime python) and a root __main__.py."""
    manifest = yaml.safe_load((REPO / "PulumiPlugin.yaml").read_text())
    assert manifest == {"runtime": "python"}
    entry = runpy.run_path(str(REPO / "__main__.py"), run_name="imported-by-test")  # not "__main__": no host
    assert entry["main"] is provider.main
    requirements = (REPO / "requirements.txt").read_text().split()
    assert "-e" in requirements and ".[all]" in requirements, "the provider serves both clouds' components"


def _accepting_outputs(schema: dict[str, Any]) -> set[str]:
    """Every input position of the schema that is not `plain` (an SDK types it `Input<T>`), as
    `Type.property` with `[]` for a list's items, walked from the components' inputs."""
    found: set[str] = set()
    seen: set[str] = set()

    def walk(owner: str, name: str, prop: dict[str, Any]) -> None:
        if not prop.get("plain"):
            found.add(f"{owner}.{name}")
        if "items" in prop:
            walk(owner, f"{name}[]", {**prop["items"], "plain": prop["items"].get("plain")})
        ref = prop.get("$ref", "")
        if ref.startswith("#/types/") and ref not in seen:
            seen.add(ref)
            token = ref.removeprefix("#/types/")
            for key, inner in schema["types"][token]["properties"].items():
                walk(token.rsplit(":", 1)[-1], key, inner)

    for token, resource in schema["resources"].items():
        for key, prop in resource["inputProperties"].items():
            walk(token.rsplit(":", 1)[-1], key, prop)
    return found


def test_the_snapshot_marks_exactly_the_wired_inputs_as_accepting_outputs() -> None:
    """Consumers in other languages may wire these from other resources; every other input decides
    the plan, which is checked before anything is registered, so it stays plain."""
    snapshot = json.loads(SNAPSHOT.read_text())
    assert _accepting_outputs(snapshot) == {
        "AksClusterArgs.resourceGroupName",
        "AksClusterArgs.adminGroupObjectIds[]",
        "AksClusterArgs.authorizedIpRanges[]",
        "GkeClusterArgs.project",
        "GkeClusterArgs.network",
        "GkeClusterArgs.subnetwork",
        "GkeClusterArgs.authorizedIpRanges[]",
        "AksGpuNodePool.clusterId",
        "AksGpuNodePool.vnetSubnetId",
        "AksGpuNodePool.podSubnetId",
        "GkeGpuNodePool.clusterId",
        "GkeGpuNodePool.project",
        "GkeGpuNodePool.serviceAccount",
    }
    # Each cluster component reaches its own cluster args, plainly.
    for component, prefix in (("AksGpuCluster", "Aks"), ("GkeGpuCluster", "Gke")):
        cluster = snapshot["resources"][f"spotkube:index:{component}"]["inputProperties"]["cluster"]
        assert cluster == {**cluster, "$ref": f"#/types/spotkube:index:{prefix}ClusterArgs", "plain": True}


def test_the_wired_keys_are_the_ones_the_schema_marks() -> None:
    """What the cloud's spec marks `Wired` (what the shell separates from the plain values) and the
    schema agree."""
    wired = {f"{cloud.capitalize()}ClusterArgs.{to_camel(key)}{'[]' if is_list else ''}"
             for cloud in CLOUDS for key, (is_list, _) in wired_cluster_args(cloud).items()}
    # A pool component's target keys typed `Input[...]` (the cluster it joins) may be outputs too.
    targets = {f"{facts.component}.{to_camel(key.name)}" for facts in (p.node_pool for p in CLOUDS.values())
               for key in facts.target if key.annotation.startswith("Input[")}
    assert targets
    assert wired | targets == _accepting_outputs(json.loads(provider.schema()))


def _types_of(schema: dict[str, Any], token: str) -> dict[str, dict[str, Any]]:
    """Every type a resource's inputs reach, by token, following `$ref`s (list items included)."""
    found: dict[str, dict[str, Any]] = {}

    def walk(prop: dict[str, Any]) -> None:
        ref = prop.get("$ref", "") or prop.get("items", {}).get("$ref", "")
        if ref.startswith("#/types/") and ref.removeprefix("#/types/") not in found:
            inner = ref.removeprefix("#/types/")
            found[inner] = schema["types"][inner]
            for nested in found[inner]["properties"].values():
                walk(nested)

    for prop in schema["resources"][token]["inputProperties"].values():
        walk(prop)
    return found


#: Fields only one cloud has, as `Type.field` without the cloud's prefix: an SDK user of the other
#: cloud's component must never be offered them (`network` alone is the deployer's on both clouds).
AKS_ONLY = {"GpuPoolArgs.maxPrice", "GpuPoolArgs.evictionPolicy", "SpotPoolArgs.maxPrice",
            "SpotPoolArgs.evictionPolicy", "ClusterArgs.resourceGroupName", "ClusterLogsArgs.retentionDays",
            "ClusterLogsArgs.workspaceId",
            "ClusterArgs.localAccountsDisabled", "ClusterArgs.adminGroupObjectIds", "DeployerArgs.login",
            "DeployerArgs.grantPropagationWait", "AutoscalerArgs.expander", "AutoscalerArgs.scanInterval",
            "AutoscalerArgs.maxNodeProvisionTime", "AutoscalerArgs.newPodScaleUpDelay",
            "AutoscalerArgs.scaleDownUnneededTime", "AutoscalerArgs.scaleDownDelayAfterAdd",
            "AutoscalerArgs.maxGracefulTerminationSec", "AutoscalerArgs.skipNodesWithLocalStorage"}
GKE_ONLY = {"ClusterArgs.project", "ClusterArgs.network", "ClusterArgs.subnetwork", "ClusterArgs.egress",
            "ClusterArgs.dnsEndpoint", "GpuPoolArgs.gpuDriver", "AutoscalerArgs.profile", "GpuSharingArgs.strategy",
            "GpuSharingArgs.clientsPerGpu"}


@pytest.mark.parametrize(("component", "own", "foreign"), [
    ("AksGpuCluster", AKS_ONLY, GKE_ONLY), ("GkeGpuCluster", GKE_ONLY, AKS_ONLY),
])
def test_each_cluster_component_has_its_own_types_without_the_other_cloud_s_fields(
    component: str, own: set[str], foreign: set[str]
) -> None:
    schema = json.loads(provider.schema())
    reached = _types_of(schema, f"spotkube:index:{component}")
    prefix = f"spotkube:index:{component.removesuffix('GpuCluster')}"
    assert reached and all(token.startswith(prefix) for token in reached), sorted(reached)
    fields = {f"{token.removeprefix(prefix)}.{key}" for token, t in reached.items() for key in t["properties"]}
    assert not fields & foreign, f"{component} offers the other cloud's {sorted(fields & foreign)}"
    assert own <= fields, f"{component} lacks its own {sorted(own - fields)}"
    # Neither is a field of the component's other types, under another name.
    bare = {key.split(".")[1] for key in foreign} - {"network"}
    assert not bare & {key.split(".")[1] for key in fields}


def test_the_cluster_components_share_no_type() -> None:
    schema = json.loads(provider.schema())
    aks, gke = _types_of(schema, "spotkube:index:AksGpuCluster"), _types_of(schema, "spotkube:index:GkeGpuCluster")
    assert aks and gke and not set(aks) & set(gke)
