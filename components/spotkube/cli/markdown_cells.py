"""Text as one whole Markdown table cell, and the length a Markdown comment may have.

Why a module of its own: a Markdown table has no width limit (the reader's browser wraps it), so a
cell is never cut with "…" as a terminal column is; it only has to stay one cell: a `|` would end it
and a line break would end the row. Pure module.
"""

from __future__ import annotations

#: GitHub refuses an issue or pull-request comment longer than this many characters.
GITHUB_COMMENT_LIMIT = 65_536


def cell(text: str) -> str:
    """`text` whole, as one cell: `|` escaped, line breaks as `<br>`."""
    return text.replace("|", "\\|").replace("\r\n", "\n").replace("\n", "<br>")
