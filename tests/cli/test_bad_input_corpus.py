"""The bad-input corpus: every case is refused the same way on the three paths a user takes.

1. `spotkube plan` on a stack file;
2. the real program (`infra/__main__.py`) under the offline engine, handed the config Pulumi would
   hand it (`as_pulumi_config`, which test_config_paths.py checks against the engine's own rules);
3. the components used from Python, with the same setting in snake_case args.

Each refusal must be one message that names the file or the component, the key path as that path
spells it, the value and what is accepted; exit code 2 for the CLI, a clean `RunError` for the
components, no traceback and nothing registered. File-level cases (repeated keys, namespaces,
YAML-only scalars) live in test_config_paths.py, because they have no Python form.
"""

from __future__ import annotations

import re
import runpy
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import BaseModel
from pydantic.alias_generators import to_snake
from typer.testing import CliRunner

from spotkube import AksGpuCluster, GkeGpuCluster, KubeflowPipelines
from spotkube.cli.app import app
from spotkube.clouds import CLOUDS
from spotkube.components.offline import ProgramFailed, record_program
from spotkube.platform.input_messages import model_in, python_path
from spotkube.platform.project import as_pulumi_config, find_project, stack_config
from spotkube.platform.spec import KubeflowSettings

REPO = Path(__file__).resolve().parents[2]
STACK = "t"
FILE = f"stacks/Pulumi.{STACK}.yaml"
LONG = "x" * 10_000

AKS_BASE: dict[str, Any] = {
    "cloud": "aks", "environment": "dev", "region": "uksouth", "kubeflow": {"enabled": False},
    "gpuPools": [{"name": "t4", "machine": "Standard_NC4as_T4_v3", "max": 2}],
    "spotPools": [{"name": "cpu", "machine": "Standard_D4s_v3", "max": 2}],
    "cluster": {"deployer": {"objectId": "c0ffee00-0000-4000-8000-000000000001", "principalType": "ServicePrincipal"}},
}
GKE_BASE: dict[str, Any] = {
    "cloud": "gke", "environment": "dev", "region": "us-central1", "kubeflow": {"enabled": False},
    "cluster": {"project": "my-ml-platform"},
    "gpuPools": [{"name": "l4", "machine": "g2-standard-8", "max": 2}],
    "spotPools": [{"name": "cpu", "machine": "e2-standard-8", "max": 2}],
}


@dataclass(frozen=True)
class Bad:
    name: str
    setting: dict[str, Any]  # merged into the base stack (top-level keys replace, objects merge)
    key: str  # the key path as a stack file spells it, without `spotkube:`
    accepted: str  # a part of the message that says what is accepted
    shows: str | None = None  # a part of the message that shows the value
    cloud: str = "aks"
    never_shows: str | None = None  # a secret the message must not repeat
    paths: tuple[str, ...] = field(default=("plan", "program", "python"))


def pool(**changes: Any) -> dict[str, Any]:
    return {"gpuPools": [{**AKS_BASE["gpuPools"][0], **changes}]}


def gke_pool(**changes: Any) -> dict[str, Any]:
    return {"gpuPools": [{**GKE_BASE["gpuPools"][0], **changes}]}


def cpu_pool(**changes: Any) -> dict[str, Any]:
    return {"spotPools": [{**AKS_BASE["spotPools"][0], **changes}]}


RESERVED = "use your own prefix"
LABEL_SYNTAX = "is not one Kubernetes accepts"
TAINT_SYNTAX = "is not a taint Kubernetes accepts"

