"""What the preflight tests share: the verdicts of a shipped stack's offline run, and that run with a
registration doctored to break a rule."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from spotkube.components.offline import StackRun
from spotkube.platform import preflight as shapes
from spotkube.platform.registration import Registration
from spotkube.review import preflight

SECRET = shapes.SECRET_SIGNATURE


def verdicts(run: StackRun, registrations: list[Registration] | None = None, spec: Any = None) -> dict[str, Any]:
    """Each rule's verdict by rule name, over the run's registrations (or the ones given) and its spec
    (or the one given)."""
    deployment = shapes.Deployment(registrations if registrations is not None else run.registrations,
                                   run.invokes, spec or run.spec, run.source)
    return {v.rule: v for v in preflight.preflight(deployment)}


def doctored(run: StackRun, type_token: str, change: Callable[[Registration], Registration | None],
             name: str | None = None) -> list[Registration]:
    """The run's registrations with each matching one changed (or dropped, when `change` gives None)."""
    out = []
    for r in run.registrations:
        if r.type == type_token and (name is None or r.name == name):
            changed = change(r)
            if changed is not None:
                out.append(changed)
        else:
            out.append(r)
    return out


def with_inputs(r: Registration, **inputs: Any) -> Registration:
    return dataclasses.replace(r, inputs={**r.inputs, **inputs})


def failing(checks: dict[str, Any], rule: str, *fragments: str) -> None:
    verdict = checks[rule]
    assert not verdict.ok
    assert verdict.detail.startswith("stacks/Pulumi."), "a failure names the stack file"
    for fragment in fragments:
        assert fragment in verdict.detail
