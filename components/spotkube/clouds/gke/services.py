"""GKE: the Google Cloud APIs a project must have enabled for a first run.

A call to a disabled API fails with `SERVICE_DISABLED` (403), and enabling one needs
`serviceusage.services.enable`, which no CI identity holds: so the bootstrap, run by an administrator,
enables them, and `spotkube doctor` checks them live, from this one list. Each pulumi-gcp type token's
module names its API; a test fails when the program registers a type the tables don't cover. Pure module.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from spotkube.clouds.gke.identities import NO_GOOGLE_CALL_PREFIXES
from spotkube.platform.records import record

#: Enabled in every project, and the API every other API is enabled through; never enabled here.
ENABLED_BY_DEFAULT = frozenset({"serviceusage.googleapis.com"})

#: pulumi-gcp module -> the API its resources are made through.
MODULE_SERVICES: Mapping[str, str] = {
    "container": "container.googleapis.com",
    "compute": "compute.googleapis.com",
    "serviceaccount": "iam.googleapis.com",
    "iam": "iam.googleapis.com",
    "kms": "cloudkms.googleapis.com",
    "artifactregistry": "artifactregistry.googleapis.com",
    "storage": "storage.googleapis.com",
}
#: Types of a module whose resources go to different APIs: the `projects` module's IAM policy is Cloud
#: Resource Manager's, its custom roles are IAM's, and its services Service Usage's.
TYPE_SERVICES: Mapping[str, str] = {
    "gcp:projects/iAMMember:IAMMember": "cloudresourcemanager.googleapis.com",
    "gcp:projects/iAMCustomRole:IAMCustomRole": "iam.googleapis.com",
    "gcp:projects/service:Service": "serviceusage.googleapis.com",
}
#: APIs called beyond the resources registered: API -> who calls it, and why.
CALLED_BEYOND_TYPES: Mapping[str, str] = {
    "iamcredentials.googleapis.com": "google-github-actions/auth, in every workflow, impersonates the preview or "
                                     "deploy service account through the IAM Service Account Credentials API",
    "sts.googleapis.com": "google-github-actions/auth exchanges the job's GitHub OIDC token for a federated token "
                          "at the Security Token Service",
    "cloudresourcemanager.googleapis.com": "pulumi-gcp and gcloud read the project, and refresh reads its IAM policy",
    "compute.googleapis.com": "the nodes are Compute Engine VMs, and `spotkube quota` reads the region's quotas",
    "logging.googleapis.com": "the cluster sends its system and workload logs to Cloud Logging (clouds/gke/logs.py)",
    "monitoring.googleapis.com": "the cluster sends its system metrics to Cloud Monitoring (monitoringConfig)",
    "containerfilesystem.googleapis.com": "GPU pools with imageStreaming (and secondaryBootDisk) read images through "
                                          "the Container File System API, which GKE requires enabled for either",
}


def service_of(type_token: str) -> str | None:
    """The API a pulumi-gcp type's resources are made through; None for a type the tables lack."""
    if type_token in TYPE_SERVICES:
        return TYPE_SERVICES[type_token]
    module = type_token.removeprefix("gcp:").split("/", 1)[0]
    return MODULE_SERVICES.get(module)


def services_of(type_tokens: Iterable[str]) -> dict[str, str | None]:
    """Each pulumi-gcp type token's API."""
    return {token: service_of(token) for token in type_tokens if token.startswith("gcp:")}


def required_services() -> tuple[str, ...]:
    """Every API the bootstrap enables: those of every module and type in the tables and those called
    beyond them, less the ones enabled by default; sorted."""
    every = {*MODULE_SERVICES.values(), *TYPE_SERVICES.values(), *CALLED_BEYOND_TYPES}
    return tuple(sorted(every - ENABLED_BY_DEFAULT))


@record
class Services:
    """The services a program needs, and the registered types whose service spotkube doesn't know."""

    needed: tuple[str, ...]
    unknown_types: tuple[str, ...]


def needed_services(type_tokens: Iterable[str]) -> Services:
    """The APIs one program's Google resources are made through, with those called beyond them (sorted);
    a type the tables lack is named, not dropped."""
    needed = set(CALLED_BEYOND_TYPES)
    unknown = set()
    for token in type_tokens:
        if token.startswith(NO_GOOGLE_CALL_PREFIXES):
            continue
        service = service_of(token) if token.startswith("gcp:") else None
        if service is None:
            unknown.add(token)
        else:
            needed.add(service)
    return Services(tuple(sorted(needed - ENABLED_BY_DEFAULT)), tuple(sorted(unknown)))


def enable_command(name: str, project: str) -> str:
    """What the project's owner runs (enabling needs `serviceusage.services.enable`)."""
    return f"gcloud services enable {name} --project {project}"
