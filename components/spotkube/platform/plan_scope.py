"""One answer per plan to the questions a plan asks over and over (the user catalog file in use, the
pools a registration declares): a file rewritten half-way must not give two pools two catalogs, while
outside a plan every question is asked afresh. A plan runs inside `one_plan()`, a context variable, so
the program's asyncio callbacks share it. Pure module.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar, cast

T = TypeVar("T")

_ANSWERS: ContextVar[dict[Hashable, Any] | None] = ContextVar("spotkube_plan_answers", default=None)


@contextmanager
def one_plan() -> Iterator[None]:
    """Within it, `once` answers each question once; entered again inside, it is the same plan."""
    if _ANSWERS.get() is not None:
        yield
        return
    token = _ANSWERS.set({})
    try:
        yield
    finally:
        _ANSWERS.reset(token)


def once(question: Hashable, answer: Callable[[], T]) -> T:
    """`answer()`, computed once per plan for `question`; outside a plan, every time. An answer that
    raises is not kept, so the error is raised again each time it is asked."""
    answers = _ANSWERS.get()
    if answers is None:
        return answer()
    if question in answers:
        return cast(T, answers[question])
    answers[question] = found = answer()
    return found


def once_about(subject: object, question: Hashable, answer: Callable[[], T]) -> T:
    """`once` for a question about an object that can't be a key (a registration's inputs, a mapping):
    by its identity, keeping it alive for the plan so that no other object takes its identity over."""
    answers = _ANSWERS.get()
    if answers is None:
        return answer()
    key = (id(subject), question)
    kept = answers.get(key)
    if kept is not None and kept[0] is subject:
        return cast(T, kept[1])
    found = answer()
    answers[key] = (subject, found)
    return found
