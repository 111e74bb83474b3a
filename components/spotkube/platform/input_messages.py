"""How a refusal reads: the value shown short and as text (`shown`, `cut`: a 10 MB value never fills a
terminal), the accepted types in a user's words, a "did you mean", and the key path as the user spelt
it. Pure module: no Pulumi.
"""

from __future__ import annotations

import difflib
import math
import re
import types
import typing
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo

#: Longest value shown in a message; longer ones are cut and their length given.
SHOWN_MAX = 60
KeyStyle = Literal["stack", "python"]


def shown(value: Any) -> str:
    """`value` as a message shows it: its repr, cut to SHOWN_MAX characters."""
    text = repr(value)
    if len(text) <= SHOWN_MAX:
        return text
    size = f"{len(value)} characters" if isinstance(value, str) else f"{len(text)} characters written out"
    return f"{text[:SHOWN_MAX]}… ({size})"


def cut(text: str) -> str:
    """Text as a message shows it (a key, a YAML section): as written, cut to SHOWN_MAX characters."""
    return text if len(text) <= SHOWN_MAX else f"{text[:SHOWN_MAX]}… ({len(text)} characters)"


def kind(value: Any) -> str:
    """What a value is, in a stack file's words."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list | tuple | set | frozenset):
        return "a list"
    return type(value).__name__


def did_you_mean(word: str, options: Iterable[str], *, quoted: bool = False) -> str:
    """`; did you mean X?` for the closest option (ignoring case and `_`), or nothing. Values are
    quoted as messages show them; keys are not."""
    folded = {option.lower().replace("_", ""): option for option in options}
    close = difflib.get_close_matches(word.lower().replace("_", ""), list(folded), n=1, cutoff=0.6)
    if not close:
        return ""
    best = folded[close[0]]
    return f"; did you mean {best!r}?" if quoted else f"; did you mean {best}?"


def model_noun(model: type[BaseModel]) -> str:
    """`GpuPool` -> `GPU pool`: a settings model named as a user would name it. A cloud's model is
    named by the shared model it extends (`AksGpuPool` -> `GPU pool`): the user knows the stack's
    cloud, and the messages read the same on every cloud."""
    name = model.__name__
    shared = next((base.__name__ for base in model.__mro__[1:] if name.endswith(base.__name__)), name)
    words = re.sub(r"(?<!^)(?=[A-Z])", " ", shared).lower()
    return words.replace("gpu", "GPU")


def type_name(annotation: Any, plural: bool = False) -> str:
    """An annotation in words: `tuple[GpuPool, ...]` -> `a list of GPU pools`."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Annotated:
        return type_name(args[0], plural)
    if origin in (typing.Union, types.UnionType):
        named = [type_name(a, plural) for a in args if a is not type(None)]
        return " or ".join(named)
    if origin is Literal:
        return "one of " + ", ".join(repr(a) for a in args)
    if origin is tuple or origin is list:
        return "a list of " + type_name(args[0], plural=True)
    if origin is dict:
        return f"a mapping of {type_name(args[0], True)} to {type_name(args[1], True)}"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        noun = model_noun(annotation)
        if noun.endswith("settings"):
            return noun if plural else f"a mapping of {noun}"
        return f"{noun}s" if plural else f"a mapping of {noun} settings"
    words = {str: ("text", "strings"), bool: ("true or false", "booleans"), int: ("a whole number", "whole numbers"),
             float: ("a number", "numbers")}
    singular, many = words.get(annotation, (str(annotation), str(annotation)))
    return many if plural else singular


def literal_values(annotation: Any) -> tuple[Any, ...]:
    """The values a `Literal` annotation accepts, through `Annotated` and `| None`; () for any other."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is Literal:
        return args
    if origin is typing.Annotated:
        return literal_values(args[0])
    if origin in (typing.Union, types.UnionType):
        return tuple(v for a in args for v in literal_values(a))
    return ()


def model_in(annotation: Any) -> type[BaseModel] | None:
    """The settings model an annotation holds (directly, optionally, or as list items), or None."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if typing.get_origin(annotation) is dict:
        return None
    return next((m for a in typing.get_args(annotation) if (m := model_in(a)) is not None), None)


def _field(model: type[BaseModel], part: str) -> tuple[str, FieldInfo] | None:
    return next(((n, f) for n, f in model.model_fields.items() if part in (n, f.alias)), None)


def field_at(
    root: type[BaseModel], loc: Sequence[str | int]
) -> tuple[type[BaseModel], FieldInfo | None, tuple[str | int, ...]]:
    """The model holding the last key of `loc` that is a field, that field (None for an unknown key),
    and the rest of `loc` inside the field's value (list indexes, mapping keys)."""
    model: type[BaseModel] = root
    info: FieldInfo | None = None
    for i, part in enumerate(loc):
        if isinstance(part, int) or (info is not None and model_in(info.annotation) is None):
            continue
        if info is not None:
            model = model_in(info.annotation) or model
        found = _field(model, part)
        if found is None:
            return model, None, ()
        info = found[1]
        rest_start = i + 1
    if info is None:
        return model, None, ()
    return model, info, tuple(loc[rest_start:])


