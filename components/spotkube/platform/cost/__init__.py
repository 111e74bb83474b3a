"""Cost: the spot-vs-on-demand cost model and the bundled price table (its Azure client is a tool), and
the pricing of a platform's pools with the warnings their prices raise (`pricing`).

Pure Python with no Pulumi import, so `spotkube plan` can price a stack before touching a cloud.
"""

from spotkube.platform.cost.model import (
    HOURS_PER_MONTH,
    Assumptions,
    PoolCost,
    PoolUsage,
    StackCost,
    pool_cost,
    stack_cost,
)
from spotkube.platform.cost.prices import (
    BUNDLED,
    PRICES_ENV,
    Price,
    PriceFileError,
    PriceRow,
    PriceTable,
    Unpriced,
    bundled_table_paths,
    default_user_file,
    hourly_price,
    load_cloud_table,
    load_table,
    load_user_table,
    merge_rows,
    price_table,
    table_date,
    user_file_path,
    write_table,
)

__all__ = [
    "BUNDLED",
    "HOURS_PER_MONTH",
    "PRICES_ENV",
    "Assumptions",
    "PoolCost",
    "PoolUsage",
    "Price",
    "PriceFileError",
    "PriceRow",
    "PriceTable",
    "StackCost",
    "Unpriced",
    "bundled_table_paths",
    "default_user_file",
    "hourly_price",
    "load_cloud_table",
    "load_table",
    "load_user_table",
    "merge_rows",
    "pool_cost",
    "price_table",
    "stack_cost",
    "table_date",
    "user_file_path",
    "write_table",
]
