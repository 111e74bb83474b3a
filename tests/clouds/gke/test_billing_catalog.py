"""The Cloud Billing Catalog client against a real HTTP server on 127.0.0.1 answering like the API.

The SKUs below have the API's shape (services.skus.list: `skus`, `nextPageToken`; each SKU's
category, serviceRegions, pricingInfo timeline, pricingExpression with tieredRates and unitPrice as
units + nanos). The prices are illustrative, in the range of the public list; what is checked is how
a machine type's price is put together from them and what is left out.
"""

from __future__ import annotations

import datetime
import time
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest

from fake_http import FakeServer, Reply, Request, serving
from spotkube.clouds.gke.billing_catalog import COMPUTE_ENGINE, fetch, machine_shape
from spotkube.clouds.http import PriceFetchError
from spotkube.platform.cost.refresh import FetchSettings, PriceTarget

TODAY = datetime.date(2026, 11, 25)
KEY = "AIzaSyTESTKEY-never-printed-0123456789"
QUICK = FetchSettings(timeout_s=2.0, retries=2, backoff_factor=0.01, backoff_max_s=0.05, retry_after_max_s=1)
AMERICAS = ["us-central1", "us-east1", "us-east4", "us-west1"]
EMEA = ["europe-west1", "europe-west4"]


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")


@pytest.fixture
def server() -> Iterator[FakeServer]:
    with serving() as srv:
        yield srv


def expression(price: str, unit: str = "h", tiers: list[tuple[float, str]] | None = None) -> dict[str, Any]:
    """A pricingExpression: `price` in USD as the API writes it, units (int64 as text) and nanos."""
    def unit_price(text: str) -> dict[str, Any]:
        amount = Decimal(text)
        units = int(amount)
        return {"currencyCode": "USD", "units": str(units), "nanos": int((amount - units) * 10**9)}

    ram = unit == "GiBy.h"
    return {
        "usageUnit": unit, "usageUnitDescription": "gibibyte hour" if ram else "hour",
        "baseUnit": "By.s" if ram else "s", "baseUnitDescription": "byte second" if ram else "second",
        "baseUnitConversionFactor": 3865470566400 if ram else 3600, "displayQuantity": 1,
        "tieredRates": [{"startUsageAmount": start, "unitPrice": unit_price(text)}
                        for start, text in (tiers or [(0, price)])],
    }


def sku(sku_id: str, description: str, group: str, usage: str, regions: list[str], price: str,
        unit: str = "h", tiers: list[tuple[float, str]] | None = None,
        history: list[str] | None = None) -> dict[str, Any]:
    """One Compute Engine SKU; `history` are older prices before the current one (the timeline)."""
    timeline = [{"summary": "", "pricingExpression": expression(old, unit), "currencyConversionRate": 1,
                 "effectiveTime": "2025-01-01T08:00:00.000Z"} for old in history or []]
    timeline.append({"summary": "", "pricingExpression": expression(price, unit, tiers), "currencyConversionRate": 1,
                     "effectiveTime": "2026-11-24T08:00:00.000Z"})
    return {
        "name": f"services/{COMPUTE_ENGINE}/skus/{sku_id}", "skuId": sku_id, "description": description,
        "category": {"serviceDisplayName": "Compute Engine", "resourceFamily": "Compute", "resourceGroup": group,
                     "usageType": usage},
        "serviceRegions": regions, "pricingInfo": timeline, "serviceProviderName": "Google",
        "geoTaxonomy": {"type": "MULTI_REGIONAL" if len(regions) > 1 else "REGIONAL", "regions": regions},
    }


