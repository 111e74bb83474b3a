"""How fast the offline plan runs, against the floor the Pulumi SDKs themselves set.

The SDKs load their big type modules lazily, when the first resource of a kind is built, so a bare
import is not the floor. The floor is `floor.py` beside this file: a minimal program that builds
one resource of each type a stack uses, directly with the SDKs and under the same mocks. Each
measurement runs in a fresh interpreter (wall time from spawn to exit, peak RSS of that process),
and the best of several runs is kept, because a 2-core machine is noisy.

    python bench/plan_speed.py [--runs 3]

Targets: one stack's plan at most 1.5x its floor; a stack of 50 GPU pools at most 2x one pool.
The second target cannot hold on AKS: azure-native's AgentPool declares about 115 API-version
aliases, and `pulumi.Resource.__init__` builds an Output chain for each alias of each resource
(pulumi/resource.py, `collapse_alias_to_urn`), under `pulumi up` as under mocks. So the scaling
table also shows the floor of the same resources (one bare AgentPool per pool), which is what
spotkube's own overhead is measured against.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
BENCH = Path(__file__).resolve().parent
POOL_COUNTS = (1, 10, 50)


def child_plan(project_dir: str, stack: str) -> None:
    """Everything `spotkube plan --stack S --format json` does, in this process."""
    from spotkube.cli.report import stack_document, to_json
    from spotkube.components.offline import run_stack
    from spotkube.platform.project import find_project

    to_json([stack_document(run_stack(find_project(Path(project_dir)), stack))], single=True)


def child_floor(types: str) -> None:
    sys.path.insert(0, str(BENCH))
    from floor import build_floor

    build_floor(json.loads(types))


def measure(*args: str, runs: int) -> tuple[float, float]:
    """Best wall time (s) and peak RSS (MiB) of `python plan_speed.py --child ARGS`."""
    best_wall, best_rss = float("inf"), float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        done = subprocess.run([sys.executable, __file__, "--child", *args], capture_output=True, text=True,
                              check=True)
        best_wall = min(best_wall, time.perf_counter() - start)
        best_rss = min(best_rss, float(done.stdout.strip().splitlines()[-1]))
    return best_wall, best_rss


def stack_types(project_dir: Path, stack: str, *, every: bool = False) -> list[str]:
    """The resource types a stack registers, its components aside: one of each for the floor, or
    with `every` one entry per registered resource (the floor of the same resources)."""
    from spotkube.components.offline import run_stack
    from spotkube.platform.project import find_project

    run = run_stack(find_project(project_dir), stack)
    types = [r.type for r in run.registrations if not r.type.startswith("spotkube:")]
    return sorted(types if every else set(types))


def generated_project(pool_counts: tuple[int, ...]) -> Path:
    """A copy of the project whose stacks are the dev AKS stack with 1, 10 or 50 GPU pools."""
    folder = Path(tempfile.mkdtemp(prefix="spotkube-bench-"))
    shutil.copy(REPO / "Pulumi.yaml", folder)
    shutil.copytree(REPO / "infra", folder / "infra")
    (folder / "stacks").mkdir()
    base = yaml.safe_load((REPO / "stacks" / "Pulumi.aks-dev-uksouth.yaml").read_text())
    for count in pool_counts:
        config = dict(base["config"])
        config["spotkube:gpuPools"] = [
            {"name": f"gpu{i}", "machine": "Standard_NC4as_T4_v3", "min": 0, "max": 4} for i in range(count)
        ]
        (folder / "stacks" / f"Pulumi.aks-bench-{count}.yaml").write_text(yaml.safe_dump({"config": config}))
    return folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        kind, *rest = args.child
        child_plan(*rest) if kind == "plan" else child_floor(*rest)
        print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
        return

    from spotkube.platform.project import find_project

    print(f"spotkube plan speed, best of {args.runs}, {time.strftime('%Y-%m-%d')}, "
          f"Python {sys.version.split()[0]}, {subprocess.check_output(['nproc'], text=True).strip()} cores")
    print(f"{'stack':28} {'plan s':>7} {'MiB':>6} {'floor s':>8} {'MiB':>6} {'time x':>7} {'RSS x':>6}")
    for stack in find_project(REPO).stacks():
        plan_wall, plan_rss = measure("plan", str(REPO), stack, runs=args.runs)
        floor_wall, floor_rss = measure("floor", json.dumps(stack_types(REPO, stack)), runs=args.runs)
        print(f"{stack:28} {plan_wall:7.2f} {plan_rss:6.0f} {floor_wall:8.2f} {floor_rss:6.0f} "
              f"{plan_wall / floor_wall:7.2f} {plan_rss / floor_rss:6.2f}")

    generated = generated_project(POOL_COUNTS)
    try:
        timings = {n: measure("plan", str(generated), f"aks-bench-{n}", runs=args.runs) for n in POOL_COUNTS}
        floors = {n: measure("floor", json.dumps(stack_types(generated, f"aks-bench-{n}", every=True)),
                             runs=args.runs) for n in POOL_COUNTS}
    finally:
        shutil.rmtree(generated)
    one_wall, one_rss = timings[POOL_COUNTS[0]]
    print(f"\n{'GPU pools':>10} {'plan s':>7} {'MiB':>6} {'time x 1 pool':>14} {'RSS x 1 pool':>13} "
          f"{'same-resources floor s':>23} {'plan x that floor':>18}")
    for count, (wall, rss) in timings.items():
        floor_wall = floors[count][0]
        print(f"{count:>10} {wall:7.2f} {rss:6.0f} {wall / one_wall:14.2f} {rss / one_rss:13.2f} "
              f"{floor_wall:23.2f} {wall / floor_wall:18.2f}")


if __name__ == "__main__":
    main()
