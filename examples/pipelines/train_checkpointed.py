"""A training step that checkpoints, on a spot or preemptible GPU pool, with retries and a GPU limit.

The second article's workflow, written with spotkube. Training on spot is only cheap if an eviction
costs minutes, not the whole run, so:

- the training step saves a checkpoint after every epoch (to a temporary file, then an atomic
  rename, so an eviction during the save never leaves a torn checkpoint) and, when it starts,
  resumes from the latest checkpoint it finds;
- checkpoints live on a PersistentVolumeClaim, which outlives the evicted node, under a path keyed
  by the run (`checkpoints/<run id>`), so a retry of the same run finds them and another run never
  does; pass `run_key` to resume an earlier run's checkpoints instead;
- the copy step before training stages the dataset into `datasets/` on the same volume, and never
  touches `checkpoints/`: it copies into a temporary folder, marks it complete, then renames it
  into place, and does nothing when a complete copy is already there. A retry of the copy, or of
  the whole pipeline, therefore neither wipes checkpoints nor trusts a half-finished copy.

The training step asks for `gpus` GPUs of `gpu_type` (by default any GPU the shipped stacks offer) on
spot or preemptible capacity (either cloud)
and is retried 5 times, 5 minutes apart. The volume is an existing PVC named by `workspace_pvc`;
a ReadWriteMany storage class (Azure Files, Filestore) avoids pinning the retried pod to the zone
of a ReadWriteOnce disk.

    python examples/pipelines/train_checkpointed.py examples/pipelines/train_checkpointed.yaml
    spotkube pipeline-check examples/pipelines/train_checkpointed.yaml --stack aks-dev-uksouth
    spotkube simulate --stack aks-dev-uksouth examples/pipelines/train_checkpointed.yaml

The compiled file is kept next to this one, so the last two commands need no kfp.
"""

# No `from __future__ import annotations`: KFP reads the component signatures' real types.
import sys
from collections.abc import Callable
from pathlib import Path

from kfp import compiler, dsl, kubernetes
from kfp.dsl import Model, Output

from spotkube.pipelines import CpuSpot, GpuTarget, declare_timing, on_spot

#: The GPUs the training step accepts by default, any of which will do for its small model: the types
#: the shipped stacks offer (T4 on aks-dev and gke-prod, A100 80GB on aks-prod, L4 on gke-dev, A100
#: 40GB on gke-prod), so the one compiled pipeline runs on every stack and on both clouds.
DEFAULT_GPU_TYPES = ("nvidia-tesla-t4", "nvidia-l4", "nvidia-tesla-a100", "nvidia-a100-80gb")
WORKSPACE = "/workspace"
COPY_IMAGE = "python:3.12-slim"
TRAIN_IMAGE = "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime"


@dsl.component(base_image=COPY_IMAGE)
def stage_dataset(source_url: str, workspace: str) -> str:
    """Copy the dataset into `<workspace>/datasets/<name>` once; returns that folder."""
    import hashlib
    import shutil
    import tempfile
    import urllib.request
    from pathlib import Path

    datasets = Path(workspace) / "datasets"
    target = datasets / hashlib.sha256(source_url.encode()).hexdigest()[:16]
    if (target / ".complete").exists():
        print(f"{target} is already staged; nothing to copy")
        return str(target)
    datasets.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=datasets))
    with urllib.request.urlopen(source_url, timeout=300) as response, open(staging / "data.csv", "wb") as out:
        shutil.copyfileobj(response, out)
    (staging / ".complete").touch()
    if target.exists():
        # Only an incomplete copy of this same dataset can be here (no .complete marker).
        shutil.rmtree(target)
    staging.rename(target)
    return str(target)


@dsl.component(base_image=TRAIN_IMAGE)
def train(data_dir: str, workspace: str, run_id: str, run_key: str, epochs: int, model: Output[Model]) -> float:
    """Fit a linear model to `data.csv` (last column is the target), checkpointing every epoch.

    Returns the final training loss.
    """
    import os
    import shutil
    from pathlib import Path

    import numpy as np
    import torch

    checkpoints = Path(workspace) / "checkpoints" / (run_key or run_id)
    checkpoints.mkdir(parents=True, exist_ok=True)
    latest = checkpoints / "latest.pt"

    table = np.loadtxt(Path(data_dir) / "data.csv", delimiter=",", skiprows=1, dtype=np.float32, ndmin=2)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    features = torch.from_numpy(table[:, :-1]).to(device)
    target = torch.from_numpy(table[:, -1:]).to(device)
    net = torch.nn.Linear(features.shape[1], 1).to(device)
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-2)
    start, loss_value = 0, float("nan")
    if latest.exists():
        state = torch.load(latest, map_location=device)
        net.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        start, loss_value = state["epoch"] + 1, state["loss"]
        print(f"resuming from {latest} after epoch {state['epoch']}")

    for epoch in range(start, epochs):
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(net(features), target)
        loss.backward()
        optimizer.step()
        loss_value = float(loss)
        partial = checkpoints / "latest.pt.partial"
        torch.save({"epoch": epoch, "loss": loss_value, "model": net.state_dict(),
                    "optimizer": optimizer.state_dict()}, partial)
        os.replace(partial, latest)

    shutil.copyfile(latest, model.path)
    return loss_value


def build(gpu_type: str | tuple[str, ...] = DEFAULT_GPU_TYPES, gpus: int = 1) -> Callable[..., object]:
    """The pipeline, with its training step on spot nodes of `gpu_type` (one, or any of several), `gpus`
    GPUs per pod."""

    @dsl.pipeline(name="train-checkpointed",
                  description="Stage a dataset on a volume, then train on spot GPUs with checkpoints.")
    def train_checkpointed(source_url: str, workspace_pvc: str = "spotkube-training", epochs: int = 100,
                           run_key: str = "") -> float:
        stage = stage_dataset(source_url=source_url, workspace=WORKSPACE)
        on_spot(stage, CpuSpot())
        declare_timing(stage, runtime="10m")
        kubernetes.mount_pvc(stage, pvc_name=workspace_pvc, mount_path=WORKSPACE)

        fit = train(data_dir=stage.output, workspace=WORKSPACE, run_id=dsl.PIPELINE_JOB_ID_PLACEHOLDER,
                    run_key=run_key, epochs=epochs)
        on_spot(fit, GpuTarget(gpu_type, count=gpus))
        # What `spotkube simulate` assumes of the step: about 4 hours of training, a checkpoint after
        # every epoch (a few minutes each), so an eviction loses at most one epoch.
        declare_timing(fit, runtime="4h", checkpoint_every="5m")
        kubernetes.mount_pvc(fit, pvc_name=workspace_pvc, mount_path=WORKSPACE)
        return fit.outputs["Output"]

    return train_checkpointed


def compile(path: str | Path, gpu_type: str | tuple[str, ...] = DEFAULT_GPU_TYPES, gpus: int = 1) -> Path:
    """Compile the pipeline to `path` (YAML) and return the path."""
    compiler.Compiler().compile(build(gpu_type, gpus), str(path))
    return Path(path)


if __name__ == "__main__":
    print(compile(sys.argv[1] if len(sys.argv) > 1 else "train_checkpointed.yaml"))
