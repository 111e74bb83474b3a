"""The floor for `plan_speed.py`: the resources a stack registers, built directly with the Pulumi
SDKs under Pulumi's own documented mocks, hosted as the offline plan hosts its program (on its own
event loops, without full garbage collections: `spotkube.components.mock_host`), and nothing else
of spotkube's.

Each builder passes only the arguments its SDK class requires, and the mocks echo the inputs back as
the state, so the time and memory measured are those of loading the SDK type modules and registering
through Pulumi's runtime: what any program building that stack pays, and spotkube cannot go below.
spotkube's own mocks are not used here: they answer through every cloud's modules (specs, catalogs,
pydantic), and loading those is spotkube's cost, which the plan must carry and the floor must not.

`build_parented_pools` is not the floor: it measures how much of what a GPU pool adds beyond the floor
is still the SDK's own work, for pools registered as any component must register them.
"""

from __future__ import annotations

from collections.abc import Callable

import pulumi
from pulumi.runtime import mocks, settings
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _sync_await

from spotkube.components.mock_host import alias_urns_left_to_the_engine, no_full_collections, owned_event_loops


def _resource_group(n: int) -> None:
    import pulumi_azure_native as azure

    azure.resources.ResourceGroup(f"floor-rg-{n}")


def _managed_cluster(n: int) -> None:
    import pulumi_azure_native as azure

    azure.containerservice.ManagedCluster(f"floor-aks-{n}", resource_group_name="rg")


def _agent_pool(n: int) -> None:
    import pulumi_azure_native as azure

    azure.containerservice.AgentPool(f"floor-pool-{n}", resource_group_name="rg", resource_name_="aks")


def _kubernetes_provider(n: int) -> None:
    import pulumi_kubernetes as k8s

    k8s.Provider(f"floor-k8s-{n}")


def _config_map(n: int) -> None:
    import pulumi_kubernetes as k8s

    k8s.core.v1.ConfigMap(f"floor-cm-{n}")


def _secret(n: int) -> None:
    import pulumi_kubernetes as k8s

    k8s.core.v1.Secret(f"floor-secret-{n}")


def _namespace(n: int) -> None:
    import pulumi_kubernetes as k8s

    k8s.core.v1.Namespace(f"floor-ns-{n}")


def _daemon_set(n: int) -> None:
    import pulumi_kubernetes as k8s

    k8s.apps.v1.DaemonSet(f"floor-ds-{n}", spec={"selector": {}, "template": {}})


def _kustomize_directory(n: int) -> None:
    from pulumi_kubernetes.kustomize.v2 import Directory

    Directory(f"floor-kustomize-{n}", directory="https://example.invalid//manifests?ref=0")


def _random_password(n: int) -> None:
    import pulumi_random as random

    random.RandomPassword(f"floor-password-{n}", length=16)


def _service_account(n: int) -> None:
    import pulumi_gcp as gcp

    gcp.serviceaccount.Account(f"floor-sa-{n}", account_id="floor")


def _iam_member(n: int) -> None:
    import pulumi_gcp as gcp

    gcp.projects.IAMMember(f"floor-iam-{n}", member="serviceAccount:a@b", project="p", role="roles/viewer")


def _gke_cluster(n: int) -> None:
    import pulumi_gcp as gcp

    gcp.container.Cluster(f"floor-gke-{n}")


def _node_pool(n: int) -> None:
    import pulumi_gcp as gcp

    gcp.container.NodePool(f"floor-np-{n}", cluster="c")


def _role_assignment(n: int) -> None:
    import pulumi_azure_native as azure

    azure.authorization.RoleAssignment(f"floor-ra-{n}", principal_id="p", role_definition_id="r", scope="s")


def _sleep(n: int) -> None:
    import pulumiverse_time as time

    time.Sleep(f"floor-sleep-{n}", create_duration="1s")


def _router(n: int) -> None:
    import pulumi_gcp as gcp

    gcp.compute.Router(f"floor-router-{n}", network="default")


