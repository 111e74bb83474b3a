"""The idle floor's fixed lines: what the program registers besides the nodes, priced from sourced tables.

The registrations are the real program's, run offline for the shipped stacks; settings spotkube's stack
files can't choose yet (an AKS tier, another outbound type, an OS disk type) are set on those same
registered inputs, as a consumer's program or a later setting would register them.
"""

from __future__ import annotations

import copy
import dataclasses
import json
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pytest

from planned_costs import price_plan
from spotkube.clouds import CLOUDS, plan_platform
from spotkube.components.offline import StackRun
from spotkube.platform.cost.fixed import FixedCosts, FixedLine
from spotkube.platform.registration import Registration
from spotkube.review.fixed_costs import stack_fixed_costs

AKS_CLUSTER = "azure-native:containerservice:ManagedCluster"
AKS_POOL = "azure-native:containerservice:AgentPool"
GKE_POOL = "gcp:container/nodePool:NodePool"
GKE_CLUSTER = "gcp:container/cluster:Cluster"


@pytest.fixture(scope="module")
def runs(shipped_run: Callable[[str], StackRun]) -> dict[str, StackRun]:
    return {stack: shipped_run(stack) for stack in ("aks-prod-eastus", "gke-dev-us-central1", "gke-prod-europe-west4")}


def lines(costs: FixedCosts | None) -> dict[str, FixedLine]:
    assert costs is not None
    return {line.item.what: line for line in costs.lines}


def changed(run: StackRun, type_token: str, change: Callable[[dict[str, Any]], None]) -> list[Registration]:
    """The run's registrations with `change` applied to the inputs of every resource of `type_token`."""
    out = []
    for registration in run.registrations:
        if registration.type == type_token:
            inputs = copy.deepcopy(dict(registration.inputs))
            change(inputs)
            registration = dataclasses.replace(registration, inputs=inputs)
        out.append(registration)
    return out


def test_an_aks_stack_counts_its_free_cluster_outbound_path_os_disks_and_kubeflow_volumes(
        runs: dict[str, StackRun]) -> None:
    run = runs["aks-prod-eastus"]
    found = lines(stack_fixed_costs(run.spec, run.registrations))
    assert {what: line.monthly_usd for what, line in found.items()} == {
        "cluster management (Free tier)": Decimal("0.00"),
        "Standard load balancer (AKS's outbound rule)": Decimal("18.25"),  # $0.025 x 730 h
        "outbound public IP × 1": Decimal("3.65"),
        "Log Analytics workspace (Container Insights)": Decimal("0.00"),
        "OS disks of pool system (3 node(s) × 128 GiB Premium SSD P10)": Decimal("59.13"),  # 3 x $19.71
        "OS disks of pool platform (2 node(s) × 128 GiB Premium SSD P10)": Decimal("39.42"),
        "MySQL volume (20 GiB, storage class default)": Decimal("2.40"),  # billed as E4 (32 GiB)
        "SeaweedFS volume (20 GiB, storage class default)": Decimal("2.40"),
        # The on-demand pool's reserved A100, billed whether it runs or not: $3.673 x 730 h.
        "capacity reservation Standard_NC24ads_A100_v4 × 1 VM(s) (regional)": Decimal("2681.29"),
        # Billed by the GB kept and the operations only: named, unpriced.
        "checkpoint store (storage account spotkubeckptaksprod)": Decimal("0.00"),
    }
    assert "not priced here" in (found["checkpoint store (storage account spotkubeckptaksprod)"].item.note or "")
    # The GPU pools scale from 0: no node, no OS disk at idle.
    assert not [what for what in found if "a100" in what]
    assert "upper bound" in (found["OS disks of pool system (3 node(s) × 128 GiB Premium SSD P10)"].item.note or "")
    assert "no fixed fee" in (found["Log Analytics workspace (Container Insights)"].item.note or "")


