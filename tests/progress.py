"""Progress a person can read: which group of tests is running and how far it is, instead of dots.

`make test` runs thousands of tests on several workers; a line of dots says neither what is being
tested nor how much is left. This plugin gives each group (the folder under tests/: platform, clouds,
review, components, cli, pipelines) one line when it starts, one at each quarter and one when it ends,
with its failures so far. A failed test is still named at once, in full, by pytest's own report, and
pytest's closing line ("N passed …") is unchanged.

It works with and without pytest-xdist: with workers, the counts come from the collection every
worker reports to the controller, and the results from the reports it receives.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

import pytest

#: The points of a group's progress worth a line, in percent.
MILESTONES = (25, 50, 75)


def group_of(nodeid: str) -> str:
    """A test's group: the first folder of its path under tests/ (`cli` for tests/cli/test_x.py)."""
    path = nodeid.split("::", 1)[0]
    parts = path.split("/")
    if parts[0] == "tests":
        parts = parts[1:]
    return parts[0] if len(parts) > 1 else "tests"


class GroupProgress:
    """Counts finished tests per group and writes a line at each milestone."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.totals: Counter[str] = Counter()
        self.done: Counter[str] = Counter()
        self.failed: Counter[str] = Counter()
        self.failed_ids: set[str] = set()
        self.counted = False

    def count(self, nodeids: Iterable[str]) -> None:
        """The collection, once: every worker collects the same tests."""
        if self.counted:
            return
        self.counted = True
        self.totals = Counter(group_of(nodeid) for nodeid in nodeids)
        groups = ", ".join(f"{group} {n}" for group, n in self.totals.items())
        self.write(f"{sum(self.totals.values())} tests: {groups}")

    def write(self, line: str) -> None:
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.ensure_newline()
            reporter.write_line(line)

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.count(item.nodeid for item in session.items)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: Sequence[str]) -> None:
        self.count(ids)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """A test is done at its teardown, which pytest reports whatever happened before it."""
        group = group_of(report.nodeid)
        if report.failed and report.nodeid not in self.failed_ids:
            self.failed_ids.add(report.nodeid)
            self.failed[group] += 1
        if report.when != "teardown":
            return
        before = self.done[group]
        self.done[group] = now = before + 1
        total = self.totals.get(group, 0)
        if not total:
            return
        if before == 0:
            self.write(f"{group}: started, {total} tests")
        crossed = [m for m in MILESTONES if before * 100 < m * total <= now * 100]
        if now == total:
            self.write(f"{group}: done, {total} tests{self.failures(group)}")
        elif crossed:
            self.write(f"{group}: {now}/{total} ({crossed[-1]} %){self.failures(group)}")

    def failures(self, group: str) -> str:
        return f", {self.failed[group]} failed" if self.failed[group] else ""

    def pytest_report_teststatus(self, report: pytest.TestReport) -> tuple[str, str, str] | None:
        """A passed or skipped test prints no dot; a failure or an error still prints its letter."""
        if report.when == "call" and report.passed:
            return "passed", "", "PASSED"
        if report.skipped and not hasattr(report, "wasxfail"):
            return "skipped", "", "SKIPPED"
        return None
