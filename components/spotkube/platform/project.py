"""Finding the Pulumi project and reading its stacks the way the Pulumi engine does.

The engine merges `Pulumi.yaml`'s defaults into the stack file's config and hands the program every
value as a string; the offline plan has no engine, so it takes the same steps (`read_stack_file`,
`stack_config`, `as_pulumi_config`) and both paths read the strings with `read_spec`. Why, with
sources: docs/platform-facts.md#pulumi-config. Pure module: no Pulumi.
"""

from __future__ import annotations

import copy
import dataclasses
import difflib
import functools
import json
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import field
from decimal import Decimal
from pathlib import Path
from typing import Any

from spotkube.platform.cloud import Clouds
from spotkube.platform.config_types import STACK_FILE_KEYS, config_types
from spotkube.platform.errors import Problem, SpecError, StackNotFound
from spotkube.platform.input_messages import cut, field_at, finite_hint, shown
from spotkube.platform.records import record
from spotkube.platform.spec import CONFIG_KEYS, CONFIG_NAMESPACE, PlatformSpec, config_key
from spotkube.platform.strict_yaml import CORE_TAGS, KeyPath, YamlDocument, dotted, load_yaml
from spotkube.platform.validation import deployable, parse_spec

#: The sections of a Pulumi stack file (`workspace.ProjectStack`); Pulumi silently ignores any other.
STACK_SECTIONS: tuple[str, ...] = ("config", *STACK_FILE_KEYS)


@record
class Project:
    """A Pulumi project directory. `defaults`: by full key (`spotkube:cloud`), the value the engine gives
    a key the stack leaves out; `declared`: the keys declared with a `type:`, which the engine checks."""

    root: Path
    name: str
    stack_dir: Path
    main: Path
    defaults: Mapping[str, Any] = field(default_factory=dict)
    declared: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    #: The virtualenv the runtime's options name (`runtime.options.virtualenv`), where `pulumi up` runs the program.
    virtualenv: str | None = None

    def stack_file(self, stack: str) -> Path:
        return self.stack_dir / f"Pulumi.{stack}.yaml"

    def stacks(self) -> list[str]:
        return sorted(p.name[len("Pulumi."):-len(".yaml")] for p in self.stack_dir.glob("Pulumi.*.yaml"))

    @property
    def declares_platforms(self) -> bool:
        """Whether `Pulumi.yaml` declares spotkube's own keys, as this repository's does: each stack then
        describes one platform under `spotkube:`. Another project's program reads its own keys."""
        return any(key.startswith(f"{CONFIG_NAMESPACE}:") for key in (*self.declared, *self.defaults))

    def relative(self, path: Path) -> str:
        """Paths in messages are relative to the project, as a user would type them."""
        try:
            return str(path.relative_to(self.root))
        except ValueError:
            return str(path)


def _read(path: Path, source: str, describe: Callable[[KeyPath], str] = dotted) -> YamlDocument:
    """The file as the engine reads it. A plan reads a stack file three times and parsing YAML is slow,
    so the same bytes are parsed once; each reader gets its own copy of the values."""
    try:
        data = path.read_bytes()
    except OSError as err:
        raise SpecError(source, [Problem("file", f"can't be read: {err.strerror or err}")]) from None
    document = _parsed(data, source, describe)
    return dataclasses.replace(document, value=copy.deepcopy(document.value))


@functools.lru_cache(maxsize=32)
def _parsed(data: bytes, source: str, describe: Callable[[KeyPath], str]) -> YamlDocument:
    return load_yaml(data, source, describe)


def _kind(value: Any) -> str:
    """What a YAML value is, in a user's words."""
    if value is None:
        return "empty (null)"
    if isinstance(value, bool):
        return f"a boolean ({shown(value)})"
    if isinstance(value, int | float):
        return f"a number ({shown(value)})"
    if isinstance(value, str):
        return f"a string ({shown(value)})"
    return f"a list ({shown(value)})" if isinstance(value, list) else f"a mapping ({shown(value)})"


# --- Pulumi.yaml ------------------------------------------------------------------------------------


def _key(namespace: str, key: str) -> str:
    """A config key as the engine holds it: a key without a namespace is the project's."""
    return key if ":" in key else f"{namespace}:{key}"