PAGE_1 = [
    sku("A1B2-0001-E2C0", "E2 Instance Core running in Americas", "CPU", "OnDemand", AMERICAS, "0.021811"),
    sku("A1B2-0002-E2R0", "E2 Instance Ram running in Americas", "RAM", "OnDemand", AMERICAS, "0.002923",
        unit="GiBy.h"),
    sku("A1B2-0003-E2CS", "Spot Preemptible E2 Instance Core running in Americas", "CPU", "Preemptible", AMERICAS,
        "0.006543"),
    sku("A1B2-0004-E2RS", "Spot Preemptible E2 Instance Ram running in Americas", "RAM", "Preemptible", AMERICAS,
        "0.000877", unit="GiBy.h"),
    # A commitment is not a list price.
    sku("A1B2-0005-E2CM", "Commitment v1: E2 Cpu in Americas for 1 Year", "CPU", "Commit1Yr", AMERICAS, "0.013741"),
    sku("A1B2-0006-G2C0", "G2 Instance Core running in Americas", "CPU", "OnDemand", AMERICAS, "0.024988",
        history=["0.030000"]),  # the last entry of the timeline is the price now
    sku("A1B2-0007-G2R0", "G2 Instance Ram running in Americas", "RAM", "OnDemand", AMERICAS, "0.002927",
        unit="GiBy.h"),
    sku("A1B2-0008-L400", "Nvidia L4 GPU running in Americas", "GPU", "OnDemand", AMERICAS, "0.560094"),
]
PAGE_2 = [
    sku("A1B2-0009-G2CS", "Spot Preemptible G2 Instance Core running in Americas", "CPU", "Preemptible", AMERICAS,
        "0.009995"),
    sku("A1B2-0010-G2RS", "Spot Preemptible G2 Instance Ram running in Americas", "RAM", "Preemptible", AMERICAS,
        "0.001171", unit="GiBy.h"),
    # Spot GPUs are worded "attached to Spot Preemptible VMs"; the usage type is what decides.
    sku("A1B2-0011-L4SP", "Nvidia L4 GPU attached to Spot Preemptible VMs running in Americas", "GPU", "Preemptible",
        AMERICAS, "0.224038"),
    # A placeholder at $0.00 is not a price.
    sku("A1B2-0012-RSV0", "Reserved Nvidia L4 GPU in Iowa", "GPU", "OnDemand", ["us-central1"], "0"),
    sku("A1B2-0013-N1C0", "N1 Predefined Instance Core running in EMEA", "N1Standard", "OnDemand", EMEA, "0.034806"),
    sku("A1B2-0014-N1R0", "N1 Predefined Instance Ram running in EMEA", "N1Standard", "OnDemand", EMEA, "0.004664",
        unit="GiBy.h"),
    sku("A1B2-0015-N1CS", "Spot Preemptible N1 Predefined Instance Core running in EMEA", "N1Standard", "Preemptible",
        EMEA, "0.00821"),
    sku("A1B2-0016-N1RS", "Spot Preemptible N1 Predefined Instance Ram running in EMEA", "N1Standard", "Preemptible",
        EMEA, "0.0011", unit="GiBy.h"),
    # Tiered: the list price is the tier that starts at 0.
    sku("A1B2-0017-T400", "Nvidia Tesla T4 GPU running in Netherlands", "GPU", "OnDemand", ["europe-west4"], "0.3675",
        tiers=[(0, "0.3675"), (730, "0.3000")]),
    sku("A1B2-0018-T4SP", "Nvidia Tesla T4 GPU attached to Spot Preemptible VMs running in Netherlands", "GPU",
        "Preemptible", ["europe-west4"], "0.14"),
    # A SKU named after a city applies to the regions it lists, not to every region of that name.
    sku("A1B2-0019-T4FR", "Nvidia Tesla T4 GPU running in Frankfurt", "GPU", "OnDemand", ["europe-west3"], "0.9"),
]


def catalog(request: Request) -> Reply:
    """The API: two pages, the second after `pageToken`, the key required in its header."""
    if request.headers.get("x-goog-api-key") != KEY:
        return Reply(403, {"error": {"code": 403, "message": "API key not valid. Please pass a valid API key.",
                                     "status": "PERMISSION_DENIED"}})
    if request.query.get("pageToken") == ["CgwI0ZKV-token-page-2"]:
        return Reply(200, {"skus": PAGE_2, "nextPageToken": ""})
    return Reply(200, {"skus": PAGE_1, "nextPageToken": "CgwI0ZKV-token-page-2"})