def test_the_aks_tier_decides_the_cluster_fee_and_an_unknown_price_is_named(runs: dict[str, StackRun]) -> None:
    run = runs["aks-prod-eastus"]

    def tier(name: str) -> FixedCosts | None:
        return stack_fixed_costs(run.spec, changed(run, AKS_CLUSTER, lambda i: i.update(sku={"name": "Base",
                                                                                              "tier": name})))

    standard = tier("Standard")
    assert standard is not None
    assert lines(standard)["cluster management (Standard tier)"].monthly_usd == Decimal("73.00")  # $0.10 x 730 h
    assert standard.total_usd == Decimal("2879.54")  # 198.25 + the reserved A100
    premium = tier("Premium")
    assert premium is not None and premium.total_usd is None
    assert [line.unpriced_text() for line in premium.unpriced] == [
        "cluster management (Premium tier): no cluster-tier:Premium price in eastus"]


def test_aks_outbound_through_a_managed_nat_gateway_or_a_route_table(runs: dict[str, StackRun]) -> None:
    run = runs["aks-prod-eastus"]

    def outbound(network: dict[str, Any]) -> dict[str, FixedLine]:
        return lines(stack_fixed_costs(run.spec, changed(
            run, AKS_CLUSTER, lambda i: i["networkProfile"].update(network))))

    nat = outbound({"outboundType": "managedNATGateway", "natGatewayProfile": {"managedOutboundIPProfile": {
        "count": 2}}})
    assert nat["managed NAT gateway"].monthly_usd == Decimal("32.85")  # $0.045 x 730 h
    assert nat["NAT gateway public IP × 2"].monthly_usd == Decimal("7.30")
    assert not [what for what in nat if "load balancer" in what]
    routed = outbound({"outboundType": "userDefinedRouting"})
    assert routed["outbound (userDefinedRouting)"].monthly_usd == Decimal("0.00")
    assert "doesn't create" in (routed["outbound (userDefinedRouting)"].item.note or "")


def test_an_ephemeral_os_disk_costs_nothing_and_a_bigger_managed_one_is_billed_by_its_tier(
        runs: dict[str, StackRun]) -> None:
    run = runs["aks-prod-eastus"]
    ephemeral = lines(stack_fixed_costs(run.spec, changed(run, AKS_POOL, lambda i: i.update(osDiskType="Ephemeral"))))
    assert ephemeral["OS disks of pool platform (2 node(s), ephemeral)"].monthly_usd == Decimal("0.00")
    bigger = stack_fixed_costs(run.spec, changed(run, AKS_POOL, lambda i: i.update(osDiskType="Managed",
                                                                                   osDiskSizeGB=200)))
    assert bigger is not None
    (line,) = [line for line in bigger.lines if "pool platform" in line.item.what]
    # 200 GiB is billed as a P15 (256 GiB), which the table has no eastus row for: named, not dropped.
    assert (line.item.price_key, line.item.quantity, line.priced, line.item.note) == (
        "managed-disk:P15", Decimal(2), False, None)


def test_a_gke_stack_counts_the_fee_boot_disks_node_addresses_and_kubeflow_volumes(
        runs: dict[str, StackRun]) -> None:
    run = runs["gke-dev-us-central1"]
    costs = stack_fixed_costs(run.spec, run.registrations)
    found = lines(costs)
    assert {what: line.monthly_usd for what, line in found.items()} == {
        "cluster management fee": Decimal("73.00"),
        "Cloud Logging (workload logs)": Decimal("0.00"),
        "boot disks of pool system (2 × 100 GB pd-balanced)": Decimal("20.00"),
        "external IPv4 addresses of pool system (2 node(s))": Decimal("7.30"),
        "boot disks of pool platform (1 × 100 GB pd-balanced)": Decimal("10.00"),
        "external IPv4 addresses of pool platform (1 node(s))": Decimal("3.65"),
        "MySQL volume (20 GiB, storage class standard-rwo)": Decimal("2.00"),
        "SeaweedFS volume (20 GiB, storage class standard-rwo)": Decimal("2.00"),
    }
    assert costs is not None and costs.total_usd == Decimal("117.95")
    assert "regional cluster" in (found["cluster management fee"].item.note or "")


