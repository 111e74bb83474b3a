"""The public args TypedDicts stay in step with the spec models and stay analyzer-friendly."""

from __future__ import annotations

import json

import pulumi
from pulumi.provider.experimental.component import ComponentProvider

import spotkube


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
