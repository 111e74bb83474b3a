"""How fast the offline plan runs, against the floor the Pulumi SDKs themselves set.

The SDKs load their big type modules lazily, when the first resource of a kind is built, so a bare
import is not the floor. The floor is `floor.py` beside this file: a minimal program that builds the
resources a stack registers (one bare resource for each, with only the arguments its SDK class
requires), directly with the SDKs under Pulumi's documented echo mocks, hosted as the plan hosts its
program (`spotkube.components.mock_host`): what any program building that stack pays, and spotkube
cannot go below (an azure-native AgentPool alone declares about 115 aliases, each
an Output chain in `pulumi.Resource.__init__`). Each
measurement runs in a fresh interpreter: its CPU time (user + system, from wait4; a busy machine
changes it less than the wall time, which is shown beside it), and the peak resident
memory of that process alone (VmHWM in /proc/self/status, which a new program image starts afresh;
`ru_maxrss` would carry over the parent's peak through fork and exec). A plan and its floor run turn
about and the best of several runs is kept. The plan is the real command, `spotkube plan --stack S
--format json`.

    python bench/plan_speed.py [--runs 5] [--markdown docs/speed.md]
    python bench/plan_speed.py --quick     # once, for CI: every floor builder, one stack, the start-up
                                           # steps, 2 GPU pools

The floor's share is the Pulumi SDKs' own; what the plan adds beyond it is spotkube's. Targets (checked
here, never in a timed test), both absolute: spotkube's own import share, the modules of spotkube's
that a plan loads, at most 0.1 CPU s; and each GPU pool at most 4 CPU ms beyond what it adds to the
floor, from 1 to 50 pools. Beside the per-pool figure, and not judged, the SDK's own share of it:
`floor.py`'s pools registered as a component must register them (parented, with a pool's real fields,
each waiting for the one before) against the same resources bare. The full run exits 1 when a target
is missed; `--quick` measures too little to judge (one run, cold bytecode) and fails only when
something doesn't run: a floor builder that breaks, or a type the stacks register that the floor can't
build.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
BENCH = Path(__file__).resolve().parent
POOL_COUNTS = (1, 10, 50)
QUICK_POOL_COUNTS = (2,)
#: spotkube's own import share (CPU s): loading the modules of spotkube's that a plan loads.
IMPORT_TARGET = 0.10
#: What each GPU pool may add beyond what it adds to the floor (CPU ms), from 1 to 50 pools.
POOL_TARGET_MS = 4.0


def peak_memory_mib() -> float:
    """This process's peak resident memory since it started its program: VmHWM, where Linux has it."""
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    scale = 1024 * 1024 if sys.platform == "darwin" else 1024  # bytes on macOS, KiB on Linux
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / scale


def child_plan(project_dir: str, stack: str) -> None:
    """`spotkube plan --stack S --format json`, in this process, its output dropped."""
    from spotkube.cli.app import app

    with contextlib.redirect_stdout(io.StringIO()):
        try:
            app(["plan", "--stack", stack, "--format", "json", "--project", project_dir])
        except SystemExit as done:
            if done.code not in (0, None):
                raise SystemExit(f"spotkube plan --stack {stack} exited {done.code}") from None


def child_modules(project_dir: str, stack: str, into: str) -> None:
    """`child_plan`, then the modules it loaded, written to the file `into` as JSON."""
    child_plan(project_dir, stack)
    Path(into).write_text(json.dumps(sorted(sys.modules)))


def child_floor(types: str) -> None:
    sys.path.insert(0, str(BENCH))
    from floor import build_floor

    build_floor(json.loads(types))


def child_parented(count: str) -> None:
    sys.path.insert(0, str(BENCH))
    from floor import build_parented_pools

    build_parented_pools(int(count))


def child_imports(modules: str, timed: str = "[]") -> None:
    """Import `modules`, then `timed`, and print the CPU seconds the second list took in this process (the
    start and exit of an interpreter, which a difference of two processes carries, left out)."""
    for module in json.loads(modules):
        importlib.import_module(module)
    start = time.process_time()
    for module in json.loads(timed):
        importlib.import_module(module)
    print(f"timed {time.process_time() - start}")


#: The libraries spotkube is built on (its runtime dependencies besides Pulumi's, and theirs), by package.
LIBRARIES = ("pydantic", "pydantic_core", "annotated_types", "typing_inspection", "typing_extensions", "typer",
             "click", "shellingham", "rich", "markdown_it", "mdurl", "pygments", "yaml", "platformdirs")


