"""GKE: MIG partitions, time-sharing and MPS, and the cluster's logging, as registered and as the plan
reads them back; the Cloud Logging filter and link `spotkube logs` prints; impossible sharing refused."""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

import pulumi
import pytest

from spotkube import GkeGpuCluster, GkeGpuClusterArgs
from spotkube.clouds import parse_spec, profile
from spotkube.clouds.gke.labels import GKE_GPU_CLIENTS_LABEL, GKE_GPU_PARTITION_LABEL, GKE_GPU_SHARING_LABEL
from spotkube.components.offline import Recording, record_program
from spotkube.platform import contract
from spotkube.platform.errors import SpecError
from spotkube.platform.logs import LogsError, LogTarget
from spotkube.review.plan_document import pool_rows

NODE_POOL = "gcp:container/nodePool:NodePool"
CLUSTER = "gcp:container/cluster:Cluster"

ARGS: GkeGpuClusterArgs = {
    "environment": "dev",
    "region": "us-central1",
    "cluster": {"project": "spotkube-test"},
    "gpu_pools": [
        {"name": "a100-mig", "machine": "a2-highgpu-1g", "sharing": {"mig": "1g.5gb"}},
        {"name": "l4-shared", "machine": "g2-standard-8", "sharing": {"strategy": "time-sharing",
                                                                      "clients_per_gpu": 4}},
        {"name": "l4-mps", "machine": "g2-standard-8", "sharing": {"strategy": "mps", "clients_per_gpu": 2}},
        {"name": "l4-whole", "machine": "g2-standard-8"},
    ],
}


@pytest.fixture(scope="module")
def recording() -> Recording:
    def program() -> None:
        cluster = GkeGpuCluster("ml", args=ARGS)
        pulumi.export("poolContracts", cluster.pool_contracts)

    return record_program(program, project="spotkube", stack="test", config={})


def accelerator(recording: Recording, pool: str) -> dict[str, Any]:
    (inputs,) = [r.inputs for r in recording.registrations if r.type == NODE_POOL and r.inputs["name"] == pool]
    (found,) = inputs["nodeConfig"]["guestAccelerators"]
    return found


def test_mig_time_sharing_and_mps_reach_the_node_pools(recording: Recording) -> None:
    assert accelerator(recording, "a100-mig")["gpuPartitionSize"] == "1g.5gb"
    assert "gpuSharingConfig" not in accelerator(recording, "a100-mig")
    assert accelerator(recording, "l4-shared")["gpuSharingConfig"] == {"gpuSharingStrategy": "TIME_SHARING",
                                                                       "maxSharedClientsPerGpu": 4}
    assert accelerator(recording, "l4-mps")["gpuSharingConfig"] == {"gpuSharingStrategy": "MPS",
                                                                    "maxSharedClientsPerGpu": 2}
    whole = accelerator(recording, "l4-whole")
    assert "gpuPartitionSize" not in whole and "gpuSharingConfig" not in whole


def test_contracts_carry_gke_s_sharing_labels_and_advertise_the_slices(recording: Recording) -> None:
    contracts = {c["name"]: contract.PoolContract.from_json(c) for c in recording.outputs["poolContracts"].value}
    mig, shared = contracts["a100-mig"], contracts["l4-shared"]
    assert mig.labels[GKE_GPU_PARTITION_LABEL] == "1g.5gb" and mig.advertised() == {"nvidia.com/gpu": 7}
    assert shared.labels[GKE_GPU_SHARING_LABEL] == "time-sharing"
    assert shared.labels[GKE_GPU_CLIENTS_LABEL] == "4" and shared.advertised() == {"nvidia.com/gpu": 4}
    pools = list(contracts.values())
    four_way = contract.spot_gpu("nvidia-l4", shared=contract.SharedGpu("time-sharing", clients_per_gpu=4))
    assert contract.landing_pools(four_way, pools) == ["l4-shared"]
    any_mps = contract.spot_gpu("nvidia-l4", shared=contract.SharedGpu("mps"))
    assert contract.landing_pools(any_mps, pools) == ["l4-mps"]
    assert contract.landing_pools(contract.spot_gpu("nvidia-l4"), pools) == ["l4-whole"]
    too_many = contract.spot_gpu("nvidia-l4", gpus=3, shared=contract.SharedGpu("mps"))
    assert "requests 3 nvidia.com/gpu; a node has 1 × nvidia-l4 shared (mps, 2 per GPU" in contract.why_nowhere(
        too_many, pools)


def test_the_plan_shows_each_pool_s_sharing(recording: Recording) -> None:
    rows = {row.name: row.gpu_sharing for row in pool_rows("gke", recording.registrations)}
    assert rows["a100-mig"] == "MIG 1g.5gb (gpu_partition_size)"
    assert rows["l4-shared"] == "TIME_SHARING, 4 clients per GPU (gpu_sharing_config)"
    assert rows["l4-whole"] is None


