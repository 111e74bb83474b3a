"""How a GKE stack is deployed from CI, for `spotkube new-stack`'s next steps: what the deploy workflow
reads from the stack's GitHub environment, which the bootstrap writes (infra/bootstrap). Pure module: no
Pulumi.
"""

from __future__ import annotations

from spotkube.platform.command_support import DeployAccess

DEPLOY = DeployAccess(
    variables=(("GCP_WORKLOAD_IDENTITY_PROVIDER",
                "projects/<number>/locations/global/workloadIdentityPools/<pool>/providers/<provider>"),
               ("GCP_SERVICE_ACCOUNT", "<email of the service account that deploys>")),
)