def start_up(loaded: list[str]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """What a plan loads, step by step, from the modules it `loaded`: Pulumi's runtime, its mocks and
    the SDK modules of the stack's resources (the floor loads them too), then the libraries spotkube is
    built on, then every module of spotkube's the plan loaded. The last step is spotkube's own import
    share: the fixed part of a plan's cost beyond its floor that loading code takes."""
    # pulumiverse_time is an SDK like pulumi_azure_native: the floor builds its Sleep too.
    pulumi = ("pulumi", "pulumi.runtime.mocks", *(m for m in loaded if m.startswith(("pulumi_", "pulumiverse_"))))
    # Every module of theirs the plan loaded, as for the SDKs: pydantic, for one, loads BaseModel's own
    # module only when a model is first defined, so importing the package alone left it to spotkube's share.
    libraries = tuple(m for m in loaded if m.split(".")[0] in LIBRARIES)
    own = tuple(m for m in loaded if m == "spotkube" or m.startswith("spotkube."))
    return (("Pulumi's runtime, mocks and the stack's SDK modules", pulumi),
            ("+ pydantic, typer, rich, PyYAML, platformdirs", (*pulumi, *libraries)),
            ("+ spotkube's modules the plan loads", (*pulumi, *libraries, *own)))


@dataclass(frozen=True)
class Measure:
    wall_s: float
    cpu_s: float
    peak_mib: float
    #: What the child timed itself (`child_imports`), if anything.
    timed_s: float | None = None


#: Where the children keep their bytecode: compiled once, on the warm-up run, as a user's second plan
#: finds it (uv installs without compiling, and PYTHONDONTWRITEBYTECODE would make every run compile).
BYTECODE = Path(tempfile.gettempdir()) / "spotkube-bench-bytecode"


def child_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "PYTHONPYCACHEPREFIX": str(BYTECODE)}


def run_child(*args: str) -> Measure:
    """One fresh interpreter running `--child ARGS`: its wall time, its CPU time (user + system, from
    wait4: the other processes of a busy machine change it less than the wall time) and its own peak memory."""
    start = time.perf_counter()
    child = subprocess.Popen([sys.executable, __file__, "--child", *args], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=child_env())
    stdout, stderr = "", ""
    with child:
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)
        stdout, stderr = child.stdout.read(), child.stderr.read()  # type: ignore[union-attr]
    if child.returncode != 0:
        raise SystemExit(f"{' '.join(args[:2])} failed:\n{stderr.strip()}")
    lines = stdout.strip().splitlines()
    timed = next((float(line.split()[1]) for line in lines if line.startswith("timed ")), None)
    return Measure(wall, usage.ru_utime + usage.ru_stime, float(lines[-1]), timed)


def _best(measures: list[Measure]) -> Measure:
    timed = [m.timed_s for m in measures if m.timed_s is not None]
    return Measure(min(m.wall_s for m in measures), min(m.cpu_s for m in measures),
                   min(m.peak_mib for m in measures), min(timed) if timed else None)


@dataclass(frozen=True)
class Pair:
    """A plan and its floor, each the best of its runs, and what the plan took beyond the floor in each
    run of the two, which ran one after the other and so met the same load."""

    plan: Measure
    floor: Measure
    beyond_per_run: tuple[float, ...]


def measure_pair(plan: tuple[str, ...], floor: tuple[str, ...], *, runs: int, warm: bool) -> Pair:
    """The best of `runs` of a plan and of its floor, run turn about so that both meet the same load,
    after one unmeasured run of each that compiles the bytecode (`warm`), and what the plan took beyond
    the floor in each of the runs."""
    if warm:
        run_child(*plan)
        run_child(*floor)
    pairs = [(run_child(*plan), run_child(*floor)) for _ in range(runs)]
    return Pair(_best([p for p, _ in pairs]), _best([f for _, f in pairs]),
                tuple(p.cpu_s - f.cpu_s for p, f in pairs))


