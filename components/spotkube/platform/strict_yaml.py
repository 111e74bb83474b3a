"""Reading a YAML file the way the Pulumi engine reads it, and refusing what it would refuse.

Pulumi reads `Pulumi.yaml` and stack files with Go's `gopkg.in/yaml.v3` (v3.0.1), whose rules differ
from PyYAML's YAML 1.1 (`yes` and `1:20` are text, `012` is octal, a date becomes Go's time text), so
PyYAML composes the file and this module builds the values with yaml.v3's rules, ported below (sources:
docs/platform-facts.md#pulumi-config). libyaml parses where it reads a file as PyYAML's own parser does
(`_PYYAML_ONLY`), about ten times faster; every other file, and every message, is PyYAML's parser's.

Refused with the line and key path, as the engine refuses them: repeated keys, keys that are not text,
excessive aliasing and self-containing anchors, `.nan` and `.inf`, values a tag can't be read as;
also nesting deeper than `MAX_DEPTH` and more than one document. Values only YAML has (dates,
`!!binary`, custom tags) are built as the engine delivers them and listed in `YamlDocument.yaml_only`.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import field
from typing import Any

import yaml
from yaml.composer import Composer
from yaml.constructor import SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from yaml.parser import Parser
from yaml.reader import Reader, ReaderError
from yaml.resolver import BaseResolver, Resolver
from yaml.scanner import Scanner

from spotkube.platform.errors import Problem, SpecError
from spotkube.platform.input_messages import shown
from spotkube.platform.records import record

#: A key path inside the document: mapping keys and list indexes.
KeyPath = tuple[str | int, ...]

#: How deep a document may nest. A stack file needs 6 levels; yaml.v3 stops at 10,000.
MAX_DEPTH = 64

_CORE = "tag:yaml.org,2002:"
#: The tag this loader gives a plain scalar without a tag: it is resolved later, by yaml.v3's rules.
_PLAIN = "tag:spotkube,2026:plain"
#: Tags a spotkube setting may carry: the ones every YAML value has anyway.
CORE_TAGS = frozenset({"!!str", "!!int", "!!float", "!!bool", "!!null", "!!map", "!!seq"})


@record
class YamlOnly:
    """A value the engine passes through but that only YAML has: a date, `!!binary`, a custom tag."""

    path: KeyPath
    line: int
    kind: str  # "date", "binary", "tag" or "non-finite" (NaN or infinity, which Pulumi's JSON config can't hold)
    text: str  # as written in the file
    tag: str  # short form: `!!timestamp`, `!!binary`, `!!set`, `!custom`
    delivered: Any  # what the engine makes of it


@record
class YamlDocument:
    """A file's values as the engine reads them, with the line of every key and list item."""

    value: Any
    lines: Mapping[KeyPath, int] = field(default_factory=dict)
    yaml_only: tuple[YamlOnly, ...] = ()

    def line(self, path: KeyPath) -> int | None:
        """The line of `path`, or of the nearest enclosing key that has one."""
        while path:
            if path in self.lines:
                return self.lines[path]
            path = path[:-1]
        return None


def dotted(path: KeyPath) -> str:
    """`("config", "spotkube:gpuPools", 0, "name")` -> `config.spotkube:gpuPools[0].name`."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out or "the document"


class _Composer(Composer):
    """PyYAML's composer; plain scalars keep a marker tag to be resolved by yaml.v3's rules, and the
    non-specific tag `!` means text, as in yaml.v3."""

    def compose_scalar_node(self, anchor: str | None) -> Node:
        event = self.peek_event()
        if event.tag == "!":
            event.tag = f"{_CORE}str"
        return super().compose_scalar_node(anchor)


class _Loader(Reader, Scanner, Parser, _Composer, BaseResolver):
    """PyYAML's own reader, scanner and parser, in Python: the one whose messages a user reads."""

    def __init__(self, stream: str | bytes) -> None:
        Reader.__init__(self, stream)
        Scanner.__init__(self)
        Parser.__init__(self)
        Composer.__init__(self)
        BaseResolver.__init__(self)


# Every plain scalar without a tag gets the marker; quoted ones keep PyYAML's default, `!!str`.
_Loader.add_implicit_resolver(_PLAIN, re.compile(r"", re.DOTALL), None)

