"""One answer per plan: within `one_plan()` each question is answered once, the same answer for the
whole plan; outside it, every time afresh."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

import pytest

from spotkube.platform.cloud import RegisteredPool, read_once_per_plan
from spotkube.platform.plan_scope import once, one_plan


def _pool(name: str) -> RegisteredPool:
    return RegisteredPool(where=f"AgentPool {name!r}", cloud_name=name, labels={}, machine="Standard_D4s_v5",
                          gpu_count=0, has_gpu=False, capacity="on-demand", system=False, min=0,
                          max=3, taints=(), parsed_taints=frozenset(), zones=(), eviction_policy=None,
                          max_price=None)


def test_a_registrations_pools_are_read_once_per_plan() -> None:
    reads: list[str] = []

    @read_once_per_plan
    def read(type_token: str, name: str, inputs: Mapping[str, Any]) -> list[RegisteredPool]:
        reads.append(name)
        return [_pool(str(inputs["name"]))]

    inputs, twin = {"name": "gpu"}, {"name": "gpu"}
    with one_plan():
        first = read("pool", "a", inputs)
        first.clear()  # each reader gets its own list
        assert read("pool", "a", inputs) == [_pool("gpu")]
        assert read("pool", "a", twin) == [_pool("gpu")]  # equal inputs of another registration: read too
        with one_plan():  # the same plan
            read("pool", "a", inputs)
    assert reads == ["a", "a"]
    read("pool", "a", inputs)
    read("pool", "a", inputs)
    assert reads == ["a", "a", "a", "a"]  # outside a plan, every time


def test_an_answer_holds_for_the_plan_and_its_tasks_and_a_new_plan_asks_again() -> None:
    answers = iter(range(10))

    def ask() -> int:
        return once("question", lambda: next(answers))

    async def in_a_task() -> int:
        return ask()

    with one_plan():
        assert ask() == 0
        assert asyncio.run(in_a_task()) == 0  # the program's callbacks run as tasks started in the plan
    with one_plan():
        assert ask() == 1
    assert [ask(), ask()] == [2, 3]


def test_an_answer_that_raises_is_asked_again() -> None:
    calls: list[int] = []

    def failing() -> int:
        calls.append(1)
        raise ValueError("no catalog file")

    with one_plan():
        for _ in range(2):
            with pytest.raises(ValueError, match="no catalog file"):
                once("catalog", failing)
    assert len(calls) == 2
