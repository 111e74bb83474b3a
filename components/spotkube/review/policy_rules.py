"""Guardrails over what a Pulumi program registers: the rules of the `policy/` pack, as plain functions
that the plan runs too (docs/architecture.md#the-policy-pack).

Why plain functions: `pulumi-policy` pins protobuf 5 and kfp needs protobuf 6, so nothing in the
library may import `pulumi_policy`, and these rules import no Pulumi at all. They take the inputs as
the engine sees them (camelCase) and return one sentence per violation.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from spotkube.clouds import registered_pools as node_pools
from spotkube.clouds import upgrade_exposures
from spotkube.platform import contract
from spotkube.platform.cloud import mapping
from spotkube.platform.records import record
from spotkube.platform.registration import Registration, StackOutput

K8S_SECRET = "kubernetes:core/v1:Secret"

#: The Secrets Kubeflow Pipelines' manifests ship with well-known values (kubeflow/pipelines,
#: manifests/kustomize), as (Secret name, key, default value). An empty default means "empty or absent".
KFP_DEFAULT_CREDENTIALS: tuple[tuple[str, str, str], ...] = (
    ("mlpipeline-minio-artifact", "accesskey", "minio"),
    ("mlpipeline-minio-artifact", "secretkey", "minio123"),
    ("mysql-secret", "password", ""),
)


# --- Resource rules -------------------------------------------------------------------------------


def gpu_pools_carry_gpu_taint(type_token: str, name: str, inputs: Mapping[str, Any]) -> list[str]:
    """Without the GPU taint any pod may land on a GPU node and hold it up (and its cost) for work
    that needs no GPU; AKS never adds the taint and GKE only sometimes does."""
    return [
        f"{pool.where}: GPU pool ({pool.machine}) lacks the taint {contract.GPU_TAINT}; add it so only "
        "pods that request GPUs land there"
        for pool in node_pools(type_token, name, inputs)
        if pool.has_gpu and contract.GPU_TAINT not in pool.parsed_taints
    ]


def spot_pools_delete_and_scale_to_zero(type_token: str, name: str, inputs: Mapping[str, Any]) -> list[str]:
    """Deallocated spot nodes still count against quota and hamper scaling, and a spot pool with a
    floor above 0 pays for idle nodes that can be evicted anyway."""
    messages = []
    for pool in node_pools(type_token, name, inputs):
        if not pool.interruptible:
            continue
        if pool.eviction_policy not in (None, "Delete"):
            messages.append(
                f"{pool.where}: spot pool uses eviction policy {pool.eviction_policy!r}; use 'Delete' "
                "(deallocated nodes still count against quota and hamper scaling)"
            )
        if pool.min is None:
            messages.append(f"{pool.where}: spot pool has no autoscaling minimum; enable the autoscaler with min 0")
        elif pool.min != 0:
            messages.append(f"{pool.where}: spot pool has min {pool.min}; use min 0 so an idle pool costs nothing")
    return messages


def system_pool_on_demand(type_token: str, name: str, inputs: Mapping[str, Any]) -> list[str]:
    """An evicted system pool takes the cluster's own add-ons (DNS, metrics, the autoscaler) down."""
    return [
        f"{pool.where}: the system pool is on spot or preemptible capacity; use on-demand capacity"
        for pool in node_pools(type_token, name, inputs)
        if pool.system and pool.interruptible
    ]


def no_retired_vm_sizes(type_token: str, name: str, inputs: Mapping[str, Any]) -> list[str]:
    """A retired size fails at creation or scale-up, often minutes into a deployment."""
    return [
        f"{pool.where}: {pool.machine} is retired; use {pool.retired_in_favour_of}"
        for pool in node_pools(type_token, name, inputs)
        if pool.retired_in_favour_of
    ]


def _secret_value(inputs: Mapping[str, Any], key: str) -> str | None:
    """A Secret's value for `key`; undecodable `data` as is: it is certainly not a default credential."""
    string_data = mapping(inputs.get("stringData"))
    if key in string_data:
        return str(string_data[key])
    data = mapping(inputs.get("data"))
    if key not in data:
        return None
    try:
        return base64.b64decode(str(data[key]), validate=True).decode()
    except (binascii.Error, UnicodeDecodeError):
        return str(data[key])


def no_kfp_default_credentials(type_token: str, name: str, inputs: Mapping[str, Any]) -> list[str]:
    """Kubeflow Pipelines' manifests ship credentials every reader of its repository knows."""
    if type_token != K8S_SECRET:
        return []
    secret_name = mapping(inputs.get("metadata")).get("name")
    messages = []
    for default_name, key, default in KFP_DEFAULT_CREDENTIALS:
        if secret_name != default_name:
            continue
        value = _secret_value(inputs, key)
        if default and value == default:
            messages.append(
                f"Secret {secret_name!r}: {key} is Kubeflow Pipelines' default {default!r}; "
                "generate a credential (e.g. with pulumi_random) instead"
            )
        elif not default and not value:
            messages.append(
                f"Secret {secret_name!r}: {key} is empty, Kubeflow Pipelines' default; "
                "generate a credential (e.g. with pulumi_random) instead"
            )
    return messages


