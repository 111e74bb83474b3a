"""A step's logs on GKE: a Cloud Logging filter over `k8s_container` entries, and the Logs Explorer.

GKE's logging agent ships each container's stdout and stderr to Cloud Logging while it runs (the
cluster's `logging_config` says WORKLOADS, which spotkube states), so the logs are there after spot
took the node. Entries carry the resource labels project_id, location, cluster_name, namespace_name,
pod_name and container_name, and each pod label as `labels."k8s-pod/<key>"`
(cloud.google.com/kubernetes-engine/docs/how-to/view-logs). Docs: docs/logs.md.
"""

from __future__ import annotations

import re
import shlex
from urllib.parse import quote

from spotkube.platform.contract import KFP_RUN_ID_LABEL
from spotkube.platform.logs import LogQuery, LogsError, LogTarget, quoted
from spotkube.platform.spec import PlatformSpec

#: GKE cluster names: 1-40 lower-case letters, digits and hyphens, starting with a letter.
CLUSTER_NAME = re.compile(r"[a-z]([-a-z0-9]{0,38}[a-z0-9])?")
#: The Logs Explorer, with the query in its URL (the form the console's own share links take).
LOGS_EXPLORER = "https://console.cloud.google.com/logs/query;query={query};storageScope=project?project={project}"
#: How far back `gcloud logging read` looks: the _Default bucket keeps 30 days.
FRESHNESS = "30d"


def log_query(spec: PlatformSpec, target: LogTarget) -> LogQuery:
    """The filter for one pod's containers, or every pod of a run, in the stack's project and region."""
    if target.workspace is not None:
        raise LogsError("--workspace is a Log Analytics workspace, an AKS setting; GKE's logs are in Cloud Logging")
    if target.cluster is not None and not CLUSTER_NAME.fullmatch(target.cluster):
        raise LogsError(f"--cluster {target.cluster!r} is not a GKE cluster name; use `pulumi stack output "
                        "clusterName`")
    project = spec.cluster.project or ""
    lines = ['resource.type="k8s_container"', f"resource.labels.project_id={quoted(project)}",
             f"resource.labels.location={quoted(spec.region)}"]
    notes = []
    if target.cluster is not None:
        lines.append(f"resource.labels.cluster_name={quoted(target.cluster)}")
    else:
        notes.append("add --cluster $(pulumi stack output clusterName) to narrow it to the stack's cluster (its "
                     "name is only known once deployed)")
    lines.append(f"resource.labels.namespace_name={quoted(target.namespace)}")
    if target.pod is not None:
        lines.append(f"resource.labels.pod_name={quoted(target.pod)}")
    else:
        lines.append(f'labels."k8s-pod/{KFP_RUN_ID_LABEL}"={quoted(target.run or "")}')
    if spec.cluster.logs.enabled is False:
        notes.append("cluster.logs.enabled is false: workloads' logs are not sent to Cloud Logging, so a pod gone "
                     "with its node left none")
    query = "\n".join(lines)
    notes.append("widen the Logs Explorer's time range to when the step ran (it shows the last hour at first)")
    return LogQuery(
        language="Cloud Logging filter",
        query=query,
        link=LOGS_EXPLORER.format(query=quote(query, safe=""), project=quote(project, safe="")),
        command=(f"gcloud logging read {shlex.quote(' AND '.join(lines))} --project {shlex.quote(project)} "
                 f"--freshness {FRESHNESS} --order asc --format 'value(timestamp,resource.labels.container_name,"
                 "textPayload)'"),
        notes=tuple(notes),
    )
