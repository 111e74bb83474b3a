"""The Azure Retail Prices client against a real HTTP server on 127.0.0.1.

A real server (not a mocked session) checks what actually goes over the wire: the exact,
percent-encoded `$filter`, paging through NextPageLink, retries on 429 and 5xx with Retry-After, and
how the client behaves when the service is down, slow, failing or answering nonsense. Every failure
must be a PriceFetchError naming the host and the way out, never a raw exception.
"""

from __future__ import annotations

import datetime
import socket
import time
from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from fake_http import FakeServer, Reply, Request, serving
from spotkube.clouds.aks.retail_prices import (
    DEFAULT_ENDPOINT,
    InvalidArmName,
    build_filter,
    build_url,
    fetch,
    fetch_vm_prices,
)
from spotkube.clouds.http import PriceFetchError
from spotkube.platform.cost.prices import PriceRow
from spotkube.platform.cost.refresh import FetchSettings, PriceTarget
from spotkube.platform.errors import SpotkubeError

TODAY = datetime.date(2026, 11, 22)
FILTER = (
    "serviceName eq 'Virtual Machines' and armRegionName eq 'uksouth' "
    "and armSkuName eq 'Standard_D4s_v3' and priceType eq 'Consumption'"
)
#: Quick retries, so the retry tests take well under a second.
QUICK = FetchSettings(timeout_s=2.0, retries=3, backoff_factor=0.01, backoff_max_s=0.05, retry_after_max_s=1)


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    """Talk to 127.0.0.1 directly even where the environment sets an HTTP proxy."""
    for name in ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")


@pytest.fixture
def server() -> Iterator[FakeServer]:
    with serving() as srv:
        yield srv


def endpoint(srv: FakeServer) -> str:
    return srv.url("/api/retail/prices")


def item(sku_name: str, price: float, **overrides: Any) -> dict[str, Any]:
    """One price item in the documented shape (Standard_D4s_v3 in UK South unless overridden)."""
    fields: dict[str, Any] = {
        "currencyCode": "USD",
        "tierMinimumUnits": 0.0,
        "retailPrice": price,
        "unitPrice": price,
        "armRegionName": "uksouth",
        "location": "UK South",
        "effectiveStartDate": "2021-06-01T00:00:00Z",
        "meterId": "00000000-0000-0000-0000-000000000000",
        "meterName": sku_name,
        "productId": "DZH318Z0BQPS",
        "skuId": "DZH318Z0BQPS/00TG",
        "productName": "Virtual Machines DSv3 Series",
        "skuName": sku_name,
        "serviceName": "Virtual Machines",
        "serviceId": "DZH313Z7MMC8",
        "serviceFamily": "Compute",
        "unitOfMeasure": "1 Hour",
        "type": "Consumption",
        "isPrimaryMeterRegion": True,
        "armSkuName": "Standard_D4s_v3",
    }
    fields.update(overrides)
    return fields


def page(items: list[dict[str, Any]], next_link: str | None) -> dict[str, Any]:
    return {
        "BillingCurrency": "USD",
        "CustomerEntityId": "Default",
        "CustomerEntityType": "Retail",
        "Items": items,
        "NextPageLink": next_link,
        "Count": len(items),
    }


def skip_of(path: str) -> str:
    return parse_qs(urlsplit(path).query).get("$skip", ["0"])[0]


def paths(srv: FakeServer) -> list[str]:
    return [r.path for r in srv.requests]


def answer(body: Any, status: int = 200, **headers: str) -> Callable[[Request], Reply]:
    return lambda request: Reply(status, body, headers)


def fetch_d4(srv: FakeServer, **kwargs: Any) -> list[PriceRow]:
    options: dict[str, Any] = {"endpoint": endpoint(srv), "today": TODAY, "settings": QUICK}
    options.update(kwargs)
    return fetch_vm_prices("uksouth", "Standard_D4s_v3", **options)


# --- paging, filtering, the filter sent ----------------------------------------------------------