def _router_nat(n: int) -> None:
    import pulumi_gcp as gcp

    gcp.compute.RouterNat(f"floor-nat-{n}", router="r", nat_ip_allocate_option="AUTO_ONLY",
                          source_subnetwork_ip_ranges_to_nat="ALL_SUBNETWORKS_ALL_IP_RANGES")


def _compute_class(n: int) -> None:
    import pulumi_kubernetes as k8s

    k8s.apiextensions.CustomResource(f"floor-cc-{n}", api_version="cloud.google.com/v1", kind="ComputeClass",
                                     spec={})


def _log_workspace(n: int) -> None:
    import pulumi_azure_native as azure

    azure.operationalinsights.Workspace(f"floor-law-{n}", resource_group_name="g", retention_in_days=30,
                                        sku={"name": "PerGB2018"})


def _data_collection_rule(n: int) -> None:
    import pulumi_azure_native as azure

    azure.monitor.DataCollectionRule(f"floor-dcr-{n}", resource_group_name="g", kind="Linux",
                                     data_flows=[{"streams": ["Microsoft-ContainerLogV2"], "destinations": ["w"]}])


def _data_collection_rule_association(n: int) -> None:
    import pulumi_azure_native as azure

    azure.monitor.DataCollectionRuleAssociation(f"floor-dcra-{n}", resource_uri="c", data_collection_rule_id="r",
                                                association_name="ContainerInsightsExtension")


def _maintenance_configuration(n: int) -> None:
    import pulumi_azure_native as azure

    azure.containerservice.MaintenanceConfiguration(f"floor-mc-{n}", resource_group_name="g", resource_name_="c",
                                                    config_name="aksManagedNodeOSUpgradeSchedule")


def _capacity_reservation_group(n: int) -> None:
    import pulumi_azure_native as azure

    azure.compute.CapacityReservationGroup(f"floor-crg-{n}", resource_group_name="g")


def _storage_account(n: int) -> None:
    import pulumi_azure_native as azure

    azure.storage.StorageAccount(f"floor-sa-{n}", resource_group_name="g", kind="StorageV2",
                                 sku={"name": "Standard_LRS"})


def _blob_container(n: int) -> None:
    import pulumi_azure_native as azure

    azure.storage.BlobContainer(f"floor-bc-{n}", account_name="a", resource_group_name="g")


def _bucket(n: int) -> None:
    import pulumi_gcp as gcp

    gcp.storage.Bucket(f"floor-bucket-{n}", location="EU")


def _bucket_iam_member(n: int) -> None:
    import pulumi_gcp as gcp

    gcp.storage.BucketIAMMember(f"floor-bim-{n}", bucket="b", member="serviceAccount:a@b",
                                role="roles/storage.objectUser")


def _capacity_reservation(n: int) -> None:
    import pulumi_azure_native as azure

    azure.compute.CapacityReservation(f"floor-cr-{n}", capacity_reservation_group_name="crg", resource_group_name="g",
                                      sku={"name": "Standard_NC24ads_A100_v4", "capacity": 1})


def _user_assigned_identity(n: int) -> None:
    import pulumi_azure_native as azure

    azure.managedidentity.UserAssignedIdentity(f"floor-uai-{n}", resource_group_name="g")


def _repository_iam_member(n: int) -> None:
    import pulumi_gcp as gcp

    gcp.artifactregistry.RepositoryIamMember(f"floor-ar-{n}", repository="r", member="serviceAccount:a@b",
                                             role="roles/artifactregistry.reader")


def _config_file(n: int) -> None:
    import pulumi_kubernetes as k8s

    k8s.yaml.v2.ConfigFile(f"floor-cf-{n}", file="https://example.com/manifests.yaml")


def _config_group(n: int) -> None:
    import pulumi_kubernetes as k8s

    k8s.yaml.v2.ConfigGroup(f"floor-cg-{n}", objs=[{"apiVersion": "v1", "kind": "ConfigMap",
                                                    "metadata": {"name": f"floor-{n}"}}])


