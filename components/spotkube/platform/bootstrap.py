"""The bootstrap stack's settings: which repository's workflows get CI identities, for which stacks.

The bootstrap (infra/bootstrap/) creates the preview and deploy identities of GitHub Actions with the
roles docs/identities.md lists; its stack file is checked like the platform's. Pure module: no Pulumi.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Annotated, Any, ClassVar

from pydantic import BeforeValidator, Field, ValidationError, model_validator

from spotkube.platform.errors import Problem, SpecError
from spotkube.platform.input_messages import accepted_keys, describe, did_you_mean, shown
from spotkube.platform.spec import Flag, Text, _Model, config_key

#: GitHub's `owner/repo`: an owner of up to 39 letters, digits and hyphens, neither first nor last; a
#: name of letters, digits, `.`, `_` and `-` (docs.github.com: "repository names can only contain ASCII
#: letters, digits, and the characters ., -, and _").
REPOSITORY = r"^[A-Za-z0-9]([A-Za-z0-9-]{0,37}[A-Za-z0-9])?/[A-Za-z0-9._-]{1,100}$"
#: GitHub environment names as deploy.yml and preview.yml use them (the stack names, `preview`), as the
#: clouds can name a federated credential after them: Entra takes `github-<environment>` only as 3-120
#: letters, digits, `-` and `_` (no `.`), so an environment has at most 113 of them.
ENVIRONMENT = r"^[A-Za-z0-9_-]{1,113}$"


def _environment_name(value: Any) -> Any:
    """Say why a GitHub environment name is refused: the pattern alone doesn't tell a user that `.`
    is what Entra refuses."""
    if isinstance(value, str) and not re.fullmatch(ENVIRONMENT, value):
        raise ValueError(f"{shown(value)} can't name the GitHub environment a cloud trusts: Entra names its "
                         "federated credential github-<environment> and takes only letters, digits, - and _ there "
                         "(no .); use 1-113 of them, e.g. <cloud>-dev-<region>")
    return value


#: A GitHub environment's name: the pattern for the schema, the validator for the message.
EnvironmentName = Annotated[Text, BeforeValidator(_environment_name), Field(pattern=ENVIRONMENT)]
#: The bootstrap's output naming each prod stack's secrets provider (a key only its deploy identity uses).
SECRETS_PROVIDERS = "secretsProviders"
#: A self-managed Pulumi backend: Azure Blob Storage or Google Cloud Storage, authorised by the cloud identity.
#: Azure's may name its storage account (`?storage_account=`, which Pulumi's login reads since 3.43), so
#: no job needs `AZURE_STORAGE_ACCOUNT` or the account's shared key.
BACKEND_URL = r"^(azblob|gs)://[a-z0-9][a-z0-9._/-]{2,}(\?storage_account=[a-z0-9]{3,24})?$"
#: The variable the bootstrap writes into each stack's GitHub environment: deploy.yml runs a stack only
#: in an environment that names it, which a job that created an environment by naming it can't have.
STACK_VARIABLE = "SPOTKUBE_STACK"
#: The Pulumi Cloud team whose token a GitHub environment's jobs get (pulumi/auth-actions' scope).
TEAM_VARIABLE = "PULUMI_TEAM"
ORGANIZATION_VARIABLE = "PULUMI_ORGANIZATION"
BACKEND_VARIABLE = "PULUMI_BACKEND_URL"


class Reviewers(_Model):
    """Who approves a prod stack's deploy job: GitHub's numeric ids, up to 6 users and 6 teams, each with at
    least read access to the repository (`gh api users/NAME --jq .id`, `gh api orgs/ORG/teams/SLUG --jq .id`)."""

    users: tuple[Annotated[int, Field(gt=0)], ...] = Field(default=(), max_length=6,
                                                           description="User ids that may approve.")
    teams: tuple[Annotated[int, Field(gt=0)], ...] = Field(default=(), max_length=6,
                                                           description="Team ids that may approve.")

    @model_validator(mode="after")
    def _someone(self) -> Reviewers:
        if not self.users and not self.teams:
            raise ValueError("names nobody; list at least one GitHub user or team id under users or teams")
        return self


def prod_backend_url(backend_url: str, stack: str) -> str:
    """A prod stack's own self-managed backend: the shared one's bucket or container name with the stack's
    (lower-cased, as both clouds' names must be; anything else as `-`), in the same storage account."""
    location, query, account = backend_url.partition("?")
    return f"{location.rstrip('/')}-{re.sub(r'[^a-z0-9-]', '-', stack.lower())}{query}{account}"


def backend_location(backend_url: str) -> tuple[str, str, str | None]:
    """A self-managed backend's scheme, its bucket or container (with any path), and its Azure storage
    account if the URL names one."""
    scheme, _, rest = backend_url.partition("://")
    location, _, query = rest.partition("?")
    return scheme, location.rstrip("/"), query.removeprefix("storage_account=") or None


def team_name(environment: str) -> str:
    """The Pulumi Cloud team of a GitHub environment's jobs: `spotkube-<environment>`."""
    return f"spotkube-{environment}"


class BootstrapSpec(_Model):
    """The CI identities of one cloud, for the repository's workflows: the settings every cloud reads.
    Each cloud's subclass (its profile's `options.bootstrap`) adds its own."""

    cloud: Text = Field(description="Which cloud's identities: a registered cloud's name.")
    repository: Text = Field(pattern=REPOSITORY, description="The GitHub repository whose workflows sign in, "
                             "`owner/repo`: only its OIDC tokens are trusted.")
    stacks: tuple[EnvironmentName, ...] = Field(
        min_length=1, description="The platform's stacks (stacks/Pulumi.NAME.yaml) the identities serve; deploy.yml "
        "runs each in a GitHub environment of its name.")
    preview_environment: EnvironmentName | None = Field(
        default=None, description="The GitHub environment preview.yml runs this cloud's stacks in; default "
        "preview-<cloud> (each cloud's bootstrap owns its own, with its own variables).")
    reviewers: Reviewers | None = Field(default=None, description="Required with a prod stack: who approves its "
                                        "deploy job (its GitHub environment's required reviewers).")
    pulumi_organization: Text | None = Field(
        default=None, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$", description="With Pulumi Cloud as the backend: "
        "the organization, where the bootstrap registers GitHub's OIDC issuer and a team per GitHub environment, "
        "so each job exchanges its OIDC token for its team's token (pulumi/auth-actions). Set this or backendUrl.")
    backend_url: Text | None = Field(
        default=None, pattern=BACKEND_URL, description="With a self-managed backend: its URL, azblob://CONTAINER "
        "or gs://BUCKET, which the workflows log in to with the job's cloud identity. Set this or "
        "pulumiOrganization.")
    create_backend: Flag = Field(
        default=False, description="With backendUrl: the bootstrap makes the backend's storage, one bucket or "
        "container for the non-prod stacks and one per prod stack, each writable by its deploy identity alone "
        "and the non-prod one readable by the preview identity; false: the administrator makes them "
        "(docs/identities.md).")

    #: The backend URL scheme a cloud's bootstrap can make storage for, and its bucket or container names.
    backend_scheme: ClassVar[str | None] = None
    backend_name: ClassVar[str] = r"^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$"
    backend_example: ClassVar[str] = ""

    @model_validator(mode="after")
    def _not_an_output(self) -> BootstrapSpec:
        if SECRETS_PROVIDERS in self.environments:
            raise ValueError(f"{SECRETS_PROVIDERS!r} names the bootstrap's secrets providers output; name the "
                             "environment otherwise")
        if (self.pulumi_organization is None) == (self.backend_url is None):
            raise ValueError("set exactly one of pulumiOrganization (Pulumi Cloud, signed in by OIDC exchange) and "
                             "backendUrl (a self-managed azblob:// or gs:// backend): the workflows hold no stored "
                             "Pulumi token")
        return self

    def backend_problem(self) -> tuple[str, str] | None:
        """With createBackend, what is wrong with the backend settings (the key, the message): the URL must
        name just a bucket or container of this cloud, which the bootstrap can make."""
        if not self.create_backend:
            return None
        if self.backend_url is None:
            return "createBackend", ("makes a self-managed backend's storage: set backendUrl too, e.g. "
                                     f"{self.backend_example or 'gs://BUCKET'}")
        scheme, location, account = backend_location(self.backend_url)
        problem = (f"is a {scheme}:// backend, which the {self.cloud} bootstrap can't make"
                   if scheme != self.backend_scheme else
                   "names a path inside its bucket or container; with createBackend name the bucket or container "
                   "alone" if not re.fullmatch(self.backend_name, location) else
                   "names no storage account; add ?storage_account=ACCOUNT (3-24 lowercase letters and digits)"
                   if scheme == "azblob" and account is None else None)
        if problem is None:
            return None
        return "backendUrl", (f"{shown(self.backend_url)} {problem}; with createBackend write e.g. "
                              f"{self.backend_example}")

    def backend_names(self, prod: tuple[str, ...]) -> dict[str | None, str]:
        """The bucket or container of each scope the bootstrap makes: None's is the non-prod stacks', each
        prod stack's its own (`<name>-<stack>`)."""
        assert self.backend_url is not None, "only with a self-managed backend"
        return {None: backend_location(self.backend_url)[1],
                **{stack: backend_location(prod_backend_url(self.backend_url, stack))[1] for stack in prod}}

    @property
    def preview(self) -> str:
        """The GitHub environment of this cloud's previews."""
        return self.preview_environment or f"preview-{self.cloud}"

    @property
    def environments(self) -> tuple[str, ...]:
        """Every GitHub environment that gets a federated credential: preview's, then one per stack."""
        return (self.preview, *self.stacks)

    def backend_variables(self, environment: str, prod: bool = False) -> dict[str, str]:
        """The variables a GitHub environment's jobs sign in to the Pulumi backend with. A self-managed
        backend keeps each prod stack's state in a bucket or container of its own (`<backendUrl>-<stack>`),
        so the grants that let the preview read the non-prod stacks' reach none of prod's."""
        if self.pulumi_organization is not None:
            return {ORGANIZATION_VARIABLE: self.pulumi_organization, TEAM_VARIABLE: team_name(environment)}
        assert self.backend_url is not None, "the validator requires one of the two"
        return {BACKEND_VARIABLE: prod_backend_url(self.backend_url, environment) if prod else self.backend_url}


def parse_bootstrap(values: Mapping[str, Any], source: str, specs: Mapping[str, type[BootstrapSpec]]) -> BootstrapSpec:
    """Validate the bootstrap stack's settings (keys without namespace) with its cloud's model (`specs`,
    by cloud); every problem at once. A setting of another cloud is named as that cloud's."""
    known = sorted({key for model in (BootstrapSpec, *specs.values()) for key in accepted_keys(model, "stack")})
    problems = [Problem(config_key(key), f"is not a bootstrap setting; accepted: {', '.join(known)}"
                        f"{did_you_mean(key, known)}") for key in values if key not in known]
    cloud = values.get("cloud")
    model = specs.get(cloud, BootstrapSpec) if isinstance(cloud, str) else BootstrapSpec
    if isinstance(cloud, str) and cloud not in specs:
        problems.append(Problem(config_key("cloud"),
                                f"{shown(cloud)} is not accepted; use {' or '.join(map(repr, specs))}"))
    own = set(accepted_keys(model, "stack"))
    try:
        spec = model.model_validate({k: v for k, v in values.items() if k in own})
    except ValidationError as err:
        for error in err.errors():
            path = ".".join(str(part) for part in error["loc"]) or "config"
            problems.append(Problem(config_key(path), describe(error, model, "stack")))
        raise SpecError(source, problems) from None
    foreign = next(((other, key) for other, other_model in specs.items() if other != spec.cloud
                    for key in accepted_keys(other_model, "stack") if key in values and key not in own), None)
    if foreign is not None:
        problems.append(Problem(config_key("config"), f"{foreign[1]} is a {foreign[0]} setting; remove it from a "
                                f"{spec.cloud} bootstrap stack"))
    backend = spec.backend_problem()
    if backend is not None:
        problems.append(Problem(config_key(backend[0]), backend[1]))
    if problems:
        raise SpecError(source, problems)
    return spec


#: The settings Pulumi hands over as JSON, and what each must look like.
STRUCTURED = {"stacks": "a list of stack names; write e.g. [<cloud>-dev-<region>, <cloud>-prod-<region>]",
              "reviewers": "a mapping; write e.g. {teams: [1234567]}",
              "createBackend": "true or false"}


def read_bootstrap(config: Mapping[str, str], source: str, specs: Mapping[str, type[BootstrapSpec]]) -> BootstrapSpec:
    """The settings from config as Pulumi hands them to the program: `stacks` as JSON, the rest as text."""
    prefix = config_key("")
    values: dict[str, Any] = {}
    for key, text in config.items():
        if not key.startswith(prefix):
            continue
        name = key[len(prefix):]
        if name in STRUCTURED:
            try:
                values[name] = json.loads(text)
            except json.JSONDecodeError:
                problem = Problem(config_key(name), f"{shown(text)} is not {STRUCTURED[name]}")
                raise SpecError(source, [problem]) from None
        else:
            values[name] = text
    return parse_bootstrap(values, source, specs)