def test_pages_are_followed_and_only_linux_consumption_prices_kept(server: FakeServer) -> None:
    next_page = f"{endpoint(server)}?$skip="
    pages = {
        "0": page([item("D4s v3", 0.232), item("D4s v3", 0.424, productName="Virtual Machines DSv3 Series Windows")],
                  next_page + "100"),
        "100": page([item("D4s v3 Low Priority", 0.0464),
                     item("D4s v3 Spot", 0.0902, productName="Virtual Machines DSv3 Series Windows"),
                     item("D4s v3 Spot", 0.0487)], next_page + "200"),
        "200": page([item("D4s v3", 0.232),  # listed twice at the same price: kept once
                     item("D4s v3", 0.2, isPrimaryMeterRegion=False),
                     item("D4s v3", 0.3, currencyCode="EUR"),
                     item("D4s v3", 0.0, meterName="D4s v3 free")], None),
    }
    server.respond = lambda request: Reply(200, pages[skip_of(request.path)])

    rows = fetch_d4(server)

    assert [skip_of(path) for path in paths(server)] == ["0", "100", "200"]
    source = "Azure Retail Prices API, " + build_url("uksouth", "Standard_D4s_v3", endpoint(server))
    assert rows == [
        PriceRow(cloud="azure", region="uksouth", sku="Standard_D4s_v3", kind="machine", capacity="on-demand",
                 usd_per_hour=Decimal("0.232"), source=source, date=TODAY),
        PriceRow(cloud="azure", region="uksouth", sku="Standard_D4s_v3", kind="machine", capacity="spot",
                 usd_per_hour=Decimal("0.0487"), source=source, date=TODAY),
    ]
    assert str(rows[1].usd_per_hour) == "0.0487"


def test_the_filter_sent_is_exact_and_percent_encoded(server: FakeServer) -> None:
    server.respond = answer(page([], None))

    fetch_d4(server)

    (request,) = server.requests
    query = urlsplit(request.path).query
    assert parse_qs(query) == {"api-version": ["2023-01-01-preview"], "$filter": [FILTER]}
    assert query == (
        "api-version=2023-01-01-preview&%24filter=serviceName%20eq%20%27Virtual%20Machines%27"
        "%20and%20armRegionName%20eq%20%27uksouth%27%20and%20armSkuName%20eq%20"
        "%27Standard_D4s_v3%27%20and%20priceType%20eq%20%27Consumption%27"
    )
    assert request.headers["user-agent"] == "spotkube-prices"


def test_case_of_names_is_kept(server: FakeServer) -> None:
    server.respond = answer(page([], None))

    rows = fetch_vm_prices("westeurope", "Standard_NC24ads_A100_v4", endpoint=endpoint(server), today=TODAY,
                           settings=QUICK)

    assert rows == []
    (sent,) = server.requests[0].query["$filter"]
    assert "armSkuName eq 'Standard_NC24ads_A100_v4'" in sent
    assert "armRegionName eq 'westeurope'" in sent


def test_default_endpoint_and_api_version() -> None:
    assert build_url("uksouth", "Standard_D4s_v3").startswith(
        "https://prices.azure.com/api/retail/prices?api-version=2023-01-01-preview&%24filter="
    )
    assert DEFAULT_ENDPOINT == "https://prices.azure.com/api/retail/prices"
    assert build_filter("uksouth", "Standard_D4s_v3") == FILTER


def test_two_different_prices_for_one_capacity_are_an_error(server: FakeServer) -> None:
    server.respond = answer(page([item("D4s v3 Spot", 0.0487), item("D4s v3 Spot", 0.05)], None))

    with pytest.raises(PriceFetchError, match="two spot prices for Standard_D4s_v3 in uksouth"):
        fetch_d4(server)


