"""`spotkube prices refresh` for both clouds against local servers answering like the real APIs: what
the stacks use by default, `--all`, one size by name, the GCP key (required only when GCP is asked for
by name, and never printed), the summary a pull-request comment shows, and the user's price file as
the only file written."""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result
from urllib3 import HTTPResponse
from urllib3.exceptions import NewConnectionError

from fake_http import FakeServer, Reply, Request, serving
from spotkube.cli.app import app
from spotkube.clouds import PRICING
from spotkube.clouds import load_price_table as load_table
from spotkube.clouds.gke.billing_catalog import COMPUTE_ENGINE
from spotkube.clouds.gke.profile import BILLING_API_KEY_ENV as API_KEY_ENV
from spotkube.clouds.http import DeadlinePassed, retry_policy
from spotkube.platform.cost import PRICES_ENV, bundled_table_paths, default_user_file
from spotkube.platform.cost.refresh import FetchSettings

REPO = Path(__file__).resolve().parents[2]
KEY = "AIzaSyTESTKEY-cli-0123456789abcdef"
QUICK = ["--timeout", "2", "--retries", "1"]


@pytest.fixture(autouse=True)
def user_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's config directory in tmp_path, no price file named, no GCP key, no proxy for 127.0.0.1."""
    monkeypatch.delenv(PRICES_ENV, raising=False)
    monkeypatch.delenv(API_KEY_ENV, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    for name in ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    return tmp_path / "config"


# --- Azure: one answer per $filter, shaped like the Retail Prices API --------------------------------


def azure_items(region: str, sku: str) -> list[dict[str, Any]]:
    """On-demand, spot and Windows items for one size; the price grows with the vCPU count in its name."""
    vcpus = int(re.search(r"[0-9]+", sku.removeprefix("Standard_")).group())  # type: ignore[union-attr]
    base = {"currencyCode": "USD", "tierMinimumUnits": 0.0, "armRegionName": region, "location": region,
            "effectiveStartDate": "2024-06-01T00:00:00Z", "meterId": "00000000-0000-0000-0000-000000000000",
            "productId": "DZH318Z0BQPS", "skuId": "DZH318Z0BQPS/00TG", "productName": "Virtual Machines Series",
            "serviceName": "Virtual Machines", "serviceId": "DZH313Z7MMC8", "serviceFamily": "Compute",
            "unitOfMeasure": "1 Hour", "type": "Consumption", "isPrimaryMeterRegion": True, "armSkuName": sku}
    name = sku.removeprefix("Standard_").replace("_", " ")
    return [{**base, "retailPrice": 0.05 * vcpus, "unitPrice": 0.05 * vcpus, "skuName": name, "meterName": name},
            {**base, "retailPrice": 0.01 * vcpus, "unitPrice": 0.01 * vcpus, "skuName": f"{name} Spot",
             "meterName": f"{name} Spot"},
            {**base, "retailPrice": 0.09 * vcpus, "unitPrice": 0.09 * vcpus, "skuName": name, "meterName": name,
             "productName": "Virtual Machines Series Windows"}]


def retail_prices(request: Request) -> Reply:
    (sent,) = request.query["$filter"]
    region = re.search(r"armRegionName eq '([^']+)'", sent).group(1)  # type: ignore[union-attr]
    sku = re.search(r"armSkuName eq '([^']+)'", sent).group(1)  # type: ignore[union-attr]
    return Reply(200, {"BillingCurrency": "USD", "CustomerEntityId": "Default", "CustomerEntityType": "Retail",
                       "Items": azure_items(region, sku), "NextPageLink": None, "Count": 3})


# --- GCP: Compute Engine SKUs, shaped like the Cloud Billing Catalog API ------------------------------

REGIONS = ["us-central1", "us-east1", "us-east4", "europe-west1", "europe-west4"]


def gcp_sku(n: int, description: str, group: str, usage: str, nanos: int, unit: str = "h") -> dict[str, Any]:
    return {"name": f"services/{COMPUTE_ENGINE}/skus/0000-0000-{n:04d}", "skuId": f"0000-0000-{n:04d}",
            "description": description,
            "category": {"serviceDisplayName": "Compute Engine", "resourceFamily": "Compute", "resourceGroup": group,
                         "usageType": usage},
            "serviceRegions": REGIONS,
            "pricingInfo": [{"summary": "", "currencyConversionRate": 1, "effectiveTime": "2026-11-24T08:00:00Z",
                             "pricingExpression": {"usageUnit": unit, "displayQuantity": 1, "tieredRates": [
                                 {"startUsageAmount": 0,
                                  "unitPrice": {"currencyCode": "USD", "units": "0", "nanos": nanos}}]}}],
            "serviceProviderName": "Google"}


def gcp_skus() -> list[dict[str, Any]]:
    skus = []
    for prefix, group in (("E2 Instance", "CPU"), ("N1 Predefined Instance", "N1Standard"), ("G2 Instance", "CPU"),
                          ("A2 Instance", "CPU")):
        for spot in (False, True):
            lead = "Spot Preemptible " if spot else ""
            usage = "Preemptible" if spot else "OnDemand"
            skus.append(gcp_sku(len(skus), f"{lead}{prefix} Core running in Americas", group, usage,
                                10_000_000 if spot else 30_000_000))
            skus.append(gcp_sku(len(skus), f"{lead}{prefix} Ram running in Americas",
                                "RAM" if group == "CPU" else group, usage, 1_000_000 if spot else 4_000_000, "GiBy.h"))
    for gpu in ("Nvidia L4 GPU", "Nvidia Tesla A100 GPU", "Nvidia Tesla T4 GPU"):
        skus.append(gcp_sku(len(skus), f"{gpu} running in Americas", "GPU", "OnDemand", 500_000_000))
        skus.append(gcp_sku(len(skus), f"{gpu} attached to Spot Preemptible VMs running in Americas", "GPU",
                            "Preemptible", 200_000_000))
    return skus


def billing_catalog(request: Request) -> Reply:
    if request.headers.get("x-goog-api-key") != KEY:
        return Reply(403, {"error": {"code": 403, "message": "API key not valid.", "status": "PERMISSION_DENIED"}})
    skus = gcp_skus()
    if request.query.get("pageToken") == ["p2"]:
        return Reply(200, {"skus": skus[10:], "nextPageToken": ""})
    return Reply(200, {"skus": skus[:10], "nextPageToken": "p2"})


@pytest.fixture
def azure() -> Iterator[FakeServer]:
    with serving() as server:
        server.respond = retail_prices
        yield server


@pytest.fixture
def gcp() -> Iterator[FakeServer]:
    with serving() as server:
        server.respond = billing_catalog
        yield server


def refresh(*args: str, azure: FakeServer | None = None, gcp: FakeServer | None = None) -> Result:
    endpoints = []
    if azure is not None:
        endpoints += ["--azure-endpoint", azure.url("/api/retail/prices")]
    if gcp is not None:
        endpoints += ["--gcp-endpoint", gcp.url()]
    return CliRunner().invoke(app, ["prices", "refresh", *args, *endpoints, *QUICK, "--project", str(REPO)])


def bundled_digest() -> str:
    return hashlib.sha256(b"".join(path.read_bytes() for path in bundled_table_paths(PRICING))).hexdigest()


def stack_skus(server: FakeServer) -> set[tuple[str, str]]:
    found = set()
    for request in server.requests:
        (sent,) = request.query["$filter"]
        region, sku = re.findall(r"eq '([^']+)'", sent)[1:3]
        found.add((region, sku))
    return found


def test_by_default_it_refreshes_what_the_stacks_use_and_says_gcp_needs_its_key(
        azure: FakeServer, gcp: FakeServer, user_config: Path) -> None:
    before = bundled_digest()

    result = refresh(azure=azure, gcp=gcp)

    assert result.exit_code == 0, result.output
    target = default_user_file()
    assert stack_skus(azure) == {("uksouth", "Standard_D4s_v3"), ("uksouth", "Standard_NC4as_T4_v3"),
                                 ("eastus", "Standard_D4s_v3"), ("eastus", "Standard_D8s_v3"),
                                 ("eastus", "Standard_NC24ads_A100_v4")}
    assert gcp.requests == []
    lines = result.stdout.splitlines()
    assert lines[0] == (f"azure: 10 price rows from the Azure Retail Prices API, read {load_table(target).date}, "
                        f"for 5 machine(s) and region(s), into {target}")
    assert lines[1].startswith(f"gcp: not refreshed: {API_KEY_ENV} is not set (the Cloud Billing Catalog API needs "
                               "an API key of any Google Cloud project")
    assert bundled_digest() == before
    written = load_table(target)
    t4 = written.find("azure", "uksouth", "Standard_NC4as_T4_v3", "machine", "spot")
    assert t4 is not None and t4.usd_per_hour == Decimal("0.04")
    assert t4.source.startswith("Azure Retail Prices API, http://127.0.0.1:")
    # The plan's cost reads it: the UK South T4 pool is priced now, from the user's file.
    cost = CliRunner().invoke(app, ["cost", "-s", "aks-dev-uksouth", "-f", "json", "--project", str(REPO)])
    t4spot = next(p for p in json.loads(cost.stdout)["cost"]["pools"] if p["pool"] == "t4spot")
    assert (t4spot["priced"], t4spot["priceFrom"]) == (True, str(target))


def test_with_the_key_gcp_is_refreshed_too_and_the_key_is_never_shown(
        azure: FakeServer, gcp: FakeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(API_KEY_ENV, KEY)

    result = refresh("--format", "markdown", azure=azure, gcp=gcp)

    assert result.exit_code == 0, result.output
    assert KEY not in result.output
    assert result.stdout.startswith("**Prices** (`spotkube prices refresh`):\n\n- azure: 10 price rows from the Azure "
                                    "Retail Prices API")
    assert "\n- gcp: " in result.stdout and "from the Cloud Billing Catalog API" in result.stdout
    assert [r.query.get("pageToken") for r in gcp.requests] == [None, ["p2"]]
    written = load_table(default_user_file())
    g2 = written.find("gcp", "us-central1", "g2-standard-8", "machine", "spot")
    # 8 vCPU x $0.01 + 32 GiB x $0.001 + 1 L4 at $0.20 (spot).
    assert g2 is not None and g2.usd_per_hour == Decimal("0.312")
    assert written.find("gcp", "europe-west4", "nvidia-tesla-t4", "accelerator", "preemptible") is not None
    assert KEY not in default_user_file().read_text()


def test_gcp_asked_for_by_name_needs_its_key(gcp: FakeServer) -> None:
    result = refresh("--cloud", "gcp", gcp=gcp)

    assert result.exit_code == 2
    assert f"error: --cloud gcp: {API_KEY_ENV} is not set" in " ".join(result.stderr.split())
    assert gcp.requests == [] and not default_user_file().exists()


def test_one_size_by_name(azure: FakeServer, tmp_path: Path) -> None:
    target = tmp_path / "team" / "prices.json"

    result = refresh("--cloud", "azure", "--region", "westeurope", "--sku", "Standard_NC24ads_A100_v4",
                     "--table", str(target), azure=azure)

    assert result.exit_code == 0, result.output
    assert stack_skus(azure) == {("westeurope", "Standard_NC24ads_A100_v4")}
    assert [(r.sku, r.capacity) for r in load_table(target).rows] == [
        ("Standard_NC24ads_A100_v4", "on-demand"), ("Standard_NC24ads_A100_v4", "spot")]
    assert not default_user_file().exists()


def test_a_region_names_its_cloud_when_cloud_is_left_out(azure: FakeServer, tmp_path: Path) -> None:
    result = refresh("--region", "uksouth", "--sku", "Standard_NC4as_T4_v3", "--table", str(tmp_path / "p.json"),
                     azure=azure)
    assert result.exit_code == 0, result.output
    assert stack_skus(azure) == {("uksouth", "Standard_NC4as_T4_v3")}


@pytest.mark.parametrize(("args", "message"), [
    (["--region", "mars-north1", "--sku", "Standard_D4s_v3"], "--region and --sku need one --cloud"),
    (["--cloud", "azure", "--sku", "Standard_D4s_v3"], "name both --region and --sku"),
    (["--cloud", "aws"], "--cloud aws: not a price list spotkube reads; use azure or gcp"),
])
def test_options_that_cant_make_a_refresh_are_refused(args: list[str], message: str) -> None:
    result = refresh(*args)
    assert result.exit_code == 2
    assert message in " ".join(result.stderr.split())


def test_all_also_refreshes_every_row_of_the_bundled_table(azure: FakeServer) -> None:
    result = refresh("--all", "--cloud", "azure", azure=azure)

    assert result.exit_code == 0, result.output
    assert ("westeurope", "Standard_NC40ads_H100_v5") in stack_skus(azure)
    assert ("uksouth", "Standard_NC4as_T4_v3") in stack_skus(azure)


def test_a_failed_refresh_writes_nothing_and_says_why(user_config: Path) -> None:
    result = CliRunner().invoke(app, ["prices", "refresh", "--cloud", "azure", "--azure-endpoint",
                                      "http://127.0.0.1:9/api/retail/prices", "--timeout", "1", "--retries", "0",
                                      "--project", str(REPO)])

    assert result.exit_code == 2
    assert "Azure Retail Prices API at 127.0.0.1:9: could not be reached" in " ".join(result.stderr.split())
    assert "Traceback" not in result.output
    assert not default_user_file().exists()


def test_a_silent_service_is_not_tried_again_once_the_timeout_has_passed() -> None:
    """`--timeout` bounds a request that gets no answer, retries included: one silent attempt of 1 s
    uses it up, where five retries with their backoff used to take half a minute."""
    with serving() as silent:
        silent.respond = lambda request: Reply(200, {"Items": []}, hold=True)
        result = CliRunner().invoke(app, ["prices", "refresh", "--cloud", "azure", "--region", "uksouth", "--sku",
                                          "Standard_D4s_v3", "--azure-endpoint", silent.url("/api/retail/prices"),
                                          "--timeout", "1", "--retries", "5", "--project", str(REPO)])
        attempts = len(silent.requests)

    assert result.exit_code == 2
    assert "no answer within 1 s (1 attempt(s), retries included)" in " ".join(result.stderr.split())
    assert attempts == 1
    assert not default_user_file().exists()


def test_an_unreachable_service_is_retried_only_while_the_next_attempt_starts_in_time() -> None:
    """Offline, each attempt fails at once; the next one is made only if its pause, backoff and all
    its jitter, ends before the deadline: with 3 s, the first retry (no backoff, up to 1 s of jitter)
    is made and the second (2 s of backoff and 1 of jitter) is not."""
    policy = retry_policy(FetchSettings(timeout_s=3, retries=5))
    refused = NewConnectionError(None, "Failed to establish a new connection: [Errno 111] Connection refused")
    first = policy.until(time.monotonic() + 3).increment("GET", "/api/retail/prices", error=refused)
    with pytest.raises(DeadlinePassed) as given_up:
        first.increment("GET", "/api/retail/prices", error=refused)
    assert given_up.value.attempts == 2
    assert policy.until(time.monotonic() + 60).increment("GET", "/", error=refused).increment(
        "GET", "/", error=refused).total == 3, "with time left, the retries go on"


def test_a_busy_service_that_answers_is_retried_past_the_deadline() -> None:
    """A 503 is an answer: the server is there and is retried as --retries says, whatever the time."""
    policy = retry_policy(FetchSettings(timeout_s=1, retries=2)).until(time.monotonic() - 1)
    again = policy.increment("GET", "/api/retail/prices", response=HTTPResponse(status=503))
    assert again.total == 1
