"""GkeGpuCluster under Pulumi mocks: what it registers, with which options, and what it exports.

Each program runs under `spotkube.components.offline.record_program`, whose recording monitor keeps the
options (parent, protect, ignoreChanges) that Pulumi's MockResourceArgs leaves out. Inputs are
checked as the engine receives them: camelCase, nested fields included.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pulumi
import pytest
import yaml

from spotkube import GkeGpuCluster, GkeGpuClusterArgs
from spotkube.clouds import parse_spec, plan_platform
from spotkube.clouds.gke import resources
from spotkube.clouds.gke.labels import GKE_SPOT_TAINT
from spotkube.clouds.gke.resources import taint_of
from spotkube.components.offline import ProgramFailed, Recording, record_program
from spotkube.platform import contract
from spotkube.platform.registration import Registration
from spotkube.review.plan_document import pool_rows

NODE_POOL = "gcp:container/nodePool:NodePool"
CLUSTER = "gcp:container/cluster:Cluster"
ACCOUNT = "gcp:serviceaccount/account:Account"
IAM_MEMBER = "gcp:projects/iAMMember:IAMMember"
COMPONENT = "spotkube:index:GkeGpuCluster"

DEV: GkeGpuClusterArgs = {
    "environment": "dev",
    "region": "us-central1",
    "cluster": {"project": "spotkube-test"},
    "gpu_pools": [
        {"name": "l4-spot", "machine": "g2-standard-8", "capacity": "spot", "max": 4},
        {"name": "t4-preemptible", "machine": "n1-standard-8", "capacity": "preemptible",
         "gpu": {"type": "nvidia-tesla-t4", "count": 1}, "zones": ["us-central1-a", "us-central1-b"]},
        {"name": "l4-ondemand", "machine": "g2-standard-8", "capacity": "on-demand", "max": 2},
    ],
}
PROD: GkeGpuClusterArgs = {
    "environment": "prod",
    "region": "europe-west4",
    "cluster": {"project": "spotkube-test", "authorized_ip_ranges": ["203.0.113.0/24"]},
    "gpu_pools": [{"name": "a100-spot", "machine": "a2-highgpu-1g", "capacity": "spot"}],
}


def build(args: GkeGpuClusterArgs, on_cluster: Callable[[GkeGpuCluster], object] | None = None) -> Recording:
    """Run a program that builds one GkeGpuCluster and exports its outputs, as infra/ does."""

    def program() -> None:
        cluster = GkeGpuCluster("ml", args=args)
        pulumi.export("kubeconfig", cluster.kubeconfig)
        pulumi.export("poolContracts", cluster.pool_contracts)
        pulumi.export("nodeServiceAccountEmail", cluster.node_service_account_email)
        if on_cluster:
            on_cluster(cluster)

    return record_program(program, project="spotkube", stack="test", config={})


@pytest.fixture(scope="module")
def dev() -> Recording:
    return build(DEV)


@pytest.fixture(scope="module")
def prod() -> Recording:
    return build(PROD)


def of_type(recording: Recording, type_token: str) -> list[Registration]:
    return [r for r in recording.registrations if r.type == type_token]


def pools(recording: Recording) -> dict[str, Registration]:
    """Node pools by spotkube's name for them (control-plane pools have versioned cloud names)."""
    return {r.inputs["nodeConfig"]["labels"]["spotkube.io/pool"]: r for r in of_type(recording, NODE_POOL)}


def test_one_node_pool_per_planned_pool_with_the_plan_inputs(dev: Recording) -> None:
    plan = plan_platform(parse_spec({"cloud": "gke", **DEV}, "test"))
    registered = pools(dev)
    assert sorted(registered) == sorted(p.name for p in plan.pools)
    for planned in plan.pools:
        inputs = registered[planned.name].inputs
        assert inputs["nodeConfig"]["machineType"] == planned.machine
        assert inputs["location"] == "us-central1"
        assert inputs["project"] == "spotkube-test"
        assert inputs["autoscaling"]["totalMinNodeCount"] == planned.min
        assert inputs["autoscaling"]["totalMaxNodeCount"] == planned.max
        assert "nodeCount" not in inputs  # never alongside autoscaling (pulumi-gcp NodePool docs)
        assert inputs.get("nodeLocations", []) == list(planned.zones)


