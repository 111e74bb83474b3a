"""The typed, validated description of one platform, built from stack config or component args.

Validated before any resource is registered, so a mistake reads "which file, which key, what was wrong
and what is accepted". Pydantic checks single fields; the cloud's rules run afterwards (`validation`),
so every problem is reported at once. These are the models every cloud shares; each cloud's spec
(`spotkube.clouds.<cloud>.spec`) extends them, so a stack accepts only its cloud's settings.
"""

from __future__ import annotations

import datetime
import ipaddress
import re
import typing
from collections.abc import Iterator, Mapping, Sequence
from typing import Annotated, Any, Literal, TypeVar
from urllib.parse import urlsplit

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    Strict,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic.alias_generators import to_camel

from spotkube.platform.contract import KUEUE_LOCAL_QUEUE, Taint
from spotkube.platform.errors import Problem, SpecError
from spotkube.platform.input_messages import PATTERN_WORDS, KeyStyle, cut, describe, python_path, shown
from spotkube.platform.kubernetes_syntax import key_problem, value_problem
from spotkube.platform.records import record
from spotkube.platform.warnings import ID_PATTERN as WARNING_ID_PATTERN

CONFIG_NAMESPACE = "spotkube"
MAX_NODES = 1000
#: What an environment's and a region's name may look like, on every cloud (each cloud checks its
#: regions further).
ENVIRONMENT_PATTERN = r"^[a-z][a-z0-9-]{0,15}$"
REGION_PATTERN = r"^[a-z][a-z0-9-]+$"
PATTERN_WORDS[ENVIRONMENT_PATTERN] = ("1 to 16 lowercase letters, digits and hyphens, starting with a letter, "
                                      "e.g. dev, staging or prod")
PATTERN_WORDS[REGION_PATTERN] = "lowercase letters, digits and hyphens, starting with a letter, e.g. eastus"


def without_credentials(value: Any, key: str) -> Any:
    """Refuse a location that carries a credential (`user:token@`, `?token=`), without echoing it: the
    value would be registered as a plain input, shown by every plan and kept in the state. Pulling
    from a private repository or registry takes a credential helper or an image pull secret instead."""
    if not isinstance(value, str):
        return value
    parts = urlsplit(value if "://" in value else f"//{value}")
    if "@" in parts.netloc or parts.query or parts.fragment:
        host = parts.netloc.rpartition("@")[2]
        raise ValueError(f"{'https://' if value.startswith('https://') else ''}***@{host}/... carries a credential "
                         f"or query, which spotkube would register in plain text and print in every plan; give {key} "
                         "without user, password, token or query, and let git's credential helper (or an image pull "
                         "secret) supply the credential")
    return value


class _Model(BaseModel):
    """Shared settings: camelCase in stack files, snake_case in Python, unknown keys refused, and
    only finite numbers (NaN would reach the cloud API as a price)."""

    model_config = ConfigDict(
        extra="forbid", alias_generator=to_camel, populate_by_name=True, frozen=True, allow_inf_nan=False,
        defer_build=True,
    )


