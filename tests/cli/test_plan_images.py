"""The plan's GPU supply rows flag each GKE pool whose nodes get images other than by a plain pull (image
streaming, a secondary boot disk of preloaded images) and list the nodes' registry read grants, in every
format."""

from __future__ import annotations

import re
from typing import Any

from rich.console import Console

from spotkube.cli import plan_views
from spotkube.components.offline import run_stack
from spotkube.review.program_review import stack_document

TRAINING = "projects/spotkube-images/locations/europe-west4/repositories/training"
IMAGE = "projects/spotkube-images/global/images/cuda-12-trainer"


def test_the_plan_flags_each_pool_s_images_and_lists_the_grants(project_with_stack: Any) -> None:
    config = {"cloud": "gke", "environment": "dev", "region": "us-central1", "kubeflow": {"enabled": False},
              "cluster": {"project": "spotkube-test", "registries": [TRAINING]},
              "gpuPools": [{"name": "l4-spot", "machine": "g2-standard-8", "imageStreaming": True,
                            "secondaryBootDisk": {"diskImage": IMAGE}},
                           {"name": "l4-pulled", "machine": "g2-standard-8", "capacity": "on-demand"}]}
    document = stack_document(run_stack(project_with_stack("gke-dev-images", config), "gke-dev-images"))
    images = {row["name"]: row["images"] for row in document.to_json()["pools"]}
    assert images["l4-spot"] == (f"image streaming (gcfs_config); secondary boot disk {IMAGE} "
                                 "(CONTAINER_IMAGE_CACHE)")
    assert images["l4-pulled"] is None
    supply = {(row["name"], row["value"]) for row in document.to_json()["supply"]}
    assert supply == {
        ("l4-spot: images", f"image streaming (gcfs_config); secondary boot disk {IMAGE} (CONTAINER_IMAGE_CACHE)"),
        ("registry grant", f"roles/artifactregistry.reader for the nodes' service account on {TRAINING}")}

    console = Console(width=200, record=True)
    console.print(plan_views.posture_table(document))
    text = console.export_text()
    assert "l4-spot: images" in text and "l4-pulled: images" not in text
    assert re.search(r"│ registry grant +│ roles/artifactregistry\.reader for the nodes' service account on "
                     rf"{re.escape(TRAINING)}", text)
    markdown = plan_views.to_markdown([document])
    assert f"| l4-spot: images | image streaming (gcfs_config); secondary boot disk {IMAGE}" in markdown
    assert (f"| registry grant | roles/artifactregistry.reader for the nodes' service account on {TRAINING}"
            in markdown)
