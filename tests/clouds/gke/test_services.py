"""The Google Cloud services a stack needs enabled follow from what its program registers, plus what
the workflows sign in with."""

from __future__ import annotations

from pathlib import Path

from spotkube.clouds.gke.services import needed_services
from spotkube.components.offline import run_stack
from spotkube.platform.project import find_project

REPO = Path(__file__).resolve().parents[3]


def test_every_type_the_shipped_gke_stacks_register_has_its_service() -> None:
    project = find_project(REPO)
    runs = [run_stack(project, name) for name in project.stacks() if name.startswith("gke-")]
    services = needed_services({r.type for run in runs for r in run.registrations})
    assert services.unknown_types == (), "add these modules to MODULE_SERVICES in clouds/gke/services.py"
    assert {"container.googleapis.com", "compute.googleapis.com", "iam.googleapis.com",
            "cloudresourcemanager.googleapis.com"} <= set(services.needed)
    # google-github-actions/auth impersonates a service account: IAM Service Account Credentials
    assert "iamcredentials.googleapis.com" in services.needed


def test_a_module_spotkube_does_not_know_is_named_not_dropped() -> None:
    services = needed_services(["gcp:pubsub/topic:Topic", "gcp:container/cluster:Cluster", "random:x:Y"])
    assert services.unknown_types == ("gcp:pubsub/topic:Topic",)