CASES: list[Bad] = [
    # strict types: no bool-as-int, no numeric strings, no text booleans
    Bad("min a boolean", {"systemPool": {"min": True}}, "systemPool.min", "use a whole number", "True is a boolean"),
    Bad("min numeric text", {"systemPool": {"min": "2"}}, "systemPool.min", "use a whole number", "'2' is text"),
    Bad("max a fraction", {"systemPool": {"max": 2.5}}, "systemPool.max", "use a whole number", "2.5 is a number"),
    Bad("pool max numeric text", pool(max="4"), "gpuPools[0].max", "use a whole number", "'4' is text"),
    Bad("enabled no", {"platformPool": {"enabled": "no"}}, "platformPool.enabled", "use true or false", "'no' is text"),
    Bad("enabled 1", {"platformPool": {"enabled": 1}}, "platformPool.enabled", "use true or false", "1 is a number"),
    Bad("private yes", {"cluster": {"private": "yes"}}, "cluster.private", "use true or false", "'yes' is text"),
    Bad("local accounts 'true'", {"cluster": {"localAccountsDisabled": "true"}}, "cluster.localAccountsDisabled",
        "use true or false", "'true' is text"),
    Bad("critical addons 0", {"systemPool": {"criticalAddonsOnly": 0}}, "systemPool.criticalAddonsOnly",
        "use true or false", "0 is a number"),
    Bad("pools a mapping", {"gpuPools": {"t4": {"machine": "Standard_NC4as_T4_v3"}}}, "gpuPools",
        "use a list of GPU pools", "is a mapping", paths=("python",)),
    Bad("a pool that is a number", {"gpuPools": [1]}, "gpuPools[0]", "use a mapping of GPU pool settings",
        "1 is a number", paths=("python",)),
    Bad("zones as text", {"systemPool": {"zones": "1"}}, "systemPool.zones", "use a list of strings", "'1' is text"),
    Bad("a zone as a number", {"systemPool": {"zones": [1]}}, "systemPool.zones[0]", "use text", "1 is a number"),
    Bad("a label value as a number", {"systemPool": {"labels": {"team": 1}}}, "systemPool.labels.team", "use text",
        "1 is a number"),
    Bad("labels as a list", {"systemPool": {"labels": ["team=ml"]}}, "systemPool.labels",
        "use a mapping of strings to strings", "is a list"),
    Bad("max price as text", pool(capacity="spot", maxPrice="0.5"), "gpuPools[0].maxPrice", "use a number",
        "'0.5' is text"),
    Bad("max price a boolean", pool(maxPrice=True), "gpuPools[0].maxPrice", "use a number", "True is a boolean"),
    Bad("image size as text", pool(imageGb="7GB"), "gpuPools[0].imageGb", "use a number", "'7GB' is text"),
    Bad("image size not above 0", gke_pool(imageGb=0), "gpuPools[0].imageGb", "greater than 0", cloud="gke"),
    Bad("eviction limit as text", {"kubeflow": {"enabled": False, "evictionRetryLimit": "3"}},
        "kubeflow.evictionRetryLimit", "use a whole number", "'3' is text"),
    Bad("expose ui as text", {"kubeflow": {"enabled": False, "exposeUi": "false"}}, "kubeflow.exposeUi",
        "use true or false", "'false' is text"),
    Bad("eviction rate as text", {"cost": {"evictionRate": "0.1"}}, "cost.evictionRate", "use a number",
        "'0.1' is text", paths=("plan", "program")),
    Bad("hours as text", {"cost": {"hours": {"system": "3"}}}, "cost.hours.system", "use a number", "'3' is text",
        paths=("plan", "program")),
    Bad("gpu count as text", pool(gpu={"type": "nvidia-tesla-t4", "count": "1"}), "gpuPools[0].gpu.count",
        "use a whole number", "'1' is text"),
    Bad("grace a boolean", {"cluster": {"autoscaler": {"maxGracefulTerminationSec": True}}},
        "cluster.autoscaler.maxGracefulTerminationSec", "use a whole number", "True is a boolean"),
    Bad("a pool name that is null", {"systemPool": {"name": None}}, "systemPool.name", "use text", "None is null"),
    Bad("a pool name as a number", cpu_pool(name=7), "spotPools[0].name", "use text", "7 is a number"),
    Bad("the project as a number", {"cluster": {"project": 123456}}, "cluster.project", "use text", "123456",
        cloud="gke"),
    # values from a fixed set, with "did you mean"
    Bad("capacity in capitals", pool(capacity="Spot"), "gpuPools[0].capacity", "did you mean 'spot'?", "'Spot'"),
    Bad("eviction policy lower case", pool(capacity="spot", evictionPolicy="delete"), "gpuPools[0].evictionPolicy",
        "did you mean 'Delete'?", "'delete'"),
    Bad("network policy in capitals", {"cluster": {"networkPolicy": "Cilium"}}, "cluster.networkPolicy",
        "did you mean 'cilium'?", "'Cilium'"),
    Bad("expander misspelt", {"cluster": {"autoscaler": {"expander": "priorty"}}}, "cluster.autoscaler.expander",
        "did you mean 'priority'?", "'priorty'"),
    Bad("failure limit above the eviction limit", {"kubeflow": {"enabled": False, "evictionRetryLimit": 2,
                                                                "failureRetryLimit": 3}},
        "kubeflow", "lower it or raise evictionRetryLimit", "failureRetryLimit 3 is above evictionRetryLimit 2",
        paths=("plan", "program")),
    Bad("gpu driver misspelt", gke_pool(gpuDriver="LATES"), "gpuPools[0].gpuDriver", "did you mean 'LATEST'?",
        "'LATES'", cloud="gke"),
    Bad("profile misspelt", {"cluster": {"project": "my-ml-platform", "autoscaler": {"profile": "BALANCE"}}},
        "cluster.autoscaler.profile", "did you mean 'BALANCED'?", "'BALANCE'", cloud="gke"),
    Bad("login misspelt", {"cluster": {"deployer": {"login": "azcli"}}}, "cluster.deployer.login",
        "use 'azurecli', 'workloadidentity', 'spn' or 'msi'", "'azcli'"),
    # unknown keys, with "did you mean"
    Bad("a pool key misspelt", {"systemPool": {"mni": 1}}, "systemPool.mni", "did you mean min?"),
    Bad("a pool key in lower case", pool(maxprice=0.5), "gpuPools[0].maxprice", "did you mean maxPrice?"),
    Bad("a cluster key misspelt", {"cluster": {"privat": True}}, "cluster.privat", "did you mean private?"),
    Bad("a kubeflow key in other capitals", {"kubeflow": {"enabled": False, "exposeUI": True}}, "kubeflow.exposeUI",
        "did you mean exposeUi?"),
    Bad("an unknown autoscaler key", {"cluster": {"autoscaler": {"scaleDownDelay": "5m"}}},
        "cluster.autoscaler.scaleDownDelay", "did you mean scaleDownDelayAfterAdd?"),
    Bad("an unknown deployer key", {"cluster": {"deployer": {"egress": ["203.0.113.0/24"]}}},
        "cluster.deployer.egress", "did you mean egressRanges?"),
    # ranges
    Bad("too many nodes", pool(max=1001), "gpuPools[0].max", "use a whole number from 0 to 1000", "1001"),
    Bad("negative min", {"systemPool": {"min": -1}}, "systemPool.min", "use a whole number from 0 to 1000", "-1"),
    Bad("eviction rate above 1", {"cost": {"evictionRate": 1.5}}, "cost.evictionRate", "use a number from 0 to 1",
        "1.5", paths=("plan", "program")),
    Bad("failure limit 11", {"kubeflow": {"enabled": False, "failureRetryLimit": 11}}, "kubeflow.failureRetryLimit",
        "use a whole number from 0 to 10", "11"),
    Bad("the replaced retryLimit", {"kubeflow": {"enabled": False, "retryLimit": 3}}, "kubeflow",
        "a retryLimit: N becomes evictionRetryLimit: N", "retryLimit was replaced by evictionRetryLimit",
        paths=("plan", "program")),
    Bad("a window on two days on AKS", {"cluster": {"maintenance": {"window": {
        "days": ["Saturday", "Sunday"], "start": "02:00", "hours": 4}}}}, "cluster.maintenance.window.days",
        "name one day", "['Saturday', 'Sunday']"),
    Bad("a window of 3 hours", {"cluster": {"maintenance": {"window": {"days": ["Saturday"], "start": "02:00",
                                                                         "hours": 3}}}},
        "cluster.maintenance.window.hours", "use a whole number from 4 to 24", "3"),
    Bad("17 GPUs", pool(gpu={"type": "nvidia-tesla-t4", "count": 17}), "gpuPools[0].gpu.count",
        "use a whole number from 1 to 16", "17"),
    Bad("a zero max price", pool(maxPrice=0), "gpuPools[0].maxPrice", "use -1 (pay up to the on-demand price) or a "
        "positive USD/hour amount", "0 is not allowed"),
    Bad("a max price with 6 decimals", pool(maxPrice=0.123456), "gpuPools[0].maxPrice", "more than 5 decimals",
        "0.123456"),
    # Kubernetes' label and taint syntax, and the reserved prefixes
    Bad("a label key with a space", {"systemPool": {"labels": {"bad key!": "x"}}}, "systemPool.labels",
        "a name of 1-63 letters", "'bad key!'"),
    Bad("a label value with a space", {"systemPool": {"labels": {"team": "ml ops"}}}, "systemPool.labels",
        "a value is empty or 1-63 letters", "'ml ops'"),
    Bad("a label key with two slashes", {"platformPool": {"labels": {"a/b/c": "x"}}}, "platformPool.labels",
        "is not a lower-case DNS subdomain", "'a/b'"),
    Bad("a label name of 64 characters", {"systemPool": {"labels": {"n" * 64: "x"}}}, "systemPool.labels",
        "the name has 64 characters", LABEL_SYNTAX),
    Bad("a label value of 64 characters", cpu_pool(labels={"team": "v" * 64}), "spotPools[0].labels",
        "it has 64 characters", LABEL_SYNTAX),
    Bad("a label prefix in capitals", pool(labels={"Example.com/team": "ml"}), "gpuPools[0].labels",
        "is not a lower-case DNS subdomain", "'Example.com'"),
    Bad("a label ending in a dash", pool(labels={"team-": "ml"}), "gpuPools[0].labels", "starts and ends with a "
        "letter or digit", "'team-'"),
    Bad("an empty label prefix", pool(labels={"/team": "ml"}), "gpuPools[0].labels", "the prefix before `/` is "
        "empty", "'/team'"),
    Bad("a kubernetes.io label", {"systemPool": {"labels": {"kubernetes.io/role": "gpu"}}},
        "systemPool.labels.kubernetes.io/role", "a kubelet may set only kubelet.kubernetes.io/ and "
        "node.kubernetes.io/ labels there", "'kubernetes.io/role'"),
    Bad("a node-restriction label", pool(labels={"node-restriction.kubernetes.io/team": "ml"}),
        "gpuPools[0].labels.node-restriction.kubernetes.io/team", "so the cloud refuses the pool", RESERVED),
    Bad("a kubernetes.io subdomain label", pool(labels={"team.kubernetes.io/name": "ml"}),
        "gpuPools[0].labels.team.kubernetes.io/name", "which Kubernetes keeps for itself", RESERVED),
    Bad("a k8s.io label", pool(labels={"k8s.io/team": "ml"}), "gpuPools[0].labels.k8s.io/team",
        "which Kubernetes keeps for itself", RESERVED),
    Bad("an AKS label", pool(labels={"kubernetes.azure.com/mode": "user"}),
        "gpuPools[0].labels.kubernetes.azure.com/mode", "which AKS keeps for its own node labels", RESERVED),
    Bad("a GKE label", gke_pool(labels={"cloud.google.com/gke-nodepool": "x"}),
        "gpuPools[0].labels.cloud.google.com/gke-nodepool", "which GKE keeps for its own node labels", RESERVED,
        cloud="gke"),
    Bad("a spotkube label", cpu_pool(labels={"spotkube.io/pool": "x"}), "spotPools[0].labels.spotkube.io/pool",
        "which is spotkube's scheduling contract", RESERVED),
    Bad("a taint with spaces", pool(taints=["team name=ml ops:NoSchedule"]), "gpuPools[0].taints",
        "a name of 1-63 letters", "'team name=ml ops:NoSchedule'"),
    Bad("a taint without an effect", pool(taints=["dedicated=ml"]), "gpuPools[0].taints",
        "use key=value:Effect with Effect one of NoSchedule, PreferNoSchedule, NoExecute", "'dedicated=ml'"),
    Bad("a taint with a misspelt effect", cpu_pool(taints=["a=b:NoScheduled"]), "spotPools[0].taints",
        "Effect one of NoSchedule", "'a=b:NoScheduled'"),
    Bad("a taint without a key", pool(taints=["=b:NoSchedule"]), "gpuPools[0].taints", "the name is empty",
        TAINT_SYNTAX),
    Bad("a taint value with a slash", pool(taints=["team=a/b:NoSchedule"]), "gpuPools[0].taints",
        "a value is empty or 1-63", "'a/b'"),
    Bad("an AKS taint", pool(taints=["kubernetes.azure.com/scalesetpriority=spot:NoSchedule"]),
        "gpuPools[0].taints[0]", "which AKS keeps for its own node labels and taints", RESERVED),
    Bad("a GKE taint", gke_pool(taints=["cloud.google.com/gke-spot=true:NoSchedule"]), "gpuPools[0].taints[0]",
        "which GKE keeps", RESERVED, cloud="gke"),
    Bad("a spotkube taint", cpu_pool(taints=["spotkube.io/x=y:NoSchedule"]), "spotPools[0].taints[0]",
        "spotkube's scheduling contract", RESERVED),
    # cross-field rules, on every pool
    Bad("eviction policy on an on-demand pool", pool(capacity="on-demand", evictionPolicy="Deallocate"),
        "gpuPools[0].evictionPolicy", "applies to spot pools only", "'Deallocate'"),
    Bad("max price on an on-demand pool", pool(capacity="on-demand", maxPrice=0.5), "gpuPools[0].maxPrice",
        "applies to spot pools only", "0.5"),
    Bad("a capacity reservation on a spot pool",
        pool(capacity="spot", capacityReservationGroup={"create": {"count": 1}}),
        "gpuPools[0].capacityReservationGroup", "remove it, or set capacity: on-demand", "spot VMs never use it"),
    Bad("a reservation count as text",
        pool(capacity="on-demand", capacityReservationGroup={"create": {"count": "1"}}),
        "gpuPools[0].capacityReservationGroup.create.count", "use a whole number", "'1' is text"),
    Bad("a registry by its login server", {"cluster": {"registries": ["teamimages.azurecr.io"]}},
        "cluster.registries[0]", "/providers/Microsoft.ContainerRegistry/registries/<name>",
        "'teamimages.azurecr.io'"),
    Bad("artifact streaming", pool(artifactStreaming=True), "gpuPools[0].artifactStreaming",
        "remove it (or set false)", "artifactStreamingProfile"),
    Bad("gpu driver on AKS", pool(gpuDriver="LATEST"), "gpuPools[0].gpuDriver", "is a GKE setting"),
    Bad("eviction policy on GKE", gke_pool(evictionPolicy="Delete"), "gpuPools[0].evictionPolicy",
        "GKE always deletes preempted spot and preemptible VMs", cloud="gke"),
    Bad("max price on GKE", gke_pool(maxPrice=0.5), "gpuPools[0].maxPrice", "GKE spot prices are set by Google",
        cloud="gke"),
    Bad("a system pool zone", {"systemPool": {"zones": ["4"]}}, "systemPool.zones[0]", "use '1', '2' or '3'", "'4'"),
    Bad("a platform pool zone", {"platformPool": {"zones": ["0"]}}, "platformPool.zones[0]", "use '1', '2' or '3'",
        "'0'"),
    Bad("a GKE system pool zone elsewhere", {"systemPool": {"zones": ["us-east1-b"]}}, "systemPool.zones[0]",
        "us-central1", "us-east1-b", cloud="gke"),
    Bad("an on-demand spot pool", cpu_pool(capacity="on-demand"), "spotPools[0].capacity",
        "use 'spot' or 'preemptible'"),
    Bad("a spot system pool", {"systemPool": {"capacity": "spot"}}, "systemPool.capacity", "must be 'on-demand'",
        "'spot'"),
    Bad("preemptible on AKS", pool(capacity="preemptible"), "gpuPools[0].capacity", "on AKS use 'spot' or "
        "'on-demand'", "'preemptible'"),
    Bad("min above max", pool(min=3, max=2), "gpuPools[0].min", "use 0 <= min <= max <= 1000", "3 is above max 2"),
    Bad("two pools with one name", cpu_pool(name="t4"), "gpuPools[0].name", "pool names must be unique", "'t4'"),
    Bad("an empty system pool", {"systemPool": {"min": 0}}, "systemPool.min", "the system pool needs min >= 1", "0"),
    Bad("a GKE setting on AKS", {"cluster": {"project": "my-ml-platform"}}, "cluster.project", "is a GKE setting"),
    Bad("an AKS setting on GKE", {"cluster": {"project": "my-ml-platform", "resourceGroupName": "rg"}},
        "cluster.resourceGroupName", "a GKE cluster lives in cluster.project", cloud="gke"),
    Bad("the azure network policy on GKE", {"cluster": {"project": "my-ml-platform", "networkPolicy": "azure"}},
        "cluster.networkPolicy", "on GKE use 'cilium' or 'calico'", "'azure' is an AKS network policy", cloud="gke"),
    # regions and versions
    Bad("a misspelt Azure region", {"region": "uksuoth"}, "region", "did you mean 'uksouth'?", "'uksuoth'"),
    Bad("a Google region on AKS", {"region": "us-central1"}, "region", "an AKS stack takes a region such as eastus",
        "'us-central1' is a GKE region"),
    Bad("a misspelt Google region", {"region": "europe-west44"}, "region",
        "for a region newer than spotkube's list, set cluster.allow", "'europe-west44'", cloud="gke"),
    Bad("an Azure region on GKE", {"region": "uksouth"}, "region", "a GKE stack takes a region such as us-central1",
        "'uksouth' is an AKS region", cloud="gke"),
    Bad("an unlisted region of the wrong shape", {"region": "new-region-1", "cluster": {"allowUnlistedRegion": True}},
        "region", "lower-case letters and digits", "'new-region-1'"),
    Bad("version latest", {"cluster": {"kubernetesVersion": "latest"}}, "cluster.kubernetesVersion",
        "use major.minor (e.g. 1.33", "'latest'"),
    Bad("version with a v", {"cluster": {"project": "my-ml-platform", "kubernetesVersion": "v1.33"}},
        "cluster.kubernetesVersion", "or a GKE version", "'v1.33'", cloud="gke"),
    Bad("a GKE version on AKS", {"cluster": {"kubernetesVersion": "1.33.2-gke.1111000"}},
        "cluster.kubernetesVersion", "is not a Kubernetes version AKS takes", "'1.33.2-gke.1111000'"),
    Bad("a major version only", {"cluster": {"kubernetesVersion": "1"}}, "cluster.kubernetesVersion",
        "major.minor.patch", "'1'"),
    Bad("a channel in capitals", {"cluster": {"channel": "Stable"}}, "cluster.channel", "use one of stable",
        "'Stable'"),
    # credentials never travel in a URL, and are never echoed
    Bad("a token in the manifests URL",
        {"kubeflow": {"enabled": False, "repository": "https://ci:ghp_s3cr3t@github.com/kubeflow/pipelines"}},
        "kubeflow.repository", "let git's credential helper", "***@github.com", never_shows="ghp_s3cr3t"),
    Bad("a token in the URL's query",
        {"kubeflow": {"enabled": False, "repository": "https://github.com/kubeflow/pipelines?token=s3cr3t"}},
        "kubeflow.repository", "without user, password, token or query", never_shows="s3cr3t"),
    Bad("a password in the plugin image", {"devicePlugin": {"image": "bot:pa55w0rd@registry.example.com/nvidia/dp"}},
        "devicePlugin.image", "image pull secret", "***@registry.example.com", never_shows="pa55w0rd",
        paths=("plan", "program")),
    Bad("an http manifests URL", {"kubeflow": {"enabled": False, "repository": "http://github.com/kubeflow/pipelines"}},
        "kubeflow.repository", "use a value matching", "'http://github.com/kubeflow/pipelines'"),
    # long values and stray newlines
    Bad("a 10 000 character environment", {"environment": LONG}, "environment",
        "use 1 to 16 lowercase letters, digits and hyphens, starting with a letter", "(10000 characters)"),
    Bad("a 10 000 character pool name", pool(name=LONG), "gpuPools[0].name", "lower-case letters and digits",
        "(10000 characters)"),
    Bad("a 10 000 character label", pool(labels={"team": LONG}), "gpuPools[0].labels", "it has 10000 characters",
        "(10000 characters)"),
    Bad("a 10 000 character GKE zone", gke_pool(zones=[LONG]), "gpuPools[0].zones", "zones of us-central1 that offer",
        "(10000 characters)", cloud="gke"),
    Bad("a 10 000 character UI range", {"kubeflow": {"enabled": False, "exposeUi": True, "uiSourceRanges": [LONG]}},
        "kubeflow.uiSourceRanges", "is not a CIDR", "(10000 characters)"),
    Bad("a 10 000 character plugin image", {"devicePlugin": {"image": LONG}}, "devicePlugin.image",
        "is not an image repository without a tag", "(10000 characters)", paths=("plan", "program")),
    Bad("a 10 000 character label key", pool(labels={LONG: "x"}), "gpuPools[0].labels", "the name has 10000 "
        "characters", "(10000 characters)"),
    Bad("a pool name with a newline", pool(name="t4\n"), "gpuPools[0].name", "is not a valid AKS pool name",
        "'t4\\n'"),
    Bad("a GKE pool name with a newline", gke_pool(name="l4\n"), "gpuPools[0].name", "not a valid GKE node pool name",
        "'l4\\n'", cloud="gke"),
    Bad("an environment with a newline", {"environment": "dev\n"}, "environment", "e.g. dev, staging or prod",
        "'dev\\n'"),
    # the messages an external review found confusing, on every path
    Bad("an environment in capitals", {"environment": "Dev"}, "environment",
        "use 1 to 16 lowercase letters, digits and hyphens, starting with a letter, e.g. dev, staging or prod",
        "'Dev'"),
    Bad("a max price of NaN", pool(maxPrice=float("nan")), "gpuPools[0].maxPrice",
        "use a finite number (Spot pools: the most to pay, in USD/hour", "nan", paths=("python",)),
    Bad("a max price of infinity", pool(maxPrice=float("inf")), "gpuPools[0].maxPrice",
        "or -1: never evict on price", "inf", paths=("python",)),
    Bad("a preloaded disk without image streaming, in Python", gke_pool(secondaryBootDisk={
        "diskImage": "global/images/preloaded"}), "gpuPools[0].secondaryBootDisk",
        "set gpu_pools[0].image_streaming: true", cloud="gke", paths=("python",)),
    Bad("a flex-start pool running 0 hours", gke_pool(capacity="flex-start", maxRunHours=0),
        "gpuPools[0].maxRunHours", "use 1 to 168", "0", cloud="gke"),
    Bad("a project with a newline", {"cluster": {"project": "my-ml-platform\n"}}, "cluster.project",
        "is not a Google Cloud project id", "'my-ml-platform\\n'", cloud="gke"),
    # other single-field rules
    Bad("a plugin version without v", {"devicePlugin": {"version": "0.17.0"}}, "devicePlugin.version",
        "use a value matching", "'0.17.0'", paths=("plan", "program")),
    Bad("a plugin image with a tag", {"devicePlugin": {"image": "nvcr.io/nvidia/k8s-device-plugin:v0.17.0"}},
        "devicePlugin.image", "set the tag in devicePlugin.version", paths=("plan", "program")),
    Bad("kubeflow version latest", {"kubeflow": {"enabled": False, "version": "latest"}}, "kubeflow.version",
        "use a value matching", "'latest'"),
    Bad("ui ranges without exposure", {"kubeflow": {"enabled": False, "uiSourceRanges": ["203.0.113.0/24"]}},
        "kubeflow", "set exposeUi or remove uiSourceRanges"),
    Bad("a storage class with spaces", {"kubeflow": {"enabled": False, "storageClass": "Fast SSD"}},
        "kubeflow.storageClass", "use a value matching", "'Fast SSD'"),
    Bad("a host address as a range", {"cluster": {"authorizedIpRanges": ["10.0.0.1/8"]}},
        "cluster.authorizedIpRanges[0]", "use e.g. 203.0.113.0/24", "'10.0.0.1/8'"),
    Bad("an egress range that is a word", {"cluster": {"deployer": {"egressRanges": ["any"]}}},
        "cluster.deployer.egressRanges[0]", "is not a CIDR", "'any'"),
    Bad("an admin group by name", {"cluster": {"adminGroupObjectIds": ["platform-admins"]}},
        "cluster.adminGroupObjectIds[0]", "use the group's object id", "'platform-admins'"),
    Bad("a propagation wait in words", {"cluster": {"deployer": {"grantPropagationWait": "5 minutes"}}},
        "cluster.deployer.grantPropagationWait", "use a value matching", "'5 minutes'"),
    Bad("a provision time in seconds", {"cluster": {"autoscaler": {"maxNodeProvisionTime": "600s"}}},
        "cluster.autoscaler.maxNodeProvisionTime", "is not accepted by AKS", "'600s'"),
    Bad("a CPU size for a GPU pool", pool(machine="Standard_D4s_v3"), "gpuPools[0].machine",
        "carries no GPU: Azure's D series has none", "'Standard_D4s_v3'"),
    Bad("a retired GPU size", pool(machine="Standard_NC6"), "gpuPools[0].machine", "is retired; use",
        "'Standard_NC6'"),
    Bad("an Azure size on GKE", gke_pool(machine="Standard_NC4as_T4_v3"), "gpuPools[0].machine",
        "is not a GKE machine type; use e.g. g2-standard-8", "'Standard_NC4as_T4_v3'", cloud="gke"),
    Bad("a GPU that doesn't match the size", pool(gpu={"type": "nvidia-tesla-a100", "count": 1}), "gpuPools[0].gpu",
        "remove gpu or correct it", "nvidia-tesla-a100"),
    Bad("hours for a pool that doesn't exist", {"cost": {"hours": {"nosuch": 3}}}, "cost.hours.nosuch",
        "is not a pool of this stack; use one of", "'nosuch'", paths=("plan", "program")),
    Bad("a workload on a pool that doesn't exist", {"cost": {"workloads": [{"name": "x", "pool": "nope", "hours": 1}]}},
        "cost.workloads[0].pool", "is not a pool of this stack", "'nope'", paths=("plan", "program")),
]