def test_gpu_pool_zones_are_the_zones_that_offer_the_gpu(dev: Recording) -> None:
    registered = pools(dev)
    assert registered["l4-spot"].inputs["nodeLocations"] == ["us-central1-a", "us-central1-b", "us-central1-c"]
    assert registered["t4-preemptible"].inputs["nodeLocations"] == ["us-central1-a", "us-central1-b"]


def test_taints_are_declared_explicitly_in_gke_form(dev: Recording) -> None:
    taints = {name: [taint_of(t) for t in r.inputs["nodeConfig"].get("taints") or []]
              for name, r in pools(dev).items()}
    gpu = contract.Taint("nvidia.com/gpu", "present", "NoSchedule")
    spot = contract.Taint("cloud.google.com/gke-spot", "true", "NoSchedule")
    preemptible = contract.Taint("cloud.google.com/gke-preemptible", "true", "NoSchedule")
    l4_class = contract.Taint("cloud.google.com/compute-class", "spotkube-nvidia-l4", "NoSchedule")
    t4_class = contract.Taint("cloud.google.com/compute-class", "spotkube-nvidia-tesla-t4", "NoSchedule")
    assert taints["l4-spot"] == [spot, gpu, l4_class]
    assert taints["t4-preemptible"] == [preemptible, gpu, t4_class]
    assert taints["l4-ondemand"] == [gpu, l4_class]
    # The system pool is kept for GKE's own system pods, which tolerate this key
    # (docs/platform-facts.md#gke-system-pool-taint); the platform pool stays untainted.
    gke_managed = contract.Taint("components.gke.io/gke-managed-components", "true", "NoSchedule")
    assert taints["system"] == [gke_managed] and taints["platform"] == []
    raw = pools(dev)["l4-spot"].inputs["nodeConfig"]["taints"]
    assert {"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"} in raw


def test_every_pool_carries_the_neutral_labels_and_gpu_pools_their_compute_class(dev: Recording) -> None:
    l4, t4 = ({"cloud.google.com/compute-class": f"spotkube-{gpu}"} for gpu in ("nvidia-l4", "nvidia-tesla-t4"))
    expected = {
        "system": contract.neutral_labels("system", "system", "on-demand", None),
        "platform": contract.neutral_labels("platform", "platform", "on-demand", None),
        "l4-spot": {**contract.neutral_labels("l4-spot", "gpu", "spot", "nvidia-l4"), **l4},
        "t4-preemptible": {**contract.neutral_labels("t4-preemptible", "gpu", "preemptible", "nvidia-tesla-t4"), **t4},
        "l4-ondemand": {**contract.neutral_labels("l4-ondemand", "gpu", "on-demand", "nvidia-l4"), **l4},
    }
    assert {name: r.inputs["nodeConfig"]["labels"] for name, r in pools(dev).items()} == expected


def test_autoscaling_location_policy_any_only_for_interruptible_pools(dev: Recording) -> None:
    policies = {name: r.inputs["autoscaling"]["locationPolicy"] for name, r in pools(dev).items()}
    assert policies == {"system": "BALANCED", "platform": "BALANCED", "l4-spot": "ANY",
                        "t4-preemptible": "ANY", "l4-ondemand": "BALANCED"}


def test_spot_and_preemptible_are_never_both_set(dev: Recording) -> None:
    flags = {name: (r.inputs["nodeConfig"].get("spot", False), r.inputs["nodeConfig"].get("preemptible", False))
             for name, r in pools(dev).items()}
    assert flags["l4-spot"] == (True, False)
    assert flags["t4-preemptible"] == (False, True)
    assert flags["l4-ondemand"] == flags["system"] == (False, False)
    assert not any(spot and preemptible for spot, preemptible in flags.values())


def test_a_spot_cpu_pool_is_a_spot_node_pool_without_gpus() -> None:
    args: GkeGpuClusterArgs = {**DEV, "spot_pools": [{"name": "cpu-spot", "machine": "e2-standard-8", "max": 10}]}
    registered = pools(build(args))["cpu-spot"].inputs
    config = registered["nodeConfig"]
    assert config["spot"] is True and "preemptible" not in config
    assert "guestAccelerators" not in config
    assert [taint_of(t) for t in config["taints"]] == [GKE_SPOT_TAINT]
    assert config["labels"][contract.CAPACITY_LABEL] == "spot"
    assert config["labels"][contract.ACCELERATOR_LABEL] == contract.NO_ACCELERATOR
    assert registered["autoscaling"]["locationPolicy"] == "ANY"


