"""Bad AKS input is refused before anything is registered, with file, key, value and remedy."""

from __future__ import annotations

import runpy
from collections.abc import Callable
from typing import Any

import pytest

from spotkube.clouds import bundled_catalog
from spotkube.components.offline import ProgramFailed, record_program, run_stack
from spotkube.platform.errors import SpecError
from spotkube.platform.project import Project, as_pulumi_config, stack_config

STACK = "aks-dev-uksouth"
FILE = f"stacks/Pulumi.{STACK}.yaml"
T4 = {"name": "t4spot", "machine": "Standard_NC4as_T4_v3"}


def base(**changes: Any) -> dict[str, Any]:
    config: dict[str, Any] = {"cloud": "aks", "environment": "dev", "region": "uksouth", "gpuPools": [T4]}
    config.update(changes)
    return config


BAD_INPUTS: list[tuple[str, dict[str, Any], str]] = [
    ("max price -2", base(gpuPools=[{**T4, "maxPrice": -2}]),
     "spotkube:gpuPools[0].maxPrice: -2 is not allowed; use -1 (pay up to the on-demand price) or a positive "
     "USD/hour amount"),
    ("max price 0", base(gpuPools=[{**T4, "maxPrice": 0}]), "spotkube:gpuPools[0].maxPrice: 0 is not allowed"),
    ("placeholder admin group", base(cluster={"adminGroupObjectIds": ["00000000-0000-0000-0000-000000000000"]}),
     "spotkube:cluster.adminGroupObjectIds[0]: '00000000-0000-0000-0000-000000000000' is not an Entra ID group"),
    ("kubeflow without a platform pool", base(platformPool={"enabled": False},
                                              systemPool={"criticalAddonsOnly": False}),
     "spotkube:platformPool.enabled: false leaves Kubeflow Pipelines no pool"),
    ("platform pool name too long to version", base(platformPool={"name": "platform2"}),
     "spotkube:platformPool.name: 'platform2' is too long; use at most 8 characters"),
    ("deployer egress not a CIDR", base(cluster={"deployer": {"egressRanges": ["10.0.0.1/8"]}}),
     "spotkube:cluster.deployer.egressRanges[0]: '10.0.0.1/8' is not a CIDR"),
    ("GKE egress on AKS", base(cluster={"egress": "own"}),
     "spotkube:cluster.egress: 'own' is a GKE setting; remove it from an AKS stack"),
    ("provision time in seconds", base(cluster={"autoscaler": {"maxNodeProvisionTime": "300s"}}),
     "spotkube:cluster.autoscaler.maxNodeProvisionTime: '300s' is not accepted by AKS; use whole minutes followed "
     "by m, e.g. 10m (AKS accepts no other unit)"),
    ("provision time of zero", base(cluster={"autoscaler": {"maxNodeProvisionTime": "0m"}}),
     "spotkube:cluster.autoscaler.maxNodeProvisionTime: '0m' is not accepted by AKS; use whole minutes"),
    ("scan interval in minutes", base(cluster={"autoscaler": {"scanInterval": "1m"}}),
     "spotkube:cluster.autoscaler.scanInterval: '1m' is not accepted by AKS; use whole seconds, e.g. 10s"),
    ("scale-down time in hours", base(cluster={"autoscaler": {"scaleDownUnneededTime": "1h"}}),
     "spotkube:cluster.autoscaler.scaleDownUnneededTime: '1h' is not accepted by AKS; use whole minutes"),
    ("scale-up delay without unit", base(cluster={"autoscaler": {"newPodScaleUpDelay": "30"}}),
     "spotkube:cluster.autoscaler.newPodScaleUpDelay: '30' is not accepted by AKS; use an integer followed by s, "
     "m or h"),
    ("unknown login mode", base(cluster={"deployer": {"login": "devicecode"}}),
     "spotkube:cluster.deployer.login: 'devicecode' is not accepted"),
    ("max price with 6 decimals", base(gpuPools=[{**T4, "maxPrice": 0.123456}]),
     "spotkube:gpuPools[0].maxPrice: 0.123456 has more than 5 decimals"),
    ("pool name with capitals", base(gpuPools=[{**T4, "name": "GpuSpot"}]),
     "spotkube:gpuPools[0].name: 'GpuSpot' is not a valid AKS pool name; use 1-12 lower-case letters"),
    ("pool name too long", base(gpuPools=[{**T4, "name": "averyveryverylongname"}]),
     "spotkube:gpuPools[0].name: 'averyveryverylongname' is not a valid AKS pool name"),
    ("spot system pool", base(systemPool={"capacity": "spot"}),
     "spotkube:systemPool.capacity: 'spot' is not allowed; the systemPool must be 'on-demand' (a spot pool can't be "
     "a System pool"),
    ("min above max", base(gpuPools=[{**T4, "min": 5, "max": 2}]),
     "spotkube:gpuPools[0].min: 5 is above max 2; use 0 <= min <= max <= 1000"),
    ("max above 1000", base(gpuPools=[{**T4, "max": 1001}]),
     "spotkube:gpuPools[0].max: 1001 is not accepted; use a whole number from 0 to 1000"),
    ("negative min", base(gpuPools=[{**T4, "min": -1}]),
     "spotkube:gpuPools[0].min: -1 is not accepted; use a whole number from 0 to 1000"),
    ("system pool min 0", base(systemPool={"min": 0}),
     "spotkube:systemPool.min: 0 is not allowed; the system pool needs min >= 1"),
    ("eviction policy", base(gpuPools=[{**T4, "evictionPolicy": "Evict"}]),
     "spotkube:gpuPools[0].evictionPolicy: 'Evict' is not accepted; use 'Delete' or 'Deallocate'"),
    ("retired V100 size", base(gpuPools=[{**T4, "machine": "Standard_NC6s_v3"}]),
     "spotkube:gpuPools[0].machine: 'Standard_NC6s_v3' is retired; use Standard_NC4as_T4_v3 (T4)"),
    ("unknown GPU size", base(gpuPools=[{**T4, "machine": "Standard_D4s_v3"}]),
     "spotkube:gpuPools[0].machine: 'Standard_D4s_v3' carries no GPU: Azure's D series has none (catalog of "
     f"{bundled_catalog().cloud('aks').date}); use a GPU size, e.g. Standard_NC4as_T4_v3 (1 × nvidia-tesla-t4)"),
    ("GPU does not match size", base(gpuPools=[{**T4, "gpu": {"type": "nvidia-l4", "count": 1}}]),
     "spotkube:gpuPools[0].gpu: 1 × nvidia-l4 does not match Standard_NC4as_T4_v3, which carries "
     "1 × nvidia-tesla-t4"),
    ("preemptible on AKS", base(gpuPools=[{**T4, "capacity": "preemptible"}]),
     "spotkube:gpuPools[0].capacity: 'preemptible' is a GKE capacity; on AKS use 'spot' or 'on-demand'"),
    ("flex-start on AKS", base(gpuPools=[{**T4, "capacity": "flex-start"}]),
     "spotkube:gpuPools[0].capacity: 'flex-start' is a GKE capacity; on AKS use 'spot' or 'on-demand'"),
    ("max price on on-demand", base(gpuPools=[{**T4, "capacity": "on-demand", "maxPrice": 0.5}]),
     "spotkube:gpuPools[0].maxPrice: 0.5 applies to spot pools only"),
    ("duplicate pool names", base(gpuPools=[T4, T4]),
     "spotkube:gpuPools[1].name: 't4spot' is already the name of gpuPools[0]; pool names must be unique"),
    ("unknown top-level key", base(gpuPool=[T4]),
     "spotkube:gpuPool: is not a known key; accepted keys: cloud, environment, region"),
    ("unknown pool key", base(gpuPools=[{**T4, "maxprice": 1}]),
     "spotkube:gpuPools[0].maxprice: is not a known key; accepted keys: name, machine"),
    ("bad taint", base(gpuPools=[{**T4, "taints": ["dedicated"]}]),
     "spotkube:gpuPools[0].taints: 'dedicated' is not a taint; use key=value:Effect"),
    ("reserved label", base(gpuPools=[{**T4, "labels": {"spotkube.io/capacity": "on-demand"}}]),
     "spotkube:gpuPools[0].labels.spotkube.io/capacity: 'spotkube.io/capacity' uses the prefix spotkube.io/, which "
     "is spotkube's scheduling contract"),
    ("bad zone", base(gpuPools=[{**T4, "zones": ["4"]}]),
     "spotkube:gpuPools[0].zones[0]: '4' is not an Azure zone; use '1', '2' or '3'"),
    ("bad channel", base(cluster={"channel": "REGULAR"}),
     "spotkube:cluster.channel: 'REGULAR' is not an AKS channel; use one of stable"),
    ("bad CIDR", base(cluster={"authorizedIpRanges": ["10.0.0.1/8"]}),
     "spotkube:cluster.authorizedIpRanges[0]: '10.0.0.1/8' is not a CIDR"),
    ("no untainted pool", base(platformPool={"enabled": False}),
     "spotkube:platformPool.enabled: false leaves Kubeflow and other platform workloads no untainted on-demand pool"),
    ("unknown cloud", base(cloud="eks"), "spotkube:cloud: 'eks' is not accepted; use 'aks' or 'gke'"),
]


