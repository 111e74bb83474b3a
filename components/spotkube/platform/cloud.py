"""What a cloud is to the neutral code: the `Cloud` base class, which each cloud's folder subclasses.

The core asks a cloud's instance (`spotkube.clouds.CLOUDS[name]`) instead of branching on its name, so
adding a cloud is one folder and one registry line (docs/architecture.md, "Adding a cloud").
"""

from __future__ import annotations

import functools
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import KW_ONLY, field, replace
from importlib import import_module
from importlib.resources.abc import Traversable
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from spotkube.platform.addons.device_plugin import ManagedDevicePlugin
from spotkube.platform.component_names import ComponentNaming
from spotkube.platform.contract import (
    ACCELERATOR_LABEL,
    INTERRUPTIBLE,
    NO_ACCELERATOR,
    POOL_LABEL,
    ROLE_LABEL,
    Capacity,
    CloudLabels,
    GpuSharing,
    PoolContract,
    Taint,
)
from spotkube.platform.cost.fixed import FixedItem, FixedPriceTable
from spotkube.platform.cost.prices import CloudPricing
from spotkube.platform.errors import Problem
from spotkube.platform.maintenance import UpgradeReader
from spotkube.platform.plan_scope import once_about
from spotkube.platform.posture import ClusterPosture, Setting
from spotkube.platform.preflight import CloudPreflight
from spotkube.platform.quota import PoolDemand, QuotaPlan
from spotkube.platform.records import NOT_IN_JSON, OMITTED_WHEN_NONE, camel_json, record
from spotkube.platform.spec import GpuPool, GpuSpec, MaintenanceWindow, PlatformSpec
from spotkube.platform.startup import ImageDelivery, StartupFigures

if TYPE_CHECKING:
    # What a cloud's commands need: its module loads with the first command that asks, never with a plan.
    from spotkube.platform.command_support import CommandSupport

#: How a cloud's GPU nodes get their device plugin: a DaemonSet spotkube deploys, or the cloud's own.
PluginMode = Literal["daemonset", "cloud-managed"]
RuleOutput = Iterator[Problem]
#: A GPU pool's GPU as its machine and settings imply it, or the sentence saying what is wrong.
GpuResolution = tuple[GpuSpec | None, str | None]


@record
class PoolGpu:
    """A registered pool's GPUs: the type its accelerator label names, per node, and for a size that gets a
    part of one GPU, that part ("1/6")."""

    type: str
    count: int
    share: str | None = field(default=None, metadata=OMITTED_WHEN_NONE)


