"""The CI identities for GitHub Actions, made once per cloud by an administrator (docs/identities.md).

Thin wiring only: read and check the stack's settings and the platform stacks it serves, create the
cloud's identities, the repository's GitHub environments with their rules and variables (named as the
workflows read them), with Pulumi Cloud its OIDC issuer and teams, and export each environment's
variables and each prod stack's secrets provider (`secretsProviders`).
"""

import importlib
from pathlib import Path

import pulumi

from spotkube.components.bootstrap import platform_project_name, read_bootstrap_stack
from spotkube.components.ci_environments import environment_variables, github_environments, pulumi_cloud_access

spec, stacks = read_bootstrap_stack(Path(__file__).parent)
# Only this stack's cloud is imported: each cloud SDK takes a second or more to load.
cloud = importlib.import_module(f"spotkube.clouds.{spec.cloud}.bootstrap")
outputs = cloud.ci_identities(spec, stacks)
variables = environment_variables(spec, stacks, outputs)
github_environments(spec, stacks, variables)
if spec.pulumi_organization is not None:
    pulumi_cloud_access(spec, stacks, platform_project_name(Path(__file__).parent))
for name, value in {**outputs, **variables}.items():
    pulumi.export(name, pulumi.Output.from_input(value))
