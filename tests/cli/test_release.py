"""The release as a user gets it: the wheel and sdist PyPA's build makes, installed where the source tree isn't.

`make test` runs this once (in .venv; the run without kfp deselects it with `-m "not release"`). It
builds both files from a copy of the tree (or tests the ones in $SPOTKUBE_DIST, which the release
workflow is about to publish), checks what they hold, installs the wheel with uv into a fresh
virtualenv outside the repository, offline from uv's cache and pinned by constraints.txt, and from
there runs examples/consumer's unit tests, `spotkube --version` and `spotkube plan --all` of a copy
of this project's stacks. Nothing on sys.path points into the repository.

The README's installs are run as written: its wheel line (with the wheel built here), and its
`git+https://` line for GKE with a `git+file://` URL of a clone of this repository at its HEAD commit
(so what is tested is what is committed), into a virtualenv that must not hold Azure's SDK.
"""

from __future__ import annotations

import email.parser
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pytest

from spotkube.clouds import PROFILES

pytestmark = pytest.mark.release

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "components" / "spotkube"
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
VERSION = PYPROJECT["version"]
#: What the repository keeps and a distribution must not carry.
REPOSITORY_ONLY = ("tests/", "examples/", "infra/", "stacks/", "policy/", "bench/", ".github/", "docs/")
README = (REPO / "README.md").read_text()
#: The placeholder the README's git install names the repository and commit with.
GITHUB_AT_COMMIT = "https://github.com/<owner>/spotkube@<commit>"
#: Where uv is: the Makefile exports UV; else the copy it bootstraps into .venv/.uv; else PATH.
UV_CANDIDATES = [os.environ.get("UV", ""), str(Path(sys.prefix) / ".uv" / "bin" / "uv"), shutil.which("uv") or ""]


def run(*command: str | Path, cwd: Path, timeout: int = 600) -> str:
    """Run a command with no trace of this repository in its environment; its output, or the test fails."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    result = subprocess.run([str(c) for c in command], cwd=cwd, env={**env, "UV_PYTHON_DOWNLOADS": "never"},
                            capture_output=True, text=True, timeout=timeout, check=False)
    assert result.returncode == 0, f"{' '.join(map(str, command))} failed:\n{result.stdout}\n{result.stderr}"
    return result.stdout


def readme_install(marker: str) -> str:
    """The requirement of the README's one `pip install "..."` line that contains `marker`."""
    (line,) = [line for line in README.splitlines() if line.startswith('pip install "') and marker in line]
    return line.split('"')[1]


def fresh_venv(folder: Path) -> Path:
    """A new, empty virtualenv in `folder`; its python."""
    run(uv_path(), "venv", "--quiet", "--python", sys.executable, folder / "venv", cwd=folder)
    return folder / "venv" / "bin" / "python"


def uv_install(python: Path, *requirements: str | Path, cwd: Path) -> None:
    """Install as a consumer would, offline from uv's cache and pinned by constraints.txt."""
    run(uv_path(), "pip", "install", "--quiet", "--offline", "--python", python, "-c", REPO / "constraints.txt",
        *requirements, cwd=cwd)


def uv_path() -> Path:
    uv = next((Path(c) for c in UV_CANDIDATES if c and Path(c).is_file()), None)
    assert uv, "uv is needed to build the virtualenv; `make test` bootstraps it into .venv/.uv"
    return uv


