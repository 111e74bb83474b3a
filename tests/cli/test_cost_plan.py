"""Cost next to the pools: the plan's cost blocks, the `cost` command (table, JSON, Markdown), the
user price file both read, and the refresh that writes that file.

Every test runs with the user's config directory in tmp_path and no SPOTKUBE_PRICES, so a price file
on the machine running the tests changes nothing.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from spotkube.cli.app import app
from spotkube.clouds import load_price_table, parse_spec, plan_platform
from spotkube.platform.cost import PRICES_ENV, bundled_table_path, default_user_file
from spotkube.platform.project import Project
from spotkube.review.costing import price_plan

REPO = Path(__file__).resolve().parents[2]
SPOTKUBE = str(Path(sys.executable).with_name("spotkube"))
T4_UKSOUTH = "Standard_NC4as_T4_v3"


@pytest.fixture(autouse=True)
def user_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's config directory (and HOME) inside tmp_path, no SPOTKUBE_PRICES, and no proxy for
    127.0.0.1; subprocesses inherit all of it."""
    monkeypatch.delenv(PRICES_ENV, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    for name in ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    return tmp_path / "config"


def spotkube(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    """The console script in a subprocess: the plan runs the Pulumi program under mocks."""
    return subprocess.run([SPOTKUBE, *args], cwd=cwd, capture_output=True, text=True, timeout=300, check=False)


def cli(*args: str, project: Path = REPO) -> Result:
    """`cost` and `prices` in-process: neither runs the Pulumi program."""
    extra = ["--project", str(project)] if args[0] == "cost" else []
    return CliRunner().invoke(app, [*args, *extra])


def stack_json(stdout: str) -> dict[str, Any]:
    """One stack's plan document, whether the plan prints it alone or under "stacks"."""
    body = json.loads(stdout)
    return body["stacks"][0] if "stacks" in body else body


def pool(cost: dict[str, Any], name: str) -> dict[str, Any]:
    return next(p for p in cost["pools"] if p["pool"] == name)


def t4_prices(path: Path, spot: float = 0.07, on_demand: float = 0.6) -> Path:
    """A user price file with the UK South T4 prices the bundled table lacks."""
    rows = [{"cloud": "azure", "region": "uksouth", "sku": T4_UKSOUTH, "kind": "machine", "capacity": capacity,
             "usdPerHour": usd, "source": "our EA price sheet", "date": "2026-11-01"}
            for capacity, usd in (("spot", spot), ("on-demand", on_demand))]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"rows": rows}))
    return path


NULL_FIGURES = ("usdPerHour", "onDemandUsdPerHour", "idleFloor", "scenario", "onDemandEquivalent", "savingPercent",
                "priceSource", "priceFrom")


# --- the plan -----------------------------------------------------------------------------------


def test_plan_json_cost_block_reproduces_the_articles_example_and_marks_the_unpriced_pool() -> None:
    result = spotkube("plan", "--stack", "aks-dev-uksouth", "--format", "json")
    assert result.returncode == 0, result.stderr
    cost = stack_json(result.stdout)["cost"]
    spot = pool(cost, "cpuspot")
    assert (spot["scenarioHours"], spot["scenario"], spot["onDemandEquivalent"], spot["savingPercent"]) == (
        3400, 173.86, 788.80, 78)
    assert (spot["priceFrom"], spot["onDemandPriceFrom"]) == ("bundled", "bundled")
    assert cost["assumptions"]["evictionRate"] == 0.05
    assert cost["total"]["idleFloor"] == 508.08  # 2 system + 1 platform D4s_v3 nodes, 730 h at $0.2320
    assert cost["total"]["complete"] is False
    assert cost["total"]["pricedPools"] == ["system", "platform", "cpuspot"]
    assert cost["total"]["unpricedPools"] == ["t4spot"]
    t4 = pool(cost, "t4spot")
    assert t4["priced"] is False
    assert {key: t4[key] for key in NULL_FIGURES} == dict.fromkeys(NULL_FIGURES)


