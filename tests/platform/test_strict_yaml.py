"""The strict YAML reader: values as the Pulumi engine (Go's yaml.v3 v3.0.1) reads them, and the
refusals, each with its line. Expected values come from yaml.v3's resolve.go and decode.go and from
Pulumi's config package (docs/platform-facts.md#pulumi-config), not from this module."""

from __future__ import annotations

import math
import time
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spotkube.platform.errors import SpecError
from spotkube.platform.project import delivered, go_float_text, go_json
from spotkube.platform.strict_yaml import MAX_DEPTH, load_yaml, resolve, shown


def _value(text: str) -> Any:
    return load_yaml(text, "f.yaml").value


def _refusal(text: str | bytes) -> str:
    with pytest.raises(SpecError) as caught:
        load_yaml(text, "f.yaml")
    return str(caught.value)


# --- scalars: yaml.v3's resolve(), not YAML 1.1's ---------------------------------------------------

PLAIN_SCALARS = {
    # YAML 1.1 booleans that yaml.v3 reads as text (PyYAML would read True/False)
    "yes": "yes", "no": "no", "on": "on", "off": "off", "y": "y", "Yes": "Yes",
    # yaml.v3's booleans and nulls
    "true": True, "True": True, "FALSE": False, "~": None, "null": None, "Null": None, "": None,
    # integers through Go's strconv.ParseInt(s, 0, 64), underscores removed first
    "42": 42, "+12": 12, "-0": 0, "012": 10, "0o17": 15, "0x1F": 31, "0b101": 5, "-0b101": -5, "1_000": 1000,
    "9223372036854775807": 2**63 - 1, "18446744073709551615": 2**64 - 1,
    # floats: beyond uint64 an integer becomes a float; "08" is no octal, so it is the float 8
    "99999999999999999999": 1e20, "08": 8.0, "1.5": 1.5, ".5": 0.5, "1e3": 1000.0, "-2.0": -2.0,
    # text: base 60 is gone, out-of-range floats are text, a date without a zone is not a timestamp
    "1:20": "1:20", "1e400": "1e400", "2024-01-02T10:00:00": "2024-01-02T10:00:00", "2024-02-30": "2024-02-30",
    "0x": "0x", "+": "+", "-_": "-_", "._5": "._5",
    # timestamps: the text Pulumi delivers (Go's Time.String())
    "2024-01-02": "2024-01-02 00:00:00 +0000 UTC",
    "2001-12-14t21:59:43.10-05:00": "2001-12-14 21:59:43.1 -0500 -0500",
    "2024-1-2 3:4:5": "2024-01-02 03:04:05 +0000 UTC",
    "2020-01-01T00:00:00Z": "2020-01-01 00:00:00 +0000 UTC",
}


@pytest.mark.parametrize("text", PLAIN_SCALARS, ids=lambda t: t or "empty")
def test_a_plain_scalar_reads_as_yaml_v3_reads_it(text: str) -> None:
    value = _value(f"k: {text}\n")["k"]
    want = PLAIN_SCALARS[text]
    assert value == want and type(value) is type(want)


def test_quoted_scalars_are_always_text() -> None:
    assert _value("a: '42'\nb: \"true\"\nc: 'null'\nd: '2024-01-02'\n") == {
        "a": "42", "b": "true", "c": "null", "d": "2024-01-02"}


def test_tags_read_as_yaml_v3_reads_them() -> None:
    document = load_yaml("a: ! 12\nb: !!int '12'\nc: !!float 1\nd: !!str 12\ne: !!binary aGVsbG8=\n"
                         "f: !!set {x, y}\ng: !custom {q: 1}\nh: !custom text\ni: !!timestamp 2024-01-02\n", "f.yaml")
    assert document.value == {"a": "12", "b": 12, "c": 1.0, "d": "12", "e": "hello", "f": {"x": None, "y": None},
                              "g": {"q": 1}, "h": "text", "i": "2024-01-02 00:00:00 +0000 UTC"}
    assert {(item.path, item.kind, item.tag) for item in document.yaml_only} == {
        (("e",), "binary", "!!binary"), (("f",), "tag", "!!set"), (("g",), "tag", "!custom"),
        (("h",), "tag", "!custom"), (("i",), "date", "!!timestamp")}