def per_pool_ms(fewest: tuple[int, Pair], most: tuple[int, Pair]) -> tuple[float, list[float]]:
    """What each pool adds beyond the floor from the fewer to the more pools, in CPU ms: from the best
    runs (the judged figure), and run by run, each from the runs made back to back (its spread shows how
    far one run of the benchmark can be from another on this machine)."""
    (low, at_low), (high, at_high) = fewest, most
    best = ((at_high.plan.cpu_s - at_high.floor.cpu_s) - (at_low.plan.cpu_s - at_low.floor.cpu_s)) / (high - low)
    each = [(beyond_high - beyond_low) / (high - low) * 1000
            for beyond_low, beyond_high in zip(at_low.beyond_per_run, at_high.beyond_per_run, strict=True)]
    return best * 1000, each


def parented_pool_ms(counts: tuple[int, int], *, runs: int, warm: bool) -> float:
    """What a GPU pool costs the SDK beyond the floor's bare pool when it is registered as a component
    must register it (`floor.build_parented_pools`), in CPU ms, from the fewer to the more pools."""
    sys.path.insert(0, str(BENCH))
    from floor import PARENTED_POOL_TYPES, POOL_TYPE

    pairs = [(count, measure_pair(("parented", str(count)),
                                  ("floor", json.dumps([*PARENTED_POOL_TYPES, *[POOL_TYPE] * count])),
                                  runs=runs, warm=warm)) for count in counts]
    return per_pool_ms(pairs[0], pairs[1])[0]


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
        config = {k: v for k, v in base["config"].items() if k != "spotkube:acknowledgements"}
        config["spotkube:gpuPools"] = [
            {"name": f"gpu{i}", "machine": "Standard_NC4as_T4_v3", "min": 0, "max": 4} for i in range(count)
        ]
        (folder / "stacks" / f"Pulumi.aks-bench-{count}.yaml").write_text(yaml.safe_dump({"config": config}))
    return folder


