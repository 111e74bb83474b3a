"""Azure's own price list: Linux on-demand and spot prices of VM sizes from the Retail Prices API.

Why this API: it is public and keyless, so `spotkube prices refresh` works with no Azure account
(learn.microsoft.com/rest/api/cost-management/retail-prices/azure-retail-prices). Its filter values are
case-sensitive, so names pass through exactly as given; Windows products (their price includes the licence)
and Low Priority meters (Azure Batch) are dropped; a skuName ending in " Spot" is the spot price.
HTTP, retries and failures: `spotkube.clouds.http`.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Sequence
from decimal import Decimal
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

import requests

from spotkube.clouds.aks.catalog import PRICING
from spotkube.clouds.http import PriceFetchError, get_json, host, session
from spotkube.platform.cost.prices import PriceRow
from spotkube.platform.cost.refresh import Fetched, FetchSettings, PriceTarget
from spotkube.platform.errors import SpotkubeError
from spotkube.platform.records import record

SERVICE = "Azure Retail Prices API"
DEFAULT_ENDPOINT = "https://prices.azure.com/api/retail/prices"
API_VERSION = "2023-01-01-preview"
#: One VM size in one region is a page or two; more than this means the paging is looping.
DEFAULT_MAX_PAGES = 20

_REGION = re.compile(r"^[a-z][a-z0-9]*$")
_SKU = re.compile(r"^Standard_[A-Za-z0-9][A-Za-z0-9_-]*$")
_DEFAULT_PORTS = {"http": 80, "https": 443}


class InvalidArmName(SpotkubeError, ValueError):
    """A region or VM size that is not written the way the ARM API (and so the price API) wants."""


def _check_names(region: str, sku: str) -> None:
    """Refuse names the API would silently match to nothing, before making any request."""
    if not _REGION.fullmatch(region):
        raise InvalidArmName(
            f"{region!r} is not an Azure ARM region name: use lower-case letters and digits with "
            "no spaces, e.g. uksouth or westeurope (not 'UK South')"
        )
    if not _SKU.fullmatch(sku):
        raise InvalidArmName(
            f"{sku!r} is not an Azure ARM VM size: use the exact case-sensitive name, e.g. "
            "Standard_D4s_v3 or Standard_NC4as_T4_v3"
        )


def build_filter(region: str, sku: str) -> str:
    """The OData `$filter` for Linux-and-Windows consumption prices of one VM size in one region."""
    _check_names(region, sku)
    return (
        f"serviceName eq 'Virtual Machines' and armRegionName eq '{region}' "
        f"and armSkuName eq '{sku}' and priceType eq 'Consumption'"
    )


def build_url(region: str, sku: str, endpoint: str = DEFAULT_ENDPOINT) -> str:
    """The first page's URL, percent-encoded so spaces and quotes survive any proxy unchanged."""
    query = urlencode({"api-version": API_VERSION, "$filter": build_filter(region, sku)}, quote_via=quote)
    return f"{endpoint}?{query}"


@record
class _Item:
    """The fields of one price item this client reads, checked for type."""

    arm_region: str
    arm_sku: str
    sku_name: str
    product_name: str
    meter_name: str
    price: Decimal
    currency: str
    unit: str
    price_type: str
    primary_region: bool


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    return scheme, (parts.hostname or "").lower(), parts.port or _DEFAULT_PORTS.get(scheme)


def _fail(url: str, what: str) -> PriceFetchError:
    return PriceFetchError(f"{SERVICE} at {host(url)}: {what}. spotkube keeps using the prices it has; retry the "
                           "refresh later.")


def _text(raw: dict[str, Any], key: str, url: str) -> str:
    value = raw.get(key)
    if not isinstance(value, str):
        raise _fail(url, f"sent a price item whose {key!r} is not text")
    return value


def _item(raw: Any, url: str) -> _Item:
    if not isinstance(raw, dict):
        raise _fail(url, "sent a price item that is not a JSON object")
    price = raw.get("retailPrice")
    if isinstance(price, bool) or not isinstance(price, int | float):
        raise _fail(url, "sent a price item whose 'retailPrice' is not a number")
    if price < 0:
        raise _fail(url, f"sent a negative 'retailPrice' ({price})")
    primary = raw.get("isPrimaryMeterRegion", True)
    return _Item(
        arm_region=_text(raw, "armRegionName", url),
        arm_sku=_text(raw, "armSkuName", url),
        sku_name=_text(raw, "skuName", url),
        product_name=_text(raw, "productName", url),
        meter_name=_text(raw, "meterName", url),
        price=Decimal(str(price)),  # through the text JSON sent, so 0.0487 stays 0.0487
        currency=_text(raw, "currencyCode", url),
        unit=_text(raw, "unitOfMeasure", url),
        price_type=_text(raw, "type", url),
        primary_region=primary is not False,
    )


