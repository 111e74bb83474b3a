"""The typed, validated description of one platform, built from stack config or component args.

Validation happens here, before any resource is registered, so a mistake in a stack file is
reported as "which file, which key, what was wrong and what is accepted" instead of as a failed
cloud deployment half-way through. Pydantic checks types, ranges and single fields; the rules that
depend on the cloud (and on the bundled catalogs) run afterwards in `validation` and the cloud's
profile, so that every problem in a stack is reported at once. Pure module: no Pulumi.
"""

from __future__ import annotations

import datetime
import ipaddress
import re
from collections.abc import Iterator, Mapping, Sequence
from decimal import Decimal, InvalidOperation
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

from spotkube.platform.contract import Cloud, Taint
from spotkube.platform.errors import Problem, SpecError
from spotkube.platform.input_messages import KeyStyle, accepted_keys, cut, describe, did_you_mean, python_path, shown
from spotkube.platform.kubernetes_syntax import key_problem, value_problem
from spotkube.platform.warnings import ID_PATTERN as WARNING_ID_PATTERN

CONFIG_NAMESPACE = "spotkube"
MAX_NODES = 1000


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
        extra="forbid", alias_generator=to_camel, populate_by_name=True, frozen=True, allow_inf_nan=False
    )


def _whole_number(value: Any) -> Any:
    """A float with nothing after the point is that integer: Pulumi hands `min: 2.0` in an object to
    the program as 2, so the Python API accepts 2.0 too and both paths agree."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


# Strict scalars: no `true` as 1, no "2" as 2, no "no" as False. pydantic's lax mode would read all
# three, while the same stack file gives the text "no" on the real program's path; refusing them
# keeps every path's verdict the same (docs/architecture.md#validation-rules-and-why-they-exist).
Text = Annotated[str, Strict()]
Whole = Annotated[int, Strict(), BeforeValidator(_whole_number)]
Flag = Annotated[bool, Strict()]
Number = Annotated[float, Strict()]
NodeCount = Annotated[int, Field(ge=0, le=MAX_NODES), Strict(), BeforeValidator(_whole_number)]
CapacityName = Literal["spot", "preemptible", "on-demand"]


class GpuSpec(_Model):
    """GPU type (GKE accelerator name, spotkube's neutral vocabulary) and GPUs per node."""

    type: Text = Field(
        min_length=1,
        description="GPU type in GKE's accelerator vocabulary, on both clouds: `nvidia-tesla-t4`, `nvidia-l4`, "
        "`nvidia-tesla-a100`, `nvidia-a100-80gb`, ...",
    )
    count: Whole = Field(ge=1, le=16, description="GPUs per node.")


class _PoolBase(_Model):
    name: Text = Field(
        description="Pool name, unique in the stack. AKS: 1-12 lower-case letters and digits, starting with a "
        "letter; GKE: `[a-z]([-a-z0-9]{0,38}[a-z0-9])?`."
    )
    machine: Text | None = Field(
        default=None,
        description="VM size (AKS) or machine type (GKE); unset = the cloud's default machine. Retired sizes are "
        "refused, with their replacement named.",
    )
    min: NodeCount
    max: NodeCount
    zones: tuple[Text, ...] = Field(
        default=(),
        description='Availability zones: AKS `"1"` to `"3"`, GKE zones of the region. Empty = regional, except '
        "a GKE GPU pool, which gets every zone of the region that offers its GPU (from the bundled zone table).",
    )
    labels: dict[Text, Text] = Field(
        default_factory=dict,
        description="Extra node labels in Kubernetes' syntax (keys `[prefix/]name`, names and values of at most 63 "
        "letters, digits, `-`, `_` and `.`); the prefixes `spotkube.io/`, `kubernetes.io/`, `k8s.io/` and the "
        "cloud's own (`kubernetes.azure.com/`, `cloud.google.com/`) are reserved; `node.kubernetes.io/` and "
        "`kubelet.kubernetes.io/` are accepted.",
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


class SystemPool(_PoolBase):
    """The on-demand pool that runs the cluster's own add-ons."""

    name: Text = Field(
        default="system",
        description="Pool name; never rename it once the cluster exists. AKS: 1-12 lower-case letters and digits, "
        "starting with a letter; GKE: at most 33 characters (spotkube adds 7 when the pool must be replaced).",
    )
    min: NodeCount = Field(default=2, description="Minimum nodes; at least 1.")
    max: NodeCount = Field(default=3, description="Maximum nodes.")
    critical_addons_only: Flag = Field(
        default=True,
        description="AKS: taint CriticalAddonsOnly=true:NoSchedule so only add-ons run here.",
    )


class PlatformPool(_PoolBase):
    """The untainted on-demand pool for platform workloads such as Kubeflow Pipelines."""

    enabled: Flag = Field(
        default=True,
        description="Create the pool. It must stay enabled while Kubeflow is, and on AKS while the system pool "
        "is tainted (`criticalAddonsOnly`), because Kubeflow needs an untainted on-demand pool.",
    )
    name: Text = Field(
        default="platform",
        description="Pool name: at most 8 characters on AKS and 33 on GKE, because spotkube adds a short digest "
        "that changes when the pool must be replaced.",
    )
    min: NodeCount = Field(default=1, description="Minimum nodes.")
    max: NodeCount = Field(default=3, description="Maximum nodes.")


class SpotPool(_PoolBase):
    """A CPU pool on spot or preemptible capacity that scales 0..N, for batch steps without GPUs."""

    machine: Text = Field(
        min_length=1,
        description="VM size (AKS) or machine type (GKE), with GPUs for a GPU pool (e.g. Standard_NC4as_T4_v3, "
        "g2-standard-8); retired sizes are refused, with their replacement named.",
    )
    min: NodeCount = Field(
        default=0, description="Minimum nodes, at most `max`; 0 means an idle pool costs nothing."
    )
    max: NodeCount = Field(default=4, description="Maximum nodes.")
    capacity: CapacityName = Field(
        default="spot",
        description="`spot`, `preemptible` (GKE only) or, for a GPU pool only, `on-demand` (a fallback pool).",
    )
    eviction_policy: Literal["Delete", "Deallocate"] = Field(
        default="Delete",
        description="AKS spot: what happens to an evicted node; deallocated nodes still count against quota.",
    )
    max_price: Number = Field(
        default=-1,
        description="AKS spot: the most to pay, in USD/hour with up to 5 decimals, or -1: never evict on price, "
        "pay at most the on-demand price.",
    )
    taints: tuple[Text, ...] = Field(
        default=(),
        description="Extra taints, as `key=value:Effect` with Kubernetes' syntax for the key and value and Effect "
        "NoSchedule, PreferNoSchedule or NoExecute; the prefixes `spotkube.io/` and the cloud's own are reserved.",
    )

    @field_validator("max_price")
    @classmethod
    def _max_price(cls, value: float) -> float:
        accepted = "use -1 (pay up to the on-demand price) or a positive USD/hour amount"
        shown = f"{value:g}"
        if value == -1:
            return value
        try:
            exponent = Decimal(str(value)).as_tuple().exponent
        except InvalidOperation as err:
            raise ValueError(f"{shown} is not a price; {accepted}") from err
        if value <= 0:
            raise ValueError(f"{shown} is not allowed; {accepted}")
        if isinstance(exponent, int) and exponent < -5:
            raise ValueError(f"{value} has more than 5 decimals, which Azure refuses; {accepted}")
        return value

    @field_validator("taints")
    @classmethod
    def _taints(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for text in value:
            Taint.parse(text)
        return value

    def parsed_taints(self) -> tuple[Taint, ...]:
        return tuple(Taint.parse(t) for t in self.taints)


class GpuPool(SpotPool):
    """A GPU pool that scales 0..N, on spot, preemptible or on-demand capacity."""

    gpu: GpuSpec | None = Field(
        default=None,
        description="GPU type and count; unset = filled in from the machine. N1 machines on GKE need it.",
    )
    gpu_driver: Literal["DEFAULT", "LATEST", "INSTALLATION_DISABLED"] = Field(
        default="DEFAULT",
        description="GKE: the NVIDIA driver version GKE installs; `INSTALLATION_DISABLED` if you install it yourself.",
    )


class AutoscalerSettings(_Model):
    """Cluster autoscaler tuning (AKS `autoScalerProfile`; GKE uses `profile`)."""

    expander: Literal["priority", "least-waste", "most-pods", "random"] = Field(
        default="priority", description="AKS: `priority` makes spot pools win over on-demand fallbacks."
    )
    scan_interval: Text = Field(
        default="10s", description="AKS: how often the autoscaler looks for pending pods, in whole seconds (`10s`)."
    )
    max_node_provision_time: Text = Field(
        default="10m",
        description="AKS: how long the autoscaler waits for a requested node (GPU allocatable included) before it "
        "gives up on its pool and tries the next priority tier, in whole minutes (`10m`); AKS's own default is "
        "15m. Bounds how long a spot stock-out stalls a GPU step before on-demand is used.",
    )
    new_pod_scale_up_delay: Text = Field(
        default="0s",
        description="AKS: how old a pending pod must be before the autoscaler acts on it, an integer with `s`, `m` "
        "or `h` (`0s`, AKS's default).",
    )
    scale_down_unneeded_time: Text = Field(
        default="10m", description="AKS: how long a node is unneeded before it is removed."
    )
    scale_down_delay_after_add: Text = Field(default="10m", description="AKS: scale-down pause after a scale-up.")
    max_graceful_termination_sec: Whole = Field(
        default=600, ge=0, description="AKS: pods' termination grace during scale-down, in seconds."
    )
    skip_nodes_with_local_storage: Flag = Field(
        default=False, description="AKS: keep nodes whose pods use local storage."
    )
    profile: Literal["BALANCED", "OPTIMIZE_UTILIZATION"] = Field(
        default="OPTIMIZE_UTILIZATION", description="GKE autoscaling profile."
    )


LoginMode = Literal["azurecli", "workloadidentity", "spn", "msi"]
DeployerNetwork = Literal["internet", "cluster-network"]


class DeployerSettings(_Model):
    """Who runs `pulumi up` and from where. The Kubernetes provider logs in as the deployer, so the
    deployer needs a credential that works without a person, rights on the cluster, and a network
    path to its API server; none of that is visible to a mock, so the plan's preflight checks it."""

    login: LoginMode = Field(
        default="azurecli",
        description="AKS: how kubelogin signs the deployer in: azurecli (the az CLI's account, for a person "
        "or CI after azure/login), workloadidentity (a federated token, AZURE_FEDERATED_TOKEN_FILE), spn (a "
        "service principal secret) or msi (a managed identity on an Azure host).",
    )
    network: DeployerNetwork = Field(
        default="internet",
        description="Where the deployer runs: internet (a hosted CI runner or a laptop) or cluster-network "
        "(a runner inside the cluster's VNet or VPC, which can reach a private API server).",
    )
    egress_ranges: tuple[Text, ...] = Field(
        default=(),
        description="Public CIDRs the deployer connects from (a runner's static egress). Added to the API "
        "server's authorized ranges whenever the API server restricts by address.",
    )
    grant_propagation_wait: Text = Field(
        default="5m",
        pattern=r"^[1-9][0-9]*(s|m)$",
        description="AKS: how long the first deployment waits after granting the deployer its Kubernetes "
        "rights before it creates objects (Azure RBAC assignments take minutes to apply).",
    )


class ClusterSettings(_Model):
    """Cluster-wide settings; the security switches default to on, or on in prod."""

    kubernetes_version: Text | None = Field(
        default=None,
        description="Pinned Kubernetes version: `major.minor` or `major.minor.patch` (GKE also takes a GKE version "
        "such as `1.33.2-gke.1111000`); unset follows the channel.",
    )
    allow_unlisted_region: Flag = Field(
        default=False,
        description="Accept a `region` that is not in spotkube's bundled region list of the cloud (a region "
        "newer than this spotkube release); its name is still checked for the cloud's shape.",
    )
    channel: Text | None = Field(
        default=None,
        description="AKS upgrade channel (stable, rapid, patch, node-image, none; default stable) "
        "or GKE release channel (RAPID, REGULAR, STABLE, EXTENDED; default REGULAR).",
    )
    resource_group_name: Text | None = Field(
        default=None, description="AKS: use this existing resource group instead of creating one."
    )
    project: Text | None = Field(default=None, description="GKE: the Google Cloud project id (required on GKE).")
    network: Text | None = Field(
        default=None, description="GKE: VPC network name or self link; unset = the project's `default` network."
    )
    subnetwork: Text | None = Field(
        default=None,
        description="GKE: subnetwork in the cluster's region; unset = the network's subnet there. Private "
        "nodes reach registries outside Google only through Cloud NAT on it.",
    )
    private: Flag | None = Field(
        default=None, description="Private API server (AKS) or private nodes (GKE); default: on in prod."
    )
    authorized_ip_ranges: tuple[Text, ...] = Field(
        default=(), description="CIDRs allowed to reach the API server."
    )
    local_accounts_disabled: Flag | None = Field(
        default=None, description="AKS: disable local accounts, so Entra ID is the only way in; default: on in prod."
    )
    admin_group_object_ids: tuple[Text, ...] = Field(
        default=(),
        description="AKS: object ids of the Entra ID groups that get cluster admin and the RBAC Cluster Admin role.",
    )
    network_policy: Literal["cilium", "azure", "calico"] = Field(
        default="cilium",
        description="AKS: `cilium` (Azure CNI overlay with the Cilium dataplane), `azure` or `calico`; GKE: "
        "`cilium` (Dataplane V2) or `calico`.",
    )
    deletion_protection: Flag | None = Field(
        default=None, description="`protect` (and GKE's deletion_protection) on the cluster; default: on in prod."
    )
    autoscaler: AutoscalerSettings = Field(
        default_factory=AutoscalerSettings, description="Cluster autoscaler tuning."
    )
    deployer: DeployerSettings = Field(
        default_factory=DeployerSettings, description="Who runs `pulumi up` and from where."
    )
    egress: Literal["cloud-nat", "own"] | None = Field(
        default=None,
        description="GKE private nodes' way out to public registries: cloud-nat (default: spotkube adds a "
        "Cloud Router and Cloud NAT) or own (the network already has NAT or a proxy).",
    )
    dns_endpoint: Flag | None = Field(
        default=None,
        description="GKE: reach the control plane through its DNS-based endpoint, authorised by IAM and "
        "not by source address (default true); the kubeconfig then uses it.",
    )

    def api_server_ranges(self, restricted: bool) -> tuple[str, ...]:
        """The API server's authorized ranges when it restricts by address: the listed ones plus the
        deployer's own, so a stack that restricts the API server never locks its deployer out."""
        if not restricted:
            return ()
        extra = [r for r in self.deployer.egress_ranges if r not in self.authorized_ip_ranges]
        return (*self.authorized_ip_ranges, *extra)


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

    sku: Text = Field(min_length=1, description="VM size (AKS, e.g. Standard_D4s_v3) or machine type (GKE); "
                      "a GKE GPU type such as nvidia-tesla-t4 with `kind: accelerator`.")
    kind: Literal["machine", "accelerator"] = Field(
        default="machine", description="`machine` (a node, GPUs included where the size carries them) or "
        "`accelerator` (one GKE N1 GPU, billed on top of its machine).")
    capacity: CapacityName = Field(description="`spot`, `preemptible` (GKE) or `on-demand`.")
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
        description="On AKS, deploy NVIDIA's device plugin to every GPU pool (false if you run the GPU Operator); "
        "GKE always uses its own managed plugin.",
    )
    version: Text = Field(
        default="v0.20.0", pattern=r"^v\d+\.\d+\.\d+$", description="NVIDIA k8s-device-plugin release: the image tag."
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
    retry_policy: Literal["Always", "OnError"] = Field(
        default="Always",
        description="Argo retryPolicy every step inherits. Always (default) retries a pod deleted with its node "
        "(an Error to Argo) and a pod evicted or stopped by a node shutdown (a Failure); OnError, KFP's own "
        "default, retries only the first.",
    )
    retry_limit: Annotated[int, Field(ge=0, le=10), Strict(), BeforeValidator(_whole_number)] | None = Field(
        default=None,
        description="Raises the retry limit of steps that don't call set_retry above KFP's shipped one (2 in "
        "2.17.0); unset keeps KFP's, and a lower value never weakens it. Argo gives it to DAG templates too.",
    )

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
    """One platform: a cluster with its pools, for one cloud, environment and region."""

    cloud: Cloud = Field(description="Which cloud: `aks` or `gke`.")
    environment: Text = Field(
        pattern=r"^[a-z][a-z0-9-]{0,15}$",
        description="Environment name, e.g. dev, staging or prod. `prod` turns on every unset security switch "
        "(`cluster.private`, `cluster.localAccountsDisabled`, `cluster.deletionProtection`) and `protect`.",
    )
    region: Text = Field(
        pattern=r"^[a-z][a-z0-9-]+$",
        description="Azure region (e.g. uksouth) or Google Cloud region (e.g. us-central1).",
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
        description="NVIDIA's device plugin: a DaemonSet on every AKS GPU pool; GKE keeps its own managed plugin.",
    )
    kubeflow: KubeflowSettings = Field(
        default_factory=KubeflowSettings,
        description="Kubeflow Pipelines standalone, on the on-demand pools.",
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


def all_pools(spec: PlatformSpec) -> Iterator[tuple[str, _PoolBase]]:
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


#: The top-level config keys a stack may set under the `spotkube:` namespace.
CONFIG_KEYS: tuple[str, ...] = tuple(
    field.alias or name for name, field in PlatformSpec.model_fields.items()
)


def _path(loc: Sequence[str | int]) -> str:
    """`("gpuPools", 1, "maxPrice")` -> `gpuPools[1].maxPrice`."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{cut(part)}" if out else cut(part))
    return out


def user_key(path: str, style: KeyStyle) -> str:
    """A problem's key path as the user spelt it: `spotkube:gpuPools[0].maxPrice` in a stack file,
    `gpu_pools[0].max_price` in Python args."""
    if style == "stack":
        return config_key(path)
    return python_path(PlatformSpec, path.removeprefix(f"{CONFIG_NAMESPACE}:"))


def in_style(problems: Sequence[Problem], style: KeyStyle) -> list[Problem]:
    """Problems whose paths the rules spelt for a stack file (`spotkube:` and camelCase), respelt."""
    if style == "stack":
        return list(problems)
    return [Problem(user_key(p.path, style), p.message) for p in problems]


def model_problems(
    values: Mapping[str, Any], style: KeyStyle = "stack"
) -> tuple[PlatformSpec | None, list[Problem]]:
    """Validate config values (keys without namespace) against the models alone: types, ranges and
    single fields. The cloud's rules come after, in `validation.parse_spec`. Paths keep the user's
    own spelling of each key, with `spotkube:` for a stack file."""
    known = [*CONFIG_KEYS, *PlatformSpec.model_fields]
    accepted = accepted_keys(PlatformSpec, style)
    unknown = [key for key in values if key not in known]
    problems = [
        Problem(_key(cut(key), style), f"is not a known key; accepted keys: {', '.join(accepted)}"
                f"{did_you_mean(str(key), accepted)}")
        for key in unknown
    ]
    try:
        spec = PlatformSpec.model_validate({k: v for k, v in values.items() if k not in unknown})
    except ValidationError as err:
        for error in err.errors():
            problems.append(Problem(_key(_path(tuple(error["loc"])), style), describe(error, PlatformSpec, style)))
        return None, problems
    return spec, problems


def _key(path: str, style: KeyStyle) -> str:
    return config_key(path) if style == "stack" else path


Settings = TypeVar("Settings", bound=BaseModel)


def parse_settings(model: type[Settings], values: Mapping[str, Any], source: str) -> Settings:
    """Validate one settings model given as component args, with the messages `parse_spec` gives."""
    try:
        return model.model_validate(dict(values))
    except ValidationError as err:
        problems = [Problem(_path(tuple(error["loc"])) or "args", describe(error, model, "python"))
                    for error in err.errors()]
        raise SpecError(source, problems) from None
