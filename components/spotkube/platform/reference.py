"""The configuration reference, generated from the spec models so that they are its only source.

`spotkube.platform.spec` declares every stack key once: name (the camelCase alias), type, constraints,
default and `description=`. From those models this module renders
- the "Configuration reference" tables of docs/configuration.md (`REFERENCE_PATH`, between `README_START`
  and `README_END`),
- the `config:` block of Pulumi.yaml (between `YAML_START` and `YAML_END`),
- the JSON Schema of stack files (`SCHEMA_PATH`), which the stack files name on their first line
  (`MODELINE`) so that editors with the YAML language server complete and check them,
and checks that the component args TypedDicts have the keys and types of the models they mirror.
It only returns text; `spotkube.cli.reference` writes it. Pure module: no Pulumi.
"""

from __future__ import annotations

import functools
import json
import os
import re
import types
import typing
from collections.abc import Awaitable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from spotkube.platform.cloud import Clouds
from spotkube.platform.spec import CONFIG_NAMESPACE, ClusterSettings, PlatformPool, PlatformSpec, SystemPool

README_START = "<!-- reference:start -->"
README_END = "<!-- reference:end -->"
YAML_START = "# reference:start"
YAML_END = "# reference:end"
SCHEMA_PATH = "schemas/stack.schema.json"
#: The page for stack authors that holds the reference tables.
REFERENCE_PATH = "docs/configuration.md"
STACK_GLOB = "stacks/Pulumi.*.yaml"


def _schema_line(schema: str) -> str:
    return f"# yaml-language-server: $schema={schema}"


#: The first line of every shipped stack file (relative to stacks/).
MODELINE = _schema_line(f"../{SCHEMA_PATH}")


def modeline(stack_dir: Path, root: Path) -> str | None:
    """The modeline for a stack file in `stack_dir` of the project at `root`: the schema's path
    relative to the stack file, or None when the project carries no schema (a project of its own)."""
    schema = root / SCHEMA_PATH
    if not schema.is_file():
        return None
    return _schema_line(Path(os.path.relpath(schema, stack_dir)).as_posix())
REGENERATE = "python -m spotkube.cli.reference write"

#: The model requires these keys (component args always give them), but a stack may leave them out:
#: Pulumi.yaml then supplies these defaults, so a bare stack is a dev platform on AKS in uksouth.
PROJECT_DEFAULTS: Mapping[str, str] = {"cloud": "aks", "environment": "dev", "region": "uksouth"}

#: Fields left unset that validation fills in from the cloud's profile: (model, field) -> {cloud: default}.
def cloud_defaults(clouds: Clouds) -> Mapping[tuple[type[BaseModel], str], Mapping[str, str]]:
    """(model, field) -> {cloud: default} of the fields left unset that validation fills in."""
    return {
        (SystemPool, "machine"): {cloud: p.default_machine for cloud, p in clouds.items()},
        (PlatformPool, "machine"): {cloud: p.default_machine for cloud, p in clouds.items()},
        (ClusterSettings, "channel"): {cloud: p.default_channel for cloud, p in clouds.items()},
    }

#: Keys a Pulumi stack file may carry next to `config`.
STACK_FILE_KEYS: Mapping[str, dict[str, Any]] = {
    "encryptionsalt": {"type": "string", "description": "Salt of the passphrase secrets provider."},
    "secretsprovider": {"type": "string", "description": "The stack's secrets provider, e.g. a KMS URL."},
    "encryptedkey": {"type": "string", "description": "The data key, encrypted by the secrets provider."},
    "environment": {
        "description": "Pulumi ESC environments whose values the stack imports.",
        "anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "object"}],
    },
}

_PLURAL = {"string": "strings", "integer": "integers", "number": "numbers", "boolean": "booleans", "object": "objects"}


# --- walking the models -----------------------------------------------------------------------------


def alias(name: str, field: FieldInfo) -> str:
    return field.alias or name


