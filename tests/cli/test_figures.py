"""Figures for people (`spotkube.cli.figures`), and `spotkube cost` as it prints them: no price to ten
digits, no line wider than the width it is read at."""

from __future__ import annotations

import re
from decimal import Decimal

import pytest
from typer.testing import CliRunner

from spotkube.cli.app import app
from spotkube.cli.figures import PLAIN_WIDTH, duration, percent, plain_width, unit_price, wrapped
from spotkube.platform.project import Project


@pytest.mark.parametrize(("usd", "shown"), [
    ("0.13402284", "$0.13"), ("3.673", "$3.67"), ("1101.9", "$1,101.90"), ("0.0487", "$0.049"),
    ("0.005", "$0.005"), ("0.0004", "under $0.001"), ("0.10", "$0.10"), ("2.75954630136986", "$2.76"),
])
def test_a_unit_price_is_to_the_cent_or_a_tenth_of_one_below_ten_cents(usd: str, shown: str) -> None:
    assert unit_price(Decimal(usd)) == shown


@pytest.mark.parametrize(("seconds", "shown"), [(45, "45 s"), (720, "12 min"), (15780, "4 h 23 min"), (7200, "2 h")])
def test_a_duration_reads_in_hours_and_minutes(seconds: float, shown: str) -> None:
    assert duration(seconds) == shown


@pytest.mark.parametrize(("share", "shown"), [(10.6, "11 %"), (0.2, "under 1 %"), (0, "0 %"), (78, "78 %")])
def test_a_percentage_is_whole(share: float, shown: str) -> None:
    assert percent(share) == shown


def test_plain_lines_wrap_at_columns_else_the_terminal_else_100() -> None:
    assert plain_width(180, True, {"COLUMNS": "72"}) == 72
    assert plain_width(180, True, {}) == 180
    assert plain_width(180, False, {}) == PLAIN_WIDTH == 100
    url = "https://github.com/Azure/karpenter-provider-azure/blob/" + "0" * 40 + "/pkg/providers/pricing/x.go"
    lines = wrapped(f"fixed: a line naming its source, {url}, and more words after it", 60).splitlines()
    assert len(lines) > 1 and max(map(len, lines)) <= 60
    assert lines[1:]
    assert all(line.startswith("  ") for line in lines[1:])


@pytest.mark.parametrize("columns", ["100", "140"])
def test_spotkube_cost_prints_no_raw_float_and_no_line_wider_than_columns(
        repo_project: Project, monkeypatch: pytest.MonkeyPatch, columns: str) -> None:
    monkeypatch.setenv("COLUMNS", columns)
    stacks = repo_project.stacks()
    assert stacks
    for stack in stacks:
        result = CliRunner().invoke(app, ["cost", "--stack", stack, "--project", str(repo_project.root)])
        assert result.exit_code == 0, result.output
        lines = result.stdout.splitlines()
        assert max(map(len, lines)) <= int(columns), stack
        rates = [cells[3].strip() for line in lines if len(cells := line.split("│")) == 11 and "$" in cells[3]]
        assert rates and all(re.fullmatch(r"\$\d+\.\d{2,3}", rate) for rate in rates), (stack, rates)
