"""The quota verdicts: where a need lands when a quota is absent or unset, sums of needs that land on
one quota, and the surge rounding AKS applies."""

from __future__ import annotations

import pytest

from spotkube.platform.live_quota import Usage, compare
from spotkube.platform.quota import QuotaNeed, QuotaPlan, QuotaRef, surge_percent

E2 = QuotaNeed((QuotaRef("E2_CPUS"), QuotaRef("CPUS")), "E2 vCPUs", "vCPUs", 16, 4, ("system",))
N1 = QuotaNeed((QuotaRef("CPUS"),), "N1 vCPUs", "vCPUs", 32, 8, ("t4",))
SPOT_L4 = QuotaNeed((QuotaRef("PREEMPTIBLE_NVIDIA_L4_GPUS", skip_if_zero=True), QuotaRef("NVIDIA_L4_GPUS")),
                    "Spot L4 GPUs", "GPUs", 4, 1, ("l4-spot",))


def checks(*needs: QuotaNeed, **regional: Usage) -> dict[str, tuple[int, str]]:
    return {c.quota: (c.need, c.verdict) for c in compare(QuotaPlan(needs, "surge"), regional, {})}


def test_a_family_without_its_own_quota_counts_against_cpus_with_the_others() -> None:
    assert checks(E2, N1, CPUS=Usage(100, 30)) == {"CPUS": (60, "ok")}
    assert checks(E2, N1, CPUS=Usage(100, 50)) == {"CPUS": (60, "tight")}
    assert checks(E2, N1, CPUS=Usage(100, 50), E2_CPUS=Usage(8, 0)) == {"E2_CPUS": (20, "short"),
                                                                        "CPUS": (40, "ok")}


def test_an_unset_preemptible_quota_falls_back_to_the_regular_one() -> None:
    unset = {"PREEMPTIBLE_NVIDIA_L4_GPUS": Usage(0, 0), "NVIDIA_L4_GPUS": Usage(4, 0)}
    assert checks(SPOT_L4, **unset) == {"NVIDIA_L4_GPUS": (5, "short")}
    assert checks(SPOT_L4, PREEMPTIBLE_NVIDIA_L4_GPUS=Usage(8, 4), NVIDIA_L4_GPUS=Usage(0, 0)) == {
        "PREEMPTIBLE_NVIDIA_L4_GPUS": (5, "tight")}


def test_a_quota_the_cloud_does_not_list_is_unknown_not_passed() -> None:
    (check,) = compare(QuotaPlan((SPOT_L4,), "surge"), {"CPUS": Usage(10, 0)}, {})
    assert (check.quota, check.verdict, check.limit) == ("PREEMPTIBLE_NVIDIA_L4_GPUS", "unknown", None)
    assert "lists no such quota here" in check.message


def test_names_compare_without_case_and_spaces() -> None:
    family = QuotaNeed((QuotaRef("standardNCASv3_T4Family"),), "T4 vCPUs", "vCPUs", 8, 0, ("t4",))
    assert checks(family, **{"Standard NCASv3_T4 Family": Usage(8, 0)}) == {"standardNCASv3_T4Family": (8, "ok")}


@pytest.mark.parametrize(("nodes", "percent", "surge"), [(0, 10, 0), (1, 10, 1), (10, 10, 1), (11, 10, 2),
                                                          (3, 33, 1), (5, 50, 3)])
def test_a_percent_surge_rounds_up(nodes: int, percent: int, surge: int) -> None:
    assert surge_percent(nodes, percent) == surge
