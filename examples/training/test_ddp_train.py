"""The DDP example keeps the checkpoint contract, on CPU: two workers (two "nodes", as a TrainJob of two runs
them), one evicted with SIGTERM mid-run, then restarted as JobSet restarts them; the job resumes from the
checkpoint the evicted worker saved and finishes. Needs torch: `make test-training` installs it in a venv of
its own, so `make test` stays fast."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

SCRIPT = Path(__file__).with_name("ddp_train.py")
STEPS = 80


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_workers(checkpoints: Path, port: int, log: Path) -> list[subprocess.Popen[str]]:
    """Both workers, with the variables torchrun gives each node's process and the contract's own."""
    workers = []
    for rank in (0, 1):
        env = {**os.environ, "RANK": str(rank), "WORLD_SIZE": "2", "LOCAL_RANK": "0", "MASTER_ADDR": "127.0.0.1",
               "MASTER_PORT": str(port), "SPOTKUBE_CHECKPOINT_DIR": str(checkpoints),
               "SPOTKUBE_CHECKPOINT_INTERVAL_SECONDS": "0.5", "TRAIN_STEPS": str(STEPS), "STEP_SECONDS": "0.05"}
        workers.append(subprocess.Popen([sys.executable, str(SCRIPT)], env=env, text=True,
                                        stdout=(log.parent / f"{log.name}.{rank}").open("w"),
                                        stderr=subprocess.STDOUT))
    return workers


def output(log: Path, rank: int) -> str:
    return (log.parent / f"{log.name}.{rank}").read_text()


def test_an_evicted_worker_saves_on_sigterm_and_the_restarted_job_resumes_and_finishes(tmp_path: Path) -> None:
    checkpoints = tmp_path / "checkpoints"
    first = start_workers(checkpoints, free_port(), tmp_path / "first")
    deadline = time.monotonic() + 120
    while not list(checkpoints.glob("step-*.pt")):
        assert time.monotonic() < deadline, output(tmp_path / "first", 0)
        assert all(w.poll() is None for w in first), output(tmp_path / "first", 0) + output(tmp_path / "first", 1)
        time.sleep(0.1)
    first[1].send_signal(signal.SIGTERM)  # the node of rank 1 is evicted
    assert first[1].wait(timeout=60) == 143
    evicted = output(tmp_path / "first", 1)
    assert "rank 1: SIGTERM, saved step-" in evicted, evicted
    saved_at = int(evicted.split("saved step-")[1].split(".pt")[0])
    assert 0 < saved_at < STEPS, "evicted mid-run"
    first[0].send_signal(signal.SIGTERM)  # JobSet deletes every worker's pod before it recreates them
    try:
        first[0].wait(timeout=60)
    except subprocess.TimeoutExpired:
        first[0].kill()
        first[0].wait()

    second = start_workers(checkpoints, free_port(), tmp_path / "second")
    assert [w.wait(timeout=180) for w in second] == [0, 0], output(tmp_path / "second", 0)
    resumed = output(tmp_path / "second", 0)
    newest = max(int(p.name[5:-3]) for p in checkpoints.glob("step-*.pt") if p.name != f"step-{STEPS}.pt")
    assert newest >= saved_at
    assert "rank 0: resumed from step-" in resumed and "rank 1: resumed from step-" in output(tmp_path / "second", 1)
    resumed_at = int(resumed.split("resumed from step-")[1].split(".pt")[0])
    assert resumed_at >= saved_at, "nothing saved before the eviction is done again"
    done = resumed.split("done: ")[1].split(",")
    assert done[0] == f"{STEPS} steps", resumed
    weight, bias = (float(part.split()[-1]) for part in done[1:3])
    assert abs(weight - 3) < 0.05 and abs(bias + 1) < 0.05, f"it learnt y = 3x - 1: {resumed}"
    assert not list(checkpoints.glob(".*partial")), "every save is whole"
