"""`spotkube doctor`'s judgement: what a stack's first `up` needs, against what the cloud has.

The needs come from the program's offline run (its registered types, its calls through the cloud's
identity table, its pools' quota) and the live state from the cloud's `LiveAccess`; each item becomes
one `Finding`, with the command that fixes it. A role is judged by the calls it must allow, not by
its name, so an identity holding a broader role passes, and one missing a role is told which and
why. Pure module: the live answers come in as arguments.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from spotkube.platform.doctor import Finding, LiveAccess
from spotkube.platform.identities import IDENTITIES, Assignment, Call, Identity, IdentityFacts, granting
from spotkube.platform.live_quota import QuotaReport
from spotkube.platform.records import record


@record
class DoctorReport:
    """Every finding of one stack, and where they were read."""

    stack: str
    where: str
    findings: tuple[Finding, ...]

    @property
    def failed(self) -> list[Finding]:
        return [f for f in self.findings if f.level == "fail"]

    def to_json(self) -> dict[str, Any]:
        return {"stack": self.stack, "where": self.where, "ok": not self.failed,
                "findings": [f.to_json() for f in self.findings]}


def api_findings(live: LiveAccess) -> list[Finding]:
    """Each namespace or service the program needs: registered/enabled, or the command that does it."""
    enabled = {name.lower() for name in live.apis_enabled}
    findings = [Finding("apis", name, "ok", f"{name} {live.apis_what}") if name.lower() in enabled else
                Finding("apis", name, "fail", f"{name} is not {live.apis_what}", live.enable_command(name))
                for name in live.apis_needed]
    findings += [Finding("apis", token, "warn", f"the program registers {token}, whose API spotkube doesn't know; "
                         "check by hand that it is enabled") for token in live.apis_unknown]
    return findings


def _missing(identity: Identity, calls: Iterable[Call], facts: IdentityFacts,
             held: Sequence[Assignment]) -> dict[Assignment, list[Call]]:
    """The table's assignments the identity lacks, each with the calls nothing it holds allows. A call
    only the program's own grants allow (the deployer's rights on the cluster it creates) is not checked;
    what the bootstrap grants, or a registry's or a group's owner, is."""
    missing: dict[Assignment, list[Call]] = {}
    for call in calls:
        if call.identity != identity or not call.needed or call.unmapped:
            continue
        expected = granting(call, facts.assignments, facts.covers)
        bootstrap = [a for a in expected if a.granted_by != "the program"]
        if expected and not bootstrap:
            continue
        if not bootstrap or granting(call, held, facts.covers):
            continue
        missing.setdefault(bootstrap[0], []).append(call)
    return missing


def role_findings(calls: Sequence[Call], facts: IdentityFacts, live: LiveAccess,
                  principals: Mapping[Identity, str], principal: str) -> list[Finding]:
    """Per CI identity: ok when what it holds allows every call it makes, else one line per role it lacks;
    `principal` says what names an identity on the stack's cloud (`its object id on Azure`)."""
    findings = []
    for identity in IDENTITIES:
        principal = principals.get(identity)
        if principal is None:
            findings.append(Finding("roles", identity, "warn", f"the {identity} identity was not checked: name it "
                                    f"with --{identity} ({principal})"))
            continue
        if identity in live.unreadable:
            findings.append(Finding("roles", identity, "warn", f"the {identity} identity's roles could not be read: "
                                    f"{live.unreadable[identity]}"))
            continue
        held = live.held.get(identity, ())
        missing = _missing(identity, calls, facts, held)
        if not missing:
            names = ", ".join(sorted({a.role.name for a in held})) or "nothing"
            findings.append(Finding("roles", identity, "ok", f"{identity} identity {principal} can make every call "
                                    f"the program needs (holds {names})"))
            continue
        for assignment, lacking in missing.items():
            whats = list(dict.fromkeys(c.what for c in lacking))
            shown = ", ".join(whats[:3]) + (f" and {len(whats) - 3} more" if len(whats) > 3 else "")
            findings.append(Finding(
                "roles", identity, "fail", f"{identity} identity {principal} lacks {assignment.role.name} on the "
                f"{assignment.scope} (needed to {shown}: {lacking[0].permission})",
                live.grant_command(principal, assignment)))
    return findings


def quota_findings(report: QuotaReport) -> list[Finding]:
    """`spotkube quota`'s verdicts as findings: a short limit fails, a tight or unlisted one warns."""
    levels = {"ok": "ok", "short": "fail", "tight": "warn", "unknown": "warn"}
    return [Finding("quota", check.quota, levels[check.verdict], check.message)  # type: ignore[arg-type]
            for check in report.checks]


def doctor_report(stack: str, live: LiveAccess, calls: Sequence[Call], facts: IdentityFacts | None,
                  principals: Mapping[Identity, str], principal: str, quota: QuotaReport | None) -> DoctorReport:
    """Every finding of the stack, in the order the first `up` meets them."""
    findings = api_findings(live)
    if facts is not None:
        findings += role_findings(calls, facts, live, principals, principal)
    if quota is not None:
        findings += quota_findings(quota)
    findings += live.sizes
    return DoctorReport(stack, live.where, tuple(findings))