def test_the_cluster_states_its_logging_and_the_posture_shows_it(recording: Recording) -> None:
    (cluster,) = [r for r in recording.registrations if r.type == CLUSTER]
    assert cluster.inputs["loggingConfig"] == {"enableComponents": ["SYSTEM_COMPONENTS", "WORKLOADS"]}
    assert cluster.inputs["monitoringConfig"] == {"enableComponents": ["SYSTEM_COMPONENTS"]}
    posture = profile("gke").read_posture(CLUSTER, cluster.name, cluster.inputs, False)
    assert posture is not None
    logging = next(s for s in posture.settings if s.name == "logging")
    assert logging.value.startswith("Cloud Logging: SYSTEM_COMPONENTS, WORKLOADS") and logging.concern is None
    unstated = profile("gke").read_posture(CLUSTER, cluster.name, {**cluster.inputs, "loggingConfig": None},
                                                     False)
    assert unstated is not None and any(c.startswith("logging: ") for c in unstated.concerns)


@pytest.mark.parametrize(("pool", "said"), [
    ({"name": "t4", "machine": "n1-standard-8", "gpu": {"type": "nvidia-tesla-t4", "count": 1},
      "sharing": {"mig": "1g.5gb"}}, "'1g.5gb' is not possible on nvidia-tesla-t4, which has no MIG"),
    ({"name": "a100", "machine": "a2-ultragpu-1g", "sharing": {"mig": "4g.40gb"}},
     "'4g.40gb' is not a partition size of nvidia-a100-80gb on GKE; use one of 1g.10gb, 2g.20gb, 3g.40gb, 7g.80gb"),
])
def test_a_partition_size_the_gpu_lacks_is_refused(pool: dict[str, Any], said: str) -> None:
    with pytest.raises(SpecError) as refused:
        parse_spec({"cloud": "gke", "environment": "dev", "region": "us-central1",
                    "cluster": {"project": "spotkube-test"}, "gpuPools": [pool]}, "stack.yaml")
    assert f"spotkube:gpuPools[0].sharing.mig: {said}" in str(refused.value)


def test_sharing_settings_that_contradict_each_other_are_refused() -> None:
    base = {"cloud": "gke", "environment": "dev", "region": "us-central1"}
    with pytest.raises(SpecError) as refused:
        parse_spec({**base, "cluster": {"project": "spotkube-test"},
                    "gpuPools": [{"name": "a", "machine": "g2-standard-8", "sharing": {"strategy": "mps"}},
                                 {"name": "b", "machine": "g2-standard-8", "sharing": {"mig": "1g.5gb",
                                                                                      "strategy": "mps",
                                                                                      "clientsPerGpu": 2}}]},
                   "stack.yaml")
    text = str(refused.value)
    assert "spotkube:gpuPools[0].sharing: strategy and clientsPerGpu go together" in text
    assert "spotkube:gpuPools[1].sharing: mig and strategy are two ways to share a GPU; set one of them" in text
    with pytest.raises(SpecError) as refused:
        parse_spec({**base, "cluster": {"project": "spotkube-test", "logs": {"retentionDays": 60}},
                    "devicePlugin": {"migStrategy": "mixed"}}, "stack.yaml")
    text = str(refused.value)
    assert "spotkube:cluster.logs.retentionDays: 60 is an AKS setting; remove it from a GKE stack" in text
    assert "spotkube:devicePlugin.migStrategy: 'mixed' is an AKS setting" in text


def test_the_cloud_logging_filter_and_link_are_well_formed() -> None:
    spec = parse_spec({"cloud": "gke", **ARGS}, "test")
    writer = profile("gke").commands.log_query
    assert writer is not None
    pod = writer(spec, LogTarget(pod="train-abc-system-container-impl-42", cluster="ml-gke-1a2b3c4"))
    assert pod.query.splitlines() == [
        'resource.type="k8s_container"',
        'resource.labels.project_id="spotkube-test"',
        'resource.labels.location="us-central1"',
        'resource.labels.cluster_name="ml-gke-1a2b3c4"',
        'resource.labels.namespace_name="kubeflow"',
        'resource.labels.pod_name="train-abc-system-container-impl-42"',
    ]
    assert pod.link is not None and pod.link.startswith("https://console.cloud.google.com/logs/query;query=")
    assert pod.link.endswith(";storageScope=project?project=spotkube-test")
    encoded = pod.link.removeprefix("https://console.cloud.google.com/logs/query;query=").split(";")[0]
    assert unquote(encoded) == pod.query and not set(encoded) & set(' "\n;?=&')
    assert pod.command is not None
    assert pod.command.startswith("gcloud logging read 'resource.type=\"k8s_container\" AND")
    run = writer(spec, LogTarget(run="3f2b1c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d"))
    assert run.query.splitlines()[-1] == 'labels."k8s-pod/pipeline/runid"="3f2b1c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d"'
    assert "cluster_name" not in run.query and "--cluster" in " ".join(run.notes)
    with pytest.raises(LogsError, match="not a GKE cluster name"):
        writer(spec, LogTarget(pod="p", cluster='x" OR "1"="1'))
    with pytest.raises(LogsError, match="an AKS setting"):
        writer(spec, LogTarget(pod="p", workspace="/subscriptions/x"))