def _project_defaults(name: str, config: Mapping[str, Any]) -> dict[str, Any]:
    """What the engine sets for each key `Pulumi.yaml` declares when a stack leaves it out
    (pkg/workspace/config.go: a `default` wins over a `value`; `default: null` is no default;
    a shorthand string, number, boolean or list is the default of a project key and the value of
    another namespace's key)."""
    out: dict[str, Any] = {}
    for key, declaration in config.items():
        if isinstance(declaration, str | int | bool | list):  # the shorthand (RewriteShorthandConfigValues)
            out[_key(name, key)] = declaration
        elif isinstance(declaration, dict):
            default, value = declaration.get("default"), declaration.get("value")
            if default is not None or value is not None:
                out[_key(name, key)] = default if default is not None else value
    return out


def _virtualenv(runtime: Any) -> str | None:
    """`runtime: {name: python, options: {virtualenv: venv}}`'s virtualenv, if it names one."""
    options = runtime.get("options") if isinstance(runtime, dict) else None
    found = options.get("virtualenv") if isinstance(options, dict) else None
    return found if isinstance(found, str) else None


def find_project(start: Path) -> Project:
    """The project whose Pulumi.yaml is at `start` or above it."""
    for folder in (start.resolve(), *start.resolve().parents):
        manifest = folder / "Pulumi.yaml"
        if manifest.is_file():
            document = _read(manifest, str(manifest))
            data = document.value
            problems = [Problem(f"line {item.line}", non_finite_problem(dotted(item.path), item.text))
                        for item in document.yaml_only if item.kind == "non-finite"]
            if not isinstance(data, dict):
                raise SpecError(str(manifest), [Problem("file", f"is {_kind(data)}; Pulumi.yaml is a mapping with at "
                                                        "least name: and runtime:")])
            name, config = data.get("name"), data.get("config", {})
            if not isinstance(name, str) or not name:
                problems.append(Problem("name", f"is {_kind(name)}; the project needs a name, e.g. name: spotkube"))
            if not isinstance(config, dict | None):
                problems.append(Problem("config", f"is {_kind(config)}; it must be a mapping of config keys"))
            for key in ("stackConfigDir", "main"):
                if not isinstance(data.get(key, "."), str):
                    problems.append(Problem(key, f"is {_kind(data[key])}; it must be a folder, e.g. {key}: infra/"))
            if problems:
                raise SpecError(str(manifest), problems)
            return Project(
                root=folder,
                name=name,
                stack_dir=folder / data.get("stackConfigDir", "."),
                main=folder / data.get("main", ".") / "__main__.py",
                defaults=_project_defaults(name, config or {}),
                declared={_key(name, key): declaration for key, declaration in (config or {}).items()
                          if isinstance(declaration, dict) and isinstance(declaration.get("type"), str)},
                virtualenv=_virtualenv(data.get("runtime")),
            )
    raise StackNotFound(f"no Pulumi.yaml at or above {start}; run spotkube from a spotkube project")


# --- the stack file ---------------------------------------------------------------------------------


def _describe(path: KeyPath) -> str:
    """A key path as a stack file spells it: `spotkube:gpuPools[0].name`, the section left out."""
    return dotted(path[1:]) if len(path) > 1 and path[0] == "config" else dotted(path)


def _distance(a: str, b: str) -> int:
    """Edits (insert, delete, replace, swap two neighbours) that turn `a` into `b`."""
    rows = [list(range(len(b) + 1))]
    for i, x in enumerate(a, 1):
        row = [i]
        for j, y in enumerate(b, 1):
            row.append(min(rows[-1][j] + 1, row[j - 1] + 1, rows[-1][j - 1] + (x != y)))
            if i > 1 and j > 1 and x == b[j - 2] and a[i - 2] == y:
                row[j] = min(row[j], rows[-2][j - 2] + 1)
        rows.append(row)
    return rows[-1][-1]


def near_miss(namespace: str, wanted: str = CONFIG_NAMESPACE) -> bool:
    """Whether a namespace looks like a misspelling of `wanted`: another case, or up to two edits
    (`spotkub`, `spotkbe`, `Spotkube`, `spot-kube`). Real namespaces (`azure-native`, `gcp`,
    `kubernetes`, `pulumi`, `spotinst`) are far from `spotkube`."""
    return namespace != wanted and _distance(namespace.lower(), wanted) <= 2