@record
class RegisteredPool:
    """One node pool as the program registers it, read by each cloud from a resource's inputs: the plan's
    tables, cost, quota, fallback and startup and the policy pack all read this one record, so they never
    disagree about what a registration asks for. `capacity` comes from the cloud fields (what is really
    requested), not from spotkube's label (which only claims it); `name` and `role` from the contract's
    labels; `cloud_name` differs for a versioned control-plane pool (`with_contract` completes the rest).
    """

    name: str = field(init=False)
    cloud_name: str
    role: str = field(init=False)
    capacity: Capacity
    #: The machine as registered ("" when the registration names none).
    machine: str
    gpu: PoolGpu | None = field(init=False)
    #: The autoscaling limits as registered (None: not set, or not a number).
    min: int | None
    max: int | None
    #: The taints as registered (`key=value:Effect`).
    taints: tuple[str, ...]
    labels: Mapping[str, str]
    #: A spot pool's eviction policy and max price (-1: up to on-demand), as registered; None on other pools.
    eviction_policy: str | None
    max_price: float | None
    zones: tuple[str, ...]
    zone_labels: tuple[str, ...] | None = field(default=None, metadata=OMITTED_WHEN_NONE)
    #: How the GPUs are shared, in words, as the registration asks for it (None: whole GPUs).
    gpu_sharing: str | None = None
    #: Whether the registration makes the nodes obtainable only through provisioning requests (GKE's queued
    #: provisioning): the autoscaler's fallback never grows such a pool.
    queued: bool = False
    #: How long one node may run before the cloud deletes it, in seconds, as registered (None: no limit).
    max_run_seconds: int | None = None
    #: How the nodes get container images beyond a plain pull, in words, as registered (streaming, a
    #: disk of preloaded images); None: each node pulls them.
    images: str | None = None
    _: KW_ONLY
    #: Which registration declares the pool, for the policy's messages (`AgentPool 'spotkube-gpu'`).
    where: str = field(metadata=NOT_IN_JSON)
    #: The GPUs of one node as the cloud's fields or catalog count them, and whether the pool has any
    #: (by its machine, its accelerators or a GPU label).
    gpu_count: int = field(metadata=NOT_IN_JSON)
    has_gpu: bool = field(metadata=NOT_IN_JSON)
    system: bool = field(metadata=NOT_IN_JSON)
    #: The registered taints that parse, for the rules that look for one.
    parsed_taints: frozenset[Taint] = field(metadata=NOT_IN_JSON)
    #: The size to use instead, when the machine is retired.
    retired_in_favour_of: str | None = field(default=None, metadata=NOT_IN_JSON)
    #: Extra nodes an upgrade adds, as registered: a count ("1") or a percent of the pool ("33%"); None
    #: leaves the cloud's default. The quota's surge counts it.
    max_surge: str | None = field(default=None, metadata=NOT_IN_JSON)
    #: The pool's contract, when the stack exports it (`with_contract`): how its GPUs are shared.
    contract: PoolContract | None = field(default=None, metadata=NOT_IN_JSON)
    #: The part of one physical GPU each of the node's GPUs is ("1/6"), for partitioned sizes.
    gpu_share: str | None = field(default=None, metadata=NOT_IN_JSON)

    def __post_init__(self) -> None:
        accelerator = self.labels.get(ACCELERATOR_LABEL, NO_ACCELERATOR)
        object.__setattr__(self, "name", self.labels.get(POOL_LABEL, self.cloud_name))
        object.__setattr__(self, "role", self.labels.get(ROLE_LABEL, "unknown"))
        object.__setattr__(self, "gpu", None if accelerator == NO_ACCELERATOR
                           else PoolGpu(accelerator, self.gpu_count, self.gpu_share))

    @property
    def interruptible(self) -> bool:
        return self.capacity in INTERRUPTIBLE

    @property
    def gpu_type(self) -> str | None:
        return self.gpu.type if self.gpu else None

    @property
    def sharing(self) -> GpuSharing | None:
        """How the contract shares the pool's GPUs (what one node's price is split over)."""
        return self.contract.sharing if self.contract else None

    def to_json(self) -> dict[str, Any]:
        """The pool as the plan's JSON shows it: its fields in order, in camelCase (`camel_json`)."""
        shown: dict[str, Any] = camel_json(self)
        return shown

    def with_contract(self, pool_contract: PoolContract | None, gpu_share: str | None) -> RegisteredPool:
        """The pool with what the plan knows beyond its registration: its contract, when the stack exports
        it (every node label, the zones' labels, the GPUs of a node the cloud's fields don't count), and
        the part of a GPU its machine's GPUs are."""
        if pool_contract is None:
            return replace(self, labels=dict(sorted(self.labels.items())), gpu_share=gpu_share)
        return replace(self, labels=pool_contract.to_json()["labels"], zone_labels=tuple(pool_contract.zones),
                       gpu_count=self.gpu_count or pool_contract.gpu_count, contract=pool_contract,
                       gpu_share=gpu_share)


def node_count(value: Any) -> int | None:
    """A registered node count as a number of nodes (None when unset, or not a number: a wired output)."""
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def whole(value: Any) -> int:
    """A registered count or size as a whole number; 0 when unset or not a number (the engine hands numbers
    over as floats)."""
    return node_count(value) or 0


#: (type token, resource name, inputs) -> the pools that registration declares.
PoolReader = Callable[[str, str, Mapping[str, Any]], list[RegisteredPool]]