def rows_of(fetched: Any) -> dict[tuple[str, str, str, str], Decimal]:
    return {(r.region, r.sku, r.kind, r.capacity): r.usd_per_hour for r in fetched.rows}


def test_pages_are_followed_with_the_key_in_a_header_never_in_the_url(server: FakeServer) -> None:
    server.respond = catalog

    fetch([PriceTarget("us-central1", "e2-standard-4")], QUICK, server.url(), TODAY, KEY)

    first, second = server.requests
    assert first.path.startswith(f"/v1/services/{COMPUTE_ENGINE}/skus?")
    assert first.query == {"currencyCode": ["USD"], "pageSize": ["5000"]}
    assert second.query == {"currencyCode": ["USD"], "pageSize": ["5000"], "pageToken": ["CgwI0ZKV-token-page-2"]}
    assert all(r.headers["x-goog-api-key"] == KEY and KEY not in r.path for r in server.requests)


def test_a_machine_is_its_vcpus_and_memory_at_the_familys_rates(server: FakeServer) -> None:
    server.respond = catalog

    fetched = fetch([PriceTarget("us-central1", "e2-standard-4")], QUICK, server.url(), TODAY, KEY)

    prices = rows_of(fetched)
    # 4 vCPU x $0.021811 + 16 GiB x $0.002923; commitments are left out.
    assert prices[("us-central1", "e2-standard-4", "machine", "on-demand")] == Decimal("0.134012")
    assert prices[("us-central1", "e2-standard-4", "machine", "spot")] == 4 * Decimal("0.006543") + 16 * Decimal(
        "0.000877")
    assert prices[("us-central1", "e2-standard-4", "machine", "preemptible")] == prices[
        ("us-central1", "e2-standard-4", "machine", "spot")]
    (on_demand,) = [r for r in fetched.rows if r.capacity == "on-demand"]
    assert on_demand.date == TODAY
    assert on_demand.source == (
        f"Cloud Billing Catalog API, services/{COMPUTE_ENGINE}/skus, read 2026-11-25: 4 vCPU (SKU A1B2-0001-E2C0, "
        "$0.021811/h) + 16 GiB (SKU A1B2-0002-E2R0, $0.002923/h)")
    (preemptible,) = [r for r in fetched.rows if r.capacity == "preemptible"]
    assert "preemptible VMs use the same pricing model as Spot VMs" in preemptible.source


def test_g2_comes_with_its_l4_and_spot_is_read_from_the_usage_type(server: FakeServer) -> None:
    server.respond = catalog

    prices = rows_of(fetch([PriceTarget("us-central1", "g2-standard-8", "nvidia-l4", 1)], QUICK, server.url(),
                           TODAY, KEY))

    # The current G2 core price (not the older one in the timeline), and the L4; the $0 placeholder is ignored.
    assert prices[("us-central1", "g2-standard-8", "machine", "on-demand")] == (
        8 * Decimal("0.024988") + 32 * Decimal("0.002927") + Decimal("0.560094"))
    assert prices[("us-central1", "g2-standard-8", "machine", "spot")] == (
        8 * Decimal("0.009995") + 32 * Decimal("0.001171") + Decimal("0.224038"))


def test_n1_gpus_are_accelerator_rows_at_the_first_tier_and_only_where_listed(server: FakeServer) -> None:
    server.respond = catalog
    targets = [PriceTarget("europe-west4", "n1-standard-8", "nvidia-tesla-t4", 1),
               PriceTarget("europe-west1", "n1-standard-8", "nvidia-tesla-t4", 1)]

    fetched = fetch(targets, QUICK, server.url(), TODAY, KEY)

    prices = rows_of(fetched)
    assert prices[("europe-west4", "n1-standard-8", "machine", "on-demand")] == (
        8 * Decimal("0.034806") + 30 * Decimal("0.004664"))
    assert prices[("europe-west4", "nvidia-tesla-t4", "accelerator", "on-demand")] == Decimal("0.3675")
    assert prices[("europe-west4", "nvidia-tesla-t4", "accelerator", "preemptible")] == Decimal("0.14")
    # Frankfurt's T4 SKU lists europe-west3 only: europe-west1 has no T4 price here.
    assert ("europe-west1", "nvidia-tesla-t4", "accelerator", "on-demand") not in prices
    assert "nvidia-tesla-t4 in europe-west1 (on-demand: no SKU)" in fetched.missing