def _config_key(written: str, project: str) -> tuple[str | None, str]:
    """The engine's reading of a key of `config:` (config.ParseKey): `name` is the project's,
    `ns:name` is ns's, `ns:config:name` is an old spelling of `ns:name`. Returns (key, why not)."""
    parts = written.split(":")
    if len(parts) == 1:
        parts = [project, written]
    elif len(parts) == 3 and parts[1] == "config":
        parts = [parts[0], parts[2]]
    if len(parts) != 2:
        return None, "is not a config key; Pulumi reads namespace:name, with one colon (e.g. spotkube:region)"
    if not parts[0] or not parts[1]:
        return None, "has an empty namespace or name; write namespace:name, e.g. spotkube:region"
    return ":".join(parts), ""


def _project_summary(project: Project) -> str:
    keys = ("cloud", "environment", "region")
    values = [f"{key} {project.defaults[f'{CONFIG_NAMESPACE}:{key}']}" for key in keys
              if f"{CONFIG_NAMESPACE}:{key}" in project.defaults]
    return f" ({', '.join(values)})" if values else ""


def _empty_stack(project: Project, why: str) -> Problem:
    return Problem("config", f"{why}, so the stack would build the project's defaults{_project_summary(project)} "
                   "without saying so; set its spotkube: keys under config:, at least spotkube:cloud, "
                   "spotkube:environment and spotkube:region (spotkube new-stack writes a complete stack file)")


def non_finite_problem(where: str, text: str, accepted: str = "") -> str:
    """NaN or infinity in a YAML file: the engine's config is JSON, which holds neither."""
    return (f"{where}: {text} is not a number Pulumi can hold (its config is JSON, which has no NaN or infinity); "
            f"use a finite number{accepted}")


def _accepted_number(path: KeyPath, config: Mapping[str, Any], clouds: Clouds | None) -> str:
    """What the spotkube setting at `path` accepts, by the spec of the cloud the stack names (nothing
    when the cloud is unknown or not given)."""
    cloud = config.get(f"{CONFIG_NAMESPACE}:cloud")
    if clouds is None or not isinstance(cloud, str) or cloud not in clouds:
        return ""
    name = str(path[1]).removeprefix(f"{CONFIG_NAMESPACE}:")
    return finite_hint(field_at(clouds[cloud].spec_model, (name, *path[2:]))[1])


def _yaml_only_problem(path: KeyPath, kind: str, text: str, tag: str, delivered: Any) -> str:
    where = _describe(path)
    if kind == "date":
        return (f"{where}: {shown(text)} is a YAML date, which Pulumi hands the program as {shown(delivered)}; no "
                f"spotkube setting takes a date: quote it ({shown(str(text))}) if you mean text")
    if kind == "binary":
        return f"{where}: !!binary is not accepted in spotkube settings; write the text itself"
    return (f"{where}: the tag {tag} is not accepted in spotkube settings (Pulumi drops it and reads the value as "
            "plain YAML); remove the tag")


@record
class StackFile:
    """A stack file as the engine reads it: its `config:` values by full key, and where each key is."""

    path: Path
    source: str
    config: Mapping[str, Any]
    lines: Mapping[str, int]


def _sections(data: Mapping[str, Any], document: YamlDocument) -> list[Problem]:
    problems = []
    for section in data:
        if section not in STACK_SECTIONS:
            guess = difflib.get_close_matches(section.lower(), STACK_SECTIONS, n=1, cutoff=0.6)
            hint = f"did you mean {guess[0]}? " if guess else ""
            problems.append(Problem(f"line {document.lines[(section,)]}", f"{cut(section)}: is not a section of a "
                                    f"Pulumi stack file, so Pulumi would ignore it; {hint}sections: "
                                    f"{', '.join(STACK_SECTIONS)}"))
    return problems


def _config_section(data: Mapping[str, Any], document: YamlDocument, project: Project, quiet: bool) -> list[Problem]:
    """A `config:` that is missing, empty or not a mapping; `quiet` when its absence is explained already."""
    written = data.get("config")
    if "config" not in data:
        return [] if quiet else [_empty_stack(project, "is missing")]
    line = document.lines[("config",)]
    if written is None or written == {}:
        return [] if quiet else [_empty_stack(project, f"is empty (line {line})")]
    if not isinstance(written, dict):
        return [Problem(f"line {line}", f"config: is {_kind(written)}; it must be a mapping of settings such as "
                        f"{CONFIG_NAMESPACE}:environment: dev")]
    return []