def source_files() -> list[Path]:
    """The working tree's files that git would commit (tracked, or new and not ignored)."""
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"], cwd=REPO,
                            capture_output=True, check=True).stdout.decode()
    return [REPO / name for name in listed.split("\0") if name and (REPO / name).is_file()]


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel and sdist: the release workflow's (SPOTKUBE_DIST), or built here from a copy of the tree,
    so the build writes nothing into it."""
    if os.environ.get("SPOTKUBE_DIST"):
        return Path(os.environ["SPOTKUBE_DIST"]).resolve()
    source, out = tmp_path_factory.mktemp("source"), tmp_path_factory.mktemp("dist")
    for path in source_files():
        target = source / path.relative_to(REPO)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)
    run(sys.executable, "-m", "build", "--no-isolation", "--outdir", out, source, cwd=source)
    return out


def the_one(folder: Path, pattern: str) -> Path:
    (found,) = sorted(folder.glob(pattern))
    return found


def test_the_wheel_holds_every_module_its_data_and_no_tests(dist: Path) -> None:
    with zipfile.ZipFile(the_one(dist, f"spotkube-{VERSION}-py3-none-any.whl")) as wheel:
        names = set(wheel.namelist())
        metadata_text = wheel.read(f"spotkube-{VERSION}.dist-info/METADATA").decode()
        entry_points = wheel.read(f"spotkube-{VERSION}.dist-info/entry_points.txt").decode()
    modules = {str(p.relative_to(PACKAGE.parent)) for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts}
    assert modules <= names, sorted(modules - names)
    assert {"spotkube/py.typed", "spotkube/platform/catalog.json", "spotkube/testing.py"} <= names
    # Each cloud's shipped catalog part and price rows, from its own folder.
    shipped = {f"spotkube/clouds/{cloud}/{data}.json" for cloud in PROFILES for data in ("catalog", "prices")}
    assert shipped <= names
    assert not [n for n in names if n.startswith(REPOSITORY_ONLY) or "/tests/" in n or n.startswith("test_")]
    metadata = email.parser.Parser().parsestr(metadata_text)
    assert (metadata["Name"], metadata["Version"], metadata["License-Expression"]) == ("spotkube", VERSION,
                                                                                       "Apache-2.0")
    assert f"spotkube-{VERSION}.dist-info/licenses/LICENSE" in names
    requires = metadata.get_all("Requires-Dist") or []
    assert {r.split("<")[0].split(">")[0] for r in requires if "extra ==" not in r} == \
        {d.split("<")[0].split(">")[0] for d in PYPROJECT["dependencies"]}
    assert {"pipelines", *PROFILES, "all"} <= set(metadata.get_all("Provides-Extra") or [])
    base = [r for r in requires if "extra ==" not in r]
    sdks = tuple(f"pulumi-{m.package}" for m in PROFILES.values())
    assert not [r for r in base if r.startswith(sdks)], "each cloud is its extra"
    assert "spotkube = spotkube.cli.app:app" in entry_points


def test_the_sdist_holds_what_a_rebuild_needs_and_no_tests(dist: Path) -> None:
    sdist = the_one(dist, f"spotkube-{VERSION}.tar.gz")
    root = f"spotkube-{VERSION}/"
    with tarfile.open(sdist) as archive:
        names = {n.removeprefix(root) for n in archive.getnames()}
    assert {"pyproject.toml", "README.md", "LICENSE", "CHANGELOG.md", "components/spotkube/py.typed",
            "components/spotkube/clouds/aks/prices.json", "components/spotkube/clouds/gke/catalog.json",
            "components/spotkube/testing.py"} <= names
    assert not [n for n in names if n.startswith(REPOSITORY_ONLY)]


@pytest.fixture(scope="module")
def installed(dist: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtualenv outside the repository with the wheel installed as the README says (with both
    clouds) and the consumer's requirements-dev.txt as a consumer would (`spotkube[aks,gke]==VERSION`
    found among the built files), offline from uv's cache and pinned by constraints.txt; its bin/ folder."""
    python = fresh_venv(tmp_path_factory.mktemp("consumer"))
    wheel = readme_install(".whl[").replace("./dist/", f"{dist}/")
    uv_install(python, wheel, "--find-links", dist, "-r", REPO / "examples" / "consumer" / "requirements-dev.txt",
               cwd=python.parents[2])
    return python.parent


def test_the_installed_package_is_the_wheel_not_the_source_tree(installed: Path) -> None:
    where = run(installed / "python", "-c", "import spotkube, spotkube.testing; print(spotkube.__file__)",
                cwd=installed)
    assert Path(where.strip()).is_relative_to(installed.parent) and not Path(where.strip()).is_relative_to(REPO)
    assert run(installed / "spotkube", "--version", cwd=installed).strip() == f"spotkube {VERSION}"