ResourceCheck = Callable[[str, str, Mapping[str, Any]], list[str]]


@record
class ResourceRule:
    name: str
    description: str
    check: ResourceCheck


RESOURCE_RULES: tuple[ResourceRule, ...] = (
    ResourceRule(
        "spotkube-gpu-pool-taint", f"Every GPU pool carries the taint {contract.GPU_TAINT}.", gpu_pools_carry_gpu_taint
    ),
    ResourceRule(
        "spotkube-spot-pool-delete-min-zero",
        "Spot and preemptible pools use eviction policy Delete and scale down to 0.",
        spot_pools_delete_and_scale_to_zero,
    ),
    ResourceRule(
        "spotkube-system-pool-on-demand", "The system pool runs on on-demand capacity.", system_pool_on_demand
    ),
    ResourceRule("spotkube-no-retired-vm-sizes", "No pool uses a retired VM size.", no_retired_vm_sizes),
    ResourceRule(
        "spotkube-no-kfp-default-credentials",
        "Kubeflow Pipelines' default MinIO and MySQL credentials are never deployed.",
        no_kfp_default_credentials,
    ),
)


# --- Stack rules ----------------------------------------------------------------------------------


def kubeconfig_outputs_secret(outputs: Mapping[str, StackOutput]) -> list[str]:
    """A kubeconfig grants access to the cluster; as a plain output it would be printed by
    `pulumi stack output` and stored unencrypted in the state."""
    return [
        f"stack output {name!r} is a kubeconfig but not a secret; export it with pulumi.Output.secret"
        for name, output in sorted(outputs.items())
        if "kubeconfig" in name.lower() and not output.secret
    ]


# --- Rules over all of a stack's registrations (advisory) ----------------------------------------


def gpu_pools_upgrade_in_a_window(
    resources: Sequence[tuple[str, str, Mapping[str, Any]]],
) -> list[tuple[str, str]]:
    """A node image update or a Kubernetes upgrade drains every node of a pool; without a maintenance
    window the cloud may drain a GPU node in the middle of a ten-hour step. Advisory: a stack may choose
    `cluster.maintenance.anytime`, and the plan says so on every run. Each finding is (pool, sentence)."""
    return [
        (
            exposure.pool,
            f"GPU pool {exposure.pool} is upgraded at any time: its nodes can be drained in the middle "
            "of a step; declare cluster.maintenance.window (and busyPeriods), or remove maintenance.anytime",
        )
        for exposure in upgrade_exposures(resources)
        if exposure.gpu and exposure.window is None
    ]


#: A stack rule's check: (subject, sentence) per finding; the subject (a pool) makes the warning's id.
StackCheck = Callable[[Sequence[tuple[str, str, Mapping[str, Any]]]], list[tuple[str, str]]]


@record
class StackRule:
    name: str
    description: str
    check: StackCheck


ADVISORY_STACK_RULES: tuple[StackRule, ...] = (
    StackRule(
        "spotkube-gpu-pool-upgrade-window",
        "Every GPU pool is upgraded only in a declared maintenance window.",
        gpu_pools_upgrade_in_a_window,
    ),
)


# --- Running them all -----------------------------------------------------------------------------


@record
class Finding:
    rule: str
    message: str
    subject: str = ""

    @property
    def warning_id(self) -> str:
        """The stable id a stack acknowledges an advisory finding by: `policy-gpu-pool-upgrade-window:t4spot`."""
        rule = f"policy-{self.rule.removeprefix('spotkube-')}"
        return f"{rule}:{self.subject}" if self.subject else rule


def check_registrations(registrations: Sequence[Registration]) -> Iterator[Finding]:
    for registration in registrations:
        for rule in RESOURCE_RULES:
            for message in rule.check(registration.type, registration.name, registration.inputs):
                yield Finding(rule.name, message)


def check_stack(registrations: Sequence[Registration]) -> Iterator[Finding]:
    resources = [(r.type, r.name, r.inputs) for r in registrations]
    for rule in ADVISORY_STACK_RULES:
        for subject, message in rule.check(resources):
            yield Finding(rule.name, message, subject)


def check_outputs(outputs: Mapping[str, StackOutput]) -> Iterator[Finding]:
    for message in kubeconfig_outputs_secret(outputs):
        yield Finding("spotkube-kubeconfig-secret", message)