def _pages(client: requests.Session, first_url: str, settings: FetchSettings, max_pages: int) -> list[_Item]:
    """Every item of every page, following NextPageLink on the same host only."""
    items: list[_Item] = []
    url: str | None = first_url
    seen: set[str] = set()
    while url is not None:
        if url in seen:
            raise _fail(first_url, "repeated a NextPageLink it had already sent (a paging loop)")
        if len(seen) == max_pages:
            raise _fail(first_url, f"sent more than {max_pages} pages for one VM size")
        if _origin(url) != _origin(first_url):
            raise _fail(first_url, f"sent a NextPageLink to another host ({host(url)})")
        seen.add(url)
        page = get_json(client, SERVICE, url, settings)
        if not isinstance(page, dict) or not isinstance(page.get("Items"), list):
            raise _fail(url, "answered JSON without the documented 'Items' list")
        items.extend(_item(raw, url) for raw in page["Items"])
        next_link = page.get("NextPageLink")
        if next_link is not None and not isinstance(next_link, str):
            raise _fail(url, "sent a 'NextPageLink' that is not a URL")
        url = next_link or None
    return items


def _is_linux_consumption(item: _Item, region: str, sku: str) -> bool:
    """Keep Linux pay-as-you-go hourly USD prices of exactly this size and region.

    Also dropped: zero prices (a free meter is not what a VM costs) and items marked
    `isPrimaryMeterRegion: false`, the API's copies of a meter listed under another region.
    """
    return (
        item.price > 0
        and item.arm_region == region
        and item.arm_sku == sku
        and item.price_type == "Consumption"
        and item.currency == "USD"
        and item.unit == "1 Hour"
        and item.primary_region
        and not item.product_name.endswith(" Windows")
        and not item.meter_name.endswith(" Low Priority")
    )


def fetch_vm_prices(
    region: str,
    sku: str,
    *,
    endpoint: str = DEFAULT_ENDPOINT,
    settings: FetchSettings | None = None,
    today: datetime.date | None = None,
    max_pages: int = DEFAULT_MAX_PAGES,
    client: requests.Session | None = None,
) -> list[PriceRow]:
    """The on-demand and spot rows for one VM size in one region, in the price table's shape.

    Returns one row per capacity the API lists (none when the size is not sold in the region). Each
    row's source names the API and the URL queried; its date is `today` (the current date unless given).

    Raises `InvalidArmName` for names the API would not match, and `PriceFetchError` when the
    service cannot be read or gives two different prices for the same capacity.
    """
    if max_pages < 1:
        raise ValueError(f"max_pages must be at least 1, got {max_pages}")
    settings = settings or FetchSettings()
    first_url = build_url(region, sku, endpoint)
    prices: dict[str, Decimal] = {}
    if client is not None:
        items = _pages(client, first_url, settings, max_pages)
    else:
        with session(settings) as http:
            items = _pages(http, first_url, settings, max_pages)
    for item in items:
        if not _is_linux_consumption(item, region, sku):
            continue
        capacity = "spot" if item.sku_name.endswith(" Spot") else "on-demand"
        known = prices.setdefault(capacity, item.price)
        if known != item.price:
            raise _fail(first_url, f"listed two {capacity} prices for {sku} in {region} ({known} and {item.price})")
    day = today or datetime.date.today()
    return [
        PriceRow.model_validate({"cloud": "azure", "region": region, "sku": sku, "kind": "machine",
                                 "capacity": capacity, "usd_per_hour": price, "source": f"{SERVICE}, {first_url}",
                                 "date": day}, context={PRICING.name: PRICING})
        for capacity, price in sorted(prices.items())
    ]


def fetch(targets: Sequence[PriceTarget], settings: FetchSettings, endpoint: str | None,
          today: datetime.date, credential: str | None = None) -> Fetched:
    """Every target's on-demand and spot rows, one query per VM size and region, over one connection.
    Azure prices GPU sizes whole, so a target's GPUs add no query."""
    rows: list[PriceRow] = []
    missing: list[str] = []
    with session(settings) as http:
        for target in dict.fromkeys((t.region, t.machine) for t in targets):
            region, sku = target
            found = fetch_vm_prices(region, sku, endpoint=endpoint or DEFAULT_ENDPOINT, settings=settings,
                                    today=today, client=http)
            rows += found
            lacking = {"on-demand", "spot"} - {row.capacity for row in found}
            if lacking:
                missing.append(f"{sku} in {region} ({' and '.join(sorted(lacking))}: not sold there)")
    return Fetched(tuple(rows), tuple(missing))
