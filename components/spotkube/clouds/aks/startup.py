"""How long a step waits on this cloud for a GPU node and its image: the sourced figures (startup.json, next
to this module). AKS's pools pull their images whole (spotkube sets no artifact streaming), the `Cloud` default."""

from __future__ import annotations

import functools
from importlib import resources

from spotkube.platform.startup import StartupFigures


@functools.cache
def figures() -> StartupFigures:
    return StartupFigures.from_json(resources.files(__package__).joinpath("startup.json").read_text("utf-8"))
