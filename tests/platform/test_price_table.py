"""The bundled price table: every row sourced and dated, the listed SKUs found, N1 + GPU summed.

The lookups below are the ones the shipped stacks and the articles rely on; if a refresh drops one
of them, the plan would silently lose a price, so these tests fail first.
"""

from __future__ import annotations

import datetime
import json
from decimal import Decimal
from pathlib import Path

import pytest
from pydantic import ValidationError

from spotkube.clouds import PRICING, hourly_price, load_price_table
from spotkube.platform.cost.prices import (
    Price,
    PriceRow,
    PriceTable,
    bundled_table_paths,
    load_cloud_table,
    merge_rows,
    parse_table,
    write_table,
)

TABLE = load_price_table()
TODAY = datetime.date(2026, 11, 27)


def row(**overrides: object) -> PriceRow:
    fields: dict[str, object] = {
        "cloud": "azure",
        "region": "uksouth",
        "sku": "Standard_NC4as_T4_v3",
        "kind": "machine",
        "capacity": "spot",
        "usdPerHour": Decimal("0.1"),
        "source": "test",
        "date": TODAY,
    }
    fields.update(overrides)
    return PriceRow.model_validate(fields, context=PRICING)


# --- the bundled file ----------------------------------------------------------------------------


def test_every_row_has_a_source_and_a_date_no_later_than_the_table() -> None:
    assert TABLE.currency == "USD"
    assert TABLE.rows
    for price in TABLE.rows:
        assert price.source.strip(), price.key
        assert isinstance(price.date, datetime.date), price.key
        assert price.date <= TABLE.date, price.key
        assert price.usd_per_hour > 0, price.key


def test_table_date_is_the_files_date() -> None:
    assert TABLE.date == TODAY


def test_every_row_comes_from_the_clouds_own_price_list() -> None:
    """A bundled row is the cloud's list price (read from its API, directly or through a dated copy),
    never a worked example's: the articles' UK South prices are the stack's own (`cost.prices`)."""
    own_list = {"azure": "Azure Retail Prices API", "gcp": "Cloud Billing Catalog API"}
    assert TABLE.rows, "the bundled price table's rows"
    for price in TABLE.rows:
        assert price.source.startswith(own_list[price.cloud]), price.key
        assert "article" not in price.source, price.key
    assert TABLE.find("azure", "uksouth", "Standard_D4s_v3", "machine", "spot") is None


def test_what_no_source_priced_is_listed_with_why() -> None:
    gaps = {gap.key: gap for gap in TABLE.unpriced}
    uk_t4 = gaps[("azure", "uksouth", "Standard_NC4as_T4_v3", "machine", "spot")]
    assert "no reachable dated copy holds the Azure Spot meter" in uk_t4.reason
    assert "spotkube prices refresh --cloud azure --region uksouth --sku Standard_NC4as_T4_v3" in uk_t4.reason
    # Listed as missing only while it really is.
    assert ("azure", "westeurope", "Standard_NC4as_T4_v3", "machine", "spot") not in gaps
    assert TABLE.find("azure", "uksouth", "Standard_NC4as_T4_v3", "machine", "spot") is None


def test_a_pair_listed_as_unpriced_cannot_have_a_price() -> None:
    data = json.loads(bundled_table_paths(PRICING)[0].read_text(encoding="utf-8"))
    first = data["rows"][0]
    key = {field: first[field] for field in ("cloud", "region", "sku", "kind", "capacity")}
    data["unpriced"].append({**key, "reason": "x"})
    with pytest.raises(ValidationError, match="listed as unpriced but has a price"):
        parse_table(json.dumps(data), PRICING)


def test_an_unpriced_pair_without_a_reason_is_refused() -> None:
    data = json.loads(bundled_table_paths(PRICING)[0].read_text(encoding="utf-8"))
    del data["unpriced"][0]["reason"]
    with pytest.raises(ValidationError, match="reason"):
        parse_table(json.dumps(data), PRICING)


def test_prices_from_the_bundled_table_say_so() -> None:
    price = hourly_price("gcp", "europe-west4", "n1-standard-8", "spot", "nvidia-tesla-t4", 1)

    assert price is not None
    assert price.origin == "bundled"
    assert TABLE.user_file is None


def test_numbers_are_read_exactly() -> None:
    # Read as Decimal from the JSON text, never through a binary float.
    price = hourly_price("azure", "eastus", "Standard_D4s_v3", "spot")
    assert price is not None
    assert price.usd_per_hour == Decimal("0.02112")
    assert str(price.usd_per_hour) == "0.02112"


def test_bundled_files_are_in_the_layout_write_table_produces(tmp_path: Path) -> None:
    for cloud in PRICING.values():
        out = tmp_path / f"{cloud.name}.json"
        write_table(load_cloud_table(cloud, PRICING), out)
        assert out.read_text(encoding="utf-8") == cloud.table.read_text("utf-8"), cloud.name
        assert str(cloud.table).endswith("/prices.json") and "/clouds/" in str(cloud.table)
    out = tmp_path / "prices.json"
    write_table(TABLE, out)
    assert load_price_table(out) == TABLE
    assert len(bundled_table_paths(PRICING)) == len(PRICING)


