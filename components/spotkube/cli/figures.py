"""Figures and lines for people, so that every view rounds prices the tables hold to ten digits
(`0.13402284`) and wraps long lines the same way; only the JSON keeps full precision.
"""

from __future__ import annotations

import os
import textwrap
from collections.abc import Mapping
from decimal import ROUND_HALF_UP, Decimal

#: The width plain lines wrap at when the output is not a terminal and COLUMNS is not set.
PLAIN_WIDTH = 100
_CENT = Decimal("0.01")
_TENTH_CENT = Decimal("0.001")


def unit_price(usd: Decimal) -> str:
    """A price per hour or per month: to the cent ($0.13, $3.67, $1,101.90); a price under ten cents to
    a tenth of a cent ($0.049, $0.005), so that it never reads as a cent it isn't."""
    if Decimal(0) < usd < Decimal("0.10"):
        shown = usd.quantize(_TENTH_CENT, ROUND_HALF_UP)
        return f"${shown}" if shown else "under $0.001"
    return f"${usd.quantize(_CENT, ROUND_HALF_UP):,}"


def percent(value: float | Decimal) -> str:
    """A share as a whole percentage: 10.6 -> `11 %`; a share above 0 but under 0.5 % is `under 1 %`."""
    whole = Decimal(str(value)).quantize(Decimal(1), ROUND_HALF_UP)
    return "under 1 %" if whole == 0 and Decimal(str(value)) > 0 else f"{whole} %"


def duration(seconds: float) -> str:
    """Seconds as a person reads them: `45 s`, `12 min`, `4 h 23 min`."""
    minutes = int(Decimal(str(seconds / 60)).quantize(Decimal(1), ROUND_HALF_UP))
    if seconds < 60:
        return f"{round(seconds)} s"
    if minutes < 60:
        return f"{minutes} min"
    hours, rest = divmod(minutes, 60)
    return f"{hours} h {rest} min" if rest else f"{hours} h"


def plain_width(terminal_width: int, on_terminal: bool, environ: Mapping[str, str] | None = None) -> int:
    """Where plain lines wrap: COLUMNS when set, else the terminal's width, else `PLAIN_WIDTH`."""
    environ = os.environ if environ is None else environ
    columns = environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    return terminal_width if on_terminal else PLAIN_WIDTH


def wrapped(line: str, width: int) -> str:
    """`line` wrapped at spaces to `width`, continuation lines indented by two; a word longer than the
    width (a pinned URL) is split at the width, so that no line is ever wider."""
    return textwrap.fill(line, width=max(width, 20), subsequent_indent="  ", break_on_hyphens=False)
