"""The configuration reference, generated from the spec models so that they are its only source:
docs/configuration.md's tables, Pulumi.yaml's `config:` block and the stack files' JSON Schema, whose
`if`/`then` per cloud offers a stack only its cloud's fields. Pure module: no Pulumi.
"""

from __future__ import annotations

import functools
import json
import os
import re
import types
import typing
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from spotkube.platform import coverage
from spotkube.platform.args_source import CLOUD_DEFAULTS, REGENERATE, args_files, docstring_of, plain, short_default
from spotkube.platform.catalog import bundled_catalog
from spotkube.platform.cloud import Clouds
from spotkube.platform.config_types import STACK_FILE_KEYS, config_types
from spotkube.platform.cost.prices import load_table
from spotkube.platform.records import record
from spotkube.platform.spec import CONFIG_NAMESPACE, PlatformSpec

README_START = "<!-- reference:start -->"
README_END = "<!-- reference:end -->"
YAML_START = "# reference:start"
YAML_END = "# reference:end"
SCHEMA_PATH = "schemas/stack.schema.json"
#: The page for stack authors that holds the reference tables.
REFERENCE_PATH = "docs/configuration.md"
#: The page whose coverage table (between `coverage.START` and `coverage.END`) comes from the shipped data.
COVERAGE_PATH = "docs/catalog.md"
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


def registry_description(name: str, clouds: Clouds) -> str | None:
    """The description of a top-level key that names the registered clouds (`cloud`, `region`): the
    shared spec's own says what it is without naming any cloud."""
    if name == "cloud":
        return f"Which cloud: {_or([_code(c) for c in clouds])}."
    if name == "region":
        regions = {c.title: c.default_region or c.region_examples.split()[0].rstrip(",") for c in clouds.values()}
        return f"The cloud's region, e.g. {_or([f'{region} on {title}' for title, region in regions.items()])}."
    return None


def project_defaults(clouds: Clouds) -> Mapping[str, str]:
    """The model requires these keys (component args always give them), but a stack may leave them out:
    Pulumi.yaml then supplies these defaults, so a bare stack is a dev platform of the registry's first
    cloud, in that cloud's default region."""
    first = next(iter(clouds.values()))
    if first.default_region is None:
        raise ValueError(f"{first.cloud}, the registry's first cloud, is the project's default: give it a "
                         "default_region")
    return {"cloud": first.cloud, "environment": "dev", "region": first.default_region}


def cloud_defaults(clouds: Clouds) -> Mapping[tuple[type[BaseModel], str], Mapping[str, str]]:
    """(shared model, field) -> {cloud: default} of the fields left unset that validation fills in
    from the cloud's profile; a cloud's own model of that section (e.g. `AksSystemPool`) has them too."""
    return {key: {cloud: getattr(p, attribute) for cloud, p in clouds.items()}
            for key, attribute in CLOUD_DEFAULTS.items()}


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


@record
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


def cloud_sections(clouds: Clouds) -> dict[str, dict[str, type[BaseModel]]]:
    """Every section of any cloud's spec, in order: path -> {cloud: the model it has there}."""
    out: dict[str, dict[str, type[BaseModel]]] = {}
    for cloud, profile in clouds.items():
        for section in sections(profile.spec_model):
            out.setdefault(section.path, {})[cloud] = section.model
    return out


@functools.cache
def _schema_of(model: type[BaseModel]) -> dict[str, Any]:
    return model.model_json_schema(by_alias=True)


def _property(model: type[BaseModel], key: str) -> dict[str, Any]:
    """The JSON Schema of one field (by alias), as pydantic generates it for validation."""
    return _schema_of(model)["properties"][key]


def _default(field: FieldInfo) -> Any:
    return field.get_default(call_default_factory=True)


# --- the reference tables (docs/configuration.md) -------------------------------------------------


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
    if project and key in project_defaults(clouds):
        return _code(project_defaults(clouds)[key])
    for (shared, field_name), by_cloud in cloud_defaults(clouds).items():
        if field_name == name and issubclass(model, shared):
            owners = [cloud for cloud, p in clouds.items() if _uses(p.spec_model, model)]
            if len(owners) == 1:
                return _code(by_cloud[owners[0]])
            return ", ".join(f"{_code(value)} ({clouds[cloud].title})" for cloud, value in by_cloud.items())
    if field.is_required():
        return "required"
    value = _default(field)
    if value is None:
        return "unset"
    if isinstance(value, BaseModel | dict):
        return _code("{}") if not isinstance(value, dict) or not value else _code(json.dumps(value))
    if isinstance(value, tuple | list | bool | int | float):
        return _code(json.dumps(plain(value)))
    return _code(str(value))