#: Whether PyYAML has libyaml, whose parser (in C) reads a stack file about ten times faster than
#: PyYAML's own; a PyYAML built without it reads every file with its own parser.
LIBYAML: bool = yaml.__with_libyaml__

if LIBYAML:
    from yaml._yaml import CParser

    class _LibyamlLoader(_Composer, CParser, BaseResolver):
        """libyaml's events, composed by the same composer as `_Loader`'s, so that tags, anchors and
        nesting (a Python recursion, bounded) are handled alike: libyaml's own composer recurses in
        C, where a deeply nested file would crash the process instead of raising."""

        def __init__(self, stream: str | bytes) -> None:
            CParser.__init__(self, stream)
            Composer.__init__(self)
            BaseResolver.__init__(self)

    _LibyamlLoader.add_implicit_resolver(_PLAIN, re.compile(r"", re.DOTALL), None)

    class _LibyamlSafeLoader(Composer, CParser, SafeConstructor, Resolver):
        """`yaml.SafeLoader` on libyaml's events: PyYAML's composer, as `_LibyamlLoader`'s."""

        def __init__(self, stream: str | bytes) -> None:
            CParser.__init__(self, stream)
            Composer.__init__(self)
            SafeConstructor.__init__(self)
            Resolver.__init__(self)


def _short(tag: str) -> str:
    return "!!" + tag[len(_CORE):] if tag.startswith(_CORE) else tag


# --- yaml.v3's scalar resolution (resolve.go), ported ---------------------------------------------

_HINTS = {**dict.fromkeys("+-", "S"), **dict.fromkeys("0123456789", "D"), **dict.fromkeys("yYnNtTfFoO~", "M"), ".": "."}
_MAP: dict[str, tuple[str, Any]] = {
    **dict.fromkeys(("true", "True", "TRUE"), ("!!bool", True)),
    **dict.fromkeys(("false", "False", "FALSE"), ("!!bool", False)),
    **dict.fromkeys(("", "~", "null", "Null", "NULL"), ("!!null", None)),
    **dict.fromkeys((".nan", ".NaN", ".NAN"), ("!!float", math.nan)),
    **dict.fromkeys((".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"), ("!!float", math.inf)),
    **dict.fromkeys(("-.inf", "-.Inf", "-.INF"), ("!!float", -math.inf)),
}
_RESOLVABLE = {"", "!!str", "!!bool", "!!int", "!!float", "!!null", "!!timestamp"}
_YAML_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")
_DOT_FLOAT = re.compile(r"\.[0-9]+([eE][-+]?[0-9]+)?")  # what Go's ParseFloat takes after a leading '.'
_INT64 = (-(2**63), 2**63 - 1)
_UINT64 = 2**64 - 1
_DIGITS = {2: "01", 8: "01234567", 10: "0123456789", 16: "0123456789abcdefABCDEF"}


def _go_uint(text: str) -> int | None:
    """Go's strconv.ParseUint(text, 0, 64): base prefixes 0x, 0o, 0b and a leading 0 (octal)."""
    if not text:
        return None
    base, digits = 10, text
    if text[0] == "0":
        prefix = text[1:2].lower()
        if len(text) >= 3 and prefix in ("b", "o", "x"):
            base, digits = {"b": 2, "o": 8, "x": 16}[prefix], text[2:]
        else:
            base, digits = 8, text[1:]
    if any(c not in _DIGITS[base] for c in digits):
        return None
    value = int(digits, base) if digits else 0
    return value if value <= _UINT64 else None


def _go_int(text: str) -> int | None:
    """Go's strconv.ParseInt(text, 0, 64)."""
    sign, rest = (-1, text[1:]) if text[:1] == "-" else (1, text[1:]) if text[:1] == "+" else (1, text)
    magnitude = _go_uint(rest)
    if magnitude is None:
        return None
    value = sign * magnitude
    return value if _INT64[0] <= value <= _INT64[1] else None


def _go_float(text: str) -> float | None:
    """Go's strconv.ParseFloat on a decimal text: None where Go reports an error (out of range)."""
    value = float(text)
    return None if math.isinf(value) else value


