"""The plan states each GPU pool's time to a running step from 0 nodes: the cloud's node figure, the
image for the size the stack declares (or that it declares none), and, on an interruptible pool, the
fallback bound and the on-demand tier after it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from spotkube.components.offline import StackRun, run_stack
from spotkube.platform.project import Project
from spotkube.platform.startup import Span
from spotkube.review.plan_document import PlanDocument
from spotkube.review.program_review import stack_document
from spotkube.review.startup import pool_startups

REPO = Path(__file__).resolve().parents[2]
SPOTKUBE = str(Path(sys.executable).with_name("spotkube"))


@pytest.fixture(scope="module")
def runs(repo_project: Project) -> dict[str, StackRun]:
    return {stack: run_stack(repo_project, stack) for stack in ("aks-dev-uksouth", "aks-prod-eastus",
                                                                "gke-prod-europe-west4")}


@pytest.fixture(scope="module")
def documents(runs: dict[str, StackRun]) -> dict[str, PlanDocument]:
    return {stack: stack_document(run) for stack, run in runs.items()}


def test_every_gpu_pool_has_its_time_to_a_running_step(documents: dict[str, PlanDocument]) -> None:
    assert set(documents) == {"aks-dev-uksouth", "aks-prod-eastus", "gke-prod-europe-west4"}
    for stack, document in documents.items():
        assert [s.pool for s in document.startup] == [p.name for p in document.pools if p.gpu_type], stack


def test_a_declared_image_is_pulled_at_the_cloud_s_rate(documents: dict[str, PlanDocument]) -> None:
    (t4,) = documents["aks-dev-uksouth"].startup
    assert t4.image.delivery == "pull" and t4.image.size_gb == 6.5
    assert t4.image.span == Span(6.5 * 24, 6.5 * 30)
    assert t4.total == Span(300 + 156, 660 + 195)
    assert t4.fallback is None and t4.fallback_note == "no on-demand fallback: the step waits for capacity"


def test_an_undeclared_image_is_said_and_the_fallback_bound_stated(runs: dict[str, StackRun],
                                                                   documents: dict[str, PlanDocument]) -> None:
    run, document = runs["aks-prod-eastus"], documents["aks-prod-eastus"]
    unsized = run.spec.model_copy(update={"gpu_pools": tuple(p.model_copy(update={"image_gb": None})
                                                             for p in run.spec.gpu_pools)})
    startup = {s.pool: s for s in pool_startups(unsized, run.registrations, document.pools, document.fallback)}
    spot = startup["a100spot"]
    assert spot.total is None and spot.image.note == "image size not declared (imageGb)"
    assert spot.fallback is not None and spot.fallback.bound_seconds == 610
    assert spot.fallback.pools == ("a100ondemand",) and spot.fallback.then is None
    assert startup["a100ondemand"].fallback is None


def test_out_of_spot_adds_the_bound_and_the_on_demand_start(runs: dict[str, StackRun],
                                                             documents: dict[str, PlanDocument]) -> None:
    """aks-prod's own 12 GB image, and a 10 GB one: the pull grows with the size."""
    stated = next(s for s in documents["aks-prod-eastus"].startup if s.pool == "a100spot")
    assert stated.total == Span(300 + 288, 660 + 360)
    run, document = runs["aks-prod-eastus"], documents["aks-prod-eastus"]
    sized = run.spec.model_copy(update={"gpu_pools": tuple(p.model_copy(update={"image_gb": 10.0})
                                                           for p in run.spec.gpu_pools)})
    startup = {s.pool: s for s in pool_startups(sized, run.registrations, document.pools, document.fallback)}
    spot = startup["a100spot"]
    assert spot.total == Span(300 + 240, 660 + 300)
    assert spot.out_of_capacity == Span(610 + 300 + 240, 610 + 660 + 300)


def test_gke_s_unbounded_fallback_is_said_tier_by_tier(documents: dict[str, PlanDocument]) -> None:
    startup = {s.pool: s for s in documents["gke-prod-europe-west4"].startup}
    spot, flex = startup["a100-spot"], startup["a100-flex"]
    assert spot.fallback is None
    assert spot.fallback_note == ("flex-start a100-flex, then on-demand a100-ondemand, after a wait the plan can't "
                                  "bound (see the fallback)")
    assert flex.fallback_note == "on-demand a100-ondemand, after a wait the plan can't bound (see the fallback)"
    assert spot.node.kind == "assumption"


def test_each_pool_gets_its_gpu_family_s_node_figure(documents: dict[str, PlanDocument]) -> None:
    """A T4 pool on GKE starts as the reports on GKE's T4 pools measured; an A100 pool, for which nobody
    publishes a figure, gets spotkube's assumption, and the JSON says which is which."""
    startup = {s.pool: s for s in documents["gke-prod-europe-west4"].startup}
    t4, a100 = startup["t4-preemptible"], startup["a100-spot"]
    assert (t4.node.kind, t4.node_span) == ("reported", Span(540, 600))
    assert t4.node.source == "https://github.com/GoogleCloudPlatform/selkies-vdi/issues/1"
    assert (a100.node.kind, a100.node_span) == ("assumption", Span(300, 600))
    assert "No published figure for an A2" in a100.node.says
    assert a100.to_json()["node"]["kind"] == "assumption"


def plan(*args: str) -> str:
    done = subprocess.run([SPOTKUBE, "plan", *args], cwd=REPO, capture_output=True, text=True, timeout=600,
                          check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_markdown_and_the_table_show_the_section() -> None:
    markdown = plan("--stack", "aks-dev-uksouth", "--format", "markdown")
    assert ("| t4spot | 5m–11m (assumption) | pull 6.5 GB: 2m36s–3m15s (assumption) | 7m36s–14m15s | no on-demand "
            "fallback: the step waits for capacity |") in markdown
    table = plan("--stack", "aks-prod-eastus")
    assert "time to a running GPU step from 0 nodes" in table
    assert "up to 10m10s before on-demand" in table


def test_simulate_samples_the_time_to_a_running_step_of_the_pools_the_steps_use() -> None:
    def simulate(*extra: str) -> dict:
        done = subprocess.run([SPOTKUBE, "simulate", "--stack", "aks-dev-uksouth",
                               "examples/pipelines/train_checkpointed.yaml", "--runs", "400", "--format", "json",
                               *extra], cwd=REPO, capture_output=True, text=True, timeout=600, check=False)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    (always,) = simulate("--out-of-capacity", "0")["startup"]
    assert always["pool"] == "t4spot" and always["sampled"] and always["waited"] == 0
    assert 300 + 156 <= always["p50Seconds"] <= always["p99Seconds"] <= 660 + 195
    (scarce,) = simulate("--out-of-capacity", "0.5")["startup"]
    assert scarce["p90Seconds"] is None and 0.4 < scarce["waited"] < 0.6
