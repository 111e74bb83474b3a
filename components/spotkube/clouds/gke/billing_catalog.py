"""Google's own price list: Compute Engine prices from the Cloud Billing Catalog API.

Why this API: it is the machine-readable form of Compute Engine's price list, and it answers any
project's API key (cloud.google.com/billing/v1/how-tos/catalog-api). The key comes from the
environment variable the GKE profile names (`BILLING_API_KEY_ENV`), travels in the `X-Goog-Api-Key`
header (never in a URL, so no log or message can show it), and is never printed.

How a machine type's hourly price is put together (the catalog prices resources, not machine types):
    vCPUs x the family's core price + GiB x the family's RAM price (+ GPUs x the GPU's price, for
    the families that come with their GPUs: a2 and g2)
with the family's SKUs ("E2 Instance Core running in Americas", "N1 Predefined Instance Ram ...",
"G2 Instance Core ...", "Nvidia L4 GPU running in ..."). An N1 machine's GPUs are separate
accelerator rows, as the price table keeps them. The rules:
- spot against on-demand comes from `category.usageType` (`Preemptible` / `OnDemand`), never from the
  wording: a few spot SKUs are worded differently; commitments (`Commit1Yr`...) are left out;
- a SKU applies to the regions in its `serviceRegions`, never to the place named in its description;
- the price is the last `pricingInfo` entry (they are in time order), its tier starting at 0, read
  from `unitPrice` as `units` + `nanos` / 10^9, and only in the units expected (`h`, `GiBy.h`);
- zero prices (placeholder SKUs) are ignored;
- GCP prices preemptible VMs like Spot VMs, so each spot row is written for `preemptible` too.
Families whose machine types bundle Local SSD (a2-ultragpu, a3) are not priced here: their list
price needs the SSD, and the refresh says so instead of giving a figure that is too low.

Paging follows `nextPageToken` (up to 5000 SKUs a page); HTTP, retries and failures:
`spotkube.clouds.http`.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Iterator, Mapping, Sequence
from decimal import Decimal
from typing import Any

import requests

from spotkube.clouds.gke.catalog import N1_ACCELERATOR_COUNTS, PRICING, fixed_gpu_machine_types, is_n1
from spotkube.clouds.gke.karpenter_price_copy import PREEMPTIBLE_AS_SPOT
from spotkube.clouds.http import PriceFetchError, get_json, session
from spotkube.platform.cost.model import Capacity
from spotkube.platform.cost.prices import PriceRow
from spotkube.platform.cost.refresh import Fetched, FetchSettings, PriceTarget
from spotkube.platform.records import record

SERVICE = "Cloud Billing Catalog API"
#: Compute Engine's service id in the catalog.
COMPUTE_ENGINE = "6F81-5844-456A"
DEFAULT_ENDPOINT = "https://cloudbilling.googleapis.com"
API_KEY_HEADER = "X-Goog-Api-Key"
#: The most SKUs the API returns a page; Compute Engine has a few tens of thousands.
PAGE_SIZE = 5000
#: A cap on pages, so a server that never stops paging can't keep the refresh running.
MAX_PAGES = 200

#: Machine family -> the description its core and RAM SKUs start with (after "Spot Preemptible " for spot).
FAMILY_SKUS: dict[str, str] = {
    "e2": "E2 Instance",
    "n1": "N1 Predefined Instance",
    "n2": "N2 Instance",
    "n2d": "N2D AMD Instance",
    "g2": "G2 Instance",
    "a2": "A2 Instance",
}
#: GPU type -> the description its SKUs start with ("... GPU running in", "... GPU attached to Spot ...").
GPU_SKUS: dict[str, str] = {
    "nvidia-tesla-t4": "Nvidia Tesla T4 GPU",
    "nvidia-tesla-p4": "Nvidia Tesla P4 GPU",
    "nvidia-tesla-v100": "Nvidia Tesla V100 GPU",
    "nvidia-tesla-p100": "Nvidia Tesla P100 GPU",
    "nvidia-l4": "Nvidia L4 GPU",
    "nvidia-tesla-a100": "Nvidia Tesla A100 GPU",
    "nvidia-a100-80gb": "Nvidia Tesla A100 80GB GPU",
    "nvidia-h100-80gb": "Nvidia H100 80GB GPU",
    "nvidia-h100-mega-80gb": "Nvidia H100 80GB Mega GPU",
}
#: GiB per vCPU of the predefined shapes (Compute Engine's machine family pages; the same figures as
#: github.com/Cyclenerd/google-cloud-pricing-cost-calculator build/gcp.yml).
_GIB_PER_VCPU: dict[tuple[str, str], Decimal] = {
    ("e2", "standard"): Decimal(4), ("e2", "highmem"): Decimal(8), ("e2", "highcpu"): Decimal(1),
    ("n1", "standard"): Decimal("3.75"), ("n1", "highmem"): Decimal("6.5"), ("n1", "highcpu"): Decimal("0.9"),
    ("n2", "standard"): Decimal(4), ("n2", "highmem"): Decimal(8), ("n2", "highcpu"): Decimal(1),
    ("n2d", "standard"): Decimal(4), ("n2d", "highmem"): Decimal(8), ("n2d", "highcpu"): Decimal(1),
    ("g2", "standard"): Decimal(4),
}
_SHAPE = re.compile(r"^(?P<family>[a-z0-9]+)-(?P<kind>standard|highmem|highcpu)-(?P<vcpus>[0-9]+)$")
#: A2 Standard: 12 vCPUs and 85 GiB per A100; a2-megagpu-16g is 96 vCPUs and 1360 GiB.
_A2_HIGHGPU = re.compile(r"^a2-highgpu-(?P<gpus>[0-9]+)g$")
_USAGE = {"OnDemand": "on-demand", "Preemptible": "spot"}
_UNIT = {"CPU": "h", "RAM": "GiBy.h", "GPU": "h"}


@record
class Shape:
    """What a machine type is billed for: vCPUs, GiB of memory, and the GPUs it comes with (a2, g2)."""

    vcpus: int
    gib: Decimal
    gpu_type: str | None = None
    gpus: int = 0


def machine_shape(machine: str) -> Shape | None:
    """The billed shape of a predefined machine type spotkube prices, or None for one it doesn't."""
    fixed = fixed_gpu_machine_types().get(machine)
    if machine == "a2-megagpu-16g":
        return Shape(96, Decimal(1360), "nvidia-tesla-a100", 16)
    if (match := _A2_HIGHGPU.fullmatch(machine)) and fixed:
        gpus = int(match["gpus"])
        return Shape(12 * gpus, Decimal(85 * gpus), fixed[0], gpus)
    match = _SHAPE.fullmatch(machine)
    if not match or (match["family"], match["kind"]) not in _GIB_PER_VCPU:
        return None
    if match["family"] == "n1" and not is_n1(machine):
        return None
    vcpus = int(match["vcpus"])
    gib = _GIB_PER_VCPU[(match["family"], match["kind"])] * vcpus
    return Shape(vcpus, gib, *(fixed or (None, 0)))


