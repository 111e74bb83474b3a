"""The two figures `plan_speed.py` judges, counted in instructions, which a busy machine doesn't change.

On a shared 2-core machine the CPU time of the same plan moves by a tenth of a second from run to run,
as much as 50 GPU pools cost beyond the floor, so the per-pool figure of `make bench` can read half or
twice its value. valgrind's cachegrind counts the instructions each process executes instead: the same
code gives the same count, to a few hundredths of a percent (with `PYTHONHASHSEED=0` and compiled
bytecode), so a change's effect shows however loaded the machine is. Each figure is also converted to
CPU time at the floor's own rate (its instructions per CPU second, from its best of three runs): an
estimate, since how many instructions a second a processor runs depends on the code, and a low one for
a pool, whose registration under a parent runs fewer a second than the bare floor's (docs/speed.md).

    python bench/instructions.py        # about 2.5 minutes on 2 cores; needs valgrind

It measures, in fresh interpreters under `valgrind --tool=cachegrind`:
- spotkube's own import share: the instructions of importing the modules of spotkube's that a plan of
  aks-dev-uksouth loads, after everything before them (`plan_speed.start_up`'s last step);
- each GPU pool beyond the floor: `spotkube plan` and its floor for 1 and 50 GPU pools (the stacks
  `plan_speed.py` generates), (plan 50 - floor 50 - plan 1 + floor 1) / 49;
- of that, the SDK's own share: `floor.py`'s parented pools against the same resources bare, the same
  way, so that what is left is spotkube's own.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from floor import PARENTED_POOL_TYPES, POOL_TYPE
from plan_speed import (
    IMPORT_TARGET,
    POOL_TARGET_MS,
    REPO,
    child_env,
    generated_project,
    run_child,
    stack_types,
    start_up,
)

PLAN_SPEED = Path(__file__).resolve().parent / "plan_speed.py"
POOLS = (1, 50)


def instructions(*args: str) -> int:
    """The instructions a fresh interpreter executes running `plan_speed.py --child ARGS`, its
    bytecode compiled by a first run."""
    command = [sys.executable, str(PLAN_SPEED), "--child", *args]
    env = {**child_env(), "PYTHONHASHSEED": "0"}
    subprocess.run(command, env=env, check=True, capture_output=True)
    counted = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
                              *command], env=env, check=True, capture_output=True, text=True)
    found = re.search(r"I\s+refs:\s+([\d,]+)", counted.stderr)
    if found is None:
        raise SystemExit(f"valgrind printed no instruction count:\n{counted.stderr}")
    return int(found.group(1).replace(",", ""))


def main() -> None:
    if shutil.which("valgrind") is None:
        raise SystemExit("bench/instructions.py needs valgrind (apt install valgrind)")
    stack = "aks-dev-uksouth"
    with tempfile.TemporaryDirectory() as scratch:
        listed = Path(scratch) / "modules.json"
        run_child("modules", str(REPO), stack, str(listed))
        steps = start_up(json.loads(listed.read_text()))
    before, everything = steps[-2][1], steps[-1][1]
    share = instructions("imports", json.dumps(everything)) - instructions("imports", json.dumps(before))

    generated = generated_project(POOLS)
    try:
        floors = {n: json.dumps(stack_types(generated, f"aks-bench-{n}", every=True)) for n in POOLS}
        plan = {n: instructions("plan", str(generated), f"aks-bench-{n}") for n in POOLS}
        floor = {n: instructions("floor", floors[n]) for n in POOLS}
        floor_cpu = {n: min(run_child("floor", floors[n]).cpu_s for _ in range(3)) for n in POOLS}
    finally:
        shutil.rmtree(generated)
    parented = {n: instructions("parented", str(n)) for n in POOLS}
    bare = {n: instructions("floor", json.dumps([*PARENTED_POOL_TYPES, *[POOL_TYPE] * n])) for n in POOLS}
    first, last = POOLS
    per_pool = ((plan[last] - floor[last]) - (plan[first] - floor[first])) / (last - first)
    sdk_share = ((parented[last] - bare[last]) - (parented[first] - bare[first])) / (last - first)
    # The floor's own CPU seconds per instruction, from what each pool adds to it.
    rate = (floor_cpu[last] - floor_cpu[first]) / (floor[last] - floor[first])
    print(f"spotkube's own import share ({len(everything) - len(before)} modules): {share / 1e6:.0f} M instructions, "
          f"about {share * rate:.3f} CPU s at the floor's rate (target {IMPORT_TARGET:.2f} s)")
    print(f"each GPU pool beyond the floor: {per_pool / 1e6:.1f} M instructions, about {per_pool * rate * 1e3:.1f} "
          f"CPU ms at the floor's rate (target {POOL_TARGET_MS:.0f} ms); the floor's pool: "
          f"{(floor[last] - floor[first]) / (last - first) / 1e6:.1f} M")
    print(f"  of which the SDK's own work for a pool registered as a component must register it: "
          f"{sdk_share / 1e6:.1f} M; spotkube's own: {(per_pool - sdk_share) / 1e6:.1f} M, about "
          f"{(per_pool - sdk_share) * rate * 1e3:.1f} CPU ms")
    print(f"the floor's rate: {1 / rate / 1e9:.2f} G instructions per CPU second")


if __name__ == "__main__":
    main()