def test_guest_accelerators_carry_an_explicit_driver_version(dev: Recording) -> None:
    registered = pools(dev)
    assert registered["l4-spot"].inputs["nodeConfig"]["guestAccelerators"] == [
        {"type": "nvidia-l4", "count": 1, "gpuDriverInstallationConfig": {"gpuDriverVersion": "DEFAULT"}}
    ]
    assert registered["t4-preemptible"].inputs["nodeConfig"]["guestAccelerators"][0]["type"] == "nvidia-tesla-t4"
    assert "guestAccelerators" not in registered["system"].inputs["nodeConfig"]


def test_gpu_driver_setting_reaches_the_pool_and_turns_secure_boot_off_only_for_own_drivers() -> None:
    args: GkeGpuClusterArgs = {**DEV, "gpu_pools": [
        {"name": "own-driver", "machine": "g2-standard-8", "gpu_driver": "INSTALLATION_DISABLED"}]}
    registered = pools(build(args))
    config = registered["own-driver"].inputs["nodeConfig"]
    driver = config["guestAccelerators"][0]["gpuDriverInstallationConfig"]
    assert driver == {"gpuDriverVersion": "INSTALLATION_DISABLED"}
    assert config["shieldedInstanceConfig"]["enableSecureBoot"] is False
    assert registered["system"].inputs["nodeConfig"]["shieldedInstanceConfig"]["enableSecureBoot"] is True


def test_initial_node_count_is_ignored_and_only_spot_and_gpu_pools_are_deleted_before_replacement(
    dev: Recording,
) -> None:
    assert set(pools(dev)) == {"system", "platform", "l4-spot", "t4-preemptible", "l4-ondemand"}
    for name, registration in pools(dev).items():
        assert "initialNodeCount" in registration.ignore_changes
        control_plane = name in ("system", "platform")
        assert registration.delete_before_replace is not control_plane, name
        # a create-first replacement needs a new name: the cloud name is versioned
        assert (registration.inputs["name"] != name) is control_plane, name
    (cluster,) = of_type(dev, CLUSTER)
    assert {"initialNodeCount", "nodeConfig"} <= set(cluster.ignore_changes)


def test_a_machine_change_gives_a_control_plane_pool_a_new_name_and_nothing_else_does(dev: Recording) -> None:
    before = {name: r.inputs["name"] for name, r in pools(dev).items()}
    bigger = build({**DEV, "platform_pool": {"machine": "e2-standard-8"}})
    after = {name: r.inputs["name"] for name, r in pools(bigger).items()}
    assert after["platform"] != before["platform"] and after["platform"].startswith("platform-")
    assert {k: v for k, v in after.items() if k != "platform"} == {k: v for k, v in before.items() if k != "platform"}
    relabelled = build({**DEV, "platform_pool": {"labels": {"team": "ml"}}})
    assert pools(relabelled)["platform"].inputs["name"] == before["platform"], "labels are updated in place"


def test_initial_node_count_is_per_zone_and_covers_min(dev: Recording) -> None:
    registered = pools(dev)
    assert registered["l4-spot"].inputs["initialNodeCount"] == 0
    assert registered["system"].inputs["initialNodeCount"] == 1  # min 2 over GKE's 3 default zones
    zonal = {"min": 5, "max": 8, "zones": ["us-central1-a", "us-central1-b"]}
    plan = plan_platform(parse_spec({"cloud": "gke", **DEV, "system_pool": zonal}, "test"))
    assert resources.initial_node_count(plan.system_pool) == 3  # 2 zones × 3 nodes >= min 5


