"""How the `spotkube` commands write to a terminal: width, colour, progress and a closed pipe.

- **Width.** `COLUMNS` when it is set; else the terminal's width; else, when the output is a pipe
  or a file, `PIPED_WIDTH` (120), because rich's own fallback of 80 folds the plan's tables.
- **Colour.** `--no-color`, or a non-empty `NO_COLOR` (https://no-color.org), gives plain text: no
  escape sequence at all. rich's own `no_color` drops colours but keeps bold, dim and italic, so
  plain consoles have no colour system instead, which renders no style.
- **Columns.** `fit_columns` sizes a table's columns so that no word is cut when the longest words
  fit: rich's own shrinking cuts the widest column first, mid-word (a taint such as
  `kubernetes.azure.com/scalesetpriority=spot:NoSchedule`), even where other columns could wrap at
  a space.
- **Progress.** `progress()` tells a person at a terminal what a slow loop is doing, on stderr, and
  stays silent when stderr is not a terminal, so logs and scripts get only the result.
- **A closed pipe** (`spotkube plan --all | head -1`) ends the command quietly with exit code 0:
  `PipeAwareConsole` and the CLI's entry point turn it into `PipeClosed`, `stdout_gone()` points
  stdout at /dev/null so the interpreter's last flush can't fail again.
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

#: The width of output written to a pipe or a file when COLUMNS is not set.
PIPED_WIDTH = 120

T = TypeVar("T")


class _Settings:
    """What the command line asked for; set once per run by `configure`."""

    plain = False


settings = _Settings()


def wants_plain(flag: bool = False, environ: Mapping[str, str] | None = None) -> bool:
    """Plain output: `--no-color`, or NO_COLOR set to anything but the empty string."""
    environ = os.environ if environ is None else environ
    return flag or environ.get("NO_COLOR", "") != ""


#: The logger of the HTTP library under the clouds' SDKs (its line per retry); each cloud names its
#: SDKs' own loggers (`spotkube.clouds.CloudModules.sdk_loggers`).
HTTP_LOGGER = "urllib3"


def quiet_sdk_logs(sdk_loggers: Sequence[str]) -> None:
    """Give the SDKs' loggers a handler that drops their records; they still propagate to any handler
    a program embedding the CLI has set up. Their failures reach the user as spotkube's own one-line
    errors, so their log records must not be printed beside them: without a handler, Python's last
    resort prints every warning to stderr (an identity SDK's lines on the credentials it tried), and
    `preview.yml` would paste them into a comment."""
    for name in (*sdk_loggers, HTTP_LOGGER):
        logging.getLogger(name).addHandler(logging.NullHandler())


def configure(*, plain: bool) -> None:
    """Remember the run's choice, and make typer's own help and error panels follow it.

    typer loads its panels (rich's Markdown, Pygments: a tenth of a second) only to print help or an
    error, and draws them in colour by default; so they are loaded here only for plain output, or
    when already loaded, never on the way to a plan."""
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
    """The reader of stdout went away; the command stops and exits 0."""


class PipeAwareConsole(Console):
    """A rich Console that reports a closed pipe to the entry point instead of exiting 1 itself."""

    def on_broken_pipe(self) -> None:
        self.quiet = True
        raise PipeClosed from None


def console(*, stderr: bool = False, plain: bool | None = None) -> Console:
    """The console every command prints its tables with (stdout) or its messages (stderr)."""
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

    Each column gets its longest word; then the columns whose lines are longer share what is left
    equally, a column that needs less than its share (up to its own max_width) taking just what it
    needs, so short columns stay on one line and long ones wrap. Returns False when the longest words
    alone (with `wrap=False`, the longest lines) don't fit, or a cell is not text. Then, with
    `squeeze`, the widest column is narrowed first (`_narrowed`), until the table fits: only the
    longest words (a URL) lose their ends to an ellipsis, and short ones (a type, a name) stay whole;
    without it, the table is left to rich. Assumes rich's default box and padding:
    a border between and around the columns, a space either side of a cell.
    """
    texts: list[list[str]] = []
    for column in table.columns:
        cells = [column.header, *column.cells]
        if not all(isinstance(cell, str | Text) for cell in cells):
            return False
        texts.append([cell.plain if isinstance(cell, Text) else cell for cell in cells])
    words = [max((_longest_word(line) for cell in cells for line in cell.splitlines()), default=1)
             for cells in texts]
    lines = [max((len(line) for cell in cells for line in cell.splitlines()), default=1) for cells in texts]
    lines = [max(word, line if column.max_width is None else min(line, column.max_width))
             for word, line, column in zip(words, lines, table.columns, strict=True)]
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
    """The longest word of a line, its indentation counted with its first word: a tree's indented
    name can't wrap at its leading spaces."""
    indent = len(line) - len(line.lstrip(" "))
    return max([indent + len(w) if i == 0 else len(w) for i, w in enumerate(line.split())], default=1)


#: The narrowest a squeezed column gets.
MIN_SQUEEZED = 8


def _narrowed(widths: Sequence[int], budget: int) -> list[int]:
    """`widths` cut down to `budget` in total: the widest column gives up what the others need (down to
    `MIN_SQUEEZED`), then, only if that is not enough, the next widest, so that the columns of short
    words (names, types) keep them whole and only the longest ones (URLs) lose their ends."""
    out = list(widths)
    for index in sorted(range(len(out)), key=lambda i: -out[i]):
        if sum(out) <= budget:
            break
        out[index] = max(MIN_SQUEEZED, budget - (sum(out) - out[index]))
    return out


def stdout_gone() -> None:
    """Point stdout at /dev/null, so nothing more (the interpreter's last flush included) fails on it."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, ValueError, OSError):  # not a real file (a test runner's buffer)
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)


def progress(items: Sequence[T], *, verb: str = "planning", stderr: Console | None = None) -> Iterator[T]:
    """Yield each item, telling a person at a terminal which one is running and how long each took.

    On a terminal (stderr), each item gets a spinner while it runs, then a line such as
    `planned aks-dev-uksouth (1/4) in 3.1 s`; with plain output, a line before each item instead of
    the spinner. When stderr is not a terminal it prints nothing. Typical use::

        documents = [build(name) for name in progress(names)]
    """
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
        out.print(f"{done_verb} {label} in {time.perf_counter() - started:.1f} s", highlight=False, markup=False,
                  style="dim")