def test_plan_markdown_says_unpriced_and_what_the_totals_cover() -> None:
    result = spotkube("plan", "--stack", "aks-dev-uksouth", "--format", "markdown")
    assert result.returncode == 0, result.stderr
    assert "| cpuspot | spot | Standard_D4s_v3 |" in result.stdout
    assert "3400 h: $173.86 (on-demand $788.80)" in result.stdout
    assert "| t4spot | spot | Standard_NC4as_T4_v3 |" in result.stdout
    t4_row = next(line for line in result.stdout.splitlines() if line.startswith("| t4spot |"))
    assert t4_row.endswith("| unpriced |")
    assert ("**monthly cost of the priced pools (system, platform, cpuspot): idle floor $508.08; scenario "
            "$173.86 vs $788.80 on demand, saving 78 %; unpriced, left out of the totals: t4spot [prices as of "
            ) in result.stdout
    assert ("> cost: t4spot: unpriced: no spot or on-demand price for Standard_NC4as_T4_v3 in uksouth in the "
            "bundled table") in result.stdout
    assert "spotkube prices refresh --region uksouth --sku Standard_NC4as_T4_v3" in result.stdout
    assert "no price" not in result.stdout


def test_the_plan_reads_the_price_file_spotkube_prices_names(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    prices = t4_prices(tmp_path / "negotiated.json")
    monkeypatch.setenv(PRICES_ENV, str(prices))

    result = spotkube("plan", "--stack", "aks-dev-uksouth", "--format", "json")

    assert result.returncode == 0, result.stderr
    document = stack_json(result.stdout)
    t4 = pool(document["cost"], "t4spot")
    assert (t4["priced"], t4["usdPerHour"], t4["priceFrom"], t4["priceSource"]) == (
        True, 0.07, str(prices), "our EA price sheet")
    assert document["cost"]["userPriceFile"] == str(prices)
    assert document["cost"]["total"]["complete"] is True
    assert not [w for w in document["warnings"] if "unpriced" in w]


def test_a_stack_without_any_price_reads_unpriced_never_zero(
    project_with_stack: Callable[[str, dict[str, Any]], Project],
) -> None:
    project = project_with_stack("aks-dev-brazilsouth", {
        "cloud": "aks", "environment": "dev", "region": "brazilsouth",
        "gpuPools": [{"name": "t4spot", "machine": T4_UKSOUTH, "capacity": "spot"}],
        "cost": {"hours": {"t4spot": 100}},
        "cluster": {"deployer": {"objectId": "c0ffee00-0000-4000-8000-000000000001",
                                 "principalType": "ServicePrincipal"}},
    })

    plan = spotkube("plan", "--stack", "aks-dev-brazilsouth", "--format", "markdown", cwd=project.root)
    as_json = cli("cost", "--stack", "aks-dev-brazilsouth", "--format", "json", project=project.root)
    table = cli("cost", "--stack", "aks-dev-brazilsouth", project=project.root)
    markdown = cli("cost", "--stack", "aks-dev-brazilsouth", "--format", "markdown", project=project.root)

    assert plan.returncode == 0, plan.stderr
    assert "**monthly cost: unpriced (no price for system, platform, t4spot) [prices as of" in plan.stdout
    assert as_json.exit_code == 0, as_json.output
    total = json.loads(as_json.stdout)["cost"]["total"]
    assert total == {"idleFloor": None, "scenario": None, "onDemandEquivalent": None, "savingPercent": None,
                     "complete": False, "pricedPools": [], "unpricedPools": ["system", "platform", "t4spot"]}
    for shown in (plan.stdout, table.stdout, markdown.stdout):
        assert "$0.00" not in shown and "0 %" not in shown
    assert "│ total " in table.stdout and table.stdout.count("unpriced") >= 7  # 3 pools, 4 totals
    assert "monthly cost: unpriced (no price for system, platform, t4spot) [prices as of" in table.stdout
    assert "| **total** |  |  |  | **unpriced** |" in markdown.stdout


# --- the cost command ---------------------------------------------------------------------------


def test_cost_command_answers_what_if_questions() -> None:
    result = cli("cost", "--stack", "aks-prod-eastus", "--hours", "a100spot=1000", "--format", "json")
    assert result.exit_code == 0, result.output
    spot = pool(json.loads(result.stdout)["cost"], "a100spot")
    # 1,000 h x (1 + 0.05 x 0.25) = 1,012.5 h at $0.444433 spot, against 1,000 h at $3.673.
    assert (spot["scenario"], spot["onDemandEquivalent"]) == (449.99, 3673.00)


def test_cost_command_refuses_an_unknown_pool() -> None:
    result = cli("cost", "--stack", "aks-dev-uksouth", "--hours", "gpu=10")
    assert result.exit_code == 2
    assert ("--hours gpu=10: use POOL=HOURS with HOURS >= 0 and POOL one of system, platform, cpuspot"
            in " ".join(result.stderr.split()))


def test_cost_prices_option_overrides_the_bundled_rows(tmp_path: Path) -> None:
    prices = t4_prices(tmp_path / "prices.json")

    as_json = cli("cost", "--stack", "aks-dev-uksouth", "--prices", str(prices), "--hours", "t4spot=100",
                  "--format", "json")
    table = cli("cost", "--stack", "aks-dev-uksouth", "--prices", str(prices))

    assert as_json.exit_code == 0, as_json.output
    cost = json.loads(as_json.stdout)["cost"]
    t4 = pool(cost, "t4spot")
    # 100 h x 1.05 at the negotiated $0.07 spot, against 100 h at $0.60 on demand.
    assert (t4["scenario"], t4["onDemandEquivalent"], t4["priceFrom"]) == (7.35, 60.0, str(prices))
    assert cost["total"]["complete"] is True and cost["userPriceFile"] == str(prices)
    assert table.exit_code == 0, table.output
    t4_line = next(line for line in table.stdout.splitlines() if "t4spot" in line)
    assert "user file" in t4_line and "0.07" in t4_line
    assert f"user prices from {prices}" in " ".join(table.stdout.split())


def test_cost_reads_the_default_user_file(user_config: Path) -> None:
    prices = t4_prices(default_user_file(), spot=0.08)
    assert prices == user_config / "spotkube" / "prices.json"

    result = cli("cost", "--stack", "aks-dev-uksouth", "--format", "json")

    assert result.exit_code == 0, result.output
    assert pool(json.loads(result.stdout)["cost"], "t4spot")["usdPerHour"] == 0.08


@pytest.mark.parametrize("body", ['{"rows": [{"cloud": "azure"}]', '{"rows": [{"cloud": "aws"}]}'])
def test_a_bad_price_file_is_one_clear_error(tmp_path: Path, body: str) -> None:
    prices = tmp_path / "prices.json"
    prices.write_text(body)

    result = cli("cost", "--stack", "aks-dev-uksouth", "--prices", str(prices))

    assert result.exit_code == 2
    message = " ".join(result.stderr.split())
    assert message.startswith(f"error: {prices}: ")
    assert "rows[0]" in message or "not JSON" in message
    assert "a row has cloud (azure or gcp)" in message
    assert "Traceback" not in result.output


def test_a_missing_price_file_is_refused() -> None:
    result = cli("cost", "--stack", "aks-dev-uksouth", "--prices", "/nonexistent/prices.json")
    assert result.exit_code == 2
    assert "error: /nonexistent/prices.json: no such price file" in " ".join(result.stderr.split())


def test_cost_markdown_is_markdown_in_the_plans_style() -> None:
    result = cli("cost", "--stack", "aks-dev-uksouth", "--format", "markdown")

    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "## spotkube cost: aks-dev-uksouth"
    assert "| pool | capacity | $/h | price from | idle floor | hours | scenario | on demand | saving |" in lines
    assert "|---|---|---|---|---|---|---|---|---|" in lines
    assert "| cpuspot | spot | 0.0487 | bundled | $0.00 | 3400 | $173.86 | $788.80 | 78 % |" in lines
    assert "| t4spot | spot | unpriced | - | - | 0 | - | - | - |" in lines
    assert "| **total (priced pools only)** |  |  |  | **$508.08** |  | **$173.86** | **$788.80** | **78 %** |" in lines
    # The same summary line as the plan's Markdown.
    assert any(line.startswith("**monthly cost of the priced pools (system, platform, cpuspot): idle floor "
                               "$508.08;") for line in lines)
    assert any(line.startswith("> **warning:** t4spot: unpriced: no spot or on-demand price") for line in lines)
    assert not {"┏", "│", "━"} & set(result.stdout)


# --- warnings -----------------------------------------------------------------------------------


def spec(**gpu: Any) -> Any:
    pool_ = {"name": "a100spot", "machine": "Standard_NC24ads_A100_v4", **gpu}
    return plan_platform(parse_spec({"cloud": "aks", "environment": "dev", "region": "eastus",
                                     "gpuPools": [pool_]}, "test"))


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
    line = pool(report.to_json(), "a100spot")
    assert line["idleFloor"] == float((Decimal("0.444433") * 2 * 730).quantize(Decimal("0.01")))


def test_an_unpriced_gcp_gpu_names_the_missing_accelerator_and_the_price_file(user_config: Path) -> None:
    plan = plan_platform(parse_spec({
        "cloud": "gke", "environment": "dev", "region": "us-east4",
        "cluster": {"project": "acme-ml-dev"},
        "gpuPools": [{"name": "t4", "machine": "n1-standard-8", "gpu": {"type": "nvidia-tesla-t4", "count": 1},
                      "capacity": "spot", "zones": ["us-east4-a"]}]}, "test"))

    report = price_plan(plan)

    (warning,) = [w for w in report.warnings if w.startswith("t4:")]
    assert warning.startswith("t4: unpriced: no spot or on-demand price for n1-standard-8 in us-east4")
    assert f"add a row for it to your price file {user_config / 'spotkube' / 'prices.json'}" in warning
    assert "prices refresh" not in warning  # GCP has no keyless price API to refresh from


# --- the refresh --------------------------------------------------------------------------------


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


def bundled_digest() -> str:
    return hashlib.sha256(bundled_table_path().read_bytes()).hexdigest()


def test_refresh_writes_the_users_price_file_and_never_the_package(price_server: str, user_config: Path) -> None:
    before = bundled_digest()
    target = user_config / "spotkube" / "prices.json"
    assert not target.parent.exists()

    refreshed = cli("prices", "refresh", "--region", "uksouth", "--sku", T4_UKSOUTH, "--endpoint", price_server)

    assert refreshed.exit_code == 0, refreshed.output
    assert refreshed.stdout.strip() == f"updated 2 price rows in {target}"
    assert bundled_digest() == before
    written = load_price_table(target)
    assert [(r.region, r.sku, r.capacity, r.usd_per_hour) for r in written.rows] == [
        ("uksouth", T4_UKSOUTH, "on-demand", Decimal("0.526")), ("uksouth", T4_UKSOUTH, "spot", Decimal("0.0632"))]
    # The gap the plan reported is filled, from the user's file.
    cost = cli("cost", "--stack", "aks-dev-uksouth", "--format", "json")
    t4 = pool(json.loads(cost.stdout)["cost"], "t4spot")
    assert (t4["usdPerHour"], t4["priceFrom"]) == (0.0632, str(target))


def test_refresh_into_a_named_file_creates_its_folders(price_server: str, tmp_path: Path) -> None:
    before = bundled_digest()
    target = tmp_path / "team" / "finops" / "prices.json"

    refreshed = cli("prices", "refresh", "--region", "uksouth", "--sku", T4_UKSOUTH, "--table", str(target),
                    "--endpoint", price_server)

    assert refreshed.exit_code == 0, refreshed.output
    assert load_price_table(target).find("azure", "uksouth", T4_UKSOUTH, "machine", "spot") is not None
    assert not default_user_file().exists()
    assert bundled_digest() == before


def test_refresh_keeps_the_other_rows_of_the_users_file(price_server: str, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"rows": [
        {"cloud": "azure", "region": "eastus", "sku": "Standard_D4s_v3", "kind": "machine",
         "capacity": "on-demand", "usdPerHour": 0.15, "source": "EA", "date": "2026-10-01"},
        {"cloud": "azure", "region": "uksouth", "sku": T4_UKSOUTH, "kind": "machine",
         "capacity": "spot", "usdPerHour": 0.5, "source": "stale", "date": "2026-10-01"}]}))
    monkeypatch.setenv(PRICES_ENV, str(prices))

    refreshed = cli("prices", "refresh", "--region", "uksouth", "--sku", T4_UKSOUTH, "--endpoint", price_server)

    assert refreshed.exit_code == 0, refreshed.output
    table = load_price_table(prices)
    assert table.find("azure", "eastus", "Standard_D4s_v3", "machine", "on-demand").usd_per_hour == Decimal("0.15")
    assert table.find("azure", "uksouth", T4_UKSOUTH, "machine", "spot").usd_per_hour == Decimal("0.0632")
    assert len(table.rows) == 3


def test_prices_refresh_offline_is_one_clear_error(user_config: Path) -> None:
    before = bundled_digest()
    result = spotkube("prices", "refresh", "--region", "uksouth", "--sku", T4_UKSOUTH,
                      "--endpoint", "http://127.0.0.1:9/api/retail/prices", "--timeout", "1")
    assert result.returncode == 2
    assert "Traceback" not in result.stderr and "error:" in result.stderr
    assert not (user_config / "spotkube").exists()
    assert bundled_digest() == before
