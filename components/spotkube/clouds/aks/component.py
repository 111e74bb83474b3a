"""`AksGpuCluster`: an AKS cluster with an on-demand system pool and spot GPU pools.

A thin shell: every decision comes from `spotkube.platform.plan`; this module spells it in azure-native's
terms. The AKS facts, with sources: docs/platform-facts.md#aks.
"""


import base64
from collections.abc import Mapping
from typing import Any

import pulumi
import pulumi_azure_native as azure
import pulumi_kubernetes as k8s
import pulumiverse_time as time

from spotkube.clouds.aks import checkpoints, resources, supply
from spotkube.clouds.aks.args import AksGpuClusterArgs
from spotkube.clouds.aks.catalog import RBAC_CLUSTER_ADMIN_ROLE_ID
from spotkube.clouds.aks.kubeconfig import with_kubelogin_mode
from spotkube.clouds.aks.node_pool import AgentPoolTarget, AksGpuNodePool
from spotkube.clouds.aks.resources import DRILL_ROLE_ID, node_resource_group_id, role_definition_id
from spotkube.platform.plan import PlatformPlan, PoolPlan
from spotkube.platform.spec import PlatformSpec
from spotkube.shell.common import (
    ClusterPlan,
    Wiring,
    all_created,
    built_from,
    child,
    kubernetes_provider,
    log_plan_warnings,
    plan_from_args,
    plan_from_spec,
    pool_contract_outputs,
    protected,
    refuse_bad_name,
    required,
    security_concerns,
    settled,
    then,
    unanswered,
)
from spotkube.shell.outputs import PoolContractOutput
from spotkube.shell.pools import PoolBuild

#: Where the kubeconfig comes from, as a warning names it when missing.
CREDENTIALS_SOURCE = "azure-native's listManagedClusterUserCredentials"


