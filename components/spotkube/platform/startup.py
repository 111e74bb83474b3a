"""The expected time from a pending GPU step to a running one, when its pool is at 0 nodes.

Three (shortest, longest) ranges in seconds: the node, the image (a pull at a throughput per GB, or
streaming or preloading), and for an interruptible pool that runs out, the fallback bound plus the
next tier's node and image. Each cloud ships sourced figures per GPU family
(`clouds/<cloud>/startup.json`). Pure module (docs/time-to-gpu.md).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Literal

from spotkube.platform.records import record

#: How a node gets the step's image: pulled whole, streamed as the container reads it, or already on
#: the node's disk.
ImageDelivery = Literal["pull", "streaming", "preloaded"]
FigureKind = Literal["published", "reported", "assumption"]
DELIVERIES: tuple[ImageDelivery, ...] = ("pull", "streaming", "preloaded")


@record
class Figure:
    """One sourced range of seconds (per GB of compressed image when `per_gb`)."""

    low_seconds: float
    high_seconds: float
    #: published: the cloud's own figure; reported: a measurement someone published; assumption:
    #: nobody publishes one, so this is spotkube's, with `says` giving its basis.
    kind: FigureKind
    what: str
    source: str
    says: str
    date: str
    per_gb: bool = False
    #: The largest image (GB) the figure holds for, when its source bounds it.
    max_gb: float | None = None

    def __post_init__(self) -> None:
        if not 0 <= self.low_seconds <= self.high_seconds:
            raise ValueError(f"a startup figure needs 0 <= low <= high seconds, got {self.low_seconds}, "
                             f"{self.high_seconds}")

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Figure:
        return cls(low_seconds=float(data["low_seconds"]), high_seconds=float(data["high_seconds"]),
                   kind=data["kind"], what=str(data["what"]), source=str(data["source"]), says=str(data["says"]),
                   date=str(data["date"]), per_gb=bool(data.get("per_gb", False)),
                   max_gb=None if data.get("max_gb") is None else float(data["max_gb"]))

    def to_json(self) -> dict[str, Any]:
        return {"lowSeconds": self.low_seconds, "highSeconds": self.high_seconds, "kind": self.kind,
                "perGb": self.per_gb, "source": self.source, "date": self.date}


#: The node figure of a GPU type no other figure names (one the catalog doesn't list).
ANY_GPU = "*"


@record
class NodeFigure:
    """The node figure of the GPU types it names (`ANY_GPU`: every type no other figure names)."""

    gpus: tuple[str, ...]
    figure: Figure


@record
class StartupFigures:
    """One cloud's figures: the node per GPU family, and the image per delivery it offers (None: not
    offered)."""

    nodes: tuple[NodeFigure, ...]
    pull: Figure
    streaming: Figure | None = None
    preloaded: Figure | None = None

    def __post_init__(self) -> None:
        named = [gpu for entry in self.nodes for gpu in entry.gpus]
        if len(named) != len(set(named)) or ANY_GPU not in named:
            raise ValueError(f"node figures must name each GPU type once and one figure {ANY_GPU!r} for the "
                             f"others, got {named}")

    @classmethod
    def from_json(cls, text: str) -> StartupFigures:
        data = json.loads(text)
        optional = {k: Figure.from_json(data[k]) for k in ("streaming", "preloaded") if data.get(k)}
        nodes = tuple(NodeFigure(tuple(entry["gpus"]), Figure.from_json(entry)) for entry in data["node"])
        return cls(nodes=nodes, pull=Figure.from_json(data["pull"]), **optional)

    def node(self, gpu_type: str) -> Figure:
        """The node figure of a GPU type: its family's, or the one for types no figure names."""
        by_gpu = {gpu: entry.figure for entry in self.nodes for gpu in entry.gpus}
        return by_gpu.get(gpu_type, by_gpu[ANY_GPU])

    def image(self, delivery: ImageDelivery) -> Figure | None:
        return {"pull": self.pull, "streaming": self.streaming, "preloaded": self.preloaded}[delivery]