def test_every_child_is_parented_to_the_component(dev: Recording) -> None:
    (component,) = of_type(dev, COMPONENT)
    children = [r for r in dev.registrations if r is not component]
    assert children, "the component registered nothing"
    assert {r.type for r in children} >= {NODE_POOL, CLUSTER, ACCOUNT, IAM_MEMBER, "pulumi:providers:kubernetes"}
    # Each NodePool is a `GkeGpuNodePool`'s, aliased to the cluster it was registered under before.
    pools = {r.urn: r for r in children if r.type == "spotkube:index:GkeGpuNodePool"}
    node_pools = [r for r in children if r.type == NODE_POOL]
    assert node_pools and sorted(r.name for r in node_pools) == sorted(r.name for r in pools.values())
    assert all(pools[r.parent].name == r.name and r.moved_from == (component.urn,) for r in node_pools)
    assert all(r.parent == component.urn for r in children if r not in node_pools)


#: What gcloud's `get-credentials --dns-endpoint` writes for a user (api_lib/container/kubeconfig.py,
#: `_ExecAuthPlugin` without the ADC property, which gcloud refuses next to a DNS endpoint).
GCLOUD_DNS_USER = {"exec": {
    "command": "gke-gcloud-auth-plugin",
    "apiVersion": "client.authentication.k8s.io/v1beta1",
    "installHint": "Install gke-gcloud-auth-plugin for use with kubectl by following "
                   "https://cloud.google.com/kubernetes-engine/docs/how-to/cluster-access-for-kubectl#install_plugin",
    "provideClusterInfo": True,
}}


def test_kubeconfig_is_a_secret_that_uses_the_gke_auth_plugin() -> None:
    seen: list[str] = []
    recording = build(DEV, lambda cluster: cluster.kubeconfig.apply(seen.append))
    assert recording.outputs["kubeconfig"].secret
    assert recording.outputs["kubeconfig"].value is None  # the report never reads a secret
    assert not recording.outputs["poolContracts"].secret
    (kubeconfig,) = seen
    config = yaml.safe_load(kubeconfig)
    (cluster,) = config["clusters"]
    # the DNS endpoint, authorised by IAM, serves a publicly trusted certificate: no CA data
    assert cluster["cluster"] == {"server": "https://gke-00000000000000000000000000000000-000000000000.offline-plan.gke.goog"}
    (user,) = config["users"]
    # exactly what gcloud writes for a DNS endpoint: no --use_application_default_credentials
    assert user["user"] == GCLOUD_DNS_USER
    assert config["current-context"] == cluster["name"] == "gke_spotkube-test_us-central1_ml-gke"
    assert set(config) == {"apiVersion", "clusters", "contexts", "current-context", "kind", "preferences", "users"}
    (provider,) = of_type(recording, "pulumi:providers:kubernetes")
    assert provider.parent == of_type(recording, COMPONENT)[0].urn


def test_nodes_run_as_a_dedicated_least_privilege_service_account(dev: Recording) -> None:
    (account,) = of_type(dev, ACCOUNT)
    assert re.fullmatch(r"[a-z][-a-z0-9]{4,28}[a-z0-9]", account.inputs["accountId"])
    email = f"{account.inputs['accountId']}@spotkube-test.iam.gserviceaccount.com"
    (member,) = of_type(dev, IAM_MEMBER)
    assert member.inputs["role"] == "roles/container.defaultNodeServiceAccount"
    assert member.inputs["member"] == f"serviceAccount:{email}"
    (cluster,) = of_type(dev, CLUSTER)
    node_accounts = [r.inputs["nodeConfig"]["serviceAccount"] for r in of_type(dev, NODE_POOL)]
    node_accounts.append(cluster.inputs["nodeConfig"]["serviceAccount"])  # the removed default pool
    assert set(node_accounts) == {email}
    assert not any(a.endswith("-compute@developer.gserviceaccount.com") or a == "default" for a in node_accounts)
    assert dev.outputs["nodeServiceAccountEmail"].value == email
    for pool in of_type(dev, NODE_POOL):
        assert member.urn in pool.dependencies  # nodes start only once the role is granted


def test_node_metadata_and_workload_identity(dev: Recording) -> None:
    assert of_type(dev, NODE_POOL), "the dev stack's node pools"
    for registration in of_type(dev, NODE_POOL):
        config = registration.inputs["nodeConfig"]
        assert config["metadata"] == {"disable-legacy-endpoints": "true"}
        assert config["workloadMetadataConfig"] == {"mode": "GKE_METADATA"}
        assert config["shieldedInstanceConfig"]["enableIntegrityMonitoring"] is True
        assert registration.inputs["management"] == {"autoRepair": True, "autoUpgrade": True}
    (cluster,) = of_type(dev, CLUSTER)
    assert cluster.inputs["workloadIdentityConfig"] == {"workloadPool": "spotkube-test.svc.id.goog"}