def nested_model(annotation: Any) -> tuple[type[BaseModel] | None, bool]:
    """The model a field holds, and whether it holds a list of them: `tuple[GpuPool, ...]` -> (GpuPool, True)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation, False
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in args if a is not type(None)]
        return nested_model(inner[0]) if len(inner) == 1 else (None, False)
    if origin in (tuple, list) and args:
        model, _ = nested_model(args[0])
        return model, model is not None
    return None, False


@dataclass(frozen=True)
class Section:
    """One table of the reference: a model and where it sits in a stack, e.g. `gpuPools[].gpu`."""

    path: str
    model: type[BaseModel]


def sections(model: type[BaseModel] = PlatformSpec, path: str = "") -> Iterator[Section]:
    """Every nested model under `model`, depth first in field order."""
    for name, field in model.model_fields.items():
        inner, many = nested_model(field.annotation)
        if inner is None:
            continue
        here = f"{path}.{alias(name, field)}" if path else alias(name, field)
        here += "[]" if many else ""
        yield Section(here, inner)
        yield from sections(inner, here)


@functools.cache
def _spec_schema() -> dict[str, Any]:
    return PlatformSpec.model_json_schema(by_alias=True)


def _property(model: type[BaseModel], key: str) -> dict[str, Any]:
    """The JSON Schema of one field (by alias), as pydantic generates it for validation."""
    schema = _spec_schema() if model is PlatformSpec else _spec_schema()["$defs"][model.__name__]
    return schema["properties"][key]


def _default(field: FieldInfo) -> Any:
    return field.get_default(call_default_factory=True)


def _docstring(model: type[BaseModel]) -> str:
    return " ".join((model.__doc__ or "").split())


# --- README tables --------------------------------------------------------------------------------


def _code(value: str) -> str:
    return f"`{value}`"


def _or(values: Sequence[str]) -> str:
    return values[0] if len(values) == 1 else f"{', '.join(values[:-1])} or {values[-1]}"


def _bounds(schema: Mapping[str, Any]) -> str:
    low = schema.get("minimum", schema.get("exclusiveMinimum"))
    high = schema.get("maximum", schema.get("exclusiveMaximum"))
    if low is not None and high is not None:
        return f"{low:g} to {high:g}"
    if low is not None:
        return f">= {low:g}" if "minimum" in schema else f"> {low:g}"
    if high is not None:
        return f"<= {high:g}" if "maximum" in schema else f"< {high:g}"
    return ""


def type_text(schema: Mapping[str, Any], plural: bool = False) -> str:
    """A field's type and constraints in words, from its JSON Schema."""
    options = [s for s in schema.get("anyOf", [schema]) if s.get("type") != "null"]
    schema = options[0] if len(options) == 1 else schema
    if "$ref" in schema:
        return "objects" if plural else "object"
    if "enum" in schema:
        return ("one of " if plural else "") + _or([_code(str(v)) for v in schema["enum"]])
    kind = schema.get("type", "any")
    if kind == "array":
        text = f"list of {type_text(schema.get('items', {}), plural=True)}"
        if "maxItems" in schema:
            text += f", at most {schema['maxItems']}"
        return text
    if kind == "object":
        values = schema.get("additionalProperties")
        return f"map of {type_text(values, plural=True)}" if isinstance(values, dict) else "object"
    text = _PLURAL.get(kind, kind) if plural else kind
    if "pattern" in schema:
        text += f" matching {_code(schema['pattern'])}"
    elif schema.get("minLength") == 1:
        text = f"non-empty {text}"
    bounds = _bounds(schema)
    return f"{text}, {bounds}" if bounds else text


def default_text(model: type[BaseModel], name: str, field: FieldInfo, clouds: Clouds, project: bool = False) -> str:
    """A field's default as the README shows it."""
    key = alias(name, field)
    if project and key in PROJECT_DEFAULTS:
        return _code(PROJECT_DEFAULTS[key])
    defaults = cloud_defaults(clouds)
    if (model, name) in defaults:
        shown = [f"{_code(value)} ({clouds[cloud].title})" for cloud, value in defaults[model, name].items()]
        return ", ".join(shown)
    if field.is_required():
        return "required"
    value = _default(field)
    if value is None:
        return "unset"
    if isinstance(value, BaseModel | dict):
        return _code("{}") if not isinstance(value, dict) or not value else _code(json.dumps(value))
    if isinstance(value, tuple | list | bool | int | float):
        return _code(json.dumps(_plain(value)))
    return _code(str(value))


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _table(model: type[BaseModel], path: str, header: str, clouds: Clouds) -> list[str]:
    rows = [f"| {header} | type | default | meaning |", "|---|---|---|---|"]
    top = model is PlatformSpec
    for name, field in model.model_fields.items():
        key = alias(name, field)
        meaning = field.description or ""
        inner, many = nested_model(field.annotation)
        if inner is not None:
            below = f"{path}.{key}" if path else key
            meaning += f" See **`{below}{'[]' if many else ''}`**."
        default = default_text(model, name, field, clouds, project=top)
        cells = [_code(key), type_text(_property(model, key)), default, meaning]
        rows.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return rows


