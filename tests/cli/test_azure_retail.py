"""The Azure Retail Prices client against a real HTTP server on 127.0.0.1.

A real server (not a mocked urlopen) checks what actually goes over the wire: the exact,
percent-encoded `$filter`, paging through NextPageLink, and how the client behaves when the
service is down, slow, failing or answering nonsense. Every failure must be a PriceFetchError
naming the host and the way out, never a raw exception.
"""

from __future__ import annotations

import datetime
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from spotkube.cli.azure_retail import (
    DEFAULT_ENDPOINT,
    InvalidArmName,
    PriceFetchError,
    build_filter,
    build_url,
    fetch_vm_prices,
)
from spotkube.platform.cost.prices import PriceRow
from spotkube.platform.errors import SpotkubeError

TODAY = datetime.date(2026, 11, 22)
FILTER = (
    "serviceName eq 'Virtual Machines' and armRegionName eq 'uksouth' "
    "and armSkuName eq 'Standard_D4s_v3' and priceType eq 'Consumption'"
)

#: A response: HTTP status, body, and whether to hold it until the test releases the server.
Reply = tuple[int, bytes, bool]


class _Server(ThreadingHTTPServer):
    """Serves whatever `respond(path)` returns and records every requested path."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.paths: list[str] = []
        self.release = threading.Event()
        self.respond: Callable[[str], Reply] = lambda path: (404, b"{}", False)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/api/retail/prices"

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that gave up (the timeout test) closes the socket; that is expected here."""


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_GET(self) -> None:
        self.server.paths.append(self.path)
        status, body, hold = self.server.respond(self.path)
        if hold:
            self.server.release.wait(timeout=5)
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        """Keep the test output clean."""


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    """Talk to 127.0.0.1 directly even where the environment sets an HTTP proxy."""
    for name in ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")


@pytest.fixture
def server() -> Iterator[_Server]:
    srv = _Server()
    thread = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    try:
        yield srv
    finally:
        srv.release.set()
        srv.shutdown()
        srv.server_close()
        thread.join(timeout=5)


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


def page(items: list[dict[str, Any]], next_link: str | None) -> bytes:
    return json.dumps(
        {
            "BillingCurrency": "USD",
            "CustomerEntityId": "Default",
            "CustomerEntityType": "Retail",
            "Items": items,
            "NextPageLink": next_link,
            "Count": len(items),
        }
    ).encode()


def skip_of(path: str) -> str:
    return parse_qs(urlsplit(path).query).get("$skip", ["0"])[0]


def fetch(srv: _Server, **kwargs: Any) -> list[PriceRow]:
    options: dict[str, Any] = {"endpoint": srv.endpoint, "today": TODAY, "timeout": 2.0}
    options.update(kwargs)
    return fetch_vm_prices("uksouth", "Standard_D4s_v3", **options)


# --- paging, filtering, the filter sent ----------------------------------------------------------


def test_pages_are_followed_and_only_linux_consumption_prices_kept(server: _Server) -> None:
    def respond(path: str) -> Reply:
        next_page = f"{server.endpoint}?$skip="
        pages = {
            "0": page(
                [
                    item("D4s v3", 0.232),
                    item("D4s v3", 0.424, productName="Virtual Machines DSv3 Series Windows"),
                ],
                next_page + "100",
            ),
            "100": page(
                [
                    item("D4s v3 Low Priority", 0.0464),
                    item(
                        "D4s v3 Spot",
                        0.0902,
                        productName="Virtual Machines DSv3 Series Windows",
                    ),
                    item("D4s v3 Spot", 0.0487),
                ],
                next_page + "200",
            ),
            "200": page(
                [
                    item("D4s v3", 0.232),  # listed twice at the same price: kept once
                    item("D4s v3", 0.2, isPrimaryMeterRegion=False),
                    item("D4s v3", 0.3, currencyCode="EUR"),
                    item("D4s v3", 0.0, meterName="D4s v3 free"),
                ],
                None,
            ),
        }
        return 200, pages[skip_of(path)], False

    server.respond = respond

    rows = fetch(server)

    assert [skip_of(path) for path in server.paths] == ["0", "100", "200"]
    assert rows == [
        PriceRow(
            cloud="azure",
            region="uksouth",
            sku="Standard_D4s_v3",
            kind="machine",
            capacity="on-demand",
            usd_per_hour=Decimal("0.232"),
            source=build_url("uksouth", "Standard_D4s_v3", server.endpoint),
            date=TODAY,
        ),
        PriceRow(
            cloud="azure",
            region="uksouth",
            sku="Standard_D4s_v3",
            kind="machine",
            capacity="spot",
            usd_per_hour=Decimal("0.0487"),
            source=build_url("uksouth", "Standard_D4s_v3", server.endpoint),
            date=TODAY,
        ),
    ]
    assert str(rows[1].usd_per_hour) == "0.0487"


def test_the_filter_sent_is_exact_and_percent_encoded(server: _Server) -> None:
    server.respond = lambda path: (200, page([], None), False)

    fetch(server)

    (path,) = server.paths
    query = urlsplit(path).query
    assert parse_qs(query) == {"api-version": ["2023-01-01-preview"], "$filter": [FILTER]}
    assert query == (
        "api-version=2023-01-01-preview&%24filter=serviceName%20eq%20%27Virtual%20Machines%27"
        "%20and%20armRegionName%20eq%20%27uksouth%27%20and%20armSkuName%20eq%20"
        "%27Standard_D4s_v3%27%20and%20priceType%20eq%20%27Consumption%27"
    )