def test_cluster_baseline(dev: Recording) -> None:
    (cluster,) = of_type(dev, CLUSTER)
    inputs = cluster.inputs
    assert inputs["removeDefaultNodePool"] is True
    assert inputs["initialNodeCount"] == 1
    assert inputs["releaseChannel"] == {"channel": "REGULAR"}
    assert inputs["enableShieldedNodes"] is True
    assert inputs["networkingMode"] == "VPC_NATIVE"
    assert inputs["datapathProvider"] == "ADVANCED_DATAPATH"
    assert inputs["masterAuth"]["clientCertificateConfig"] == {"issueClientCertificate": False}
    assert inputs["clusterAutoscaling"] == {"enabled": False, "autoscalingProfile": "OPTIMIZE_UTILIZATION"}


def test_dev_is_unprotected_and_public_by_default(dev: Recording) -> None:
    (cluster,) = of_type(dev, CLUSTER)
    assert cluster.protect is False
    assert cluster.inputs["deletionProtection"] is False
    assert "privateClusterConfig" not in cluster.inputs
    assert "masterAuthorizedNetworksConfig" not in cluster.inputs


def test_prod_is_protected_with_private_nodes_and_authorized_networks(prod: Recording) -> None:
    (cluster,) = of_type(prod, CLUSTER)
    assert cluster.protect is True
    assert cluster.inputs["deletionProtection"] is True
    assert cluster.inputs["privateClusterConfig"] == {"enablePrivateNodes": True, "enablePrivateEndpoint": False}
    assert cluster.inputs["masterAuthorizedNetworksConfig"] == {
        "cidrBlocks": [{"cidrBlock": "203.0.113.0/24", "displayName": "spotkube-0"}],
        "gcpPublicCidrsAccessEnabled": False,
    }


def test_prod_switches_can_be_turned_off_and_calico_uses_the_addon() -> None:
    args: GkeGpuClusterArgs = {**PROD, "cluster": {
        "project": "spotkube-test", "private": False, "deletion_protection": False, "network_policy": "calico",
        "network": "ml-vpc", "subnetwork": "ml-europe-west4", "channel": "STABLE"}}
    (cluster,) = of_type(build(args), CLUSTER)
    assert cluster.protect is False and cluster.inputs["deletionProtection"] is False
    assert "privateClusterConfig" not in cluster.inputs
    assert cluster.inputs["datapathProvider"] == "LEGACY_DATAPATH"
    assert cluster.inputs["networkPolicy"] == {"enabled": True, "provider": "CALICO"}
    assert cluster.inputs["addonsConfig"] == {"networkPolicyConfig": {"disabled": False}}
    assert (cluster.inputs["network"], cluster.inputs["subnetwork"]) == ("ml-vpc", "ml-europe-west4")
    assert cluster.inputs["releaseChannel"] == {"channel": "STABLE"}


def test_pool_contracts_output_matches_the_plan(dev: Recording) -> None:
    plan = plan_platform(parse_spec({"cloud": "gke", **DEV}, "test"))
    exported = dev.outputs["poolContracts"].value
    cloud_names = {name: r.inputs["name"] for name, r in pools(dev).items()}
    assert exported == [c.to_json() for c in plan.with_cloud_names(cloud_names).contracts()]
    platform = next(c for c in exported if c["name"] == "platform")
    assert platform["labels"]["cloud.google.com/gke-nodepool"] == cloud_names["platform"]
    assert platform["labels"]["kubernetes.io/os"] == "linux"
    assert platform["labels"]["topology.kubernetes.io/region"] == "us-central1"
    spot = next(c for c in exported if c["name"] == "l4-spot")
    assert spot["labels"]["cloud.google.com/gke-spot"] == "true"
    assert spot["labels"]["cloud.google.com/gke-nodepool"] == "l4-spot"


class _AksPool:
    """A registered AKS AgentPool, enough for the AKS reader."""

    type = "azure-native:containerservice:AgentPool"
    name = "x"

    def __init__(self, inputs: dict[str, Any]) -> None:
        self.inputs = inputs


