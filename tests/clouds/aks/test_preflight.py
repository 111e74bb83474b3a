"""AKS's part of the deploy preflight (`spotkube.clouds.aks.preflight`): each rule fails, with the stack
file, the key and the fix, on a shipped AKS stack's registrations doctored to break it."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import pytest

from preflight_cases import doctored, failing, verdicts, with_inputs
from spotkube.clouds.aks import resources as aks
from spotkube.components.offline import StackRun
from spotkube.platform import preflight as shapes


@pytest.fixture(scope="module")
def runs(shipped_run: Callable[[str], StackRun]) -> dict[str, StackRun]:
    return {stack: shipped_run(stack) for stack in ("aks-dev-uksouth", "aks-prod-eastus")}


def test_a_missing_grant_or_an_impatient_provider_fails_the_rights_rule(runs: dict[str, StackRun]) -> None:
    run = runs["aks-prod-eastus"]
    no_grant = doctored(run, aks.ROLE_ASSIGNMENT_TYPE, lambda r: None)
    failing(verdicts(run, no_grant), "data-plane-rights", "the deployer gets no Azure Kubernetes Service RBAC "
             "Cluster Admin role", "403")
    impatient = doctored(run, shapes.KUBERNETES_PROVIDER, lambda r: dataclasses.replace(r, dependencies=()))
    failing(verdicts(run, impatient), "data-plane-rights", "does not wait for the deployer's role assignment")


def test_an_admin_group_without_a_grant_fails_the_rights_rule(runs: dict[str, StackRun]) -> None:
    run = runs["aks-prod-eastus"]
    group = "3f2b1c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d"
    spec = run.spec.model_copy(update={"cluster": run.spec.cluster.model_copy(
        update={"admin_group_object_ids": (group,)})})
    failing(verdicts(run, spec=spec), "data-plane-rights", f"admin group {group}")


def test_a_private_aks_api_server_with_an_internet_deployer_fails_reachability(runs: dict[str, StackRun]) -> None:
    run = runs["aks-prod-eastus"]
    regs = doctored(run, aks.CLUSTER_TYPE,
                    lambda r: with_inputs(r, apiServerAccessProfile={"enablePrivateCluster": True}))
    failing(verdicts(run, regs), "api-server-reachable", "the API server is private",
             "spotkube:cluster.deployer.network: cluster-network")


def test_authorized_ranges_without_the_deployers_egress_fail_reachability(runs: dict[str, StackRun]) -> None:
    run = runs["aks-dev-uksouth"]
    regs = doctored(run, aks.CLUSTER_TYPE,
                    lambda r: with_inputs(r, apiServerAccessProfile={"authorizedIPRanges": ["198.51.100.0/24"]}))
    failing(verdicts(run, regs), "api-server-reachable", "spotkube:cluster.deployer.egressRanges")
    declared = run.spec.model_copy(update={"cluster": run.spec.cluster.model_copy(update={
        "deployer": run.spec.cluster.deployer.model_copy(update={"egress_ranges": ("192.0.2.7/32",)})})})
    failing(verdicts(run, regs, declared), "api-server-reachable", "192.0.2.7/32 is not among",
             "spotkube:cluster.authorizedIpRanges")


def test_aks_pools_that_may_run_at_once_fail_the_concurrency_rule(runs: dict[str, StackRun]) -> None:
    run = runs["aks-dev-uksouth"]
    cluster = next(r for r in run.registrations if r.type == aks.CLUSTER_TYPE)
    regs = doctored(run, aks.AGENT_POOL_TYPE, lambda r: dataclasses.replace(r, dependencies=(cluster.urn,)))
    failing(verdicts(run, regs), "serial-operations", "may run at once", "409 OperationNotAllowed")


def test_an_aks_system_pool_whose_fixed_fields_are_sent_fails_the_replacement_rule(runs: dict[str, StackRun]) -> None:
    run = runs["aks-prod-eastus"]
    regs = doctored(run, aks.CLUSTER_TYPE,
                    lambda r: dataclasses.replace(r, ignore_changes=("agentPoolProfiles[0].count",)))
    failing(verdicts(run, regs), "control-plane-replacement", "vmSize, availabilityZones, osType")
