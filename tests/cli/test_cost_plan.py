"""Cost next to the pools: the plan's cost blocks, the `cost` command (table, JSON, Markdown), the
user price file both read, and the refresh that writes that file.

Every test runs with the user's config directory in tmp_path and no SPOTKUBE_PRICES, so a price file
on the machine running the tests changes nothing.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner, Result

from in_process import run_spotkube
from planned_costs import price_plan
from spotkube.cli.app import app
from spotkube.clouds import parse_spec, plan_platform
from spotkube.platform.cost import PRICES_ENV, default_user_file
from spotkube.platform.errors import SpotkubeError
from spotkube.platform.project import Project

REPO = Path(__file__).resolve().parents[2]
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
    """The command, in this process (tests/in_process.py): the plan runs the Pulumi program under mocks."""
    return run_spotkube(*args, cwd=cwd)


def cli(*args: str, project: Path = REPO) -> Result:
    """`cost` and `prices` in-process (`cost` runs the program under mocks in-process, for the fixed lines)."""
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


def test_plan_json_cost_block_reproduces_the_articles_example_from_the_stacks_own_prices() -> None:
    result = spotkube("plan", "--stack", "aks-dev-uksouth", "--format", "json")
    assert result.returncode == 0, result.stderr
    cost = stack_json(result.stdout)["cost"]
    spot = pool(cost, "cpuspot")
    assert (spot["scenarioHours"], spot["scenario"], spot["onDemandEquivalent"], spot["savingPercent"]) == (
        3400, 173.86, 788.80, 78)
    # The 2022 prices are the stack's own, with their source, not the bundled table's.
    assert (spot["priceFrom"], spot["onDemandPriceFrom"]) == ("stack file", "stack file")
    assert spot["priceSource"].startswith("the spotkube articles' worked example: Azure's 2022 retail list price")
    assert cost["assumptions"]["evictionRate"] == 0.05
    total = cost["total"]
    assert (total["nodesIdleFloor"], total["scenario"], total["onDemandEquivalent"], total["savingPercent"]) == (
        508.08, 173.86, 788.80, 78)  # 2 system + 1 platform D4s_v3 nodes, 730 h at $0.2320
    # The idle floor also counts what the program registers besides the nodes: the Free tier's cluster, its
    # outbound load balancer and IP, and UK South's managed disks (P10 OS disks at $23.848 a month, E4 volumes
    # at $2.64, from the Retail Prices API table of 2026-09-23), so the whole idle floor is known.
    fixed = {line["item"]: line["monthly"] for line in cost["fixed"]["lines"]}
    assert fixed == {
        "cluster management (Free tier)": 0.0, "Standard load balancer (AKS's outbound rule)": 18.25,
        "outbound public IP × 1": 3.65, "OS disks of pool system (2 node(s) × 128 GiB Premium SSD P10)": 47.7,
        "OS disks of pool platform (1 node(s) × 128 GiB Premium SSD P10)": 23.85,
        "MySQL volume (20 GiB, storage class default)": 2.64, "SeaweedFS volume (20 GiB, storage class default)": 2.64}
    assert (total["idleFloor"], total["fixedIdleFloor"], cost["fixed"]["total"]) == (606.81, 98.73, 98.73)
    assert cost["fixed"]["unpriced"] == []
    assert total["complete"] is False
    assert total["pricedPools"] == ["system", "platform", "cpuspot"]
    assert total["unpricedPools"] == ["t4spot"]
    # t4spot has no UK South price, but at min 0 with no hours it adds nothing: the totals stay whole.
    (t4_unpriced,) = total["unpriced"]
    assert {key: value for key, value in t4_unpriced.items() if key != "why"} == {
        "pool": "t4spot", "machine": T4_UKSOUTH, "gpu": None, "region": "uksouth", "missing": ["spot"],
        "blocks": []}
    assert "spotkube prices refresh --cloud azure --region uksouth" in t4_unpriced["why"], "says how to price it"
    t4 = pool(cost, "t4spot")
    assert t4["priced"] is False
    # Its on-demand price is known (karpenter-provider-azure's dated table), its spot price is not.
    assert t4["onDemandUsdPerHour"] == 0.615
    spot_figures = [key for key in NULL_FIGURES if key != "onDemandUsdPerHour"]
    assert {key: t4[key] for key in spot_figures} == dict.fromkeys(spot_figures)


def test_plan_markdown_names_the_unpriced_pool_that_adds_nothing() -> None:
    result = spotkube("plan", "--stack", "aks-dev-uksouth", "--format", "markdown")
    assert result.returncode == 0, result.stderr
    assert "| cpuspot | spot | Standard_D4s_v3 |" in result.stdout
    assert "3400 h: $173.86 (on-demand $788.80)" in result.stdout
    t4_row = next(line for line in result.stdout.splitlines() if line.startswith("| t4spot |"))
    assert t4_row.endswith("| unpriced |")
    summary = next(line for line in result.stdout.splitlines() if line.startswith("**monthly cost"))
    assert summary.startswith("**monthly cost: idle floor $606.81 (nodes $508.08 + fixed $98.73); ")
    assert ("; scenario $173.86 vs $788.80 on demand, saving 78 %; t4spot, Standard_NC4as_T4_v3 in uksouth, has no "
            "price; at min 0 with no scenario hours it adds nothing to the totals (no reachable dated copy holds the "
            "Azure Spot meter") in summary
    assert summary.endswith("reads it) [prices: bundled 2026-06-18; stack file 2026-11-25]**")
    assert "- fixed: Standard load balancer (AKS's outbound rule): $18.25 ($0.025/hour; " in result.stdout
    assert "cost-unpriced" not in result.stdout


def test_a_bigger_size_without_a_price_makes_the_idle_floor_not_known_and_names_the_pool(
    project_with_stack: Callable[[str, dict[str, Any]], Project],
) -> None:
    """aks-dev-uksouth's platform pool from D4s_v3 to D16s_v3, which the bundled table doesn't price."""
    config = _uksouth_config()
    config["platformPool"]["machine"] = "Standard_D16s_v3"
    project = project_with_stack("aks-dev-uksouth", config)

    as_json = cli("cost", "--stack", "aks-dev-uksouth", "--format", "json", project=project.root)
    markdown = cli("cost", "--stack", "aks-dev-uksouth", "--format", "markdown", project=project.root)

    body = json.loads(as_json.stdout)
    total = body["cost"]["total"]
    assert (total["idleFloor"], total["scenario"], total["onDemandEquivalent"]) == (None, 173.86, 788.80)
    assert [u["blocks"] for u in total["unpriced"] if u["pool"] == "platform"] == [["idleFloor"]]
    (warning,) = [w for w in body["warnings"] if w["id"] == "cost-unpriced:platform"]
    assert "so the stack's idle floor can't be totalled" in warning["message"]
    assert "**monthly cost: idle floor not known (platform, Standard_D16s_v3 in uksouth, has no price); " in (
        markdown.stdout)
    assert "; scenario $173.86 vs $788.80 on demand, saving 78 %" in markdown.stdout
    assert "| **total** |  |  |  | **not known** |  | **$173.86** | **$788.80** | **78 %** |" in markdown.stdout
    summary = next(line for line in markdown.stdout.splitlines() if line.startswith("**monthly cost"))
    assert "$338.72" not in summary  # the two D4s_v3 system nodes alone are never shown as the floor


def _uksouth_config() -> dict[str, Any]:
    body = yaml.safe_load((REPO / "stacks" / "Pulumi.aks-dev-uksouth.yaml").read_text())
    return {key.removeprefix("spotkube:"): value for key, value in body["config"].items()}


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
    assert not [w for w in document["warnings"] if w["id"].startswith("cost-unpriced")]


def test_a_stack_without_any_price_reads_not_known_never_zero(
    project_with_stack: Callable[[str, dict[str, Any]], Project],
) -> None:
    project = project_with_stack("aks-dev-denmarkeast", {
        "cloud": "aks", "environment": "dev", "region": "denmarkeast",
        "gpuPools": [{"name": "t4spot", "machine": T4_UKSOUTH, "capacity": "spot"}],
        "cost": {"hours": {"t4spot": 100}},
        "cluster": {"deployer": {"objectId": "c0ffee00-0000-4000-8000-000000000001",
                                 "principalType": "ServicePrincipal"}},
    })

    plan = spotkube("plan", "--stack", "aks-dev-denmarkeast", "--format", "markdown", cwd=project.root)
    as_json = cli("cost", "--stack", "aks-dev-denmarkeast", "--format", "json", project=project.root)
    table = cli("cost", "--stack", "aks-dev-denmarkeast", project=project.root)
    markdown = cli("cost", "--stack", "aks-dev-denmarkeast", "--format", "markdown", project=project.root)

    assert plan.returncode == 0, plan.stderr
    assert ("**monthly cost: idle floor not known (system, Standard_D4s_v3 in denmarkeast, has no price; platform, "
            "Standard_D4s_v3 in denmarkeast, has no price; OS disks of pool platform") in plan.stdout
    assert ("); scenario not known (t4spot, Standard_NC4as_T4_v3 in denmarkeast, has no price) [no price found; "
            "bundled table of") in plan.stdout
    assert as_json.exit_code == 0, as_json.output
    total = json.loads(as_json.stdout)["cost"]["total"]
    assert {k: v for k, v in total.items() if k != "unpriced"} == {
        "idleFloor": None, "scenario": None, "onDemandEquivalent": None, "savingPercent": None, "complete": False,
        "nodesIdleFloor": None, "fixedIdleFloor": None, "pricedPools": [], "unpricedPools": ["system", "platform",
                                                                                              "t4spot"]}
    assert [u["blocks"] for u in total["unpriced"]] == [
        ["idleFloor"], ["idleFloor"], ["scenario", "onDemandEquivalent"]]
    for shown in (plan.stdout, table.stdout, markdown.stdout):
        # The only $0.00 is a true price: the Free tier's cluster management, a fixed line of its own.
        # The pools' and totals' rows, in the table or in Markdown (the fixed lines are listed below them).
        pools_and_totals = [line for line in shown.splitlines() if line.startswith(("│", "| ")) and "fixed" not in line]
        assert pools_and_totals
        assert not [line for line in pools_and_totals if "$0.00" in line or "0 %" in line]
    assert "│ total " in table.stdout and table.stdout.count("unpriced") >= 3  # 3 pools
    assert "monthly cost: idle floor not known (system, Standard_D4s_v3 in denmarkeast, has no price;" in " ".join(
        table.stdout.split())
    assert "| **total** |  |  |  | **not known** |  | **not known** | **not known** | **not known** |" in (
        markdown.stdout)


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
    assert "user file" in table.stdout and str(prices) in "".join(table.stdout.split())


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
    assert "| cpuspot | spot | $0.049 | stack file | $0.00 | 3400 | $173.86 | $788.80 | 78 % |" in lines
    assert "| t4spot | spot | unpriced | - | - | 0 | - | - | - |" in lines
    assert "| fixed (cluster, network, disks) | - |  |  | $98.73 |  | - | - |  |" in lines
    assert "| **total** |  |  |  | **$606.81** |  | **$173.86** | **$788.80** | **78 %** |" in lines
    # The same summary line as the plan's Markdown, with the idle floor's two parts.
    assert any(line.startswith("**monthly cost: idle floor $606.81 (nodes $508.08 + fixed $98.73); ") for line in lines)
    assert "- fixed: cluster management (Free tier): $0.00 ($0.00/hour; ManagedCluster 'spotkube-aks'; " in (
        result.stdout)
    assert not {"┏", "│", "━"} & set(result.stdout)


# --- warnings -----------------------------------------------------------------------------------


def spec(**gpu: Any) -> Any:
    pool_ = {"name": "a100spot", "machine": "Standard_NC24ads_A100_v4", **gpu}
    return plan_platform(parse_spec({"cloud": "aks", "environment": "dev", "region": "eastus",
                                     "gpuPools": [pool_]}, "test"))


def test_warns_when_max_price_is_above_on_demand() -> None:
    warnings = price_plan(spec(maxPrice=5)).warnings
    assert [(w.id, w.message) for w in warnings] == [(
        "cost-max-price-above-on-demand:a100spot",
        "a100spot: maxPrice $5/h is above the on-demand price $3.673/h; spot could cost more than on-demand")]


def test_warns_when_max_price_is_below_the_spot_price() -> None:
    (warning,) = price_plan(spec(maxPrice=0.1)).warnings
    assert warning.id == "cost-max-price-below-spot:a100spot"
    assert "maxPrice $0.1/h is below the current spot price $0.444433/h; nodes would be evicted at once" in (
        warning.message)


def test_warns_when_a_gpu_pool_costs_money_while_idle() -> None:
    (warning,) = price_plan(spec(min=1)).warnings
    assert (warning.id, warning.message) == (
        "cost-idle-gpu:a100spot",
        "a100spot: GPU pool min is 1, so it costs $324.44/month while idle; use min 0 to scale to zero")


def test_idle_floor_counts_min_nodes_at_their_own_capacity() -> None:
    report = price_plan(spec(min=2))
    line = pool(report.to_json(), "a100spot")
    assert line["idleFloor"] == float((Decimal("0.444433") * 2 * 730).quantize(Decimal("0.01")))


def test_an_unpriced_gcp_gpu_names_the_missing_accelerator_and_the_refresh_with_its_key(user_config: Path) -> None:
    plan = plan_platform(parse_spec({
        "cloud": "gke", "environment": "dev", "region": "us-east4",
        "cluster": {"project": "acme-ml-dev"},
        "gpuPools": [{"name": "t4", "machine": "n1-standard-8", "gpu": {"type": "nvidia-tesla-t4", "count": 1},
                      "capacity": "spot", "zones": ["us-east4-a"]}],
        "cost": {"hours": {"t4": 10}}}, "test"))

    report = price_plan(plan)

    (warning,) = [w for w in report.warnings if w.id == "cost-unpriced:t4"]
    assert warning.message.startswith("t4: unpriced: no spot or on-demand price for n1-standard-8 with 1 × "
                                      "nvidia-tesla-t4 (no nvidia-tesla-t4 accelerator row) in us-east4")
    assert ("SPOTKUBE_GCP_BILLING_API_KEY=<API key> spotkube prices refresh --cloud gcp --region us-east4 --sku "
            "n1-standard-8") in warning.message
    assert f"your price file {user_config / 'spotkube' / 'prices.json'}" in warning.message
    assert report.unpriced[0].text() == "t4, n1-standard-8 with 1 × nvidia-tesla-t4 in us-east4, has no price"


def test_a_stack_price_must_fit_its_cloud() -> None:
    def refused(price: dict[str, Any]) -> str:
        row = {"sku": "Standard_D4s_v3", "capacity": "spot", "usdPerHour": 0.1, "source": "x", "date": "2026-11-01"}
        with pytest.raises(SpotkubeError) as raised:
            parse_spec({"cloud": "aks", "environment": "dev", "region": "uksouth",
                        "cost": {"prices": [{**row, **price}]}}, "stacks/Pulumi.x.yaml")
        return str(raised.value)

    assert refused({"capacity": "preemptible"}) == (
        "stacks/Pulumi.x.yaml: spotkube:cost.prices[0]: Azure has no preemptible capacity (it is called spot there)")
    assert refused({"date": "2026-02-30"}) == (
        "stacks/Pulumi.x.yaml: spotkube:cost.prices[0].date: '2026-02-30' is not a day of the calendar; write it as "
        '"YYYY-MM-DD"')


def test_prices_older_than_90_days_get_a_note_in_every_format_and_never_fail() -> None:
    """gke-dev-us-central1's bundled prices were read 2026-08-03: a note naming `spotkube prices refresh`
    in the table, the Markdown and the JSON, and `cost` still exits 0."""
    outputs = {fmt: cli("cost", "--stack", "gke-dev-us-central1", "--format", fmt)
               for fmt in ("table", "markdown", "json")}
    assert all(result.exit_code == 0 for result in outputs.values()), {f: r.output for f, r in outputs.items()}
    start = "prices older than 90 days (the oldest read 2026-08-03"
    assert f"note: {start}" in " ".join(outputs["table"].stdout.split())
    assert f"> **note**: {start}" in outputs["markdown"].stdout
    (note,) = json.loads(outputs["json"].stdout)["cost"]["priceNotes"]
    assert note.startswith(start) and "`spotkube prices refresh`" in note
    assert not [w for w in json.loads(outputs["json"].stdout)["warnings"] if "older" in w["message"]]


#: New stacks in regions whose managed or persistent disks the bundled fixed-cost table prices: the flags
#: `new-stack` takes there, and the OS or boot disk line of the system pool with its monthly price.
NEW_STACK_DISKS = [
    ("aks", "westeurope", ["--deployer-object-id", "c0ffee00-0000-4000-8000-000000000001"],
     "OS disks of pool system (2 node(s) × 128 GiB Premium SSD P10)", 43.36),
    ("aks", "swedencentral", ["--deployer-object-id", "c0ffee00-0000-4000-8000-000000000001"],
     "OS disks of pool system (2 node(s) × 128 GiB Premium SSD P10)", 43.36),
    ("gke", "europe-west4", ["--gcp-project", "acme-ml-qa"],
     "boot disks of pool system (2 × 100 GB pd-balanced)", 22.0),
]


@pytest.mark.parametrize(("cloud", "region", "flags", "disks", "monthly"), NEW_STACK_DISKS)
def test_a_new_stack_knows_its_idle_floor_with_its_disks(
    project_with_stack: Callable[[str, dict[str, Any]], Project], cloud: str, region: str, flags: list[str],
    disks: str, monthly: float,
) -> None:
    project = project_with_stack("placeholder", {"cloud": cloud, "environment": "dev", "region": region})
    (project.root / "stacks" / "Pulumi.placeholder.yaml").unlink()
    written = CliRunner().invoke(app, ["new-stack", "--cloud", cloud, "--env", "qa", "--region", region, *flags,
                                       "--project", str(project.root)])
    assert written.exit_code == 0, written.output

    result = cli("cost", "--stack", f"{cloud}-qa-{region}", "--format", "json", project=project.root)

    assert result.exit_code == 0, result.output
    cost = json.loads(result.stdout)["cost"]
    fixed = {line["item"]: line["monthly"] for line in cost["fixed"]["lines"]}
    assert fixed[disks] == monthly
    assert cost["fixed"]["unpriced"] == []
    total = cost["total"]
    assert total["idleFloor"] is not None
    assert total["idleFloor"] == pytest.approx(total["nodesIdleFloor"] + total["fixedIdleFloor"])
