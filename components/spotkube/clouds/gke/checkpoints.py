"""GKE's checkpoint store: the bucket a stack's training jobs save to, and the grant that lets the
workers write it (`training.checkpointStore`).

Why these settings: a checkpoint must outlive the node that wrote it, and nobody outside the project
should read one: the bucket has uniform bucket-level access (IAM only, no object ACLs) and public access
prevention enforced. spotkube's node pools run with GKE_METADATA (Workload Identity), so a pod never
acts as the nodes' service account: the workers act as their Kubernetes service account, the
`default` one of the jobs' namespace (the training runtimes name none), and that principal gets
`roles/storage.objectUser` (read, write and delete objects, list them) on this bucket only, by
Workload Identity Federation for GKE's principal identifier, which names the project by number
(cloud.google.com/kubernetes-engine/docs/concepts/workload-identity, read 2026-12-02).

Pure module: no Pulumi.
"""

from __future__ import annotations

import re
from typing import Any

from spotkube.clouds.gke.spec import GkeSpec
from spotkube.platform.cloud import RuleOutput
from spotkube.platform.errors import Problem
from spotkube.platform.input_messages import shown
from spotkube.platform.spec import config_key

BUCKET_TYPE = "gcp:storage/bucket:Bucket"
OBJECT_USER_ROLE = "roles/storage.objectUser"
#: A bucket name without dots (a dotted one is a domain name Google wants verified).
BUCKET_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{1,61}[a-z0-9]$")
#: The provider function that gives the project's number, which the principal identifier names.
PROJECT_INVOKE = "gcp:organizations/getProject:getProject"

#: Why the plan's fixed costs leave the store unpriced.
UNPRICED = ("a bucket costs nothing of its own: Google bills the GB stored and the "
            "operations, which depend on the jobs (their checkpoint size and interval); not priced here")


def rules(spec: GkeSpec) -> RuleOutput:
    """The store's name must be a bucket name Google accepts without a domain check."""
    store = spec.training.checkpoint_store
    if store is None:
        return
    if not BUCKET_NAME.fullmatch(store.name) or store.name.startswith("goog") or "google" in store.name:
        yield Problem(config_key("training.checkpointStore.name"), f"{shown(store.name)} is no bucket name: Google "
                      "accepts 3-63 lower-case letters, digits, hyphens and underscores, starting and ending with a "
                      "letter or digit, not starting with goog nor containing google, unique across Google Cloud")


def location(name: str) -> str:
    """Where the stack's jobs save, as a URI."""
    return f"gs://{name}"


def bucket_inputs(spec: GkeSpec, project: Any) -> dict[str, Any]:
    """The bucket in the cluster's region, IAM only, never public."""
    store = spec.training.checkpoint_store
    assert store is not None, "only with training.checkpointStore"
    return {"name": store.name, "project": project, "location": spec.region.upper(),
            "uniform_bucket_level_access": True, "public_access_prevention": "enforced"}


def workers_principal(project_number: str, project: str, namespace: str, service_account: str = "default") -> str:
    """The IAM member of a Kubernetes service account under Workload Identity Federation for GKE."""
    return (f"principal://iam.googleapis.com/projects/{project_number}/locations/global/workloadIdentityPools/"
            f"{project}.svc.id.goog/subject/ns/{namespace}/sa/{service_account}")
