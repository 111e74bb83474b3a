"""What a cloud profile is: everything spotkube knows about one cloud, behind one shape.

The rest of the core asks a profile instead of branching on the cloud's name, so adding a cloud
means one new profile (and one new shell), not edits across the code base. Labels and taints are
the exception on purpose: `contract` is the one module that spells them, for every cloud, so the
scheduling contract can be read in one place (docs/architecture.md, "One profile per cloud").
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import KW_ONLY, field, replace
from importlib import import_module
from importlib.resources.abc import Traversable
from typing import TYPE_CHECKING, Any, Literal

from spotkube.platform.addons.device_plugin import ManagedDevicePlugin
from spotkube.platform.component_names import ComponentNaming
from spotkube.platform.contract import (
    ACCELERATOR_LABEL,
    INTERRUPTIBLE,
    NO_ACCELERATOR,
    POOL_LABEL,
    ROLE_LABEL,
    Capacity,
    Cloud,
    GpuSharing,
    PoolContract,
    Taint,
)
from spotkube.platform.cost.fixed import FixedItem, FixedPriceTable
from spotkube.platform.cost.prices import CloudPricing
from spotkube.platform.errors import Problem
from spotkube.platform.kubeconfigs import ExecUserCheck
from spotkube.platform.maintenance import UpgradeReader
from spotkube.platform.plan_scope import once_about
from spotkube.platform.posture import PostureReader, Setting
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
    """One node pool as the program registers it: the one read-side record of a pool. Each cloud's
    reader makes it from a registered resource's inputs, as the cloud API sees them; the plan's pool table
    and JSON (`camel_json`, in field order), its cost, quota, fallback and startup, and the policy pack's
    guardrails all read it, so they can never disagree about what a registration asks the cloud for.

    `capacity` comes from the cloud fields (what is really requested), not from spotkube's capacity
    label (which only claims it). `name` and `role` come from the contract's labels, which every
    spotkube pool carries; `cloud_name` is the name the cloud knows it by, which differs for a
    control-plane pool whose name is versioned. The plan completes the record with the pool's contract
    when the stack exports it (`with_contract`): `labels` then holds every node label (declared,
    cloud-added, well-known) and `zone_labels` the zone label's values.
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
class CloudFacts:
    """What the cloud is and offers, as plain data: where it runs, which versions and defaults it has.
    Nothing here judges a stack; the rules and the judges read it."""

    #: The regions spotkube knows (a newer one needs `cluster.allowUnlistedRegion`), and what a
    #: region looks like on this cloud, for the messages.
    regions: frozenset[str]
    region_examples: str
    #: Machines of the system and platform pools when a stack names none.
    default_machine: str
    channels: tuple[str, ...]
    default_channel: str
    #: A pinned `cluster.kubernetesVersion` as the cloud's API takes it, and in words.
    version_pattern: str
    version_accepted: str
    #: How the price table names the cloud, which rows it can have, and how it bills GPUs.
    pricing: CloudPricing
    #: The cloud's shipped part of the GPU catalog (`clouds/<cloud>/catalog.json`); None when it ships none.
    catalog_file: Traversable | None = None
    #: The maintenance window a stack gets when it declares none.
    default_maintenance_window: MaintenanceWindow | None = None
    #: Seconds a workload pod really gets to stop when a spot node is reclaimed: the default of the
    #: pipeline pods' terminationGracePeriodSeconds (`kubeflow.stepGracePeriodSeconds`).
    workload_notice_seconds: int = 30
    #: Kubeflow's UI can link a step to the cloud's logs (KFP reads the cluster's name from GKE's
    #: metadata server, which only GKE nodes answer).
    kfp_cloud_logs_link: bool = False
    #: The cloud's sourced figures for the time from a pending GPU step to a running one
    #: (`clouds/<cloud>/startup.json`); None where spotkube has none.
    startup_figures: Callable[[], StartupFigures] | None = None
    #: The ProvisioningRequest class the cloud's autoscaler serves for pools with queued provisioning (all
    #: of a step's nodes at once); None: the cloud offers none.
    provisioning_request_class: str | None = None


