"""GPU pools kept from disruptive upgrades: windows, busy periods and pool upgrade settings, as each cloud
takes them, and each pool's upgrade exposure in the plan.

The shipped stacks are planned offline (the real program under mocks); the rules are checked through
`parse_spec` with the messages a stack file gets.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from spotkube.clouds import parse_spec, plan_platform
from spotkube.clouds.aks import resources as aks
from spotkube.clouds.gke import resources as gke
from spotkube.components.offline import StackRun, run_stack
from spotkube.platform.errors import SpecError
from spotkube.platform.project import Project
from spotkube.platform.spec import MaintenanceSettings, MaintenanceWindow
from spotkube.review.program_review import stack_document

REPO = Path(__file__).resolve().parents[2]
AKS_BASE: dict[str, Any] = {"cloud": "aks", "environment": "dev", "region": "uksouth",
                            "gpuPools": [{"name": "t4spot", "machine": "Standard_NC4as_T4_v3"},
                                         {"name": "t4od", "machine": "Standard_NC4as_T4_v3", "capacity": "on-demand"}]}
GKE_BASE: dict[str, Any] = {"cloud": "gke", "environment": "dev", "region": "us-central1",
                            "cluster": {"project": "spotkube-dev-example"},
                            "gpuPools": [{"name": "l4-spot", "machine": "g2-standard-8"}]}


@pytest.fixture(scope="module")
def runs(repo_project: Project, shipped_run: Callable[[str], StackRun]) -> dict[str, StackRun]:
    return {stack: shipped_run(stack) for stack in repo_project.stacks()}


def test_every_gpu_pool_of_every_shipped_stack_is_upgraded_only_in_a_window(runs: dict[str, StackRun]) -> None:
    assert runs, "the shipped stacks"
    for stack, run in runs.items():
        document = stack_document(run)
        gpu = [u for u in document.upgrades if u.gpu]
        assert gpu, stack
        assert all(u.window for u in gpu), stack
        assert not document.advisories, stack


def test_prod_stacks_declare_their_window_in_the_stack_file(repo_project: Project) -> None:
    prod = [s for s in repo_project.stacks() if "-prod-" in s]
    assert prod
    for stack in prod:
        config = yaml.safe_load(repo_project.stack_file(stack).read_text())["config"]
        maintenance = config["spotkube:cluster"]["maintenance"]
        assert maintenance["window"]["days"] and not maintenance.get("anytime"), stack


def test_the_posture_shows_each_gpu_pool_s_exposure(runs: dict[str, StackRun]) -> None:
    aks_dev = {u.pool: u.text() for u in stack_document(runs["aks-dev-uksouth"]).upgrades}
    assert aks_dev["t4spot"] == ("node image updates only in Sat 02:00–06:00 UTC; each node is cordoned and gets an "
                                 "eviction notice, with no drain and no surge node (AKS's upgrade of a spot pool), "
                                 "then Argo retries its steps")
    aks_prod = {u.pool: u.text() for u in stack_document(runs["aks-prod-eastus"]).upgrades}
    assert aks_prod["a100ondemand"] == ("node image updates only in Sat 02:00–06:00 UTC-05:00; drain waits 60 min; "
                                        "1 surge node(s); a node it can't drain is cordoned and kept")
    gke_prod = {u.pool: u.text() for u in stack_document(runs["gke-prod-europe-west4"]).upgrades}
    assert gke_prod["a100-spot"] == ("node upgrades and image updates only in Sat, Sun 00:00–06:00 UTC (declared as "
                                     "Sat, Sun 01:00–07:00 UTC+01:00); drain waits up to 60 min (GKE's limit for "
                                     "disruption budgets); 1 surge node(s), 0 unavailable")


def test_the_plan_shows_a_gke_window_in_utc_and_as_declared(project_with_stack: Any) -> None:
    """GKE counts a window's days in UTC, so the plan shows the window GKE applies and the one the
    stack declared; a window declared in UTC, or on AKS (which takes the offset), is shown once."""
    local = {**GKE_BASE, "kubeflow": {"enabled": False}, "cluster": {
        "project": "spotkube-dev-example",
        "maintenance": {"window": {"days": ["Saturday", "Sunday"], "start": "00:30", "hours": 6,
                                   "utcOffset": "+01:00"}}}}
    (exposure,) = stack_document(run_stack(project_with_stack("gke-dev-x", local), "gke-dev-x")).upgrades
    assert exposure.text().startswith("node upgrades and image updates only in Fri, Sat 23:30–05:30 UTC (declared "
                                      "as Sat, Sun 00:30–06:30 UTC+01:00);")
    assert (exposure.to_json()["window"], exposure.to_json()["declaredWindow"]) == (
        "Fri, Sat 23:30–05:30 UTC", "Sat, Sun 00:30–06:30 UTC+01:00")
    utc = {**GKE_BASE, "kubeflow": {"enabled": False}}
    (exposure,) = stack_document(run_stack(project_with_stack("gke-dev-y", utc), "gke-dev-y")).upgrades
    assert exposure.window == "Sat, Sun 02:00–08:00 UTC" and exposure.declared is None
    assert "declared" not in exposure.text()


def test_aks_registers_both_schedules_and_gpu_upgrade_settings(runs: dict[str, StackRun]) -> None:
    run = runs["aks-prod-eastus"]
    configs = {r.inputs["configName"]: r for r in run.of_type(aks.MAINTENANCE_TYPE)}
    assert set(configs) == {"aksManagedAutoUpgradeSchedule", "aksManagedNodeOSUpgradeSchedule"}
    window = configs["aksManagedNodeOSUpgradeSchedule"].inputs["maintenanceWindow"]
    assert window == {"schedule": {"weekly": {"dayOfWeek": "Saturday", "intervalWeeks": 1}}, "startTime": "02:00",
                      "durationHours": 4, "utcOffset": "-05:00"}
    pools = {r.inputs["agentPoolName"]: r.inputs for r in run.of_type(aks.AGENT_POOL_TYPE)}
    assert pools["a100ondemand"]["upgradeSettings"] == {"maxSurge": "1", "maxUnavailable": "0",
                                                        "drainTimeoutInMinutes": 60, "nodeSoakDurationInMinutes": 0,
                                                        "undrainableNodeBehavior": "Cordon"}
    assert "upgradeSettings" not in pools["a100spot"], "AKS refuses max surge on spot pools"
    (cluster,) = run.of_type(aks.CLUSTER_TYPE)
    assert cluster.inputs["autoUpgradeProfile"]["nodeOSUpgradeChannel"] == "NodeImage"


def test_aks_busy_periods_become_not_allowed_dates_and_a_channel_of_none_drops_its_schedule() -> None:
    maintenance = MaintenanceSettings.model_validate({
        "window": {"days": ["Sunday"], "start": "22:00", "hours": 6},
        "busyPeriods": [{"name": "year-end", "start": "2026-12-14", "end": "2027-01-04"}]})
    configs = aks.maintenance_configurations(maintenance, "none")
    assert list(configs) == ["aksManagedNodeOSUpgradeSchedule"]
    assert configs["aksManagedNodeOSUpgradeSchedule"]["not_allowed_dates"] == [
        {"start": "2026-12-14", "end": "2027-01-04"}]
    assert aks.maintenance_configurations(MaintenanceSettings(anytime=True), "stable") == {}


def test_gke_window_and_busy_periods_become_its_maintenance_policy() -> None:
    maintenance = MaintenanceSettings.model_validate({
        "window": {"days": ["Saturday", "Sunday"], "start": "22:00", "hours": 6, "utcOffset": "+01:00"},
        "busyPeriods": [{"name": "year-end", "start": "2026-12-14", "end": "2027-01-04"}]})
    assert gke.maintenance_policy(maintenance) == {
        "recurring_window": {"start_time": "2025-01-04T21:00:00Z", "end_time": "2025-01-05T03:00:00Z",
                             "recurrence": "FREQ=WEEKLY;BYDAY=SA,SU"},
        "maintenance_exclusions": [{"exclusion_name": "year-end", "start_time": "2026-12-14T00:00:00Z",
                                    "end_time": "2027-01-05T00:00:00Z",
                                    "exclusion_options": {"scope": "NO_MINOR_OR_NODE_UPGRADES"}}],
    }
    assert gke.maintenance_policy(MaintenanceSettings(anytime=True)) is None


def test_gke_gpu_pools_surge_one_node_unless_told_blue_green() -> None:
    spec = parse_spec(GKE_BASE, "gke")
    (gpu,) = plan_platform(spec).gpu_pools
    assert gke.upgrade_settings(gpu) == {"strategy": "SURGE", "max_surge": 1, "max_unavailable": 0}
    blue = parse_spec({**GKE_BASE, "gpuPools": [{"name": "l4-spot", "machine": "g2-standard-8",
                                                  "upgrade": {"strategy": "blue-green", "soakMinutes": 60}}]}, "gke")
    (gpu,) = plan_platform(blue).gpu_pools
    assert gke.upgrade_settings(gpu) == {"strategy": "BLUE_GREEN", "blue_green_settings": {
        "node_pool_soak_duration": "3600s", "standard_rollout_policy": {"batch_node_count": 1,
                                                                        "batch_soak_duration": "0s"}}}


def test_the_cloud_s_default_window_fills_a_stack_that_declares_none() -> None:
    assert parse_spec(AKS_BASE, "aks").cluster.maintenance.window == aks.DEFAULT_WINDOW
    assert parse_spec(GKE_BASE, "gke").cluster.maintenance.window == gke.DEFAULT_WINDOW
    anytime = parse_spec({**AKS_BASE, "cluster": {"maintenance": {"anytime": True}}}, "aks")
    assert anytime.cluster.maintenance.window is None


def _refused(values: dict[str, Any]) -> str:
    with pytest.raises(SpecError) as caught:
        parse_spec(values, "stacks/Pulumi.x.yaml")
    return str(caught.value)


@pytest.mark.parametrize(("values", "message"), [
    ({**AKS_BASE, "cluster": {"maintenance": {"window": {"days": ["Saturday", "Sunday"], "start": "02:00",
                                                         "hours": 4}}}},
     "spotkube:cluster.maintenance.window.days: ['Saturday', 'Sunday']: an AKS maintenance window is weekly on one "
     "day"),
    ({**AKS_BASE, "gpuPools": [{"name": "t4spot", "machine": "Standard_NC4as_T4_v3", "upgrade": {"maxSurge": "1"}}]},
     "spotkube:gpuPools[0].upgrade.maxSurge: AKS refuses surge settings on a spot pool (\"Spot pools can't set max "
     "surge\"), so spotkube sends a spot pool no upgrade settings"),
    ({**AKS_BASE, "gpuPools": [{"name": "t4od", "machine": "Standard_NC4as_T4_v3", "capacity": "on-demand",
                                "upgrade": {"strategy": "blue-green"}}]},
     "spotkube:gpuPools[0].upgrade.strategy: 'blue-green' is a GKE setting; remove it from an AKS stack"),
    ({**AKS_BASE, "gpuPools": [{"name": "t4od", "machine": "Standard_NC4as_T4_v3", "capacity": "on-demand",
                                "upgrade": {"soakMinutes": 45}}]},
     "spotkube:gpuPools[0].upgrade.soakMinutes: 45 is not accepted; use a whole number from 0 to 30"),
    ({**GKE_BASE, "cluster": {"project": "spotkube-dev-example",
                              "maintenance": {"window": {"days": ["Saturday"], "start": "02:00", "hours": 8}}}},
     "spotkube:cluster.maintenance.window: 1 day(s) of 8 hours is less than the 12 hours a week GKE needs"),
    ({**GKE_BASE, "gpuPools": [{"name": "l4-spot", "machine": "g2-standard-8",
                                "upgrade": {"drainTimeoutMinutes": 60}}]},
     "spotkube:gpuPools[0].upgrade.drainTimeoutMinutes: 60 is an AKS setting"),
    ({**GKE_BASE, "gpuPools": [{"name": "l4-spot", "machine": "g2-standard-8", "upgrade": {"maxSurge": "10%"}}]},
     "spotkube:gpuPools[0].upgrade.maxSurge: '10%' is text; use a whole number"),
    ({**GKE_BASE, "cluster": {"project": "spotkube-dev-example", "maintenance": {"busyPeriods": [
        {"name": "q4", "start": "2026-12-20", "end": "2026-12-01"}]}}},
     "end 2026-12-01 is before start 2026-12-20"),
    ({**GKE_BASE, "cluster": {"project": "spotkube-dev-example", "maintenance": {
        "anytime": True, "window": {"days": ["Saturday", "Sunday"], "start": "02:00", "hours": 6}}}},
     "anytime: true declares no window and no busy periods"),
    ({**AKS_BASE, "gpuPools": [{"name": "t4od", "machine": "Standard_NC4as_T4_v3", "capacity": "on-demand",
                                "upgrade": {"drainTimeoutMinutes": 4}}]},
     "spotkube:gpuPools[0].upgrade.drainTimeoutMinutes: 4 is not accepted; use a whole number from 5 to 1440"),
    ({**AKS_BASE, "gpuPools": [{"name": "t4od", "machine": "Standard_NC4as_T4_v3", "capacity": "on-demand",
                                "upgrade": {"maxSurge": "0"}}]},
     "spotkube:gpuPools[0].upgrade.maxSurge: maxSurge '0' with maxUnavailable '0' replaces no node at all, which AKS "
     "refuses; set maxSurge above 0"),
    ({**AKS_BASE, "gpuPools": [{"name": "t4od", "machine": "Standard_NC4as_T4_v3", "capacity": "on-demand",
                                "upgrade": {"maxSurge": "0%", "maxUnavailable": "0"}}]},
     "spotkube:gpuPools[0].upgrade.maxSurge: maxSurge '0%' with maxUnavailable '0' replaces no node at all"),
    ({**GKE_BASE, "gpuPools": [{"name": "l4-spot", "machine": "g2-standard-8", "upgrade": {"maxSurge": 0}}]},
     "spotkube:gpuPools[0].upgrade.maxSurge: maxSurge 0 with maxUnavailable 0 replaces no node at all, which GKE "
     "refuses"),
    ({**GKE_BASE, "spotPools": [{"name": "cpu", "machine": "e2-standard-8",
                                 "upgrade": {"maxSurge": 0, "maxUnavailable": 0}}]},
     "spotkube:spotPools[0].upgrade.maxSurge: maxSurge 0 with maxUnavailable 0 replaces no node at all, which GKE "
     "refuses"),
], ids=["aks-two-days", "aks-spot-surge", "aks-strategy", "aks-long-soak", "gke-short-window", "gke-drain-timeout",
        "gke-percent", "busy-reversed", "anytime-and-window", "aks-short-drain", "aks-zero-surge-gpu-default",
        "aks-zero-percent", "gke-zero-surge-gpu-default", "gke-zero-both"])
def test_upgrade_settings_a_cloud_can_t_take_are_refused_with_the_key(values: dict[str, Any], message: str) -> None:
    assert message in _refused(values)


@pytest.mark.parametrize("values", [
    {**AKS_BASE, "gpuPools": [{"name": "t4od", "machine": "Standard_NC4as_T4_v3", "capacity": "on-demand",
                               "upgrade": {"maxSurge": "0", "maxUnavailable": "1", "drainTimeoutMinutes": 5}}]},
    {**GKE_BASE, "gpuPools": [{"name": "l4-spot", "machine": "g2-standard-8",
                               "upgrade": {"maxSurge": 0, "maxUnavailable": 1}}]},
    {**GKE_BASE, "spotPools": [{"name": "cpu", "machine": "e2-standard-8", "upgrade": {"maxUnavailable": 0}}]},
], ids=["aks-unavailable-instead", "gke-unavailable-instead", "gke-default-surge"])
def test_an_upgrade_that_replaces_nodes_one_way_or_the_other_is_accepted(values: dict[str, Any]) -> None:
    parse_spec(values, "stacks/Pulumi.x.yaml")


def test_a_window_is_at_least_four_hours_on_both_clouds() -> None:
    with pytest.raises(ValueError, match="greater than or equal to 4"):
        MaintenanceWindow(days=("Saturday",), start="02:00", hours=3)


def _quota_need(project_with_stack: Any, stack: str, values: dict[str, Any]) -> dict[str, tuple[int, int]]:
    """The plan's quota need per quota title: (full scale, surge)."""
    run = run_stack(project_with_stack(stack, values), stack)
    quota = stack_document(run).to_json()["quota"]
    return {need["title"]: (need["fullScale"], need["surge"]) for need in quota["needs"]}