def _custom_resource(api_version: str, kind: str) -> Callable[[int], None]:
    """A builder for a custom resource of one kind, as the program registers Kueue's queue objects."""

    def build(n: int) -> None:
        import pulumi_kubernetes as k8s

        k8s.apiextensions.CustomResource(f"floor-{kind.lower()}-{n}", api_version=api_version, kind=kind, spec={})

    return build


#: Kueue's kinds the program registers for its queue preset.
KUEUE_KINDS = ("ResourceFlavor", "ClusterQueue", "LocalQueue", "AdmissionCheck", "ProvisioningRequestConfig")


BUILDERS: dict[str, Callable[[int], None]] = {
    "azure-native:authorization:RoleAssignment": _role_assignment,
    "azure-native:containerservice:MaintenanceConfiguration": _maintenance_configuration,
    "azure-native:operationalinsights:Workspace": _log_workspace,
    "azure-native:monitor:DataCollectionRule": _data_collection_rule,
    "azure-native:monitor:DataCollectionRuleAssociation": _data_collection_rule_association,
    "time:index/sleep:Sleep": _sleep,
    "gcp:compute/router:Router": _router,
    "gcp:compute/routerNat:RouterNat": _router_nat,
    "kubernetes:cloud.google.com/v1:ComputeClass": _compute_class,
    "azure-native:resources:ResourceGroup": _resource_group,
    "azure-native:containerservice:ManagedCluster": _managed_cluster,
    "azure-native:containerservice:AgentPool": _agent_pool,
    "pulumi:providers:kubernetes": _kubernetes_provider,
    "kubernetes:core/v1:ConfigMap": _config_map,
    "kubernetes:core/v1:Secret": _secret,
    "kubernetes:core/v1:Namespace": _namespace,
    "kubernetes:apps/v1:DaemonSet": _daemon_set,
    "kubernetes:kustomize/v2:Directory": _kustomize_directory,
    "random:index/randomPassword:RandomPassword": _random_password,
    "gcp:serviceaccount/account:Account": _service_account,
    "gcp:projects/iAMMember:IAMMember": _iam_member,
    "gcp:container/cluster:Cluster": _gke_cluster,
    "gcp:container/nodePool:NodePool": _node_pool,
    "azure-native:compute:CapacityReservationGroup": _capacity_reservation_group,
    "azure-native:compute:CapacityReservation": _capacity_reservation,
    "azure-native:storage:StorageAccount": _storage_account,
    "azure-native:storage:BlobContainer": _blob_container,
    "gcp:storage/bucket:Bucket": _bucket,
    "gcp:storage/bucketIAMMember:BucketIAMMember": _bucket_iam_member,
    "azure-native:managedidentity:UserAssignedIdentity": _user_assigned_identity,
    "gcp:artifactregistry/repositoryIamMember:RepositoryIamMember": _repository_iam_member,
    "kubernetes:yaml/v2:ConfigFile": _config_file,
    **{f"kubernetes:kueue.x-k8s.io/v1beta2:{kind}": _custom_resource("kueue.x-k8s.io/v1beta2", kind)
       for kind in KUEUE_KINDS},
    "kubernetes:yaml/v2:ConfigGroup": _config_group,
}


def missing_builders(types: list[str]) -> list[str]:
    """The types of `types` the floor can't build; spotkube's own components are not resources and need none."""
    return sorted({t for t in types if t not in BUILDERS and not t.startswith("spotkube:")})


class EchoMocks(pulumi.runtime.Mocks):
    """Pulumi's documented unit-test mocks: a resource's state is its inputs, an invoke answers nothing."""

    def new_resource(self, args: mocks.MockResourceArgs) -> tuple[str, dict]:
        return f"{args.name}-id", {"name": args.name, **args.inputs}

    def call(self, args: mocks.MockCallArgs) -> dict:
        return {}


def build_floor(types: list[str]) -> None:
    """Register one resource per entry of `types` (a type may repeat) under Pulumi's documented mocks."""
    missing = missing_builders(types)
    if missing:
        raise SystemExit(f"bench/floor.py has no builder for {', '.join(missing)}; add one")

    def program() -> None:
        for n, type_token in enumerate(types):
            BUILDERS[type_token](n)
        pulumi.export("done", True)

    _host(program)


