"""Azure on-demand prices of every region from Azure/karpenter-provider-azure's generated table.

The provider's `pkg/providers/pricing/zz_generated.pricing.go` is generated from the Azure Retail Prices
API (Linux pay-as-you-go meters, every VM size, one map per region) and says when: `// generated at
<RFC 3339 time>`. It holds no spot prices (the provider reads those at run time), so every spot price
it would have given stays unpriced, with the `spotkube prices refresh` command that reads it. Being a
region's whole Linux price list, it also tells the catalog where each size is offered.
"""

from __future__ import annotations

import datetime
import re
from decimal import Decimal

from spotkube.platform.cost.model import Capacity
from spotkube.platform.cost.price_copy import CopiedPrices, PriceCopy, PriceCopyError

#: How `spotkube prices import` names this copy.
NAME = "karpenter-azure"
_GENERATED = re.compile(r"^// generated at (\d{4}-\d{2}-\d{2})T[0-9:]+Z$", re.MULTILINE)
_REGION = re.compile(r'^\s*initialOnDemandPrices\["([a-z0-9]+)"\] = map\[string\]float64\{$')
_PRICE = re.compile(r'^\s*"([^"]+)":\s*([0-9]+(?:\.[0-9]+)?),$')
#: Why no spot price comes from this copy.
NO_SPOT = ("no reachable dated copy holds the Azure Spot meter of this size in this region "
           "(Azure/karpenter-provider-azure's generated table, which priced it on demand, is on-demand only)")


def read(text: str, url: str, seen: datetime.date | None = None) -> CopiedPrices:
    """The copy's on-demand prices by region; `seen` is ignored, the file dates itself."""
    generated = _GENERATED.search(text)
    if generated is None:
        raise PriceCopyError(f"{url}: no `// generated at YYYY-MM-DDThh:mm:ssZ` line: not karpenter-provider-azure's "
                             "zz_generated.pricing.go")
    prices: dict[tuple[str, Capacity], dict[str, Decimal]] = {}
    region: str | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        if (opened := _REGION.match(line)) is not None:
            region = opened[1]
            prices[(region, "on-demand")] = {}
        elif region is not None and line.strip() == "}":
            region = None
        elif region is not None and (price := _PRICE.match(line)) is not None:
            if Decimal(price[2]) > 0:
                prices[(region, "on-demand")][price[1]] = Decimal(price[2])
        elif region is not None and line.strip():
            raise PriceCopyError(f"{url}, line {number}: not a `\"size\": price,` line in region {region}'s map")
    if not prices:
        raise PriceCopyError(f"{url}: no `initialOnDemandPrices[\"region\"] = map[string]float64{{` map in it")
    day = generated[1]

    def source(region: str, capacity: Capacity) -> str:
        return (f"Azure Retail Prices API as generated into Azure/karpenter-provider-azure's initial prices, {url} "
                f"({region}, Linux pay-as-you-go; generated {day})")

    return CopiedPrices(cloud="azure", seen=datetime.date.fromisoformat(day), prices=prices, source=source,
                        missing={"spot": NO_SPOT}, whole_regions=True)


#: The copy as `spotkube prices import` offers it.
COPY = PriceCopy(read,
                 "Azure/karpenter-provider-azure's pkg/providers/pricing/zz_generated.pricing.go",
                 dated_inside=True)