def test_plan_rows_have_the_same_shape_as_aks(dev: Recording) -> None:
    rows = {row.name: row.to_json() for row in pool_rows("gke", dev.registrations)}
    aks_row = pool_rows("aks", [_AksPool({"agentPoolName": "x", "nodeLabels": {}})])[0].to_json()
    assert all(row.keys() == aks_row.keys() for row in rows.values())
    assert rows["l4-spot"]["capacity"] == "spot"
    assert rows["t4-preemptible"]["capacity"] == "preemptible"
    assert rows["l4-ondemand"]["capacity"] == "on-demand"
    assert rows["l4-spot"]["gpu"] == {"type": "nvidia-l4", "count": 1}
    assert rows["l4-spot"]["taints"] == [
        "cloud.google.com/gke-spot=true:NoSchedule", "nvidia.com/gpu=present:NoSchedule",
        "cloud.google.com/compute-class=spotkube-nvidia-l4:NoSchedule"]
    assert (rows["l4-spot"]["min"], rows["l4-spot"]["max"]) == (0, 4)
    assert rows["l4-spot"]["evictionPolicy"] is None and rows["l4-spot"]["maxPrice"] is None


def test_bad_args_fail_before_anything_is_registered() -> None:
    args: GkeGpuClusterArgs = {**DEV, "gpu_pools": [{"name": "l4-spot", "machine": "g2-standard-8",
                                                  "gpu": {"type": "nvidia-tesla-t4", "count": 1}}]}
    with pytest.raises(ProgramFailed) as failure:
        build(args)
    assert failure.value.registrations == []
    message = "GkeGpuCluster 'ml' args: gpu_pools[0].gpu: g2-standard-8 carries 1 × nvidia-l4"
    assert message in str(failure.value)


@pytest.mark.parametrize("name", ["spotkube", "ml", "9lives", "A Very Long Component Name Indeed", "x--y"])
def test_node_service_account_ids_follow_iam_rules(name: str) -> None:
    spec = parse_spec({"cloud": "gke", **DEV}, "test")
    account_id = resources.node_service_account_id(name, spec)
    assert re.fullmatch(r"[a-z][-a-z0-9]{4,28}[a-z0-9]", account_id)
    other_region = parse_spec({"cloud": "gke", **PROD}, "test")
    assert resources.node_service_account_id(name, other_region) != account_id


def test_ip_endpoint_kubeconfig_when_the_dns_endpoint_is_off() -> None:
    seen: list[str] = []
    build({**DEV, "cluster": {**DEV["cluster"], "dns_endpoint": False}}, lambda c: c.kubeconfig.apply(seen.append))
    config = yaml.safe_load(seen[0])
    (cluster,) = config["clusters"]
    assert cluster["cluster"]["server"] == "https://offline-plan.invalid"
    assert cluster["cluster"]["certificate-authority-data"]
    (user,) = config["users"]
    # gcloud with container/use_application_default_credentials set: the flag, nothing else changes
    assert user["user"]["exec"] == {**GCLOUD_DNS_USER["exec"], "args": ["--use_application_default_credentials"]}


def test_private_nodes_get_cloud_nat_before_anything_is_deployed_on_them() -> None:
    recording = build({**DEV, "environment": "prod"})
    (router,) = of_type(recording, "gcp:compute/router:Router")
    (nat,) = of_type(recording, "gcp:compute/routerNat:RouterNat")
    assert router.inputs["network"] == "default" and router.inputs["region"] == "us-central1"
    assert nat.inputs["sourceSubnetworkIpRangesToNat"] == "LIST_OF_SUBNETWORKS"
    assert nat.inputs["subnetworks"] == [{"name": "default", "sourceIpRangesToNats": ["ALL_IP_RANGES"]}]
    (provider,) = of_type(recording, "pulumi:providers:kubernetes")
    assert nat.urn in provider.dependencies, "Kubeflow's images are pulled only once nodes have egress"
    own = build({**DEV, "environment": "prod", "cluster": {**DEV["cluster"], "egress": "own"}})
    assert not of_type(own, "gcp:compute/routerNat:RouterNat")
    assert not of_type(build(DEV), "gcp:compute/routerNat:RouterNat"), "public nodes need no NAT"
