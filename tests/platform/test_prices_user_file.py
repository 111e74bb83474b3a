"""The user price file: found where the user expects it, merged over the bundled table row by row,
remembered as the source of its rows, and refused with one clear message when it can't be used."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from planned_costs import price_plan
from spotkube.clouds import hourly_price, load_price_table, parse_spec, plan_platform, price_table
from spotkube.platform.cost import (
    PRICES_ENV,
    PriceFileError,
    default_user_file,
    user_file_path,
)

BUNDLED = load_price_table()


@pytest.fixture(autouse=True)
def config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's config directory inside tmp_path, and no SPOTKUBE_PRICES, whatever the machine has."""
    monkeypatch.delenv(PRICES_ENV, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    return tmp_path / "config"


def row(**overrides: Any) -> dict[str, Any]:
    fields: dict[str, Any] = {"cloud": "azure", "region": "eastus", "sku": "Standard_D4s_v3", "kind": "machine",
                              "capacity": "on-demand", "usdPerHour": 0.15, "source": "EA agreement 2026",
                              "date": "2026-10-01"}
    return {**fields, **overrides}


def write(path: Path, body: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body if isinstance(body, str) else json.dumps(body), encoding="utf-8")
    return path


# --- where the file is ---------------------------------------------------------------------------


def test_the_default_file_is_in_the_users_config_directory(config_home: Path) -> None:
    assert default_user_file() == config_home / "spotkube" / "prices.json"
    assert user_file_path() == default_user_file()


def test_without_a_user_file_the_prices_are_the_bundled_ones() -> None:
    table = price_table()

    assert table == BUNDLED
    assert table.user_file is None


def test_the_default_file_is_used_when_it_exists() -> None:
    path = write(default_user_file(), {"rows": [row()]})

    table = price_table()

    assert table.user_file == path
    assert table.find("azure", "eastus", "Standard_D4s_v3", "machine", "on-demand").usd_per_hour == Decimal("0.15")


def test_an_explicit_file_beats_the_environment_which_beats_the_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    write(default_user_file(), {"rows": [row(usdPerHour=0.11)]})
    named = write(tmp_path / "env.json", {"rows": [row(usdPerHour=0.12)]})
    given = write(tmp_path / "given.json", {"rows": [row(usdPerHour=0.13)]})
    monkeypatch.setenv(PRICES_ENV, str(named))

    def on_demand(table: Any) -> Decimal:
        return table.find("azure", "eastus", "Standard_D4s_v3", "machine", "on-demand").usd_per_hour

    assert on_demand(price_table(given)) == Decimal("0.13")
    assert on_demand(price_table()) == Decimal("0.12")
    assert user_file_path() == named
    monkeypatch.delenv(PRICES_ENV)
    assert on_demand(price_table()) == Decimal("0.11")


def test_a_file_the_user_names_must_exist(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    missing = tmp_path / "nowhere" / "prices.json"
    with pytest.raises(PriceFileError, match=rf"{missing}: no such price file; a price file is a JSON object"):
        price_table(missing)
    monkeypatch.setenv(PRICES_ENV, str(missing))
    with pytest.raises(PriceFileError, match=rf"{missing}: no such price file \(named by SPOTKUBE_PRICES\)"):
        price_table()


# --- merging -------------------------------------------------------------------------------------


def test_user_rows_replace_bundled_rows_of_the_same_key_and_add_new_ones(tmp_path: Path) -> None:
    path = write(tmp_path / "prices.json", {"rows": [
        row(),
        row(region="uksouth", sku="Standard_NC4as_T4_v3", capacity="spot", usdPerHour=0.07),
    ]})

    table = price_table(path)

    negotiated = hourly_price("azure", "eastus", "Standard_D4s_v3", "on-demand", table=table)
    added = hourly_price("azure", "uksouth", "Standard_NC4as_T4_v3", "spot", table=table)
    untouched = hourly_price("azure", "eastus", "Standard_D4s_v3", "spot", table=table)
    assert negotiated is not None and added is not None and untouched is not None
    assert (negotiated.usd_per_hour, negotiated.source, negotiated.origin) == (
        Decimal("0.15"), "EA agreement 2026", str(path))
    assert (added.usd_per_hour, added.origin) == (Decimal("0.07"), str(path))
    assert untouched == hourly_price("azure", "eastus", "Standard_D4s_v3", "spot")
    assert untouched.origin == "bundled"
    assert len(table.rows) == len(BUNDLED.rows) + 1
    assert table.notes == BUNDLED.notes


def test_a_sum_of_rows_from_both_tables_names_both(tmp_path: Path) -> None:
    path = write(tmp_path / "prices.json", {"rows": [row(
        cloud="gcp", region="europe-west4", sku="nvidia-tesla-t4", kind="accelerator", capacity="preemptible",
        usdPerHour=0.1)]})

    price = hourly_price("gcp", "europe-west4", "n1-standard-8", "preemptible", "nvidia-tesla-t4", 1,
                         table=price_table(path))

    machine = hourly_price("gcp", "europe-west4", "n1-standard-8", "preemptible")
    assert price is not None and machine is not None and machine.origin == "bundled"
    assert price.usd_per_hour == machine.usd_per_hour + Decimal("0.1")
    assert price.origin == f"bundled + {path}"


def test_a_minimal_file_takes_its_date_from_its_newest_row(tmp_path: Path) -> None:
    path = write(tmp_path / "prices.json", {"rows": [row(date="2027-01-05")]})

    assert price_table(path).date.isoformat() == "2027-01-05"


def test_the_plan_prices_with_the_user_file_by_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(tmp_path / "prices.json", {"rows": [row(sku="Standard_NC24ads_A100_v4", capacity="spot",
                                                         usdPerHour=0.4)]})
    monkeypatch.setenv(PRICES_ENV, str(path))
    plan = plan_platform(parse_spec({"cloud": "aks", "environment": "dev", "region": "eastus",
                                     "gpuPools": [{"name": "a100spot", "machine": "Standard_NC24ads_A100_v4"}]},
                                    "test"))

    report = price_plan(plan, hours={"a100spot": Decimal(100)})

    pool = next(p for p in report.to_json()["pools"] if p["pool"] == "a100spot")
    assert report.user_file == str(path)
    assert report.to_json()["userPriceFile"] == str(path)
    assert (pool["usdPerHour"], pool["priceFrom"], pool["priceSource"]) == (0.4, str(path), "EA agreement 2026")
    assert pool["onDemandPriceFrom"] == "bundled"
    assert pool["scenario"] == 42.0  # 100 h x 1.05 x $0.40


# --- refusals ------------------------------------------------------------------------------------

BAD_FILES = [
    ("{not json", ["not JSON (line 1, column 2", 'a price file is a JSON object {"rows": [...]}']),
    ({"prices": []}, ['no "rows" list']),
    ({"rows": [], "discount": 0.2}, ["unknown key 'discount'"]),
    ({"rows": [row(capacity="reserved")]},
     ["rows[0] (azure eastus Standard_D4s_v3 machine reserved): capacity: Input should be 'spot', 'preemptible', "
      "'flex-start' or 'on-demand'", "usdPerHour (USD per node-hour, above 0)"]),
    ({"rows": [row(), row(usdPerHour=0)]},
     ["rows[1] (azure eastus Standard_D4s_v3 machine on-demand): usdPerHour: Input should be greater than 0"]),
    ({"rows": [row(capacity="preemptible")]}, ["rows[0] (azure eastus Standard_D4s_v3 machine preemptible): "
                                               "Azure has no preemptible capacity"]),
    ({"rows": [{"cloud": "azure", "usdPerHour": 1}]}, ["rows[0] (azure): region: Field required",
                                                       "rows[0] (azure): source: Field required"]),
    ({"rows": [row(), row()]}, ["two prices for azure eastus Standard_D4s_v3 machine on-demand"]),
    ({"currency": "EUR", "rows": [row()]}, ["currency: Input should be 'USD'"]),
    ({"date": "2026-01-01", "rows": [row()]}, ["row azure eastus Standard_D4s_v3 machine on-demand is dated "
                                               "2026-10-01, after the table (2026-01-01)"]),
]


@pytest.mark.parametrize(("body", "messages"), BAD_FILES)
def test_a_bad_file_is_one_error_naming_the_file_the_row_and_what_is_accepted(
    tmp_path: Path, body: Any, messages: list[str],
) -> None:
    path = write(tmp_path / "prices.json", body)

    with pytest.raises(PriceFileError) as caught:
        price_table(path)

    text = str(caught.value)
    assert text and all(line.startswith(f"{path}: ") for line in text.splitlines()), text
    for message in messages:
        assert message in text


def test_a_bad_default_file_is_refused_too() -> None:
    path = write(default_user_file(), {"rows": [row(usdPerHour=-1)]})

    with pytest.raises(PriceFileError, match=rf"{path}: rows\[0\] .*greater than 0"):
        price_table()


def test_a_folder_is_not_a_price_file() -> None:
    default_user_file().mkdir(parents=True)

    with pytest.raises(PriceFileError, match="is not a file"):
        price_table()
