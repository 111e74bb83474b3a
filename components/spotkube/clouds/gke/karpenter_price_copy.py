"""GCP on-demand and spot machine prices from cloudpilot-ai/karpenter-provider-gcp's initial prices.

The provider's `pkg/providers/pricing/initial-prices.json` is `{"prices": {region: {"on_demand": {machine
type: USD per hour}, "spot": {...}}}}`, compiled from the Cloud Billing Catalog API, machine types with
their GPUs for the accelerator-optimized families (a2, a3, g2). It is not dated inside, so the import
takes the day of the commit it was read at. Preemptible VMs are billed at the Spot VMs' price (the
bundled table's notes cite Google's page), so its spot column prices both; it has no flex-start
(Dynamic Workload Scheduler) prices.
"""

from __future__ import annotations

import datetime
import json
from decimal import Decimal
from typing import Any

from spotkube.platform.cost.model import Capacity
from spotkube.platform.cost.price_copy import CopiedPrices, PriceCopy, PriceCopyError

#: How `spotkube prices import` names this copy.
NAME = "karpenter-gcp"
#: The copy's columns, and the capacities each prices.
_COLUMNS: dict[str, tuple[Capacity, ...]] = {"on_demand": ("on-demand",), "spot": ("spot", "preemptible")}
PREEMPTIBLE_AS_SPOT = ("preemptible VMs use the same pricing model as Spot VMs "
                       "(https://docs.cloud.google.com/compute/docs/instances/create-use-preemptible)")
NO_FLEX_START = ("no flex-start (Dynamic Workload Scheduler) price in cloudpilot-ai/karpenter-provider-gcp's "
                 "initial prices (on-demand and spot only) nor in any other dated copy reachable; Google publishes "
                 "flex-start only as a discount for A4, A3 and A2 machine types, 'up to 53%' off on-demand "
                 "(https://cloud.google.com/products/dws/pricing, read 2026-11-27): a ceiling on the discount, not a "
                 "price; add the row to your price file or the stack's cost.prices")


def read(text: str, url: str, seen: datetime.date | None = None) -> CopiedPrices:
    """The copy's prices by region and capacity; `seen` (the commit's day) is required."""
    if seen is None:
        raise PriceCopyError(f"{url}: this copy is not dated inside; give the day of the commit it was read at "
                             "(--date YYYY-MM-DD)")
    try:
        data: Any = json.loads(text, parse_float=Decimal)
    except json.JSONDecodeError as err:
        raise PriceCopyError(f"{url}: not JSON (line {err.lineno}, column {err.colno}: {err.msg})") from None
    regions = data.get("prices") if isinstance(data, dict) else None
    if not isinstance(regions, dict) or not regions:
        raise PriceCopyError(f'{url}: expected {{"prices": {{region: {{"on_demand": {{...}}, "spot": {{...}}}}}}}}')
    prices: dict[tuple[str, Capacity], dict[str, Decimal]] = {}
    for region, columns in regions.items():
        for column, capacities in _COLUMNS.items():
            by_type = columns.get(column, {}) if isinstance(columns, dict) else None
            if not isinstance(by_type, dict) or not all(isinstance(v, Decimal | int) for v in by_type.values()):
                raise PriceCopyError(f"{url}: prices.{region}.{column}: expected machine type -> USD per hour")
            for capacity in capacities:
                prices[(region, capacity)] = {name: Decimal(v) for name, v in by_type.items() if v > 0}

    def source(region: str, capacity: Capacity) -> str:
        column = "on_demand" if capacity == "on-demand" else "spot"
        text = (f"Cloud Billing Catalog API as compiled in cloudpilot-ai/karpenter-provider-gcp's initial prices, "
                f"{url} ({column} column, {region}; committed {seen.isoformat()})")
        return text + (f"; {PREEMPTIBLE_AS_SPOT}" if capacity == "preemptible" else "")

    return CopiedPrices(cloud="gcp", seen=seen, prices=prices, source=source, missing={"flex-start": NO_FLEX_START},
                        unrefreshable=frozenset({"flex-start"}))


#: The copy as `spotkube prices import` offers it.
COPY = PriceCopy(read,
                 "cloudpilot-ai/karpenter-provider-gcp's pkg/providers/pricing/initial-prices.json",
                 dated_inside=False)
