"""When the cloud may upgrade a pool's nodes, in words a reviewer checks: each pool's upgrade exposure.

An upgrade drains every node of a pool, GPU nodes in the middle of a long step included. Each cloud
reads its window, busy periods and replacement settings into this shape, so the plan's posture shows
the clouds alike ("GPU pool t4spot: node image updates only in Sat 02:00–06:00 UTC"). Pure module.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import date, timedelta
from typing import Any

from spotkube.platform.errors import Problem
from spotkube.platform.input_messages import shown
from spotkube.platform.records import record
from spotkube.platform.spec import MaintenanceWindow, PoolUpgrade, config_key

DAY_ABBREVIATIONS = {"Monday": "Mon", "Tuesday": "Tue", "Wednesday": "Wed", "Thursday": "Thu", "Friday": "Fri",
                     "Saturday": "Sat", "Sunday": "Sun"}
WEEKDAYS = tuple(DAY_ABBREVIATIONS)
MINUTES_A_DAY = 24 * 60


def window_text(days: Sequence[str], start: str, hours: int, utc_offset: str = "+00:00") -> str:
    """`Sat 02:00–06:00 UTC`, `Sat, Sun 22:00–02:00 UTC+01:00` (the end on the next day)."""
    hour, minute = (int(part) for part in start.split(":"))
    end_minutes = (hour * 60 + minute + hours * 60) % MINUTES_A_DAY
    zone = "UTC" if utc_offset in ("+00:00", "-00:00", "Z") else f"UTC{utc_offset}"
    named = ", ".join(DAY_ABBREVIATIONS.get(day, day) for day in days)
    return f"{named} {start}–{end_minutes // 60:02d}:{end_minutes % 60:02d} {zone}"


def window_of(window: MaintenanceWindow) -> str:
    return window_text(window.days, window.start, window.hours, window.utc_offset)


def first_day_on_or_after(day: date, weekday: str) -> date:
    """The first `weekday` on or after `day`: a recurring window's anchor date."""
    return day + timedelta(days=(WEEKDAYS.index(weekday) - day.weekday()) % 7)


def in_utc(window: MaintenanceWindow) -> MaintenanceWindow:
    """The same weekly window told in UTC, for a cloud that counts a window's days in UTC (GKE: "Days
    are measured in the UTC timezone"): a start that crosses midnight moves every day with it, so
    Saturday 00:30 +01:00 is Friday 23:30 UTC."""
    hour, minute = (int(part) for part in window.start.split(":"))
    offset_hours, offset_minutes = (int(part) for part in window.utc_offset[1:].split(":"))
    sign = -1 if window.utc_offset.startswith("-") else 1
    utc_minutes = hour * 60 + minute - sign * (offset_hours * 60 + offset_minutes)
    shift, start = divmod(utc_minutes, MINUTES_A_DAY)
    days = tuple(WEEKDAYS[(WEEKDAYS.index(day) + shift) % 7] for day in window.days)
    return window.model_copy(update={"days": days, "start": f"{start // 60:02d}:{start % 60:02d}",
                                     "utc_offset": "+00:00"})


@record
class UpgradeExposure:
    """When and how the cloud upgrades one registered pool's nodes."""

    pool: str
    gpu: bool
    #: The weekly window in words, None when the cloud may upgrade the pool at any time.
    window: str | None
    #: How a node is replaced, in words ("drain waits 60 min; 1 surge node").
    replacement: str
    busy_periods: tuple[str, ...] = ()
    #: What is upgraded in the window (node image updates, Kubernetes upgrades).
    what: str = "node image updates"
    #: The window as the stack declared it, when the cloud registers it in other terms (GKE counts a
    #: window's days in UTC), so a reviewer sees both the local window and the one the cloud applies.
    declared: str | None = None

    @property
    def kind(self) -> str:
        return "GPU pool" if self.gpu else "pool"

    def text(self) -> str:
        when = f"only in {self.window}" if self.window else "at any time (no maintenance window)"
        if self.window and self.declared:
            when += f" (declared as {self.declared})"
        busy = f"; none during {', '.join(self.busy_periods)}" if self.busy_periods else ""
        return f"{self.what} {when}{busy}; {self.replacement}"

    def to_json(self) -> dict[str, Any]:
        return {"pool": self.pool, "gpu": self.gpu, "window": self.window, "declaredWindow": self.declared,
                "busyPeriods": list(self.busy_periods),
                "replacement": self.replacement, "text": self.text()}


#: Registered resources (type, name, inputs) -> each worker pool's upgrade exposure.
UpgradeReader = Callable[[Sequence[tuple[str, str, Mapping[str, Any]]]], list[UpgradeExposure]]


def replaces_no_node_problem(path: str, upgrade: PoolUpgrade, surge: object, unavailable: object,
                             cloud: str) -> Problem:
    """A pool whose upgrade neither adds a node nor takes one away, which AKS and GKE both refuse:
    the key the stack set (`maxSurge` first), with the values the pool would get, defaults included."""
    key = "maxSurge" if "max_surge" in upgrade.model_fields_set else "maxUnavailable"
    return Problem(config_key(f"{path}.upgrade.{key}"),
                   f"maxSurge {shown(surge)} with maxUnavailable {shown(unavailable)} replaces no node at all, which "
                   f"{cloud} refuses; set maxSurge above 0 (a new node comes up before an old one goes, the GPU "
                   "pools' default) or maxUnavailable above 0 (a node goes down before its replacement is up)")
