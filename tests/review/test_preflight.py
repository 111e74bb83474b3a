"""The deploy preflight: every rule passes on every shipped stack and fails, with the file, the key and
the fix, on a registration or a stack doctored to break it."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from spotkube.cli.offline import Registration, StackRun, run_stack
from spotkube.clouds import parse_spec
from spotkube.platform.project import Project, find_project
from spotkube.review import preflight

REPO = Path(__file__).resolve().parents[2]
STACKS = ("aks-dev-uksouth", "aks-prod-eastus", "gke-dev-us-central1", "gke-prod-europe-west4")
SECRET = preflight.SECRET_SIGNATURE


@pytest.fixture(scope="module")
def runs() -> dict[str, StackRun]:
    project = find_project(REPO)
    return {stack: run_stack(project, stack) for stack in STACKS}


def verdicts(run: StackRun, registrations: list[Registration] | None = None, spec: Any = None) -> dict[str, Any]:
    deployment = preflight.Deployment(registrations if registrations is not None else run.registrations,
                                      run.invokes, spec or run.spec, run.source)
    return {v.rule: v for v in preflight.preflight(deployment)}


def doctored(run: StackRun, type_token: str, change: Callable[[Registration], Registration | None],
             name: str | None = None) -> list[Registration]:
    """The run's registrations with each matching one changed (or dropped, when `change` gives None)."""
    out = []
    for r in run.registrations:
        if r.type == type_token and (name is None or r.name == name):
            changed = change(r)
            if changed is not None:
                out.append(changed)
        else:
            out.append(r)
    return out


def with_inputs(r: Registration, **inputs: Any) -> Registration:
    return dataclasses.replace(r, inputs={**r.inputs, **inputs})


@pytest.mark.parametrize("stack", STACKS)
def test_every_rule_passes_on_every_shipped_stack(runs: dict[str, StackRun], stack: str) -> None:
    checks = verdicts(runs[stack])
    assert set(checks) == {"credentials", "data-plane-rights", "api-server-reachable", "node-egress",
                           "serial-operations", "control-plane-replacement", "retry-defaults"}
    assert all(v.ok for v in checks.values()), {k: v.detail for k, v in checks.items() if not v.ok}


def _failing(checks: dict[str, Any], rule: str, *fragments: str) -> None:
    verdict = checks[rule]
    assert not verdict.ok
    assert verdict.detail.startswith("stacks/Pulumi."), "a failure names the stack file"
    for fragment in fragments:
        assert fragment in verdict.detail


def test_a_device_code_kubeconfig_fails_the_credentials_rule(runs: dict[str, StackRun]) -> None:
    from spotkube.cli.offline import AKS_USER_KUBECONFIG

    run = runs["aks-dev-uksouth"]
    regs = doctored(run, preflight.KUBERNETES_PROVIDER,
                    lambda r: with_inputs(r, kubeconfig={SECRET: "1b47061264138c4ac30d75fd1eb44270",
                                                         "value": AKS_USER_KUBECONFIG}))
    _failing(verdicts(run, regs), "credentials", "kubelogin --login devicecode", "spotkube:cluster.deployer.login")


def test_the_gke_plugin_signs_in_as_gcloud_writes_it(runs: dict[str, StackRun]) -> None:
    """Through the DNS endpoint the plugin takes gcloud's credentials (gcloud refuses ADC there);
    either way nobody is prompted, and the verdict says which."""
    run = runs["gke-dev-us-central1"]
    (provider,) = [r for r in run.registrations if r.type == preflight.KUBERNETES_PROVIDER]
    config = yaml.safe_load(provider.inputs["kubeconfig"]["value"])
    assert "args" not in config["users"][0]["user"]["exec"]
    verdict = verdicts(run, run.registrations)["credentials"]
    assert verdict.ok and "gcloud's credentials" in verdict.detail


def test_a_missing_grant_or_an_impatient_provider_fails_the_rights_rule(runs: dict[str, StackRun]) -> None:
    run = runs["aks-prod-eastus"]
    no_grant = doctored(run, preflight.ROLE_ASSIGNMENT, lambda r: None)
    _failing(verdicts(run, no_grant), "data-plane-rights", "the deployer gets no Azure Kubernetes Service RBAC "
             "Cluster Admin role", "403")
    impatient = doctored(run, preflight.KUBERNETES_PROVIDER, lambda r: dataclasses.replace(r, dependencies=()))
    _failing(verdicts(run, impatient), "data-plane-rights", "does not wait for the deployer's role assignment")


