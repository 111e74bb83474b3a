"""Cost: the spot-vs-on-demand cost model and the bundled price table (its Azure client is a tool).

Pure Python with no Pulumi import, so `spotkube plan` can price a stack before touching a cloud.
"""

from spotkube.core.cost.model import (
    HOURS_PER_MONTH,
    Assumptions,
    PoolCost,
    PoolUsage,
    StackCost,
    pool_cost,
    stack_cost,
)
from spotkube.core.cost.prices import (
    Price,
    PriceRow,
    PriceTable,
    bundled_table_path,
    hourly_price,
    load_table,
    merge_rows,
    table_date,
    write_table,
)

__all__ = [
    "HOURS_PER_MONTH",
    "Assumptions",
    "PoolCost",
    "PoolUsage",
    "Price",
    "PriceRow",
    "PriceTable",
    "StackCost",
    "bundled_table_path",
    "hourly_price",
    "load_table",
    "merge_rows",
    "pool_cost",
    "stack_cost",
    "table_date",
    "write_table",
]
