"""User-facing errors: which file, which key, what was wrong and what is accepted.

These are the only errors a user should ever see from bad input. The CLI and `infra/__main__.py`
print them as they are; nothing that raises them may leak a traceback.
"""

from __future__ import annotations

from collections.abc import Sequence

from spotkube.platform.records import record


@record
class Problem:
    """One thing wrong with the input: the config key path and a sentence about it."""

    path: str
    message: str


class SpotkubeError(Exception):
    """Base of every error spotkube reports to a user without a traceback."""


class SpecError(SpotkubeError):
    """Bad input in a stack file or in component args; lists every problem found."""

    def __init__(self, source: str, problems: Sequence[Problem]) -> None:
        self.source = source
        self.problems = tuple(problems)
        super().__init__("\n".join(f"{source}: {p.path}: {p.message}" for p in self.problems))


class StackNotFound(SpotkubeError):
    """A stack name with no stack file; names the stacks that do exist."""


class NewStackError(SpotkubeError):
    """`spotkube new-stack` flags that can't make a stack (wrong cloud for a region or setting, unknown
    GKE region)."""


def first_line(err: Exception) -> str:
    """A cloud SDK error's first line, for a one-line message: the rest repeats the request and the
    answer's body. Its type's name when it says nothing."""
    text = str(getattr(err, "message", None) or err).strip()
    return text.splitlines()[0] if text else type(err).__name__

