"""How long a step waits on this cloud for a GPU node and its image: the sourced figures
(startup.json, next to this module), and how a registered pool gets its image."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from importlib import resources
from typing import Any

from spotkube.platform.cloud import items, mapping
from spotkube.platform.startup import ImageDelivery, StartupFigures


@functools.cache
def figures() -> StartupFigures:
    return StartupFigures.from_json(resources.files(__package__).joinpath("startup.json").read_text("utf-8"))


def image_delivery(token: str, inputs: Mapping[str, Any]) -> ImageDelivery:
    """How a registered NodePool's nodes get the step's image: a secondary boot disk of preloaded
    images beats streaming (GKE reads a cached image from the disk), streaming beats a whole pull."""
    config = mapping(inputs.get("nodeConfig"))
    if items(config.get("secondaryBootDisks")):
        return "preloaded"
    if mapping(config.get("gcfsConfig")).get("enabled"):
        return "streaming"
    return "pull"
