"""AKS GPU supply as the plan and the cost show it: a capacity reservation group the stack creates is
a fixed cost at its size's on-demand price, one reserved outside the stack is named without a price,
the registry grant and artifact streaming are listed, and a stack file that breaks a rule is refused
with the file and the key."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from spotkube.cli.app import app
from spotkube.platform.project import Project

A100 = "Standard_NC24ads_A100_v4"
STACK = "aks-dev-eastus"
REGISTRY = ("/subscriptions/22222222-3333-4444-8555-666666666666/resourceGroups/images/providers/"
            "Microsoft.ContainerRegistry/registries/teamimages")
EXISTING = ("/subscriptions/33333333-4444-4555-8666-777777777777/resourceGroups/capacity/providers/"
            "Microsoft.Compute/capacityReservationGroups/a100-reserved")
DEPLOYER = "c0ffee00-0000-4000-8000-000000000001"
PRICES = Path(__file__).parents[2] / "components/spotkube/clouds/aks/prices.json"


def stack(reservation: dict[str, Any], capacity: str = "on-demand") -> dict[str, Any]:
    return {
        "cloud": "aks", "environment": "dev", "region": "eastus",
        "gpuPools": [{"name": "a100", "machine": A100, "capacity": capacity, "max": 2,
                      "capacityReservationGroup": reservation}],
        "cluster": {"deployer": {"objectId": DEPLOYER, "principalType": "ServicePrincipal"},
                    "registries": [REGISTRY]},
    }


def plan_json(project: Project) -> dict[str, Any]:
    result = CliRunner().invoke(app, ["plan", "--stack", STACK, "--format", "json", "--project", str(project.root)])
    assert result.exit_code in (0, 1), result.output
    body = json.loads(result.stdout)
    return body["stacks"][0] if "stacks" in body else body


def test_a_spot_pool_with_a_group_in_a_stack_file_is_refused_with_the_file_and_key(
        project_with_stack: Callable[[str, dict[str, Any]], Project]) -> None:
    project = project_with_stack(STACK, stack({"create": {"count": 1}}, capacity="spot"))
    result = CliRunner().invoke(app, ["plan", "--stack", STACK, "--project", str(project.root)])
    assert result.exit_code != 0
    text = " ".join(result.output.split())
    assert "Pulumi.aks-dev-eastus.yaml" in text
    assert "spotkube:gpuPools[0].capacityReservationGroup: applies to on-demand pools only" in text
    assert "Traceback" not in result.output


def test_a_created_reservation_is_a_fixed_cost_at_the_size_s_on_demand_price(
        project_with_stack: Callable[[str, dict[str, Any]], Project]) -> None:
    document = plan_json(project_with_stack(STACK, stack({"create": {"count": 1}})))
    (line,) = [x for x in document["cost"]["fixed"]["lines"] if x["item"].startswith("capacity reservation")]
    assert line["item"] == f"capacity reservation {A100} × 1 VM(s) (regional)"
    assert line["priceKey"] == f"capacity-reservation:{A100}" and line["per"] == "hour"
    on_demand = json.loads(PRICES.read_text())
    (row,) = [r for r in on_demand["rows"] if (r["sku"], r["region"], r["capacity"]) == (A100, "eastus", "on-demand")]
    assert line["usd"] == row["usdPerHour"]
    assert line["monthly"] == round(row["usdPerHour"] * 730, 2)
    supply = {s["name"]: s["value"] for s in document["supply"]}
    assert supply["a100: capacity reservation"].startswith(f"group created by this stack: 1 × {A100} in the region")
    assert supply["registry grant"] == (f"AcrPull for the kubelet identity (every pool's nodes) on {REGISTRY}; "
                                        "granted by its owner: the registry's owner lets the deploy identity assign "
                                        "AcrPull there (docs/identities.md; spotkube doctor checks it)")
    assert supply["a100: artifact streaming"].startswith("off: each node pulls whole images; AKS's artifact "
                                                         "streaming is preview")


def test_an_existing_group_is_shown_as_reserved_outside_the_stack_without_a_price(
        project_with_stack: Callable[[str, dict[str, Any]], Project]) -> None:
    document = plan_json(project_with_stack(STACK, stack({"id": EXISTING})))
    (line,) = [x for x in document["cost"]["fixed"]["lines"] if x["item"].startswith("capacity reservation")]
    assert line["item"] == "capacity reservation group of pool a100 (reserved outside this stack)"
    assert line["priceKey"] is None and line["usd"] is None and EXISTING in line["note"]
    supply = {s["name"]: s["value"] for s in document["supply"]}
    assert supply["a100: capacity reservation"] == f"{EXISTING} (reserved outside this stack)"


def test_the_shipped_prod_stack_shows_its_reservation_and_grant_in_the_plan_text(repo_project: Project) -> None:
    result = CliRunner().invoke(app, ["plan", "--stack", "aks-prod-eastus", "--strict", "--project",
                                      str(repo_project.root)])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.replace("│", " ").split())
    assert "GPU supply" in text
    assert "fixed: capacity reservation Standard_NC24ads_A100_v4 × 1 VM(s) (regional)" in text
    assert "AcrPull for the kubelet identity" in text


def test_a_registry_in_the_stack_s_own_group_is_the_bootstrap_s_to_allow(
        project_with_stack: Callable[[str, dict[str, Any]], Project]) -> None:
    """A registry in the resource group the bootstrap scopes the deployer to: its condition allows AcrPull
    there (tests/components/test_bootstrap_grants.py), so no owner has anything to grant."""
    document = stack({"create": {"count": 1}})
    document["cluster"]["resourceGroupName"] = "spotkube-aks-dev-eastus"
    own = ("/subscriptions/22222222-3333-4444-8555-666666666666/resourceGroups/spotkube-aks-dev-eastus/providers/"
           "Microsoft.ContainerRegistry/registries/teamimages")
    document["cluster"]["registries"] = [own]
    supply = {s["name"]: s["value"] for s in plan_json(project_with_stack(STACK, document))["supply"]}
    assert supply["registry grant"].endswith("; the bootstrap lets the deploy identity make it (the stack's own group)")
