"""What a Pulumi program registered, called and exported: the one shape every judge reads.

The offline engine records them through Pulumi's mocks, inputs as the engine sees them; the judges
(`spotkube.review`) and the clouds' readers read these very values, so the type sits below both.
Pure module: plain data, no Pulumi.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from spotkube.platform.contract import PoolContract
from spotkube.platform.records import record
from spotkube.platform.spec import PlatformSpec


@record
class Registration:
    """One resource (or component, or provider) the program registered, with the options that decide
    how a change lands. `inputs` are as registered: secrets still wrapped in Pulumi's marker."""

    type: str
    name: str
    urn: str
    parent: str
    custom: bool
    inputs: Mapping[str, Any]
    protect: bool = False
    ignore_changes: tuple[str, ...] = ()
    replace_on_changes: tuple[str, ...] = ()
    delete_before_replace: bool = False
    dependencies: tuple[str, ...] = ()
    provider: str = ""
    #: A component's providers for its children, by reference (`urn::id`), as its options name them.
    providers: tuple[str, ...] = ()
    #: The URNs of the parents it had before it moved under its parent, from its aliases: the engine
    #: keeps the resource (and `plan --diff` compares it with itself there) instead of replacing it.
    moved_from: tuple[str, ...] = ()


@record
class Invoke:
    """A provider function the program called (such as the deployer's client config) and its answer."""

    token: str
    result: Mapping[str, Any]


@record
class StackOutput:
    """A stack output: whether it is secret, and its value only when it is not."""

    secret: bool
    value: Any = None



@record
class BuiltCluster:
    """One spotkube cluster component a program built: its name and URN (what it owns is below it in
    the tree, or deploys through its provider), the validated spec it planned from, and the pool
    contracts its `pool_contracts` output gives workloads (None when they can't be read)."""

    name: str
    urn: str
    spec: PlatformSpec
    contracts: tuple[PoolContract, ...] | None
    #: How the component names itself in its log lines (`AksGpuCluster 'ml'`).
    label: str = ""
    #: A cluster spotkube didn't make in this program, which pool components joined (`AksGpuNodePool`):
    #: its review is of what the program added to it, and names the cluster settings it can't check.
    external: bool = False
    #: The URNs, besides its own, whose subtrees it owns: an external cluster's pool components and the
    #: add-ons deployed onto its pools.
    members: tuple[str, ...] = ()
    #: An external cluster's own resource, when the program registers it too: read for what the pools
    #: depend on (its autoscaler, its own pools), never reviewed as spotkube's.
    context: tuple[str, ...] = ()
