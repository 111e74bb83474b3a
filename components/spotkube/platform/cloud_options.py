"""The command-line options a cloud adds to spotkube's commands, one small model per command.

The neutral code must not spell a cloud's settings (an Azure subscription, a Google Cloud project), so
each cloud subclasses the command's model below, each field one flag (`option`), and the CLI builds the
flags and their help from the models. Pure module: no Pulumi, no CLI framework.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from spotkube.platform.bootstrap import BootstrapSpec
from spotkube.platform.records import record


class CloudOptions(BaseModel):
    """A cloud's options for one command: each field declared with `option` is one flag."""

    model_config = ConfigDict(frozen=True, extra="forbid")


def option(flag: str, metavar: str, help: str, default: Any = None, envvar: str | None = None) -> Any:
    """A field that is the flag `flag`, shown with `metavar` and `help`, read from `envvar` when not given."""
    return Field(default=default, description=help, json_schema_extra={"flag": flag, "metavar": metavar,
                                                                       "envvar": envvar})


@record
class Flag:
    """One flag a cloud adds to a command, as the CLI declares it."""

    cloud: str
    #: The model's field the value goes to.
    field: str
    name: str
    metavar: str
    help: str
    envvar: str | None
    annotation: Any
    default: Any

    @property
    def param(self) -> str:
        """The flag as a Python parameter name: `--gcp-project` is `gcp_project`."""
        return self.name.lstrip("-").replace("-", "_")


def flags(cloud: str, model: type[CloudOptions]) -> list[Flag]:
    """The flags of one cloud's model, in the order its fields are declared."""
    found = []
    for name, info in model.model_fields.items():
        extra = info.json_schema_extra
        if not isinstance(extra, Mapping):
            continue
        found.append(Flag(cloud, name, str(extra["flag"]), str(extra["metavar"]), info.description or "",
                          extra["envvar"] if isinstance(extra["envvar"], str) else None, info.annotation,
                          info.default))
    return found


def every_flag(models: Mapping[str, type[CloudOptions]]) -> list[Flag]:
    """Every cloud's flags for one command, cloud by cloud in the registry's order. Each flag is one
    cloud's: a flag two clouds declared would be one option on the command line with two helps."""
    found: dict[str, Flag] = {}
    for cloud, model in models.items():
        for flag in flags(cloud, model):
            if flag.name in found:
                raise ValueError(f"{flag.name} is declared by both {found[flag.name].cloud} and {cloud}")
            found[flag.name] = flag
    return list(found.values())


def options_from(models: Mapping[str, type[CloudOptions]], values: Mapping[str, Any]) -> dict[str, CloudOptions]:
    """Each cloud's model from the flags' values, by parameter name (as the CLI received them)."""
    return {cloud: model.model_validate({f.field: values[f.param] for f in flags(cloud, model) if f.param in values})
            for cloud, model in models.items()}


class NewStackOptions(CloudOptions):
    """A cloud's part of `spotkube new-stack`: what its stack file needs beyond environment and region."""

    #: What this cloud does instead of another cloud's flag, for the message that refuses that flag.
    instead_of: ClassVar[Mapping[str, str]] = {}


def foreign_flag(
    cloud: str, models: Mapping[str, type[NewStackOptions]], given: Mapping[str, CloudOptions]
) -> str | None:
    """Why a flag only another cloud reads can't be given with `new-stack --cloud cloud`; None when none is.
    A flag whose default is not None can't be told from one not given, so only flags without a default count."""
    own = {f.name for f in flags(cloud, models[cloud])}
    for other, options in given.items():
        if other == cloud:
            continue
        for flag in flags(other, models[other]):
            if flag.name not in own and flag.default is None and getattr(options, flag.field) is not None:
                note = models[cloud].instead_of.get(flag.name)
                return f"{flag.name} applies to --cloud {other} only" + (f" ({note})" if note else "")
    return None


class CatalogRefreshOptions(CloudOptions):
    """A cloud's part of `spotkube catalog refresh`: which account's machines to read, and where its API is
    (read by the cloud's own `catalog_source`)."""


class PricesRefreshOptions(CloudOptions):
    """A cloud's part of `spotkube prices refresh`: where its price list is, if not at the cloud."""

    endpoint: str | None = None


class QuotaOptions(CloudOptions):
    """A cloud's part of `spotkube quota`: the account whose quota is read, where the stack doesn't say."""

    account: str | None = None


@record
class CommandOptions:
    """A cloud's options models, one per command that takes flags of its own, and its bootstrap stack's
    settings (`BootstrapSpec` with the cloud's fields)."""

    new_stack: type[NewStackOptions] = NewStackOptions
    catalog_refresh: type[CatalogRefreshOptions] = CatalogRefreshOptions
    prices_refresh: type[PricesRefreshOptions] = PricesRefreshOptions
    quota: type[QuotaOptions] = QuotaOptions
    bootstrap: type[BootstrapSpec] = BootstrapSpec
