"""Every cloud spotkube knows, in one registry (`CLOUDS`), and the platform's pure steps bound to it.

Each cloud is a folder (`aks/`, `gke/`) whose `profile` says what the neutral code needs
(`spotkube.platform.cloud.Cloud`). The neutral code takes the registry as an argument and never imports a
cloud; callers that don't know the stack's cloud ask here. A cloud's modules load when its profile is first
asked for: a plan of an AKS stack never loads GKE's.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from importlib import import_module
from importlib.resources.abc import Traversable
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from spotkube.platform import catalog, contract, kubeconfigs, plan, project, validation
from spotkube.platform.cloud import Cloud, RegisteredPool
from spotkube.platform.cost import prices
from spotkube.platform.input_messages import KeyStyle
from spotkube.platform.maintenance import UpgradeExposure
from spotkube.platform.records import record
from spotkube.platform.spec import PlatformSpec

if TYPE_CHECKING:
    from spotkube.platform.bootstrap import BootstrapSpec


@record
class CloudModules:
    """A registered cloud: its folder (`spotkube.clouds.<name>`), whose modules load only where a stack of
    that cloud needs them (`profile`, whose `PROFILE` is its `Cloud`; `catalog`, whose `CATALOG_FILE` and
    `PRICING` every plan reads; `kubeconfig`, `labels`, `offline`, `args`...), and its Pulumi package."""

    name: str
    #: The Pulumi package (a type token's first part) of the resources and functions the cloud reads. Its
    #: Python SDK (`pulumi_<package>`) comes with the extra named after the cloud (`spotkube[<name>]`).
    package: str
    #: The loggers of the libraries spotkube reads the cloud's APIs with (its SDKs), which the CLI keeps
    #: quiet: their failures reach the user as spotkube's own one-line errors.
    sdk_loggers: tuple[str, ...]

    def module(self, name: str) -> str:
        return f"{__name__}.{self.name}.{name}"

    @property
    def sdk(self) -> str:
        return "pulumi_" + self.package.replace("-", "_")


#: Every cloud spotkube knows, by name: adding a cloud is its folder and one line here.
PROFILES: dict[str, CloudModules] = {m.name: m for m in (
    CloudModules("aks", "azure-native", ("azure",)),
    CloudModules("gke", "gcp", ("google",)),
)}
#: The contract reads each cloud's labels and taints by the cloud's name.
contract.CLOUD_LABELS.update({name: import_module(m.module("labels")).LABELS for name, m in PROFILES.items()})


class Registry(Mapping[str, Cloud]):
    """The clouds by name, each profile imported on first use: its name is known without loading it."""

    def __getitem__(self, cloud: str) -> Cloud:
        found: Cloud = import_module(PROFILES[cloud].module("profile")).PROFILE
        return found

    def __contains__(self, cloud: object) -> bool:
        return cloud in PROFILES

    def __iter__(self) -> Iterator[str]:
        return iter(PROFILES)

    def __len__(self) -> int:
        return len(PROFILES)


class _Gathered(Mapping[str, Any]):
    """A mapping gathered from every cloud's data module on first use."""

    def __init__(self, gather: Callable[[Mapping[str, ModuleType]], dict[str, Any]]) -> None:
        self._gather = gather

    @functools.cached_property
    def _values(self) -> dict[str, Any]:
        return self._gather({cloud: import_module(m.module("catalog")) for cloud, m in PROFILES.items()})

    def __getitem__(self, key: str) -> Any:
        return self._values[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)


CLOUDS: Mapping[str, Cloud] = Registry()
#: Every cloud's pricing facts, by the price table's name for the cloud (azure, gcp).
PRICING: Mapping[str, prices.CloudPricing] = _Gathered(lambda data: {m.PRICING.name: m.PRICING for m in data.values()})
#: Every cloud's shipped part of the GPU catalog, by the catalog's name for the cloud.
CATALOG_PARTS: Mapping[str, Traversable] = _Gathered(lambda data: {c: m.CATALOG_FILE for c, m in data.items()})


def profile(cloud: str) -> Cloud:
    """The profile of a cloud the spec has already accepted."""
    return CLOUDS[cloud]


def parse_spec(values: Mapping[str, Any], source: str, style: KeyStyle = "stack") -> PlatformSpec:
    """`validation.parse_spec` over every cloud spotkube knows."""
    return validation.parse_spec(values, source, CLOUDS, style)


def checked(spec: PlatformSpec, source: str, style: KeyStyle = "stack") -> PlatformSpec:
    """`validation.checked` over every cloud spotkube knows."""
    return validation.checked(spec, source, CLOUDS, style)


def deployable(spec: PlatformSpec, source: str, style: KeyStyle = "stack") -> PlatformSpec:
    """`validation.deployable` over every cloud spotkube knows."""
    return validation.deployable(spec, source, CLOUDS, style)


def read_bootstrap(config: Mapping[str, str], source: str) -> BootstrapSpec:
    """`bootstrap.read_bootstrap` with every cloud's bootstrap settings; `platform.bootstrap` is imported
    here because only the bootstrap program needs it, never a plan."""
    from spotkube.platform import bootstrap

    return bootstrap.read_bootstrap(config, source, {c: p.commands.options.bootstrap for c, p in CLOUDS.items()})


