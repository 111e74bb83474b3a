"""Shared fixtures: the repository's project, and throwaway copies of it with one stack file."""

from __future__ import annotations

import functools
import gc
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from in_process import REPO, SPOTKUBE, run_spotkube
from spotkube.components.offline import StackRun, run_stack
from spotkube.platform.project import Project, find_project

SpotkubeRun = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture(scope="session")
def spotkube() -> SpotkubeRun:
    """The `spotkube` command, `spotkube("plan", "--all", cwd=folder)`, run in this process
    (tests/in_process.py): what it prints and its exit code, without a second of imports each time."""
    return run_spotkube


@pytest.fixture(scope="session")
def spotkube_process() -> SpotkubeRun:
    """The installed `spotkube` started as a user starts it, for what only a process of its own shows:
    the entry point, and output that must be the same from two interpreters (each its own hash seed)."""

    def run(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
        return subprocess.run([SPOTKUBE, *args], cwd=cwd, capture_output=True, text=True, timeout=300, check=False)

    return run


@pytest.fixture(autouse=True)
def no_user_prices(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never read a developer's own price file or GPU catalog: no $SPOTKUBE_PRICES or
    $SPOTKUBE_CATALOG, and a config directory of their own (the subprocesses they start inherit all)."""
    monkeypatch.delenv("SPOTKUBE_PRICES", raising=False)
    monkeypatch.delenv("SPOTKUBE_CATALOG", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("config-home")))


@pytest.fixture(scope="session")
def repo_project() -> Project:
    return find_project(REPO)


def copy_project(folder: Path, stack: str, config: dict[str, Any]) -> Project:
    """A copy of the real project (Pulumi.yaml and infra/) in `folder`, whose only stack is the one given
    (`config`: its `spotkube:` keys without the namespace)."""
    shutil.copy(REPO / "Pulumi.yaml", folder / "Pulumi.yaml")
    shutil.copytree(REPO / "infra", folder / "infra", dirs_exist_ok=True)
    (folder / "stacks").mkdir(exist_ok=True)
    body = {"config": {f"spotkube:{k}": v for k, v in config.items()}}
    (folder / "stacks" / f"Pulumi.{stack}.yaml").write_text(yaml.safe_dump(body))
    return find_project(folder)


@pytest.fixture(scope="session")
def project_copy() -> Callable[[Path, str, dict[str, Any]], Project]:
    """`copy_project`, for fixtures that keep one copy for a whole module (`tmp_path_factory` gives the folder)."""
    return copy_project


@pytest.fixture(scope="session")
def shipped_run(repo_project: Project) -> Callable[[str], StackRun]:
    """A shipped stack's offline run (`shipped_run("aks-dev-uksouth")`), made once per test process and
    shared: some twenty modules read the same four runs. Tests only read a run; one that needs a
    changed registration changes a copy."""
    return functools.cache(functools.partial(run_stack, repo_project))


@pytest.fixture
def project_with_stack(tmp_path: Path) -> Callable[[str, dict[str, Any]], Project]:
    """A copy of the real project (Pulumi.yaml and infra/) whose only stack is the one given."""
    return lambda stack, config: copy_project(tmp_path, stack, config)


def pytest_configure(config: pytest.Config) -> None:
    """Progress by group (tests/progress.py) instead of dots, unless pytest is asked to be verbose.

    Also, before pytest-xdist starts its workers: Python's readline module, loaded by pytest, writes
    COLUMNS=80 and LINES into the process's environment behind os.environ's back. A worker would inherit
    them as real variables, and every `spotkube` its tests start would print 80 columns wide instead of
    a pipe's 120 (tests/cli/conftest.py clears them the same way inside each process)."""
    import os

    from progress import GroupProgress

    for name in ("COLUMNS", "LINES"):
        if name not in os.environ:
            os.unsetenv(name)
    if config.option.verbose <= 0:
        config.pluginmanager.register(GroupProgress(config), "spotkube-group-progress")


#: How many objects may survive a full collection outside the frozen generation before they are frozen.
FREEZE_AFTER = 100_000
_full_collections_seen = [0]


def pytest_collection_finish(session: pytest.Session) -> None:
    """Leave what collection loaded out of every later garbage collection (`gc.freeze`): the test modules,
    pydantic, kfp, the Pulumi SDKs' packages. They live as long as the process."""
    gc.freeze()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Before a test, once a full collection has left many objects outside the frozen generation,
    collect again and freeze what is alive.

    The first plans of a process load the SDKs' type modules: hundreds of thousands of functions,
    properties and typing objects that never die. Each full collection walked all of them again to free
    only a plan's garbage, and took a third of a worker's CPU time (27 full collections, 7 of 26 CPU s
    on three CLI modules). Frozen, they are never walked again. Collecting first keeps a test's garbage
    out of the frozen generation, where a cycle would never be freed; a frozen object still goes as soon
    as nothing refers to it. Only the few freezes the SDKs' modules cause happen, so this costs little."""
    collections = gc.get_stats()[2]["collections"]
    if collections == _full_collections_seen[0]:
        return
    if len(gc.get_objects(generation=2)) > FREEZE_AFTER:
        gc.collect()
        gc.freeze()
    _full_collections_seen[0] = gc.get_stats()[2]["collections"]
