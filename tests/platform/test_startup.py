"""The time to a running GPU step from 0 nodes: the estimator over image deliveries and sizes, and the
figures each cloud ships, every one with its source, its date and what kind of figure it is."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spotkube.clouds import CLOUDS
from spotkube.platform.startup import (
    ANY_GPU,
    DELIVERIES,
    Fallback,
    Figure,
    NodeFigure,
    PoolStartup,
    Span,
    StartupFigures,
    image_time,
)
from spotkube.platform.startup_sample import sample_startup


def figure(low: float, high: float, *, per_gb: bool = False, max_gb: float | None = None) -> Figure:
    return Figure(low, high, "assumption", "test", "https://example.org/figures", "a test figure", "2026-11-27",
                  per_gb=per_gb, max_gb=max_gb)


NODE = figure(300, 600)
FIGURES = StartupFigures(nodes=(NodeFigure((ANY_GPU,), NODE),), pull=figure(24, 30, per_gb=True),
                         streaming=figure(2, 10), preloaded=figure(0, 5))
sizes = st.floats(min_value=0.01, max_value=1000, allow_nan=False)


@given(sizes, sizes)
def test_a_pull_takes_longer_for_a_larger_image(small: float, large: float) -> None:
    small, large = sorted((small, large))
    a, b = image_time("pull", small, FIGURES).span, image_time("pull", large, FIGURES).span
    assert a is not None and b is not None
    assert a.low <= b.low and a.high <= b.high
    assert b.low == pytest.approx(24 * large) and b.high == pytest.approx(30 * large)


@given(sizes, sizes, st.sampled_from(["streaming", "preloaded"]))
def test_streaming_and_preloading_do_not_depend_on_the_size(one: float, other: float, delivery: str) -> None:
    assert image_time(delivery, one, FIGURES).span == image_time(delivery, other, FIGURES).span  # type: ignore[arg-type]
    assert image_time(delivery, None, FIGURES).span is not None  # type: ignore[arg-type]


@given(sizes, st.sampled_from(DELIVERIES))
def test_the_total_is_the_node_then_the_image(size: float, delivery: str) -> None:
    image = image_time(delivery, size, FIGURES)  # type: ignore[arg-type]
    total = PoolStartup("a100spot", "spot", "nvidia-tesla-a100", NODE, image).total
    assert total is not None and image.span is not None
    assert total == Span(300 + image.span.low, 600 + image.span.high)
    assert total.low <= total.high


def test_an_undeclared_size_is_said_not_guessed() -> None:
    image = image_time("pull", None, FIGURES)
    assert image.span is None and image.note == "image size not declared (imageGb)"
    assert PoolStartup("p", "spot", "nvidia-l4", NODE, image).total is None


def test_a_delivery_the_cloud_lacks_is_said() -> None:
    figures = StartupFigures(nodes=FIGURES.nodes, pull=FIGURES.pull)
    image = image_time("preloaded", 8, figures)
    assert image.span is None and image.note == "the cloud offers no preloaded of images"


def test_a_figure_bounded_by_size_says_so_beyond_it() -> None:
    figures = StartupFigures(nodes=FIGURES.nodes, pull=FIGURES.pull, streaming=figure(5, 30, max_gb=30))
    assert image_time("streaming", 12, figures).note is None
    assert image_time("streaming", 40, figures).note == "the streaming figure holds for images up to 30 GB"


def test_a_range_must_run_from_low_to_high() -> None:
    with pytest.raises(ValueError, match="0 <= low <= high"):
        figure(600, 300)


def test_a_gpu_family_gets_its_own_node_figure_and_any_other_the_catch_all() -> None:
    a100 = figure(600, 1750)
    figures = StartupFigures(nodes=(NodeFigure(("nvidia-tesla-a100", "nvidia-h100-nvl"), a100),
                                    NodeFigure((ANY_GPU,), NODE)), pull=FIGURES.pull)
    assert figures.node("nvidia-h100-nvl") == a100 and figures.node("nvidia-l4") == NODE


@pytest.mark.parametrize("nodes", [(), (NodeFigure(("nvidia-l4",), NODE),),
                                   (NodeFigure(("nvidia-l4", ANY_GPU), NODE), NodeFigure(("nvidia-l4",), NODE))])
def test_node_figures_name_each_gpu_once_with_a_catch_all(nodes: tuple[NodeFigure, ...]) -> None:
    with pytest.raises(ValueError, match="each GPU type once"):
        StartupFigures(nodes=nodes, pull=FIGURES.pull)


def _figures(cloud: str) -> StartupFigures:
    read = CLOUDS[cloud].startup_figures
    assert read is not None
    return read()


@pytest.mark.parametrize("cloud", sorted(CLOUDS))
def test_every_cloud_s_figures_are_sourced_dated_and_an_assumption_says_why(cloud: str) -> None:
    figures = _figures(cloud)
    every = [entry.figure for entry in figures.nodes] + [f for f in (figures.pull, figures.streaming,
                                                                      figures.preloaded) if f is not None]
    assert len(every) > len(figures.nodes) > 1, "node figures per GPU family, and the image figures"
    for found in every:
        assert found.source.startswith("https://") and found.says and found.what
        assert found.kind in ("published", "reported", "assumption")
        assert re.fullmatch(r"2026-\d\d-\d\d", found.date), found.date
        if found.kind == "assumption":  # allowed only with its reason, which says what spotkube assumes
            assert "spotkube" in found.says and "assum" in found.says, found.says
    assert figures.pull.per_gb and not any(entry.figure.per_gb for entry in figures.nodes)


@pytest.mark.parametrize("cloud", sorted(CLOUDS))
def test_every_gpu_type_the_catalog_knows_has_its_family_s_node_figure(cloud: str) -> None:
    named = {gpu for entry in _figures(cloud).nodes for gpu in entry.gpus}
    gpu_types = CLOUDS[cloud].gpu_types()
    assert gpu_types, "the catalog's GPU types"
    assert sorted(gpu_types - named) == [], "a GPU type would fall to the catch-all figure"


def test_figures_differ_by_family_where_a_source_does() -> None:
    aks = _figures("aks")
    assert (aks.node("nvidia-a100-80gb").low_seconds, aks.node("nvidia-a100-80gb").high_seconds) == (300, 660)
    assert (aks.node("nvidia-tesla-a100").low_seconds, aks.node("nvidia-tesla-a100").high_seconds) == (600, 1750)
    assert aks.node("nvidia-tesla-a100").source == "https://github.com/Azure/telescope/pull/1322"
    gke = _figures("gke")
    assert gke.node("nvidia-tesla-t4").kind == "reported"
    assert gke.node("nvidia-tesla-a100").kind == gke.node("nvidia-l4").kind == "assumption"


def spot_with_fallback() -> PoolStartup:
    return PoolStartup("a100spot", "spot", "nvidia-tesla-a100", NODE, image_time("pull", 10, FIGURES),
                       Fallback(610, ("a100ondemand",), Span(540, 960)))


@given(st.floats(min_value=0, max_value=1), st.integers(min_value=0, max_value=2**32 - 1))
@settings(max_examples=25, deadline=None)
def test_sampled_times_stay_within_the_stated_ranges(share: float, seed: int) -> None:
    startup = spot_with_fallback()
    sample = sample_startup(startup, share, runs=400, seed=seed)
    assert sample is not None and 0 <= sample.fell_back <= 1 and sample.waited == 0
    low = min(300 + 240, 610 + 540)
    high = max(600 + 300, 610 + 960)
    for value in (sample.p50, sample.p90, sample.p99):
        assert value is not None and low <= value <= high
    assert sample.p50 <= sample.p90 <= sample.p99  # type: ignore[operator]


def test_with_capacity_always_there_the_fallback_is_never_drawn() -> None:
    sample = sample_startup(spot_with_fallback(), 0, runs=1000, seed=1)
    assert sample is not None and sample.fell_back == 0
    assert sample.p99 is not None and sample.p99 <= 600 + 300


def test_without_a_bounded_fallback_a_step_out_of_capacity_waits() -> None:
    startup = PoolStartup("l4-spot", "spot", "nvidia-l4", NODE, image_time("pull", 10, FIGURES))
    sample = sample_startup(startup, 0.5, runs=1000, seed=2)
    assert sample is not None and sample.p90 is None and sample.p99 is None
    assert 0.4 < sample.waited < 0.6


def test_an_on_demand_pool_never_runs_out_and_an_unsized_image_is_not_sampled() -> None:
    on_demand = PoolStartup("a100ondemand", "on-demand", "nvidia-tesla-a100", NODE,
                            image_time("pull", 10, FIGURES))
    sample = sample_startup(on_demand, 1, runs=500, seed=3)
    assert sample is not None and sample.p99 is not None and sample.fell_back == sample.waited == 0
    unsized = PoolStartup("a", "spot", "nvidia-l4", NODE, image_time("pull", None, FIGURES))
    assert sample_startup(unsized, 0.1, runs=10, seed=0) is None
    with pytest.raises(ValueError, match="from 0 to 1"):
        sample_startup(on_demand, 1.5, runs=10, seed=0)
