"""How a GKE stack is deployed from CI, for `spotkube new-stack`'s next steps: what the deploy workflow
reads from the stack's GitHub environment, how Google Cloud comes to trust that environment's token
(workload identity federation), and the roles the deploying service account needs. Pure module: no
Pulumi.
"""

from __future__ import annotations

from spotkube.platform.command_support import DeployAccess


def trust(stack: str) -> list[str]:
    """The repository's principal set may impersonate the deploying service account."""
    return ["gcloud iam service-accounts add-iam-policy-binding <GCP_SERVICE_ACCOUNT> "
            "--role roles/iam.workloadIdentityUser --member "
            '"principalSet://iam.googleapis.com/projects/<number>/locations/global/workloadIdentityPools/'
            '<pool>/attribute.repository/<owner>/<repo>"',
            "   (once per repository; if the pool's attribute condition names environments, add this one)"]


DEPLOY = DeployAccess(
    variables=(("GCP_WORKLOAD_IDENTITY_PROVIDER",
                "projects/<number>/locations/global/workloadIdentityPools/<pool>/providers/<provider>"),
               ("GCP_SERVICE_ACCOUNT", "<email of the service account that deploys>")),
    trust=trust,
    roles="Kubernetes Engine Admin, Service Account Admin, Project IAM Admin and Compute Network Admin",
)
