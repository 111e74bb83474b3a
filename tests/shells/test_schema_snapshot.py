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

import spotkube
from spotkube.shells import provider

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
    assert "-e" in requirements and "." in requirements
