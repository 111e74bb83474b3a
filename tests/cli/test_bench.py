"""The benchmark can't rot: its floor builds every type the shipped stacks register, and the memory
it reports is the measured process's own, not its parent's."""

from __future__ import annotations

import functools
import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from spotkube.clouds import CLOUDS, PROFILES, load_stack_spec
from spotkube.components.offline import run_stack
from spotkube.platform.project import Project, find_project

REPO = Path(__file__).resolve().parents[2]


def bench_module(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"bench_{name}", REPO / "bench" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # as an import would: dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_the_floor_builds_every_type_the_stacks_register(repo_project: Project) -> None:
    floor = bench_module("floor")
    stacks = repo_project.stacks()
    assert stacks, "the repository ships stacks"
    for stack in stacks:
        registered = [r.type for r in run_stack(repo_project, stack).registrations]
        assert floor.missing_builders(registered) == [], stack


def test_a_type_without_a_builder_is_named() -> None:
    floor = bench_module("floor")
    assert floor.missing_builders(["spotkube:index:AksGpuCluster", "kubernetes:batch/v1:Job",
                                   "time:index/sleep:Sleep"]) == ["kubernetes:batch/v1:Job"]


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="VmHWM is Linux's")
def test_memory_is_the_childs_own_not_its_parents() -> None:
    """A parent holding 400 MiB starts the floor child the way the benchmark does; the child's figure
    stays its own (ru_maxrss would report the parent's 400 MiB and more)."""
    parent = f"""
import subprocess, sys
ballast = bytearray(400 * 1024 * 1024)
for i in range(0, len(ballast), 4096):
    ballast[i] = 1
done = subprocess.run([sys.executable, {str(REPO / 'bench' / 'plan_speed.py')!r}, "--child", "floor",
                       {json.dumps(json.dumps(["time:index/sleep:Sleep"]))}], capture_output=True, text=True)
print(done.stdout.strip().splitlines()[-1] if done.returncode == 0 else "failed: " + done.stderr)
"""
    result = subprocess.run([sys.executable, "-c", parent], capture_output=True, text=True, timeout=300, check=True)
    peak = float(result.stdout.strip())
    assert 20 < peak < 300, result.stdout


def test_the_command_line_loads_no_library_only_another_command_needs() -> None:
    """Every `spotkube plan` pays for what the CLI imports at start-up: numpy (simulate), the Kubernetes
    client (drill) and requests (prices refresh) are loaded by the commands that use them, not before."""
    probe = ("import sys, spotkube.cli.app; "
             "print(sorted(m for m in ('numpy', 'kubernetes', 'requests') if m in sys.modules))")
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert loaded.stdout.strip() == "[]"


def test_the_floor_loads_nothing_of_spotkube_but_how_the_plan_hosts_its_program() -> None:
    """The floor is what the SDKs alone cost: spotkube's specs, catalogs and pydantic are the plan's
    cost, and a floor that loaded them would make the plan look closer to it than it is."""
    probe = (f"import sys; sys.path.insert(0, {str(REPO / 'bench')!r}); import floor; "
             "floor.build_floor(['kubernetes:core/v1:Namespace', 'time:index/sleep:Sleep']); "
             "floor.build_parented_pools(2); "
             "print(sorted(m for m in sys.modules if m.startswith(('spotkube.', 'pydantic', 'typer'))))")
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert loaded.stdout.strip() == "['spotkube.components', 'spotkube.components.mock_host']"


def test_the_parented_pools_are_registered_as_a_component_registers_them(monkeypatch: pytest.MonkeyPatch) -> None:
    """The SDK's share the benchmark reports is only that if its pools are children of a component, carry a
    pool's fields and each wait for the one before, as the plan's pools do."""
    floor = bench_module("floor")
    registered: list[tuple[Any, str]] = []

    class RecordingMonitor(floor.mocks.MockMonitor):  # type: ignore[misc,name-defined]
        def RegisterResource(self, request: Any) -> Any:
            response = super().RegisterResource(request)
            registered.append((request, response.urn))
            return response

    monkeypatch.setattr(floor.mocks, "MockMonitor", RecordingMonitor)
    floor.build_parented_pools(3)
    component_urn = next(urn for request, urn in registered if request.type == "floor:index:Cluster")
    pools = [(request, urn) for request, urn in registered if request.type == floor.POOL_TYPE]
    assert len(pools) == 3
    assert {request.parent for request, _ in pools} == {component_urn}
    assert [urn in request.dependencies for (request, _), (_, urn) in zip(pools[1:], pools, strict=False)] == [True] * 2
    assert all(request.object["nodeTaints"] and request.object["nodeLabels"] for request, _ in pools)


