"""Unit tests of the vision team's platforms, run by `pytest` under Pulumi's mocks (see conftest.py).

Each test is a `@pulumi.runtime.test` function, as in Pulumi's unit-testing guide: it builds a
platform and returns an Output whose apply holds the assertions; the runtime waits for it.
"""

from __future__ import annotations

from typing import Any

import platforms
import pulumi
import yaml

from conftest import DEPLOYER, GCP_PROJECT, TeamMocks

SPOT_TAINTS = {"kubernetes.azure.com/scalesetpriority=spot:NoSchedule", "cloud.google.com/gke-spot=true:NoSchedule"}
GPU_TAINT = "nvidia.com/gpu=present:NoSchedule"


@pulumi.runtime.test
def test_every_gpu_pool_is_labelled_for_the_team_and_the_spot_ones_tainted(mocks: TeamMocks) -> pulumi.Output[Any]:
    training = platforms.training("dev", DEPLOYER)
    inference = platforms.inference("dev", GCP_PROJECT)

    def check(contracts: list[list[dict[str, Any]]]) -> None:
        gpu_pools = {pool["name"]: pool for pools in contracts for pool in pools if pool["gpu"]}
        assert sorted(gpu_pools) == ["a100ondemand", "a100spot", "l4-ondemand", "l4-spot", "t4ondemand", "t4spot"]
        for name, pool in gpu_pools.items():
            assert pool["labels"]["team"] == "vision" and GPU_TAINT in pool["taints"]
            spot = pool["capacity"] == "spot"
            assert spot == name.endswith("spot") and spot == bool(SPOT_TAINTS & set(pool["taints"]))

    return pulumi.Output.all(training.cluster.pool_contracts, inference.cluster.pool_contracts).apply(check)


@pulumi.runtime.test
def test_aks_lives_in_our_resource_group_and_admits_only_our_runners(mocks: TeamMocks) -> pulumi.Output[Any]:
    training = platforms.training("dev", DEPLOYER)

    def check(values: list[Any]) -> None:
        group_name = values[0]
        (cluster,) = mocks.inputs_of("azure-native:containerservice:ManagedCluster")
        assert cluster["resourceGroupName"] == group_name
        assert cluster["apiServerAccessProfile"]["authorizedIPRanges"] == [platforms.RUNNER_EGRESS]
        assert not mocks.inputs_of("azure-native:resources:ResourceGroup")[1:], "spotkube made no group of its own"

    return pulumi.Output.all(training.group.name, training.cluster.cluster_name).apply(check)


@pulumi.runtime.test
def test_gke_is_built_in_our_vpc(mocks: TeamMocks) -> pulumi.Output[Any]:
    inference = platforms.inference("dev", GCP_PROJECT)

    def check(values: list[Any]) -> None:
        network, subnetwork = values[:2]
        (cluster,) = mocks.inputs_of("gcp:container/cluster:Cluster")
        assert (cluster["project"], cluster["network"], cluster["subnetwork"]) == (GCP_PROJECT, network, subnetwork)

    return pulumi.Output.all(inference.network.self_link, inference.subnetwork.self_link,
                             inference.cluster.cluster_name).apply(check)


@pulumi.runtime.test
def test_the_kubeconfig_is_a_secret_that_signs_in_without_a_person(mocks: TeamMocks) -> pulumi.Output[Any]:
    training = platforms.training("dev", DEPLOYER)

    def check(values: list[Any]) -> None:
        secret, kubeconfig = values
        assert secret
        (user,) = yaml.safe_load(kubeconfig)["users"]
        assert "devicecode" not in user["user"]["exec"]["args"]

    kubeconfig = training.cluster.kubeconfig
    return pulumi.Output.all(pulumi.Output.from_input(kubeconfig.is_secret()), kubeconfig).apply(check)


@pulumi.runtime.test
def test_the_a100_pool_never_bids_above_our_cap(mocks: TeamMocks) -> pulumi.Output[Any]:
    """A child resource's inputs, read once the cluster's outputs resolve: they wait for every resource
    the component registered, its AgentPools included, so the pools are all there to read."""
    training = platforms.training("dev", DEPLOYER)

    def check(_: str) -> None:
        pools = {pool["agentPoolName"]: pool for pool in mocks.inputs_of("azure-native:containerservice:AgentPool")}
        a100 = pools["a100spot"]
        assert (a100["scaleSetPriority"], a100["spotMaxPrice"], a100["maxCount"]) == ("Spot", 2.5, 6)

    return training.cluster.cluster_name.apply(check)
