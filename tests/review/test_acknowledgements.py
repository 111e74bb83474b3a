"""Acknowledging a warning by its id: what is accepted, what stays open, what fails."""

from __future__ import annotations

import datetime
from typing import Any

import pytest

from spotkube.clouds import parse_spec
from spotkube.platform.errors import SpecError
from spotkube.platform.spec import Acknowledgement
from spotkube.platform.warnings import PlanWarning, from_log, slug, tagged
from spotkube.review.acknowledgements import judge

TODAY = datetime.date(2026, 11, 25)
API = PlanWarning("security-api-server", "API server: reachable from the whole internet")
T4 = PlanWarning("fallback-no-on-demand:nvidia-tesla-t4", "no on-demand fallback for nvidia-tesla-t4")
L4 = PlanWarning("fallback-no-on-demand:nvidia-l4", "no on-demand fallback for nvidia-l4")


def ack(id_: str, expires: str | None = None, reason: str = "accepted") -> Acknowledgement:
    return Acknowledgement(id=id_, reason=reason, expires=expires)


def test_an_exact_id_accepts_its_warning_with_the_reason() -> None:
    judged = judge([API, T4], [ack("security-api-server", reason="hosted runners")], TODAY)

    assert judged.open == (T4,)
    (accepted,) = judged.acknowledged
    assert accepted.warning == API and accepted.acknowledgement.reason == "hosted runners"
    assert accepted.to_json() == {"id": "security-api-server", "message": API.message,
                                  "acknowledgedAs": "security-api-server", "reason": "hosted runners",
                                  "expires": None}
    assert judged.errors == ()


def test_a_kind_accepts_every_subject_but_not_a_longer_kind() -> None:
    longer = PlanWarning("fallback-no-on-demand-extra:x", "another kind")
    judged = judge([T4, L4, longer], [ack("fallback-no-on-demand")], TODAY)

    assert [a.warning for a in judged.acknowledged] == [T4, L4]
    assert judged.open == (longer,)


def test_an_acknowledgement_that_matches_nothing_is_a_warning_itself() -> None:
    judged = judge([API], [ack("security-api-server"), ack("security-local-accounts")], TODAY)

    (unused,) = judged.open
    assert unused.id == "acknowledgement-unused:security-local-accounts"
    assert "matches no warning of this stack; remove it" in unused.message


def test_an_expired_acknowledgement_fails_and_its_warning_is_open_again() -> None:
    judged = judge([API], [ack("security-api-server", expires="2026-11-24")], TODAY)

    assert judged.open == (API,)
    assert judged.acknowledged == ()
    (error,) = judged.errors
    assert error.startswith("acknowledgement security-api-server expired on 2026-11-24 (reason given: accepted)")


def test_an_acknowledgement_holds_through_its_expiry_day() -> None:
    judged = judge([API], [ack("security-api-server", expires="2026-11-25")], TODAY)
    assert judged.open == () and judged.errors == ()


def spec_with(acknowledgements: list[dict[str, Any]]) -> None:
    parse_spec({"cloud": "aks", "environment": "dev", "region": "uksouth", "acknowledgements": acknowledgements},
               "stacks/Pulumi.aks-dev-uksouth.yaml")


@pytest.mark.parametrize(("item", "message"), [
    ({"id": "security-api-server"}, "spotkube:acknowledgements[0].reason: is required"),
    ({"id": "security-api-server", "reason": "  "}, "spotkube:acknowledgements[0].reason: is blank; say why"),
    ({"id": "Security API", "reason": "x"}, "spotkube:acknowledgements[0].id: 'Security API'"),
    ({"id": "security-api-server", "reason": "x", "expires": "2027-13-01"},
     "spotkube:acknowledgements[0].expires: '2027-13-01' is not a day of the calendar"),
    ({"id": "security-api-server", "reason": "x", "expires": "next year"},
     "spotkube:acknowledgements[0].expires: 'next year'"),
    ({"id": "security-api-server", "reason": "x", "until": "2027-01-01"},
     "spotkube:acknowledgements[0].until: is not a known key"),
])
def test_a_malformed_acknowledgement_is_refused_before_anything_is_planned(item: dict[str, Any], message: str) -> None:
    with pytest.raises(SpecError) as raised:
        spec_with([item])
    assert message in str(raised.value)


def test_ids_in_logs_and_names() -> None:
    assert slug("Entra ID / RBAC") == "entra-id-rbac"
    assert from_log(tagged("kubeflow-ui-public", "x: the UI is public")) == PlanWarning("kubeflow-ui-public",
                                                                                        "x: the UI is public")
    assert from_log("something the program said") == PlanWarning("program-warning", "something the program said")
    with pytest.raises(ValueError, match="not a warning id"):
        tagged("Not An Id", "x")