def _uses(spec_model: type[BaseModel], model: type[BaseModel]) -> bool:
    """Whether a cloud's spec holds `model` somewhere (its own or a shared one)."""
    return any(section.model is model for section in sections(spec_model))


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _table(model: type[BaseModel], path: str, header: str, clouds: Clouds) -> list[str]:
    rows = [f"| {header} | type | default | meaning |", "|---|---|---|---|"]
    top = model is PlatformSpec
    for name, field in model.model_fields.items():
        key = alias(name, field)
        meaning = (top and registry_description(name, clouds)) or field.description or ""
        inner, many = nested_model(field.annotation)
        if inner is not None:
            below = f"{path}.{key}" if path else key
            meaning += f" See **`{below}{'[]' if many else ''}`**."
        default = default_text(model, name, field, clouds, project=top)
        # Every cloud's spec narrows `cloud` to its own name: the top table names them all.
        kind = _or([_code(c) for c in clouds]) if top and name == "cloud" else type_text(_property(model, key))
        cells = [_code(key), kind, default, meaning]
        rows.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return rows


def readme_reference(clouds: Clouds) -> str:
    """The Markdown between README_START and README_END (the markers excluded)."""
    lines = [
        f"<!-- Generated from the spec models (spotkube.platform.spec and each cloud's spec) by `{REGENERATE}`: "
        "change their `description=`, not this text. -->",
        "",
        f"Stack files name the JSON Schema `{SCHEMA_PATH}` on their first line, so an editor with the YAML "
        "language server completes these keys and checks their types; `spotkube plan` checks the rest (the "
        "cloud's names, machines, zones and combinations of keys). The defaults of `cloud`, `environment` and "
        "`region` are `Pulumi.yaml`'s: the components have none (each is one cloud, and `environment` and "
        "`region` are required args). Where the clouds' fields differ, a section has a table per cloud, and "
        "a stack (or a component's args) takes only its cloud's.",
        "",
        *_table(PlatformSpec, "", "key", clouds),
    ]
    for path, by_cloud in cloud_sections(clouds).items():
        models = list(dict.fromkeys(by_cloud.values()))
        for model in models:
            owners = [clouds[c].title for c, m in by_cloud.items() if m is model]
            which = f" ({', '.join(owners)})" if len(models) > 1 or len(owners) < len(clouds) else ""
            intro = docstring_of(model)
            lines += ["", f"**`{path}`**{which}: {intro}" if intro else f"**`{path}`**{which}", ""]
            lines += _table(model, path, "field", clouds)
    return "\n".join(lines) + "\n"


# --- Pulumi.yaml ----------------------------------------------------------------------------------


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
        shown = "" if field.is_required() else short_default(_default(field))
        parts.append(f"{key} ({shown})" if shown else key)
    return ", ".join(parts)


def pulumi_config(clouds: Clouds) -> dict[str, dict[str, Any]]:
    """Pulumi.yaml's `config:` declarations: type, description and default of every top-level key.
    Pulumi declares one type per key for every stack, so an object's description names its fields on
    each cloud where they differ."""
    out: dict[str, dict[str, Any]] = {}
    types = config_types()
    for name, field in PlatformSpec.model_fields.items():
        key = alias(name, field)
        schema = _property(PlatformSpec, key)
        kind = types[key]
        declaration: dict[str, Any] = {"type": kind}
        inner, _ = nested_model(field.annotation)
        if kind == "array":
            declaration["items"] = {"type": "object" if inner else schema.get("items", {}).get("type", "string")}
        description = registry_description(name, clouds) or field.description or ""
        if inner is not None:
            summaries: dict[str, list[str]] = {}
            for profile in clouds.values():
                own, _ = nested_model(profile.spec_model.model_fields[name].annotation)
                summaries.setdefault(fields_summary(own or inner), []).append(profile.title)
            if len(summaries) == 1:
                description += f" Fields: {next(iter(summaries))}."
            else:
                description += "".join(f" Fields on {' and '.join(titles)}: {summary}."
                                       for summary, titles in summaries.items())
        declaration["description"] = description
        if key in project_defaults(clouds):
            declaration["default"] = project_defaults(clouds)[key]
        elif not field.is_required():
            value = _default(field)  # an object's {} means "every field takes its default"
            declaration["default"] = {} if isinstance(value, BaseModel) else plain(value)
        else:
            raise ValueError(f"{key} is required by the model and has no project default (project_defaults)")
        out[key] = declaration
    return out


def _scalar(value: Any) -> str:
    """A YAML scalar: plain when that reads back as the same value, else JSON (valid YAML flow)."""
    if isinstance(value, str) and value and yaml.safe_load(value) == value:
        return value
    return json.dumps(value, ensure_ascii=False)


def pulumi_config_block(clouds: Clouds) -> str:
    """The text between YAML_START and YAML_END in Pulumi.yaml (the markers excluded)."""
    lines = ["config:"]
    for key, declaration in pulumi_config(clouds).items():
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