def test_case_of_names_is_kept(server: _Server) -> None:
    server.respond = lambda path: (200, page([], None), False)

    rows = fetch_vm_prices(
        "westeurope", "Standard_NC24ads_A100_v4", endpoint=server.endpoint, today=TODAY
    )

    assert rows == []
    (path,) = server.paths
    (sent,) = parse_qs(urlsplit(path).query)["$filter"]
    assert "armSkuName eq 'Standard_NC24ads_A100_v4'" in sent
    assert "armRegionName eq 'westeurope'" in sent


def test_default_endpoint_and_api_version() -> None:
    assert build_url("uksouth", "Standard_D4s_v3").startswith(
        "https://prices.azure.com/api/retail/prices?api-version=2023-01-01-preview&%24filter="
    )
    assert DEFAULT_ENDPOINT == "https://prices.azure.com/api/retail/prices"
    assert build_filter("uksouth", "Standard_D4s_v3") == FILTER


def test_two_different_prices_for_one_capacity_are_an_error(server: _Server) -> None:
    server.respond = lambda path: (
        200,
        page([item("D4s v3 Spot", 0.0487), item("D4s v3 Spot", 0.05)], None),
        False,
    )

    with pytest.raises(PriceFetchError, match="two spot prices for Standard_D4s_v3 in uksouth"):
        fetch(server)


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
def test_names_that_are_not_arm_names_are_refused(
    server: _Server, region: str, sku: str, message: str
) -> None:
    with pytest.raises(InvalidArmName, match=message) as raised:
        fetch_vm_prices(region, sku, endpoint=server.endpoint)

    assert isinstance(raised.value, ValueError)
    assert isinstance(raised.value, SpotkubeError)
    assert server.paths == []


# --- failures ------------------------------------------------------------------------------------


def test_offline_closed_port() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    endpoint = f"http://127.0.0.1:{port}/api/retail/prices"

    with pytest.raises(PriceFetchError) as raised:
        fetch_vm_prices("uksouth", "Standard_D4s_v3", endpoint=endpoint, timeout=2.0)

    message = str(raised.value)
    assert f"127.0.0.1:{port}" in message
    assert "could not be reached" in message
    assert "bundled price table" in message
    assert isinstance(raised.value, SpotkubeError)


def test_http_500(server: _Server) -> None:
    server.respond = lambda path: (500, b'{"error": "boom"}', False)

    with pytest.raises(PriceFetchError, match=r"127\.0\.0\.1:\d+: answered HTTP 500"):
        fetch(server)


def test_malformed_json(server: _Server) -> None:
    server.respond = lambda path: (200, b"<html>not json", False)

    with pytest.raises(PriceFetchError, match=r"not JSON.*bundled price table"):
        fetch(server)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b'{"items": []}', "without the documented 'Items' list"),
        (b"[]", "without the documented 'Items' list"),
        (page([{"retailPrice": 1}], None), "is not text"),
        (page([item("D4s v3", 0.2, retailPrice="0.2")], None), "'retailPrice' is not a number"),
        (page([item("D4s v3", -0.2)], None), "negative 'retailPrice'"),
        (page([], "42"), "NextPageLink to another host"),
        (json.dumps({"Items": [], "NextPageLink": 7}).encode(), "'NextPageLink' that is not a URL"),
    ],
)
def test_responses_not_in_the_documented_shape(server: _Server, body: bytes, message: str) -> None:
    server.respond = lambda path: (200, body, False)

    with pytest.raises(PriceFetchError, match=message):
        fetch(server)


def test_timeout_is_reported_quickly(server: _Server) -> None:
    server.respond = lambda path: (200, page([], None), True)

    started = time.monotonic()
    with pytest.raises(PriceFetchError, match=r"no answer within 0\.2 s"):
        fetch(server, timeout=0.2)

    assert time.monotonic() - started < 2


def test_next_page_link_to_another_host_is_not_followed(server: _Server) -> None:
    server.respond = lambda path: (200, page([], "https://example.com/steal?$skip=100"), False)

    with pytest.raises(PriceFetchError, match=r"another host \(example\.com\)"):
        fetch(server)

    assert len(server.paths) == 1


def test_page_cap_stops_endless_paging(server: _Server) -> None:
    def respond(path: str) -> Reply:
        skip = int(skip_of(path)) + 100
        return 200, page([item("D4s v3", 0.232)], f"{server.endpoint}?$skip={skip}"), False

    server.respond = respond

    with pytest.raises(PriceFetchError, match="more than 3 pages"):
        fetch(server, max_pages=3)

    assert len(server.paths) == 3


def test_a_repeated_next_page_link_is_a_loop(server: _Server) -> None:
    server.respond = lambda path: (200, page([], f"{server.endpoint}?$skip=100"), False)

    with pytest.raises(PriceFetchError, match="paging loop"):
        fetch(server)

    assert [skip_of(path) for path in server.paths] == ["0", "100"]


@pytest.mark.parametrize(
    ("kwargs", "message"), [({"timeout": 0}, "timeout"), ({"max_pages": 0}, "max_pages")]
)
def test_bad_options_are_refused(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        fetch_vm_prices("uksouth", "Standard_D4s_v3", **kwargs)