def test_the_quota_counts_each_pool_s_registered_surge(project_with_stack: Any) -> None:
    """Surge nodes count against quota while a pool upgrades: the plan counts what the pool registers
    (its `upgrade.maxSurge`, a blue-green pool's whole size), not the cloud's default."""
    deployer = {"deployer": {"objectId": "c0ffee00-0000-4000-8000-000000000001", "principalType": "ServicePrincipal"}}
    a100 = {"name": "a100od", "machine": "Standard_NC24ads_A100_v4", "capacity": "on-demand", "min": 0, "max": 8}
    aks_values = {"cloud": "aks", "environment": "dev", "region": "eastus", "cluster": deployer,
                  "kubeflow": {"enabled": False}, "gpuPools": [{**a100, "upgrade": {"maxSurge": "3"}}]}
    needs = _quota_need(project_with_stack, "aks-dev-surge", aks_values)
    assert needs["standardNCADSA100v4Family vCPUs"] == (8 * 24, 3 * 24)
    by_default = _quota_need(project_with_stack, "aks-dev-surge", {**aks_values, "gpuPools": [a100]})
    assert by_default["standardNCADSA100v4Family vCPUs"] == (8 * 24, 1 * 24), "a GPU pool's own default: 1 node"
    l4 = {"name": "l4-od", "machine": "g2-standard-8", "capacity": "on-demand", "min": 0, "max": 5}
    gke_values = {**GKE_BASE, "kubeflow": {"enabled": False},
                  "gpuPools": [{**l4, "upgrade": {"strategy": "blue-green", "soakMinutes": 60}}]}
    blue = _quota_need(project_with_stack, "gke-dev-surge", gke_values)
    assert blue["nvidia-l4 GPUs"] == (5, 5), "blue-green brings up a whole new pool"