def test_the_per_pool_figure_is_judged_on_the_best_runs_and_shown_run_by_run() -> None:
    """The judged figure takes each measurement's best run; the run-by-run figures pair each plan with the
    floor run right after it, so one busy moment can't be read as spotkube's cost."""
    speed = bench_module("plan_speed")
    one_pool = speed.Pair(speed.Measure(0, 1.00, 0), speed.Measure(0, 0.70, 0), (0.30, 0.35))
    fifty_pools = speed.Pair(speed.Measure(0, 2.60, 0), speed.Measure(0, 2.10, 0), (0.55, 0.45))
    best, each_run = speed.per_pool_ms((1, one_pool), (50, fifty_pools))
    assert best == pytest.approx((0.50 - 0.30) / 49 * 1000)
    assert each_run == pytest.approx([(0.55 - 0.30) / 49 * 1000, (0.45 - 0.35) / 49 * 1000])


def every_child_run() -> list[tuple[str, ...]]:
    """One run of each kind the benchmark measures: the floor of every type it can build, the SDK's pools
    registered under a component, a shipped stack's plan, and spotkube's start-up."""
    return [("floor", json.dumps(sorted(bench_module("floor").BUILDERS))), ("parented", "2"),
            ("plan", str(REPO), "aks-dev-uksouth"),
            ("imports", json.dumps(["pulumi", "pulumi.runtime.mocks", "spotkube.cli.app"]))]


@pytest.mark.parametrize("child", every_child_run(), ids=lambda child: child[0])
def test_each_run_the_benchmark_measures_works(child: tuple[str, ...]) -> None:
    """What `make bench` measures can't break unseen (a floor builder an SDK upgrade broke, a plan that
    fails in a fresh interpreter): each kind runs once here, as the benchmark starts it, without timing it."""
    done = subprocess.run([sys.executable, str(REPO / "bench" / "plan_speed.py"), "--child", *child],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert float(done.stdout.strip().splitlines()[-1]) > 0  # the child's own peak memory, in MiB


@functools.cache
def modules_a_plan_loads(stack: str) -> list[str]:
    """spotkube's modules in a fresh interpreter after `spotkube plan` of a shipped stack (which succeeds)."""
    probe = ("import contextlib, io, json, sys\n"
             "from spotkube.cli.app import app\n"
             "with contextlib.redirect_stdout(io.StringIO()):\n"
             f"    try: app(['plan', '--stack', {stack!r}, '--format', 'json', '--project', {str(REPO)!r}])\n"
             "    except SystemExit as done: assert done.code in (0, None), done.code\n"
             "print(json.dumps(sorted(m for m in sys.modules if m.startswith('spotkube.'))))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300, check=True)
    loaded: list[str] = json.loads(done.stdout.strip().splitlines()[-1])
    return loaded


@pytest.mark.parametrize(("stack", "other"), [("aks-dev-uksouth", "gke"), ("gke-dev-us-central1", "aks")])
def test_a_plan_loads_only_its_own_cloud_and_its_own_command(stack: str, other: str) -> None:
    """A plan pays for loading its stack's cloud and the plan command, not for the other cloud's profile
    nor for the modules of the commands it doesn't run."""
    loaded = modules_a_plan_loads(stack)
    assert PROFILES[other].module("profile") not in loaded
    assert PROFILES[stack.split("-")[0]].module("profile") in loaded
    assert not [m for m in loaded if m.startswith("spotkube.cli.commands")]
    assert "spotkube.cli.doctor_views" not in loaded


#: What only spotkube's other commands read, in the neutral code: the commands' flags and the bootstrap's
#: settings, doctor's live reads, the CI identities, the logs query, the price refresh.
NEUTRAL_COMMAND_MODULES = ("spotkube.platform.cloud_options", "spotkube.platform.bootstrap", "spotkube.platform.doctor",
                           "spotkube.platform.identities", "spotkube.platform.logs", "spotkube.platform.cost.refresh",
                           "spotkube.platform.command_support", "spotkube.platform.live_quota",
                           "spotkube.platform.catalog_source", "spotkube.platform.startup_sample",
                           "spotkube.review.live_quota")
#: The same in a cloud's folder, besides its `CommandSupport` module itself (the profile's `commands_module`).
CLOUD_COMMAND_MODULES = ("access_api", "usage_api", "logs", "deploy", "options", "identities")


@pytest.mark.parametrize("stack", find_project(REPO).stacks())
def test_a_plan_loads_none_of_the_modules_only_other_commands_need(stack: str) -> None:
    """The cloud's `CommandSupport` (new-stack's template, doctor's and quota's live reads, the CI
    identities, the logs query, the drill) loads when a command asks the profile for it, never with a
    plan of any shipped stack; the commands that need it work on, as their own tests show."""
    cloud = load_stack_spec(find_project(REPO), stack).cloud
    loaded = modules_a_plan_loads(stack)
    assert PROFILES[cloud].module("profile") in loaded
    expected_absent = [CLOUDS[cloud].commands_module, *NEUTRAL_COMMAND_MODULES,
                       *(f"spotkube.clouds.{cloud}.{name}" for name in CLOUD_COMMAND_MODULES)]
    assert [m for m in expected_absent if m in loaded] == []
