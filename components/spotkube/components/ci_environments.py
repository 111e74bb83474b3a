"""The GitHub side of the bootstrap, for either cloud: the repository's environments with their rules and
variables, and, with Pulumi Cloud as the backend, GitHub's OIDC issuer and a team per environment, so no
workflow holds a stored token (docs/identities.md).

Each platform stack's environment admits only protected branches (with required reviewers on prod); the
cloud's preview environment admits pull requests from any branch, so its identities may only read
non-prod. deploy.yml refuses an environment without these rules and without `SPOTKUBE_STACK`, which only
this program writes. Each environment's team has Stack Read on the non-prod stacks (preview) or Stack
Write on its one stack (deploy), and the issuer's policies let only that environment's token
(`sub: repo:OWNER/REPO:environment:NAME`) become it. Team tokens need Pulumi's Enterprise or Business
Critical edition; elsewhere use a self-managed backend (`backendUrl`).
"""

from __future__ import annotations

from collections.abc import Mapping

import pulumi
import pulumi_github as github
import pulumi_pulumiservice as pulumiservice

from spotkube.platform.bootstrap import STACK_VARIABLE, BootstrapSpec, team_name
from spotkube.platform.identities import GITHUB_ISSUER
from spotkube.platform.spec import PlatformSpec

#: Only branches with branch protection rules (main) may run a job in a stack's environment.
PROTECTED_BRANCHES = {"protected_branches": True, "custom_branch_policies": False}
#: How long an exchanged Pulumi token lives at most: a deploy's `pulumi up` and verify fit in an hour.
TOKEN_SECONDS = 3600


def environment_variables(spec: BootstrapSpec, stacks: Mapping[str, PlatformSpec],
                          identities: Mapping[str, pulumi.Input[object]]) -> dict[str, dict[str, pulumi.Input[str]]]:
    """Each GitHub environment's variables: its cloud identity's, its backend's, and its stack's name."""
    found: dict[str, dict[str, pulumi.Input[str]]] = {}
    for environment in spec.environments:
        cloud = identities[environment]
        assert isinstance(cloud, Mapping), "the cloud's bootstrap returns each environment's variables"
        prod = environment in stacks and stacks[environment].is_prod
        found[environment] = {**cloud, **spec.backend_variables(environment, prod),
                              **({STACK_VARIABLE: environment} if environment in stacks else {})}
    return found


def github_environments(spec: BootstrapSpec, stacks: Mapping[str, PlatformSpec],
                        variables: Mapping[str, Mapping[str, pulumi.Input[str]]]) -> None:
    """The environments and their variables, in `spec.repository` (the GitHub provider's token comes from
    GITHUB_TOKEN: an administrator of the repository)."""
    owner, repository = spec.repository.split("/")
    provider = pulumi.ResourceOptions(provider=github.Provider("github", owner=owner))
    for environment, values in variables.items():
        platform = stacks.get(environment)
        prod = platform is not None and platform.is_prod
        reviewers = spec.reviewers
        made = github.RepositoryEnvironment(
            f"environment-{environment}", repository=repository, environment=environment,
            deployment_branch_policy=PROTECTED_BRANCHES if platform is not None else None,
            reviewers=[{"users": list(reviewers.users), "teams": list(reviewers.teams)}]
            if prod and reviewers is not None else None,
            prevent_self_review=True if prod else None, can_admins_bypass=False if prod else None,
            opts=pulumi.ResourceOptions.merge(provider, pulumi.ResourceOptions(protect=prod)))
        for name, value in sorted(values.items()):
            github.ActionsEnvironmentVariable(
                f"variable-{environment}-{name}", repository=repository, environment=made.environment,
                variable_name=name, value=value, opts=provider)


def pulumi_cloud_access(spec: BootstrapSpec, stacks: Mapping[str, PlatformSpec], project: str) -> None:
    """The teams, their stack permissions and the OIDC issuer with one policy per environment."""
    organization = spec.pulumi_organization
    assert organization is not None, "called with Pulumi Cloud as the backend"
    previewed = [stack for stack, platform in stacks.items() if not platform.is_prod]
    reach = {spec.preview: (previewed, pulumiservice.TeamStackPermissionScope.READ),
             **{stack: ([stack], pulumiservice.TeamStackPermissionScope.EDIT) for stack in stacks}}
    for environment, (own, permission) in reach.items():
        team = pulumiservice.Team(
            f"team-{environment}", organization_name=organization, team_type="pulumi", name=team_name(environment),
            display_name=team_name(environment), description=f"GitHub Actions jobs in {spec.repository}'s "
            f"{environment} environment (spotkube bootstrap)")
        for stack in own:
            pulumiservice.TeamStackPermission(
                f"team-{environment}-{stack}", organization=organization, team=team.name, project=project,
                stack=stack, permission=permission)
    pulumiservice.OidcIssuer(
        "github-issuer", organization=organization, name=f"spotkube-github-{spec.cloud}", url=GITHUB_ISSUER,
        max_expiration_seconds=TOKEN_SECONDS,
        policies=[{"decision": pulumiservice.AuthPolicyDecision.ALLOW,
                   "token_type": pulumiservice.AuthPolicyTokenType.TEAM, "team_name": team_name(environment),
                   "rules": {"sub": f"repo:{spec.repository}:environment:{environment}",
                             "aud": f"urn:pulumi:org:{organization}"}}
                  for environment in reach])