@pytest.mark.parametrize(("config", "message"), [(c, m) for _, c, m in BAD_INPUTS],
                         ids=[name for name, _, _ in BAD_INPUTS])
def test_bad_input_is_refused_before_anything_is_registered(
    project_with_stack: Callable[[str, dict[str, Any]], Project], config: dict[str, Any], message: str
) -> None:
    project = project_with_stack(STACK, config)
    with pytest.raises(SpecError) as planned:
        run_stack(project, STACK)
    assert f"{FILE}: {message}" in str(planned.value)

    # The real program, run as `pulumi up` would run it, stops with the same message and has
    # registered nothing at all (not even the component).
    with pytest.raises(ProgramFailed) as ran:
        record_program(lambda: runpy.run_path(str(project.main), run_name="__main__"), project=project.name,
                       stack=STACK, config=as_pulumi_config(stack_config(project, STACK)))
    assert f"{FILE}: {message}" in str(ran.value)
    assert ran.value.registrations == []


def test_every_problem_is_reported_at_once(project_with_stack: Callable[[str, dict[str, Any]], Project]) -> None:
    project = project_with_stack(STACK, base(gpuPools=[{**T4, "name": "Bad", "min": 3, "max": 1}]))
    with pytest.raises(SpecError) as err:
        run_stack(project, STACK)
    assert len(err.value.problems) == 2


def test_broken_yaml_names_the_line(project_with_stack: Callable[[str, dict[str, Any]], Project]) -> None:
    project = project_with_stack(STACK, base())
    project.stack_file(STACK).write_text("config:\n  spotkube:cloud: [aks\n")
    with pytest.raises(SpecError, match=rf"{FILE}: line \d+: is not valid YAML"):
        run_stack(project, STACK)