_TIMESTAMP = re.compile(
    r"(?P<y>[0-9]{4})-(?P<mo>[0-9]{1,2})-(?P<d>[0-9]{1,2})"
    r"(?:(?:[Tt](?P<h>[0-9]{1,2}):(?P<mi>[0-9]{1,2}):(?P<s>[0-9]{1,2})(?P<f>[.,][0-9]+)?(?P<z>Z|[-+][0-9]{2}:[0-9]{2}))"
    r"|(?: (?P<h2>[0-9]{1,2}):(?P<mi2>[0-9]{1,2}):(?P<s2>[0-9]{1,2})(?P<f2>[.,][0-9]+)?))?"
)


def _days_in(month: int, year: int) -> int:
    if month == 2:
        return 29 if year % 4 == 0 and (year % 100 != 0 or year % 400 == 0) else 28
    return 30 if month in (4, 6, 9, 11) else 31


def _timestamp(text: str) -> str | None:
    """yaml.v3's parseTimestamp, then Go's Time.String(): the text the engine hands the program.

    yaml.v3 accepts four layouts (RFC 3339 with `T` or `t`, space-separated without a zone, and a
    date alone). Pulumi's config turns the resulting time.Time into `Time.String()`, for example
    `2024-01-02` -> `2024-01-02 00:00:00 +0000 UTC`. An offset is printed as Go prints a fixed zone
    on a machine whose local zone is UTC (`+0530 +0530`); elsewhere Go may print the local zone's name.
    """
    match = _TIMESTAMP.fullmatch(text)
    if not match:
        return None
    g = match.groupdict()
    year, month, day = int(g["y"]), int(g["mo"]), int(g["d"])
    hour, minute, second = (int(g[k] or g[k + "2"] or 0) for k in ("h", "mi", "s"))
    fraction = (g["f"] or g["f2"] or ".")[1:10].ljust(9, "0")
    zone = g["z"] or "Z"
    zone_hours, zone_minutes = (0, 0) if zone == "Z" else (int(zone[1:3]), int(zone[4:6]))
    offset = (-1 if zone[0] == "-" else 1) * (zone_hours * 60 + zone_minutes)
    if not (1 <= month <= 12 and 1 <= day <= _days_in(month, year) and hour < 24 and minute < 60 and second < 60):
        return None
    if zone_hours > 24 or zone_minutes > 60:  # Go's own bounds for an offset
        return None
    nanos = fraction.rstrip("0")
    clock = f"{year:04d}-{month:02d}-{day:02d} {hour:02d}:{minute:02d}:{second:02d}" + (f".{nanos}" if nanos else "")
    sign, minutes = ("-" if offset < 0 else "+"), abs(offset)
    numeric = f"{sign}{minutes // 60:02d}{minutes % 60:02d}"
    return f"{clock} {numeric} {'UTC' if zone == 'Z' else numeric}"


class _Unreadable(Exception):
    """A scalar yaml.v3 would refuse; the message says why."""


def resolve(tag: str, text: str) -> tuple[str, Any]:
    """yaml.v3's `resolve(tag, in)`: the resolved tag and value of a scalar, `tag` in short form
    (`""` for a plain scalar without one). Timestamps come back as the engine's text."""
    if tag not in _RESOLVABLE:
        return tag, text
    rtag, value = _resolve(tag, text)
    if tag in ("", rtag, "!!str"):
        return rtag, value
    if tag == "!!float" and rtag == "!!int":
        return "!!float", float(value)
    raise _Unreadable(f"{shown(text)} can't be read as {tag} (it reads as {rtag}); remove the tag or fix the value")


def _resolve(tag: str, text: str) -> tuple[str, Any]:
    hint = _HINTS.get(text[0]) if text else "N"
    if hint is None or tag == "!!str":
        return "!!str", text
    if text in _MAP:
        return _MAP[text]
    if hint == "." and _DOT_FLOAT.fullmatch(text):
        number = _go_float(text)
        if number is not None:
            return "!!float", number
    if hint in ("D", "S"):
        if tag in ("", "!!timestamp") and (moment := _timestamp(text)) is not None:
            return "!!timestamp", moment
        plain = text.replace("_", "")
        integer = _go_int(plain)
        if integer is None:
            integer = _go_uint(plain)  # Go's ParseUint: no sign, up to 2**64 - 1
        if integer is not None:
            return "!!int", integer
        if _YAML_FLOAT.fullmatch(plain) and (number := _go_float(plain)) is not None:
            return "!!float", number
    return "!!str", text


