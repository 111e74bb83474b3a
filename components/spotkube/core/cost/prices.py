"""The bundled price table: loading, validating, looking up, and merging refreshed rows.

Why a bundled table: a plan must show what a stack costs without credentials, network or a cloud
account, and the same inputs must give the same figures in CI. Every row says where its number
came from and on which day, because spot prices move and a stale figure has to look stale.

Rows are keyed by (cloud, region, sku, kind, capacity), matched exactly: Azure ARM names are
case-sensitive in the Retail Prices API, so `Standard_D4s_v3` and `standard_d4s_v3` are different
keys here too rather than silently the same.
"""

from __future__ import annotations

import datetime
import functools
import json
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from spotkube.core.cost.model import Capacity

Cloud = Literal["azure", "gcp"]
Kind = Literal["machine", "accelerator"]

_BUNDLED_NAME = "prices.json"

#: GCP machine families that come with their GPUs and are priced with them included.
_GCP_GPU_BUNDLED_PREFIXES = ("a2-", "a3-", "a4-", "g2-")
#: The only GCP family that takes GPUs as separately billed accelerators.
_GCP_GPU_ATTACHED_PREFIX = "n1-"


class PriceRow(BaseModel):
    """One published hourly price: a machine (or a GPU) in a region at one capacity."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    cloud: Cloud
    region: str = Field(pattern=r"^[a-z][a-z0-9-]*[a-z0-9]$")
    sku: str = Field(min_length=1)
    kind: Kind
    capacity: Capacity
    usd_per_hour: Decimal = Field(alias="usdPerHour", gt=0)
    source: str = Field(min_length=1)
    date: datetime.date

    @model_validator(mode="after")
    def _fits_the_cloud(self) -> PriceRow:
        """Refuse rows that cannot exist, so a typo in the table fails the load, not the plan."""
        if self.cloud == "azure":
            if self.kind != "machine":
                raise ValueError("Azure prices whole VM sizes; it has no separate GPU rows")
            if self.capacity == "preemptible":
                raise ValueError("Azure has no preemptible capacity (it is called spot there)")
            if not self.sku.startswith("Standard_"):
                raise ValueError(f"Azure sku must be an ARM size like Standard_D4s_v3: {self.sku}")
        elif self.kind == "accelerator" and not self.sku.startswith("nvidia-"):
            raise ValueError(f"GCP accelerator must be a type like nvidia-tesla-t4: {self.sku}")
        return self

    @property
    def key(self) -> tuple[str, str, str, str, str]:
        """The identity of a row: two rows with the same key would be two prices for one thing."""
        return (self.cloud, self.region, self.sku, self.kind, self.capacity)


class PriceTable(BaseModel):
    """The whole table: USD rows, the day it was put together, and notes on what it covers."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    currency: Literal["USD"]
    date: datetime.date
    notes: tuple[str, ...]
    rows: tuple[PriceRow, ...]

    @model_validator(mode="after")
    def _consistent(self) -> PriceTable:
        """One price per key, and no row newer than the table that contains it."""
        seen: set[tuple[str, str, str, str, str]] = set()
        for row in self.rows:
            if row.key in seen:
                raise ValueError(f"two prices for {' '.join(row.key)}")
            seen.add(row.key)
            if row.date > self.date:
                raise ValueError(
                    f"row {' '.join(row.key)} is dated {row.date}, after the table ({self.date})"
                )
        return self

    def find(self, cloud: str, region: str, sku: str, kind: str, capacity: str) -> PriceRow | None:
        """The row with exactly this key, or None."""
        wanted = (cloud, region, sku, kind, capacity)
        return next((row for row in self.rows if row.key == wanted), None)


@dataclass(frozen=True)
class Price:
    """An hourly price ready to use, with where it came from and how old it is.

    When a price adds up several rows (an N1 machine plus its GPUs), `source` names all of them and
    `date` is the oldest, so the figure is never presented as fresher than its stalest part.
    """

    usd_per_hour: Decimal
    source: str
    date: datetime.date


def parse_table(text: str) -> PriceTable:
    """Validate a price table from its JSON text, keeping every number exact as a Decimal."""
    data: Any = json.loads(text, parse_float=Decimal)
    return PriceTable.model_validate(data)


@functools.lru_cache(maxsize=1)
def _bundled_table() -> PriceTable:
    return parse_table(resources.files(__package__).joinpath(_BUNDLED_NAME).read_text("utf-8"))