def test_private_gke_nodes_pay_cloud_nat_per_vm_up_to_its_cap_and_no_node_addresses(
        runs: dict[str, StackRun]) -> None:
    run = runs["gke-prod-europe-west4"]
    found = lines(stack_fixed_costs(run.spec, run.registrations))
    assert found["Cloud NAT gateway (5 VM(s) using it at idle)"].monthly_usd == Decimal("5.11")  # 5 x $0.0014 x 730
    assert found["Cloud NAT external IP × 1"].monthly_usd == Decimal("3.65")
    assert not [what for what in found if what.startswith("external IPv4")]
    # europe-west4's balanced disks at $0.11 a GiB-month: every line priced, so the fixed total is known.
    assert found["boot disks of pool system (3 × 100 GB pd-balanced)"].monthly_usd == Decimal("33.00")
    assert found["MySQL volume (20 GiB, storage class standard-rwo)"].monthly_usd == Decimal("2.20")
    costs = stack_fixed_costs(run.spec, run.registrations)
    assert costs is not None and costs.total_usd == Decimal("141.16")
    assert all(line.priced for line in found.values())

    def scaled(inputs: dict[str, Any]) -> None:
        inputs["autoscaling"]["totalMinNodeCount"] = 20

    capped = lines(stack_fixed_costs(run.spec, changed(run, GKE_POOL, scaled)))
    assert capped["Cloud NAT gateway (120 VMs, above the 32-VM cap)"].monthly_usd == Decimal("32.12")  # $0.044 x 730


def test_a_zonal_gke_cluster_names_the_free_tier_credit_and_still_counts_the_fee(runs: dict[str, StackRun]) -> None:
    run = runs["gke-dev-us-central1"]
    zonal = lines(stack_fixed_costs(run.spec, changed(run, GKE_CLUSTER, lambda i: i.update(
        location="us-central1-a"))))
    fee = zonal["cluster management fee"]
    assert fee.monthly_usd == Decimal("73.00")
    assert "free tier's $74.40 monthly credit covers one zonal or Autopilot cluster per billing account" in (
        fee.item.note or "")


def test_spot_nodes_kept_at_idle_and_an_unknown_storage_class_are_named(runs: dict[str, StackRun]) -> None:
    run = runs["gke-dev-us-central1"]
    spec = run.spec.model_copy(update={"kubeflow": run.spec.kubeflow.model_copy(update={"storage_class": "fast-nvme"})})

    def spot(inputs: dict[str, Any]) -> None:
        inputs["nodeConfig"]["spot"] = True

    found = lines(stack_fixed_costs(spec, changed(run, GKE_POOL, spot)))
    unpriced = sorted(line.unpriced_text() for line in found.values() if not line.priced)
    assert unpriced == [
        "MySQL volume (20 GiB, storage class fast-nvme): no storage-class:fast-nvme price in us-central1",
        "SeaweedFS volume (20 GiB, storage class fast-nvme): no storage-class:fast-nvme price in us-central1",
        "external IPv4 addresses of pool platform (1 node(s)): no external-ip:spot-vm price in us-central1",
        "external IPv4 addresses of pool system (2 node(s)): no external-ip:spot-vm price in us-central1",
    ]


@pytest.mark.parametrize("cloud", sorted(CLOUDS))
def test_every_bundled_fixed_price_has_its_source_and_date(cloud: str) -> None:
    prices = CLOUDS[cloud].fixed_prices
    assert prices is not None
    table = prices()
    assert table.rows and all(row.source.strip() and row.date for row in table.rows)
    assert len({(row.item, row.region) for row in table.rows}) == len(table.rows)


def test_the_cost_json_carries_the_breakdown_and_its_idle_floor_adds_it(runs: dict[str, StackRun]) -> None:
    run = runs["gke-dev-us-central1"]
    priced = dataclasses.replace(price_plan(plan_platform(run.spec)),
                                 fixed=stack_fixed_costs(run.spec, run.registrations))
    cost = json.loads(json.dumps(priced.to_json()))
    assert (cost["total"]["nodesIdleFloor"], cost["total"]["fixedIdleFloor"], cost["total"]["idleFloor"]) == (
        293.51, 117.95, 411.46)
    (fee,) = [line for line in cost["fixed"]["lines"] if line["item"] == "cluster management fee"]
    assert (fee["item"], fee["usd"], fee["per"], fee["monthly"], fee["date"]) == (
        "cluster management fee", 0.1, "hour", 73.0, "2026-11-27")
    assert fee["source"].startswith("cloud.google.com/kubernetes-engine/pricing")
