"""What `spotkube prices refresh` asks a cloud's price list for, and what it gets back.

Each cloud reads its own price list through a `PriceSource` on its profile; the CLI only collects the
targets and merges the rows into the user's price file, so the neutral code never learns how either API
works. `FetchSettings` are the numbers a user may tune for a slow network.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Sequence

from spotkube.platform.cost.prices import Kind, PriceRow
from spotkube.platform.input_messages import timeout_problem
from spotkube.platform.records import record

#: Seconds to wait for a connection and for each answer.
DEFAULT_TIMEOUT_S = 30.0
#: Attempts after the first, for 429 and 5xx answers and dropped connections.
DEFAULT_RETRIES = 5
#: Exponential backoff between attempts: factor × 2^(attempt - 1) seconds, at most `DEFAULT_BACKOFF_MAX_S`.
DEFAULT_BACKOFF_FACTOR = 1.0
DEFAULT_BACKOFF_MAX_S = 60.0
#: The longest Retry-After the client honours; a server asking for more gets this instead.
DEFAULT_RETRY_AFTER_MAX_S = 120


@record
class FetchSettings:
    """How hard a refresh tries: per-request timeout, retries with backoff, and the Retry-After cap."""

    timeout_s: float = DEFAULT_TIMEOUT_S
    retries: int = DEFAULT_RETRIES
    backoff_factor: float = DEFAULT_BACKOFF_FACTOR
    backoff_max_s: float = DEFAULT_BACKOFF_MAX_S
    retry_after_max_s: int = DEFAULT_RETRY_AFTER_MAX_S

    def __post_init__(self) -> None:
        if (problem := timeout_problem(self.timeout_s)) is not None:
            raise ValueError(problem)
        if self.retries < 0 or self.backoff_factor < 0 or self.backoff_max_s < 0 or self.retry_after_max_s < 0:
            raise ValueError("retries, backoff and the Retry-After cap can't be negative")


@record
class PriceTarget:
    """One thing to price: a machine in a region, with the GPUs a GKE N1 machine carries on top, or
    (`kind` accelerator) one such GPU on its own, as a price table row names it."""

    region: str
    machine: str
    gpu_type: str | None = None
    gpu_count: int = 0
    kind: Kind = "machine"


@record
class Fetched:
    """What a price list answered: the rows found, and each target it has no price for, in words."""

    rows: tuple[PriceRow, ...]
    missing: tuple[str, ...] = ()


#: (targets, settings, endpoint or None for the real API, today, the credential or None) -> rows.
Fetcher = Callable[[Sequence[PriceTarget], FetchSettings, "str | None", datetime.date, "str | None"], Fetched]


@record
class PriceSource:
    """A cloud's price list as `spotkube prices refresh` uses it."""

    #: What the list is called, for messages and the PR comment: "Azure Retail Prices API".
    name: str
    #: The API's address; tests point the fetcher elsewhere.
    endpoint: str
    fetch: Fetcher
    #: The environment variable holding the API key, when the list needs one; its value is never printed.
    credential_env: str | None = None
    #: How to get that credential, for the message when it is missing.
    credential_hint: str = ""
    #: The region and machine names the list takes, for the messages.
    examples: str = ""
