"""Which of a plan's warnings the stack has acknowledged (`spotkube:acknowledgements`). An unused
acknowledgement is a warning (its warning is gone, or the id is misspelt); an expired one is an error,
so the plan fails until someone looks again.
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from typing import Any

from spotkube.platform.records import record
from spotkube.platform.spec import Acknowledgement
from spotkube.platform.warnings import PlanWarning


@record
class AcknowledgedWarning:
    warning: PlanWarning
    acknowledgement: Acknowledgement

    def to_json(self) -> dict[str, Any]:
        return {
            **self.warning.to_json(),
            "acknowledgedAs": self.acknowledgement.id,
            "reason": self.acknowledgement.reason,
            "expires": self.acknowledgement.expires,
        }


@record
class Judged:
    open: tuple[PlanWarning, ...]
    acknowledged: tuple[AcknowledgedWarning, ...]
    #: Expired acknowledgements: each fails the plan.
    errors: tuple[str, ...]


def judge(warnings: Sequence[PlanWarning], acknowledgements: Sequence[Acknowledgement], today: datetime.date) -> Judged:
    live = [a for a in acknowledgements if a.expires_on is None or a.expires_on >= today]
    errors = tuple(
        f"acknowledgement {a.id} expired on {a.expires} (reason given: {a.reason}); look at the warning "
        "again, then fix it, or renew the acknowledgement with a new expires day"
        for a in acknowledgements
        if a.expires_on is not None and a.expires_on < today
    )
    open_: list[PlanWarning] = []
    accepted: list[AcknowledgedWarning] = []
    used: set[str] = set()
    for warning in warnings:
        match = next((a for a in live if warning.covered_by(a.id)), None)
        if match is None:
            open_.append(warning)
        else:
            accepted.append(AcknowledgedWarning(warning, match))
            used.add(match.id)
    unused = [
        PlanWarning(
            f"acknowledgement-unused:{a.id}",
            f"the acknowledgement of {a.id} matches no warning of this stack; remove it from "
            "spotkube:acknowledgements (or correct its id)",
        )
        for a in dict.fromkeys(live)
        if a.id not in used
    ]
    return Judged((*open_, *unused), tuple(accepted), errors)
