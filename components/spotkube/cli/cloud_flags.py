"""The flags each cloud adds to a command, declared from its options model (`spotkube.platform.cloud_options`).

A command function names one parameter `options`; `with_cloud_flags` puts every cloud's flags in its
place (typer reads them from the signature) and calls the function with each cloud's model built from
them, so a cloud's folder brings its flags and their help without an edit here.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping
from typing import Annotated, Any, TypeVar

import typer

from spotkube.clouds import CLOUDS
from spotkube.platform.cloud_options import CloudOptions, Flag, every_flag, options_from

Command = TypeVar("Command", bound=Callable[..., Any])
#: The parameter of a command function the clouds' flags replace.
PLACE = "options"


def _parameter(flag: Flag) -> inspect.Parameter:
    declared = typer.Option(flag.name, metavar=flag.metavar, help=flag.help, envvar=flag.envvar,
                            show_envvar=flag.envvar is not None)
    return inspect.Parameter(flag.param, inspect.Parameter.KEYWORD_ONLY, default=flag.default,
                             annotation=Annotated[flag.annotation, declared])


def with_cloud_flags(models: Mapping[str, type[CloudOptions]]) -> Callable[[Command], Command]:
    """Declare every cloud's flags of `models` (by cloud) where the command's `options` parameter is, and
    call the command with `options` set to each cloud's model, by cloud."""
    flags = every_flag(models)

    def declare(command: Command) -> Command:
        signature = inspect.signature(command, eval_str=True)
        params = list(signature.parameters.values())
        at = [p.name for p in params].index(PLACE)
        own = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in params]
        declared = [*own[:at], *(_parameter(f) for f in flags), *own[at + 1:]]

        @functools.wraps(command)
        def run(**values: Any) -> Any:
            given = {f.param: values.pop(f.param) for f in flags}
            return command(**values, **{PLACE: options_from(models, given)})

        run.__signature__ = signature.replace(parameters=declared)  # type: ignore[attr-defined]
        run.__annotations__ = {p.name: p.annotation for p in declared}
        del run.__wrapped__  # type: ignore[attr-defined]
        return run  # type: ignore[return-value]

    return declare


def only_on(flag: str) -> str:
    """The help of a shared command's flag that only some clouds read, each after its title:
    `GKE: the cluster's name ...`, from the clouds' `CommandSupport.flag_help`."""
    return " ".join(f"{cloud.title}: {cloud.commands.flag_help[flag]}" for cloud in CLOUDS.values()
                    if flag in cloud.commands.flag_help)
