"""The error of a cluster component whose cloud's SDK is not installed: each cloud's SDK comes with its
own extra (`spotkube[aks]`, `spotkube[gke]`), so a team that builds on one cloud never installs the
other's hundreds of megabytes."""

import pulumi


class MissingExtra(ImportError, pulumi.RunError):
    """An ImportError, because `from spotkube import AksGpuCluster` is the import that failed; a
    `pulumi.RunError` too, so that `pulumi up` and `spotkube plan` print its one line, not a traceback."""


def missing_extra(component: str, extra: str) -> MissingExtra:
    """The one line that names the extra to install."""
    return MissingExtra(f'{component} needs the {extra} extra: pip install "spotkube[{extra}]"', name=component)
