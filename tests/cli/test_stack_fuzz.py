"""Random structural mutations of the shipped stacks never end in a traceback or a hang: every
mutated file is either a valid spec or refused with spotkube's own error, one line per problem, no
line echoing a value whole. Bounded (a few seconds) so it runs on every CI build."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spotkube.clouds import load_stack_spec, plan_platform
from spotkube.platform.errors import SpotkubeError
from spotkube.platform.project import find_project

REPO = Path(__file__).resolve().parents[2]
SHIPPED = sorted((REPO / "stacks").glob("Pulumi.*.yaml"))
STACK = "fuzz"

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-10**6, 10**6), st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=30), st.sampled_from(["", "no", "yes", "~", "1.0", "[", "{x", "2024-01-02", "spot", "aks"]),
    st.just("x" * 5000),  # a value no message may echo whole
)
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                       st.dictionaries(st.text(max_size=12), inner, max_size=3)),
                      max_leaves=8)


def _paths(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in the document a mutation can touch."""
    out = [path]
    if isinstance(node, dict):
        for key, item in node.items():
            out += _paths(item, (*path, key))
    elif isinstance(node, list):
        for i, item in enumerate(node):
            out += _paths(item, (*path, i))
    return out


def _at(document: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        document = document[part]
    return document


def _mutate(document: dict[str, Any], path: tuple[Any, ...], how: str, value: Any, key: str) -> Any:
    """One structural change at `path`: replace, drop, add a key, wrap in a list, turn into text."""
    if not path:
        return value if how == "replace" else document
    parent, last = _at(document, path[:-1]), path[-1]
    if how == "replace":
        parent[last] = value
    elif how == "drop":
        del parent[last]
    elif how == "add" and isinstance(parent[last], dict):
        parent[last][key] = value
    elif how == "wrap":
        parent[last] = [parent[last]]
    elif how == "text":
        parent[last] = yaml.safe_dump(parent[last]).strip()
    elif how == "duplicate" and isinstance(parent, list):
        parent.append(parent[last])
    return document


def _text_mutation(text: str, line: int, how: str) -> str:
    """A change YAML's structure can't express: a repeated line (a repeated key), a lost indent."""
    lines = text.splitlines()
    if not lines:
        return text
    line %= len(lines)
    if how == "repeat":
        lines.insert(line, lines[line])
    elif how == "dedent":
        lines[line] = lines[line].lstrip()
    else:
        lines.pop(line)
    return "\n".join(lines) + "\n"


def _judge(root: Path, text: str) -> None:
    (root / "stacks" / f"Pulumi.{STACK}.yaml").write_text(text)
    try:
        spec = load_stack_spec(find_project(root), STACK)
    except SpotkubeError as err:
        message = str(err)
        assert message and "Traceback" not in message
        assert all(len(line) < 2000 for line in message.splitlines()), "a value was echoed whole"
        return
    plan_platform(spec)


def _project() -> tuple[tempfile.TemporaryDirectory[str], Path]:
    folder = tempfile.TemporaryDirectory()
    root = Path(folder.name)
    shutil.copy(REPO / "Pulumi.yaml", root / "Pulumi.yaml")
    shutil.copytree(REPO / "infra", root / "infra")
    (root / "stacks").mkdir()
    return folder, root


FUZZ = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _with_project(check: Callable[[Path], None]) -> None:
    folder, root = _project()
    with folder:
        check(root)


@FUZZ
@given(stack=st.sampled_from(SHIPPED), data=st.data(),
       how=st.sampled_from(["replace", "drop", "add", "wrap", "text", "duplicate"]), value=values,
       key=st.text(max_size=12))
def test_structural_mutations_of_shipped_stacks_are_judged_cleanly(
    stack: Path, data: st.DataObject, how: str, value: Any, key: str
) -> None:
    document = yaml.safe_load(stack.read_text())
    path = data.draw(st.sampled_from(_paths(document)))
    mutated = _mutate(document, path, how, value, key)
    text = yaml.safe_dump(mutated, sort_keys=False, allow_unicode=True)
    _with_project(lambda root: _judge(root, text))


@FUZZ
@given(stack=st.sampled_from(SHIPPED), line=st.integers(0, 200), how=st.sampled_from(["repeat", "dedent", "drop"]))
def test_line_mutations_of_shipped_stacks_are_judged_cleanly(stack: Path, line: int, how: str) -> None:
    text = _text_mutation(stack.read_text(), line, how)
    _with_project(lambda root: _judge(root, text))
