"""GKE stack files with one mistake each: every mistake is refused with a message that names the
stack file, the config key, the value and what would be accepted, and nothing is registered.

Each case is written into a temporary copy of the project and checked two ways: through
`spotkube.components.offline.run_stack` (the plan's path, which validates before running anything) and by
running the real `infra/__main__.py` under the recording mocks, which must stop with the same
message before registering a single resource.
"""

from __future__ import annotations

import copy
import runpy
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from spotkube.clouds import parse_spec
from spotkube.components.offline import ProgramFailed, record_program, run_stack
from spotkube.platform.errors import SpecError
from spotkube.platform.project import Project, as_pulumi_config, find_project, stack_config

REPO = Path(__file__).resolve().parents[3]
STACK = "gke-bad-us-central1"
STACK_FILE = f"stacks/Pulumi.{STACK}.yaml"

#: A valid GKE stack; each case breaks one thing in it. The second GPU pool is the one most
#: cases break, so the messages must point at `gpuPools[1]`.
GOOD: dict[str, Any] = {
    "spotkube:cloud": "gke",
    "spotkube:environment": "dev",
    "spotkube:region": "us-central1",
    "spotkube:cluster": {"project": "spotkube-test"},
    "spotkube:gpuPools": [
        {"name": "l4-spot", "machine": "g2-standard-8", "capacity": "spot", "min": 0, "max": 4},
        {"name": "t4-spot", "machine": "n1-standard-8", "gpu": {"type": "nvidia-tesla-t4", "count": 1},
         "capacity": "spot", "min": 0, "max": 4},
    ],
}

Change = Callable[[dict[str, Any]], None]


def pool(**fields: Any) -> Change:
    """Change fields of gpuPools[1] (a None value removes the field)."""

    def change(config: dict[str, Any]) -> None:
        target = config["spotkube:gpuPools"][1]
        for name, value in fields.items():
            if value is None:
                target.pop(name, None)
            else:
                target[name] = value

    return change


def top(name: str, value: Any) -> Change:
    def change(config: dict[str, Any]) -> None:
        config[f"spotkube:{name}"] = value

    return change


def cluster(**fields: Any) -> Change:
    def change(config: dict[str, Any]) -> None:
        config["spotkube:cluster"] = {**config["spotkube:cluster"], **fields}

    return change


def without_project(config: dict[str, Any]) -> None:
    config["spotkube:cluster"] = {}


def both(*changes: Change) -> Change:
    def change(config: dict[str, Any]) -> None:
        for each in changes:
            each(config)

    return change


#: gpuPools[1] as a flex-start L4 pool, which the flex-start cases then break one way each.
FLEX = {"machine": "g2-standard-8", "gpu": None, "capacity": "flex-start", "min": 0}