@record
class MachineFacts:
    """What the cloud's machines carry: their GPUs, architecture and how a GPU can be shared, from the
    cloud's part of the catalog (read when asked, because a user's refreshed catalog may name more)."""

    #: The CPU architecture (amd64, arm64) of a machine's nodes.
    arch: Callable[[str], str]
    #: The GPU a machine carries by itself (type, count), or None.
    gpu: Callable[[str], tuple[str, int] | None]
    #: Every GPU type the cloud's catalog knows, in spotkube's neutral vocabulary.
    gpu_types: Callable[[], frozenset[str]]
    #: Whether a GPU pool's machine is one the cloud's rules and GPU catalog know; a GPU pool on any
    #: other machine got its GPU from the pool's declaration, and the plan warns about it.
    known: Callable[[str], bool] = field(default=lambda machine: True)
    #: The MIG profiles a GPU type splits into on this cloud, each with its instances per GPU (none
    #: for a GPU without MIG).
    mig_profiles: Callable[[str], Mapping[str, int]] = field(default=lambda gpu_type: {})
    #: Ways besides MIG this cloud shares one GPU among pods (GKE: time-sharing, MPS), and how many
    #: pods at most.
    shared_gpu_modes: tuple[str, ...] = ()
    max_clients_per_gpu: int = 0
    #: The device plugin the cloud runs itself on its GPU nodes; None when spotkube deploys NVIDIA's.
    managed_device_plugin: ManagedDevicePlugin | None = None

    @property
    def device_plugin_mode(self) -> PluginMode:
        """Whether spotkube deploys NVIDIA's plugin as a DaemonSet, or the cloud runs its own."""
        return "daemonset" if self.managed_device_plugin is None else "cloud-managed"


@record
class SpecRules:
    """How a stack of the cloud is read and checked (`validation.parse_spec`), before anything is
    registered."""

    #: The cloud's spec (`spotkube.clouds.<cloud>.spec`): the shared models with the cloud's own
    #: fields. `validation.parse_spec` validates a stack of this cloud with it; the reference, the
    #: stack schema and the component's args are generated from it.
    spec_model: type[PlatformSpec]
    #: The cloud's own validation rules, run after the shared ones.
    check: Callable[[PlatformSpec], RuleOutput]
    #: A GPU pool's GPU from its machine and settings.
    gpu_of: Callable[[GpuPool], GpuResolution]
    #: What this cloud offers in place of another cloud's setting, by the setting's key (or the key
    #: of the section holding it), for the message that refuses the setting. Which settings belong to
    #: another cloud is found in the other specs, not listed here.
    instead_of: Mapping[str, str] = field(default_factory=dict)
    #: Defaults that follow from a GPU pool's resolved GPU (GKE: the zones that offer it).
    pool_defaults: Callable[[PlatformSpec, GpuPool], GpuPool] = field(default=lambda spec, pool: pool)
    #: What deploying a platform needs beyond its settings' own rules (AKS: who deploys), checked
    #: where a stack or a component is read for `pulumi up` (`validation.deployable`).
    deploy_rules: Callable[[PlatformSpec], RuleOutput] = field(default=lambda spec: iter(()))


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


