"""How an AKS stack is deployed from CI, for `spotkube new-stack`'s next steps: what the deploy workflow
reads from the stack's GitHub environment, how Entra ID comes to trust that environment's token, and
the roles the deploying identity needs. Pure module: no Pulumi.
"""

from __future__ import annotations

import json

from spotkube.platform.command_support import DeployAccess
from spotkube.platform.identities import GITHUB_ISSUER


def trust(stack: str) -> list[str]:
    """A federated credential on the deploying app (or managed identity) for the environment's token."""
    credential = json.dumps({"name": f"github-{stack}", "issuer": GITHUB_ISSUER,
                             "subject": f"repo:<owner>/<repo>:environment:{stack}",
                             "audiences": ["api://AzureADTokenExchange"]})
    return [f"az ad app federated-credential create --id <ARM_CLIENT_ID> --parameters '{credential}'",
            "   (a user-assigned managed identity: az identity federated-credential create, same subject)"]


DEPLOY = DeployAccess(
    variables=(("ARM_CLIENT_ID", "<client id of the identity that deploys>"),
               ("ARM_TENANT_ID", "<its Entra ID tenant id>"),
               ("ARM_SUBSCRIPTION_ID", "<the subscription to deploy into>")),
    trust=trust,
    roles="Contributor and a role that may write role assignments on the subscription",
)