# --- lookups -------------------------------------------------------------------------------------

LISTED = [
    ("azure", "westeurope", "Standard_D4s_v3"),
    ("azure", "westeurope", "Standard_D8s_v3"),
    ("azure", "westeurope", "Standard_NC40ads_H100_v5"),
    ("azure", "westeurope", "Standard_NC4as_T4_v3"),
    ("azure", "eastus", "Standard_D4s_v3"),
    ("azure", "eastus", "Standard_NC4as_T4_v3"),
    ("azure", "eastus", "Standard_NC24ads_A100_v4"),
    ("gcp", "us-central1", "e2-standard-4"),
    ("gcp", "us-central1", "n1-standard-4"),
    ("gcp", "us-central1", "n1-standard-8"),
    ("gcp", "us-central1", "g2-standard-4"),
    ("gcp", "us-central1", "g2-standard-8"),
    ("gcp", "us-central1", "a2-highgpu-1g"),
    ("gcp", "europe-west4", "e2-standard-4"),
    ("gcp", "europe-west4", "n1-standard-8"),
    ("gcp", "europe-west4", "a2-highgpu-1g"),
    ("gcp", "europe-west4", "a2-highgpu-2g"),
    ("gcp", "europe-west4", "g2-standard-8"),
    # new-stack's GKE regions: its system/platform machine and its L4 pool.
    ("gcp", "us-east4", "e2-standard-4"),
    ("gcp", "us-east4", "g2-standard-8"),
    ("gcp", "us-east1", "e2-standard-4"),
    ("gcp", "us-east1", "g2-standard-8"),
    ("gcp", "europe-west1", "e2-standard-4"),
    ("gcp", "europe-west1", "g2-standard-8"),
]


@pytest.mark.parametrize(("cloud", "region", "sku"), LISTED)
def test_listed_machines_have_spot_below_on_demand(cloud: str, region: str, sku: str) -> None:
    on_demand = hourly_price(cloud, region, sku, "on-demand")
    spot = hourly_price(cloud, region, sku, "spot")

    assert on_demand is not None
    assert spot is not None
    assert 0 < spot.usd_per_hour < on_demand.usd_per_hour
    assert spot.source and spot.date <= TODAY


@pytest.mark.parametrize(
    ("region", "sku"), [(region, sku) for cloud, region, sku in LISTED if cloud == "gcp"]
)
def test_gcp_preemptible_is_priced_like_spot(region: str, sku: str) -> None:
    spot = hourly_price("gcp", region, sku, "spot")
    preemptible = hourly_price("gcp", region, sku, "preemptible")

    assert spot is not None
    assert preemptible is not None
    assert preemptible.usd_per_hour == spot.usd_per_hour
    assert "preemptible VMs use the same pricing model as Spot VMs" in preemptible.source


def test_azure_has_no_preemptible_price() -> None:
    assert hourly_price("azure", "uksouth", "Standard_D4s_v3", "preemptible") is None


@pytest.mark.parametrize("region", ["us-central1", "europe-west4"])
@pytest.mark.parametrize("capacity", ["on-demand", "spot", "preemptible"])
def test_t4_accelerator_rows_exist(region: str, capacity: str) -> None:
    assert TABLE.find("gcp", region, "nvidia-tesla-t4", "accelerator", capacity) is not None


def test_n1_with_t4_adds_the_machine_and_the_gpus() -> None:
    machine = TABLE.find("gcp", "us-central1", "n1-standard-8", "machine", "spot")
    gpu = TABLE.find("gcp", "us-central1", "nvidia-tesla-t4", "accelerator", "spot")
    assert machine is not None
    assert gpu is not None

    price = hourly_price("gcp", "us-central1", "n1-standard-8", "spot", "nvidia-tesla-t4", 2)

    assert price is not None
    assert price.usd_per_hour == machine.usd_per_hour + 2 * gpu.usd_per_hour
    assert price.usd_per_hour == Decimal("0.13402") + 2 * Decimal("0.14")
    # The sum is as old as its oldest part, and names both sources.
    assert price.date == min(machine.date, gpu.date)
    assert machine.source in price.source
    assert gpu.source in price.source
    assert "2 x nvidia-tesla-t4" in price.source


def test_n1_without_a_gpu_is_the_machine_alone() -> None:
    price = hourly_price("gcp", "europe-west4", "n1-standard-8", "on-demand")

    assert price is not None
    assert price.usd_per_hour == Decimal("0.418336")


def test_n1_with_an_unpriced_gpu_has_no_price() -> None:
    assert hourly_price("gcp", "us-central1", "n1-standard-8", "spot", "nvidia-tesla-v100", 1) is None