def _config_keys(written: Mapping[str, Any], document: YamlDocument, project: Project,
                 config: dict[str, Any], lines: dict[str, int]) -> list[Problem]:
    """Each key of `config:` as the engine reads it, into `config` and `lines`; the problems of the others."""
    problems = []
    spelled: dict[str, str] = {}
    for key, value in written.items():
        line = document.lines[("config", key)]
        full, why_not = _config_key(key, project.name)
        if full is None:
            problems.append(Problem(f"line {line}", f"{cut(key)}: {why_not}"))
            continue
        namespace, name = full.split(":", 1)
        if near_miss(namespace):
            problems.append(Problem(f"line {line}", f"{cut(key)}: {shown(namespace)} is not spotkube's namespace, "
                                    "so spotkube would never read this key; did you mean "
                                    f"{CONFIG_NAMESPACE}:{cut(name)}?"))
            continue
        if full in lines:
            spellings = {key, spelled[full]}
            how = "" if spellings == {full} else (f" ({' and '.join(map(shown, sorted(spellings)))} are the same key: "
                                                 f"a key without a namespace is the project's)")
            problems.append(Problem(f"line {line}", f"key {shown(full)} repeats line {lines[full]}{how}; a key may "
                                    "appear once (Pulumi would keep one of them, either one)"))
            continue
        config[full], lines[full], spelled[full] = value, line, key
    return problems


def _go_int_text(text: str) -> bool:
    """Go's strconv.Atoi: an optional sign and decimal digits, within int64."""
    return bool(re.fullmatch(r"[-+]?[0-9]+", text)) and -(2**63) <= int(text) < 2**63


def pulumi_type_ok(kind: str, items: Mapping[str, Any] | None, content: Any) -> bool:
    """The engine's check of a stack value against its `Pulumi.yaml` type (workspace.ValidateConfigValue).
    `content` is the delivered string, or for a list or mapping its JSON decoded."""
    if kind == "string":
        return isinstance(content, str)
    if kind == "integer":
        if isinstance(content, str):
            return _go_int_text(content)
        return isinstance(content, int | float) and not isinstance(content, bool) and float(content).is_integer()
    if kind == "boolean":
        return content in ("true", "false") or isinstance(content, bool)
    if kind == "object":
        return isinstance(content, dict)
    if not isinstance(content, list) or not items:
        return False
    return all(pulumi_type_ok(items.get("type", ""), items.get("items"), item) for item in content)


def _type_name(kind: str, items: Mapping[str, Any] | None) -> str:
    """workspace.InferFullTypeName: `array<object>`."""
    return f"array<{_type_name(items.get('type', ''), items.get('items'))}>" if items else kind


def _declared_types(config: Mapping[str, Any], lines: Mapping[str, int], project: Project) -> list[Problem]:
    """What `pulumi up` refuses before the program runs: a value whose type is not the one `Pulumi.yaml`
    declares for its key (pkg/workspace/config.go, validateStackConfigValues). An empty value is left
    to `read_spec`, which says what it means."""
    problems = []
    for key, declaration in project.declared.items():
        if key not in lines or config[key] is None:
            continue
        value = config[key]
        content = json.loads(go_json(value)) if isinstance(value, dict | list) else delivered(value)
        kind, items = declaration["type"], declaration.get("items")
        if not pulumi_type_ok(kind, items, content):
            problems.append(Problem(f"line {lines[key]}", f"{key}: is {_kind(value)}, but Pulumi.yaml declares it "
                                    f"of type '{_type_name(kind, items)}', so `pulumi up` refuses the stack before "
                                    "the program runs; " + _TYPE_HINTS.get(kind, "see the configuration reference")))
    return problems


_TYPE_HINTS = {
    "object": "write a mapping (key: value lines, or {} for every field's default)",
    "array": "write a list (- item lines, or [] for none)",
    "string": "write a single value, not a list or mapping",
    "integer": "write a whole number",
    "boolean": "write true or false",
}


