"""A cloud's own flags on spotkube's commands come from its options models, so a new cloud's folder brings
its flags and their help without an edit to the CLI."""

from __future__ import annotations

import pytest
import typer
from typer.testing import CliRunner

from spotkube.cli.app import app
from spotkube.cli.cloud_flags import with_cloud_flags
from spotkube.clouds import CLOUDS
from spotkube.platform.cloud_options import CloudOptions, QuotaOptions, every_flag, flags, option

COMMANDS = {
    ("new-stack",): "new_stack",
    ("catalog", "refresh"): "catalog_refresh",
    ("prices", "refresh"): "prices_refresh",
    ("quota",): "quota",
}


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_every_cloud_s_flags_are_in_the_command_s_help(command: tuple[str, ...]) -> None:
    result = CliRunner().invoke(app, [*command, "--help"], env={"COLUMNS": "400", "NO_COLOR": "1"})
    assert result.exit_code == 0, result.output
    declared = [f for cloud, p in CLOUDS.items() for f in flags(cloud, getattr(p.commands.options, COMMANDS[command]))]
    assert declared or command == ("quota",)
    for flag in declared:
        line = next((row for row in result.output.splitlines() if f" {flag.name} " in row), "")
        assert flag.metavar in line and flag.help in " ".join(line.split()), (flag.name, result.output)


class _Blue(QuotaOptions):
    account: str | None = option("--blue-account", "ACCOUNT", "Blue: the account.")
    region_hint: str = option("--blue-hint", "HINT", "Blue: a hint.", default="north", envvar="BLUE_HINT")


class _Green(QuotaOptions):
    account: str | None = option("--green-tenant", "TENANT", "Green: the tenant.")


def _toy() -> typer.Typer:
    """A command as a third cloud would see its flags added: it only names `options`."""
    toy = typer.Typer()

    @toy.command()
    @with_cloud_flags({"blue": _Blue, "green": _Green})
    def run(name: str = "x", options: dict[str, CloudOptions] | None = None) -> None:
        for cloud, given in (options or {}).items():
            typer.echo(f"{name} {cloud} {given!r}")

    return toy


def test_a_cloud_s_flags_reach_the_command_as_its_model() -> None:
    result = CliRunner().invoke(_toy(), ["--name", "n", "--green-tenant", "t1"], env={"BLUE_HINT": "south"})
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == ["n blue _Blue(account=None, region_hint='south')",
                                          "n green _Green(account='t1')"]
    shown = CliRunner().invoke(_toy(), ["--help"], env={"COLUMNS": "200", "NO_COLOR": "1"}).output
    assert "--blue-account" in shown and "Blue: the account." in shown and "[env var: BLUE_HINT]" in shown


def test_two_clouds_may_not_declare_one_flag() -> None:
    class _Clash(QuotaOptions):
        account: str | None = option("--blue-account", "ACCOUNT", "Another cloud's account.")

    with pytest.raises(ValueError, match="--blue-account is declared by both blue and clash"):
        every_flag({"blue": _Blue, "clash": _Clash})
