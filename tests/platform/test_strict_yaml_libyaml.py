"""Stack files are parsed by libyaml where it reads them as PyYAML's own parser does, which it does
about ten times faster; every other file, and every file that isn't valid YAML, is PyYAML's to read,
so the values, the lines and each message are the same whichever parser read the file."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from yaml.parser import Parser

from spotkube.platform import strict_yaml
from spotkube.platform.errors import SpecError
from spotkube.platform.strict_yaml import MAX_DEPTH, load_yaml, safe_load


@contextmanager
def libyaml(used: bool) -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(strict_yaml, "LIBYAML", used)
        yield


def read(text: str | bytes, *, with_libyaml: bool) -> tuple[str, Any]:
    """What a reader of the file gets: the values, lines and YAML-only values, or the message."""
    with libyaml(with_libyaml):
        try:
            document = load_yaml(text, "Pulumi.dev.yaml")
        except SpecError as err:
            return "refused", str(err)
    return "read", (repr(document.value), document.lines, document.yaml_only)


def _pyyaml_not_asked(self: Parser) -> None:
    raise AssertionError("PyYAML's own parser read a file libyaml reads")


def test_the_pinned_pyyaml_has_libyaml() -> None:
    assert strict_yaml.LIBYAML and yaml.__with_libyaml__


def test_libyaml_reads_a_stack_file_with_yaml_v3s_values_and_its_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Parser, "get_event", _pyyaml_not_asked)
    document = load_yaml(b"config:\n  spotkube:gpuPools:\n    - name: t4\n      max: 012\n"
                         b"      zones: [1, '2']\n  on: yes\n  shared: &s {a: 1}\n  again: *s\n", "Pulumi.dev.yaml")
    assert document.value == {"config": {"spotkube:gpuPools": [{"name": "t4", "max": 10, "zones": [1, "2"]}],
                                         "on": "yes", "shared": {"a": 1}, "again": {"a": 1}}}
    assert document.lines[("config", "spotkube:gpuPools", 0)] == 3
    assert document.line(("config", "spotkube:gpuPools", 0, "zones", 1)) == 5


def test_the_non_specific_tag_means_text_and_is_pyyamls_to_read() -> None:
    # The composer gives `! 12` the text tag before it is resolved, as yaml.v3 does. libyaml reads the
    # tag before an empty node as '' where PyYAML reads null (`[! ]`, found by the property below), so
    # a text with a tag is PyYAML's to read, in stack files and in what a program registered alike.
    assert load_yaml("a: ! 12\nb: 12\nc: ! true\nd: [! 1, 1]\n", "f.yaml").value == {
        "a": "12", "b": 12, "c": "true", "d": ["1", 1]}
    assert safe_load("'config': [! ]\n") == yaml.safe_load("'config': [! ]\n") == {"config": [None]}


@pytest.mark.parametrize("text", [
    "a:\tb\n", "a: 1\t\n", "!'! ", "{a: 1 ?}\n", "[a?b]\n", "a: |#\n  x\n", "a: >-#\n  x\n", "a: 1\n\ufeff",
    "a: [1, !, 2]\n",
])
def test_where_libyaml_reads_a_file_otherwise_pyyaml_reads_it(text: str) -> None:
    # libyaml accepts each of these, which PyYAML refuses, or reads `[1, !, 2]` as three items, not two.
    assert read(text, with_libyaml=True) == read(text, with_libyaml=False)


@pytest.mark.parametrize("text", [
    "a: 1\n---\nb: 2\n", "a: [1, 2\n", "a: *nowhere\n", "a: b: c\n", "a: 'x\n", b"a: \xc3\x28\n", b"\xff\xfe\x00",
    "a: \x07\n", "- a\nb: 1\n",
])
def test_a_file_that_is_not_yaml_gets_pyyamls_message(text: str | bytes) -> None:
    refused = read(text, with_libyaml=True)
    assert refused[0] == "refused"
    assert refused == read(text, with_libyaml=False)


def test_deep_nesting_is_refused_without_crashing_the_process() -> None:
    # libyaml's own composer recurses in C, where 100,000 levels overflow the stack and kill the process.
    kind, message = read("[" * 100_000 + "]" * 100_000, with_libyaml=True)
    assert kind == "refused" and f"nests more than {MAX_DEPTH} levels deep" in message


# --- the two parsers on generated files ----------------------------------------------------------------

_WORDS = ["a", "b c", "yes", "no", "1", "012", "0x1f", "1e3", ".5", "", "~", "null", "2024-01-02", "x: y", "- z",
          "[q]", "#c", "é", "'", '"', "\\", "1:20", "<<", "multi\nline", " lead", "trail ", "! t", "a?b", "c%d"]
_SCALARS = st.one_of(st.sampled_from(_WORDS), st.integers(), st.floats(allow_nan=False), st.booleans(), st.none())
_VALUES = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
    st.sampled_from(_WORDS), inner, max_size=4), max_leaves=12)
#: What edits put in a file: YAML's indicators, indentation, anchors, aliases and the non-specific tag.
_PIECES = [":", " ", "-", "\n", "[", "]", "{", "}", ",", "#", "'", '"', "|", ">", "&x ", "*x", "<<: ", "  ",
           "\n  ", "a", "! ", "?", "\t", "!x "]


@st.composite
def stack_files(draw: st.DrawFn) -> str:
    """A file as yaml.dump writes a value, in block, flow or mixed style and several quoting styles,
    then edited in a few places, as a person editing it by hand might break it."""
    text = yaml.dump({"config": draw(_VALUES)}, default_flow_style=draw(st.sampled_from([True, False, None])),
                     allow_unicode=draw(st.booleans()), width=draw(st.sampled_from([20, 80, 1000])),
                     default_style=draw(st.sampled_from([None, "'", '"', "|"])), sort_keys=False)
    for _ in range(draw(st.integers(0, 3))):
        at = draw(st.integers(0, len(text)))
        if draw(st.booleans()):
            text = text[:at] + draw(st.sampled_from(_PIECES)) + text[at:]
        else:
            text = text[:at] + text[at + draw(st.integers(1, 3)):]
    return text


@settings(max_examples=400, deadline=None)
@given(stack_files())
def test_libyaml_and_pyyaml_read_a_generated_file_alike(text: str) -> None:
    assert read(text, with_libyaml=True) == read(text, with_libyaml=False)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from([*_PIECES, "0", "~", ".", "!!str", "---", "...", "%", "@", "`", "\r", "\x85",
                                  "\u2028", "\ufeff", "é", "|-", ">+", "|2"]), max_size=30).map("".join))
def test_libyaml_and_pyyaml_read_any_text_alike(text: str) -> None:
    assert read(text, with_libyaml=True) == read(text, with_libyaml=False)


# --- YAML a program registered, read as yaml.safe_load reads it --------------------------------------


def safe_loaded(text: str, *, with_libyaml: bool) -> tuple[str, Any]:
    with libyaml(with_libyaml):
        try:
            return "read", repr(safe_load(text))
        except Exception as err:  # PyYAML's constructors raise ValueError and others for a bad `!!int`
            return "refused", f"{type(err).__name__}: {err}"


def test_libyaml_reads_the_priority_expanders_tiers(monkeypatch: pytest.MonkeyPatch) -> None:
    tiers = {10: [f"^aks-gpu{i}-[0-9]+-vmss$" for i in range(50)], 20: ["^aks-od-[0-9]+-vmss$"]}
    text = yaml.safe_dump(tiers, sort_keys=False)
    monkeypatch.setattr(Parser, "get_event", _pyyaml_not_asked)
    assert safe_load(text) == tiers


@settings(max_examples=300, deadline=None)
@given(stack_files())
def test_safe_load_is_yaml_safe_load_whichever_parser_reads_it(text: str) -> None:
    assert safe_loaded(text, with_libyaml=True) == safe_loaded(text, with_libyaml=False)
    assert safe_loaded(text, with_libyaml=False)[1] == safe_loaded_by_pyyaml(text)[1]


def safe_loaded_by_pyyaml(text: str) -> tuple[str, Any]:
    try:
        return "read", repr(yaml.safe_load(text))
    except Exception as err:
        return "refused", f"{type(err).__name__}: {err}"