def readme_reference(clouds: Clouds) -> str:
    """The Markdown between README_START and README_END (the markers excluded)."""
    lines = [
        f"<!-- Generated from the models in spotkube.platform.spec by `{REGENERATE}`: change their `description=`, "
        "not this text. -->",
        "",
        f"Stack files name the JSON Schema `{SCHEMA_PATH}` on their first line, so an editor with the YAML "
        "language server completes these keys and checks their types; `spotkube plan` checks the rest (the "
        "cloud's names, machines, zones and combinations of keys). The defaults of `cloud`, `environment` and "
        "`region` are `Pulumi.yaml`'s: the components have none (each is one cloud, and `environment` and "
        "`region` are required args).",
        "",
        *_table(PlatformSpec, "", "key", clouds),
    ]
    for section in sections():
        intro = _docstring(section.model)
        lines += ["", f"**`{section.path}`**: {intro}" if intro else f"**`{section.path}`**", ""]
        lines += _table(section.model, section.path, "field", clouds)
    return "\n".join(lines) + "\n"


# --- Pulumi.yaml ----------------------------------------------------------------------------------


def _short_default(value: Any) -> str:
    if value is None or isinstance(value, BaseModel) or (isinstance(value, tuple | list | dict) and not value):
        return ""
    if isinstance(value, bool | int | float | dict | list | tuple):
        return json.dumps(_plain(value))
    return str(value)


def fields_summary(model: type[BaseModel]) -> str:
    """`name (system), machine, min (2), ...`: a model's keys with their simple defaults."""
    parts = []
    for name, field in model.model_fields.items():
        key = alias(name, field)
        inner, many = nested_model(field.annotation)
        if inner is not None:
            keys = ", ".join(alias(n, f) for n, f in inner.model_fields.items())
            parts.append(f"{key} [{{{keys}}}]" if many else f"{key} ({keys})")
            continue
        shown = "" if field.is_required() else _short_default(_default(field))
        parts.append(f"{key} ({shown})" if shown else key)
    return ", ".join(parts)


_PULUMI_TYPES = {"string", "integer", "boolean", "array", "object"}


def pulumi_config() -> dict[str, dict[str, Any]]:
    """Pulumi.yaml's `config:` declarations: type, description and default of every top-level key."""
    out: dict[str, dict[str, Any]] = {}
    for name, field in PlatformSpec.model_fields.items():
        key = alias(name, field)
        schema = _property(PlatformSpec, key)
        kind = "object" if "$ref" in schema else schema.get("type")
        if kind not in _PULUMI_TYPES:
            raise ValueError(f"{key}: JSON type {kind!r} has no Pulumi config type")
        declaration: dict[str, Any] = {"type": kind}
        inner, _ = nested_model(field.annotation)
        if kind == "array":
            declaration["items"] = {"type": "object" if inner else schema.get("items", {}).get("type", "string")}
        description = field.description or ""
        if inner is not None:
            description += f" Fields: {fields_summary(inner)}."
        declaration["description"] = description
        if key in PROJECT_DEFAULTS:
            declaration["default"] = PROJECT_DEFAULTS[key]
        elif not field.is_required():
            value = _default(field)  # an object's {} means "every field takes its default"
            declaration["default"] = {} if isinstance(value, BaseModel) else _plain(value)
        else:
            raise ValueError(f"{key} is required by the model and has no project default in PROJECT_DEFAULTS")
        out[key] = declaration
    return out


def _plain(value: Any) -> Any:
    """A default as YAML and JSON hold it: tuples become lists."""
    return list(value) if isinstance(value, tuple) else value