@pytest.mark.parametrize(("text", "message"), [
    ("a: !!int abc\n", "line 1: a: 'abc' can't be read as !!int (it reads as !!str)"),
    ("a: !!bool yes\n", "line 1: a: 'yes' can't be read as !!bool"),
    ("a: !!int 1.5\n", "can't be read as !!int (it reads as !!float)"),
    ("a: !!binary '%%%'\n", "line 1: a: !!binary '%%%' is not base64"),
])
def test_a_value_its_tag_cant_hold_is_refused(text: str, message: str) -> None:
    assert message in _refusal(text)


def test_resolve_matches_yaml_v3_for_explicit_tags() -> None:
    assert resolve("!!float", "1") == ("!!float", 1.0)
    assert resolve("!!str", "true") == ("!!str", "true")
    assert resolve("!foo", "1") == ("!foo", "1")


# --- refusals the engine makes ----------------------------------------------------------------------


def test_a_repeated_key_names_both_lines() -> None:
    message = _refusal("config:\n  spotkube:cloud: aks\n  spotkube:environment: dev\n  spotkube:environment: prod\n")
    assert message == ("f.yaml: line 4: key 'config.spotkube:environment' repeats line 3; a key may appear once in a "
                       "mapping (Pulumi refuses the file: \"mapping key already defined\")")


def test_repeated_keys_are_found_at_every_depth_and_all_reported() -> None:
    message = _refusal("a: {b: 1, b: 2}\nc:\n  - {d: 1, d: 2}\n")
    assert "line 1: key 'a.b' repeats line 1" in message
    assert "line 3: key 'c[0].d' repeats line 3" in message


@pytest.mark.parametrize(("key", "kind"), [
    ("42", "a number"), ("4.5", "a number"), ("true", "a boolean"), ("~", "null"), ("2024-01-01", "a date")])
def test_a_key_that_is_not_text_is_refused(key: str, kind: str) -> None:
    message = _refusal(f"config:\n  {key}: answer\n")
    assert f"line 2: key {key!r} in config is {kind}, not text" in message
    assert f"quote it ({key!r})" in message


def test_keys_yaml_v3_reads_as_text_are_accepted() -> None:
    assert _value("yes: 1\n'42': 2\non: 3\n") == {"yes": 1, "42": 2, "on": 3}


def test_a_list_as_a_key_is_refused() -> None:
    assert "line 1: a key at the top of the file is a list; keys are text" in _refusal("? [a, b]\n: c\n")


@pytest.mark.parametrize("text", [".nan", ".inf", "-.Inf", "!!float .NaN"])
def test_nan_and_infinity_are_left_to_the_reader_that_knows_the_key(text: str) -> None:
    """The reader refuses them with what the setting accepts (tests/cli/test_config_paths.py)."""
    document = load_yaml(f"config:\n  other:x: {{price: {text}}}\n", "f.yaml")
    assert [(item.path, item.line, item.kind) for item in document.yaml_only] == [
        (("config", "other:x", "price"), 2, "non-finite")]


