"""Cost: the spot-vs-on-demand cost model and the bundled price table (its Azure client is a tool), and
the pricing of a platform's pools with the warnings their prices raise (`pricing`).

Pure Python with no Pulumi import, so `spotkube plan` can price a stack before touching a cloud.
"""

from spotkube.platform.cost.model import Assumptions, PoolCost, PoolUsage, StackCost, stack_cost
from spotkube.platform.cost.prices import (
    PRICES_ENV,
    PriceFileError,
    PriceTable,
    bundled_table_paths,
    default_user_file,
    merge_rows,
    user_file_path,
    write_table,
)

__all__ = [
    "PRICES_ENV",
    "Assumptions",
    "PoolCost",
    "PoolUsage",
    "PriceFileError",
    "PriceTable",
    "StackCost",
    "bundled_table_paths",
    "default_user_file",
    "merge_rows",
    "stack_cost",
    "user_file_path",
    "write_table",
]