@record
class ResourceFacts:
    """The cloud's registered resources: what the component is called, how its resources read back,
    which changes replace them, and what the cloud computes for them under Pulumi's mocks."""

    #: The cluster component's class, as `spotkube` exports it (AksGpuCluster), and what its name
    #: becomes in the cloud (`clouds/<cloud>/resources.py`), checked before anything is registered.
    component: str
    component_naming: ComponentNaming
    #: The pool component, which the cluster component builds its pools with too.
    node_pool: NodePoolFacts
    read_pools: PoolReader
    #: The cluster resource's security settings, for the plan's posture section.
    read_posture: PostureReader
    #: How the cluster's autoscaler orders pools and how long it tries one (the plan's fallback).
    read_autoscaler: AutoscalerReader | None = None
    #: When and how the cloud upgrades each registered worker pool (the plan's posture, the policy pack).
    read_upgrades: UpgradeReader | None = None
    #: Input paths, per type token, that the cloud fixes at creation although no `replaceOnChanges`
    #: says so: changing one replaces the resource (`plan --diff` reports it). A path covers the
    #: paths under it, except those listed in `updatable_in_place`.
    create_only: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    updatable_in_place: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: How a registered pool's nodes get the step's image (type token, inputs): pulled, streamed or preloaded.
    image_delivery: Callable[[str, Mapping[str, Any]], ImageDelivery] = field(default=lambda token, inputs: "pull")
    #: What stands between a pending GPU step and a running one, as registered: each pool's capacity
    #: reservation and image streaming, the nodes' registry grants (the plan's GPU supply rows).
    read_supply: Callable[[Sequence[tuple[str, str, Mapping[str, Any]]]], Sequence[Setting]] | None = None
    #: The stand-in for the cloud under Pulumi's mocks (`clouds/<cloud>/offline.py`, answered by
    #: `spotkube.testing.SpotkubeMocks` and the offline plan): the outputs the cloud computes for a
    #: registered resource (type token, resource name, inputs) that the component, or a consumer's
    #: program wiring its own resources into it, reads; and the answer to a provider function the
    #: component calls (None: not this cloud's function). Obviously fake values, shaped like the real ones.
    offline_outputs: Callable[[str, str, Mapping[str, Any]], Mapping[str, Any]] = field(
        default=lambda token, name, inputs: {})
    offline_answer: Callable[[str], Mapping[str, Any] | None] = field(default=lambda token: None)
    #: The id the cloud gives a registered resource where programs read it (type token, name, inputs);
    #: None where any id does.
    offline_id: Callable[[str, str, Mapping[str, Any]], str | None] = field(
        default=lambda token, name, inputs: None)

    def replaces(self, type_token: str, path: str) -> bool:
        """Whether changing the input at `path` (as `a.b[0].c`) makes the cloud replace the resource."""
        return (any(covers(p, path) for p in self.create_only.get(type_token, ()))
                and not any(covers(p, path) for p in self.updatable_in_place.get(type_token, ())))


@record
class ReviewFacts:
    """What the judges (`review/`) ask the cloud about a program it registered: how its deployer signs
    in and the cloud's preflight rules, what its resources cost, and which quotas its pools need."""

    #: How the stack's deployer signs in to the API server, for the plan's preflight.
    sign_in: Callable[[PlatformSpec], str]
    #: Why an exec user of a kubeconfig would wait for a person, if it runs this cloud's plugin
    #: (`clouds/<cloud>/kubeconfig.py`), for the preflight's `credentials` rule.
    login_problem: ExecUserCheck
    #: The cloud's part of the deploy preflight's rules (`clouds/<cloud>/preflight.py`).
    preflight: CloudPreflight
    #: How to refresh a missing price, for the plan's warning; None when the cloud has no such command.
    price_refresh: Callable[[str, str], str] | None = None
    #: The basis the cluster's log backend is billed on, as the plan states it (None without one).
    logs_cost_basis: Callable[[PlatformSpec], str | None] = field(default=lambda spec: None)
    #: The fixed monthly items of the registered resources (cluster fee, NAT, IPs, disks...) and the
    #: cloud's sourced table of their prices; None where spotkube doesn't know them.
    fixed_items: FixedCostReader | None = None
    fixed_prices: Callable[[], FixedPriceTable] | None = None
    #: The quotas the pools need at full scale (docs/quota.md); the mapping names machines' quota
    #: families the cloud reported, for machines the profile's own table lacks.
    quota_plan: Callable[[Sequence[PoolDemand], Mapping[str, str]], QuotaPlan] | None = None


@record
class CloudProfile:
    """One cloud's facts, rules, resources, review and commands, as the core uses them: each group
    answers one kind of question, so a reader (or a new cloud) finds a field by what it is for."""

    cloud: Cloud
    #: How messages name the cloud (AKS, GKE).
    title: str
    facts: CloudFacts
    machines: MachineFacts
    rules: SpecRules
    resources: ResourceFacts
    review: ReviewFacts
    #: The module whose `COMMANDS` (a `CommandSupport`) says what spotkube's commands do on the cloud
    #: (`clouds/<cloud>/commands.py`): named, not held, so a plan never loads what only commands need.
    commands_module: str

    @property
    def commands(self) -> CommandSupport:
        """The cloud's `CommandSupport`, its module imported the first time a command asks."""
        return command_support(self.commands_module)


@functools.cache
def command_support(module: str) -> CommandSupport:
    """A cloud's `CommandSupport`, from the module a profile names (imported once)."""
    found: CommandSupport = import_module(module).COMMANDS
    return found


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
Clouds = Mapping[str, CloudProfile]
