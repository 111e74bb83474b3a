"""What a stack accepts and assumes in the review of each cluster its program builds: for a program that
reads its own config, `spotkube:clusters`, by the cluster component's name, each with the
`acknowledgements` and `cost` keys a platform's stack file has. Pure module: no Pulumi.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import Field, ValidationError

from spotkube.platform.errors import Problem, SpecError
from spotkube.platform.input_messages import describe, kind, shown
from spotkube.platform.spec import Acknowledgement, CostSettings, PlatformSpec, _Model, config_key, key_path

#: The stack file key that holds each cluster's review settings.
CLUSTERS_KEY = config_key("clusters")


class ClusterReview(_Model):
    """The review settings of one cluster, spelt as a platform's stack file spells them."""

    acknowledgements: tuple[Acknowledgement, ...] = Field(
        default=(), description="Plan warnings this cluster accepts, by id, with a reason and an optional expiry.")
    cost: CostSettings = Field(default_factory=CostSettings, description="The usage scenario the plan prices.")

    @classmethod
    def of_stack(cls, config: Mapping[str, Any], source: str) -> dict[str, ClusterReview]:
        """Each cluster's settings from a stack's config (`spotkube:clusters`), by cluster name; raises
        SpecError naming the stack file and every wrong key."""
        written = config.get(CLUSTERS_KEY)
        if written is None:
            return {}
        if not isinstance(written, Mapping):
            raise SpecError(source, [Problem(CLUSTERS_KEY, f"{shown(written)} is {kind(written)}; give a mapping "
                                             "from each cluster component's name to its acknowledgements and cost")])
        reviews: dict[str, ClusterReview] = {}
        problems: list[Problem] = []
        for name, settings in written.items():
            where = f"{CLUSTERS_KEY}.{name}"
            try:
                reviews[str(name)] = cls.model_validate(settings if settings is not None else {})
            except ValidationError as err:
                problems += [Problem(".".join(filter(None, (where, key_path(tuple(e["loc"]))))),
                                     describe(e, cls, "stack")) for e in err.errors()]
        if problems:
            raise SpecError(source, problems)
        return reviews

    def over(self, spec: PlatformSpec) -> PlatformSpec:
        """`spec` with these acknowledgements and this cost scenario (the cluster's args have neither)."""
        return spec.model_copy(update={"acknowledgements": self.acknowledgements, "cost": self.cost})