@record
class Rate:
    """One SKU's hourly price in one region."""

    sku_id: str
    usd: Decimal
    effective: str


#: (resource, family or GPU type, capacity, region) -> the rate found.
Rates = dict[tuple[str, str, str, str], Rate]


def _resource(sku: Mapping[str, Any]) -> tuple[str, str] | None:
    """(resource, family or GPU type) a SKU prices, from its description; None for every other SKU."""
    description = str(sku.get("description", ""))
    group = str((sku.get("category") or {}).get("resourceGroup", ""))
    bare = description.removeprefix("Spot ").removeprefix("Preemptible ")
    for gpu, prefix in GPU_SKUS.items():
        if re.fullmatch(re.escape(prefix) + r" (running in|attached to Spot) .*", bare):
            return "GPU", gpu
    for family, prefix in FAMILY_SKUS.items():
        match = re.fullmatch(re.escape(prefix) + r" (Core|Ram) running in .*", bare)
        if match and group in ("CPU", "RAM", "N1Standard"):
            return ("CPU" if match[1] == "Core" else "RAM"), family
    return None


def _unit_price(sku: Mapping[str, Any], resource: str) -> tuple[Decimal, str] | None:
    """The list price of a SKU's last pricing entry, in the unit expected for its resource, or None."""
    timeline = sku.get("pricingInfo") or []
    if not timeline:
        return None
    latest = timeline[-1]
    expression = latest.get("pricingExpression") or {}
    if expression.get("usageUnit") != _UNIT[resource]:
        return None
    tiers = [t for t in expression.get("tieredRates") or [] if float(t.get("startUsageAmount", 0)) == 0]
    if not tiers:
        return None
    price = tiers[0].get("unitPrice") or {}
    if price.get("currencyCode", "USD") != "USD":
        return None
    amount = Decimal(str(price.get("units") or "0")) + Decimal(int(price.get("nanos") or 0)) / Decimal(10**9)
    return amount, str(latest.get("effectiveTime", ""))