def test_what_cant_be_priced_is_named(server: FakeServer) -> None:
    server.respond = catalog

    fetched = fetch([PriceTarget("us-central1", "a3-highgpu-8g", "nvidia-h100-80gb", 8),
                     PriceTarget("us-central1", "n2-standard-8")], QUICK, server.url(), TODAY, KEY)

    assert fetched.rows == ()
    assert fetched.missing == (
        "a3-highgpu-8g in us-central1 (spotkube doesn't price this machine type from its components; add a row to "
        "your price file)",
        "n2-standard-8 in us-central1 (on-demand: no SKU for 8 vCPU, 32 GiB)",
        "n2-standard-8 in us-central1 (spot: no SKU for 8 vCPU, 32 GiB)",
    )


def test_a_429_is_retried_after_its_retry_after(server: FakeServer) -> None:
    calls: list[int] = []

    def busy_then_catalog(request: Request) -> Reply:
        calls.append(1)
        if len(calls) == 1:
            return Reply(429, {"error": {"code": 429, "message": "Quota exceeded", "status": "RESOURCE_EXHAUSTED"}},
                         {"Retry-After": "1"})
        return catalog(request)

    server.respond = busy_then_catalog
    started = time.monotonic()

    fetched = fetch([PriceTarget("us-central1", "e2-standard-4")], QUICK, server.url(), TODAY, KEY)

    assert len(fetched.rows) == 3 and len(server.requests) == 3
    assert time.monotonic() - started >= 0.9


def test_failures_never_show_the_key(server: FakeServer) -> None:
    server.respond = lambda request: Reply(400, {"error": {"code": 400, "message": f"API key {KEY} expired.",
                                                           "status": "INVALID_ARGUMENT"}})

    with pytest.raises(PriceFetchError) as raised:
        fetch([PriceTarget("us-central1", "e2-standard-4")], QUICK, server.url(), TODAY, KEY)

    assert "answered HTTP 400: API key *** expired." in str(raised.value)
    assert KEY not in str(raised.value)
    with pytest.raises(PriceFetchError, match="no API key was given"):
        fetch([PriceTarget("us-central1", "e2-standard-4")], QUICK, server.url(), TODAY, None)


def test_a_repeated_page_token_is_a_loop(server: FakeServer) -> None:
    server.respond = lambda request: Reply(200, {"skus": [], "nextPageToken": "again"})

    with pytest.raises(PriceFetchError, match="paging loop"):
        fetch([PriceTarget("us-central1", "e2-standard-4")], QUICK, server.url(), TODAY, KEY)


@pytest.mark.parametrize(("machine", "shape"), [
    ("e2-standard-4", (4, Decimal(16), None, 0)),
    ("n1-standard-8", (8, Decimal(30), None, 0)),
    ("n1-highcpu-8", (8, Decimal("7.2"), None, 0)),
    ("g2-standard-24", (24, Decimal(96), "nvidia-l4", 2)),
    ("a2-highgpu-2g", (24, Decimal(170), "nvidia-tesla-a100", 2)),
    ("a2-megagpu-16g", (96, Decimal(1360), "nvidia-tesla-a100", 16)),
    ("a2-ultragpu-1g", None),  # its Local SSD is part of the machine: not priced from components
    ("n1-standard-3", None),  # not a size N1 has
])
def test_machine_shapes(machine: str, shape: tuple[int, Decimal, str | None, int] | None) -> None:
    found = machine_shape(machine)
    assert (None if found is None else (found.vcpus, found.gib, found.gpu_type, found.gpus)) == shape
