"""The idle floor's fixed lines: what the registered resources cost a month besides the nodes (the
cluster fee, the outbound path, disks), as the stack's cloud reads and prices them.
"""

from __future__ import annotations

from collections.abc import Sequence

from spotkube.clouds import profile
from spotkube.platform.cost.fixed import FixedCosts, price_fixed
from spotkube.platform.registration import Registration
from spotkube.platform.spec import PlatformSpec


def stack_fixed_costs(spec: PlatformSpec, registrations: Sequence[Registration]) -> FixedCosts | None:
    """The priced fixed lines of a stack's registered resources; None for a cloud without a reader."""
    cloud = profile(spec.cloud)
    if cloud.fixed_items is None or cloud.fixed_prices is None:
        return None
    registered = [(r.type, r.name, r.inputs) for r in registrations]
    return price_fixed(cloud.fixed_items(registered, spec), spec.region, cloud.fixed_prices())