def _inside(annotation: Any, rest: Sequence[str | int]) -> Any:
    """The annotation of a list item or mapping value that `rest` reaches inside a field."""
    for _ in rest:
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if typing.get_origin(annotation) in (typing.Union, types.UnionType) and args:
            annotation, args = args[0], list(typing.get_args(args[0]))
        origin = typing.get_origin(annotation)
        if origin in (tuple, list):
            annotation = typing.get_args(annotation)[0]
        elif origin is dict:
            annotation = typing.get_args(annotation)[1]
    return annotation


def accepted_keys(model: type[BaseModel], style: KeyStyle) -> list[str]:
    return [(f.alias or n) if style == "stack" else n for n, f in model.model_fields.items()]


def python_path(root: type[BaseModel], path: str) -> str:
    """A stack file's key path (`gpuPools[0].maxPrice`) as Python args spell it (`gpu_pools[0].max_price`).
    Keys inside a mapping setting (labels, hours) are the user's own and stay as written."""
    out, model = "", root
    rest = path
    while rest:
        match = re.match(r"\.?([^.\[]+)((?:\[\d+\])*)", rest)
        if match is None or model is None:
            return out + rest
        found = _field(model, match.group(1))
        if found is None:
            return out + rest
        name, info = found
        out += ("." if out else "") + name + match.group(2)
        rest = rest[match.end():]
        model = model_in(info.annotation)
        if model is None and rest:
            return out + rest
    return out


#: A pattern a text setting must match, in words, by the pattern: the message says what is accepted
#: instead of printing a regular expression (the modules that define a pattern add it here).
PATTERN_WORDS: dict[str, str] = {}
#: Pydantic's errors for a number out of its bounds.
_BOUNDS = ("greater_than_equal", "less_than_equal", "greater_than", "less_than")


def _span(info: Any) -> str | None:
    """A field's bounds in words (`from 1 to 168`), or None when it has only one."""
    low = next((getattr(m, "ge", None) for m in info.metadata if getattr(m, "ge", None) is not None), None)
    high = next((getattr(m, "le", None) for m in info.metadata if getattr(m, "le", None) is not None), None)
    return None if low is None or high is None else f"from {low} to {high}"


def finite_hint(info: FieldInfo | None) -> str:
    """What a number field accepts, after "use a finite number": its description, which states the
    range (`maxPrice`: -1 or a positive USD/hour amount), or nothing for a field without one."""
    return f" ({info.description.rstrip('.')})" if info is not None and info.description else ""


def describe(error: Mapping[str, Any], root: type[BaseModel], style: KeyStyle) -> str:
    """One pydantic error as "what was wrong and what is accepted"."""
    kind_of, message, value = error["type"], error["msg"], error.get("input")
    loc = tuple(error["loc"])
    model, info, rest = field_at(root, loc)
    if kind_of == "value_error":
        return message.removeprefix("Value error, ")
    if kind_of == "missing":
        return "is required"
    if kind_of == "extra_forbidden":
        keys = accepted_keys(model, style)
        same = model.model_fields.get(str(loc[-1])) if style == "stack" else None
        if same is not None and same.alias:
            return f"is the same setting as {same.alias}, given twice; keep one of them"
        return f"is not a known key; accepted keys: {', '.join(keys)}{did_you_mean(str(loc[-1]), keys)}"
    if kind_of == "literal_error":
        expected = re.findall(r"'([^']*)'", str(error.get("ctx", {}).get("expected", "")))
        hint = did_you_mean(value, expected, quoted=True) if isinstance(value, str) else ""
        return f"{shown(value)} is not accepted; use {message.removeprefix('Input should be ')}{hint}"
    if kind_of == "finite_number":
        return f"{shown(value)} is not accepted; use a finite number{finite_hint(info)}"
    if kind_of in _BOUNDS and info is not None and (span := _span(info)) is not None:
        return f"{shown(value)} is not accepted; use {type_name(info.annotation)} {span}"
    if kind_of == "string_pattern_mismatch" and (words := PATTERN_WORDS.get(str(error.get("ctx", {}).get("pattern")))):
        return f"{shown(value)} is not accepted; use {words}"
    if kind_of.endswith(("_type", "_parsing")) and info is not None:
        hint = " (YAML 1.2, which Pulumi reads, takes yes, no, on and off as text)" if (
            kind_of == "bool_type" and isinstance(value, str) and style == "stack") else ""
        return f"{shown(value)} is {kind(value)}; use {type_name(_inside(info.annotation, rest))}{hint}"
    accepted = message.replace("Input should be", "use").replace("String should match pattern", "use a value matching")
    return f"{shown(value)} is not accepted; {accepted}"


def validation_problems(error: ValidationError) -> list[str]:
    """Pydantic's errors as `key.path: what is wrong`, without its 'Value error, ' prefix: for the
    files spotkube reads besides stack files (the price file, the GPU catalog)."""
    out = []
    for problem in error.errors():
        where = ".".join(str(part) for part in problem["loc"])
        message = problem["msg"].removeprefix("Value error, ")
        out.append(f"{where}: {message}" if where else message)
    return out


def timeout_problem(seconds: float) -> str | None:
    """Why a per-request timeout can't be used, or None: the HTTP clients refuse zero, negative and
    infinite timeouts with a traceback of their own (urllib3: "timestamp out of range")."""
    if math.isfinite(seconds) and seconds > 0:
        return None
    return f"the timeout must be a positive, finite number of seconds, got {seconds:g}"