#: (case id, change, config key, fragments of the message: what was wrong and what is accepted)
CASES: list[tuple[str, Change, str, tuple[str, ...]]] = [
    ("pool-name-pattern", pool(name="T4_Spot"), "gpuPools[1].name",
     ("'T4_Spot' is not a valid GKE node pool name", "use 1-40 lower-case letters, digits and hyphens")),
    ("pool-name-too-long", pool(name="t4-" + "x" * 40), "gpuPools[1].name",
     ("is not a valid GKE node pool name", "1-40")),
    ("spot-and-preemptible", pool(capacity=["spot", "preemptible"]), "gpuPools[1].capacity",
     ("['spot', 'preemptible']", "spot and preemptible together are refused", "'spot'", "'preemptible'",
      "'on-demand'")),
    ("g2-with-t4", pool(machine="g2-standard-8"), "gpuPools[1].gpu",
     ("g2-standard-8 carries 1 × nvidia-l4", "'nvidia-tesla-t4' is not accepted", "needs an N1 machine type")),
    ("n1-with-a100", pool(gpu={"type": "nvidia-tesla-a100", "count": 1}), "gpuPools[1].gpu",
     ("'nvidia-tesla-a100' needs an a2 machine type (a2-highgpu-1g", "n1-standard-8 takes only nvidia-tesla-t4")),
    ("e2-with-gpu", pool(machine="e2-standard-4"), "gpuPools[1].gpu",
     ("'e2-standard-4' carries no GPU: the e2 family has none", "'nvidia-tesla-t4' needs an N1 machine type")),
    ("a2-wrong-count", pool(machine="a2-highgpu-2g", gpu={"type": "nvidia-tesla-a100", "count": 1}),
     "gpuPools[1].gpu", ("a2-highgpu-2g carries 2 × nvidia-tesla-a100", "a count of 1 is not accepted",
                         "give 2 or leave the count out")),
    ("g2-wrong-count", pool(machine="g2-standard-24", gpu={"type": "nvidia-l4", "count": 1}),
     "gpuPools[1].gpu", ("g2-standard-24 carries 2 × nvidia-l4", "a count of 1 is not accepted", "give 2")),
    ("a3-wrong-count", pool(machine="a3-highgpu-8g", gpu={"type": "nvidia-h100-80gb", "count": 4}),
     "gpuPools[1].gpu", ("a3-highgpu-8g carries 8 × nvidia-h100-80gb", "a count of 4 is not accepted",
                         "give 8")),
    ("n1-without-gpu", pool(gpu=None), "gpuPools[1].machine",
     ("n1-standard-8 has no built-in GPUs, so gpu must be given", "gpu: {type: nvidia-tesla-t4, count: 1}")),
    ("n1-too-big-for-one-v100", pool(machine="n1-standard-32", gpu={"type": "nvidia-tesla-v100", "count": 1}),
     "gpuPools[1].gpu", ("n1-standard-32 has 32 vCPUs", "allows at most 12", "use 4 × nvidia-tesla-v100")),
    ("unknown-region", top("region", "southamerica-east1"), "region",
     ("doesn't know the GPU zones of region southamerica-east1",
      "regions where it knows nvidia-tesla-t4 is offered: asia-east1", "us-central1",
      "gcloud compute accelerator-types list")),
    ("azure-region", top("region", "uksouth"), "region",
     ("'uksouth' is an AKS region; a GKE stack takes a region such as us-central1 or europe-west4",)),
    ("zone-outside-region", pool(zones=["europe-west4-a"]), "gpuPools[1].zones",
     ("'europe-west4-a' is not a zone of us-central1", "zones of us-central1 that offer nvidia-tesla-t4: "
      "us-central1-a, us-central1-b, us-central1-c, us-central1-f")),
    ("zone-without-the-gpu", pool(machine="g2-standard-8", gpu=None, zones=["us-central1-f"]),
     "gpuPools[1].zones", ("'us-central1-f' does not offer nvidia-l4",
                           "zones of us-central1 that offer nvidia-l4: us-central1-a, us-central1-b, us-central1-c")),
    ("system-zone-outside-region", top("systemPool", {"zones": ["us-east1-b"]}), "systemPool.zones[0]",
     ("'us-east1-b' is not a zone of us-central1", "use us-central1-a, us-central1-b, us-central1-c, us-central1-f")),
    ("min-above-max", pool(min=5, max=2), "gpuPools[1].min",
     ("5 is above max 2", "use 0 <= min <= max <= 1000")),
    ("max-above-1000", pool(max=1001), "gpuPools[1].max",
     ("1001 is not accepted", "from 0 to 1000")),
    ("a3-small-on-demand", pool(machine="a3-highgpu-1g", gpu=None, capacity="on-demand"), "gpuPools[1].capacity",
     ("'on-demand' is not available for a3-highgpu-1g", "only as Spot or Flex-start VMs", "use capacity: spot")),
    ("missing-project", without_project, "cluster.project",
     ("is required on GKE", "set the Google Cloud project id")),
    ("bad-project-id", cluster(project="My_Project"), "cluster.project",
     ("'My_Project' is not a Google Cloud project id", "6-30 lower-case letters, digits and hyphens")),
    ("aks-max-price", pool(maxPrice=0.5), "gpuPools[1].maxPrice",
     ("0.5 is an AKS setting", "remove it from a GKE stack", "no per-pool cap")),
    ("aks-max-price-on-spot-cpu-pool", top("spotPools", [{"name": "cpu-spot", "machine": "e2-standard-4",
                                                          "maxPrice": 0.1}]),
     "spotPools[0].maxPrice", ("0.1 is an AKS setting", "remove it from a GKE stack")),
    ("aks-eviction-policy", pool(evictionPolicy="Deallocate"), "gpuPools[1].evictionPolicy",
     ("'Deallocate' is an AKS setting", "remove it from a GKE stack")),
    # Written by the user, so refused even at AKS's default: the components receive what the user set.
    ("aks-max-price-at-its-default", pool(maxPrice=-1), "gpuPools[1].maxPrice",
     ("is an AKS setting", "remove it from a GKE stack", "no per-pool cap")),
    ("aks-login-at-its-default", cluster(deployer={"login": "azurecli"}), "cluster.deployer.login",
     ("'azurecli' is an AKS setting", "Application Default Credentials")),
    ("aks-resource-group", cluster(resourceGroupName="rg-ml"), "cluster.resourceGroupName",
     ("'rg-ml' is an AKS setting", "remove it from a GKE stack", "cluster.project")),
    ("aks-expander", cluster(autoscaler={"expander": "least-waste"}), "cluster.autoscaler.expander",
     ("'least-waste' is an AKS setting", "cluster.autoscaler.profile: BALANCED or OPTIMIZE_UTILIZATION")),
    ("aks-network-policy", cluster(networkPolicy="azure"), "cluster.networkPolicy",
     ("'azure' is an AKS network policy; on GKE use 'cilium' or 'calico'",)),
    ("azure-machine-for-system-pool", top("systemPool", {"machine": "Standard_D4s_v3"}), "systemPool.machine",
     ("'Standard_D4s_v3' is not a GKE machine type", "use e.g. e2-standard-4")),
    ("version-before-compute-classes", cluster(kubernetesVersion="1.30.2-gke.1587003"), "cluster.kubernetesVersion",
     ("'1.30.2-gke.1587003' is older than 1.30.3-gke.1451000", "compute classes",
      "leave it unset to follow the release channel")),
    ("gke-channel-spelling", cluster(channel="stable"), "cluster.channel",
     ("'stable' is not a GKE channel", "RAPID, REGULAR, STABLE, EXTENDED")),
    # Flex-start and queued provisioning, as GKE validates them.
    ("flex-start-min-above-zero", pool(**{**FLEX, "min": 1}), "gpuPools[1].min",
     ("1 is not allowed", "only from 0 nodes", "use min: 0")),
    ("queued-min-above-zero", pool(**{**FLEX, "min": 2, "queuedProvisioning": True}), "gpuPools[1].min",
     ("2 is not allowed", "flex-start with queued provisioning pool only from 0 nodes", "use min: 0")),
    ("queued-without-flex-start", pool(queuedProvisioning=True), "gpuPools[1].queuedProvisioning",
     ("true applies to flex-start pools only", "capacity is 'spot'", "set capacity: flex-start or remove it")),
    ("max-run-without-flex-start", pool(maxRunHours=24), "gpuPools[1].maxRunHours",
     ("24 applies to flex-start pools only", "set capacity: flex-start or remove it")),
    ("max-run-over-seven-days", pool(**FLEX, maxRunHours=169), "gpuPools[1].maxRunHours",
     ("169 is longer than the 7 days (168 hours) GKE lets a flex-start VM run", "use 1 to 168")),
    ("flex-start-version-too-low", both(pool(**FLEX), cluster(kubernetesVersion="1.32.2-gke.1500000")),
     "cluster.kubernetesVersion", ("'1.32.2-gke.1500000' is older than 1.32.2-gke.1652000",
                                   "flex-start GPU nodes", "the pool 't4-spot' uses", "use that version or later")),
    ("flex-start-upgrade-settings", pool(**FLEX, upgrade={"strategy": "blue-green"}), "gpuPools[1].upgrade.strategy",
     ("short-lived upgrades", "takes no upgrade settings", "remove upgrade")),
    ("flex-start-cpu-pool", top("spotPools", [{"name": "cpu", "machine": "e2-standard-4", "capacity": "flex-start"}]),
     "spotPools[0].capacity", ("'flex-start' is a tier of GPU pools only", "use 'spot' or 'preemptible'")),
    ("flex-start-capacity-spelling", pool(capacity="flexstart"), "gpuPools[1].capacity",
     ("'flexstart'", "'flex-start'")),
    ("boot-disk-without-streaming", pool(secondaryBootDisk={"diskImage": "global/images/cuda-12"}),
     "gpuPools[1].secondaryBootDisk", ("needs image streaming", "gpuPools[1].imageStreaming: true",
                                       "or remove secondaryBootDisk")),
    ("boot-disk-not-an-image", pool(imageStreaming=True, secondaryBootDisk={"diskImage": "cuda-12"}),
     "gpuPools[1].secondaryBootDisk.diskImage", ("'cuda-12' is not a Compute Engine image",
                                                 "projects/PROJECT/global/images/NAME", "global/images/NAME")),
    ("boot-disk-mode", pool(imageStreaming=True, secondaryBootDisk={"diskImage": "global/images/cuda-12",
                                                                    "mode": "DATA_CACHE"}),
     "gpuPools[1].secondaryBootDisk.mode", ("'DATA_CACHE'", "CONTAINER_IMAGE_CACHE")),
    ("registry-not-a-repository", cluster(registries=["europe-west4-docker.pkg.dev/spotkube-test/training"]),
     "cluster.registries[0]", ("'europe-west4-docker.pkg.dev/spotkube-test/training' is not an Artifact Registry "
                               "repository", "projects/PROJECT/locations/LOCATION/repositories/REPOSITORY")),
    ("registry-twice", cluster(registries=["projects/spotkube-test/locations/us/repositories/training"] * 2),
     "cluster.registries[1]", ("is listed twice", "name each repository once")),
]


