"""Where a pipeline step's logs are, once its pod is gone: the shape every cloud's answer takes.

A pod deleted with its spot node never archives its log to KFP's store, so the logs that outlive an
eviction are those the node's log agent shipped; `spotkube logs` prints each cloud's query and console
link (`Cloud.commands.log_query`). Docs: docs/logs.md. Pure module: no Pulumi.
"""

from __future__ import annotations

import re

from spotkube.platform.errors import SpotkubeError
from spotkube.platform.records import record

#: Where KFP standalone runs every pipeline pod.
PIPELINE_NAMESPACE = "kubeflow"
#: A pod name: a DNS-1123 subdomain (kubernetes.io/docs/concepts/overview/working-with-objects/names).
POD_NAME = re.compile(r"[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?")
#: KFP run ids are UUIDs.
RUN_ID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


class LogsError(SpotkubeError):
    """A pod name, run id, cluster or workspace `spotkube logs` can't put in a query."""


@record
class LogTarget:
    """Whose logs: one pod, or every pod of a KFP run; and, when known, the cluster's name and (AKS)
    the Log Analytics workspace, which only exist once the stack is deployed."""

    pod: str | None = None
    run: str | None = None
    cluster: str | None = None
    workspace: str | None = None
    namespace: str = PIPELINE_NAMESPACE

    def __post_init__(self) -> None:
        if (self.pod is None) == (self.run is None):
            raise LogsError("name one step's pod with --pod NAME or a whole run with --run ID")
        if self.pod is not None and not POD_NAME.fullmatch(self.pod):
            raise LogsError(f"--pod {self.pod!r} is not a pod name; use the step's pod as the KFP UI shows it "
                            "(lower-case letters, digits, '-' and '.')")
        if self.run is not None and not RUN_ID.fullmatch(self.run):
            raise LogsError(f"--run {self.run!r} is not a KFP run id; use the run's id as the KFP UI shows it "
                            "(a UUID such as 3f2b1c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d)")


@record
class LogQuery:
    """The query in the cloud's own language, the console page to run it in, a command-line equivalent
    and what the reader should know (a part only known after deployment, say)."""

    language: str
    query: str
    link: str | None
    command: str | None
    notes: tuple[str, ...] = ()


def quoted(value: str) -> str:
    """`value` as a string literal of a log query: in double quotes, backslashes and quotes escaped, which
    KQL and Cloud Logging's query language both read."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