def plan_platform(spec: PlatformSpec) -> plan.PlatformPlan:
    """The plan of a resolved spec, with its cloud's facts."""
    return plan.plan_platform(spec, CLOUDS[spec.cloud])


def load_stack_spec(proj: project.Project, stack: str) -> PlatformSpec:
    """The validated spec of one stack, read as `pulumi up` would read it; errors name the stack file."""
    return project.load_stack_spec(proj, stack, CLOUDS)


def read_spec(config: Mapping[str, str], proj: project.Project, stack: str) -> PlatformSpec:
    """`project.read_spec` over every cloud spotkube knows."""
    return project.read_spec(config, proj, stack, CLOUDS)


def _readers(token: str) -> list[Cloud]:
    """The profiles that read a type token or function token: those of the clouds whose Pulumi package
    it names (none for a Kubernetes resource or spotkube's own components)."""
    package = token.partition(":")[0]
    return [CLOUDS[cloud] for cloud, m in PROFILES.items() if package == m.package]


def _in_order(profiles: Iterable[Cloud]) -> list[Cloud]:
    """`profiles` in the registry's order."""
    chosen = {p.cloud for p in profiles}
    return [CLOUDS[cloud] for cloud in PROFILES if cloud in chosen]


def upgrade_exposures(resources: Sequence[tuple[str, str, Mapping[str, Any]]]) -> list[UpgradeExposure]:
    """Every registered worker pool's upgrade exposure, whichever cloud it belongs to: each profile
    reads only its own resources, so the policy pack judges programs without knowing their cloud."""
    tokens = {type_token for type_token, _, _ in resources}
    profiles = {id(p): p for token in tokens for p in _readers(token)}
    return [e for p in _in_order(profiles.values()) if p.read_upgrades
            for e in p.read_upgrades(resources)]


def registered_pools(type_token: str, name: str, inputs: Mapping[str, Any]) -> list[RegisteredPool]:
    """The node pools any registration declares, whichever cloud it belongs to (none for the rest):
    the policy pack judges programs without knowing their cloud."""
    return [pool for p in _readers(type_token) for pool in p.read_pools(type_token, name, inputs)]


def load_price_table(path: Path | None = None) -> prices.PriceTable:
    """`prices.load_table` with every cloud's pricing facts: the bundled table, or the one at `path`."""
    return prices.load_table(PRICING, path)


def load_user_price_table(path: Path) -> prices.PriceTable:
    """`prices.load_user_table` with every cloud's pricing facts."""
    return prices.load_user_table(path, PRICING)


def price_table(user_file: Path | None = None) -> prices.PriceTable:
    """`prices.price_table` with every cloud's pricing facts: the bundled table, the user's file over it."""
    return prices.price_table(PRICING, user_file)


def hourly_price(
    price_cloud: str, region: str, machine: str, capacity: str, gpu_type: str | None = None, gpu_count: int = 0,
    *, table: prices.PriceTable | None = None,
) -> prices.Price | None:
    """`prices.hourly_price` by the price table's name for the cloud, from the bundled table unless
    `table` is given; None for a cloud spotkube does not know, which has no price."""
    pricing = PRICING.get(price_cloud)
    if pricing is None:
        return None
    return prices.hourly_price(pricing, region, machine, capacity, gpu_type, gpu_count,
                               table=table if table is not None else load_price_table())


def login_problems(kubeconfig: str) -> list[str]:
    """Why a kubeconfig would stop `pulumi up` at a login prompt, whichever cloud's plugin it runs."""
    checks = (import_module(m.module("kubeconfig")).login_problem for m in PROFILES.values())
    return kubeconfigs.login_problems(kubeconfig, checks)


def offline_outputs(type_token: str, name: str, inputs: Mapping[str, Any]) -> dict[str, Any]:
    """What the cloud of a registration (type token, resource name, inputs) would compute for it, for
    the mocks (`spotkube.testing.SpotkubeMocks`, which the offline plan runs on)."""
    return {key: value for p in _readers(type_token)
            for key, value in p.offline_outputs(type_token, name, inputs).items()}


def offline_id(type_token: str, name: str, inputs: Mapping[str, Any]) -> str | None:
    """The id the cloud of a registration would give it, where its programs read it (Azure's ARM ids,
    which role assignments are scoped to); None where any id does."""
    return next((i for p in _readers(type_token)
                 if (i := p.offline_id(type_token, name, inputs)) is not None), None)


def offline_answer(token: str) -> dict[str, Any]:
    """A provider function's answer for the mocks: its cloud's, else empty (spotkube doesn't call it)."""
    return next((dict(answer) for p in _readers(token)
                 if (answer := p.offline_answer(token)) is not None), {})


def bundled_catalog() -> catalog.Catalog:
    """`catalog.bundled_catalog` with every cloud's shipped part."""
    return catalog.bundled_catalog(CATALOG_PARTS)


def gpu_catalog(user_file: Path | None = None) -> catalog.Catalog:
    """`catalog.gpu_catalog` with every cloud's shipped part: the catalog a plan uses."""
    return catalog.gpu_catalog(CATALOG_PARTS, user_file)
