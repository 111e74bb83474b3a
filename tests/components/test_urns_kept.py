"""A `pulumi up` of an existing stack replaces nothing when a resource moves: every URN the shipped stacks
registered before the pools became components of their own (tests/snapshots/shipped_urns.json, recorded
from the offline run before the change) is registered again, or is the URN an alias of a registration
names, which the engine then keeps."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from spotkube.components.offline import StackRun
from spotkube.platform.registration import Registration

REPO = Path(__file__).resolve().parents[2]
BEFORE: dict[str, list[str]] = json.loads((REPO / "tests" / "snapshots" / "shipped_urns.json").read_text())


def former_urns(registration: Registration) -> set[str]:
    """The URNs a registration had under each former parent its aliases name, made as the mock monitor
    makes URNs (`MockMonitor.make_urn`: the parent's own type, then the resource's)."""
    stack_and_project = registration.urn.split("::")[:2]
    return {"::".join([*stack_and_project, f"{parent.split('::')[2].split('$')[-1]}${registration.type}",
                       registration.name]) for parent in registration.moved_from}


@pytest.mark.parametrize("stack", sorted(BEFORE))
def test_every_urn_a_shipped_stack_had_is_registered_or_aliased(
        stack: str, shipped_run: Callable[[str], StackRun]) -> None:
    registrations = shipped_run(stack).registrations
    now = {r.urn for r in registrations}
    aliased = {urn for r in registrations for urn in former_urns(r)}
    assert aliased, "the pools moved under their components, with aliases"
    assert aliased.isdisjoint(now), "an alias names a URN something else is registered under"
    assert set(BEFORE[stack]) - now - aliased == set()
