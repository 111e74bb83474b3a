"""The CI identities for GitHub Actions, made once per cloud by an administrator (docs/identities.md).

Thin wiring only: read and check the stack's settings and the platform stacks it serves, create the
cloud's identities, and export each GitHub environment's variables, named as the workflows read them,
and each prod stack's secrets provider (`secretsProviders`).
"""

import importlib
from pathlib import Path

import pulumi

from spotkube.components.bootstrap import read_bootstrap_stack

spec, stacks = read_bootstrap_stack(Path(__file__).parent)
# Only this stack's cloud is imported: each cloud SDK takes a second or more to load.
cloud = importlib.import_module(f"spotkube.clouds.{spec.cloud}.bootstrap")
for name, value in cloud.ci_identities(spec, stacks).items():
    pulumi.export(name, pulumi.Output.from_input(value))