def read_once_per_plan(read: PoolReader) -> PoolReader:
    """A cloud's pool reader that reads each registration once per plan (`plan_scope`): the plan's
    pool table, its startup, preflight, upgrades and each policy rule read the same registrations."""

    @functools.wraps(read)
    def reader(type_token: str, name: str, inputs: Mapping[str, Any]) -> list[RegisteredPool]:
        return list(once_about(inputs, (read, type_token, name), lambda: tuple(read(type_token, name, inputs))))

    return reader


@record
class AutoscalerFacts:
    """How a cluster's autoscaler chooses between pools, as the registered resources tell it
    (review/fallback.py turns it into each GPU type's fallback order and worst case)."""

    #: What decides the order, in words (e.g. "priority expander (ConfigMap cluster-autoscaler-...)").
    ordered_by: str
    #: Priority expander tiers (priority -> regexes over node-group names), or None: no ranking.
    priorities: Mapping[int, Sequence[str]] | None
    #: A pool's cloud name -> a node-group name the tiers' regexes are matched against.
    node_group: Callable[[str], str] | None
    #: Seconds spent on one pool that gets no node before the next is tried; None when unstated.
    give_up_seconds: int | None
    #: Seconds before the autoscaler first acts on a pending pod.
    first_look_seconds: int
    #: The worst case's formula, with the values it was computed from.
    formula: str
    #: Why the order or the timing can't be trusted, if so.
    caveat: str | None = None
    #: What bounds the wait on a tier of each capacity before the next tier is tried, in words (the
    #: fallback shows it beside each tier); a capacity not named has no stated bound.
    tier_bounds: Mapping[str, str] = field(default_factory=dict)


#: Registered resources (type, name, inputs) and the stack's settings -> what they cost a month with no
#: step running, besides the nodes (the idle floor's fixed lines, `clouds/<cloud>/fixed_costs.py`).
FixedCostReader = Callable[[Sequence[tuple[str, str, Mapping[str, Any]]], PlatformSpec], list[FixedItem]]

#: Registered resources (type, name, inputs) -> the autoscaler's facts, or None without a cluster.
AutoscalerReader = Callable[[Sequence[tuple[str, str, Mapping[str, Any]]]], AutoscalerFacts | None]


@record
class TargetKey:
    """One key a pool component (`AksGpuNodePool`) takes to find the cluster it adds its pool to."""

    name: str
    #: Its type in the generated args (`Input[str]` where another resource's output may give it).
    annotation: str
    description: str
    #: Where its value goes in the one-pool platform the pool is validated as (`region`,
    #: `cluster.project`); None for a key only the component reads (the cluster's id).
    spec_key: str | None = None
    required: bool = True


@record
class NodePoolFacts:
    """The cloud's pool component, which adds one pool to a cluster spotkube may not have made."""

    #: Its class, as `spotkube` exports it (`AksGpuNodePool`).
    component: str
    #: The keys that say which cluster the pool joins, before the pool's own (`cluster_id`, `region`...).
    target: tuple[TargetKey, ...]