def test_an_admin_group_without_a_grant_fails_the_rights_rule(runs: dict[str, StackRun]) -> None:
    run = runs["aks-prod-eastus"]
    group = "3f2b1c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d"
    spec = run.spec.model_copy(update={"cluster": run.spec.cluster.model_copy(
        update={"admin_group_object_ids": (group,)})})
    _failing(verdicts(run, spec=spec), "data-plane-rights", f"admin group {group}")


def test_a_private_aks_api_server_with_an_internet_deployer_fails_reachability(runs: dict[str, StackRun]) -> None:
    run = runs["aks-prod-eastus"]
    regs = doctored(run, preflight.AKS_CLUSTER,
                    lambda r: with_inputs(r, apiServerAccessProfile={"enablePrivateCluster": True}))
    _failing(verdicts(run, regs), "api-server-reachable", "the API server is private",
             "spotkube:cluster.deployer.network: cluster-network")


def test_authorized_ranges_without_the_deployers_egress_fail_reachability(runs: dict[str, StackRun]) -> None:
    run = runs["aks-dev-uksouth"]
    regs = doctored(run, preflight.AKS_CLUSTER,
                    lambda r: with_inputs(r, apiServerAccessProfile={"authorizedIPRanges": ["198.51.100.0/24"]}))
    _failing(verdicts(run, regs), "api-server-reachable", "spotkube:cluster.deployer.egressRanges")
    declared = run.spec.model_copy(update={"cluster": run.spec.cluster.model_copy(update={
        "deployer": run.spec.cluster.deployer.model_copy(update={"egress_ranges": ("192.0.2.7/32",)})})})
    _failing(verdicts(run, regs, declared), "api-server-reachable", "192.0.2.7/32 is not among",
             "spotkube:cluster.authorizedIpRanges")


def test_gke_without_the_dns_endpoint_behind_authorized_networks_fails_reachability(runs: dict[str, StackRun]) -> None:
    run = runs["gke-prod-europe-west4"]
    regs = doctored(run, preflight.GKE_CLUSTER, lambda r: with_inputs(r, controlPlaneEndpointsConfig=None))
    _failing(verdicts(run, regs), "api-server-reachable", "spotkube:cluster.dnsEndpoint")


def test_private_gke_nodes_without_nat_fail_the_egress_rule(runs: dict[str, StackRun]) -> None:
    run = runs["gke-prod-europe-west4"]
    regs = doctored(run, preflight.ROUTER_NAT, lambda r: None)
    _failing(verdicts(run, regs), "node-egress", "ghcr.io", "quay.io", "Cloud NAT")


def test_aks_pools_that_may_run_at_once_fail_the_concurrency_rule(runs: dict[str, StackRun]) -> None:
    run = runs["aks-dev-uksouth"]
    cluster = next(r for r in run.registrations if r.type == preflight.AKS_CLUSTER)
    regs = doctored(run, preflight.AKS_AGENT_POOL, lambda r: dataclasses.replace(r, dependencies=(cluster.urn,)))
    _failing(verdicts(run, regs), "serial-operations", "may run at once", "409 OperationNotAllowed")


def test_a_control_plane_pool_deleted_first_fails_the_replacement_rule(runs: dict[str, StackRun]) -> None:
    pools = (("aks-dev-uksouth", preflight.AKS_AGENT_POOL), ("gke-dev-us-central1", preflight.GKE_NODE_POOL))
    for stack, token in pools:
        run = runs[stack]
        regs = doctored(run, token, lambda r: dataclasses.replace(r, delete_before_replace=True))
        _failing(verdicts(run, regs), "control-plane-replacement", "platform pool",
                 "is deleted before its replacement exists")


def test_an_aks_system_pool_whose_fixed_fields_are_sent_fails_the_replacement_rule(runs: dict[str, StackRun]) -> None:
    run = runs["aks-prod-eastus"]
    regs = doctored(run, preflight.AKS_CLUSTER,
                    lambda r: dataclasses.replace(r, ignore_changes=("agentPoolProfiles[0].count",)))
    _failing(verdicts(run, regs), "control-plane-replacement", "vmSize, availabilityZones, osType")


def test_weaker_retries_fail_the_retry_rule(runs: dict[str, StackRun], monkeypatch: pytest.MonkeyPatch) -> None:
    from spotkube.platform.addons import kfp_transforms

    run = runs["gke-dev-us-central1"]
    monkeypatch.setattr(kfp_transforms, "retry_defaults_problem", lambda settings: "limit 1 is below KFP's 2")
    _failing(verdicts(run), "retry-defaults", "spotkube:kubeflow.retryLimit", "limit 1 is below KFP's 2")


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