def test_fetch_asks_once_per_size_and_region_and_names_what_is_not_sold(server: FakeServer) -> None:
    def respond(request: Request) -> Reply:
        (sent,) = request.query["$filter"]
        if "Standard_NC4as_T4_v3" in sent:
            return Reply(200, page([item("NC4as T4 v3", 0.6, armSkuName="Standard_NC4as_T4_v3")], None))
        return Reply(200, page([item("D4s v3", 0.232), item("D4s v3 Spot", 0.0487)], None))

    server.respond = respond
    targets = [PriceTarget("uksouth", "Standard_D4s_v3"), PriceTarget("uksouth", "Standard_D4s_v3"),
               PriceTarget("uksouth", "Standard_NC4as_T4_v3", "nvidia-tesla-t4", 1)]

    fetched = fetch(targets, QUICK, endpoint(server), TODAY)

    assert len(server.requests) == 2
    assert [(r.sku, r.capacity) for r in fetched.rows] == [
        ("Standard_D4s_v3", "on-demand"), ("Standard_D4s_v3", "spot"), ("Standard_NC4as_T4_v3", "on-demand")]
    assert fetched.missing == ("Standard_NC4as_T4_v3 in uksouth (spot: not sold there)",)


# --- busy and failing: retries ------------------------------------------------------------------


def test_a_429_with_retry_after_is_waited_for_then_retried(server: FakeServer) -> None:
    answers = iter([Reply(429, {"Error": {"Message": "Too many requests"}}, {"Retry-After": "1"}),
                    Reply(200, page([item("D4s v3 Spot", 0.0487)], None))])
    server.respond = lambda request: next(answers)

    started = time.monotonic()
    rows = fetch_d4(server)

    assert [r.capacity for r in rows] == ["spot"]
    assert len(server.requests) == 2
    assert time.monotonic() - started >= 0.9, "Retry-After: 1 was honoured"


def test_retry_after_is_capped(server: FakeServer) -> None:
    answers = iter([Reply(429, {}, {"Retry-After": "3600"}), Reply(200, page([], None))])
    server.respond = lambda request: next(answers)

    started = time.monotonic()
    fetch_d4(server, settings=FetchSettings(timeout_s=2, retries=2, retry_after_max_s=0))

    assert time.monotonic() - started < 5, "an hour's Retry-After is cut to the cap"
    assert len(server.requests) == 2


def test_5xx_are_retried_with_backoff_until_the_service_answers(server: FakeServer) -> None:
    answers = iter([Reply(503, {}), Reply(502, {}), Reply(200, page([item("D4s v3", 0.232)], None))])
    server.respond = lambda request: next(answers)

    rows = fetch_d4(server)

    assert [r.capacity for r in rows] == ["on-demand"] and len(server.requests) == 3


def test_retries_run_out_with_one_clear_error(server: FakeServer) -> None:
    server.respond = answer({"Error": {"Message": "Too many requests"}}, 429)

    with pytest.raises(PriceFetchError, match=r"answered HTTP 429 after 3 retries: Too many requests") as raised:
        fetch_d4(server)

    assert len(server.requests) == 4
    assert isinstance(raised.value, SpotkubeError)


# --- names are checked before any request --------------------------------------------------------


@pytest.mark.parametrize(
    ("region", "sku", "message"),
    [
        ("UK South", "Standard_D4s_v3", "not an Azure ARM region name"),
        ("UKSouth", "Standard_D4s_v3", "not an Azure ARM region name"),
        ("uksouth", "standard_d4s_v3", "not an Azure ARM VM size"),
        ("uksouth", "D4s_v3", "not an Azure ARM VM size"),
        ("uksouth", "Standard_D4s_v3' or '1' eq '1", "not an Azure ARM VM size"),
    ],
)
def test_names_that_are_not_arm_names_are_refused(server: FakeServer, region: str, sku: str, message: str) -> None:
    with pytest.raises(InvalidArmName, match=message) as raised:
        fetch_vm_prices(region, sku, endpoint=endpoint(server))

    assert isinstance(raised.value, ValueError)
    assert isinstance(raised.value, SpotkubeError)
    assert server.requests == []