class Cloud(ABC):
    """One cloud, as the cloud-neutral code asks it: each cloud's `clouds/<cloud>/profile.py` subclasses
    it with the cloud's facts (class attributes) and its rules and readers (methods). A fact without a
    value here must be given by the subclass (`__init_subclass__` names any left out); a method with a
    body here is what a cloud without the feature answers."""

    # --- What the cloud is --------------------------------------------------------------------------
    #: The cloud's name in a stack (`cloud: aks`) and how messages name it (AKS).
    cloud: ClassVar[str]
    title: ClassVar[str]
    #: What the cloud does with node labels and taints by itself (`clouds/<cloud>/labels.py`).
    labels: ClassVar[CloudLabels]
    #: The regions spotkube knows (a newer one needs `cluster.allowUnlistedRegion`), and what a region
    #: looks like on this cloud, for the messages.
    regions: ClassVar[frozenset[str]]
    region_examples: ClassVar[str]
    #: Where a bare stack plans when this cloud is the project's default (the registry's first): Pulumi.yaml's
    #: default region.
    default_region: ClassVar[str | None] = None
    #: Machines of the system and platform pools when a stack names none.
    default_machine: ClassVar[str]
    channels: ClassVar[tuple[str, ...]]
    default_channel: ClassVar[str]
    #: A pinned `cluster.kubernetesVersion` as the cloud's API takes it, and in words.
    version_pattern: ClassVar[str]
    version_accepted: ClassVar[str]
    #: How the price table names the cloud, which rows it can have, and how it bills GPUs.
    pricing: ClassVar[CloudPricing]
    #: The cloud's shipped part of the GPU catalog (`clouds/<cloud>/catalog.json`); None when it ships none.
    catalog_file: ClassVar[Traversable | None] = None
    #: The maintenance window a stack gets when it declares none.
    default_maintenance_window: ClassVar[MaintenanceWindow | None] = None
    #: Seconds a workload pod really gets to stop when a spot node is reclaimed: the default of the
    #: pipeline pods' terminationGracePeriodSeconds (`kubeflow.stepGracePeriodSeconds`).
    workload_notice_seconds: ClassVar[int] = 30
    #: Kubeflow's UI can link a step to the cloud's logs (KFP reads the cluster's name from GKE's
    #: metadata server, which only GKE nodes answer).
    kfp_cloud_logs_link: ClassVar[bool] = False
    #: The cloud's sourced figures for the time from a pending GPU step to a running one
    #: (`clouds/<cloud>/startup.json`); None where spotkube has none.
    startup_figures: ClassVar[Callable[[], StartupFigures] | None] = None
    #: The ProvisioningRequest class the cloud's autoscaler serves for pools with queued provisioning (all
    #: of a step's nodes at once); None: the cloud offers none.
    provisioning_request_class: ClassVar[str | None] = None
    #: The taint key the cloud puts on nodes that come through those requests, which a pod consuming one
    #: tolerates (any value, NoSchedule); None: they carry none of their own.
    provisioning_request_taint: ClassVar[str | None] = None
    #: The module whose `COMMANDS` (`clouds/<cloud>/commands.py`) serves spotkube's commands: named, not
    #: held, so a plan never loads it.
    commands_module: ClassVar[str]
    #: Whose cloud it is, in prose ("an Azure region"), and what an identity is called there (the
    #: principal `spotkube doctor --deploy` takes): the words only the cloud's folder spells.
    vendor: ClassVar[str]
    principal: ClassVar[str]

    # --- Its machines, from its part of the catalog (read when asked: a refreshed catalog may name more)
    #: Ways besides MIG this cloud shares one GPU among pods (GKE: time-sharing, MPS), and how many pods
    #: at most.
    shared_gpu_modes: ClassVar[tuple[str, ...]] = ()
    max_clients_per_gpu: ClassVar[int] = 0
    #: The device plugin the cloud runs itself on its GPU nodes; None when spotkube deploys NVIDIA's.
    managed_device_plugin: ClassVar[ManagedDevicePlugin | None] = None

    @abstractmethod
    def machine_arch(self, machine: str) -> str:
        """The CPU architecture (amd64, arm64) of a machine's nodes."""

    @abstractmethod
    def machine_gpu(self, machine: str) -> tuple[str, int] | None:
        """The GPU a machine carries by itself (type, count), or None."""

    @abstractmethod
    def gpu_types(self) -> frozenset[str]:
        """Every GPU type the cloud's catalog knows, in spotkube's neutral vocabulary."""

    def knows_machine(self, machine: str) -> bool:
        """Whether a GPU pool's machine is one the cloud's rules and GPU catalog know; a GPU pool on any
        other machine got its GPU from the pool's declaration, and the plan warns about it."""
        return True

    def mig_profiles(self, gpu_type: str) -> Mapping[str, int]:
        """The MIG profiles a GPU type splits into on this cloud, each with its instances per GPU."""
        return {}

    @property
    def device_plugin_mode(self) -> PluginMode:
        """Whether spotkube deploys NVIDIA's plugin as a DaemonSet, or the cloud runs its own."""
        return "daemonset" if self.managed_device_plugin is None else "cloud-managed"

    # --- How a stack of the cloud is read and checked, before anything is registered ----------------
    #: The cloud's spec (`spotkube.clouds.<cloud>.spec`): the shared models with the cloud's own fields.
    #: `validation.parse_spec` validates a stack of this cloud with it; the reference, the stack schema
    #: and the component's args are generated from it.
    spec_model: ClassVar[type[PlatformSpec]]
    #: What this cloud offers in place of another cloud's setting, by the setting's key (or the key of
    #: the section holding it), for the message that refuses the setting.
    instead_of: ClassVar[Mapping[str, str]] = {}

    @abstractmethod
    def check(self, spec: PlatformSpec) -> RuleOutput:
        """The cloud's own validation rules, run after the shared ones."""

    @abstractmethod
    def gpu_of(self, pool: GpuPool) -> GpuResolution:
        """A GPU pool's GPU from its machine and settings."""

    def pool_defaults(self, spec: PlatformSpec, pool: GpuPool) -> GpuPool:
        """Defaults that follow from a GPU pool's resolved GPU (GKE: the zones that offer it)."""
        return pool

    def deploy_rules(self, spec: PlatformSpec) -> RuleOutput:
        """What deploying a platform needs beyond its settings' own rules (AKS: who deploys), checked
        where a stack or a component is read for `pulumi up` (`validation.deployable`)."""
        return iter(())

    # --- Its registered resources -------------------------------------------------------------------
    #: The cluster component's class, as `spotkube` exports it (AksGpuCluster), and what its name
    #: becomes in the cloud (`clouds/<cloud>/resources.py`), checked before anything is registered.
    component: ClassVar[str]
    component_naming: ClassVar[ComponentNaming]
    #: The pool component, which the cluster component builds its pools with too.
    node_pool: ClassVar[NodePoolFacts]
    #: How the cluster's autoscaler orders pools and how long it tries one (the plan's fallback).
    read_autoscaler: ClassVar[AutoscalerReader | None] = None
    #: When and how the cloud upgrades each registered worker pool (the plan's posture, the policy pack).
    read_upgrades: ClassVar[UpgradeReader | None] = None
    #: What stands between a pending GPU step and a running one, as registered: each pool's capacity
    #: reservation and image streaming, the nodes' registry grants (the plan's GPU supply rows).
    read_supply: ClassVar[Callable[[Sequence[tuple[str, str, Mapping[str, Any]]]], Sequence[Setting]] | None] = None
    #: The VMs a capacity reservation the stack creates holds for each pool, by pool name, as registered
    #: (`pipeline-check` counts them as a tier a TrainJob's gang is sure to find).
    read_reserved_nodes: ClassVar[
        Callable[[Sequence[tuple[str, str, Mapping[str, Any]]]], Mapping[str, int]] | None] = None
    #: The URI of a checkpoint store named `training.checkpointStore.name`, which the cluster component creates.
    checkpoint_location: ClassVar[Callable[[str], str]]
    #: Input paths, per type token, that the cloud fixes at creation although no `replaceOnChanges` says
    #: so: changing one replaces the resource (`plan --diff` reports it). A path covers the paths under
    #: it, except those listed in `updatable_in_place`.
    create_only: ClassVar[Mapping[str, tuple[str, ...]]] = {}
    updatable_in_place: ClassVar[Mapping[str, tuple[str, ...]]] = {}

    @abstractmethod
    def read_pools(self, type_token: str, name: str, inputs: Mapping[str, Any]) -> list[RegisteredPool]:
        """The node pools a registration (type token, resource name, inputs) declares."""

    @abstractmethod
    def read_posture(
        self, type_token: str, name: str, inputs: Mapping[str, Any], protect: bool,
    ) -> ClusterPosture | None:
        """The cluster resource's security settings, for the plan's posture section (None for other resources)."""

    def image_delivery(self, type_token: str, inputs: Mapping[str, Any]) -> ImageDelivery:
        """How a registered pool's nodes get the step's image: pulled, streamed or preloaded."""
        return "pull"

    def offline_outputs(self, type_token: str, name: str, inputs: Mapping[str, Any]) -> Mapping[str, Any]:
        """Under Pulumi's mocks (`clouds/<cloud>/offline.py`): the outputs the cloud would compute for a
        registered resource that a program reads, as obviously fake values shaped like the real ones."""
        return {}

    def offline_answer(self, token: str) -> Mapping[str, Any] | None:
        """The mocks' answer to a provider function the component calls (None: not this cloud's function)."""
        return None

    def offline_id(self, type_token: str, name: str, inputs: Mapping[str, Any]) -> str | None:
        """The id the cloud gives a registered resource where programs read it; None where any id does."""
        return None

    def replaces(self, type_token: str, path: str) -> bool:
        """Whether changing the input at `path` (as `a.b[0].c`) makes the cloud replace the resource."""
        return (any(covers(p, path) for p in self.create_only.get(type_token, ()))
                and not any(covers(p, path) for p in self.updatable_in_place.get(type_token, ())))

    # --- What the judges (`review/`) ask it about a program it registered -----------------------------
    #: The cloud's part of the deploy preflight's rules (`clouds/<cloud>/preflight.py`).
    preflight: ClassVar[CloudPreflight]
    #: How to refresh a missing price, for the plan's warning; None when the cloud has no such command.
    price_refresh: ClassVar[Callable[[str, str], str] | None] = None
    #: The fixed monthly items of the registered resources (cluster fee, NAT, IPs, disks...) and the
    #: cloud's sourced table of their prices; None where spotkube doesn't know them.
    fixed_items: ClassVar[FixedCostReader | None] = None
    fixed_prices: ClassVar[Callable[[], FixedPriceTable] | None] = None
    #: The quotas the pools need at full scale (docs/quota.md); the mapping names machines' quota
    #: families the cloud reported, for machines the cloud's own table lacks.
    quota_plan: ClassVar[Callable[[Sequence[PoolDemand], Mapping[str, str]], QuotaPlan] | None] = None

    @abstractmethod
    def sign_in(self, spec: PlatformSpec) -> str:
        """How the stack's deployer signs in to the API server, for the plan's preflight."""

    @abstractmethod
    def login_problem(self, name: str, exec_: Mapping[str, Any]) -> str | None:
        """Why an exec user of a kubeconfig would wait for a person, if it runs this cloud's plugin
        (`clouds/<cloud>/kubeconfig.py`), for the preflight's `credentials` rule."""

    def logs_cost_basis(self, spec: PlatformSpec) -> str | None:
        """The basis the cluster's log backend is billed on, as the plan states it (None without one)."""
        return None

    @functools.cached_property
    def commands(self) -> CommandSupport:
        """The cloud's `CommandSupport`, its module imported the first time a command asks."""
        found: CommandSupport = import_module(self.commands_module).COMMANDS
        return found

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """A cloud that leaves a fact without a value is refused when it is defined, naming the facts."""
        super().__init_subclass__(**kwargs)
        missing = [name for name in Cloud.__annotations__ if not hasattr(cls, name)]
        if missing:
            raise TypeError(f"the cloud {cls.__name__} gives no {', '.join(missing)}")


def covers(prefix: str, path: str) -> bool:
    """Whether a property path such as `replaceOnChanges` names (`a.b`, or `*` for all) covers the
    input at `path` (`a.b[0].c`), as Pulumi matches them."""
    return prefix == "*" or path == prefix or path.startswith((prefix + ".", prefix + "["))


# --- Reading registered inputs --------------------------------------------------------------------


def mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def items(value: Any) -> Sequence[Any]:
    return value if isinstance(value, Sequence) and not isinstance(value, str | bytes) else ()


def first(values: Mapping[str, Any], *keys: str) -> Any:
    """The first of `keys` that is set."""
    return next((values[k] for k in keys if values.get(k) is not None), None)


#: Every cloud spotkube knows, by name: `spotkube.clouds.CLOUDS`. The cloud-neutral code takes it as an
#: argument, so it never imports a cloud.
Clouds = Mapping[str, Cloud]