def _cloud_is(cloud: str, clouds: Clouds) -> dict[str, Any]:
    """The `if` of a cloud's branch: the stack names the cloud (as `spotkube:cloud` or `cloud`), or
    names none and the cloud is Pulumi.yaml's default."""
    named = {"properties": {f"{CONFIG_NAMESPACE}:cloud": {"const": cloud}, "cloud": {"const": cloud}}}
    if cloud == project_defaults(clouds)["cloud"]:
        return {"properties": {"config": named}}
    either = {"anyOf": [{"required": [f"{CONFIG_NAMESPACE}:cloud"]}, {"required": ["cloud"]}]}
    return {"required": ["config"], "properties": {"config": {**named, **either}}}


def stack_schema(clouds: Clouds) -> dict[str, Any]:
    """The JSON Schema (draft-07) of `stacks/Pulumi.<stack>.yaml`: the keys every stack may set, and
    for each cloud (`if` the stack is of that cloud) the schema of its own spec, so that an editor
    offers and accepts only the stack's cloud's fields."""
    definitions: dict[str, Any] = {}
    branches = []
    for cloud, profile in clouds.items():
        spec = _clean(profile.spec_model.model_json_schema(by_alias=True))
        for name, definition in spec.get("definitions", {}).items():
            if definitions.setdefault(name, definition) != definition:
                raise ValueError(f"two clouds' specs define {name} differently; give one a name of its own")
        own = {key: value for key, value in spec["properties"].items() if key != "cloud"}
        branches.append({"if": _cloud_is(cloud, clouds), "then": {"properties": {"config": {
            "properties": {f"{CONFIG_NAMESPACE}:{key}": value for key, value in own.items()},
            "patternProperties": {f"^{re.escape(key)}$": value for key, value in own.items()},
        }}}})
    keys: dict[str, Any] = {}
    for name, field in PlatformSpec.model_fields.items():
        key = alias(name, field)
        value: dict[str, Any] = {"description": registry_description(name, clouds) or field.description or ""}
        if name == "cloud":
            value["enum"] = list(clouds)
        if key in project_defaults(clouds):
            value["default"] = project_defaults(clouds)[key]
        keys[f"{CONFIG_NAMESPACE}:{key}"] = value
    config = {
        "type": "object",
        "description": f"Config values: `{CONFIG_NAMESPACE}:` keys (checked here, and fully by `spotkube plan`) "
        "and other namespaces' keys, such as a cloud provider's own settings (not checked).",
        "properties": keys,
        "patternProperties": {
            # A key without namespace is the project's (`cloud` is `spotkube:cloud`); as a pattern, it is
            # checked like its namespaced twin but kept out of editors' completions.
            **{f"^{re.escape(k.split(':', 1)[1])}$": v for k, v in keys.items()},
            f"^(?!{re.escape(CONFIG_NAMESPACE)}:)[^:]+:.+$": {},
        },
        "additionalProperties": False,
    }
    return {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "$comment": f"Generated from the spec models of every cloud by `{REGENERATE}`; do not edit.",
        "title": "spotkube stack file",
        "description": "A Pulumi stack file of the spotkube project (stacks/Pulumi.<stack>.yaml).",
        "type": "object",
        "properties": {"config": config, **STACK_FILE_KEYS},
        "additionalProperties": False,
        "allOf": branches,
        "definitions": dict(sorted(definitions.items())),
    }


def stack_schema_text(clouds: Clouds) -> str:
    return json.dumps(stack_schema(clouds), indent=2, ensure_ascii=False) + "\n"


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
    """What every generated file under the project `root` should contain (read-only). Raises ValueError
    when a file lacks its markers."""
    readme, manifest = root / REFERENCE_PATH, root / "Pulumi.yaml"
    files = {
        readme: replace_between(readme.read_text(), README_START, README_END, readme_reference(clouds),
                                REFERENCE_PATH),
        manifest: replace_between(manifest.read_text(), YAML_START, YAML_END, pulumi_config_block(clouds),
                                  "Pulumi.yaml"),
        root / SCHEMA_PATH: stack_schema_text(clouds),
    }
    catalog_page = root / COVERAGE_PATH
    if catalog_page.is_file():
        shipped = bundled_catalog({name: p.catalog_file for name, p in clouds.items()
                                   if p.catalog_file is not None})
        prices = load_table({p.pricing.name: p.pricing for p in clouds.values()})
        files[catalog_page] = replace_between(catalog_page.read_text(), coverage.START, coverage.END,
                                              coverage.coverage_markdown(shipped, prices, clouds), COVERAGE_PATH)
    for stack in sorted(root.glob(STACK_GLOB)):
        files[stack] = with_modeline(stack.read_text())
    # The components' args modules, when `root` is the project this package's source lives in.
    for path, text in args_files(clouds).items():
        if path.is_relative_to(root.resolve()):
            files[path] = text
    return files
