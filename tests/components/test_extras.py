"""A cluster component whose cloud SDK is not installed (its extra left out) stops at once with one line
naming the extra, from Python and from `spotkube plan`. The SDK is hidden from a fresh interpreter the
way a missing package looks to `import` (tests/cli/test_release.py installs `spotkube[gke]` for real)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
HIDE = "import sys; sys.modules[{sdk!r}] = None; "
CASES = {"AksGpuCluster": ("pulumi_azure_native", "aks", "aks-dev-uksouth"),
         "GkeGpuCluster": ("pulumi_gcp", "gke", "gke-dev-us-central1")}


def python(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code, *args], cwd=REPO, capture_output=True, text=True,
                          timeout=300, check=False)


@pytest.mark.parametrize("component", sorted(CASES))
def test_importing_a_component_without_its_extra_names_the_extra(component: str) -> None:
    sdk, extra, _ = CASES[component]
    line = f'{component} needs the {extra} extra: pip install "spotkube[{extra}]"'
    result = python(HIDE.format(sdk=sdk) + f"from spotkube import {component}")
    assert result.returncode == 1 and result.stderr.strip().splitlines()[-1].endswith(line), result.stderr
    caught = python(HIDE.format(sdk=sdk) + "import pulumi, spotkube\n"
                    f"try:\n    spotkube.{component}\nexcept ImportError as err:\n"
                    "    print(isinstance(err, pulumi.RunError), err)")
    assert caught.stdout.strip() == f"True {line}", caught.stderr


@pytest.mark.parametrize("component", sorted(CASES))
def test_the_other_cloud_still_imports(component: str) -> None:
    sdk, _, _ = CASES[component]
    (other,) = [name for name in CASES if name != component]
    result = python(HIDE.format(sdk=sdk) + f"import spotkube; print(spotkube.{other}.__name__)")
    assert result.stdout.strip() == other, result.stderr


@pytest.mark.parametrize("component", sorted(CASES))
def test_spotkube_plan_of_a_stack_without_its_cloud_says_the_extra_in_one_line(component: str) -> None:
    sdk, extra, stack = CASES[component]
    result = python(HIDE.format(sdk=sdk) + "from spotkube.cli.app import app; app()", "plan", "--stack", stack)
    shown = result.stdout + result.stderr
    assert result.returncode != 0 and "Traceback" not in shown, shown
    assert f'{component} needs the {extra} extra: pip install "spotkube[{extra}]"' in shown