# --- building values from nodes, yaml.v3's way ------------------------------------------------------

# yaml.v3 (decode.go) refuses a document once more than 100 of its values come from expanding
# aliases and they are more than this share of all decoded values (99 % below 400,000 values,
# falling to 10 % at 4,000,000). That stops a billion-laughs file in milliseconds.
_ALIAS_LOW, _ALIAS_HIGH = 400_000, 4_000_000


def _allowed_alias_ratio(decoded: int) -> float:
    if decoded <= _ALIAS_LOW:
        return 0.99
    if decoded >= _ALIAS_HIGH:
        return 0.10
    return 0.99 - 0.89 * (decoded - _ALIAS_LOW) / (_ALIAS_HIGH - _ALIAS_LOW)


class _Stop(Exception):
    """A problem after which the rest of the document can't be read."""

    def __init__(self, problem: Problem) -> None:
        super().__init__(problem.message)
        self.problem = problem


class _Builder:
    def __init__(self, describe: Callable[[KeyPath], str]) -> None:
        self.describe = describe
        self.problems: list[Problem] = []
        self.lines: dict[KeyPath, int] = {}
        self.yaml_only: list[YamlOnly] = []
        self.decoded = 0
        self.aliased = 0
        self.visited: set[int] = set()
        self.open: set[int] = set()  # the lists and mappings being built, to find one inside itself

    def problem(self, node: Node, message: str) -> None:
        self.problems.append(Problem(f"line {node.start_mark.line + 1}", message))

    def build(self, node: Node, path: KeyPath, depth: int = 0, via_alias: bool = False) -> Any:
        if depth > MAX_DEPTH:
            raise _Stop(Problem(f"line {node.start_mark.line + 1}", f"{self.describe(path)} nests more than "
                                f"{MAX_DEPTH} levels deep; a stack file needs a handful"))
        again = id(node) in self.visited
        if again and id(node) in self.open:
            raise _Stop(Problem(f"line {node.start_mark.line + 1}", f"{self.describe(path)}: an alias refers to "
                                "the value that contains it, so the value would never end; refer to another anchor"))
        via_alias = via_alias or again
        self.visited.add(id(node))
        self.decoded += 1
        self.aliased += via_alias
        if self.aliased > 100 and self.decoded > 1000 and self.aliased / self.decoded > _allowed_alias_ratio(
                self.decoded):
            raise _Stop(Problem(f"line {node.start_mark.line + 1}", f"{self.describe(path)}: its aliases (*name) "
                                f"expand into more than {self.decoded:,} values; Pulumi refuses such a file "
                                "(\"excessive aliasing\"): write the values out, or use fewer aliases"))
        if isinstance(node, ScalarNode):
            return self.scalar(node, path)
        self.open.add(id(node))
        try:
            if isinstance(node, SequenceNode):
                self.tagged(node, path, "!!seq")
                items = []
                for i, item in enumerate(node.value):
                    self.lines.setdefault((*path, i), item.start_mark.line + 1)
                    items.append(self.build(item, (*path, i), depth + 1, via_alias))
                return items
            assert isinstance(node, MappingNode)
            self.tagged(node, path, "!!map")
            return self.mapping(node, path, depth, via_alias)
        finally:
            self.open.discard(id(node))

    def tagged(self, node: Node, path: KeyPath, default: str) -> None:
        """yaml.v3 reads a list or mapping by its kind, whatever its tag; note a tag that isn't the default."""
        tag = _short(node.tag)
        if tag != default:
            self.yaml_only.append(YamlOnly(path, node.start_mark.line + 1, "tag", "", tag, None))

    def scalar(self, node: ScalarNode, path: KeyPath, key: bool = False) -> Any:
        tag = "" if node.tag == _PLAIN else _short(node.tag)
        line = node.start_mark.line + 1
        if tag == "!!binary":
            try:
                data = base64.b64decode(node.value.replace("\n", "").replace("\r", ""), validate=True)
            except (binascii.Error, ValueError):
                self.problem(node, f"{self.describe(path)}: !!binary {shown(node.value)} is not base64; Pulumi "
                             "refuses it")
                return node.value
            text = data.decode("utf-8", errors="replace")
            self.yaml_only.append(YamlOnly(path, line, "binary", node.value, tag, text))
            return text
        try:
            rtag, value = resolve(tag, node.value)
        except _Unreadable as err:
            self.problem(node, f"{self.describe(path)}: {err}")
            return node.value
        if rtag == "!!timestamp":
            self.yaml_only.append(YamlOnly(path, line, "date", node.value, "!!timestamp", value))
            if key:
                return _DateKey(value)
        elif rtag not in _RESOLVABLE:
            self.yaml_only.append(YamlOnly(path, line, "tag", node.value, rtag, value))
        if isinstance(value, float) and not math.isfinite(value) and not key:
            # Refused by the reader, which knows what the key accepts (`non_finite_problem`).
            self.yaml_only.append(YamlOnly(path, line, "non-finite", node.value, rtag, value))
        return value

    def mapping(self, node: MappingNode, path: KeyPath, depth: int, via_alias: bool) -> dict[str, Any]:
        out: dict[str, Any] = {}
        seen: dict[str, int] = {}
        merges: list[Node] = []
        for key_node, value_node in node.value:
            line = key_node.start_mark.line + 1
            if isinstance(key_node, ScalarNode) and key_node.value == "<<" and key_node.tag in (
                    _PLAIN, f"{_CORE}merge"):
                if "<<" in seen:
                    self.problem(key_node, f"{self.describe(path)}: << (a YAML merge) repeats line {seen['<<']}; "
                                 "merge several mappings with one << and a list of aliases")
                seen["<<"] = line
                merges.append(value_node)
                continue
            key = self.key(key_node, path)
            if key is None:
                continue
            if key in seen:
                self.problem(key_node, f"key {shown(self.describe((*path, key)))} repeats line {seen[key]}; a key "
                             "may appear once in a mapping (Pulumi refuses the file: \"mapping key already defined\")")
                continue
            seen[key] = line
            self.lines.setdefault((*path, key), line)
            out[key] = self.build(value_node, (*path, key), depth + 1, via_alias)
        for merge in merges:
            for source in self.merge_sources(merge, path):
                merged = self.build(source, path, depth + 1, via_alias)
                for key, value in (merged.items() if isinstance(merged, dict) else ()):
                    out.setdefault(key, value)
        return out

    def merge_sources(self, node: Node, path: KeyPath) -> list[Node]:
        """yaml.v3 merges a mapping or a list of mappings; anything else fails the file."""
        sources = node.value if isinstance(node, SequenceNode) else [node]
        if all(isinstance(source, MappingNode) for source in sources):
            return sources
        self.problem(node, f"{self.describe(path)}: << (a YAML merge) takes a mapping or a list of mappings, "
                     "usually aliases such as <<: *defaults")
        return []

    def key(self, node: Node, path: KeyPath) -> str | None:
        """A mapping key; one that isn't text is refused, as Pulumi refuses it."""
        where = f"in {self.describe(path)}" if path else "at the top of the file"
        if not isinstance(node, ScalarNode):
            kind = "a list" if isinstance(node, SequenceNode) else "a mapping"
            self.problem(node, f"a key {where} is {kind}; keys are text")
            return None
        self.decoded += 1
        key = self.scalar(node, (*path, node.value), key=True)
        if isinstance(key, str) and not isinstance(key, _DateKey):
            return key
        kind = ("a date" if isinstance(key, _DateKey) else "null" if key is None
                else "a boolean" if isinstance(key, bool) else "a number")
        self.problem(node, f"key {shown(node.value)} {where} is {kind}, not text; Pulumi refuses keys that are not "
                     f"text: quote it ({shown(str(node.value))}) if you mean text")
        return None