def load_table(path: Path | None = None) -> PriceTable:
    """The table at `path`, or the one shipped inside the package (read once, then cached)."""
    if path is None:
        return _bundled_table()
    return parse_table(path.read_text(encoding="utf-8"))


def bundled_table_path() -> Path:
    """Where the shipped table lives on disk, for writing refreshed rows back in a checkout.

    Only meaningful for a source checkout or an editable install, where the package is plain files.
    """
    return Path(str(resources.files(__package__).joinpath(_BUNDLED_NAME)))


def table_date(table: PriceTable | None = None) -> datetime.date:
    """The day the table was put together; each row's own date says when its price was seen."""
    return (table or load_table()).date


def _gpus_billed_separately(cloud: str, machine: str) -> bool:
    """Whether GPUs on this machine are extra accelerator charges rather than part of its price."""
    if cloud != "gcp":
        return False
    if machine.startswith(_GCP_GPU_ATTACHED_PREFIX):
        return True
    if machine.startswith(_GCP_GPU_BUNDLED_PREFIXES):
        return False
    raise ValueError(
        f"GCP attaches GPUs only to N1 machine types; {machine} cannot take a GPU "
        "(use n1-*, or a GPU machine type such as g2-standard-8 or a2-highgpu-1g)"
    )


def hourly_price(
    cloud: str,
    region: str,
    machine: str,
    capacity: str,
    gpu_type: str | None = None,
    gpu_count: int = 0,
    *,
    table: PriceTable | None = None,
) -> Price | None:
    """The hourly price of one node, GPUs included, or None when the table has no such price.

    Machines that come with their GPUs (Azure GPU sizes, GCP a2/a3/g2) are priced whole, so the
    GPU arguments add nothing for them. GCP N1 machines pay per attached GPU, so for those the
    accelerator row times `gpu_count` is added; if that row is missing the node has no price.
    """
    if isinstance(gpu_count, bool) or not isinstance(gpu_count, int) or gpu_count < 0:
        raise ValueError(f"gpu_count must be a whole number of GPUs, got {gpu_count!r}")
    if gpu_count and gpu_type is None:
        raise ValueError(f"gpu_count is {gpu_count} but no gpu_type says which GPU")
    table = table or load_table()
    row = table.find(cloud, region, machine, "machine", capacity)
    if row is None:
        return None
    if gpu_type is None or gpu_count == 0 or not _gpus_billed_separately(cloud, machine):
        return Price(row.usd_per_hour, row.source, row.date)
    gpu = table.find(cloud, region, gpu_type, "accelerator", capacity)
    if gpu is None:
        return None
    return Price(
        usd_per_hour=row.usd_per_hour + gpu.usd_per_hour * gpu_count,
        source=f"{machine}: {row.source}; {gpu_count} x {gpu_type}: {gpu.source}",
        date=min(row.date, gpu.date),
    )


def merge_rows(table: PriceTable, fresh: Iterable[PriceRow], *, date: datetime.date) -> PriceTable:
    """A copy of `table` with `fresh` rows replacing rows of the same key and adding new ones.

    Rows the refresh did not return are kept as they were, with their old dates, so a partial
    refresh (one region, one SKU) never drops prices it did not look at. `date` becomes the
    table's date when it is newer.
    """
    merged = {row.key: row for row in table.rows}
    merged.update((row.key, row) for row in fresh)
    return PriceTable(
        currency=table.currency,
        date=max(table.date, date),
        notes=table.notes,
        rows=tuple(sorted(merged.values(), key=lambda row: row.key)),
    )


def _json_value(value: Any) -> Any:
    """Write Decimals as JSON numbers and dates as ISO text, the layout of the bundled file.

    A float holds every price in the table exactly enough: none has more than 10 significant
    digits, and `float` prints the shortest text that reads back to the same value.
    """
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, datetime.date):
        return value.isoformat()
    raise TypeError(f"cannot write {type(value).__name__} to the price table")


def write_table(table: PriceTable, path: Path) -> None:
    """Write `table` in the bundled file's JSON layout, ending with a newline."""
    data = table.model_dump(mode="python", by_alias=True)
    text = json.dumps(data, indent=2, ensure_ascii=False, default=_json_value)
    path.write_text(text + "\n", encoding="utf-8")
