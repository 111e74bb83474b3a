"""`spotkube doctor`'s judge of a self-managed backend's grants, as the cloud answers for its bucket or
container: a stack's state there is written by its deploy identity, read by the preview identity only
when the stack is non-prod, and open to nobody else on a prod stack (docs/identities.md). Pure: the
reading is the cloud's (`CommandSupport.read_backend`).
"""

from __future__ import annotations

from collections.abc import Mapping

from spotkube.platform.doctor import BackendPolicy, Finding
from spotkube.platform.identities import Identity

RERUN = "rerun the bootstrap stack (infra/bootstrap) with spotkube:createBackend: true"


def _rights(policy: BackendPolicy, member: str) -> set[str]:
    """What a member may do with the state: "write", "read", or nothing."""
    roles = {role for role, members in policy.roles.items() if member in members}
    return {"write"} if roles & policy.writes else {"read"} if roles & policy.reads else set()


def backend_findings(stack: str, prod: bool, policy: BackendPolicy,
                     principals: Mapping[Identity, str]) -> list[Finding]:
    """The grants on the stack's backend against what the bootstrap makes: the deploy identity writes; the
    preview reads non-prod only; on prod nobody else may read; nobody at all is everyone."""
    if policy.missing is not None:
        return [Finding("backend", stack, "fail", policy.missing, RERUN)]
    findings = []
    public = sorted({m for members in policy.roles.values() for m in members if m in policy.public})
    if public:
        findings.append(Finding("backend", stack, "fail", f"{policy.where} grants {', '.join(public)}: anyone may "
                                f"read {stack}'s state", f"remove them from its IAM policy; {RERUN}"))
    deploy = principals.get("deploy")
    if deploy is not None:
        member = policy.member(deploy)
        findings.append(Finding("backend", stack, "ok", f"deploy identity {deploy} may write {stack}'s state in "
                                f"{policy.where}") if "write" in _rights(policy, member) else
                        Finding("backend", stack, "fail", f"deploy identity {deploy} may not write {stack}'s state in "
                                f"{policy.where}: pulumi up fails at its first checkpoint",
                                policy.grant_command(member, "write")))
    preview = principals.get("preview")
    if preview is not None:
        rights = _rights(policy, policy.member(preview))
        if prod and rights:
            findings.append(Finding("backend", stack, "fail", f"preview identity {preview} may {rights.pop()} prod "
                                    f"stack {stack}'s state in {policy.where}: every pull request's code runs as it",
                                    f"remove its role there; {RERUN}"))
        elif not prod and "write" in rights:
            findings.append(Finding("backend", stack, "fail", f"preview identity {preview} may write {stack}'s state "
                                    f"in {policy.where}: every pull request's code runs as it",
                                    "grant it a read role only"))
        elif not prod and not rights:
            findings.append(Finding("backend", stack, "fail", f"preview identity {preview} may not read {stack}'s "
                                    f"state in {policy.where}: pulumi preview fails", policy.grant_command(
                                        policy.member(preview), "read")))
        else:
            findings.append(Finding("backend", stack, "ok", f"preview identity {preview} "
                                    f"{'may not read' if prod else 'may only read'} {stack}'s state in {policy.where}"))
    if prod:
        known = {policy.member(p) for p in principals.values()} | set(public)
        others = sorted({m for role, members in policy.roles.items() if role in policy.writes | policy.reads
                         for m in members if m not in known})
        if others:
            findings.append(Finding("backend", stack, "warn", f"{policy.where} also lets {', '.join(others)} at prod "
                                    f"stack {stack}'s state; check each is an administrator's"))
    if not principals:
        findings.append(Finding("backend", stack, "warn", f"whose grants to check on {policy.where} is unknown: pass "
                                "--deploy and --preview"))
    return findings