def _laughs(levels: int) -> str:
    lines = ["a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for i in range(1, levels):
        prev, name = chr(ord("a") + i - 1), chr(ord("a") + i)
        lines.append(f"{name}: &{name} [{', '.join([f'*{prev}'] * 10)}]")
    return "\n".join(lines) + "\n"


def test_billion_laughs_is_refused_quickly() -> None:
    started = time.monotonic()
    message = _refusal(_laughs(9))
    assert time.monotonic() - started < 2
    assert "its aliases (*name) expand into more than" in message and "excessive aliasing" in message


def test_reasonable_aliases_and_merges_are_read() -> None:
    text = ("base: &base {machine: Standard_D4s_v3, min: 0, max: 4}\n"
            "pools:\n" + "".join(f"  - {{<<: *base, name: p{i}}}\n" for i in range(50)) +
            "zones: &z ['1', '2']\nother: *z\n")
    value = _value(text)
    assert value["pools"][7] == {"machine": "Standard_D4s_v3", "min": 0, "max": 4, "name": "p7"}
    assert value["other"] == ["1", "2"]


def test_merges_follow_yaml_v3_explicit_keys_win_then_the_first_merged_mapping() -> None:
    value = _value("a: &a {x: 1, y: 1}\nb: &b {x: 2, z: 2}\nc: {<<: [*a, *b], y: 3}\n")
    assert value["c"] == {"y": 3, "x": 1, "z": 2}
    assert "takes a mapping or a list of mappings" in _refusal("a: {<<: 12}\n")


def test_an_anchor_inside_itself_is_refused() -> None:
    assert "an alias refers to the value that contains it" in _refusal("a: &a [1, *a]\n")


def test_an_undefined_alias_is_a_yaml_error_with_its_line() -> None:
    assert _refusal("a: 1\nb: *nowhere\n").startswith("f.yaml: line 2: is not valid YAML: found undefined alias")


@pytest.mark.parametrize("depth", [MAX_DEPTH + 5, 2000])
def test_deep_nesting_is_refused_without_a_traceback(depth: int) -> None:
    assert f"nests more than {MAX_DEPTH} levels deep" in _refusal("[" * depth + "]" * depth)


def test_more_than_one_document_is_refused() -> None:
    assert "holds more than one YAML document" in _refusal("a: 1\n---\nb: 2\n")


@pytest.mark.parametrize("data", [b"a: \xc3\x28\n", b"\xff\xfe\x00"])
def test_bytes_that_are_not_utf8_are_refused(data: bytes) -> None:
    assert _refusal(data).startswith("f.yaml: file: is not UTF-8 YAML text")


def test_an_empty_document_is_none() -> None:
    assert load_yaml("", "f.yaml").value is None
    assert load_yaml("# only a comment\n", "f.yaml").value is None


def test_a_long_value_is_cut_in_the_message() -> None:
    message = _refusal("a: !!int " + "x" * 100_000 + "\n")
    assert len(message) < 400 and "characters)" in message
    assert shown("x" * 10) == "'xxxxxxxxxx'"


def test_lines_are_kept_for_keys_and_items() -> None:
    document = load_yaml("config:\n  a: 1\n  b:\n    - x\n    - y\n", "f.yaml")
    assert document.lines[("config", "b")] == 3
    assert document.lines[("config", "b", 1)] == 5
    assert document.line(("config", "b", 1, "deeper")) == 5


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab:-[]{}&*!|>'\"#?,. \n\t0123456789<~%@`")), max_size=80))
def test_any_text_is_read_or_refused_never_a_traceback(text: str) -> None:
    try:
        load_yaml(text, "f.yaml")
    except SpecError as err:
        assert str(err).startswith("f.yaml: ")


# --- what the engine hands the program ----------------------------------------------------------------

#: (YAML value, the string Pulumi delivers for a top-level key). Sources: config.Value/object
#: (MarshalString: text as is, numbers and booleans as Go JSON, objects as JSON), yaml.v3 skipping
#: UnmarshalYAML for null (the zero Value: ""), encoding/json's float format.
DELIVERED = [
    ("dev", "dev"), ("", ""), (None, ""), (True, "true"), (False, "false"), (42, "42"), (-0.0, "-0"),
    (1.0, "1"), (1.5, "1.5"), (1e20, "100000000000000000000"), (1e21, "1e+21"), (1e-7, "1e-7"),
    (0.000001, "0.000001"), (1.5e-7, "1.5e-7"), (-2.5e300, "-2.5e+300"),
    ({}, "{}"), ([], "[]"), ({"min": 2.0, "machine": "D4", "a": None}, '{"a":null,"machine":"D4","min":2}'),
    ([{"b": 1, "a": "<&>"}], '[{"a":"\\u003c\\u0026\\u003e","b":1}]'),
    ({"big": 2**64 - 1}, '{"big":18446744073709551616}'),
]


@pytest.mark.parametrize(("value", "text"), DELIVERED, ids=[repr(v) for v, _ in DELIVERED])
def test_a_value_is_delivered_as_the_engine_writes_it(value: Any, text: str) -> None:
    assert delivered(value) == text


@settings(max_examples=300, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_go_float_text_reads_back_to_the_same_float(number: float) -> None:
    text = go_float_text(number)
    assert float(text) == number and not text.endswith(".0")
    assert ("e" in text) == (number != 0 and not 1e-6 <= abs(number) < 1e21)


def test_go_json_refuses_nan() -> None:
    with pytest.raises(ValueError):
        go_json({"a": math.nan})
