"""How the `spotkube` commands write to a terminal: width, colour, progress and a closed pipe.

Piped output is `PIPED_WIDTH` wide because rich's own fallback of 80 folds the plan's tables; plain
consoles have no colour system because rich's `no_color` keeps bold, dim and italic; `fit_columns`
exists because rich's own shrinking cuts the widest column mid-word, even where others could wrap.
"""

from __future__ import annotations

import logging
import os
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import IO, TypeVar

from rich.console import Console
from rich.table import Table
from rich.text import Text

PIPED_WIDTH = 120

T = TypeVar("T")


class _Settings:
    plain = False


settings = _Settings()


def wants_plain(flag: bool = False, environ: Mapping[str, str] | None = None) -> bool:
    """`--no-color`, or NO_COLOR set to anything but the empty string (https://no-color.org)."""
    environ = os.environ if environ is None else environ
    return flag or environ.get("NO_COLOR", "") != ""


#: The HTTP library under the clouds' SDKs (a line per retry); each cloud names its SDKs' own loggers.
HTTP_LOGGER = "urllib3"


def quiet_sdk_logs(sdk_loggers: Sequence[str]) -> None:
    """A handler that drops the SDKs' records (they still propagate to an embedding program's): their
    failures reach the user as spotkube's own errors, and without a handler Python's last resort prints
    every warning to stderr, which `preview.yml` would paste into a comment."""
    for name in (*sdk_loggers, HTTP_LOGGER):
        logging.getLogger(name).addHandler(logging.NullHandler())


def configure(*, plain: bool) -> None:
    """Remember the run's choice, and make typer's help and error panels follow it. Loading them costs
    a tenth of a second, so they are loaded only for plain output, never on the way to a plan."""
    settings.plain = plain
    if plain or "typer.rich_utils" in sys.modules:
        import typer.rich_utils

        typer.rich_utils.COLOR_SYSTEM = None if plain else "auto"


def _isatty(stream: IO[str]) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def output_width(stream: IO[str], environ: Mapping[str, str] | None = None) -> int | None:
    """COLUMNS if set; None (rich asks the terminal) on a terminal; else PIPED_WIDTH."""
    environ = os.environ if environ is None else environ
    columns = environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    return None if _isatty(stream) else PIPED_WIDTH


class PipeClosed(Exception):
    """The reader of stdout went away (`spotkube plan --all | head -1`); the command exits 0."""


class PipeAwareConsole(Console):
    """Reports a closed pipe to the entry point instead of exiting 1 itself."""

    def on_broken_pipe(self) -> None:
        self.quiet = True
        raise PipeClosed from None


def console(*, stderr: bool = False, plain: bool | None = None) -> Console:
    plain = settings.plain if plain is None else plain
    stream = sys.stderr if stderr else sys.stdout
    return PipeAwareConsole(
        stderr=stderr,
        width=output_width(stream),
        color_system=None if plain else "auto",
        no_color=plain or None,
        highlight=not plain,
        emoji=False,  # user text such as `spotkube:cloud:` is never read as an emoji code
    )


def fit_columns(table: Table, width: int, *, wrap: bool = True, squeeze: bool = False) -> bool:
    """Give each column of `table` a width so the table fits `width` and wraps only at spaces.

    Each column gets its longest word; the columns with longer lines share the rest equally, so short
    columns stay on one line. Returns False when the longest words (with `wrap=False`, lines) don't fit
    or a cell is not text; then, with `squeeze`, columns are `_narrowed`, else the table is left to rich.
    Assumes rich's default box and padding.
    """
    texts: list[list[str]] = []
    for column in table.columns:
        cells = [column.header, *column.cells]
        if not all(isinstance(cell, str | Text) for cell in cells):
            return False
        texts.append([cell.plain if isinstance(cell, Text) else cell for cell in cells])
    words = [max((_longest_word(line) for cell in cells for line in cell.splitlines()), default=1) for cells in texts]
    lines = [max((len(line) for cell in cells for line in cell.splitlines()), default=1) for cells in texts]
    lines = [
        max(word, line if column.max_width is None else min(line, column.max_width))
        for word, line, column in zip(words, lines, table.columns, strict=True)
    ]
    if not wrap:
        words = lines
    budget = width - (3 * len(texts) + 1)
    spare = budget - sum(words)
    if spare < 0:
        if squeeze:
            for column, narrowed in zip(table.columns, _narrowed(words, budget), strict=True):
                column.width = narrowed
                column.overflow = "ellipsis"
        return False
    lacking = [line - word for word, line in zip(words, lines, strict=True)]
    extra = [0] * len(lacking)
    waiting = sorted(range(len(lacking)), key=lacking.__getitem__)
    while waiting:  # each waiting column may take an equal share; the ones that need less take less
        share = spare // len(waiting)
        if lacking[waiting[0]] > share:
            for index in waiting:
                extra[index] = share
            break
        index = waiting.pop(0)
        extra[index] = lacking[index]
        spare -= lacking[index]
    for column, word, more in zip(table.columns, words, extra, strict=True):
        column.width = word + more
    return True


def _longest_word(line: str) -> int:
    """Indentation counts with the first word: a tree's indented name can't wrap at its leading spaces."""
    indent = len(line) - len(line.lstrip(" "))
    return max([indent + len(w) if i == 0 else len(w) for i, w in enumerate(line.split())], default=1)


MIN_SQUEEZED = 8


def _narrowed(widths: Sequence[int], budget: int) -> list[int]:
    """`widths` cut down to `budget`, widest first (down to `MIN_SQUEEZED`), so that short words (names,
    types) stay whole and only the longest ones (URLs) lose their ends."""
    out = list(widths)
    for index in sorted(range(len(out)), key=lambda i: -out[i]):
        if sum(out) <= budget:
            break
        out[index] = max(MIN_SQUEEZED, budget - (sum(out) - out[index]))
    return out


def stdout_gone() -> None:
    """Point stdout at /dev/null, so the interpreter's last flush can't fail on it."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, ValueError, OSError):  # not a real file (a test runner's buffer)
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)


def progress(items: Sequence[T], *, verb: str = "planning", stderr: Console | None = None) -> Iterator[T]:
    """Yield each item, telling a person at a terminal (stderr) which one runs and how long it took;
    silent when stderr is not a terminal, so logs and scripts get only the result."""
    out = stderr if stderr is not None else console(stderr=True)
    total = len(items)
    if not out.is_terminal or total == 0:
        yield from items
        return
    done_verb = verb[:-3] + "ed" if verb.endswith("ing") else verb
    for index, item in enumerate(items, start=1):
        label = f"{item} ({index}/{total})"
        started = time.perf_counter()
        if settings.plain or out.no_color or out.is_dumb_terminal:
            out.print(f"{verb} {label} ...", highlight=False, markup=False)
            yield item
        else:
            with out.status(f"{verb} {label}", spinner="dots"):
                yield item
        out.print(
            f"{done_verb} {label} in {time.perf_counter() - started:.1f} s", highlight=False, markup=False, style="dim"
        )
