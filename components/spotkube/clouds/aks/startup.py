"""How long a step waits on this cloud for a GPU node and its image: the sourced figures
(startup.json, next to this module), and how a registered pool gets its image."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from importlib import resources
from typing import Any

from spotkube.platform.startup import ImageDelivery, StartupFigures


@functools.cache
def figures() -> StartupFigures:
    return StartupFigures.from_json(resources.files(__package__).joinpath("startup.json").read_text("utf-8"))


def image_delivery(token: str, inputs: Mapping[str, Any]) -> ImageDelivery:
    """Every pool spotkube registers here pulls its images whole: it sets no artifact streaming (an
    agent pool's `artifactStreamingProfile`), which is what would make a pool stream them."""
    return "pull"
