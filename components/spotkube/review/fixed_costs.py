"""The idle floor's fixed lines: what the registered resources cost a month besides the nodes.

The node pools' idle floor alone is not what the first invoice says: the cluster management fee, the
outbound path (load balancer, NAT, public IPs), the nodes' disks, Kubeflow's volumes run all month
too. The stack's cloud reads them from the registrations and prices them from its own sourced table
(`clouds/<cloud>/fixed_costs.py`, `fixed_prices.json`); this judge only joins the two.

Pure module: no Pulumi, no rendering.
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
