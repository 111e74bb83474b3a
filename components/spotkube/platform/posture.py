"""A cluster's security posture as the program registers it: what a reviewer must see change.

Each cloud reads its cluster resource into this shape; a setting weaker than spotkube's production
default carries a `concern`, shown beside the value. Pure module: no Pulumi, no rendering.
"""

from __future__ import annotations

from typing import Any

from spotkube.platform.records import record
from spotkube.platform.warnings import PlanWarning, slug


@record
class Setting:
    """One security-relevant property of a cluster: its name, its value in words, and what is weak
    about it (None when nothing is)."""

    name: str
    value: str
    concern: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "value": self.value, "concern": self.concern}


@record
class ClusterPosture:
    """The security settings of one registered cluster resource."""

    resource: str
    settings: tuple[Setting, ...]

    @property
    def concerns(self) -> list[str]:
        return [f"{s.name}: {s.concern}" for s in self.settings if s.concern]

    @property
    def warnings(self) -> list[PlanWarning]:
        """Each concern as a plan warning, by the setting's id (`security-api-server`)."""
        return [w for w in map(concern_warning, self.settings) if w is not None]

    def to_json(self) -> dict[str, Any]:
        return {"resource": self.resource, "settings": [s.to_json() for s in self.settings]}


def concern_warning(setting: Setting) -> PlanWarning | None:
    """A weak setting as a plan warning whose id is the setting's name: `security-api-server`."""
    if not setting.concern:
        return None
    return PlanWarning(f"security-{slug(setting.name)}", f"{setting.name}: {setting.concern}")


def flag(name: str, on: Any, yes: str, no: str, concern_when_off: str) -> Setting:
    """A setting that is either on or off, with what is weak about it being off."""
    return Setting(name, yes, None) if on else Setting(name, no, concern_when_off)


def listed(values: Any) -> str:
    return ", ".join(str(v) for v in values) if values else "none"