def read_stack_file(project: Project, stack: str, clouds: Clouds | None = None) -> StackFile:
    """Read a stack file as the engine does, and refuse what the engine refuses or silently drops (a
    missing config, a misspelt section or namespace, a repeated key, a value of another type than
    `Pulumi.yaml` declares, YAML-only values, NaN). Raises SpecError listing every problem by line."""
    path = project.stack_file(stack)
    if not path.is_file():
        known = ", ".join(project.stacks()) or "none"
        raise StackNotFound(f"{project.relative(path)} does not exist; stacks: {known}")
    source = project.relative(path)
    document = _read(path, source, _describe)
    data = document.value
    if data is None or data == {}:
        raise SpecError(source, [_empty_stack(project, "is missing: the file is empty")])
    if not isinstance(data, dict):
        raise SpecError(source, [Problem("line 1", f"the file is {_kind(data)}; a stack file is a mapping with a "
                                         "config: section")])
    problems = _sections(data, document)
    # A stack that imports ESC environments may get its settings from them, which only the engine reads.
    esc = data.get("environment") is not None
    misspelt = any("did you mean config?" in p.message for p in problems)
    problems += _config_section(data, document, project, quiet=misspelt or esc)
    config: dict[str, Any] = {}
    lines: dict[str, int] = {}
    if isinstance(data.get("config"), dict):
        problems += _config_keys(data["config"], document, project, config, lines)
    if (config and not problems and not esc and project.declares_platforms
            and not any(key.startswith(f"{CONFIG_NAMESPACE}:") for key in config)):
        problems.append(_empty_stack(project, f"sets no {CONFIG_NAMESPACE}: key"))
    for item in document.yaml_only:  # passed through by the engine, but no spotkube setting takes one
        written_key = str(item.path[1]) if len(item.path) > 1 and item.path[0] == "config" else ""
        full_key = _config_key(written_key, project.name)[0] or ""
        ours = full_key.startswith(f"{CONFIG_NAMESPACE}:")
        if item.kind == "non-finite":
            accepted = _accepted_number((*item.path[:1], full_key, *item.path[2:]), config, clouds) if ours else ""
            problems.append(Problem(f"line {item.line}", non_finite_problem(_describe(item.path), item.text,
                                                                            accepted)))
        elif ours and (item.kind != "tag" or item.tag not in CORE_TAGS):
            problems.append(Problem(f"line {item.line}", _yaml_only_problem(item.path, item.kind, item.text, item.tag,
                                                                            item.delivered)))
    if not any(item.kind == "non-finite" for item in document.yaml_only):  # which no JSON type check reads
        problems += _declared_types(config, lines, project)
    if problems:
        raise SpecError(source, sorted(problems, key=_by_line))
    return StackFile(path, source, config, lines)


def _by_line(problem: Problem) -> int:
    return int(problem.path[5:]) if problem.path.startswith("line ") else 0


def stack_config(project: Project, stack: str, clouds: Clouds | None = None) -> dict[str, Any]:
    """Every config value of a stack by full key (`spotkube:gpuPools`), with the values `Pulumi.yaml`
    gives the keys the stack leaves out: the engine's merged config, before it is turned into strings.
    `clouds` lets a refusal say what a setting accepts (`read_stack_file`)."""
    return {**project.defaults, **read_stack_file(project, stack, clouds).config}


# --- what the engine hands the program --------------------------------------------------------------


def go_float_text(number: float) -> str:
    """Go's encoding/json text of a float64: the shortest digits, with an exponent only below 1e-6
    or from 1e21 on (`1.0` -> `1`, `1e20` -> `100000000000000000000`, `1e-7` -> `1e-7`)."""
    if number == 0:
        return "-0" if math.copysign(1, number) < 0 else "0"
    digits = Decimal(repr(number)).normalize()
    if 1e-6 <= abs(number) < 1e21:
        return format(digits, "f")
    sign, figures, exponent = digits.as_tuple()
    assert isinstance(exponent, int)
    mantissa = "".join(map(str, figures))
    mantissa = mantissa[0] + (f".{mantissa[1:]}" if len(mantissa) > 1 else "")
    power = exponent + len(figures) - 1
    return f"{'-' if sign else ''}{mantissa}e{'+' if power >= 0 else '-'}{abs(power)}"


def _go_numbers(value: Any) -> Any:
    """Numbers inside an object as they come out of the engine: it stores them as int64 or float64
    and writes JSON with Go, so a whole float loses its `.0` and an integer beyond int64 becomes a float."""
    if isinstance(value, dict):
        return {k: _go_numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_go_numbers(v) for v in value]
    if isinstance(value, bool) or not isinstance(value, int | float):
        return value
    if isinstance(value, int) and -(2**63) <= value < 2**63:
        return value
    number = float(value)
    return int(number) if number.is_integer() and abs(number) < 1e21 else number


