"""A step's logs on AKS: a KQL query over Container Insights' `ContainerLogV2`, in Log Analytics.

Container Insights' agent ships each container's stdout and stderr to the cluster's Log Analytics
workspace while it runs (the `omsagent` add-on and the ContainerLogV2 data collection rule spotkube
registers), so the logs are there after spot took the node. ContainerLogV2 has PodNamespace,
PodName, ContainerName, LogSource and LogMessage; a run's pods are found by their `pipeline/runid`
label in KubePodInventory's PodLabel (learn.microsoft.com/azure/azure-monitor/reference/tables/
containerlogv2, .../kubepodinventory). Docs: docs/logs.md.
"""

from __future__ import annotations

import re
import shlex

from spotkube.clouds.aks.resources import WORKSPACE_ID_PATTERN
from spotkube.platform.contract import KFP_RUN_ID_LABEL
from spotkube.platform.logs import LogQuery, LogsError, LogTarget, quoted
from spotkube.platform.spec import PlatformSpec

#: The portal page of a resource's logs: the workspace's Logs blade.
PORTAL_LOGS = "https://portal.azure.com/#resource{workspace}/logs"


def log_query(spec: PlatformSpec, target: LogTarget) -> LogQuery:
    """The KQL for one pod's containers, or every pod of a run, over the stack's retention."""
    if target.cluster is not None:
        raise LogsError("--cluster is not needed on AKS: the workspace holds only this cluster's logs unless it is "
                        "shared; name it with --workspace")
    logs = spec.cluster.logs
    workspace = target.workspace or logs.workspace_id
    if workspace is not None and not re.fullmatch(WORKSPACE_ID_PATTERN, workspace, flags=re.IGNORECASE):
        raise LogsError(f"--workspace {workspace!r} is not a Log Analytics workspace resource id; use `pulumi stack "
                        "output logWorkspaceId`")
    namespace = quoted(target.namespace)
    window = f"| where TimeGenerated > ago({logs.retention_days}d)"
    if target.pod is not None:
        query = "\n".join([
            "ContainerLogV2", window, f"| where PodNamespace == {namespace} and PodName == {quoted(target.pod)}",
            "| project TimeGenerated, ContainerName, LogSource, LogMessage", "| order by TimeGenerated asc"])
    else:
        label = quoted(f'"{KFP_RUN_ID_LABEL}":"{target.run}"')
        query = "\n".join([
            "let pods = KubePodInventory", window, f"| where Namespace == {namespace} and PodLabel contains {label}",
            "| distinct Name;", "ContainerLogV2", window, f"| where PodNamespace == {namespace} and PodName in (pods)",
            "| project TimeGenerated, PodName, ContainerName, LogSource, LogMessage", "| order by TimeGenerated asc"])
    notes = []
    if not spec.switch(logs.enabled):
        notes.append("cluster.logs.enabled is off for this stack: Container Insights is not installed, so a pod gone "
                     "with its node left no logs; turn it on to keep them")
    if workspace is None:
        notes.append("name the workspace with --workspace $(pulumi stack output logWorkspaceId) for the link and "
                     "the command (it is created on deployment)")
        return LogQuery("KQL (Log Analytics)", query, None, None, tuple(notes))
    command = (f"az monitor log-analytics query --workspace \"$(az monitor log-analytics workspace show --ids "
               f"{shlex.quote(workspace)} --query customerId -o tsv)\" --analytics-query {shlex.quote(query)}")
    notes.append("the link opens the workspace's Logs page: paste the query there")
    return LogQuery("KQL (Log Analytics)", query, PORTAL_LOGS.format(workspace=workspace), command, tuple(notes))