class AksGpuCluster(pulumi.ComponentResource):
    """An AKS cluster for ML: on-demand system and platform pools plus spot GPU pools 0..N.

    What it registers: a resource group (unless `cluster.resourceGroupName` names one); the
    ManagedCluster with its inline System pool; one AgentPool per platform and GPU pool, created one
    at a time (AKS refuses concurrent pool operations); the maintenance configurations; the
    deployer's and admin groups' RBAC Cluster Admin role assignments and a wait for them to take
    effect; with container logs on, a Log Analytics workspace (unless one is named) and Container
    Insights' data collection rule; with a GPU pool's `capacity_reservation_group`, a user-assigned
    identity the cluster runs as, the group and its reservations (when the stack creates it) and that
    identity's Contributor grant on the group's resource group; with `cluster.registries`, AcrPull for
    the kubelet identity on each; the Kubernetes provider; and, with the `priority` expander, the
    autoscaler's priority ConfigMap.

    Its args are `AksGpuClusterArgs` (docs/settings-per-cloud.md): `environment`, `region`, the
    pools (`system_pool`, `platform_pool`, `gpu_pools`, `spot_pools`) and `cluster`, whose
    `deployer` (`object_id` and `principal_type`: who runs `pulumi up`) is required. They are
    checked before anything is registered.

    Outputs. Each resolves only once every resource above exists, pools included, and carries them
    as dependencies, so whatever is built on it waits for the pools; in a preview of a new cluster
    they are unknown.

    - `kubeconfig`: the user kubeconfig, a secret; it signs in with kubelogin as the deployer.
    - `cluster_name`: the ManagedCluster's name.
    - `resource_group_name`: the resource group the cluster lives in.
    - `oidc_issuer_url`: the OIDC issuer, for workload identity federation.
    - `pool_contracts`: every pool's name, capacity, labels and taints, to target workloads.
    - `log_workspace_id`: the Log Analytics workspace's id (`spotkube logs --workspace`); empty
      without container logs.
    - `provider` (Python only): the `pulumi_kubernetes.Provider` for what you deploy on the
      cluster; it is created after every pool and after the deployer's rights take effect.
    - `training_env` (Python only): what every training worker's environment needs on this cluster,
      `AZURE_CLIENT_ID` (the kubelet identity's client id, which the checkpoint store's grant names);
      `KubeflowTrainer` writes it into its runtimes.
    """

    kubeconfig: pulumi.Output[str]
    """User kubeconfig (a secret). With local accounts disabled it needs kubelogin."""
    cluster_name: pulumi.Output[str]
    """The managed cluster's name."""
    resource_group_name: pulumi.Output[str]
    """The resource group the cluster lives in."""
    oidc_issuer_url: pulumi.Output[str]
    """OIDC issuer for workload identity federation."""
    pool_contracts: pulumi.Output[list[PoolContractOutput]]
    """Labels and taints of every pool, for targeting workloads."""
    log_workspace_id: pulumi.Output[str]
    """The Log Analytics workspace container logs go to (`spotkube logs --workspace`); empty without logs."""

    def __init__(
        self, name: str, args: AksGpuClusterArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        """Check the args and register the cluster; bad args end the program with one line naming the
        key, and nothing is registered.

        :param name: the component's name: lower-case letters, digits and hyphens; with the
            environment it makes the cluster's DNS prefix, so at most 54 characters together.
        :param args: the cluster's typed args, `AksGpuClusterArgs`.
        :param opts: Pulumi's resource options (`protect=True` protects the cluster in any environment).
        """
        self._build(name, plan_from_args("aks", args, AksGpuClusterArgs, f"AksGpuCluster {name!r} args"), opts)

    @classmethod
    def from_spec(
        cls, name: str, spec: PlatformSpec, opts: pulumi.ResourceOptions | None = None
    ) -> "AksGpuCluster":
        """The cluster of a typed spec, as the stack program reads it from the stack file with
        `parse_spec`: no dict round trip, and a spec built by hand still meets every rule."""
        return built_from(cls, name, plan_from_spec("aks", spec, f"AksGpuCluster {name!r}"), opts)

    def _build(self, name: str, built: ClusterPlan, opts: pulumi.ResourceOptions | None) -> None:
        label = f"AksGpuCluster {name!r}"
        refuse_bad_name(label, name, built.plan)
        super().__init__("spotkube:index:AksGpuCluster", name, {}, opts)
        log_plan_warnings(self, label, built.plan)
        plan, wiring = built.plan, built.wiring
        spec = plan.spec

        # Every resource registered here: the outputs resolve only once all of them exist.
        children: list[pulumi.Resource] = []
        # The spec says whether a group was given (a wired Output shows as its placeholder there);
        # the wiring holds the value itself, which may be another resource's output.
        if spec.cluster.resource_group_name and wiring.resource_group_name is not None:
            resource_group_name: pulumi.Input[str] = wiring.resource_group_name
        else:
            group = azure.resources.ResourceGroup(
                f"{name}-rg", location=spec.region, opts=child(self, protect=protected(spec.is_prod))
            )
            children.append(group)
            resource_group_name = group.name

        plan = plan.with_cloud_names({pool.name: resources.cloud_pool_name(pool) for pool in plan.node_pools})
        self.plan = plan
        workspace = self._workspace(name, plan, resource_group_name)
        workspace_id = workspace.id if isinstance(workspace, pulumi.Resource) else workspace
        reserved = supply.reserved_pools(spec)
        identity = azure.managedidentity.UserAssignedIdentity(
            f"{name}-identity", resource_group_name=resource_group_name, location=spec.region, opts=child(self),
        ) if reserved else None
        cluster = self._cluster(name, plan, wiring, resource_group_name, workspace_id,
                                identity.id if identity is not None else None)
        children.append(cluster)
        groups: dict[str, pulumi.Input[str]] = {}
        if identity is not None:
            groups, reservation_resources = self._reservations(name, label, plan, resource_group_name,
                                                               identity)
            children += [identity, *reservation_resources]
            # A pool waits for its group and for the identity's right on it to take effect.
            reservations_ready: list[pulumi.Resource] = reservation_resources[-1:]
        else:
            reservations_ready = []
        registry_grants = self._registry_grants(name, label, plan, cluster)
        children += registry_grants
        children += self._checkpoint_store(name, label, plan, resource_group_name, cluster)
        if isinstance(workspace, pulumi.Resource):
            children.append(workspace)
        if workspace_id is not None:
            children += self._container_insights(name, plan, resource_group_name, cluster, workspace_id)
        # The cluster's name, released only once the deployed system pool is known to accept the
        # wanted one: every pool and the kubeconfig wait for it, so a refused change stops them all.
        cluster_name = pulumi.Output.all(cluster.name, cluster.agent_pool_profiles).apply(
            lambda values: _checked(values[0], plan.system_pool, values[1], label)
        )
        previous: list[pulumi.Resource] = list(reservations_ready)
        pools: list[pulumi.Resource] = []
        for pool in plan.node_pools:
            # AKS refuses a second agent-pool operation on a cluster while one runs (409
            # OperationNotAllowed; Azure/AKS#1913), so each pool waits for the one before it. The pool
            # component's AgentPool was this component's own child before: its alias keeps it.
            previous = [AksGpuNodePool.on_cluster(
                f"{name}-{pool.name}", PoolBuild(plan, pool, {}, external=False),
                AgentPoolTarget(resource_group_name, cluster_name, groups.get(pool.name), after=tuple(previous),
                                moved_from=self),
                opts=child(self),
            ).agent_pool]
            pools += previous

        # When AKS may upgrade the cluster and reimage nodes: after the pools, which it also refuses to
        # change while another operation on the cluster runs.
        channel = spec.cluster.channel or "none"
        for config_name, window in resources.maintenance_configurations(spec.cluster.maintenance, channel).items():
            previous = [azure.containerservice.MaintenanceConfiguration(
                f"{name}-{config_name}",
                resource_group_name=resource_group_name,
                resource_name_=cluster_name,
                config_name=config_name,
                maintenance_window=window,
                opts=child(self, depends_on=previous),
            )]
            pools += previous

        credentials = azure.containerservice.list_managed_cluster_user_credentials_output(
            resource_group_name=resource_group_name,
            resource_name=cluster_name,
            opts=pulumi.InvokeOutputOptions(parent=self),
        )
        login = spec.cluster.deployer.login
        # The first kubeconfig's text: a cloud always sends one, a test's plain mocks may not.
        encoded = required(self, label, credentials.kubeconfigs.apply(lambda found: found[0].value if found else None),
                           "kubeconfig", CREDENTIALS_SOURCE)
        kubeconfig = pulumi.Output.secret(
            encoded.apply(lambda v: with_kubelogin_mode(base64.b64decode(v).decode(), login))
        )
        grants = self._data_plane_rights(name, label, plan, wiring, cluster)
        children += [*pools, *grants]
        if spec.cluster.deployer.drills:
            children.append(self._drill_right(name, label, plan, cluster))
        # Whatever deploys through the provider (the add-ons, a consumer's DaemonSet) waits for the
        # grants to take effect and for every pool, so it never races a GPU pool being created.
        # What is deployed through the provider may pull from the stack's registries: it waits for the
        # AcrPull grants too. The last pool (or maintenance configuration) of the chain comes after every
        # other one.
        self.provider = kubernetes_provider(self, label, name, kubeconfig,
                                            depends_on=[*grants, *registry_grants, *pools[-1:]])
        children.append(self.provider)
        if spec.cluster.autoscaler.expander == "priority":
            children.append(self._priority_expander(name, plan))

        created = all_created(children)
        self.kubeconfig = settled(kubeconfig, created)
        self.cluster_name = settled(cluster.name, created)
        self.resource_group_name = settled(resource_group_name, created)
        self.oidc_issuer_url = settled(cluster.oidc_issuer_profile.apply(
            lambda p: (p.issuer_url if p else None) or ""
        ), created)
        self.pool_contracts = settled(pool_contract_outputs(plan), created)
        self.log_workspace_id = settled(workspace_id if workspace_id is not None else "", created)
        # A worker's pod gets tokens from the node's metadata endpoint, where the kubelet identity is one of
        # several user-assigned identities: Azure's SDKs then need its client id to pick it.
        self.training_env: dict[str, pulumi.Output[str]] = {"AZURE_CLIENT_ID": cluster.identity_profile.apply(
            lambda profiles: _kubelet_identity(profiles, "client_id") or unanswered(
                self, label, "kubelet identity client id", "the ManagedCluster's identityProfile.kubeletidentity"))}
        self.register_outputs({
            "kubeconfig": self.kubeconfig,
            "clusterName": self.cluster_name,
            "resourceGroupName": self.resource_group_name,
            "oidcIssuerUrl": self.oidc_issuer_url,
            "poolContracts": self.pool_contracts,
            "logWorkspaceId": self.log_workspace_id,
        })

    def _workspace(
        self, name: str, plan: PlatformPlan, resource_group_name: pulumi.Input[str]
    ) -> azure.operationalinsights.Workspace | str | None:
        """The Log Analytics workspace container logs go to: the stack's (its id), or one created here
        with the stack's retention; None when logs stay on the nodes (`cluster.logs.enabled`, on in prod)."""
        spec = plan.spec
        logs = spec.cluster.logs
        if not spec.switch(logs.enabled):
            return None
        if logs.workspace_id:
            return logs.workspace_id
        return azure.operationalinsights.Workspace(
            f"{name}-logs",
            **resources.workspace_inputs(plan, resource_group_name),
            opts=child(self, protect=protected(spec.is_prod)),
        )

    def _container_insights(
        self, name: str, plan: PlatformPlan, resource_group_name: pulumi.Input[str],
        cluster: azure.containerservice.ManagedCluster, workspace_id: pulumi.Input[str],
    ) -> list[pulumi.Resource]:
        """The data collection rule Container Insights reads its streams from, and its association with
        the cluster, as azure-cli creates them: without them the agent runs but collects nothing
        (docs/logs.md)."""
        rule = azure.monitor.DataCollectionRule(
            f"{name}-container-insights",
            **resources.container_insights_rule_inputs(plan, resource_group_name, workspace_id),
            opts=child(self),
        )
        association = azure.monitor.DataCollectionRuleAssociation(
            f"{name}-container-insights",
            resource_uri=cluster.id,
            association_name=resources.CONTAINER_INSIGHTS_EXTENSION,
            data_collection_rule_id=rule.id,
            opts=child(self),
        )
        return [rule, association]

    def _reservations(
        self, name: str, label: str, plan: PlatformPlan, resource_group_name: pulumi.Input[str],
        identity: azure.managedidentity.UserAssignedIdentity,
    ) -> tuple[dict[str, pulumi.Input[str]], list[pulumi.Resource]]:
        """Each reserved pool's capacity reservation group (the stack's own, with one reservation of the
        pool's size per zone, or an existing one's id) and the cluster identity's Contributor on the
        group's resource group, which AKS requires; last, the wait for those grants to take effect.
        Returns the group id per pool name and the resources."""
        spec = plan.spec
        groups: dict[str, pulumi.Input[str]] = {}
        created: list[pulumi.Resource] = []
        scopes: dict[str, pulumi.Input[str]] = {}
        for pool in supply.reserved_pools(spec):
            reservation = pool.capacity_reservation_group
            assert reservation is not None, "reserved_pools returns pools with a group"
            if reservation.id is not None:
                groups[pool.name] = reservation.id
                group_scope = supply.resource_group_id(reservation.id)
                assert group_scope is not None, "the AKS rules check the group's id"
                scopes.setdefault(group_scope.lower(), group_scope)
                continue
            group = azure.compute.CapacityReservationGroup(
                f"{name}-{pool.name}-crg",
                **supply.reservation_group_inputs(name, pool, spec.region, resource_group_name), opts=child(self))
            reservations = [azure.compute.CapacityReservation(
                f"{name}-{reservation_name}", **inputs, opts=child(
                    self, depends_on=[group], replace_on_changes=list(supply.RESERVATION_CREATE_ONLY),
                    delete_before_replace=True))
                for reservation_name, inputs in supply.reservations_inputs(
                    name, pool, spec.region, resource_group_name).items()]
            created += [group, *reservations]
            # The pool names the group once its reservations exist: AKS skips a group without one.
            groups[pool.name] = pulumi.Output.all(group.id, *(r.id for r in reservations)).apply(lambda ids: ids[0])
            scopes.setdefault("", group.id.apply(lambda group_id: supply.resource_group_id(group_id) or unanswered(
                self, label, "Azure resource id (/subscriptions/...)", "the CapacityReservationGroup's id")))
        grants = [azure.authorization.RoleAssignment(
            f"{name}-reservation-contributor-{i}", principal_id=identity.principal_id,
            principal_type="ServicePrincipal",
            role_definition_id=then(scope, lambda found: role_definition_id(found, supply.CONTRIBUTOR_ROLE_ID) or ""),
            scope=scope, description="spotkube: AKS places the reserved pools' VMs in their capacity reservation "
            "groups as the cluster identity, which needs Contributor on the groups' resource group",
            opts=child(self)) for i, scope in enumerate(scopes.values())]
        wait = time.Sleep(f"{name}-reservation-propagation",
                          create_duration=spec.cluster.deployer.reservation_grant_wait,
                          triggers={f"grant{i}": grant.id for i, grant in enumerate(grants)},
                          opts=child(self, depends_on=[*grants, *created]))
        return groups, [*created, *grants, wait]

    def _registry_grants(self, name: str, label: str, plan: PlatformPlan,
                         cluster: azure.containerservice.ManagedCluster) -> list[pulumi.Resource]:
        """AcrPull for the kubelet identity (the identity every node pulls images as) on each registry of
        `cluster.registries`, in the registry's own subscription."""
        kubelet = self._kubelet(label, cluster)
        return [azure.authorization.RoleAssignment(
            f"{name}-acrpull-{i}", principal_id=kubelet, principal_type="ServicePrincipal",
            role_definition_id=role_definition_id(registry, supply.ACR_PULL_ROLE_ID), scope=registry,
            description="spotkube: the nodes pull images from this registry (cluster.registries)", opts=child(self))
            for i, registry in enumerate(plan.spec.cluster.registries)]

    def _checkpoint_store(self, name: str, label: str, plan: PlatformPlan, resource_group_name: pulumi.Input[str],
                          cluster: azure.containerservice.ManagedCluster) -> list[pulumi.Resource]:
        """With `training.checkpointStore`: the storage account and container the training jobs save to,
        and Storage Blob Data Contributor for the kubelet identity (what the workers' pods get tokens
        as) on that container only (`clouds/aks/checkpoints.py`)."""
        spec = plan.spec
        if spec.training.checkpoint_store is None:
            return []
        account = azure.storage.StorageAccount(
            f"{name}-checkpoints", **checkpoints.account_inputs(spec, resource_group_name),
            opts=child(self, protect=protected(spec.is_prod)))
        container = azure.storage.BlobContainer(
            f"{name}-checkpoints", **checkpoints.container_inputs(spec, resource_group_name),
            opts=child(self, depends_on=[account]))
        grant = azure.authorization.RoleAssignment(
            f"{name}-checkpoints-writer", principal_id=self._kubelet(label, cluster), principal_type="ServicePrincipal",
            role_definition_id=container.id.apply(
                lambda scope: role_definition_id(scope, checkpoints.BLOB_DATA_CONTRIBUTOR_ROLE_ID)),
            scope=container.id,
            description="spotkube: training jobs save checkpoints here (training.checkpointStore)", opts=child(self))
        return [account, container, grant]

    def _kubelet(self, label: str, cluster: azure.containerservice.ManagedCluster) -> pulumi.Output[str]:
        """The kubelet identity's object id: the identity every node pulls images and gets tokens as."""
        return cluster.identity_profile.apply(lambda profiles: _kubelet_identity(profiles) or unanswered(
            self, label, "kubelet identity object id", "the ManagedCluster's identityProfile.kubeletidentity"))

    def _cluster_role(self, label: str, cluster: azure.containerservice.ManagedCluster,
                      role_id: str) -> pulumi.Output[str]:
        """A role's definition as defined in the cluster's own subscription, read from the cluster's id. A cloud's
        id always names it; a test's plain mocks may echo another id, which leaves the role unknown."""
        return cluster.id.apply(lambda cluster_id: role_definition_id(cluster_id, role_id) or unanswered(
            self, label, "Azure resource id (/subscriptions/...)", "the ManagedCluster's id"))

    def _cluster(
        self, name: str, plan: PlatformPlan, wiring: Wiring, resource_group_name: pulumi.Input[str],
        workspace_id: pulumi.Input[str] | None, identity_id: pulumi.Input[str] | None = None,
    ) -> azure.containerservice.ManagedCluster:
        """The managed cluster with its one inline System pool, which is never renamed, and Container
        Insights' agent when logs are kept."""
        spec = plan.spec
        settings = spec.cluster
        # Restricted by address when ranges are listed: their number is plain, their values may be
        # outputs, so the deployer's egress is merged in once they resolve.
        authorized_ip_ranges = then(wiring.api_server_ranges(spec, bool(settings.authorized_ip_ranges)),
                                    lambda ranges: ranges or None)
        return azure.containerservice.ManagedCluster(
            f"{name}{resources.CLUSTER_SUFFIX}",
            **resources.cluster_inputs(plan, name, resource_group_name=resource_group_name,
                                       admin_group_object_ids=wiring.admin_group_object_ids,
                                       authorized_ip_ranges=authorized_ip_ranges, workspace_id=workspace_id,
                                       identity_id=identity_id),
            opts=child(
                self,
                protect=protected(spec.switch(settings.deletion_protection)),
                transforms=[security_concerns(self, f"AksGpuCluster {name!r}", "aks")],
                ignore_changes=list(resources.INLINE_POOL_IGNORED),
            ),
        )

    def _data_plane_rights(
        self, name: str, label: str, plan: PlatformPlan, wiring: Wiring, cluster: azure.containerservice.ManagedCluster,
    ) -> list[pulumi.Resource]:
        """Kubernetes rights for the deployer and the admin groups, and the wait until they work (last).

        With Azure RBAC for Kubernetes nobody, not even the subscription's Owner, may create an
        object until a role assignment says so, and a new assignment takes minutes to reach the API
        server. The Kubernetes provider waits for the returned resources, so the first ConfigMap is
        created only after the grants had time to propagate.

        The deployer is the stack's (`cluster.deployer.objectId` and `principalType`), never whoever
        runs Pulumi: a preview runs as the preview identity and a person may run `pulumi up` from a
        laptop, and neither may replace CI's grant (docs/identities.md).
        """
        settings = plan.spec.cluster
        deployer = settings.deployer
        assert deployer.object_id and deployer.principal_type, "the AKS rules require the deployer"
        role = self._cluster_role(label, cluster, RBAC_CLUSTER_ADMIN_ROLE_ID)
        principals: list[tuple[str, pulumi.Input[str], str]] = [
            ("deployer", deployer.object_id, deployer.principal_type),
            *((f"admins-{i}", group, "Group") for i, group in enumerate(wiring.admin_group_object_ids)),
        ]
        grants = [
            azure.authorization.RoleAssignment(
                f"{name}-rbac-{who}", principal_id=principal, principal_type=kind, role_definition_id=role,
                scope=cluster.id, opts=child(self),
            )
            for who, principal, kind in principals
        ]
        return [*grants, time.Sleep(
            f"{name}-rbac-propagation",
            create_duration=settings.deployer.grant_propagation_wait,
            triggers={f"grant{i}": grant.id for i, grant in enumerate(grants)},
            opts=child(self, depends_on=grants),
        )]

    def _drill_right(self, name: str, label: str, plan: PlatformPlan,
                     cluster: azure.containerservice.ManagedCluster) -> azure.authorization.RoleAssignment:
        """The deployer's right to evict a spot node on purpose (`cluster.deployer.drills`, drill.yml):
        the bootstrap's eviction drill role on the node resource group, where AKS keeps the scale sets and
        no other grant of the deployer reaches. The bootstrap lets the deployer assign this role only."""
        deployer = plan.spec.cluster.deployer
        scope = pulumi.Output.all(cluster.id, cluster.node_resource_group).apply(
            lambda found: node_resource_group_id(found[0], found[1])
            or unanswered(self, label, "node resource group", "the ManagedCluster's id and nodeResourceGroup"))
        return azure.authorization.RoleAssignment(
            f"{name}-drill", principal_id=deployer.object_id, principal_type=deployer.principal_type,
            role_definition_id=self._cluster_role(label, cluster, DRILL_ROLE_ID), scope=scope,
            description="spotkube deploy: evicts a spot node for the eviction drill (cluster.deployer.drills)",
            opts=child(self))

    def _priority_expander(self, name: str, plan: PlatformPlan) -> k8s.core.v1.ConfigMap:
        """Spot pools first, on-demand GPU fallbacks next: read by AKS's managed autoscaler."""
        return k8s.core.v1.ConfigMap(
            f"{name}-priority-expander",
            **resources.priority_expander(plan),
            opts=child(self, provider=self.provider),
        )


def _checked(cluster_name: str, system_pool: PoolPlan, deployed: Any, source: str) -> str:
    """`cluster_name`, or the refusal of a system pool change that AKS can't make."""
    profiles = [_profile_dict(p) for p in deployed or ()]
    problem = resources.system_pool_change_problem(system_pool, profiles, source)
    if problem:
        raise pulumi.RunError(problem)
    return cluster_name


def _kubelet_identity(profiles: Any, field: str = "object_id") -> str | None:
    """A field of the kubelet identity (`object_id` or `client_id`) from the cluster's `identityProfile`, an
    SDK object or a dict as the API spells it (`objectId`)."""
    found = (profiles or {}).get("kubeletidentity") if isinstance(profiles, Mapping) else None
    if isinstance(found, Mapping):
        head, tail = field.split("_")
        return found.get(field) or found.get(head + tail.title())
    return getattr(found, field, None)


def _profile_dict(profile: Any) -> Mapping[str, Any]:
    """A deployed agent pool profile as the API spells it, whether the SDK gave an object or a dict."""
    if isinstance(profile, Mapping):
        return resources.api_spelling(profile) if any("_" in k for k in profile) else profile
    return {"name": getattr(profile, "name", None), "vmSize": getattr(profile, "vm_size", None),
            "availabilityZones": getattr(profile, "availability_zones", None),
            "osType": getattr(profile, "os_type", None)}
