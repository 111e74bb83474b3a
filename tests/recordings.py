"""What the component tests read of a program recorded under the mocks: the one registration of a type,
and the one message a refused program ends with (having registered nothing at all)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from spotkube.components.offline import ProgramFailed, Recording, Registration, record_program


def only(recording: Recording, type_token: str, name: str | None = None) -> Registration:
    """The one registration of `type_token` (and of `name`, when given): a second one fails the test."""
    (match,) = [r for r in recording.registrations if r.type == type_token and name in (None, r.name)]
    return match


def refusal(body: Callable[[], object], *, project: str, stack: str) -> str:
    """The one message a refused program ends with; nothing at all was registered."""
    with pytest.raises(ProgramFailed) as failure:
        record_program(body, project=project, stack=stack, config={})
    assert failure.value.registrations == [], "nothing may be registered, not even the component"
    return str(failure.value)
