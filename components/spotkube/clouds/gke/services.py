"""GKE: the Google Cloud APIs (services) a stack's program and its CI need enabled in the project.

A new project has few APIs enabled, and a call to a disabled one fails with `SERVICE_DISABLED`. The
services follow from the program's registered type tokens (pulumi-gcp names each resource
`gcp:<module>/<resource>:<Type>`, and each module belongs to one API), plus the ones every stack
calls whatever it registers: the workflows sign in by impersonating a service account (IAM Service
Account Credentials), `spotkube quota` and the nodes use Compute Engine, and the cluster writes its
logs to Cloud Logging. One list, which `spotkube doctor` checks live and the bootstrap enables. Pure
module: no Pulumi, no SDK.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from spotkube.clouds.gke.identities import NO_GOOGLE_CALL_PREFIXES

#: pulumi-gcp module (the part of the type token before `/`) -> the API its resources are made through
#: (cloud.google.com/kubernetes-engine/docs/how-to/..., the APIs each resource's Terraform page names).
MODULE_SERVICES: dict[str, str] = {
    "container": "container.googleapis.com",
    "compute": "compute.googleapis.com",
    "serviceaccount": "iam.googleapis.com",
    "projects": "cloudresourcemanager.googleapis.com",
}
#: What every stack needs enabled besides its resources' APIs: google-github-actions/auth's service
#: account impersonation, Compute Engine (nodes, quota), Cloud Logging (the cluster's logs), and
#: Service Usage itself (how the enabled services are listed).
ALWAYS_NEEDED = ("iamcredentials.googleapis.com", "compute.googleapis.com", "logging.googleapis.com",
                 "serviceusage.googleapis.com")


@dataclass(frozen=True)
class Services:
    """The services a program needs, and the registered types whose service spotkube doesn't know."""

    needed: tuple[str, ...]
    unknown_types: tuple[str, ...]


def module_of(type_token: str) -> str:
    """`gcp:container/nodePool:NodePool` -> `container`."""
    return type_token.split(":", 2)[1].split("/", 1)[0] if type_token.count(":") >= 2 else ""


def needed_services(type_tokens: Iterable[str]) -> Services:
    """The services the program's Google resources are made through, and the ones every stack needs (sorted)."""
    needed = set(ALWAYS_NEEDED)
    unknown = set()
    for token in type_tokens:
        if token.startswith(NO_GOOGLE_CALL_PREFIXES):
            continue
        service = MODULE_SERVICES.get(module_of(token)) if token.startswith("gcp:") else None
        if service is None:
            unknown.add(token)
        else:
            needed.add(service)
    return Services(tuple(sorted(needed)), tuple(sorted(unknown)))


def enable_command(name: str, project: str) -> str:
    """What the project's owner runs (enabling needs `serviceusage.services.enable`)."""
    return f"gcloud services enable {name} --project {project}"
