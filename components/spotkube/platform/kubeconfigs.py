"""Reading kubeconfigs, and saying why one would stop `pulumi up` at a login prompt.

Nobody is there to answer a prompt under `pulumi up`; static credentials need nobody, an exec plugin
may, and only its cloud knows when (`Cloud.login_problem`). `login_problems` is the preflight's check.
Pure module: no Pulumi.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import yaml

#: One cloud's check of a kubeconfig's exec user (its name, and its `exec` block): why it would wait
#: for a person, or None when it is not that cloud's plugin or signs in by itself.
ExecUserCheck = Callable[[str, Mapping[str, Any]], str | None]


def exec_users(config: Mapping[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Each user that signs in through an exec plugin: its name and its `exec` block (editable)."""
    for user in config.get("users") or ():
        exec_ = (user.get("user") or {}).get("exec")
        if isinstance(exec_, dict):
            yield str(user.get("name", "")), exec_


def load(kubeconfig: str) -> dict[str, Any]:
    """A kubeconfig's text as a mapping; ValueError (or yaml.YAMLError) when it is none."""
    config = yaml.safe_load(kubeconfig)
    if not isinstance(config, dict):
        raise ValueError("the kubeconfig is not a YAML mapping")
    return config


def dump(config: Mapping[str, Any]) -> str:
    """A kubeconfig mapping as text, its keys in their order."""
    return yaml.safe_dump(config, sort_keys=False)


def login_problems(kubeconfig: str, checks: Iterable[ExecUserCheck]) -> list[str]:
    """Why a kubeconfig would stop `pulumi up` at a login prompt (empty when it never does): each exec
    user as every cloud's check judges it."""
    try:
        config = load(kubeconfig)
    except (ValueError, yaml.YAMLError) as err:
        return [f"the kubeconfig can't be read: {err}"]
    checks = tuple(checks)
    return [problem for name, exec_ in exec_users(config) for check in checks
            if (problem := check(name, exec_)) is not None]
