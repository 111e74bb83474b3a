"""verify's node check reads what a node advertises as the pool's contract says it should: whole GPUs,
MIG slices under their own resource name, or shared GPUs' clients."""

from __future__ import annotations

from typing import Any

from spotkube.platform.contract import GpuSharing, PoolContract, Taint
from spotkube.review.verify import node_check, toleration_findings


def pool(sharing: GpuSharing | None = None, gpus: int = 1) -> PoolContract:
    return PoolContract(name="a100mig", role="gpu", capacity="spot", accelerator="nvidia-a100-80gb", gpu_count=gpus,
                        labels={"spotkube.io/pool": "a100mig"}, taints=(Taint("nvidia.com/gpu", "present"),),
                        sharing=sharing)


def node(allocatable: dict[str, str], ready: str = "True") -> dict[str, Any]:
    return {"metadata": {"name": "aks-a100mig-12345678-vmss000000", "labels": {"spotkube.io/pool": "a100mig"}},
            "status": {"allocatable": {"cpu": "23660m", "memory": "214033188Ki", **allocatable},
                       "conditions": [{"type": "Ready", "status": ready, "reason": "KubeletReady"}]}}


def test_mig_slices_are_counted_under_their_own_resource() -> None:
    mixed = pool(GpuSharing("mig", 7, "1g.10gb", "nvidia.com/mig-1g.10gb"))
    assert node_check(node({"nvidia.com/mig-1g.10gb": "7"}), mixed) is None
    assert node_check(node({"nvidia.com/gpu": "1"}), mixed) == (
        "node aks-a100mig-12345678-vmss000000 advertises no nvidia.com/mig-1g.10gb (the plan says 7): the device "
        "plugin isn't serving it yet")
    assert "advertises only 3 nvidia.com/mig-1g.10gb" in str(node_check(node({"nvidia.com/mig-1g.10gb": "3"}), mixed))


def test_time_shared_gpus_advertise_one_per_client_and_a_node_not_ready_is_not_ready() -> None:
    shared = pool(GpuSharing("time-sharing", 4), gpus=2)
    assert node_check(node({"nvidia.com/gpu": "8"}), shared) is None
    assert node_check(node({"nvidia.com/gpu": "8"}, ready="False"), shared) == (
        "node aks-a100mig-12345678-vmss000000 is not Ready")


def test_a_toleration_with_exists_and_no_key_tolerates_every_taint() -> None:
    everything = {"spec": {"template": {"spec": {"tolerations": [{"operator": "Exists"}]}}}}
    nothing = {"spec": {"template": {"spec": {}}}}
    found = toleration_findings({"DaemonSet a/b": everything, "DaemonSet c/d": nothing}, [pool()])
    assert [(f.subject, f.level) for f in found] == [("DaemonSet a/b", "ok"), ("DaemonSet c/d", "fail")]