def go_json(value: Any) -> str:
    """Go's json.Marshal of a config object: keys sorted, no spaces, <, > and & escaped."""
    text = json.dumps(_go_numbers(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    for char in "<>&\u2028\u2029":
        text = text.replace(char, f"\\u{ord(char):04x}")
    return text


def delivered(value: Any) -> str:
    """One config value as the engine hands it to the program (config.Value, via RunRequest.config)."""
    if value is None:
        return ""  # yaml.v3 never calls Value.UnmarshalYAML for null: the zero Value, an empty string
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value) if -(2**63) <= value < 2**64 else go_float_text(float(value))
    if isinstance(value, float):
        return go_float_text(value)
    return go_json(value)


def as_pulumi_config(config: Mapping[str, Any]) -> dict[str, str]:
    """Config as the Pulumi engine hands it to a Python program: every value a string."""
    return {key: delivered(value) for key, value in config.items()}


#: What a program reads for a secure value offline: the engine would decrypt it, the offline plan never does.
SECRET_PLACEHOLDER = "[secret]"


def _is_secure(value: Any) -> bool:
    """A stack file's encrypted value: `key: {secure: v1:...}`, which the engine decrypts for the program."""
    return isinstance(value, Mapping) and set(value) == {"secure"} and isinstance(value["secure"], str)


def _without_secrets(value: Any) -> tuple[Any, bool]:
    if _is_secure(value):
        return SECRET_PLACEHOLDER, True
    if isinstance(value, Mapping):
        items = {k: _without_secrets(v) for k, v in value.items()}
        return {k: v for k, (v, _) in items.items()}, any(secret for _, secret in items.values())
    if isinstance(value, list):
        found = [_without_secrets(v) for v in value]
        return [v for v, _ in found], any(secret for _, secret in found)
    return value, False


def program_config(config: Mapping[str, Any]) -> tuple[dict[str, str], list[str]]:
    """Config as the engine hands it to any program, and the keys it marks secret: each secure value is
    `[secret]`, never decrypted, so the program's secrets stay secrets (and unknown to the plan)."""
    strings, secret_keys = {}, []
    for key, value in config.items():
        plain, secret = _without_secrets(value)
        strings[key] = delivered(plain)
        if secret:
            secret_keys.append(key)
    return strings, secret_keys


def describes_platform(config: Mapping[str, Any]) -> bool:
    """Whether a stack's config describes one whole platform under `spotkube:` (this repository's
    format, which names its cloud), rather than only what the review of a program's clusters needs."""
    return f"{CONFIG_NAMESPACE}:cloud" in config


@functools.cache
def structured_keys() -> frozenset[str]:
    """The spotkube keys whose Pulumi config type is an object or an array: the engine hands the program
    only their JSON text (`[1]` and the string "[1]" look alike), so only these are decoded."""
    return frozenset(key for key, kind in config_types().items() if kind in ("object", "array"))


def _no_json_constants(name: str) -> Any:
    raise ValueError(name)  # NaN and Infinity are not JSON, and the engine never writes them


def _decode(name: str, text: str) -> Any:
    if name not in structured_keys():
        return text
    try:
        value = json.loads(text, parse_constant=_no_json_constants)
    except ValueError:
        return text
    return value if isinstance(value, dict | list) else text


def read_spec(config: Mapping[str, str], project: Project, stack: str, clouds: Clouds) -> PlatformSpec:
    """The validated spec of a stack from its config as the engine delivers it (every value a string),
    for `spotkube plan` and the stack program alike: objects and lists are read as JSON, every other key
    as its text, and an empty string (also what null becomes) is a key without a value."""
    source = project.relative(project.stack_file(stack))
    prefix = f"{CONFIG_NAMESPACE}:"
    values: dict[str, Any] = {}
    empty: list[Problem] = []
    for key in sorted(config):
        if not key.startswith(prefix):
            continue
        name, text = key[len(prefix):], config[key]
        if text == "" and name in CONFIG_KEYS:
            default = project.defaults.get(key)
            fallback = f"the default {shown(default)}" if default not in (None, {}, []) else "its default"
            empty.append(Problem(config_key(name), "has no value: Pulumi hands an empty value, null and ~ to the "
                                 f"program as '' (an empty string); set a value, or delete the line to take "
                                 f"{fallback}"))
            continue
        values[name] = _decode(name, text)
    try:
        spec = parse_spec(values, source, clouds)
    except SpecError as err:
        missing = {problem.path for problem in empty}
        raise SpecError(source, [*empty, *(p for p in err.problems if p.path not in missing)]) from None
    if empty:
        raise SpecError(source, empty)
    return deployable(spec, source, clouds)


def load_stack_spec(project: Project, stack: str, clouds: Clouds) -> PlatformSpec:
    """The validated spec of one stack, read as `pulumi up` would read it; errors name the stack file."""
    return read_spec(as_pulumi_config(stack_config(project, stack, clouds)), project, stack, clouds)