def _merge(base: dict[str, Any], setting: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in setting.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = {**out[key], **value}
        else:
            out[key] = value
    return out


def _values(case: Bad) -> dict[str, Any]:
    return _merge(AKS_BASE if case.cloud == "aks" else GKE_BASE, case.setting)


def _snake(model: type[BaseModel], value: Any) -> Any:
    """A stack file's setting as Python args spell it: field names in snake_case, the user's own keys
    (labels, hours) and every value untouched."""
    if isinstance(value, list):
        return [_snake(model, item) for item in value]
    if not isinstance(value, Mapping):
        return value
    out = {}
    for key, item in value.items():
        found = next(((n, f) for n, f in model.model_fields.items() if key in (n, f.alias)), None)
        if found is None:
            out[key] = item
            continue
        name, info = found
        inner = model_in(info.annotation)
        out[name] = _snake(inner, item) if inner is not None else item
    return out


def _write_project(root: Path, values: Mapping[str, Any]) -> None:
    shutil.copy(REPO / "Pulumi.yaml", root / "Pulumi.yaml")
    shutil.copytree(REPO / "infra", root / "infra", dirs_exist_ok=True)
    (root / "stacks").mkdir(exist_ok=True)
    config = {f"spotkube:{key}": value for key, value in values.items()}
    (root / FILE).write_text(yaml.safe_dump({"config": config}, sort_keys=False, width=10**6))


def _one_problem(message: str, where: str, key: str, case: Bad, accepted: str | None = None) -> None:
    assert "Traceback" not in message
    lines = [line for line in message.splitlines() if line.strip()]
    assert len(lines) == 1, f"one message expected:\n{message[:3000]}"
    assert lines[0].startswith(f"{where}: {key}: "), lines[0][:500]
    assert (accepted or case.accepted) in lines[0], lines[0][:500]
    if case.shows:
        assert case.shows in lines[0], lines[0][:500]
    if case.never_shows:
        assert case.never_shows not in message
    assert len(lines[0]) < 1200, "a value was echoed whole"


def _python_call(case: Bad) -> tuple[str, str, Any] | None:
    """(component, key path in its args, the call) for the Python path of a case."""
    values = _values(case)
    top = next(iter(case.setting))
    if top == "kubeflow":
        args = _snake(KubeflowSettings, {k: v for k, v in values["kubeflow"].items() if k != "enabled"})
        inner = case.key.removeprefix("kubeflow").lstrip(".")
        return "KubeflowPipelines", python_path(KubeflowSettings, inner) if inner else "args", (
            lambda: KubeflowPipelines(STACK, args))
    cluster_keys = {"environment", "region", "systemPool", "platformPool", "gpuPools", "spotPools", "cluster"}
    model = CLOUDS[case.cloud].spec_model
    args = _snake(model, {k: v for k, v in values.items() if k in cluster_keys})
    component = AksGpuCluster if case.cloud == "aks" else GkeGpuCluster
    return component.__name__, python_path(model, case.key), lambda: component(STACK, args)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_a_bad_input_is_refused_the_same_way_on_every_path(case: Bad, tmp_path: Path) -> None:
    values = _values(case)
    _write_project(tmp_path, values)
    key = f"spotkube:{case.key}"
    if "plan" in case.paths:
        plan = CliRunner().invoke(app, ["plan", "--stack", STACK, "--project", str(tmp_path), "--format", "json"])
        assert plan.exception is None or isinstance(plan.exception, SystemExit), plan.exception
        assert plan.exit_code == 2, plan.stdout[-2000:]
        _one_problem(plan.stderr.removeprefix("error: "), FILE, key, case)
    if "program" in case.paths:
        project = find_project(tmp_path)
        config = as_pulumi_config(stack_config(project, STACK))
        sys.path.insert(0, str(project.main.parent))
        try:
            with pytest.raises(ProgramFailed) as failed:
                record_program(lambda: runpy.run_path(str(project.main), run_name="__main__"),
                               project=project.name, stack=STACK, config=config)
        finally:
            sys.path.remove(str(project.main.parent))
        assert failed.value.registrations == []
        _one_problem(str(failed.value), FILE, key, case)
    if "python" in case.paths:
        component, python_key, call = _python_call(case)
        with pytest.raises(ProgramFailed) as refused:
            record_program(call, project="spotkube", stack=STACK, config={})
        assert refused.value.registrations == []
        # A suggested key is spelt as Python args spell it.
        accepted = re.sub(r"did you mean (\w+)\?", lambda m: f"did you mean {to_snake(m.group(1))}?", case.accepted)
        _one_problem(str(refused.value), f"{component} {STACK!r} args", python_key, case, accepted)


def test_the_corpus_is_large_and_covers_more_than_one_cloud() -> None:
    assert len(CASES) >= 100
    assert len({c.name for c in CASES}) == len(CASES)
    clouds = {c.cloud for c in CASES}
    assert len(clouds) > 1 and clouds <= set(CLOUDS)
    assert sum("python" in c.paths for c in CASES) >= 90


def test_labels_a_kubelet_may_set_are_accepted_and_others_of_kubernetes_are_not() -> None:
    from spotkube.clouds import parse_spec
    from spotkube.platform.errors import SpecError

    accepted = {"node.kubernetes.io/team": "ml", "kubelet.kubernetes.io/team": "ml", "example.com/team": "ml"}
    spec = parse_spec(_merge(AKS_BASE, pool(labels=accepted)), FILE)
    assert spec.gpu_pools[0].labels == accepted
    with pytest.raises(SpecError, match=re.escape("uses the prefix kubernetes.io/, which Kubernetes keeps for itself")):
        parse_spec(_merge(AKS_BASE, pool(labels={"node-restriction.kubernetes.io/team": "ml"})), FILE)
