"""A PyTorch DDP training script that keeps spotkube's checkpoint contract (docs/training.md).

Run by Kubeflow Trainer's torch runtime under torchrun on every node of a TrainJob, it:

- resumes from the newest checkpoint in `SPOTKUBE_CHECKPOINT_DIR`, if there is one (a JobSet restart after
  an eviction starts every worker again from the top of this script);
- saves every `SPOTKUBE_CHECKPOINT_INTERVAL_SECONDS` while running (rank 0, whose replica is every rank's);
- on SIGTERM (the eviction notice), finishes the step it is in, saves at once (whichever rank got the
  signal: each holds the whole model) and exits, within the runtime's grace.

Checkpoints are written to a temporary file and renamed, so a worker killed mid-save leaves the last one
whole. The model is a small regression on synthetic data, so the example runs on CPU (gloo) in the tests;
on GPUs it uses NCCL and each rank's local GPU. `TRAIN_STEPS` and `STEP_SECONDS` (a pause per step, to
stand in for real work) size it.
"""

from __future__ import annotations

import os
import re
import signal
import sys
import time
from pathlib import Path
from types import FrameType

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel

CHECKPOINT = re.compile(r"^step-(\d+)\.pt$")
#: What a process killed by SIGTERM exits with (128 + 15): the pod fails, its DisruptionTarget condition says why.
SIGTERM_EXIT = 143


class Stop:
    """Set by the SIGTERM handler; the training loop saves and leaves at the next step boundary."""

    requested = False

    @classmethod
    def on_sigterm(cls, _signum: int, _frame: FrameType | None) -> None:
        cls.requested = True


def newest_checkpoint(directory: Path) -> Path | None:
    steps = [(int(m[1]), p) for p in directory.glob("step-*.pt") if (m := CHECKPOINT.match(p.name))]
    return max(steps)[1] if steps else None


def save(directory: Path, step: int, model: nn.Module, optimizer: torch.optim.Optimizer, rank: int) -> Path:
    """Write the checkpoint of `step` whole or not at all."""
    directory.mkdir(parents=True, exist_ok=True)
    target = directory / f"step-{step}.pt"
    partial = directory / f".step-{step}.pt.{rank}.partial"
    torch.save({"step": step, "model": model.state_dict(), "optimizer": optimizer.state_dict()}, partial)
    os.replace(partial, target)
    return target


def batch(step: int, rank: int, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """A deterministic batch of y = 3x − 1 with noise, different for each rank and step."""
    generator = torch.Generator().manual_seed(step * 1000 + rank)
    x = torch.randn(32, 1, generator=generator)
    y = 3 * x - 1 + 0.01 * torch.randn(32, 1, generator=generator)
    return x.to(device), y.to(device)


def main() -> int:
    directory = Path(os.environ["SPOTKUBE_CHECKPOINT_DIR"])
    interval = float(os.environ.get("SPOTKUBE_CHECKPOINT_INTERVAL_SECONDS", "1800"))
    steps = int(os.environ.get("TRAIN_STEPS", "200"))
    pause = float(os.environ.get("STEP_SECONDS", "0"))
    signal.signal(signal.SIGTERM, Stop.on_sigterm)

    use_gpu = torch.cuda.is_available()
    dist.init_process_group("nccl" if use_gpu else "gloo")
    rank = dist.get_rank()
    device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0"))) if use_gpu else torch.device("cpu")
    torch.manual_seed(0)
    model = DistributedDataParallel(nn.Linear(1, 1).to(device), device_ids=[device.index] if use_gpu else None)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)

    start = 0
    found = newest_checkpoint(directory)
    if found is not None:
        state = torch.load(found, map_location=device)
        model.module.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        start = state["step"]
        print(f"rank {rank}: resumed from {found.name}", flush=True)

    last_save = time.monotonic()
    for step in range(start + 1, steps + 1):
        x, y = batch(step, rank, device)
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        if pause:
            time.sleep(pause)
        if Stop.requested:
            saved = save(directory, step, model.module, optimizer, rank)
            print(f"rank {rank}: SIGTERM, saved {saved.name}", flush=True)
            return SIGTERM_EXIT
        if rank == 0 and time.monotonic() - last_save >= interval:
            save(directory, step, model.module, optimizer, rank)
            last_save = time.monotonic()
    if rank == 0:
        save(directory, steps, model.module, optimizer, rank)
        weight, bias = model.module.weight.item(), model.module.bias.item()
        print(f"done: {steps} steps, weight {weight:.3f}, bias {bias:.3f}, loss {loss.item():.5f}", flush=True)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