class _DateKey(str):
    """A date used as a key: the engine refuses it (Go's yaml.v3 reads it as a time, not text)."""


def load_yaml(data: str | bytes, source: str, describe: Callable[[KeyPath], str] = dotted) -> YamlDocument:
    """Read one YAML document as the Pulumi engine would, or raise SpecError listing every problem.

    `source` names the file in messages; `describe` spells a key path for them (by default
    `config.spotkube:gpuPools[0].name`). An empty document is `None`.
    """
    node = _read_by_libyaml(data)
    if node is _UNREAD:
        node = _read_by_pyyaml(data, source)
    if node is None:
        return YamlDocument(None)
    builder = _Builder(describe)
    try:
        value = builder.build(node, ())
    except _Stop as stop:
        raise SpecError(source, [*builder.problems, stop.problem]) from None
    except RecursionError:
        raise SpecError(source, [Problem("file", f"nests more than {MAX_DEPTH} levels deep")]) from None
    if builder.problems:
        raise SpecError(source, builder.problems)
    return YamlDocument(value, builder.lines, tuple(builder.yaml_only))


#: What `_read_by_libyaml` returns for a file it did not read.
_UNREAD = Node("", "", None, None)
#: Where libyaml accepts what PyYAML's parser refuses (found by comparing the two on generated files,
#: tests/platform/test_strict_yaml_libyaml.py): tabs, tags (even the non-specific `!`, which libyaml
#: reads as '' before an empty node, `[! ]`, where PyYAML reads null), `?` in a flow collection, a comment
#: right after a block scalar's header (`|#`), a byte order mark (U+FEFF) anywhere; and UTF-16, where
#: these characters are not single bytes. A file with any of them, anywhere (in a comment or a quoted
#: text too), is PyYAML's to read.
_PYYAML_ONLY = re.compile(rb"[\t?!]|[|>][-+0-9]*#|\xef\xbb\xbf|^(?:\xff\xfe|\xfe\xff)")


