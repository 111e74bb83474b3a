"""Cost next to the pools: the plan's cost blocks, the what-if command and the price refresh."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from spotkube.core.cost import bundled_table_path, load_table
from spotkube.core.costing import price_plan
from spotkube.core.plan import plan_platform
from spotkube.core.validation import parse_spec

REPO = Path(__file__).resolve().parents[2]
SPOTKUBE = str(Path(sys.executable).with_name("spotkube"))


def spotkube(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([SPOTKUBE, *args], cwd=REPO, capture_output=True, text=True, timeout=300, check=False)


def test_plan_json_cost_block_reproduces_the_articles_example() -> None:
    result = spotkube("plan", "--stack", "aks-dev-uksouth", "--format", "json")
    assert result.returncode == 0, result.stderr
    cost = json.loads(result.stdout)["cost"]
    spot = next(p for p in cost["pools"] if p["pool"] == "cpuspot")
    assert (spot["scenarioHours"], spot["scenario"], spot["onDemandEquivalent"], spot["savingPercent"]) == (
        3400, 173.86, 788.80, 78)
    assert cost["assumptions"]["evictionRate"] == 0.05
    assert cost["total"]["idleFloor"] == 508.08  # 2 system + 1 platform D4s_v3 nodes, 730 h at $0.2320
    assert cost["total"]["unpricedPools"] == ["t4spot"]


def test_plan_markdown_cost_block_fits_a_pr_comment() -> None:
    result = spotkube("plan", "--stack", "aks-dev-uksouth", "--format", "markdown")
    assert result.returncode == 0, result.stderr
    assert "| cpuspot | spot | Standard_D4s_v3 |" in result.stdout
    assert "3400 h: $173.86 (on-demand $788.80)" in result.stdout
    assert ("**monthly cost: idle floor $508.08; scenario $173.86 vs $788.80 on demand, saving 78 % "
            "(unpriced: t4spot)") in result.stdout
    assert "> cost: t4spot: no spot price for Standard_NC4as_T4_v3 in uksouth" in result.stdout


def test_cost_command_answers_what_if_questions() -> None:
    result = spotkube("cost", "--stack", "aks-prod-eastus", "--hours", "a100spot=1000", "--format", "json")
    assert result.returncode == 0, result.stderr
    spot = next(p for p in json.loads(result.stdout)["cost"]["pools"] if p["pool"] == "a100spot")
    # 1,000 h x (1 + 0.05 x 0.25) = 1,012.5 h at $0.444433 spot, against 1,000 h at $3.673.
    assert (spot["scenario"], spot["onDemandEquivalent"]) == (449.99, 3673.00)


def test_cost_command_refuses_an_unknown_pool() -> None:
    result = spotkube("cost", "--stack", "aks-dev-uksouth", "--hours", "gpu=10")
    assert result.returncode == 2
    assert "--hours gpu=10: use POOL=HOURS with HOURS >= 0 and POOL one of system, platform, cpuspot" in result.stderr


def spec(**gpu: Any) -> Any:
    pool = {"name": "a100spot", "machine": "Standard_NC24ads_A100_v4", **gpu}
    return plan_platform(parse_spec({"cloud": "aks", "environment": "dev", "region": "eastus",
                                     "gpuPools": [pool]}, "test"))


def test_warns_when_max_price_is_above_on_demand() -> None:
    warnings = price_plan(spec(maxPrice=5)).warnings
    assert warnings == ["a100spot: maxPrice $5/h is above the on-demand price $3.673/h; spot could cost more "
                        "than on-demand"]


def test_warns_when_max_price_is_below_the_spot_price() -> None:
    (warning,) = price_plan(spec(maxPrice=0.1)).warnings
    assert "maxPrice $0.1/h is below the current spot price $0.444433/h; nodes would be evicted at once" in warning


def test_warns_when_a_gpu_pool_costs_money_while_idle() -> None:
    (warning,) = price_plan(spec(min=1)).warnings
    assert warning == "a100spot: GPU pool min is 1, so it costs $324.44/month while idle; use min 0 to scale to zero"


def test_idle_floor_counts_min_nodes_at_their_own_capacity() -> None:
    report = price_plan(spec(min=2))
    line = next(p for p in report.to_json()["pools"] if p["pool"] == "a100spot")
    assert line["idleFloor"] == float((Decimal("0.444433") * 2 * 730).quantize(Decimal("0.01")))


class _Prices(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        items = [
            {"currencyCode": "USD", "retailPrice": 0.526, "unitPrice": 0.526, "armRegionName": "uksouth",
             "armSkuName": "Standard_NC4as_T4_v3", "skuName": "NC4as T4 v3", "productName": "NCasT4_v3 Series",
             "meterName": "NC4as T4 v3", "serviceName": "Virtual Machines", "type": "Consumption",
             "unitOfMeasure": "1 Hour", "isPrimaryMeterRegion": True},
            {"currencyCode": "USD", "retailPrice": 0.0632, "unitPrice": 0.0632, "armRegionName": "uksouth",
             "armSkuName": "Standard_NC4as_T4_v3", "skuName": "NC4as T4 v3 Spot", "productName": "NCasT4_v3 Series",
             "meterName": "NC4as T4 v3 Spot", "serviceName": "Virtual Machines", "type": "Consumption",
             "unitOfMeasure": "1 Hour", "isPrimaryMeterRegion": True},
        ]
        body = json.dumps({"Items": items, "NextPageLink": None}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        """Keep the test output quiet."""


@pytest.fixture
def price_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Prices)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/api/retail/prices"
    server.shutdown()
    server.server_close()


def test_prices_refresh_fills_the_gap_the_plan_reported(price_server: str, tmp_path: Path) -> None:
    table = tmp_path / "prices.json"
    table.write_text(bundled_table_path().read_text())
    result = spotkube("prices", "refresh", "--region", "uksouth", "--sku", "Standard_NC4as_T4_v3",
                      "--table", str(table), "--endpoint", price_server)
    assert result.returncode == 0, result.stderr
    refreshed = load_table(table)
    spot = refreshed.find("azure", "uksouth", "Standard_NC4as_T4_v3", "machine", "spot")
    assert spot is not None and spot.usd_per_hour == Decimal("0.0632")
    assert price_plan(spec(), table=refreshed).pools  # the refreshed table is a valid table


def test_prices_refresh_offline_is_one_clear_error(tmp_path: Path) -> None:
    result = spotkube("prices", "refresh", "--region", "uksouth", "--sku", "Standard_NC4as_T4_v3",
                      "--endpoint", "http://127.0.0.1:9/api/retail/prices", "--timeout", "1")
    assert result.returncode == 2
    assert "Traceback" not in result.stderr and "error:" in result.stderr