def _scalar(value: Any) -> str:
    """A YAML scalar: plain when that reads back as the same value, else JSON (valid YAML flow)."""
    if isinstance(value, str) and value and yaml.safe_load(value) == value:
        return value
    return json.dumps(value, ensure_ascii=False)


def pulumi_config_block() -> str:
    """The text between YAML_START and YAML_END in Pulumi.yaml (the markers excluded)."""
    lines = ["config:"]
    for key, declaration in pulumi_config().items():
        lines.append(f"  {key}:")
        lines.append(f"    type: {declaration['type']}")
        if "items" in declaration:
            lines += ["    items:", f"      type: {declaration['items']['type']}"]
        lines.append(f"    description: {json.dumps(declaration['description'], ensure_ascii=False)}")
        lines.append(f"    default: {_scalar(declaration['default'])}")
    return "\n".join(lines) + "\n"


# --- JSON Schema of stack files -------------------------------------------------------------------


def _clean(node: Any) -> Any:
    """Pydantic's schema, for draft-07 editors: no titles, `definitions`, and `$ref` alone in its object."""
    if isinstance(node, list):
        return [_clean(item) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "title":
            continue
        if key in ("properties", "$defs", "definitions", "patternProperties"):
            out["definitions" if key == "$defs" else key] = {k: _clean(v) for k, v in value.items()}
        elif key == "$ref":
            out[key] = value.replace("#/$defs/", "#/definitions/")
        else:
            out[key] = _clean(value)
    if "$ref" in out and len(out) > 1:
        ref = out.pop("$ref")
        out = {"allOf": [{"$ref": ref}], **out}
    return out


def stack_schema() -> dict[str, Any]:
    """The JSON Schema (draft-07) of `stacks/Pulumi.<stack>.yaml`."""
    spec = _clean(PlatformSpec.model_json_schema(by_alias=True))
    keys: dict[str, Any] = {}
    for key, value in spec["properties"].items():
        if key in PROJECT_DEFAULTS:
            value = {**value, "default": PROJECT_DEFAULTS[key]}
        keys[f"{CONFIG_NAMESPACE}:{key}"] = value
    config = {
        "type": "object",
        "description": f"Config values: `{CONFIG_NAMESPACE}:` keys (checked here, and fully by `spotkube plan`) "
        "and other namespaces' keys such as `azure-native:location` or `gcp:project` (not checked).",
        "properties": keys,
        "patternProperties": {
            # A key without namespace is the project's (`cloud` is `spotkube:cloud`); as a pattern, it is
            # checked like its namespaced twin but kept out of editors' completions.
            **{f"^{re.escape(k)}$": keys[f"{CONFIG_NAMESPACE}:{k}"] for k in spec["properties"]},
            f"^(?!{re.escape(CONFIG_NAMESPACE)}:)[^:]+:.+$": {},
        },
        "additionalProperties": False,
    }
    return {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "$comment": f"Generated from the models in spotkube.platform.spec by `{REGENERATE}`; do not edit.",
        "title": "spotkube stack file",
        "description": "A Pulumi stack file of the spotkube project (stacks/Pulumi.<stack>.yaml).",
        "type": "object",
        "properties": {"config": config, **STACK_FILE_KEYS},
        "additionalProperties": False,
        "definitions": spec.get("definitions", {}),
    }


def stack_schema_text() -> str:
    return json.dumps(stack_schema(), indent=2, ensure_ascii=False) + "\n"


# --- putting generated text in place ----------------------------------------------------------------


def replace_between(text: str, start: str, end: str, body: str, source: str) -> str:
    """`text` with the lines between the `start` and `end` marker lines replaced by `body`."""
    lines = text.splitlines(keepends=True)
    starts = [i for i, line in enumerate(lines) if line.startswith(start)]
    ends = [i for i, line in enumerate(lines) if line.startswith(end)]
    if len(starts) != 1 or len(ends) != 1 or ends[0] < starts[0]:
        raise ValueError(f"{source} needs one {start!r} line followed by one {end!r} line")
    return "".join([*lines[: starts[0] + 1], body, *lines[ends[0]:]])


def with_modeline(text: str) -> str:
    """A stack file's text with MODELINE as its first line (replacing an older modeline)."""
    lines = text.splitlines(keepends=True)
    if lines and lines[0].startswith("# yaml-language-server:"):
        lines = lines[1:]
    return "".join([MODELINE + "\n", *lines])


def generated_files(root: Path, clouds: Clouds) -> dict[Path, str]:
    """What every generated file under the project `root` should contain, read-only: docs/configuration.md
    and Pulumi.yaml with their marked parts regenerated, the stack schema, and the stack files with their
    modeline. Raises ValueError when a file lacks its markers."""
    readme, manifest = root / REFERENCE_PATH, root / "Pulumi.yaml"
    files = {
        readme: replace_between(readme.read_text(), README_START, README_END, readme_reference(clouds),
                                REFERENCE_PATH),
        manifest: replace_between(manifest.read_text(), YAML_START, YAML_END, pulumi_config_block(), "Pulumi.yaml"),
        root / SCHEMA_PATH: stack_schema_text(),
    }
    for stack in sorted(root.glob(STACK_GLOB)):
        files[stack] = with_modeline(stack.read_text())
    return files


# --- the args TypedDicts against the models -----------------------------------------------------------


def _kind(annotation: Any, pairs: Mapping[type, type[BaseModel]]) -> Any:
    """A comparable shape of a type: `tuple[str, ...]` and `list[str]` -> ("list", "string")."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (typing.NotRequired, typing.Required):
        return _kind(args[0], pairs)
    if origin is typing.Annotated:
        return _kind(args[0], pairs)
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in args if a is not type(None)]
        # `T | Awaitable[T] | Output[T]` (pulumi's Input: args that accept another resource's output)
        # mirror the model's T, which is what the component hands the model once the value resolves.
        awaitable = [a for a in inner if typing.get_origin(a) is Awaitable]
        if awaitable:
            return _kind(typing.get_args(awaitable[0])[0], pairs)
        return _kind(inner[0], pairs) if len(inner) == 1 else tuple(_kind(a, pairs) for a in inner)
    if origin is Literal:
        return _kind(type(args[0]), pairs)
    if origin in (tuple, list):
        return ("list", _kind(args[0], pairs))
    if origin is dict:
        return ("map", _kind(args[1], pairs))
    if annotation in pairs:
        return ("model", pairs[annotation].__name__)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return ("model", annotation.__name__)
    return {str: "string", int: "integer", float: "number", bool: "boolean"}.get(annotation, repr(annotation))


def typed_dict_mismatches(
    typed_dict: type,
    model: type[BaseModel],
    pairs: Mapping[type, type[BaseModel]],
    only_in_model: Sequence[str] = (),
    only_in_args: Sequence[str] = (),
) -> list[str]:
    """How an args TypedDict differs from the model it mirrors: keys, types, and which keys are required.

    `pairs` maps the other TypedDicts to their models, so that nested args are compared by model.
    `only_in_model` and `only_in_args` are the intended differences (e.g. `cloud`, which a component
    of one cloud doesn't take); listing one that isn't a difference is a mismatch too.
    """
    hints = typing.get_type_hints(typed_dict, include_extras=True)
    fields = model.model_fields
    name = f"{typed_dict.__name__} vs {model.__name__}"
    problems = []
    for key in only_in_model:
        if key not in fields or key in hints:
            problems.append(f"{name}: {key!r} is listed as only in the model, but isn't")
    for key in only_in_args:
        if key in fields or key not in hints:
            problems.append(f"{name}: {key!r} is listed as only in the args, but isn't")
    expected = set(fields) - set(only_in_model)
    for key in sorted(expected - set(hints)):
        problems.append(f"{name}: the model has {key!r}, the args don't")
    for key in sorted(set(hints) - expected - set(only_in_args)):
        problems.append(f"{name}: the args have {key!r}, the model doesn't")
    required = typed_dict.__required_keys__  # type: ignore[attr-defined]
    for key in sorted(expected & set(hints)):
        args_kind, model_kind = _kind(hints[key], pairs), _kind(fields[key].annotation, pairs)
        if args_kind != model_kind:
            problems.append(f"{name}: {key!r} is {args_kind} in the args and {model_kind} in the model")
        if (key in required) != fields[key].is_required():
            state = {True: "required", False: "optional"}
            problems.append(f"{name}: {key!r} is {state[fields[key].is_required()]} in the model and "
                            f"{state[key in required]} in the args")
    return problems