def read_rates(skus: Iterator[Mapping[str, Any]], regions: set[str]) -> Rates:
    """The core, RAM and GPU rates of `regions` among `skus`. Where two SKUs price the same thing (a
    region listed under two place names), the dearer one is kept, so a refresh never understates."""
    rates: Rates = {}
    for sku in skus:
        resource = _resource(sku)
        capacity = _USAGE.get(str((sku.get("category") or {}).get("usageType", "")))
        if resource is None or capacity is None:
            continue
        found = _unit_price(sku, resource[0])
        if found is None or found[0] <= 0:
            continue
        for region in set(sku.get("serviceRegions") or ()) & regions:
            key = (resource[0], resource[1], capacity, region)
            known = rates.get(key)
            if known is None or found[0] > known.usd:
                rates[key] = Rate(str(sku.get("skuId", "?")), found[0], found[1])
    return rates


def list_skus(client: requests.Session, endpoint: str, api_key: str, settings: FetchSettings) -> Iterator[Any]:
    """Every Compute Engine SKU, page after page, following nextPageToken until there is none."""
    url = f"{endpoint.rstrip('/')}/v1/services/{COMPUTE_ENGINE}/skus"
    token: str | None = ""
    seen: set[str] = set()
    for _ in range(MAX_PAGES):
        params = {"currencyCode": "USD", "pageSize": str(PAGE_SIZE)}
        if token:
            params["pageToken"] = token
        page = get_json(client, SERVICE, url, settings, params=params, headers={API_KEY_HEADER: api_key},
                        secret=api_key)
        if not isinstance(page, dict) or not isinstance(page.get("skus", []), list):
            raise PriceFetchError(f"{SERVICE}: answered JSON without the documented 'skus' list")
        yield from page.get("skus", [])
        token = page.get("nextPageToken") or None
        if token is None:
            return
        if token in seen:
            raise PriceFetchError(f"{SERVICE}: repeated a nextPageToken it had already sent (a paging loop)")
        seen.add(token)
    raise PriceFetchError(f"{SERVICE}: sent more than {MAX_PAGES} pages of Compute Engine SKUs")


def _source(parts: Sequence[tuple[str, Rate]], day: datetime.date, capacity: str) -> str:
    terms = " + ".join(f"{what} (SKU {rate.sku_id}, ${rate.usd}/h)" for what, rate in parts)
    text = f"{SERVICE}, services/{COMPUTE_ENGINE}/skus, read {day.isoformat()}: {terms}"
    return text + (f"; {PREEMPTIBLE_AS_SPOT}" if capacity == "preemptible" else "")


