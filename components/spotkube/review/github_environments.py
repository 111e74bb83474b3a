"""`spotkube doctor`'s judge of a stack's GitHub environment, as GitHub's REST API answers for it.

The environment is where a stack's deploy identity is reachable from: its federated credential trusts
`repo:OWNER/REPO:environment:<stack>` tokens, which GitHub issues to any job naming the environment
that its rules let in. So the rules the bootstrap sets (infra/bootstrap, docs/identities.md) are what
keeps a branch out: only protected branches (`deployment_branch_policy`), required reviewers on prod,
and the variables the workflows sign in with. Pure: no HTTP, the reading is the CLI's.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from spotkube.platform.bootstrap import (
    BACKEND_URL,
    BACKEND_VARIABLE,
    ORGANIZATION_VARIABLE,
    STACK_VARIABLE,
    TEAM_VARIABLE,
    backend_location,
    prod_backend_url,
    team_name,
)
from spotkube.platform.doctor import Finding

PROTECTED_BRANCHES = {"protected_branches": True, "custom_branch_policies": False}
RERUN = "rerun the bootstrap stack (infra/bootstrap) with the stack in spotkube:stacks"


def environment_findings(stack: str, prod: bool, environment: Mapping[str, Any] | None,
                         variables: Mapping[str, str] | None) -> list[Finding]:
    """The environment's rules and variables against the bootstrap's: `environment` as GitHub's "Get an
    environment" answers (None: it doesn't exist), `variables` by name (None: they couldn't be read)."""
    if environment is None:
        return [Finding("environment", stack, "fail", f"GitHub environment {stack} doesn't exist: a job naming it "
                        "would create it with no rules, and any branch could then sign in as the stack's deploy "
                        "identity", RERUN)]
    findings = []
    if (environment.get("deployment_branch_policy") or {}) == PROTECTED_BRANCHES:
        findings.append(Finding("environment", stack, "ok", f"GitHub environment {stack} admits protected branches "
                                "only"))
    else:
        findings.append(Finding("environment", stack, "fail", f"GitHub environment {stack} admits any branch "
                                "(no protected-branches rule): a branch's workflow can sign in as its deploy identity",
                                RERUN))
    if prod:
        reviewed = any(r.get("type") == "required_reviewers" and r.get("reviewers")
                       for r in environment.get("protection_rules") or ())
        findings.append(Finding("environment", stack, "ok", f"GitHub environment {stack} requires a reviewer")
                        if reviewed else Finding("environment", stack, "fail", f"GitHub environment {stack} is "
                                                 "prod and requires no reviewer",
                                                 f"set spotkube:reviewers and {RERUN}"))
    if variables is None:
        findings.append(Finding("environment", stack, "warn", f"the variables of GitHub environment {stack} could "
                                "not be read (the token needs the repository's variables: read)"))
        return findings
    if variables.get(STACK_VARIABLE) != stack:
        findings.append(Finding("environment", stack, "fail", f"GitHub environment {stack} has no {STACK_VARIABLE}="
                                f"{stack}, so deploy.yml refuses to run there", RERUN))
    findings.append(backend_finding(stack, prod, variables))
    return findings


def backend_finding(stack: str, prod: bool, variables: Mapping[str, str]) -> Finding:
    """How the environment's jobs sign in to the Pulumi backend, with no stored token: a self-managed
    backend's URL (azblob:// or gs://) or Pulumi Cloud's organization and the environment's team."""
    url = variables.get(BACKEND_VARIABLE)
    if url:
        own = prod_backend_url("", stack)  # the suffix a prod stack's own backend ends with
        if re.fullmatch(BACKEND_URL, url) and prod and not backend_location(url)[1].endswith(own):
            return Finding("environment", stack, "fail", f"GitHub environment {stack} is prod and its backend {url} "
                           f"is not its own (a prod stack's ends with {own}): whoever may read that backend reads "
                           "prod's state", f"set spotkube:backendUrl and {RERUN}")
        if re.fullmatch(BACKEND_URL, url):
            return Finding("environment", stack, "ok", f"GitHub environment {stack} signs in to the self-managed "
                           f"backend {url} with its cloud identity")
        return Finding("environment", stack, "fail", f"GitHub environment {stack}: {BACKEND_VARIABLE} {url!r} is no "
                       "self-managed backend the cloud identity signs in to (azblob://CONTAINER or gs://BUCKET)",
                       f"set spotkube:backendUrl and {RERUN}")
    organization, team = variables.get(ORGANIZATION_VARIABLE), variables.get(TEAM_VARIABLE)
    if organization and team == team_name(stack):
        return Finding("environment", stack, "ok", f"GitHub environment {stack} exchanges its OIDC token for Pulumi "
                       f"Cloud team {team}'s token in {organization}")
    return Finding("environment", stack, "fail", f"GitHub environment {stack} has no way to the Pulumi backend "
                   f"without a stored token (neither {BACKEND_VARIABLE} nor {ORGANIZATION_VARIABLE} with "
                   f"{TEAM_VARIABLE}={team_name(stack)})", RERUN)