#: The cluster a pool needs, then its pools: `build_parented_pools` builds these same resources bare.
PARENTED_POOL_TYPES = ("azure-native:resources:ResourceGroup", "azure-native:containerservice:ManagedCluster")
POOL_TYPE = "azure-native:containerservice:AgentPool"

#: A spot GPU pool's fields in the SDK's names: the kinds and sizes of values any program sends for one
#: (labels to target it, the taints that keep other pods off, the spot settings), none of spotkube's code.
SPOT_GPU_POOL: dict[str, object] = {
    "mode": "User", "vm_size": "Standard_NC4as_T4_v3", "os_type": "Linux", "type": "VirtualMachineScaleSets",
    "enable_auto_scaling": True, "min_count": 0, "max_count": 4, "count": 0,
    "scale_set_priority": "Spot", "scale_set_eviction_policy": "Delete", "spot_max_price": -1,
    "node_taints": ["kubernetes.azure.com/scalesetpriority=spot:NoSchedule", "nvidia.com/gpu=present:NoSchedule"],
}
#: The pool fields AKS can't change in place, which a program replaces the pool for.
CREATE_ONLY = ["scaleSetPriority", "scaleSetEvictionPolicy", "spotMaxPrice", "osType", "gpuProfile",
               "availabilityZones", "gpuInstanceProfile", "capacityReservationGroupID"]


def build_parented_pools(count: int) -> None:
    """A cluster and `count` spot GPU pools registered as any component must register them, with the SDKs
    alone: children of a component, with a pool's real fields, the group's and cluster's names as
    outputs, and each pool waiting for the one before (AKS runs one agent-pool operation at a time).

    Why: the floor's bare pool (only the arguments its SDK class requires, no parent) leaves out work
    that is the SDK's own: the inputs are serialised, the parent's URN awaited and the dependencies
    checked for cycles. (Under a parent, `pulumi.Resource.__init__` would also resolve each of the
    AgentPool's 110 aliases against the parent's URN, which `_host` leaves out, as the plan does:
    `mock_host.alias_urns_left_to_the_engine`.) What these pools cost beyond the same resources built
    bare is that share of the SDK's, which no program registering its pools this way can avoid.
    """
    def program() -> None:
        import pulumi_azure_native as azure

        component = pulumi.ComponentResource("floor:index:Cluster", "floor")
        under = pulumi.ResourceOptions(parent=component)
        group = azure.resources.ResourceGroup("floor-rg", opts=under)
        cluster = azure.containerservice.ManagedCluster("floor-aks", resource_group_name=group.name, opts=under)
        previous: list[pulumi.Resource] = []
        for n in range(count):
            labels = {"example.com/pool": f"gpu{n}", "example.com/capacity": "spot", "example.com/role": "gpu",
                      "example.com/accelerator": "nvidia-tesla-t4", "kubernetes.azure.com/scalesetpriority": "spot"}
            previous = [azure.containerservice.AgentPool(  # type: ignore[call-overload]
                f"floor-gpu{n}", resource_group_name=group.name, resource_name_=cluster.name,
                agent_pool_name=f"gpu{n}", node_labels=labels, **SPOT_GPU_POOL,
                opts=pulumi.ResourceOptions(parent=component, depends_on=previous, ignore_changes=["count"],
                                            replace_on_changes=CREATE_ONLY, delete_before_replace=True))]
        component.register_outputs({})
        pulumi.export("done", True)

    _host(program)


def _host(program: Callable[[], None]) -> None:
    """Run `program` under Pulumi's documented mocks, hosted as the offline plan hosts its program."""
    echo = EchoMocks()
    with no_full_collections(), owned_event_loops(), alias_urns_left_to_the_engine():
        settings.reset_options(project="floor", stack="floor", preview=False)
        mocks.set_mocks(echo, project="floor", stack="floor", preview=False, monitor=mocks.MockMonitor(echo))
        _sync_await(run_pulumi_func(program))