def _libyaml_reads(data: str | bytes) -> bool:
    """Whether libyaml is there and reads `data` as PyYAML's own parser does (`_PYYAML_ONLY`)."""
    return LIBYAML and not _PYYAML_ONLY.search(data if isinstance(data, bytes) else data.encode("utf-8", "replace"))


def _read_by_libyaml(data: str | bytes) -> Node | None:
    """The document's nodes as libyaml's parser reads it, or `_UNREAD` for a file it can't read, for any
    reason: PyYAML's own parser then reads it again, so that what a user reads about a broken file is
    always PyYAML's message, word for word."""
    if not _libyaml_reads(data):
        return _UNREAD
    try:
        loader = _LibyamlLoader(data)
        try:
            node: Node | None = loader.get_single_node()
        finally:
            loader.dispose()
    except Exception:  # the file is read again, by the parser whose errors the messages quote
        return _UNREAD
    return node


def _read_by_pyyaml(data: str | bytes, source: str) -> Node | None:
    """The document's nodes as PyYAML's own parser reads it, or SpecError saying where it isn't YAML."""
    loader = None
    try:
        loader = _Loader(data)
        node: Node | None = loader.get_single_node()
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        where = f"line {mark.line + 1}" if mark else "file"
        problem = " ".join(str(err.problem or err.context or err).split())
        if "expected a single document" in str(err):
            problem = "holds more than one YAML document (---); a Pulumi file is one document"
        raise SpecError(source, [Problem(where, f"is not valid YAML: {problem}")]) from None
    except ReaderError as err:
        raise SpecError(source, [Problem("file", f"is not UTF-8 YAML text: {err.reason} at byte {err.position}")]) \
            from None
    except yaml.YAMLError as err:
        raise SpecError(source, [Problem("file", f"is not valid YAML: {' '.join(str(err).split())}")]) from None
    except RecursionError:
        raise SpecError(source, [Problem("file", f"nests more than {MAX_DEPTH} levels deep; a stack file needs "
                                 "a handful")]) from None
    finally:
        if loader is not None:
            loader.dispose()
    return node


def safe_load(text: str) -> Any:
    """`yaml.safe_load(text)`, parsed by libyaml where it reads the text as PyYAML's own parser does (and
    by PyYAML's parser elsewhere, whose errors are then raised): the review reads YAML a program
    registered, such as the priority expander's tiers, which grow with every GPU pool."""
    if _libyaml_reads(text):
        try:
            loader = _LibyamlSafeLoader(text)
            try:
                return loader.get_single_data()
            finally:
                loader.dispose()
        except Exception:  # read again below, by the parser whose errors callers know
            pass
    return yaml.safe_load(text)
