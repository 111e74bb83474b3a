"""How long `make plan` takes on a fresh clone, stage by stage, with empty and with warm caches.

    python3 bench/first_run.py [--runs 1] [--pip-baseline]

Each run clones this repository (its committed HEAD) into a temporary folder and runs `make plan`
there as a user would, timing each stage from the `==>` lines the Makefile prints. "cold" points
uv's and pip's caches at new empty folders (a fresh machine; package downloads included), "warm"
at the caches the cold run filled (a second clone on the same machine). `--pip-baseline` also times
the setup the Makefile used before uv (python -m venv, pip install, then the plan), the same way.

It needs the network (PyPI) and takes minutes with --pip-baseline; it is a measurement, never a
test. Results: bench/README.md.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

#: What the Makefile did before uv, as shell commands run in the clone.
PIP_BASELINE = (
    ("pip: python -m venv", "python3 -m venv .venv && .venv/bin/pip install --quiet --upgrade pip"),
    ("pip: install", ".venv/bin/pip install --quiet -c constraints.txt -e '.[dev,pipelines]'"),
    ("plan --all", ".venv/bin/spotkube plan --all"),
)


def clone() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="spotkube-first-run-"))
    subprocess.run(["git", "clone", "--quiet", str(REPO), str(folder / "repo")], check=True)
    return folder / "repo"


def timed_make(repo: Path, env: dict[str, str]) -> list[tuple[str, float]]:
    """Run `make plan`, and return (stage, seconds) for each `==>` line and the whole run."""
    start = time.perf_counter()
    stages: list[tuple[str, float]] = []
    with subprocess.Popen(["make", "plan"], cwd=repo, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                          text=True) as make:
        assert make.stdout is not None
        for line in make.stdout:
            if line.startswith("==> "):
                stages.append((line[4:].strip(), time.perf_counter()))
    if make.returncode != 0:
        raise SystemExit(f"make plan failed in {repo} (exit {make.returncode})")
    end = time.perf_counter()
    marks = [*(t for _, t in stages[1:]), end]
    return [(name, mark - begun) for (name, begun), mark in zip(stages, marks, strict=True)] + [
        ("total", end - start)]


def timed_commands(repo: Path, env: dict[str, str]) -> list[tuple[str, float]]:
    rows = []
    for name, command in PIP_BASELINE:
        begun = time.perf_counter()
        subprocess.run(command, shell=True, cwd=repo, env=env, check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        rows.append((name, time.perf_counter() - begun))
    return [*rows, ("total", sum(seconds for _, seconds in rows))]


def report(title: str, rows: list[tuple[str, float]]) -> None:
    print(f"\n{title}")
    for name, seconds in rows:
        print(f"  {seconds:7.1f} s  {name}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=1, help="clones per setting (default 1)")
    parser.add_argument("--pip-baseline", action="store_true", help="also time the pip-only setup")
    args = parser.parse_args()
    print(f"make plan on a fresh clone, {time.strftime('%Y-%m-%d')}, Python {sys.version.split()[0]}, "
          f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
    caches = Path(tempfile.mkdtemp(prefix="spotkube-first-run-caches-"))
    env = {**os.environ, "UV_CACHE_DIR": str(caches / "uv"), "PIP_CACHE_DIR": str(caches / "pip")}
    env.pop("VIRTUAL_ENV", None)
    clones = []
    try:
        for run in range(args.runs):
            for setting in ("cold", "warm"):
                if setting == "cold":
                    shutil.rmtree(caches / "uv", ignore_errors=True)
                    shutil.rmtree(caches / "pip", ignore_errors=True)
                clones.append(clone())
                report(f"uv, {setting} caches (run {run + 1})", timed_make(clones[-1], env))
            if args.pip_baseline:
                for setting in ("cold", "warm"):
                    if setting == "cold":
                        shutil.rmtree(caches / "pip", ignore_errors=True)
                    clones.append(clone())
                    report(f"pip only, {setting} cache (run {run + 1})", timed_commands(clones[-1], env))
    finally:
        for repo in clones:
            shutil.rmtree(repo.parent, ignore_errors=True)
        shutil.rmtree(caches, ignore_errors=True)


if __name__ == "__main__":
    main()