def test_the_consumer_example_passes_its_own_tests_from_the_wheel(installed: Path, tmp_path: Path) -> None:
    consumer = tmp_path / "consumer"
    shutil.copytree(REPO / "examples" / "consumer", consumer, ignore=shutil.ignore_patterns("__pycache__"))
    printed = run(installed / "pytest", "-p", "no:cacheprovider", cwd=consumer)
    assert " passed" in printed and "failed" not in printed and "error" not in printed.lower(), printed


def test_spotkube_plan_plans_every_stack_from_the_wheel(installed: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(REPO / "Pulumi.yaml", project)
    for folder in ("infra", "stacks"):
        shutil.copytree(REPO / folder, project / folder, ignore=shutil.ignore_patterns("__pycache__"))
    plan = json.loads(run(installed / "spotkube", "plan", "--all", "--format", "json", cwd=project))
    stacks = sorted(p.name.removeprefix("Pulumi.").removesuffix(".yaml") for p in (project / "stacks").glob("*.yaml"))
    assert stacks and sorted(s["stack"] for s in plan["stacks"]) == stacks
    assert all(s["pools"] for s in plan["stacks"])


@pytest.fixture(scope="module")
def gke_only(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtualenv with the README's GKE install: `spotkube[gke]` from a git URL at a commit, here a
    `git+file://` URL of a clone of this repository at HEAD; its bin/ folder. The clone is shallow (HEAD's
    tree, no history): uv fetches what the clone holds, and the history is not what is released."""
    folder = tmp_path_factory.mktemp("gke-only")
    clone = folder / "spotkube"
    run("git", "clone", "--quiet", "--depth", "1", f"file://{REPO}", clone, cwd=folder)
    commit = run("git", "rev-parse", "HEAD", cwd=REPO).strip()
    requirement = readme_install("spotkube[gke] @ git+")
    assert GITHUB_AT_COMMIT in requirement, requirement
    python = fresh_venv(folder)
    uv_install(python, requirement.replace(GITHUB_AT_COMMIT, f"file://{clone}@{commit}"), cwd=folder)
    return python.parent


def test_the_gke_extra_brings_gke_and_not_azure(gke_only: Path) -> None:
    printed = run(gke_only / "python", "-c", "import importlib.util, spotkube; "
                  "print(spotkube.GkeGpuCluster.__name__, importlib.util.find_spec('pulumi_azure_native'))",
                  cwd=gke_only)
    assert printed.split() == ["GkeGpuCluster", "None"]
    installed = run(uv_path(), "pip", "list", "--python", gke_only / "python", cwd=gke_only)
    assert "pulumi-gcp" in installed and "pulumi-azure-native" not in installed


def test_the_other_clouds_component_names_its_extra_in_one_line(gke_only: Path, tmp_path: Path) -> None:
    result = subprocess.run([gke_only / "python", "-c", "from spotkube import AksGpuCluster"], cwd=tmp_path,
                            capture_output=True, text=True, timeout=120, check=False)
    expected = 'AksGpuCluster needs the aks extra: pip install "spotkube[aks]"'
    assert result.returncode == 1 and result.stderr.strip().splitlines()[-1].endswith(expected), result.stderr
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(REPO / "Pulumi.yaml", project)
    for folder in ("infra", "stacks"):
        shutil.copytree(REPO / folder, project / folder, ignore=shutil.ignore_patterns("__pycache__"))
    plan = subprocess.run([gke_only / "spotkube", "plan", "--stack", "aks-dev-uksouth"], cwd=project,
                          capture_output=True, text=True, timeout=300, check=False)
    assert plan.returncode != 0 and expected in plan.stdout + plan.stderr
    assert "Traceback" not in plan.stdout + plan.stderr
    run(gke_only / "spotkube", "plan", "--stack", "gke-dev-us-central1", cwd=project)
