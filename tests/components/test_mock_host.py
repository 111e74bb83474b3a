"""How the offline plan hosts a program: the alias URNs Pulumi's constructor computes and nothing reads
are left out, and what reaches the engine stays exactly what the SDK sends on its own."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import pulumi
import pytest
from pulumi import resource as sdk_resource
from pulumi.runtime import mocks, settings
from pulumi.runtime.proto import resource_pb2
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _sync_await

from spotkube.components.mock_host import alias_urns_left_to_the_engine, owned_event_loops
from spotkube.components.offline import record_program


class EchoMocks(pulumi.runtime.Mocks):
    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict]:
        return f"{args.name}-id", args.inputs

    def call(self, args: pulumi.runtime.MockCallArgs) -> dict:  # type: ignore[override]
        return {}


class CapturingMonitor(mocks.MockMonitor):
    """Pulumi's mock monitor, keeping each registration request; `alias_specs=False` stands for an
    engine that only takes alias URNs."""

    def __init__(self, alias_specs: bool) -> None:
        super().__init__(EchoMocks())
        self.alias_specs = alias_specs
        self.requests: list[Any] = []

    def GetDeploymentInfo(self, request: Any) -> Any:
        info = super().GetDeploymentInfo(request)
        if not self.alias_specs:
            kept = [f for f in info.supportedFeatures if f != resource_pb2.RESOURCE_MONITOR_FEATURE_ALIAS_SPECS]
            del info.supportedFeatures[:]
            info.supportedFeatures.extend(kept)
        return info

    def RegisterResource(self, request: Any) -> Any:
        self.requests.append(request)
        return super().RegisterResource(request)


def program() -> None:
    """A renamed component and a child that was renamed and retyped: aliases on both levels."""
    platform = pulumi.ComponentResource("test:index:Platform", "platform", None,
                                        pulumi.ResourceOptions(aliases=[pulumi.Alias(name="old-platform")]))
    pulumi.ComponentResource("test:index:Pool", "gpu", None, pulumi.ResourceOptions(
        parent=platform, aliases=[pulumi.Alias(type_="test:index:OldPool"), pulumi.Alias(name="old-gpu")]))


def sent_aliases(alias_specs: bool, *, left_to_the_engine: bool,
                 run: Callable[[], None] = program) -> dict[str, list[Any]]:
    """Each registration's aliases as the monitor received them (specs, or URNs), by name. The context is
    entered before the mocks are set, as `record_program` enters it."""
    monitor = CapturingMonitor(alias_specs)
    hosting = alias_urns_left_to_the_engine() if left_to_the_engine else contextlib.nullcontext()
    with owned_event_loops(), hosting:
        settings.reset_options(project="host", stack="test", preview=False)
        mocks.set_mocks(monitor.mocks, project="host", stack="test", preview=False, monitor=monitor)
        _sync_await(run_pulumi_func(run))
    return {r.name: sorted([*(a.SerializeToString(deterministic=True) for a in r.aliases), *r.aliasURNs])
            for r in monitor.requests}


@pytest.mark.parametrize("alias_specs", [True, False], ids=["alias specs", "alias URNs"])
def test_the_engine_receives_the_same_aliases(alias_specs: bool) -> None:
    hosted = sent_aliases(alias_specs, left_to_the_engine=True)
    assert hosted == sent_aliases(alias_specs, left_to_the_engine=False)
    # As declared; or as URNs: both under the parent, and the child and both under the parent's alias.
    assert len(hosted["gpu"]) == (2 if alias_specs else 5)


@pytest.fixture
def urns_computed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the resources whose aliases the SDK turned into URNs, one entry an alias."""
    collapse = sdk_resource.collapse_alias_to_urn
    computed: list[str] = []

    def counted(alias: Any, name: str, type_: str, parent: Any) -> Any:
        computed.append(name)
        return collapse(alias, name, type_, parent)

    monkeypatch.setattr(sdk_resource, "collapse_alias_to_urn", counted)
    return computed


@pytest.mark.parametrize(("alias_specs", "urns"), [(True, 0), (False, 3)], ids=["alias specs", "alias URNs"])
def test_alias_urns_are_computed_only_for_an_engine_that_reads_them(
    urns_computed: list[str], alias_specs: bool, urns: int,
) -> None:
    sent_aliases(alias_specs, left_to_the_engine=True)
    assert len(urns_computed) == urns


def test_the_offline_run_computes_no_alias_urn(urns_computed: list[str]) -> None:
    recording = record_program(program, project="host", stack="test", config={})
    assert [r.name for r in recording.registrations] == ["platform", "gpu"]
    assert urns_computed == []


@pytest.mark.parametrize("left_to_the_engine", [True, False], ids=["hosted", "the SDK alone"])
def test_an_alias_pulumi_refuses_fails_the_run_as_it_fails_a_preview(left_to_the_engine: bool) -> None:
    def nameless_alias() -> None:
        pulumi.ComponentResource("test:index:Pool", "gpu", None, pulumi.ResourceOptions(
            aliases=[pulumi.Alias(name=None)]))

    with pytest.raises(Exception, match="No valid 'name' passed in for alias"):
        sent_aliases(True, left_to_the_engine=left_to_the_engine, run=nameless_alias)


def test_the_sdk_is_as_it_was_after_the_run_even_a_failed_one() -> None:
    collapse = sdk_resource.collapse_alias_to_urn
    with pytest.raises(RuntimeError), alias_urns_left_to_the_engine():
        assert sdk_resource.collapse_alias_to_urn is not collapse
        raise RuntimeError("the program failed")
    assert sdk_resource.collapse_alias_to_urn is collapse
