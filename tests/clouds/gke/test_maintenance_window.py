"""GKE's maintenance window lands on the local days the stack asks for: GKE counts a recurrence's days
in UTC, so spotkube writes the window in UTC with its days shifted when the start crosses midnight.

The registered Cluster is read under the mocks (the real program, a stack file); the property test
expands the written recurrence the way GKE applies it and reads each start back in local time. How the
plan shows both windows: tests/cli/test_plan_upgrades.py.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from spotkube.clouds.gke import resources as gke
from spotkube.components.offline import run_stack
from spotkube.platform.maintenance import WEEKDAYS
from spotkube.platform.project import Project
from spotkube.platform.spec import MaintenanceSettings

RRULE_WEEKDAY = {"MO": 0, "TU": 1, "WE": 2, "TH": 3, "FR": 4, "SA": 5, "SU": 6}
STACK: dict[str, Any] = {"cloud": "gke", "environment": "dev", "region": "europe-west4",
                         "kubeflow": {"enabled": False},
                         "gpuPools": [{"name": "l4-spot", "machine": "g2-standard-8"}]}


def _window(days: list[str], start: str, offset: str) -> dict[str, Any]:
    return {"window": {"days": days, "start": start, "hours": 6, "utcOffset": offset}}


def test_a_saturday_and_sunday_window_after_midnight_east_of_utc_registers_friday_and_saturday(
    project_with_stack: Callable[[str, dict[str, Any]], Project],
) -> None:
    values = {**STACK, "cluster": {"project": "spotkube-dev-example",
                                   "maintenance": _window(["Saturday", "Sunday"], "00:30", "+01:00")}}
    run = run_stack(project_with_stack("gke-dev-europe-west4", values), "gke-dev-europe-west4")
    (cluster,) = run.of_type(gke.CLUSTER_TYPE)
    window = cluster.inputs["maintenancePolicy"]["recurringWindow"]
    assert window["recurrence"] == "FREQ=WEEKLY;BYDAY=FR,SA"
    assert window["startTime"] == "2025-01-03T23:30:00Z", "a Friday, in UTC, as GKE reads it back"
    assert window["endTime"] == "2025-01-04T05:30:00Z"


def _occurrences(window: dict[str, str]) -> list[datetime]:
    """Four weeks of the window's starts as GKE applies it: every BYDAY day, counted in UTC, at the
    UTC time of day of `startTime`, from `startTime` on."""
    first = datetime.fromisoformat(window["startTime"].replace("Z", "+00:00"))
    assert first.utcoffset() == timedelta(0)
    days = {RRULE_WEEKDAY[code] for code in window["recurrence"].removeprefix("FREQ=WEEKLY;BYDAY=").split(",")}
    assert first.weekday() in days, "the first start is itself an occurrence"
    return [first + timedelta(days=n) for n in range(28) if (first + timedelta(days=n)).weekday() in days]


offsets = st.builds(lambda sign, minutes: f"{sign}{minutes // 60:02d}:{minutes % 60:02d}",
                    st.sampled_from("+-"), st.integers(0, 14 * 60))
starts = st.builds(lambda minutes: f"{minutes // 60:02d}:{minutes % 60:02d}", st.integers(0, 24 * 60 - 1))
day_sets = st.lists(st.sampled_from(WEEKDAYS), min_size=1, max_size=7, unique=True)


@given(days=day_sets, start=starts, offset=offsets, hours=st.integers(4, 24))
def test_the_utc_window_recurs_on_the_local_days_and_time_asked_for(days: list[str], start: str, offset: str,
                                                                    hours: int) -> None:
    maintenance = MaintenanceSettings.model_validate(
        {"window": {"days": days, "start": start, "hours": hours, "utcOffset": offset}})
    policy = gke.maintenance_policy(maintenance)
    assert policy is not None
    window = {"startTime": policy["recurring_window"]["start_time"],
              "recurrence": policy["recurring_window"]["recurrence"]}
    sign = -1 if offset.startswith("-") else 1
    zone = timezone(sign * timedelta(hours=int(offset[1:3]), minutes=int(offset[4:6])))
    local = [when.astimezone(zone) for when in _occurrences(window)]
    assert {WEEKDAYS[when.weekday()] for when in local} == set(days)
    assert {when.strftime("%H:%M") for when in local} == {start}
    assert len(local) == 4 * len(days)
    length = (datetime.fromisoformat(policy["recurring_window"]["end_time"].replace("Z", "+00:00"))
              - datetime.fromisoformat(window["startTime"].replace("Z", "+00:00")))
    assert length == timedelta(hours=hours)