# --- failures ------------------------------------------------------------------------------------


def test_offline_closed_port() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]

    with pytest.raises(PriceFetchError) as raised:
        fetch_vm_prices("uksouth", "Standard_D4s_v3", endpoint=f"http://127.0.0.1:{port}/api/retail/prices",
                        settings=FetchSettings(timeout_s=2, retries=1, backoff_factor=0))

    message = str(raised.value)
    assert f"Azure Retail Prices API at 127.0.0.1:{port}: could not be reached after 1 retries" in message
    assert "spotkube keeps using the prices it has" in message


def test_http_500_after_retries(server: FakeServer) -> None:
    server.respond = answer({"error": "boom"}, 500)

    with pytest.raises(PriceFetchError, match=r"127\.0\.0\.1:\d+: answered HTTP 500 after 3 retries"):
        fetch_d4(server)


def test_a_404_is_not_retried(server: FakeServer) -> None:
    server.respond = answer({"Error": {"Message": "Not found"}}, 404)

    with pytest.raises(PriceFetchError, match=r"answered HTTP 404: Not found"):
        fetch_d4(server)

    assert len(server.requests) == 1


def test_malformed_json(server: FakeServer) -> None:
    server.respond = answer(b"<html>not json")

    with pytest.raises(PriceFetchError, match=r"not JSON.*keeps using the prices it has"):
        fetch_d4(server)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"items": []}, "without the documented 'Items' list"),
        ([], "without the documented 'Items' list"),
        (page([{"retailPrice": 1}], None), "is not text"),
        (page([item("D4s v3", 0.2, retailPrice="0.2")], None), "'retailPrice' is not a number"),
        (page([item("D4s v3", -0.2)], None), "negative 'retailPrice'"),
        (page([], "42"), "NextPageLink to another host"),
        ({"Items": [], "NextPageLink": 7}, "'NextPageLink' that is not a URL"),
    ],
)
def test_responses_not_in_the_documented_shape(server: FakeServer, body: Any, message: str) -> None:
    server.respond = answer(body)

    with pytest.raises(PriceFetchError, match=message):
        fetch_d4(server)


def test_timeout_is_reported_quickly(server: FakeServer) -> None:
    server.respond = lambda request: Reply(200, page([], None), hold=True)

    started = time.monotonic()
    with pytest.raises(PriceFetchError, match=r"no answer within 0\.2 s"):
        fetch_d4(server, settings=FetchSettings(timeout_s=0.2, retries=0))

    assert time.monotonic() - started < 2


def test_next_page_link_to_another_host_is_not_followed(server: FakeServer) -> None:
    server.respond = answer(page([], "https://example.com/steal?$skip=100"))

    with pytest.raises(PriceFetchError, match=r"another host \(example\.com\)"):
        fetch_d4(server)

    assert len(server.requests) == 1


def test_page_cap_stops_endless_paging(server: FakeServer) -> None:
    def respond(request: Request) -> Reply:
        skip = int(skip_of(request.path)) + 100
        return Reply(200, page([item("D4s v3", 0.232)], f"{endpoint(server)}?$skip={skip}"))

    server.respond = respond

    with pytest.raises(PriceFetchError, match="more than 3 pages"):
        fetch_d4(server, max_pages=3)

    assert len(server.requests) == 3


def test_a_repeated_next_page_link_is_a_loop(server: FakeServer) -> None:
    server.respond = lambda request: Reply(200, page([], f"{endpoint(server)}?$skip=100"))

    with pytest.raises(PriceFetchError, match="paging loop"):
        fetch_d4(server)

    assert [skip_of(path) for path in paths(server)] == ["0", "100"]


def test_bad_options_are_refused() -> None:
    with pytest.raises(ValueError, match="timeout"):
        FetchSettings(timeout_s=0)
    with pytest.raises(ValueError, match="max_pages"):
        fetch_vm_prices("uksouth", "Standard_D4s_v3", max_pages=0)
