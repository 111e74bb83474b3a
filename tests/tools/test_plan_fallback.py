"""Every plan states each GPU type's fallback order and worst case, read from what is registered."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from spotkube.core.plan_document import PlanDocument
from spotkube.core.project import Project
from spotkube.tools import plan_views, report
from spotkube.tools.offline import run_stack

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def documents(repo_project: Project) -> dict[str, PlanDocument]:
    return {stack: report.stack_document(run_stack(repo_project, stack)) for stack in repo_project.stacks()}


def test_every_gpu_type_of_every_stack_has_its_fallback_stated(documents: dict[str, PlanDocument]) -> None:
    for stack, document in documents.items():
        gpus = {pool.gpu_type for pool in document.pools if pool.gpu_type}
        assert {f.gpu_type for f in document.fallback} == gpus, stack
        for fallback in document.fallback:
            assert fallback.order and fallback.worst_case_text(), (stack, fallback)


def test_aks_prod_falls_back_to_on_demand_within_the_bounded_time(documents: dict[str, PlanDocument]) -> None:
    (a100,) = documents["aks-prod-eastus"].fallback
    assert [(s.capacity, s.pools) for s in a100.order] == [("spot", ("a100spot",)), ("on-demand", ("a100ondemand",))]
    assert a100.guaranteed and a100.worst_case_seconds == 10 * 60 + 10


def test_a_gpu_type_without_on_demand_is_a_warning(documents: dict[str, PlanDocument]) -> None:
    assert any(w.startswith("fallback: no on-demand fallback for nvidia-tesla-t4")
               for w in documents["aks-dev-uksouth"].warnings)
    gke = {f.gpu_type: f for f in documents["gke-prod-europe-west4"].fallback}
    assert gke["nvidia-tesla-a100"].on_demand_pools == ("a100-ondemand",)
    assert gke["nvidia-tesla-t4"].warning


def test_the_json_carries_the_fallback_and_meets_the_schema(documents: dict[str, PlanDocument]) -> None:
    schema = json.loads((REPO / "schemas" / "plan.schema.json").read_text())
    plan = report.plan_json(list(documents.values()))
    jsonschema.validate(plan, schema)
    (prod,) = [s for s in plan["stacks"] if s["stack"] == "aks-prod-eastus"]
    assert prod["fallback"][0]["worstCaseSeconds"] == 610


def test_the_markdown_comment_shows_the_fallback(documents: dict[str, PlanDocument]) -> None:
    markdown = plan_views.to_markdown([documents["aks-prod-eastus"]])
    assert "| nvidia-a100-80gb | spot a100spot → on-demand a100ondemand | 10m10s |" in markdown