@pytest.fixture
def project(tmp_path: Path) -> Project:
    """A copy of this repository's Pulumi project with an empty stacks/ folder."""
    shutil.copy(REPO / "Pulumi.yaml", tmp_path / "Pulumi.yaml")
    shutil.copytree(REPO / "infra", tmp_path / "infra", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "stacks").mkdir()
    return find_project(tmp_path)


def write_stack(project: Project, config: dict[str, Any]) -> None:
    project.stack_file(STACK).write_text(yaml.safe_dump({"config": config}, sort_keys=False))


def run_program(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    """The real program under the recording mocks, without the plan's up-front validation."""
    monkeypatch.syspath_prepend(str(project.main.parent))
    record_program(lambda: runpy.run_path(str(project.main), run_name="__main__"),
                   project=project.name, stack=STACK, config=as_pulumi_config(stack_config(project, STACK)))


def test_the_good_stack_is_accepted(project: Project) -> None:
    """Without this, every case below could pass against a stack that was never valid."""
    write_stack(project, GOOD)
    run = run_stack(project, STACK)
    assert [p.name for p in run.spec.gpu_pools] == ["l4-spot", "t4-spot"]
    assert run.of_type("gcp:container/nodePool:NodePool")


@pytest.mark.parametrize(("change", "path", "fragments"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_is_refused_before_anything_is_registered(
    project: Project, monkeypatch: pytest.MonkeyPatch, change: Change, path: str, fragments: tuple[str, ...]
) -> None:
    config = copy.deepcopy(GOOD)
    change(config)
    write_stack(project, config)

    with pytest.raises(SpecError) as refused:
        run_stack(project, STACK)
    lines = str(refused.value).splitlines()
    prefix = f"{STACK_FILE}: spotkube:{path}: "
    matching = [line for line in lines if line.startswith(prefix)]
    assert matching, f"no problem reported at {prefix!r}; got {lines}"
    assert any(all(f in line for f in fragments) for line in matching), matching

    with pytest.raises(ProgramFailed) as failed:
        run_program(project, monkeypatch)
    assert failed.value.registrations == []
    assert str(failed.value) == str(refused.value)


def test_every_mistake_in_a_stack_is_reported_at_once(project: Project) -> None:
    config = copy.deepcopy(GOOD)
    for change in (pool(name="T4_Spot", maxPrice=0.5), without_project, top("region", "asia-south2")):
        change(config)
    write_stack(project, config)
    with pytest.raises(SpecError) as refused:
        run_stack(project, STACK)
    keys = {problem.path for problem in refused.value.problems}
    assert {"spotkube:gpuPools[1].name", "spotkube:gpuPools[1].maxPrice", "spotkube:cluster.project",
            "spotkube:region"} <= keys


def test_a_gpu_pool_in_a_region_the_zone_table_lacks_names_its_zones() -> None:
    values = {"cloud": "gke", "environment": "dev", "region": "us-central9", "kubeflow": {"enabled": False},
              "cluster": {"project": "my-ml-platform", "allowUnlistedRegion": True},
              "gpuPools": [{"name": "l4", "machine": "g2-standard-8"}]}
    with pytest.raises(SpecError, match=r"or list the zones that offer nvidia-l4 in gpuPools\[0\].zones yourself"):
        parse_spec(values, "src")
    values["gpuPools"] = [{"name": "l4", "machine": "g2-standard-8", "zones": ["us-central9-a"]}]
    assert parse_spec(values, "src").gpu_pools[0].zones == ("us-central9-a",)
