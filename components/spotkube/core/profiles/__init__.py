"""The cloud profiles, reached through one registry: `profile("aks")`, `profile("gke")`.

Everything cloud-specific that the core needs lives in one profile module per cloud; see
`base.CloudProfile` for what a profile holds.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from spotkube.core.contract import Cloud
from spotkube.core.profiles import aks, gke
from spotkube.core.profiles.base import CloudProfile, RegisteredPool

PROFILES: dict[str, CloudProfile] = {p.cloud: p for p in (aks.PROFILE, gke.PROFILE)}


def profile(cloud: Cloud | str) -> CloudProfile:
    """The profile of a cloud the spec has already accepted."""
    return PROFILES[cloud]


def registered_pools(type_token: str, name: str, inputs: Mapping[str, Any]) -> list[RegisteredPool]:
    """The node pools any registration declares, whichever cloud it belongs to (none for the rest):
    the policy pack judges programs without knowing their cloud."""
    return [pool for p in PROFILES.values() for pool in p.read_pools(type_token, name, inputs)]


__all__ = ["PROFILES", "CloudProfile", "RegisteredPool", "profile", "registered_pools"]
