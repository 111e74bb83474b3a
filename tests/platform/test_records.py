"""spotkube's value types (`record`) behave exactly as frozen dataclasses: equality, hash, repr, the
dataclass functions and immutability; only their methods are shared instead of compiled per class."""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from spotkube.platform.contract import Taint
from spotkube.platform.records import record

PACKAGE = Path(__file__).resolve().parents[2] / "components" / "spotkube"


def both(body: Callable[[], type]) -> tuple[type, type]:
    """The class `body` makes, as a record and as a frozen dataclass (each from its own class object)."""
    return record(body()), dataclasses.dataclass(frozen=True)(body())


def _pool() -> type:
    class Pool:
        name: str
        nodes: int = 0
        zones: tuple[str, ...] = ()
        notes: Any = dataclasses.field(default=None, compare=False)
    return Pool


values = st.builds(lambda name, nodes, zones, notes: (name, nodes, tuple(zones), notes),
                   st.sampled_from(["gpu", "cpu"]), st.integers(0, 2), st.lists(st.sampled_from("abc"), max_size=2),
                   st.sampled_from([None, "x"]))


@given(values, values)
def test_a_record_compares_hashes_and_shows_itself_as_a_frozen_dataclass(left: tuple[Any, ...],
                                                                          right: tuple[Any, ...]) -> None:
    mine, stdlib = both(_pool)
    a, b, c, d = mine(*left), mine(*right), stdlib(*left), stdlib(*right)
    assert (a == b) == (c == d)
    assert (a != b) == (c != d)
    if a == b:
        assert hash(a) == hash(b)
    assert repr(a).replace(mine.__qualname__, "X") == repr(c).replace(stdlib.__qualname__, "X")


def test_a_record_is_frozen_and_works_with_the_dataclass_functions() -> None:
    pool = record(_pool())("gpu", 2, ("a",))
    with pytest.raises(dataclasses.FrozenInstanceError):
        pool.nodes = 3  # type: ignore[attr-defined]
    assert dataclasses.is_dataclass(pool)
    assert [f.name for f in dataclasses.fields(pool)] == ["name", "nodes", "zones", "notes"]
    assert dataclasses.replace(pool, nodes=3).nodes == 3  # type: ignore[attr-defined]
    assert dataclasses.asdict(pool) == {"name": "gpu", "nodes": 2, "zones": ("a",), "notes": None}


def test_records_of_two_classes_never_compare_equal() -> None:
    first, second = record(_pool()), record(_pool())
    assert first("gpu") != second("gpu")
    assert first("gpu").__eq__(second("gpu")) is NotImplemented


def test_a_record_of_one_field_or_none_compares_and_hashes_like_a_dataclass() -> None:
    def one() -> type:
        class One:
            value: float
        return One

    def empty() -> type:
        class Empty:
            pass
        return Empty

    mine, stdlib = both(one)
    nan = float("nan")
    # A tuple compares its items by identity first: the same NaN is equal to itself inside one.
    assert (mine(nan) == mine(nan)) == (stdlib(nan) == stdlib(nan))
    assert mine(1.0) == mine(1.0) and hash(mine(1.0)) == hash(mine(1.0))
    nothing, stdlib_nothing = both(empty)
    assert nothing() == nothing() and repr(nothing()).endswith("Empty()") and repr(stdlib_nothing()).endswith("Empty()")


def test_a_record_keeps_the_methods_its_class_defines() -> None:
    @record
    class Named:
        name: str

        def __eq__(self, other: object) -> bool:
            return isinstance(other, Named) and self.name.lower() == other.name.lower()

        def __hash__(self) -> int:
            return hash(self.name.lower())

        def __repr__(self) -> str:
            return f"<{self.name}>"

    assert Named("GPU") == Named("gpu") and hash(Named("GPU")) == hash(Named("gpu"))
    assert repr(Named("gpu")) == "<gpu>"


def test_a_record_whose_class_defines_only_equality_is_still_hashable_as_a_dataclass_is() -> None:
    def body() -> type:
        class Loose:
            name: str

            def __eq__(self, other: object) -> bool:
                return True
        return Loose

    mine, stdlib = both(body)
    assert mine("a") == mine("b")
    assert (hash(mine("a")) == hash(mine("a"))) and (hash(stdlib("a")) == hash(stdlib("a")))


def test_a_record_that_holds_itself_shows_the_loop_instead_of_recursing() -> None:
    @record
    class Node:
        children: list[Any]

    node = Node([])
    node.children.append(node)
    assert repr(node).endswith("Node(children=[...])")


def test_records_are_usable_as_set_members_by_value() -> None:
    taint = Taint("spotkube.io/gpu", "true", "NoSchedule")
    assert {taint, Taint("spotkube.io/gpu", "true", "NoSchedule")} == {taint}


def test_every_frozen_value_type_of_the_package_is_a_record() -> None:
    """A plain `@dataclass(frozen=True)` compiles three more methods at every import (docs/speed.md);
    the pipeline helper, a package of its own for pipeline authors, keeps the standard decorator."""
    plain = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if "pipelines" in path.relative_to(PACKAGE).parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                for decorator in node.decorator_list:
                    if (isinstance(decorator, ast.Call) and getattr(decorator.func, "id", None) == "dataclass"
                            and any(k.arg == "frozen" for k in decorator.keywords)
                            and {k.arg for k in decorator.keywords} == {"frozen"}):
                        plain.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {node.name}")
    assert plain == []