def test_gpu_machines_already_include_their_gpus() -> None:
    bare = hourly_price("gcp", "us-central1", "g2-standard-8", "spot")
    with_gpu = hourly_price("gcp", "us-central1", "g2-standard-8", "spot", "nvidia-l4", 1)
    azure = hourly_price("azure", "eastus", "Standard_NC4as_T4_v3", "spot", "nvidia-tesla-t4", 1)

    assert bare is not None
    assert with_gpu == bare
    assert azure is not None
    assert azure.usd_per_hour == Decimal("0.062699")


def test_a_gpu_on_a_machine_that_cannot_take_one_is_refused() -> None:
    with pytest.raises(ValueError, match="only to N1"):
        hourly_price("gcp", "us-central1", "e2-standard-4", "spot", "nvidia-tesla-t4", 1)


@pytest.mark.parametrize(
    ("gpu_type", "gpu_count", "message"),
    [(None, 1, "no gpu_type"), ("nvidia-tesla-t4", -1, "whole number"), ("nvidia-tesla-t4", True, "whole")],
)
def test_bad_gpu_arguments_are_refused(gpu_type: str | None, gpu_count: int, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        hourly_price("gcp", "us-central1", "n1-standard-4", "spot", gpu_type, gpu_count)


@pytest.mark.parametrize(
    ("cloud", "region", "sku", "capacity"),
    [
        ("azure", "uksouth", "Standard_D999s_v9", "spot"),
        ("azure", "mars", "Standard_D4s_v3", "spot"),
        ("azure", "uksouth", "standard_d4s_v3", "spot"),  # ARM names are case-sensitive
        ("gcp", "us-central1", "e2-standard-999", "on-demand"),
        ("aws", "us-east-1", "m5.large", "on-demand"),
    ],
)
def test_unknown_keys_have_no_price(cloud: str, region: str, sku: str, capacity: str) -> None:
    assert hourly_price(cloud, region, sku, capacity) is None


# --- validation ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"kind": "accelerator", "sku": "nvidia-tesla-t4"}, "no separate GPU rows"),
        ({"capacity": "preemptible"}, "no preemptible capacity"),
        ({"sku": "D4s_v3"}, "ARM size"),
        ({"cloud": "gcp", "region": "us-central1", "kind": "accelerator", "sku": "t4"}, "nvidia-"),
        ({"usdPerHour": Decimal(0)}, "greater than 0"),
        ({"source": ""}, "at least 1 character"),
        ({"region": "UK South"}, "pattern"),
        ({"extra": 1}, "Extra inputs"),
    ],
)
def test_impossible_rows_are_refused(overrides: dict[str, object], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        row(**overrides)


def test_a_table_with_two_prices_for_one_key_is_refused() -> None:
    with pytest.raises(ValidationError, match="two prices for azure uksouth"):
        PriceTable(currency="USD", date=TODAY, notes=(), rows=(row(), row()))


def test_a_row_newer_than_its_table_is_refused() -> None:
    with pytest.raises(ValidationError, match="after the table"):
        PriceTable(
            currency="USD", date=TODAY, notes=(), rows=(row(date=TODAY + datetime.timedelta(1)),)
        )


def test_parse_table_reports_a_missing_source() -> None:
    data = json.loads(bundled_table_paths(PRICING)[0].read_text(encoding="utf-8"))
    del data["rows"][0]["source"]

    with pytest.raises(ValidationError, match="source"):
        parse_table(json.dumps(data), PRICING)


# --- merging refreshed rows ----------------------------------------------------------------------


def test_merge_replaces_same_keys_adds_new_ones_and_keeps_the_rest(tmp_path: Path) -> None:
    later = TODAY + datetime.timedelta(days=3)
    fresh_spot = row(region="eastus", sku="Standard_D4s_v3", usdPerHour=Decimal("0.0501"), date=later)
    new_gpu = row(sku="Standard_NC4as_T4_v3", date=later)  # uksouth spot: no bundled row

    merged = merge_rows(TABLE, [fresh_spot, new_gpu], date=later)

    assert merged.date == later
    assert len(merged.rows) == len(TABLE.rows) + 1
    spot = hourly_price("azure", "eastus", "Standard_D4s_v3", "spot", table=merged)
    untouched = hourly_price("azure", "eastus", "Standard_D4s_v3", "on-demand", table=merged)
    assert spot == Price(Decimal("0.0501"), "test", later)
    assert untouched == hourly_price("azure", "eastus", "Standard_D4s_v3", "on-demand")
    assert [r.key for r in merged.rows] == sorted(r.key for r in merged.rows)
    assert merged.notes == TABLE.notes

    out = tmp_path / "prices.json"
    write_table(merged, out)
    assert load_price_table(out) == merged
    assert '"usdPerHour": 0.0501' in out.read_text(encoding="utf-8")


def test_merge_never_moves_the_table_date_back() -> None:
    earlier = TODAY - datetime.timedelta(days=30)

    merged = merge_rows(TABLE, [row(date=earlier)], date=earlier)

    assert merged.date == TODAY
