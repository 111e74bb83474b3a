"""How an AKS stack is deployed from CI, for `spotkube new-stack`'s next steps: what the deploy workflow
reads from the stack's GitHub environment, which the bootstrap writes (infra/bootstrap). Pure module: no
Pulumi.
"""

from __future__ import annotations

from spotkube.platform.command_support import DeployAccess

DEPLOY = DeployAccess(
    variables=(("ARM_CLIENT_ID", "<client id of the identity that deploys>"),
               ("ARM_TENANT_ID", "<its Entra ID tenant id>"),
               ("ARM_SUBSCRIPTION_ID", "<the subscription to deploy into>")),
)