def _rows(sku: str, kind: str, region: str, parts: Sequence[tuple[str, Decimal, Rate]],
          usage: str, day: datetime.date) -> list[PriceRow]:
    """The row for one capacity, and for spot its preemptible twin."""
    total = sum((count * rate.usd for _, count, rate in parts), Decimal(0))
    capacities: list[Capacity] = ["spot", "preemptible"] if usage == "spot" else ["on-demand"]
    described = [(what, rate) for what, _, rate in parts]
    return [PriceRow.model_validate({"cloud": "gcp", "region": region, "sku": sku, "kind": kind, "capacity": c,
                                     "usdPerHour": total, "source": _source(described, day, c), "date": day},
                                    context={PRICING.name: PRICING})
            for c in capacities]


def price_targets(targets: Sequence[PriceTarget], rates: Rates, day: datetime.date) -> Fetched:
    """The machine rows (GPUs included for a2 and g2) and N1 accelerator rows of `targets` from `rates`."""
    rows: list[PriceRow] = []
    missing: list[str] = []
    for target in dict.fromkeys(targets):
        if target.kind == "accelerator":
            for usage in ("on-demand", "spot"):
                gpu = rates.get(("GPU", target.machine, usage, target.region))
                if gpu is None:
                    missing.append(f"{target.machine} in {target.region} ({usage}: no SKU)")
                else:
                    rows += _rows(target.machine, "accelerator", target.region,
                                  [(f"1 × {target.machine}", Decimal(1), gpu)], usage, day)
            continue
        shape = machine_shape(target.machine)
        if shape is None:
            missing.append(f"{target.machine} in {target.region} (spotkube doesn't price this machine type from "
                           "its components; add a row to your price file)")
            continue
        items: list[tuple[str, str, str, Decimal]] = [
            (f"{shape.vcpus} vCPU", "CPU", target.machine.split("-")[0], Decimal(shape.vcpus)),
            (f"{shape.gib:f} GiB", "RAM", target.machine.split("-")[0], shape.gib)]
        if shape.gpu_type:
            items.append((f"{shape.gpus} × {shape.gpu_type}", "GPU", shape.gpu_type, Decimal(shape.gpus)))
        # An N1 machine named alone (`--sku n1-standard-8`) gets the rows of every GPU it can take
        # that the region sells, since the price table keeps them apart from the machine.
        accelerators = ([target.gpu_type] if target.gpu_type else list(N1_ACCELERATOR_COUNTS)) if is_n1(
            target.machine) else []
        for usage in ("on-demand", "spot"):
            found = [(what, count, rates.get((res, name, usage, target.region))) for what, res, name, count in items]
            lacking = [what for what, _, rate in found if rate is None]
            if lacking:
                missing.append(f"{target.machine} in {target.region} ({usage}: no SKU for {', '.join(lacking)})")
            else:
                rows += _rows(target.machine, "machine", target.region,
                              [(w, c, r) for w, c, r in found if r is not None], usage, day)
            for accelerator in accelerators:
                gpu = rates.get(("GPU", accelerator, usage, target.region))
                if gpu is not None:
                    rows += _rows(accelerator, "accelerator", target.region, [(f"1 × {accelerator}", Decimal(1), gpu)],
                                  usage, day)
                elif target.gpu_type:
                    missing.append(f"{accelerator} in {target.region} ({usage}: no SKU)")
    unique = {row.key: row for row in rows}
    return Fetched(tuple(unique.values()), tuple(dict.fromkeys(missing)))


def fetch(targets: Sequence[PriceTarget], settings: FetchSettings, endpoint: str | None,
          today: datetime.date, credential: str | None = None) -> Fetched:
    """Read every Compute Engine SKU once and price `targets` from them. `credential` is the API key."""
    if not credential:
        raise PriceFetchError(f"{SERVICE}: no API key was given (the CLI reads it from the environment)")
    regions = {t.region for t in targets}
    with session(settings, secret_headers=(API_KEY_HEADER,)) as http:
        rates = read_rates(list_skus(http, endpoint or DEFAULT_ENDPOINT, credential, settings), regions)
    return price_targets(targets, rates, today)