@record
class Span:
    """A (shortest, longest) time in seconds."""

    low: float
    high: float

    def __add__(self, other: Span) -> Span:
        return Span(self.low + other.low, self.high + other.high)

    def text(self) -> str:
        return duration(self.low) if round(self.low) == round(self.high) else (
            f"{duration(self.low)}–{duration(self.high)}")

    def to_json(self) -> dict[str, float]:
        return {"lowSeconds": round(self.low, 1), "highSeconds": round(self.high, 1)}


def duration(seconds: float) -> str:
    """`610` -> `10m10s`, `0` -> `0s`."""
    minutes, secs = divmod(round(seconds), 60)
    return f"{minutes}m{secs}s" if minutes and secs else f"{minutes}m" if minutes else f"{secs}s"


@record
class ImageEstimate:
    """The image part: its span, or why there is none."""

    delivery: ImageDelivery
    size_gb: float | None
    span: Span | None
    figure: Figure | None
    #: Why the span is missing or weaker than it looks, in words.
    note: str | None = None


def image_time(delivery: ImageDelivery, size_gb: float | None, figures: StartupFigures) -> ImageEstimate:
    """How long a fresh node takes to have the image, for a declared compressed size (None: not declared)."""
    figure = figures.image(delivery)
    if figure is None:
        return ImageEstimate(delivery, size_gb, None, None, f"the cloud offers no {delivery} of images")
    if not figure.per_gb:
        note = None
        if figure.max_gb is not None and size_gb is not None and size_gb > figure.max_gb:
            note = f"the {delivery} figure holds for images up to {figure.max_gb:g} GB"
        return ImageEstimate(delivery, size_gb, Span(figure.low_seconds, figure.high_seconds), figure, note)
    if size_gb is None:
        return ImageEstimate(delivery, None, None, figure, "image size not declared (imageGb)")
    return ImageEstimate(delivery, size_gb, Span(figure.low_seconds * size_gb, figure.high_seconds * size_gb), figure)


@record
class Fallback:
    """What happens when the pool's capacity is out: how long before the next tier is tried, and that tier."""

    bound_seconds: int
    pools: tuple[str, ...]
    #: The next tier's own node and image (None when its image time is unknown).
    then: Span | None


@record
class PoolStartup:
    """One GPU pool's expected time to a running step from 0 nodes."""

    pool: str
    capacity: str
    gpu_type: str
    node: Figure
    image: ImageEstimate
    #: Set for an interruptible pool whose GPU type falls back within a stated bound.
    fallback: Fallback | None = None
    #: Why a fallback can't be stated, in words (no bound, no fallback pool).
    fallback_note: str | None = None

    @property
    def node_span(self) -> Span:
        return Span(self.node.low_seconds, self.node.high_seconds)

    @property
    def total(self) -> Span | None:
        """The pool's own capacity is there: node, then image."""
        return None if self.image.span is None else self.node_span + self.image.span

    @property
    def out_of_capacity(self) -> Span | None:
        """The pool's capacity is out: the bound, then the next tier's node and image."""
        if self.fallback is None or self.fallback.then is None:
            return None
        bound = Span(self.fallback.bound_seconds, self.fallback.bound_seconds)
        return bound + self.fallback.then

    def to_json(self) -> dict[str, Any]:
        total, out = self.total, self.out_of_capacity
        return {
            "pool": self.pool, "capacity": self.capacity, "gpu": self.gpu_type,
            "node": {**self.node_span.to_json(), "kind": self.node.kind, "source": self.node.source,
                     "date": self.node.date},
            "image": {"delivery": self.image.delivery, "sizeGb": self.image.size_gb,
                      "span": None if self.image.span is None else self.image.span.to_json(),
                      "figure": None if self.image.figure is None else self.image.figure.to_json(),
                      "note": self.image.note},
            "total": None if total is None else total.to_json(),
            "fallback": None if self.fallback is None else {
                "boundSeconds": self.fallback.bound_seconds, "pools": list(self.fallback.pools),
                "then": None if self.fallback.then is None else self.fallback.then.to_json(),
                "total": None if out is None else out.to_json()},
            "fallbackNote": self.fallback_note,
        }
