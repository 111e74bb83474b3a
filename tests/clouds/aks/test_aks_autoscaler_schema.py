"""Every shipped AKS stack's autoscaler profile is one the provider accepts.

The installed azure-native SDK ships no schema.json, so its own input type is the schema: the
`ManagedClusterPropertiesAutoScalerProfileArgs` class names every field (its getters carry the wire
name) with its type, and each getter's docstring states the value's format. A key the SDK doesn't
know, a value of the wrong type or a duration in a unit AKS refuses fails here, not at deploy time.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

from spotkube.clouds.aks.profile import AUTOSCALER_FORMATS
from spotkube.clouds.aks.resources import CLUSTER_TYPE
from spotkube.clouds.aks.spec import AksAutoscalerSettings as AutoscalerSettings
from spotkube.components.offline import StackRun
from spotkube.platform.project import Project
from spotkube.platform.spec import alias


def sdk_fields() -> dict[str, tuple[type, str]]:
    """Wire name -> (Python type, docstring) of every field the SDK's input type declares."""
    # Imported here, not at collection: the SDK module is large, and loading it while pytest
    # collects trips CPython 3.11's AST recursion check in modules collected after it.
    from pulumi_azure_native.containerservice import ManagedClusterPropertiesAutoScalerProfileArgs as sdk_type

    fields = {}
    for attribute in vars(sdk_type).values():
        if not isinstance(attribute, property):
            continue
        getter = attribute.fget
        wire = getattr(getter, "_pulumi_name", getter.__name__)
        kind = bool if "bool" in str(getter.__annotations__["return"]) else str
        fields[wire] = (kind, " ".join((attribute.__doc__ or "").split()))
    return fields


#: The formats the SDK's docstrings state, as patterns. `scanInterval` also takes the `s` suffix that
#: Azure's own REST API examples and the az CLI use ("scan-interval": "20s").
DOCUMENTED_FORMATS = [
    ("Values must be an integer followed by an 'm'", r"^[0-9]+m$"),
    ("Values must be an integer number of seconds", r"^[0-9]+s?$"),
    ("Values must be an integer followed by a unit", r"^[0-9]+(s|m|h)$"),
    ("Valid values are 'true' and 'false'", r"^(true|false)$"),
    ("The default is true.", r"^(true|false)$"),
    ("The default is 600.", r"^[0-9]+$"),
]


def documented_pattern(doc: str) -> str | None:
    return next((pattern for phrase, pattern in DOCUMENTED_FORMATS if phrase in doc), None)


@pytest.fixture(scope="module")
def aks_runs(repo_project: Project, shipped_run: Callable[[str], StackRun]) -> dict[str, StackRun]:
    stacks = [name for name in repo_project.stacks() if name.startswith("aks-")]
    assert len(stacks) >= 2
    return {name: shipped_run(name) for name in stacks}


def test_the_sdk_documents_a_format_for_every_field_spotkube_sets() -> None:
    fields = sdk_fields()
    for wire in ("scanInterval", "maxNodeProvisionTime", "newPodScaleUpDelay", "scaleDownUnneededTime",
                 "scaleDownDelayAfterAdd", "maxGracefulTerminationSec", "skipNodesWithLocalStorage"):
        assert documented_pattern(fields[wire][1]), f"{wire}: the SDK's docstring changed: {fields[wire][1]}"


def test_every_registered_autoscaler_setting_is_one_the_provider_accepts(aks_runs: dict[str, StackRun]) -> None:
    fields = sdk_fields()
    assert aks_runs, "the shipped aks stacks"
    for stack, run in aks_runs.items():
        (cluster,) = [r for r in run.registrations if r.type == CLUSTER_TYPE]
        profile: dict[str, Any] = dict(cluster.inputs["autoScalerProfile"])
        assert profile["maxNodeProvisionTime"], stack
        for wire, value in profile.items():
            assert wire in fields, f"{stack}: autoScalerProfile.{wire} is not a field of the SDK's profile type"
            kind, doc = fields[wire]
            assert isinstance(value, kind), f"{stack}: autoScalerProfile.{wire}: {value!r} is not a {kind.__name__}"
            pattern = documented_pattern(doc)
            if pattern and kind is str:
                assert re.match(pattern, value), f"{stack}: autoScalerProfile.{wire}: {value!r} breaks: {doc}"
            if wire == "expander":
                from pulumi_azure_native.containerservice import Expander

                assert value in {e.value for e in Expander}, stack


def test_the_profile_rules_are_no_looser_than_the_sdk_s_formats() -> None:
    """Each value spotkube's rules accept also matches the format the SDK documents for it."""
    fields = sdk_fields()
    samples = {"scan_interval": ["10s", "10", "30s"], "new_pod_scale_up_delay": ["0s", "2m", "1h"]}
    assert set(samples) < set(AUTOSCALER_FORMATS), "each sample is of a setting with a format"
    for name, (ours, _) in AUTOSCALER_FORMATS.items():
        wire = alias(AutoscalerSettings(), name)
        theirs = documented_pattern(fields[wire][1])
        assert theirs, wire
        for sample in samples.get(name, ["1m", "10m", "15m"]):
            assert re.match(ours, sample) and re.match(theirs, sample), (wire, sample)
        for bad in ("10 m", "m", "-1m", "1.5m"):
            assert not re.match(ours, bad), (wire, bad)