def _whole_number(value: Any) -> Any:
    """A float with nothing after the point is that integer: Pulumi hands `min: 2.0` in an object to
    the program as 2, so the Python API accepts 2.0 too and both paths agree."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


# Strict scalars: no `true` as 1, no "2" as 2, no "no" as False, which pydantic's lax mode would read while
# the real program's path gets the text "no" (docs/architecture.md#validation-rules-and-why-they-exist).
Text = Annotated[str, Strict()]
Whole = Annotated[int, Strict(), BeforeValidator(_whole_number)]
Flag = Annotated[bool, Strict()]
Number = Annotated[float, Strict()]
NodeCount = Annotated[int, Field(ge=0, le=MAX_NODES), Strict(), BeforeValidator(_whole_number)]
#: A pool's capacity. `flex-start` is the middle tier between spot and on-demand: VMs a cloud provisions
#: when its capacity scheduler can, at a discount, for a bounded run (GKE's Dynamic Workload Scheduler);
#: a cloud without it refuses it in its own spec.
CapacityName = Literal["spot", "preemptible", "flex-start", "on-demand"]


@record
class Wired:
    """Marks a cluster setting a component's args may take from another resource's Output (the generated
    args type it `Input[...]`). Until the Output resolves, the rules validate `placeholder`, a value every
    rule of the cloud accepts, which never reaches a resource."""

    placeholder: str


@record
class RequiredArg:
    """Marks a setting a stack file may leave out (its cloud's rules refuse the gap in their own words)
    but the component needs: the generated args make it, and every key on its way, required."""


class GpuSpec(_Model):
    """GPU type (GKE accelerator name, spotkube's neutral vocabulary) and GPUs per node."""

    type: Text = Field(
        min_length=1,
        description="GPU type in spotkube's neutral vocabulary, on every cloud: `nvidia-tesla-t4`, `nvidia-l4`, "
        "`nvidia-tesla-a100`, `nvidia-a100-80gb`, ...",
    )
    count: Whole = Field(ge=1, le=16, description="GPUs per node.")


class Pool(_Model):
    """What every node pool has, on every cloud; each cloud's pools add their own fields and their
    names' rules (`spotkube.clouds.<cloud>.spec`)."""

    name: Text = Field(description="Pool name, unique in the stack.")
    machine: Text | None = Field(
        default=None,
        description="The nodes' machine; unset = the cloud's default machine. Retired ones are refused, with their "
        "replacement named.",
    )
    min: NodeCount
    max: NodeCount
    zones: tuple[Text, ...] = Field(default=(), description="Zones of the region; empty = regional.")
    labels: dict[Text, Text] = Field(
        default_factory=dict,
        description="Extra node labels in Kubernetes' syntax (keys `[prefix/]name`, names and values of at most 63 "
        "letters, digits, `-`, `_` and `.`); the prefixes `spotkube.io/`, `kubernetes.io/`, `k8s.io/` and the "
        "cloud's own node-label prefix are reserved; `node.kubernetes.io/` and `kubelet.kubernetes.io/` are "
        "accepted.",
    )
    capacity: CapacityName = Field(
        default="on-demand",
        description="Must stay `on-demand`: a spot pool can't be a System pool, and evictions would take the "
        "platform down.",
    )

    @field_validator("labels")
    @classmethod
    def _label_syntax(cls, value: dict[str, str]) -> dict[str, str]:
        for key, text in value.items():
            problem = key_problem(key)
            if problem is None and (value_error := value_problem(text)):
                problem = f"the value {shown(text)}: {value_error}"
            if problem:
                raise ValueError(f"the label {shown(key)} is not one Kubernetes accepts: {problem}")
        return value

    @field_validator("capacity", mode="before")
    @classmethod
    def _one_capacity(cls, value: Any) -> Any:
        if isinstance(value, list | tuple):
            raise ValueError(
                f"{shown(value)}: spot and preemptible together are refused; a pool has one capacity: "
                "'spot' (recommended: no 24 h limit), 'preemptible' or 'on-demand'"
            )
        return value


class SystemPool(Pool):
    """The on-demand pool that runs the cluster's own add-ons."""

    name: Text = Field(default="system", description="Pool name; never rename it once the cluster exists.")
    min: NodeCount = Field(default=2, description="Minimum nodes; at least 1.")
    max: NodeCount = Field(default=3, description="Maximum nodes.")

    def critical_addons_only_taint(self) -> bool:
        """Whether the pool is tainted so that only the cluster's add-ons run on it (a cloud whose
        system pool can be tainted says so in its own model)."""
        return False


class PlatformPool(Pool):
    """The untainted on-demand pool for platform workloads such as Kubeflow Pipelines."""

    enabled: Flag = Field(
        default=True,
        description="Create the pool. It must stay enabled while Kubeflow is, because Kubeflow needs an untainted "
        "on-demand pool.",
    )
    name: Text = Field(
        default="platform",
        description="Pool name; spotkube adds a short digest that changes when the pool must be replaced.",
    )
    min: NodeCount = Field(default=1, description="Minimum nodes.")
    max: NodeCount = Field(default=3, description="Maximum nodes.")


Weekday = Literal["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
#: `YYYY-MM-DD`, a calendar date.
DATE_PATTERN = r"^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$"


class PoolUpgrade(_Model):
    """How the cloud replaces this pool's nodes when it upgrades them. Each cloud's spec extends it
    with what only that cloud takes. Unset fields take spotkube's default for the pool: on a GPU pool,
    one surge node at a time and none taken away before its replacement is up."""

    max_surge: Text | None = Field(
        default=None, pattern=r"^[0-9]+%?$",
        description="Extra nodes added while the pool is upgraded. GPU pools default to 1 (surge nodes need GPU "
        "quota).",
    )
    max_unavailable: Text | None = Field(
        default=None, pattern=r"^[0-9]+%?$",
        description="Nodes that may be down at once during the upgrade. GPU pools default to 0.",
    )
    soak_minutes: Annotated[int, Field(ge=0, le=1440), Strict(), BeforeValidator(_whole_number)] | None = Field(
        default=None, description="Minutes to wait, once a node's pods have moved, before going on.",
    )


class SpotPool(Pool):
    """A CPU pool on spot or preemptible capacity that scales 0..N, for batch steps without GPUs."""

    machine: Text = Field(
        min_length=1, description="The nodes' machine; retired ones are refused, with their replacement named."
    )
    min: NodeCount = Field(
        default=0, description="Minimum nodes, at most `max`; 0 means an idle pool costs nothing."
    )
    max: NodeCount = Field(default=4, description="Maximum nodes.")
    capacity: CapacityName = Field(
        default="spot",
        description="Interruptible capacity or, for a GPU pool only, `flex-start` or `on-demand` (fallback pools).",
    )
    taints: tuple[Text, ...] = Field(
        default=(),
        description="Extra taints, as `key=value:Effect` with Kubernetes' syntax for the key and value and Effect "
        "NoSchedule, PreferNoSchedule or NoExecute; the prefixes `spotkube.io/` and the cloud's own are reserved.",
    )
    upgrade: PoolUpgrade = Field(
        default_factory=PoolUpgrade,
        description="How the cloud replaces the pool's nodes when it upgrades them: surge, drain, soak.",
    )

    @field_validator("taints")
    @classmethod
    def _taints(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for text in value:
            Taint.parse(text)
        return value

    def parsed_taints(self) -> tuple[Taint, ...]:
        return tuple(Taint.parse(t) for t in self.taints)

    def spot_price_controls(self) -> tuple[str | None, float | None]:
        """(eviction policy, max price) the cloud applies to this pool's spot VMs; (None, None) on a
        cloud whose spot pools take neither."""
        return None, None


class GpuSharingSpec(_Model):
    """How a GPU pool shares its GPUs among pods: MIG instances on every cloud; each cloud's model adds
    the other ways it offers (docs/gpu-sharing.md)."""

    mig: Text | None = Field(
        default=None,
        description="MIG profile every GPU of the pool is split into, in NVIDIA's names (`1g.10gb`, `3g.40gb`). "
        "Only GPUs with MIG (A100, H100, H200, B200) and the profiles the cloud offers for them.",
    )

    def time_shared(self) -> tuple[str, int] | None:
        """(strategy, pods per GPU) when the GPUs are shared otherwise than by MIG; None on a cloud that
        shares them only by MIG."""
        return None


class GpuPool(SpotPool):
    """A GPU pool that scales 0..N, on spot, preemptible or on-demand capacity."""

    gpu: GpuSpec | None = Field(default=None, description="GPU type and count; unset = filled in from the machine.")
    sharing: GpuSharingSpec | None = Field(
        default=None,
        description="Share each GPU among pods (docs/gpu-sharing.md); unset = every pod gets whole GPUs.",
    )
    image_gb: Annotated[float, Field(gt=0, le=1000), Strict()] | None = Field(
        default=None,
        description="Compressed size in GB of the image the pool's steps run, for the plan's time to a running "
        "step (docs/time-to-gpu.md); unset = the plan says the image size is not declared.",
    )

    def driver(self) -> str | None:
        """How the cloud installs the NVIDIA driver, when the pool chooses it (None: the cloud decides)."""
        return None

    def by_provisioning_request(self) -> bool:
        """Whether the pool's nodes come only through the cloud's provisioning requests (GKE's queued
        provisioning), never from the autoscaler's own scale-up; False on a cloud without them."""
        return False

    def run_limit_hours(self) -> int | None:
        """How long one node may run before the cloud deletes it (a flex-start VM's run), None: no limit."""
        return None


class AutoscalerSettings(_Model):
    """Cluster autoscaler tuning; each cloud's autoscaler takes its own settings."""


LoginMode = Literal["azurecli", "workloadidentity", "spn", "msi"]
DeployerNetwork = Literal["internet", "cluster-network"]


class DeployerSettings(_Model):
    """Who runs `pulumi up` and from where. The Kubernetes provider logs in as the deployer, so the
    deployer needs a credential that works without a person, rights on the cluster, and a network
    path to its API server; none of that is visible to a mock, so the plan's preflight checks it."""

    network: DeployerNetwork = Field(
        default="internet",
        description="Where the deployer runs: internet (a hosted CI runner or a laptop) or cluster-network "
        "(a runner inside the cluster's network, which can reach a private API server).",
    )
    egress_ranges: tuple[Text, ...] = Field(
        default=(),
        description="Public CIDRs the deployer connects from (a runner's static egress). Added to the API "
        "server's authorized ranges whenever the API server restricts by address.",
    )
    drills: Flag = Field(
        default=False,
        description="Let the deployer evict a node of the stack's spot pools on purpose (`spotkube drill --run`, "
        "drill.yml, which runs as the deploy identity): the right to simulate an eviction or a maintenance event on "
        "the stack's nodes, as the cloud names it, and nothing more (docs/identities.md).",
    )


class MaintenanceWindow(_Model):
    """A weekly window: the only time the cloud may upgrade the cluster or replace its nodes' images."""

    days: tuple[Weekday, ...] = Field(
        min_length=1, max_length=7,
        description="Days of the week, e.g. `[Saturday]`; how many the cloud takes, and how many hours a week it "
        "needs, is checked per cloud (docs/evictions.md).",
    )
    start: Text = Field(pattern=r"^([01][0-9]|2[0-3]):[0-5][0-9]$", description="Start time, `HH:MM`.")
    hours: Annotated[int, Field(ge=4, le=24), Strict(), BeforeValidator(_whole_number)] = Field(
        description="Length in hours, 4 to 24."
    )
    utc_offset: Text = Field(
        default="+00:00", pattern=r"^[+-](0[0-9]|1[0-4]):[0-5][0-9]$",
        description="The times' offset from UTC, e.g. `+01:00`. A cloud that counts a window's days in UTC gets "
        "the window in UTC, its days shifted when the start crosses midnight; the plan shows both.",
    )


class BusyPeriod(_Model):
    """Dates on which nothing may drain a node for an upgrade: a deadline, a long training run."""

    name: Text = Field(pattern=r"^[a-z]([-a-z0-9]{0,38}[a-z0-9])?$", description="A name, e.g. `quarter-end`.")
    start: Text = Field(pattern=DATE_PATTERN, description="First day, `YYYY-MM-DD` (UTC).")
    end: Text = Field(pattern=DATE_PATTERN, description="Last day, `YYYY-MM-DD` (UTC), included.")

    @model_validator(mode="after")
    def _ordered(self) -> BusyPeriod:
        if self.end < self.start:
            raise ValueError(f"end {self.end} is before start {self.start}; give the first and the last day")
        return self


class MaintenanceSettings(_Model):
    """When the cloud may upgrade the cluster and drain its nodes: AKS maintenance configurations (the
    Kubernetes auto-upgrade and node OS schedules), GKE's maintenance policy (a recurring window and
    exclusions)."""

    window: MaintenanceWindow | None = Field(
        default=None,
        description="The weekly window; unset = the cloud's default, which the plan shows (docs/evictions.md).",
    )
    busy_periods: tuple[BusyPeriod, ...] = Field(
        default=(), max_length=20,
        description="Periods with no node upgrade at all, `[{name, start, end}]`.",
    )
    anytime: Flag = Field(
        default=False,
        description="Let the cloud upgrade whenever it likes: no window, no busy periods (the plan warns for every "
        "GPU pool).",
    )

    @model_validator(mode="after")
    def _anytime_alone(self) -> MaintenanceSettings:
        if self.anytime and (self.window is not None or self.busy_periods):
            raise ValueError("anytime: true declares no window and no busy periods; remove window and busyPeriods, "
                             "or anytime")
        return self


class ClusterLogs(_Model):
    """Where container logs go, so a step's logs outlive the node that ran it (docs/logs.md); each
    cloud's model says what `enabled` turns on and adds its own settings."""

    enabled: Flag | None = Field(
        default=None, description="Send container logs to the cloud's log service; unset = the cloud's default."
    )


class ClusterSettings(_Model):
    """Cluster-wide settings; the security switches default to on, or on in prod."""

    kubernetes_version: Text | None = Field(
        default=None, description="Pinned Kubernetes version; unset follows the channel."
    )
    allow_unlisted_region: Flag = Field(
        default=False,
        description="Accept a `region` that is not in spotkube's bundled region list of the cloud (a region "
        "newer than this spotkube release); its name is still checked for the cloud's shape.",
    )
    channel: Text | None = Field(default=None, description="The cluster's upgrade channel.")
    private: Flag | None = Field(default=None, description="Keep the cluster off the internet; default: on in prod.")
    authorized_ip_ranges: tuple[Annotated[Text, Wired("192.0.2.0/24")], ...] = Field(
        default=(), description="CIDRs allowed to reach the API server."
    )
    deletion_protection: Flag | None = Field(
        default=None, description="`protect` on the cluster; default: on in prod."
    )
    autoscaler: AutoscalerSettings = Field(
        default_factory=AutoscalerSettings, description="Cluster autoscaler tuning."
    )
    deployer: DeployerSettings = Field(
        default_factory=DeployerSettings, description="Who runs `pulumi up` and from where."
    )
    maintenance: MaintenanceSettings = Field(
        default_factory=MaintenanceSettings,
        description="When the cloud may upgrade the cluster and drain nodes: a weekly window and busy periods.",
    )
    logs: ClusterLogs = Field(
        default_factory=ClusterLogs, description="Where container logs go, so evicted steps' logs are kept."
    )

    def api_server_ranges(self, restricted: bool) -> tuple[str, ...]:
        """The API server's authorized ranges when it restricts by address: the listed ones plus the
        deployer's own, so a stack that restricts the API server never locks its deployer out."""
        if not restricted:
            return ()
        extra = [r for r in self.deployer.egress_ranges if r not in self.authorized_ip_ranges]
        return (*self.authorized_ip_ranges, *extra)


def wired_fields(model: type[BaseModel]) -> dict[str, tuple[bool, str]]:
    """The fields of a settings model that may be wired from an Output: name -> (whether the Output
    goes in a list's items, the placeholder the rules validate in its place)."""
    out = {}
    for name, field in model.model_fields.items():
        marks = [m for m in field.metadata if isinstance(m, Wired)]
        if marks:
            out[name] = (False, marks[0].placeholder)
            continue
        if typing.get_origin(field.annotation) in (tuple, list):
            item = typing.get_args(field.annotation)[0]
            marks = [m for m in typing.get_args(item)[1:] if isinstance(m, Wired)]
            if typing.get_origin(item) is Annotated and marks:
                out[name] = (True, marks[0].placeholder)
    return out


class WorkloadHours(_Model):
    """Monthly node-hours of one workload class (e.g. preprocessing) on one pool."""

    name: Text = Field(min_length=1, description="Workload class, e.g. preprocessing.")
    pool: Text = Field(min_length=1, description="The pool it runs on: one of this stack's pool names.")
    hours: Number = Field(ge=0, description="Node-hours per month.")


def _calendar_date(value: str | None) -> str | None:
    """A `YYYY-MM-DD` text that is a real day (2027-02-30 is not). Stack files quote it: Pulumi hands the
    program an unquoted YAML date as Go's time text, which spotkube refuses."""
    if value is not None:
        try:
            datetime.date.fromisoformat(value)
        except ValueError:
            raise ValueError(f"{shown(value)} is not a day of the calendar; write it as \"YYYY-MM-DD\"") from None
    return value


#: A day as a stack file writes it: quoted `"YYYY-MM-DD"`.
CalendarDay = Annotated[str, Strict(), Field(pattern=r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"), AfterValidator(_calendar_date)]


class PriceOverride(_Model):
    """A price this stack states itself, over the bundled table and the user's price file, with its source.

    For a price the stack's own reasoning depends on (a worked example, a negotiated rate): the row lives
    next to the pools it prices and says where its number comes from. Cloud and region are the stack's."""

    sku: Text = Field(min_length=1, description="The cloud's VM size or machine type (Standard_D4s_v3, "
                      "g2-standard-8); a GPU type such as nvidia-tesla-t4 with `kind: accelerator`.")
    kind: Literal["machine", "accelerator"] = Field(
        default="machine", description="`machine` (a node, GPUs included where the size carries them) or "
        "`accelerator` (one GPU, where the cloud bills it on top of its machine).")
    capacity: CapacityName = Field(description="`spot`, `preemptible`, `flex-start` or `on-demand`, where the "
                                   "cloud offers it.")
    usd_per_hour: Number = Field(gt=0, description="USD per node-hour (per GPU-hour for an accelerator).")
    source: Text = Field(min_length=1, description="Where the number comes from: a price list and its date, "
                         "an agreement, a worked example.")
    date: CalendarDay = Field(description="The day the price was read, quoted: \"YYYY-MM-DD\".")


class CostSettings(_Model):
    """The usage scenario the plan prices: how much work, and how evictions add to it."""

    eviction_rate: Number = Field(
        default=0.05, ge=0, le=1, description="Share of interruptible work that is evicted."
    )
    rework_fraction: Number = Field(
        default=1.0, ge=0, le=1, description="Share of an evicted step that runs again (1 = no checkpoints)."
    )
    hours: dict[Text, Number] = Field(default_factory=dict, description="Node-hours per month per pool.")
    workloads: tuple[WorkloadHours, ...] = Field(
        default=(),
        description="Node-hours per month per workload class, `[{name, pool, hours}]`, added to their pool's hours.",
    )
    prices: tuple[PriceOverride, ...] = Field(
        default=(), max_length=200,
        description="Prices this stack states itself, `[{sku, kind, capacity, usdPerHour, source, date}]`, over the "
        "bundled table and your price file (cloud and region are the stack's).",
    )


class DevicePluginSettings(_Model):
    """NVIDIA's device plugin, which makes GPUs schedulable. AKS gets NVIDIA's upstream DaemonSet;
    GKE keeps its own managed plugin, because two plugins on one node advertise its GPUs twice."""

    enabled: Flag = Field(
        default=True,
        description="Deploy NVIDIA's device plugin to every GPU pool (false if you run the GPU Operator); a cloud "
        "that runs its own managed plugin always uses it.",
    )
    version: Text = Field(
        default="v0.20.0", pattern=r"^v\d+\.\d+\.\d+$", description="NVIDIA k8s-device-plugin release: the image tag."
    )
    mig_strategy: Literal["single", "mixed"] = Field(
        default="single",
        description="How the plugin spotkube deploys advertises MIG instances: `single` as `nvidia.com/gpu` (as a "
        "cloud's own managed plugin does, so one pipeline runs on both), `mixed` as `nvidia.com/mig-<profile>`.",
    )
    image: Text = Field(
        default="nvcr.io/nvidia/k8s-device-plugin",
        description="Image repository without a tag, e.g. a mirror when nodes can't reach nvcr.io.",
    )

    @field_validator("image", mode="before")
    @classmethod
    def _no_credentials(cls, value: Any) -> Any:
        return without_credentials(value, "devicePlugin.image")

    @field_validator("image")
    @classmethod
    def _repository_only(cls, value: str) -> str:
        if not re.fullmatch(r"[a-z0-9.-]+(:[0-9]+)?(/[a-z0-9._-]+)+", value):
            raise ValueError(f"{shown(value)} is not an image repository without a tag; use e.g. "
                             "nvcr.io/nvidia/k8s-device-plugin and set the tag in devicePlugin.version")
        return value


class KubeflowSettings(_Model):
    """Kubeflow Pipelines standalone, installed from its kustomize manifests and kept on on-demand
    nodes, with its default credentials replaced and spot-safe retries for pipeline steps."""

    enabled: Flag = Field(default=True, description="Install Kubeflow Pipelines standalone.")
    version: Text = Field(
        default="2.17.0", pattern=r"^\d+\.\d+\.\d+$", description="KFP release: the git ref of the manifests."
    )
    repository: Text = Field(
        default="https://github.com/kubeflow/pipelines",
        pattern=r"^https://[^\s?#]+[^/\s?#]$",
        description="Git repository of the manifests, e.g. a mirror (it must keep KFP's layout); needs git at "
        "deploy time.",
    )
    expose_ui: Flag = Field(
        default=False,
        description="Give the UI a public LoadBalancer, with a warning: KFP standalone has no login, so prefer "
        "kubectl port-forward.",
    )
    ui_source_ranges: tuple[Text, ...] = Field(
        default=(),
        description="With `exposeUi` only: CIDRs allowed to reach the UI (the Service's loadBalancerSourceRanges).",
    )
    storage_class: Text | None = Field(
        default=None,
        pattern=r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$",
        description="StorageClass of the MySQL and SeaweedFS volumes; unset = the cluster's default class.",
    )
    platform_pool_labels: dict[Text, Text] = Field(
        default_factory=dict,
        description="On a cluster spotkube didn't make: node labels that pick the untainted on-demand pool KFP's "
        "own services run on, e.g. the label in which the cloud names a node's pool, with that pool's name; unset "
        "= spotkube's platform pool.",
    )
    eviction_retry_limit: Annotated[int, Field(ge=0, le=100), Strict(), BeforeValidator(_whole_number)] = Field(
        default=10,
        description="Retries of a step whose pod a node took away (spot eviction, node shutdown, drain, node "
        "lost): Argo's limit in the workflow defaults, for steps that don't call set_retry (a step's own "
        "limit wins). Ten survives a bad evening on spot capacity; each eviction costs a restart from the "
        "last checkpoint, not a failed run.",
    )
    failure_retry_limit: Annotated[int, Field(ge=0, le=10), Strict(), BeforeValidator(_whole_number)] = Field(
        default=1,
        description="Retries of a step that failed on its own (a non-zero exit, out of memory, bad input): one "
        "covers a flaky download without spending GPU hours re-running a bug. Counted with the evictions: a "
        "failure is retried only while the step has been retried fewer times than this. Argo errors that are "
        "no eviction (a pod that never started) keep KFP's 2.",
    )
    pod_delete_delay: Text = Field(
        default="1h",
        pattern=r"^[0-9]+(s|m|h)$",
        description="Argo's pod garbage collection (OnPodCompletion): how long a finished, failed or evicted "
        "step's pod stays after it ends, for live logs (its logs are archived when it ends); then it is "
        "deleted, so evicted pods never pile up.",
    )
    workflow_ttl_seconds: Annotated[int, Field(ge=60), Strict(), BeforeValidator(_whole_number)] = Field(
        default=3600,
        description="How long a finished run's Argo Workflow is kept (KFP ships 3600); a pipeline's own "
        "TTL (PipelineConfig) wins.",
    )
    step_grace_period_seconds: Annotated[int, Field(ge=1, le=3600), Strict(),
                                         BeforeValidator(_whole_number)] | None = Field(
        default=None,
        description="terminationGracePeriodSeconds of every pipeline pod: the time a step has to save a "
        "checkpoint after SIGTERM. Unset = what the stack's cloud really gives a workload pod on a spot eviction "
        "(docs/evictions.md#how-much-time-a-step-gets).",
    )

    @model_validator(mode="before")
    @classmethod
    def _replaced_retry_keys(cls, values: Any) -> Any:
        """`retryPolicy` and `retryLimit` (spotkube 0.1) said how often, not why: refuse them with the keys
        that replace them, so a stack file is migrated instead of silently retrying differently."""
        if not isinstance(values, Mapping):
            return values
        given = [key for key in ("retryPolicy", "retry_policy", "retryLimit", "retry_limit") if key in values]
        if given:
            raise ValueError(
                f"{', '.join(given)} {'was' if len(given) == 1 else 'were'} replaced by evictionRetryLimit (retries "
                "of a step a node took away, default 10) and failureRetryLimit (retries of a step that failed on "
                "its own, default 1); every policy is now Always with an expression that tells the two apart. "
                "Remove " + " and ".join(given) + "; a retryLimit: N becomes evictionRetryLimit: N "
                "(docs/evictions.md#migrating-from-retrypolicy-and-retrylimit)")
        return values

    @model_validator(mode="after")
    def _failures_within_evictions(self) -> KubeflowSettings:
        if self.failure_retry_limit > self.eviction_retry_limit:
            raise ValueError(f"failureRetryLimit {self.failure_retry_limit} is above evictionRetryLimit "
                             f"{self.eviction_retry_limit}, Argo's limit for every retry; lower it or raise "
                             "evictionRetryLimit")
        return self

    @field_validator("repository", mode="before")
    @classmethod
    def _no_credentials(cls, value: Any) -> Any:
        return without_credentials(value, "kubeflow.repository")

    @field_validator("ui_source_ranges")
    @classmethod
    def _cidrs(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for cidr in value:
            try:
                ipaddress.ip_network(cidr, strict=True)
            except ValueError:
                raise ValueError(f"{shown(cidr)} is not a CIDR; use e.g. 203.0.113.0/24") from None
        return value

    @model_validator(mode="after")
    def _ranges_need_exposure(self) -> KubeflowSettings:
        if self.ui_source_ranges and not self.expose_ui:
            raise ValueError("uiSourceRanges only applies with exposeUi: true; set exposeUi or remove uiSourceRanges")
        return self


class KueueSettings(_Model):
    """Kueue, the job queue: pipeline steps sent to its queue wait for the GPU pools' quota instead of
    piling up as pending pods, and on a queued-provisioning pool get their nodes all at once through
    a ProvisioningRequest. Installed from the release's manifests, its controller on the platform pool."""

    enabled: Flag = Field(
        default=False,
        description="Install Kueue with a ClusterQueue over the GPU pools and a LocalQueue in Kubeflow's namespace; "
        "needs Kubeflow Pipelines and at least one GPU pool.",
    )
    version: Text = Field(
        default="v0.19.2", pattern=r"^v\d+\.\d+\.\d+$",
        description="Kueue release: the tag whose `manifests.yaml` is applied.",
    )
    local_queue: Text = Field(
        default=KUEUE_LOCAL_QUEUE, pattern=r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$",
        description="Name of the LocalQueue in Kubeflow's namespace; a step sent with `to_queue(task, queue=...)` "
        "names it.",
    )
    platform_pool_labels: dict[Text, Text] = Field(
        default_factory=dict,
        description="On a cluster spotkube didn't make: node labels that pick the untainted on-demand pool Kueue's "
        "controller runs on, as for Kubeflow Pipelines; unset = spotkube's platform pool.",
    )

    @field_validator("version")
    @classmethod
    def _configurable_release(cls, value: str) -> str:
        """spotkube writes the manager's `config.kueue.x-k8s.io/v1beta2` Configuration with
        `resources.quotaCheckStrategy`, which Kueue turns on by default from v0.19.0."""
        major, minor, _ = (int(part) for part in value.removeprefix("v").split("."))
        if (major, minor) < (0, 19):
            raise ValueError(f"{shown(value)} is older than the Kueue releases spotkube configures; use v0.19.0 or "
                             "later (the default is v0.19.2)")
        return value


class CheckpointStoreSettings(_Model):
    """An object store the stack creates for its training jobs' checkpoints, writable by the identity the
    workers run as: on AKS a storage account with one blob container, `checkpoints` (shared keys off,
    TLS 1.2, no public access), with Storage Blob Data Contributor for the kubelet identity on that
    container; on GKE a bucket (uniform access, public access prevented) with `roles/storage.objectUser`
    for the workers' Kubernetes service account (Workload Identity). A job saves under
    `<store>/<job name>`, which `spotkube.training` writes into its `SPOTKUBE_CHECKPOINT_DIR`."""

    name: Text = Field(
        min_length=1,
        description="The store's globally unique name: the cloud's storage account or bucket, whose naming rules "
        "the stack's cloud checks before anything is registered.",
    )


class TrainingSettings(_Model):
    """Kubeflow Trainer, for training jobs that span several GPU nodes: a TrainJob sent to Kueue's queue is
    admitted whole or not at all, runs on a training runtime spotkube registers per GPU type (its pools'
    tolerations and affinity, the cloud's eviction notice as grace), and restarts for free when a node is
    evicted. Installed from the release's manifests with the JobSet it bundles, its controllers on the
    platform pool."""

    enabled: Flag = Field(
        default=False,
        description="Install Kubeflow Trainer (with JobSet) and a ClusterTrainingRuntime `spotkube-<gpu type>` per "
        "GPU type; needs Kueue, whose queue admits a TrainJob's workers all at once.",
    )
    version: Text = Field(
        default="v2.2.1", pattern=r"^v\d+\.\d+\.\d+$",
        description="Kubeflow Trainer release: the tag of the `manifests/overlays/manager` kustomization applied "
        "(v2.2.1 is the release Kueue v0.19 is built against; it bundles JobSet v0.11.1).",
    )
    failure_restart_limit: Annotated[int, Field(ge=0, le=10), Strict(), BeforeValidator(_whole_number)] = Field(
        default=1,
        description="Restarts of a training job after a failure of its own (a non-zero exit, out of memory): the "
        "JobSet's `failurePolicy.maxRestarts`. A worker a node took away (spot eviction, node shutdown) restarts "
        "the job without counting (`RestartJobSetAndIgnoreMaxRestarts`).",
    )
    grace_period_seconds: Annotated[int, Field(ge=1, le=3600), Strict(),
                                    BeforeValidator(_whole_number)] | None = Field(
        default=None,
        description="terminationGracePeriodSeconds of every worker: the time a training script has to save a "
        "checkpoint after SIGTERM. Unset = what the stack's cloud gives a workload pod on a spot eviction "
        "(docs/evictions.md#how-much-time-a-step-gets).",
    )
    checkpoint_location: Text | None = Field(
        default=None, min_length=1,
        description="Where the stack's training jobs write checkpoints: an object store URI the nodes' identity can "
        "write (`gs://bucket/checkpoints`, `abfs://container/checkpoints`) or a path on a volume the workers mount. "
        "`spotkube pipeline-check` warns about a TrainJob whose `SPOTKUBE_CHECKPOINT_DIR` is not under it; unset "
        "= any place.",
    )
    platform_pool_labels: dict[Text, Text] = Field(
        default_factory=dict,
        description="On a cluster spotkube didn't make: node labels that pick the untainted on-demand pool the "
        "Trainer and JobSet controllers run on, as for Kubeflow Pipelines; unset = spotkube's platform pool.",
    )
    checkpoint_store: CheckpointStoreSettings | None = Field(
        default=None,
        description="An object store for checkpoints that the workers' identity may write, `{name}`, which the "
        "cluster component creates (its args' `checkpoint_store`); its location replaces `checkpointLocation`, and "
        "it stays when training is turned off. Unset = none.",
    )

    @field_validator("version")
    @classmethod
    def _patchable_release(cls, value: str) -> str:
        """Kueue v0.19's TrainJob integration writes `spec.runtimePatches`, which Trainer has from v2.2.0
        (v2.1 had `podTemplateOverrides`, v2.0 `podSpecOverrides`)."""
        major, minor, _ = (int(part) for part in value.removeprefix("v").split("."))
        if (major, minor) < (2, 2):
            raise ValueError(f"{shown(value)} is older than the Trainer releases Kueue v0.19 admits (their TrainJobs "
                             "have no runtimePatches); use v2.2.0 or later (the default is v2.2.1)")
        return value


class Acknowledgement(_Model):
    """A plan warning the team has accepted, by its id, with why and until when.

    An acknowledged warning is shown with its reason and no longer fails `spotkube plan --strict`; an
    acknowledgement that matches no warning is itself a warning, and one past its expiry fails the plan."""

    id: Text = Field(pattern=WARNING_ID_PATTERN, description="The warning's id as the plan shows it, e.g. "
                     "`security-api-server`; a kind without its `:subject` covers every subject "
                     "(`fallback-no-on-demand` covers `fallback-no-on-demand:nvidia-l4`).")
    reason: Text = Field(min_length=1, description="Why the team accepts it, shown next to the warning.")
    expires: CalendarDay | None = Field(
        default=None, description="Quoted day (\"YYYY-MM-DD\") after which the acknowledgement fails the plan, so "
        "it is looked at again; unset never expires.")

    @field_validator("reason")
    @classmethod
    def _says_something(cls, reason: str) -> str:
        if not reason.strip():
            raise ValueError("is blank; say why the team accepts this warning")
        return reason

    @property
    def expires_on(self) -> datetime.date | None:
        return None if self.expires is None else datetime.date.fromisoformat(self.expires)


class PlatformSpec(_Model):
    """One platform: a cluster with its pools, for one cloud, environment and region.

    The base of every cloud's spec (`spotkube.clouds.aks.spec.AksSpec`, `...gke.spec.GkeSpec`), which
    narrow `cloud` to their name and the pools and cluster settings to their own models; the neutral
    code takes any of them as a `PlatformSpec`. A spec is made by `validation.parse_spec`, which picks
    the cloud's model from the registry, never by validating this base."""

    cloud: Text = Field(description="Which cloud: a registered cloud's name.")
    environment: Text = Field(
        pattern=ENVIRONMENT_PATTERN,
        description="Environment name, e.g. dev, staging or prod. `prod` turns on every unset security switch "
        "of `cluster` (`private`, `deletionProtection` and the cloud's own) and `protect`.",
    )
    region: Text = Field(
        pattern=REGION_PATTERN,
        description="The cloud's region, in its own spelling.",
    )
    system_pool: SystemPool = Field(default_factory=SystemPool, description="The on-demand system pool.")
    platform_pool: PlatformPool = Field(
        default_factory=PlatformPool,
        description="The untainted on-demand pool for Kubeflow and other platform workloads.",
    )
    gpu_pools: tuple[GpuPool, ...] = Field(
        default=(), max_length=100, description="GPU pools, each scaling min..max."
    )
    spot_pools: tuple[SpotPool, ...] = Field(
        default=(),
        max_length=100,
        description="CPU pools on spot or preemptible capacity for batch steps, each scaling min..max.",
    )
    cluster: ClusterSettings = Field(default_factory=ClusterSettings, description="Cluster-wide settings.")
    cost: CostSettings = Field(default_factory=CostSettings, description="The usage scenario the plan prices.")
    device_plugin: DevicePluginSettings = Field(
        default_factory=DevicePluginSettings,
        description="NVIDIA's device plugin: a DaemonSet on every GPU pool of a cloud that has no managed plugin.",
    )
    kubeflow: KubeflowSettings = Field(
        default_factory=KubeflowSettings,
        description="Kubeflow Pipelines standalone, on the on-demand pools.",
    )
    kueue: KueueSettings = Field(
        default_factory=KueueSettings,
        description="Kueue, the job queue for GPU steps, with its controller on the platform pool.",
    )
    training: TrainingSettings = Field(
        default_factory=TrainingSettings,
        description="Kubeflow Trainer for multi-node training jobs on spot, with a training runtime per GPU type.",
    )
    acknowledgements: tuple[Acknowledgement, ...] = Field(
        default=(), max_length=100,
        description="Plan warnings the team accepts, `[{id, reason, expires}]`: shown with the reason, and no longer "
        "failing `spotkube plan --strict` until `expires`.",
    )

    @property
    def is_prod(self) -> bool:
        return self.environment == "prod"

    def switch(self, value: bool | None) -> bool:
        """A security switch left unset is on in prod and off elsewhere."""
        return self.is_prod if value is None else value


def config_key(path: str) -> str:
    """A key path as a stack file spells it: `gpuPools[0].maxPrice` -> `spotkube:gpuPools[0].maxPrice`."""
    return f"{CONFIG_NAMESPACE}:{path}"


def all_pools(spec: PlatformSpec) -> Iterator[tuple[str, Pool]]:
    """(key path, pool) of every pool that will exist, system pool first."""
    yield "systemPool", spec.system_pool
    if spec.platform_pool.enabled:
        yield "platformPool", spec.platform_pool
    yield from worker_pools(spec)


def worker_pools(spec: PlatformSpec) -> Iterator[tuple[str, SpotPool]]:
    """(key path, pool) of the pools that scale from zero: spot CPU pools, then GPU pools."""
    yield from ((f"spotPools[{i}]", p) for i, p in enumerate(spec.spot_pools))
    yield from ((f"gpuPools[{i}]", p) for i, p in enumerate(spec.gpu_pools))


def alias(model: BaseModel, name: str) -> str:
    """A field's name as a stack file spells it (camelCase)."""
    return type(model).model_fields[name].alias or name


def set_by_user(model: BaseModel, name: str) -> bool:
    """Whether the stack file or the component args set this field. Validation sees the user's own
    values, never a dump of a resolved spec, so this is exactly what the user wrote."""
    return name in model.model_fields_set


#: The top-level config keys a stack may set under the `spotkube:` namespace: the same on every cloud
#: (a cloud's spec narrows what is inside them).
CONFIG_KEYS: tuple[str, ...] = tuple(
    field.alias or name for name, field in PlatformSpec.model_fields.items()
)


def key_path(loc: Sequence[str | int]) -> str:
    """`("gpuPools", 1, "maxPrice")` -> `gpuPools[1].maxPrice`."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{cut(part)}" if out else cut(part))
    return out


def user_key(path: str, style: KeyStyle, model: type[PlatformSpec]) -> str:
    """A problem's key path as the user spelt it: `spotkube:gpuPools[0].maxPrice` in a stack file,
    `gpu_pools[0].max_price` in Python args (spelt by `model`, the stack's cloud's spec)."""
    if style == "stack":
        return config_key(path)
    return python_path(model, path.removeprefix(f"{CONFIG_NAMESPACE}:"))


#: A key path a rule's message names, as a stack file spells it: `gpuPools[0].imageStreaming`.
_NAMED_KEY = re.compile(r"\b(?:spotkube:)?[a-z][A-Za-z0-9]*(?:\[\d+\])*(?:\.[a-z][A-Za-z0-9]*(?:\[\d+\])*)*")


def _respelt(message: str, model: type[PlatformSpec]) -> str:
    """`message` with each key path of the spec it names spelt as Python args spell it (`gpu_pools[0].
    image_streaming`); words that are no key of the spec stay as they are."""
    def python(match: re.Match[str]) -> str:
        text = match.group(0)
        spelt = python_path(model, text.removeprefix(f"{CONFIG_NAMESPACE}:"))
        return spelt if spelt != text.removeprefix(f"{CONFIG_NAMESPACE}:") and any(c.isupper() for c in text) \
            else text
    return _NAMED_KEY.sub(python, message)


def in_style(problems: Sequence[Problem], style: KeyStyle, model: type[PlatformSpec]) -> list[Problem]:
    """Problems whose paths the rules spelt for a stack file (`spotkube:` and camelCase), respelt, with the
    keys their messages name."""
    if style == "stack":
        return list(problems)
    return [Problem(user_key(p.path, style, model), _respelt(p.message, model)) for p in problems]


def styled_key(path: str, style: KeyStyle) -> str:
    """A key path of the user's own spelling, with `spotkube:` for a stack file."""
    return config_key(path) if style == "stack" else path


Settings = TypeVar("Settings", bound=BaseModel)


def parse_settings(model: type[Settings], values: Mapping[str, Any], source: str) -> Settings:
    """Validate one settings model given as component args, with the messages `parse_spec` gives."""
    try:
        return model.model_validate(dict(values))
    except ValidationError as err:
        problems = [Problem(key_path(tuple(error["loc"])) or "args", describe(error, model, "python"))
                    for error in err.errors()]
        raise SpecError(source, problems) from None
