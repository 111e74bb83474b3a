"""Every cloud spotkube knows, in one registry (`CLOUDS`), and the platform's pure steps bound to it.

Each cloud is one folder here (`aks/`, `gke/`) whose `profile` module says everything the cloud-neutral
code needs to know about it (`spotkube.platform.cloud.CloudProfile`). The neutral code takes the
registry as an argument and never imports a cloud; the functions below hand it over, so callers that
don't know the stack's cloud (the CLI, the stack program, the judges) ask here. Adding a cloud is a
folder and one line in `CLOUDS`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from spotkube.clouds.aks import profile as aks
from spotkube.clouds.gke import profile as gke
from spotkube.platform import bootstrap, catalog, kubeconfigs, plan, project, validation
from spotkube.platform.bootstrap import BootstrapSpec
from spotkube.platform.cloud import CloudProfile, RegisteredPool
from spotkube.platform.contract import Cloud
from spotkube.platform.cost import prices
from spotkube.platform.input_messages import KeyStyle
from spotkube.platform.maintenance import UpgradeExposure
from spotkube.platform.spec import PlatformSpec

CLOUDS: dict[str, CloudProfile] = {p.cloud: p for p in (aks.PROFILE, gke.PROFILE)}
#: Every cloud's pricing facts, by the price table's name for the cloud (azure, gcp).
PRICING: dict[str, prices.CloudPricing] = {p.facts.pricing.name: p.facts.pricing for p in CLOUDS.values()}
#: Every cloud's shipped part of the GPU catalog, by the catalog's name for the cloud.
CATALOG_PARTS: dict[str, Traversable] = {
    c: p.facts.catalog_file for c, p in CLOUDS.items() if p.facts.catalog_file is not None}


def profile(cloud: Cloud | str) -> CloudProfile:
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
    """`bootstrap.read_bootstrap` with every cloud's bootstrap settings."""
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


def upgrade_exposures(resources: Sequence[tuple[str, str, Mapping[str, Any]]]) -> list[UpgradeExposure]:
    """Every registered worker pool's upgrade exposure, whichever cloud it belongs to: each profile
    reads only its own resources, so the policy pack judges programs without knowing their cloud."""
    return [e for p in CLOUDS.values() if p.resources.read_upgrades for e in p.resources.read_upgrades(resources)]


def registered_pools(type_token: str, name: str, inputs: Mapping[str, Any]) -> list[RegisteredPool]:
    """The node pools any registration declares, whichever cloud it belongs to (none for the rest):
    the policy pack judges programs without knowing their cloud."""
    return [pool for p in CLOUDS.values() for pool in p.resources.read_pools(type_token, name, inputs)]


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
    return kubeconfigs.login_problems(kubeconfig, (p.review.login_problem for p in CLOUDS.values()))


def offline_outputs(type_token: str, name: str, inputs: Mapping[str, Any]) -> dict[str, Any]:
    """What the cloud of a registration (type token, resource name, inputs) would compute for it, for
    the mocks (`spotkube.testing.SpotkubeMocks`, which the offline plan runs on)."""
    return {key: value for p in CLOUDS.values()
            for key, value in p.resources.offline_outputs(type_token, name, inputs).items()}


def offline_id(type_token: str, name: str, inputs: Mapping[str, Any]) -> str | None:
    """The id the cloud of a registration would give it, where its programs read it (Azure's ARM ids,
    which role assignments are scoped to); None where any id does."""
    return next((i for p in CLOUDS.values()
                 if (i := p.resources.offline_id(type_token, name, inputs)) is not None), None)


def offline_answer(token: str) -> dict[str, Any]:
    """A provider function's answer for the mocks: its cloud's, else empty (spotkube doesn't call it)."""
    return next((dict(answer) for p in CLOUDS.values()
                 if (answer := p.resources.offline_answer(token)) is not None), {})


def bundled_catalog() -> catalog.Catalog:
    """`catalog.bundled_catalog` with every cloud's shipped part."""
    return catalog.bundled_catalog(CATALOG_PARTS)


def gpu_catalog(user_file: Path | None = None) -> catalog.Catalog:
    """`catalog.gpu_catalog` with every cloud's shipped part: the catalog a plan uses."""
    return catalog.gpu_catalog(CATALOG_PARTS, user_file)


__all__ = [
    "CATALOG_PARTS",
    "CLOUDS",
    "PRICING",
    "CloudProfile",
    "RegisteredPool",
    "bundled_catalog",
    "checked",
    "deployable",
    "gpu_catalog",
    "hourly_price",
    "load_price_table",
    "load_stack_spec",
    "load_user_price_table",
    "login_problems",
    "offline_answer",
    "offline_id",
    "offline_outputs",
    "parse_spec",
    "plan_platform",
    "price_table",
    "profile",
    "read_bootstrap",
    "read_spec",
    "registered_pools",
    "upgrade_exposures",
]

