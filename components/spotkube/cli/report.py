"""The plan's JSON, as the CLI prints it."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from spotkube.review.plan_document import SCHEMA_VERSION, PlanDocument


def plan_json(documents: Sequence[PlanDocument], details: bool = False) -> dict[str, Any]:
    """The plan's JSON: always `{"schemaVersion": N, "stacks": [...]}`, whatever the number of stacks."""
    return {"schemaVersion": SCHEMA_VERSION, "stacks": [d.to_json(details) for d in documents]}


def to_json(documents: Sequence[PlanDocument], details: bool = False) -> str:
    return json.dumps(plan_json(documents, details), indent=2)
