"""What a stack costs a month besides its nodes: the cluster fee, NAT, public IPs, load balancers, disks.

Each cloud reads them from what its program registered (`clouds/<cloud>/fixed_costs.py`) as `FixedItem`s,
priced here from the cloud's dated, sourced rows (`clouds/<cloud>/fixed_prices.json`). An item without a
row is named as unpriced, never $0.00; one that costs nothing by its nature is a $0.00 line that says why.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Iterable
from decimal import Decimal
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from spotkube.platform.cost.model import HOURS_PER_MONTH, to_cents
from spotkube.platform.records import record

#: How a row's price is counted: per hour the resource exists, per month, or per GiB a month.
Per = Literal["hour", "month", "GiB-month"]
#: A row that holds in every region of the cloud (the source lists one price for all of them).
EVERY_REGION = "*"


class FixedPriceRow(BaseModel):
    """One sourced price of a fixed-cost item, in one region or in all of them."""

    # Built when first used, inside the table's validator (the plan never validates a row alone).
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, defer_build=True)

    item: str = Field(min_length=1)
    region: str = Field(min_length=1)
    usd: Decimal = Field(ge=0)
    per: Per
    source: str = Field(min_length=1)
    date: datetime.date


class FixedPriceTable(BaseModel):
    """A cloud's fixed-cost prices: rows by item and region, each with its source and date."""

    # Built when first used, like every model here: only a plan that costs the stack reads the table.
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    cloud: str
    rows: tuple[FixedPriceRow, ...]

    def find(self, item: str, region: str) -> FixedPriceRow | None:
        """The row for `item` in `region`, else the row that holds in every region, else None."""
        rows = [r for r in self.rows if r.item == item]
        return (next((r for r in rows if r.region == region), None)
                or next((r for r in rows if r.region == EVERY_REGION), None))


def parse_fixed_prices(text: str) -> FixedPriceTable:
    """A bundled fixed-price file; a malformed one is a packaging bug, so it raises."""
    return FixedPriceTable.model_validate(json.loads(text))


@record
class FixedItem:
    """Something a registered resource makes the cloud bill whether or not a step runs.

    `price_key` names the table row that prices one unit; `quantity` counts the units (resources,
    nodes, GiB). None as `price_key` means the item costs nothing of its own, and `note` says why.
    """

    what: str
    resource: str
    price_key: str | None
    quantity: Decimal
    note: str | None = None


@record
class FixedLine:
    """A fixed item with its price: the row found for it (None: unpriced) and its monthly cost."""

    item: FixedItem
    row: FixedPriceRow | None
    region: str

    @property
    def priced(self) -> bool:
        return self.item.price_key is None or self.row is not None

    @property
    def monthly_usd(self) -> Decimal | None:
        """USD a month, to the cent; None when no row prices it."""
        if self.item.price_key is None:
            return Decimal("0.00")
        if self.row is None:
            return None
        hours = Decimal(HOURS_PER_MONTH) if self.row.per == "hour" else Decimal(1)
        return to_cents(self.item.quantity * self.row.usd * hours)

    def unpriced_text(self) -> str:
        """`OS disks of pool system (2 node(s) × 128 GiB Premium SSD P10): no managed-disk:P10 price in uksouth`."""
        return f"{self.item.what}: no {self.item.price_key} price in {self.region}"

    def to_json(self) -> dict[str, Any]:
        monthly = self.monthly_usd
        return {
            "item": self.item.what,
            "resource": self.item.resource,
            "priceKey": self.item.price_key,
            "quantity": float(self.item.quantity),
            "priced": self.priced,
            "usd": float(self.row.usd) if self.row else None,
            "per": self.row.per if self.row else None,
            "monthly": None if monthly is None else float(monthly),
            "source": self.row.source if self.row else None,
            "date": self.row.date.isoformat() if self.row else None,
            "note": self.item.note,
        }


@record
class FixedCosts:
    """Every fixed line of a stack; their total is known only when every line is priced."""

    lines: tuple[FixedLine, ...]

    @property
    def unpriced(self) -> list[FixedLine]:
        return [line for line in self.lines if not line.priced]

    @property
    def total_usd(self) -> Decimal | None:
        if self.unpriced:
            return None
        return sum((line.monthly_usd or Decimal(0) for line in self.lines), Decimal("0.00"))

    def to_json(self) -> dict[str, Any]:
        total = self.total_usd
        return {"lines": [line.to_json() for line in self.lines],
                "total": None if total is None else float(total),
                "unpriced": [line.unpriced_text() for line in self.unpriced]}


def price_fixed(items: Iterable[FixedItem], region: str, table: FixedPriceTable) -> FixedCosts:
    """Each item with the table's row for it in `region`, by resource and item: the program registers
    resources in no set order, and the plan's JSON is byte-stable."""
    ordered = sorted(items, key=lambda item: (item.resource, item.what))
    return FixedCosts(tuple(FixedLine(item, table.find(item.price_key, region) if item.price_key else None, region)
                            for item in ordered))

