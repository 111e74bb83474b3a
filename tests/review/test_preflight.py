"""The deploy preflight's shared rules: every rule passes on every shipped stack, and the shared rules
fail, with the file, the key and the fix, on a registration or a stack doctored to break them. Each
cloud's part of the rules is tested in tests/clouds/<cloud>/test_preflight.py."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from preflight_cases import SECRET, doctored, failing, verdicts, with_inputs
from spotkube.clouds import parse_spec
from spotkube.clouds.aks import resources as aks
from spotkube.clouds.gke import resources as gke
from spotkube.components.offline import StackRun
from spotkube.platform import preflight as shapes
from spotkube.platform.project import Project

STACKS = ("aks-dev-uksouth", "aks-prod-eastus", "gke-dev-us-central1", "gke-prod-europe-west4")


@pytest.fixture(scope="module")
def runs(shipped_run: Callable[[str], StackRun]) -> dict[str, StackRun]:
    return {stack: shipped_run(stack) for stack in STACKS}


@pytest.mark.parametrize("stack", STACKS)
def test_every_rule_passes_on_every_shipped_stack(runs: dict[str, StackRun], stack: str) -> None:
    checks = verdicts(runs[stack])
    assert set(checks) == {"credentials", "data-plane-rights", "api-server-reachable", "node-egress",
                           "serial-operations", "control-plane-replacement", "retry-defaults"}
    assert all(v.ok for v in checks.values()), {k: v.detail for k, v in checks.items() if not v.ok}


def test_each_cloud_s_rows_speak_of_its_own_pools_and_groups(runs: dict[str, StackRun]) -> None:
    """A GKE row never mentions the AKS system pool; an AKS row never says "0 admin group(s)"."""
    for stack in ("gke-dev-us-central1", "gke-prod-europe-west4"):
        details = " ".join(v.detail for v in verdicts(runs[stack]).values())
        assert "AKS" not in details, stack
        assert verdicts(runs[stack])["control-plane-replacement"].detail == (
            "control-plane pools are replaced create-first under a new name")
    rows = verdicts(runs["aks-prod-eastus"])
    assert rows["data-plane-rights"].detail.startswith("the deployer is an RBAC Cluster Admin; Kubernetes objects wait")
    assert "the AKS system pool's fixed fields are refused" in rows["control-plane-replacement"].detail
    groups = runs["aks-prod-eastus"].spec.cluster.model_copy(update={"admin_group_object_ids": ("g1", "g2")})
    spec = runs["aks-prod-eastus"].spec.model_copy(update={"cluster": groups})
    granted = [dataclasses.replace(r, inputs={**r.inputs, "principalId": principal}, name=f"{r.name}-{principal}")
               for r in runs["aks-prod-eastus"].registrations if r.type == aks.ROLE_ASSIGNMENT_TYPE
               for principal in ("g1", "g2")]
    two = verdicts(runs["aks-prod-eastus"], [*runs["aks-prod-eastus"].registrations, *granted], spec)
    assert two["data-plane-rights"].detail.startswith("the deployer and 2 admin groups are RBAC Cluster Admins")


def test_a_device_code_kubeconfig_fails_the_credentials_rule(runs: dict[str, StackRun]) -> None:
    from spotkube.clouds.aks.offline import USER_KUBECONFIG as AKS_USER_KUBECONFIG

    run = runs["aks-dev-uksouth"]
    regs = doctored(run, shapes.KUBERNETES_PROVIDER,
                    lambda r: with_inputs(r, kubeconfig={SECRET: "1b47061264138c4ac30d75fd1eb44270",
                                                         "value": AKS_USER_KUBECONFIG}))
    failing(verdicts(run, regs), "credentials", "kubelogin --login devicecode", "spotkube:cluster.deployer.login")


def test_the_gke_plugin_signs_in_as_gcloud_writes_it(runs: dict[str, StackRun]) -> None:
    """Through the DNS endpoint the plugin takes gcloud's credentials (gcloud refuses ADC there);
    either way nobody is prompted, and the verdict says which."""
    run = runs["gke-dev-us-central1"]
    (provider,) = [r for r in run.registrations if r.type == shapes.KUBERNETES_PROVIDER]
    config = yaml.safe_load(provider.inputs["kubeconfig"]["value"])
    assert "args" not in config["users"][0]["user"]["exec"]
    verdict = verdicts(run, run.registrations)["credentials"]
    assert verdict.ok and "gcloud's credentials" in verdict.detail


def test_a_control_plane_pool_deleted_first_fails_the_replacement_rule(runs: dict[str, StackRun]) -> None:
    pools = (("aks-dev-uksouth", aks.AGENT_POOL_TYPE), ("gke-dev-us-central1", gke.NODE_POOL_TYPE))
    for stack, token in pools:
        run = runs[stack]
        regs = doctored(run, token, lambda r: dataclasses.replace(r, delete_before_replace=True))
        failing(verdicts(run, regs), "control-plane-replacement", "platform pool",
                 "is deleted before its replacement exists")


def test_weaker_retries_fail_the_retry_rule(runs: dict[str, StackRun]) -> None:
    run = runs["gke-dev-us-central1"]
    kubeflow = run.spec.kubeflow.model_copy(update={"eviction_retry_limit": 1, "failure_retry_limit": 0})
    weaker = verdicts(run, spec=run.spec.model_copy(update={"kubeflow": kubeflow}))
    failing(weaker, "retry-defaults", "spotkube:kubeflow.evictionRetryLimit",
            "a pod that never started (Error) is retried once, KFP's defaults retry it 2 times")


def test_the_retry_rule_says_what_each_failure_gets(runs: dict[str, StackRun]) -> None:
    verdict = verdicts(runs["aks-dev-uksouth"])["retry-defaults"]
    assert verdict.ok
    assert verdict.detail == ("evictions retried up to 10 times, failures 1, other Argo errors 2 (KFP 2.17.0: "
                              "errors only, 2)")


def test_a_doctored_stack_file_fails_the_plan_naming_the_file_key_and_fix(
    project_with_stack: Callable[[str, dict[str, Any]], Project],
) -> None:
    """The whole path: a stack file whose private API server its internet deployer can't reach."""
    import subprocess
    import sys

    project = project_with_stack("aks-prod-test", {
        "cloud": "aks", "environment": "prod", "region": "eastus",
        "systemPool": {"min": 3, "max": 5}, "kubeflow": {"enabled": False},
        "cluster": {"deployer": {"objectId": "c0ffee00-0000-4000-8000-000000000001",
                                 "principalType": "ServicePrincipal"}},
    })
    spotkube = str(Path(sys.executable).with_name("spotkube"))
    result = subprocess.run([spotkube, "plan", "--stack", "aks-prod-test",
                             "--project", str(project.root), "--format", "markdown"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert "stacks/Pulumi.aks-prod-test.yaml: the API server is private (spotkube:cluster.private)" in result.stderr
    assert "spotkube:cluster.deployer.network: cluster-network" in result.stderr
    assert "| the declared deployer can reach the API server | **FAIL** |" in result.stdout


def test_parse_spec_accepts_the_deployer_settings_the_rules_read() -> None:
    spec = parse_spec({"cloud": "aks", "environment": "dev", "region": "uksouth", "cluster": {
        "authorizedIpRanges": ["198.51.100.0/24"], "deployer": {"egressRanges": ["192.0.2.7/32"]}}}, "t")
    assert spec.cluster.api_server_ranges(True) == ("198.51.100.0/24", "192.0.2.7/32")
    assert spec.cluster.api_server_ranges(False) == ()
