"""Text as one whole Markdown table cell (never cut: the browser wraps it), and the length a Markdown
comment may have."""

from __future__ import annotations

#: GitHub refuses an issue or pull-request comment longer than this many characters.
GITHUB_COMMENT_LIMIT = 65_536


def cell(text: str) -> str:
    """`text` whole, as one cell: `|` escaped, line breaks as `<br>`."""
    return text.replace("|", "\\|").replace("\r\n", "\n").replace("\n", "<br>")
