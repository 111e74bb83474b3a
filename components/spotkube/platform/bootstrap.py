"""The bootstrap stack's settings: which repository's workflows get CI identities, for which stacks.

The bootstrap (infra/bootstrap/) is run once per cloud by an administrator; it creates the preview
and deploy identities of GitHub Actions, trusting the repository's OIDC tokens, with the roles
docs/identities.md lists. Its stack file is checked like the platform's: one message naming the file,
the key, the value and what is accepted, before anything is registered. Pure module: no Pulumi.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pydantic import Field, ValidationError, model_validator

from spotkube.platform.contract import Cloud
from spotkube.platform.errors import Problem, SpecError
from spotkube.platform.input_messages import describe, did_you_mean, shown
from spotkube.platform.spec import CONFIG_NAMESPACE, Text, _Model

#: GitHub's `owner/repo`: an owner of up to 39 letters, digits and hyphens, neither first nor last; a
#: name of letters, digits, `.`, `_` and `-` (docs.github.com: "repository names can only contain ASCII
#: letters, digits, and the characters ., -, and _").
REPOSITORY = r"^[A-Za-z0-9]([A-Za-z0-9-]{0,37}[A-Za-z0-9])?/[A-Za-z0-9._-]{1,100}$"
#: GitHub environment names as deploy.yml and preview.yml use them (the stack names, `preview`).
ENVIRONMENT = r"^[A-Za-z0-9_.-]{1,255}$"
#: The bootstrap's output naming each prod stack's secrets provider (a key only its deploy identity uses).
SECRETS_PROVIDERS = "secretsProviders"
#: Settings that only one cloud reads.
CLOUD_ONLY: dict[str, tuple[str, ...]] = {
    "aks": ("location", "identity_resource_group"),
    "gke": ("project", "pool_id", "provider_id"),
}


class BootstrapSpec(_Model):
    """The CI identities of one cloud, for the repository's workflows."""

    cloud: Cloud = Field(description="Which cloud's identities: `aks` or `gke`.")
    repository: Text = Field(pattern=REPOSITORY, description="The GitHub repository whose workflows sign in, "
                             "`owner/repo`: only its OIDC tokens are trusted.")
    stacks: tuple[Text, ...] = Field(min_length=1, description="The platform's stacks (stacks/Pulumi.NAME.yaml) "
                                     "the identities serve; deploy.yml runs each in a GitHub environment of its name.")
    preview_environment: Text = Field(default="preview", pattern=ENVIRONMENT,
                                      description="The GitHub environment preview.yml runs in.")
    location: Text | None = Field(default=None, pattern=r"^[a-z][a-z0-9]+$", description="AKS: the Azure region of "
                                  "the identities' resource group; default: the first stack's region.")
    identity_resource_group: Text = Field(default="spotkube-ci", pattern=r"^[-\w._()]{1,89}[-\w_()]$",
                                          description="AKS: the resource group the managed identities live in.")
    project: Text | None = Field(default=None, pattern=r"^[a-z][a-z0-9-]{4,28}[a-z0-9]$",
                                 description="GKE: the Google Cloud project of the pool and the service accounts; "
                                 "default: the first stack's.")
    pool_id: Text = Field(default="github-actions", pattern=r"^[a-z][a-z0-9-]{2,30}[a-z0-9]$",
                          description="GKE: the workload identity pool's id (4-32 characters).")
    provider_id: Text = Field(default="github", pattern=r"^[a-z][a-z0-9-]{2,30}[a-z0-9]$",
                              description="GKE: the pool's OIDC provider id (4-32 characters).")

    @model_validator(mode="after")
    def _not_an_output(self) -> BootstrapSpec:
        if SECRETS_PROVIDERS in self.environments:
            raise ValueError(f"{SECRETS_PROVIDERS!r} names the bootstrap's secrets providers output; name the "
                             "environment otherwise")
        return self

    @model_validator(mode="after")
    def _one_cloud(self) -> BootstrapSpec:
        for cloud, fields in CLOUD_ONLY.items():
            if cloud == self.cloud:
                continue
            for name in fields:
                if name in self.model_fields_set:
                    alias = type(self).model_fields[name].alias or name
                    raise ValueError(f"{alias} is a {cloud} setting; remove it from a {self.cloud} bootstrap stack")
        return self

    @property
    def environments(self) -> tuple[str, ...]:
        """Every GitHub environment that gets a federated credential: preview's, then one per stack."""
        return (self.preview_environment, *self.stacks)


def _key(name: str) -> str:
    return f"{CONFIG_NAMESPACE}:{name}"


def parse_bootstrap(values: Mapping[str, Any], source: str) -> BootstrapSpec:
    """Validate the bootstrap stack's settings (keys without namespace); every problem at once."""
    fields = BootstrapSpec.model_fields
    known = {field.alias or name for name, field in fields.items()}
    problems = [Problem(_key(key), f"is not a bootstrap setting; accepted: {', '.join(sorted(known))}"
                        f"{did_you_mean(key, sorted(known))}") for key in values if key not in known]
    try:
        spec = BootstrapSpec.model_validate({k: v for k, v in values.items() if k in known})
    except ValidationError as err:
        for error in err.errors():
            path = ".".join(str(part) for part in error["loc"]) or "config"
            problems.append(Problem(_key(path), describe(error, BootstrapSpec, "stack")))
        raise SpecError(source, problems) from None
    if problems:
        raise SpecError(source, problems)
    return spec


def read_bootstrap(config: Mapping[str, str], source: str) -> BootstrapSpec:
    """The settings from config as Pulumi hands them to the program: `stacks` as JSON, the rest as text."""
    prefix = _key("")
    values: dict[str, Any] = {}
    for key, text in config.items():
        if not key.startswith(prefix):
            continue
        name = key[len(prefix):]
        if name == "stacks":
            try:
                values[name] = json.loads(text)
            except json.JSONDecodeError:
                raise SpecError(source, [Problem(_key(name), f"{shown(text)} is not a list; write e.g. "
                                                 "[aks-dev-uksouth, aks-prod-eastus]")]) from None
        else:
            values[name] = text
    return parse_bootstrap(values, source)
