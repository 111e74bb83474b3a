"""A price read more than 90 days before the plan gets a note naming `spotkube prices refresh`; a stack's
own prices (`cost.prices`), which no refresh replaces, never do. The day is an argument, so no test
depends on the clock."""

from __future__ import annotations

import datetime
from pathlib import Path

from planned_costs import price_plan
from spotkube.clouds import load_price_table, load_stack_spec, plan_platform
from spotkube.platform.plan import PlatformPlan
from spotkube.platform.project import find_project
from spotkube.review.costing import STALE_AFTER_DAYS

REPO = Path(__file__).resolve().parents[2]
TABLE = load_price_table()


def stack_plan(name: str) -> PlatformPlan:
    return plan_platform(load_stack_spec(find_project(REPO), name))


def test_a_price_older_than_90_days_gets_a_note_naming_the_pools_and_the_refresh() -> None:
    plan = stack_plan("gke-dev-us-central1")
    read = datetime.date(2026, 8, 3)  # the day the bundled GKE rows were read
    assert price_plan(plan, table=TABLE, today=read + datetime.timedelta(days=STALE_AFTER_DAYS)).price_notes == []
    report = price_plan(plan, table=TABLE, today=read + datetime.timedelta(days=STALE_AFTER_DAYS + 1))
    (note,) = report.price_notes
    assert note.startswith(f"prices older than 90 days (the oldest read 2026-08-03, {STALE_AFTER_DAYS + 1} days ago) "
                           "price system, platform")
    assert note.endswith("run `spotkube prices refresh` for fresh ones")
    assert report.to_json()["priceNotes"] == [note]
    assert not report.warnings  # a note, never a --strict failure


def test_a_stacks_own_prices_never_get_the_note() -> None:
    # aks-dev-uksouth prices its D4s_v3 pools itself (the articles' example); only the T4's bundled on-demand
    # price (its spot price is unknown) gets the note
    report = price_plan(stack_plan("aks-dev-uksouth"), table=TABLE, today=datetime.date(2040, 1, 1))
    (note,) = report.price_notes
    assert " price t4spot;" in note and not any(pool in note for pool in ("system", "platform", "cpuspot"))
    assert {p.price.origin for p in report.pools if p.price is not None} == {"stack file"}
