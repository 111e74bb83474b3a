"""Finding the Pulumi project and reading its stacks the way the Pulumi engine would.

Under the real CLI the engine merges Pulumi.yaml's config defaults with the stack file. The
offline plan has no engine, so this module does that merge itself, and reports malformed files
and unknown stacks as user errors. Pure module: no Pulumi.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from spotkube.core.errors import Problem, SpecError, StackNotFound
from spotkube.core.spec import CONFIG_NAMESPACE, PlatformSpec
from spotkube.core.validation import parse_spec


@dataclass(frozen=True)
class Project:
    """A Pulumi project directory: its name, stack folder and declared config defaults."""

    root: Path
    name: str
    stack_dir: Path
    main: Path
    defaults: Mapping[str, Any]

    def stack_file(self, stack: str) -> Path:
        return self.stack_dir / f"Pulumi.{stack}.yaml"

    def stacks(self) -> list[str]:
        return sorted(p.name[len("Pulumi."):-len(".yaml")] for p in self.stack_dir.glob("Pulumi.*.yaml"))

    def relative(self, path: Path) -> str:
        """Paths in messages are relative to the project, as a user would type them."""
        try:
            return str(path.relative_to(self.root))
        except ValueError:
            return str(path)


def _read_yaml(path: Path, source: str) -> dict[str, Any]:
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark else "file"
        raise SpecError(source, [Problem(where, f"is not valid YAML: {getattr(err, 'problem', err)}")]) from None
    if not isinstance(data, dict):
        raise SpecError(source, [Problem("file", "must be a YAML mapping")])
    return data


def find_project(start: Path) -> Project:
    """The project whose Pulumi.yaml is at `start` or above it."""
    for folder in (start.resolve(), *start.resolve().parents):
        manifest = folder / "Pulumi.yaml"
        if manifest.is_file():
            data = _read_yaml(manifest, str(manifest))
            defaults = {
                key.split(":", 1)[-1]: decl["default"]
                for key, decl in (data.get("config") or {}).items()
                if isinstance(decl, dict) and "default" in decl
                and (":" not in key or key.startswith(f"{data['name']}:"))
            }
            return Project(
                root=folder,
                name=data["name"],
                stack_dir=folder / data.get("stackConfigDir", "."),
                main=folder / data.get("main", ".") / "__main__.py",
                defaults=defaults,
            )
    raise StackNotFound(f"no Pulumi.yaml at or above {start}; run spotkube from a spotkube project")


def stack_config(project: Project, stack: str) -> dict[str, Any]:
    """Every config value of a stack, namespaced (`spotkube:gpuPools`), defaults merged in."""
    path = project.stack_file(stack)
    if not path.is_file():
        known = ", ".join(project.stacks()) or "none"
        raise StackNotFound(f"{project.relative(path)} does not exist; stacks: {known}")
    data = _read_yaml(path, project.relative(path))
    values = {f"{project.name}:{k}": v for k, v in project.defaults.items()}
    for key, value in (data.get("config") or {}).items():
        values[key if ":" in key else f"{project.name}:{key}"] = value
    return values


def spec_values(config: Mapping[str, Any], namespace: str = CONFIG_NAMESPACE) -> dict[str, Any]:
    """The `spotkube:` part of a stack's config, without the namespace."""
    prefix = f"{namespace}:"
    return {k[len(prefix):]: v for k, v in config.items() if k.startswith(prefix)}


def load_stack_spec(project: Project, stack: str) -> PlatformSpec:
    """The validated spec of one stack; errors name the stack file."""
    config = stack_config(project, stack)
    return parse_spec(spec_values(config), project.relative(project.stack_file(stack)))


def as_pulumi_config(config: Mapping[str, Any]) -> dict[str, str]:
    """Config as the Pulumi runtime holds it: strings, with objects and arrays as JSON."""
    return {k: v if isinstance(v, str) else json.dumps(v) for k, v in config.items()}
