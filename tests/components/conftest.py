"""Fixtures the component tests share."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from spotkube.components.offline import OfflineMocks


@pytest.fixture
def transforms_seen(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[Callable[..., Any]]]:
    """The transforms each registration carried (the mock monitor records them without running them)."""
    seen: dict[str, list[Callable[..., Any]]] = {}
    original = OfflineMocks.new_resource

    def record(self: OfflineMocks, args: Any) -> tuple[str, dict]:
        seen[args.name] = list(args.transforms)
        return original(self, args)

    monkeypatch.setattr(OfflineMocks, "new_resource", record)
    return seen