def machine() -> str:
    """The machine the numbers were taken on, for the table's caption."""
    cpu = platform.processor() or platform.machine()
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    load = f", load average {os.getloadavg()[0]:.1f}" if hasattr(os, "getloadavg") else ""
    return (f"{platform.system()} {platform.machine()}, {os.cpu_count()} cores ({cpu}){load}, "
            f"Python {platform.python_version()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5, help="runs per measurement; the best is kept (default 5: "
                        "a shared machine's noise only adds time, and 3 runs still let it through)")
    parser.add_argument("--quick", action="store_true",
                        help="one cold run: every floor builder, one stack, the start-up steps, 2 pools")
    parser.add_argument("--markdown", type=Path, help="also write the tables to this Markdown file")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        kind, *rest = args.child
        {"plan": child_plan, "modules": child_modules, "floor": child_floor, "parented": child_parented,
         "imports": child_imports}[kind](*rest)
        print(peak_memory_mib())
        return

    from spotkube.platform.project import find_project

    runs, warm = (1, False) if args.quick else (args.runs, True)
    stacks = find_project(REPO).stacks()
    types = {stack: stack_types(REPO, stack, every=True) for stack in stacks}
    sys.path.insert(0, str(BENCH))
    from floor import BUILDERS, missing_builders

    lacking = missing_builders([t for found in types.values() for t in found])
    if lacking:
        raise SystemExit(f"bench/floor.py has no builder for {', '.join(lacking)}, which the stacks register; add one")
    lines = [f"spotkube plan speed, best of {runs}, {time.strftime('%Y-%m-%d')}, {machine()}", ""]
    missed: list[str] = []
    if args.quick:
        every = sorted(BUILDERS)
        floor = run_child("floor", json.dumps(every))
        lines.append(f"floor of every type the floor builds ({len(every)}): {floor.wall_s:.2f} s, "
                     f"{floor.peak_mib:.0f} MiB")
        stacks = stacks[:1]
    lines += ["Times are CPU seconds (user + system) of each fresh process, which a busy machine changes less than "
              "the wall time; wall seconds in brackets. The floor builds the same resources with the SDKs alone: its "
              "share is the Pulumi SDKs' own.", "",
              "| stack | plan s | floor s | beyond floor s | plan × floor | plan MiB | floor MiB | memory × floor |",
              "|---|---|---|---|---|---|---|---|"]
    for stack in stacks:
        pair = measure_pair(("plan", str(REPO), stack), ("floor", json.dumps(types[stack])), runs=runs, warm=warm)
        plan, floor = pair.plan, pair.floor
        lines.append(f"| {stack} | {plan.cpu_s:.2f} ({plan.wall_s:.2f}) | {floor.cpu_s:.2f} ({floor.wall_s:.2f}) | "
                     f"{plan.cpu_s - floor.cpu_s:.2f} | {plan.cpu_s / floor.cpu_s:.2f} | {plan.peak_mib:.0f} | "
                     f"{floor.peak_mib:.0f} | {plan.peak_mib / floor.peak_mib:.2f} |")

    with tempfile.TemporaryDirectory() as scratch:
        listed = Path(scratch) / "modules.json"
        run_child("modules", str(REPO), stacks[0], str(listed))
        loaded_by_plan = json.loads(listed.read_text())
    lines += ["", f"What a plan of {stacks[0]} loads (fresh interpreters, cumulative):", "",
              "| loaded | CPU s | step s | MiB |", "|---|---|---|---|"]
    previous = 0.0
    steps = start_up(loaded_by_plan)
    for label, modules in steps:
        loaded = _best([run_child("imports", json.dumps(modules)) for _ in range(runs + (1 if warm else 0))])
        lines.append(f"| {label} | {loaded.cpu_s:.2f} | {loaded.cpu_s - previous:+.2f} | {loaded.peak_mib:.0f} |")
        previous = loaded.cpu_s
    # The last step's modules beyond the one before it, timed inside the interpreter that imports them.
    before, everything = set(steps[-2][1]), steps[-1][1]
    own = [m for m in everything if m not in before]
    share = _best([run_child("imports", json.dumps(steps[-2][1]), json.dumps(own))
                   for _ in range(runs + (1 if warm else 0))]).timed_s or 0.0
    lines += ["", f"spotkube's own import share, its {len(own)} modules timed inside the interpreter after the rest: "
              f"{share:.3f} CPU s (target {IMPORT_TARGET:.2f} s): {'ok' if share <= IMPORT_TARGET else 'over'}"]
    if not args.quick and share > IMPORT_TARGET:
        missed.append(f"spotkube's import share {share:.3f} s")

    counts = QUICK_POOL_COUNTS if args.quick else POOL_COUNTS
    generated = generated_project(counts)
    try:
        measured = {n: measure_pair(("plan", str(generated), f"aks-bench-{n}"),
                                    ("floor", json.dumps(stack_types(generated, f"aks-bench-{n}", every=True))),
                                    runs=runs, warm=warm) for n in counts}
    finally:
        shutil.rmtree(generated)
    lines += ["", "| GPU pools | plan s | floor s | beyond floor s | plan × floor | plan MiB | floor MiB |",
              "|---|---|---|---|---|---|---|"]
    for count, pair in measured.items():
        plan, floor = pair.plan, pair.floor
        lines.append(f"| {count} | {plan.cpu_s:.2f} ({plan.wall_s:.2f}) | {floor.cpu_s:.2f} ({floor.wall_s:.2f}) | "
                     f"{plan.cpu_s - floor.cpu_s:.2f} | {plan.cpu_s / floor.cpu_s:.2f} | {plan.peak_mib:.0f} | "
                     f"{floor.peak_mib:.0f} |")
    if len(counts) > 1:
        fewest, most = min(counts), max(counts)
        pool_ms, each_run = per_pool_ms((fewest, measured[fewest]), (most, measured[most]))
        lines += ["", f"Each GPU pool beyond the floor ({fewest} to {most} pools): {pool_ms:.1f} ms "
                  f"(target {POOL_TARGET_MS:.0f} ms): {'ok' if pool_ms <= POOL_TARGET_MS else 'over'}"]
        if not args.quick and pool_ms > POOL_TARGET_MS:
            missed.append(f"{pool_ms:.1f} ms per GPU pool beyond the floor")
        if len(each_run) > 1:
            lines.append(f"Run by run (each plan beside the floor run right after it; not judged): median "
                         f"{statistics.median(each_run):.1f} ms, from {min(each_run):.1f} to {max(each_run):.1f} ms")
        sdk_ms = parented_pool_ms((fewest, most), runs=runs, warm=warm)
        lines += [f"Of that, the SDK's own work for a pool registered as a component must register it (`floor.py`'s "
                  f"parented pools against the same resources bare; not judged): {sdk_ms:.1f} ms; "
                  f"spotkube's own: {pool_ms - sdk_ms:.1f} ms"]
    print("\n".join(lines))
    if args.markdown:
        args.markdown.write_text("\n".join(lines) + "\n")
    if missed:
        raise SystemExit("targets missed: " + "; ".join(missed))


if __name__ == "__main__":
    main()
