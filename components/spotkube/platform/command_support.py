"""What spotkube's commands (not its plan) ask a cloud: the `CommandSupport` each cloud's
`clouds/<cloud>/commands.py` defines as `COMMANDS`, apart from the profile so that a plan never pays
for loading it (`Cloud.commands` imports it on first use).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import field
from typing import TYPE_CHECKING, Any

from spotkube.platform.records import record

if TYPE_CHECKING:
    # Named by the annotations only, which stay strings: nothing resolves them at run time.
    from spotkube.platform.cloud_options import CommandOptions
    from spotkube.platform.cost.price_copy import PriceCopy
    from spotkube.platform.cost.refresh import PriceSource
    from spotkube.platform.doctor import BackendPolicy, DoctorQuery, LiveAccess
    from spotkube.platform.identities import IdentityFacts
    from spotkube.platform.live_quota import LiveQuota, QuotaQuery
    from spotkube.platform.logs import LogQuery, LogTarget
    from spotkube.platform.spec import PlatformSpec


#: A node's provider ID (`spec.providerID`) -> the cloud CLI command that evicts that VM the way the
#: cloud reclaims spot capacity, or None when the ID is not one of the cloud's.
EvictionCommand = Callable[[str], tuple[str, ...] | None]


@record
class DeployAccess:
    """How a stack of the cloud is deployed from CI, for `spotkube new-stack`'s next steps."""

    #: What the deploy workflow reads from the stack's GitHub environment, which the bootstrap writes:
    #: (variable, what is in it).
    variables: tuple[tuple[str, str], ...]


@record
class CommandSupport:
    """What spotkube's commands do on this cloud: its own flags, the new stack's template, the CI
    identities' calls and roles, and the live reads and actions that need the cloud's SDK or CLI."""

    #: The cloud's own flags on spotkube's commands, and its bootstrap stack's settings.
    options: CommandOptions
    #: A new stack's config (`spotkube new-stack`: environment, region and the cloud's own flags, its
    #: `options.new_stack`); raises NewStackError for flags the cloud lacks.
    new_stack_config: Callable[[str, str, Any], dict[str, Any]]
    #: How such a stack is then deployed from CI (`clouds/<cloud>/commands.py`).
    deploy: DeployAccess
    #: The cloud's own price list, for `spotkube prices refresh`; None when spotkube can't read it.
    price_source: PriceSource | None = None
    #: The dated public copies of its price list `spotkube prices import` reads, by name: each with a
    #: reader of the copy's own layout (`platform.cost.price_copy`).
    price_copies: Mapping[str, PriceCopy] = field(default_factory=dict)
    #: The module whose `refresh(RefreshRequest, known_gpus) -> SourceResult` reads the cloud's GPU
    #: machines from its API (`spotkube catalog refresh`); imported only then, since it needs the
    #: cloud's SDK from the `refresh` extra.
    catalog_source: str | None = None
    #: The cloud's live quota limits and usage, through its own SDK (`spotkube quota`, `doctor`).
    read_quota: Callable[[QuotaQuery], LiveQuota] | None = None
    #: What `spotkube doctor` reads live before a first `up`: the APIs or providers enabled, the CI
    #: identities' roles, the region's sizes (the `refresh` extra signs in).
    read_access: Callable[[DoctorQuery], LiveAccess] | None = None
    #: Who holds roles on a self-managed backend's bucket or container, read live (`doctor
    #: --github-repository`): (the stack, its PULUMI_BACKEND_URL, endpoint, account, timeout) -> the policy,
    #: None for a URL it can't read (another cloud's); None: spotkube can't read them on this cloud.
    read_backend: Callable[[PlatformSpec, str, str | None, str | None, float], BackendPolicy | None] | None = None
    #: The query and console link for a step's logs once its pod is gone (`spotkube logs`).
    log_query: Callable[[PlatformSpec, LogTarget], LogQuery] | None = None
    #: How `spotkube drill` evicts a node of this cloud; None when the cloud offers no such command.
    eviction_command: EvictionCommand | None = None
    #: The help of a shared command's flag that only this cloud reads, by flag (`logs --workspace`),
    #: which the CLI shows after the cloud's title.
    flag_help: Mapping[str, str] = field(default_factory=dict)
    #: The calls the CI identities make and the roles they hold (docs/identities.md: `spotkube doctor`
    #: and `python -m spotkube.cli.identities` read them).
    identities: IdentityFacts | None = None
