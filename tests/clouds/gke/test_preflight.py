"""GKE's part of the deploy preflight (`spotkube.clouds.gke.preflight`): each rule fails, with the stack
file, the key and the fix, on a shipped GKE stack's registrations doctored to break it."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from preflight_cases import doctored, failing, verdicts, with_inputs
from spotkube.clouds.gke import resources as gke
from spotkube.components.offline import StackRun


@pytest.fixture(scope="module")
def runs(shipped_run: Callable[[str], StackRun]) -> dict[str, StackRun]:
    return {stack: shipped_run(stack) for stack in ("gke-dev-us-central1", "gke-prod-europe-west4")}


def test_gke_without_the_dns_endpoint_behind_authorized_networks_fails_reachability(runs: dict[str, StackRun]) -> None:
    run = runs["gke-prod-europe-west4"]
    regs = doctored(run, gke.CLUSTER_TYPE, lambda r: with_inputs(r, controlPlaneEndpointsConfig=None))
    failing(verdicts(run, regs), "api-server-reachable", "spotkube:cluster.dnsEndpoint")


def test_private_gke_nodes_without_nat_fail_the_egress_rule(runs: dict[str, StackRun]) -> None:
    run = runs["gke-prod-europe-west4"]
    regs = doctored(run, gke.ROUTER_NAT_TYPE, lambda r: None)
    failing(verdicts(run, regs), "node-egress", "ghcr.io", "quay.io", "Cloud NAT")
    # With training on, Trainer's and JobSet's controllers pull too: JobSet's from registry.k8s.io.
    assert run.spec.training.enabled
    failing(verdicts(run, regs), "node-egress", "(docker.io, gcr.io, ghcr.io, quay.io, registry.k8s.io)")
