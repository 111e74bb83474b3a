"""A step that saves a checkpoint when its node is taken away, and resumes from it when Argo retries it.

When a spot node is reclaimed the kubelet sends the step's container SIGTERM and, after the pod's
grace period, SIGKILL: 15 seconds on GKE, up to 30 on AKS (docs/evictions.md#how-much-time-a-step-gets).
Checkpointing every epoch loses up to an epoch; checkpointing on SIGTERM loses almost nothing. The
pattern (docs/pipelines.md#saving-a-checkpoint-on-sigterm):

- the SIGTERM handler only sets a flag, because a handler that runs in the middle of an update could
  save a torn state;
- the loop checks the flag between steps, writes the checkpoint to a temporary file and renames it
  into place (an eviction during the save never leaves a torn checkpoint), and exits with 143, the
  conventional code for "stopped by SIGTERM": exiting 0 would tell Argo the step succeeded, half done;
- on start, the step resumes from the checkpoint of its run, on a volume that outlives the node.

Argo retries the step (it reads "main: Error (exit code 143)", or "pod deleted", as an eviction) up to
`evictions` times; a failure of its own is retried at most once.

    python examples/pipelines/checkpoint_on_sigterm.py checkpoint_on_sigterm.yaml
    spotkube pipeline-check checkpoint_on_sigterm.yaml --stack gke-dev-us-central1
"""

# No `from __future__ import annotations`: KFP reads the component signatures' real types.
import sys
from collections.abc import Callable
from pathlib import Path

from kfp import compiler, dsl, kubernetes

from spotkube.pipelines import CpuSpot, on_spot

WORKSPACE = "/workspace"
IMAGE = "python:3.12-slim"


@dsl.component(base_image=IMAGE)
def fit(workspace: str, run_id: str, steps: int, seconds_per_step: float) -> float:
    """Fit y = 3x + 1 by gradient descent, one step at a time; checkpoint on SIGTERM and resume."""
    import json
    import os
    import signal
    import sys
    import time
    from pathlib import Path

    stop = {"asked": False}

    def on_sigterm(signum: int, frame: object) -> None:
        stop["asked"] = True  # only a flag: the loop saves between two steps, never in the middle of one

    signal.signal(signal.SIGTERM, on_sigterm)
    checkpoint = Path(workspace) / "checkpoints" / run_id / "state.json"
    checkpoint.parent.mkdir(parents=True, exist_ok=True)

    def save(state: dict) -> None:
        partial = checkpoint.with_suffix(".partial")
        partial.write_text(json.dumps(state))
        os.replace(partial, checkpoint)  # atomic: the old checkpoint or the new one, never half of one

    state = {"step": 0, "w": 0.0, "b": 0.0}
    if checkpoint.exists():
        state = json.loads(checkpoint.read_text())
        print(f"resuming at step {state['step']}", flush=True)
    data = [(x / 10, 3 * x / 10 + 1) for x in range(10)]
    while state["step"] < steps:
        grad_w = sum(2 * (state["w"] * x + state["b"] - y) * x for x, y in data) / len(data)
        grad_b = sum(2 * (state["w"] * x + state["b"] - y) for x, y in data) / len(data)
        state = {"step": state["step"] + 1, "w": state["w"] - 0.1 * grad_w, "b": state["b"] - 0.1 * grad_b}
        time.sleep(seconds_per_step)
        if stop["asked"]:
            save(state)
            print(f"SIGTERM: saved step {state['step']} to {checkpoint}", flush=True)
            sys.exit(143)  # non-zero: Argo must not take a stopped step for a finished one
    save(state)
    return sum((state["w"] * x + state["b"] - y) ** 2 for x, y in data) / len(data)


def build() -> Callable[..., object]:
    @dsl.pipeline(name="checkpoint-on-sigterm",
                  description="A spot step that checkpoints on SIGTERM and resumes when Argo retries it.")
    def checkpoint_on_sigterm(workspace_pvc: str = "spotkube-training", steps: int = 100_000,
                              seconds_per_step: float = 0.01) -> float:
        task = fit(workspace=WORKSPACE, run_id=dsl.PIPELINE_JOB_ID_PLACEHOLDER, steps=steps,
                   seconds_per_step=seconds_per_step)
        on_spot(task, CpuSpot(), evictions=10, failures=1)
        kubernetes.mount_pvc(task, pvc_name=workspace_pvc, mount_path=WORKSPACE)
        return task.output

    return checkpoint_on_sigterm


def compile(path: str | Path) -> Path:
    """Compile the pipeline to `path` (YAML) and return the path."""
    compiler.Compiler().compile(build(), str(path))
    return Path(path)


if __name__ == "__main__":
    print(compile(sys.argv[1] if len(sys.argv) > 1 else "checkpoint_on_sigterm.yaml"))
