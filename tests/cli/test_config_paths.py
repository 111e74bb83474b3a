"""One reading of config on every path: tricky stack files through `spotkube plan` and through the
real program (`infra/__main__.py`) run under the offline mocks with the config Pulumi would hand it.

For each stack file the test states, by hand, what the Pulumi engine delivers to a Python program
(`RunRequest.config`: every value a string), or that the engine refuses the file before the program
runs. Those strings come from reading the engine (docs/platform-facts.md#pulumi-config), not from
spotkube: the test also checks that the offline engine (`as_pulumi_config`) delivers exactly them.
Both paths must give the same verdict and, on refusal, the same message and no registration.
"""

from __future__ import annotations

import gc
import runpy
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from spotkube.cli.app import app
from spotkube.components.offline import ProgramFailed, Recording, record_program, run_stack
from spotkube.platform.errors import SpecError
from spotkube.platform.project import Project, as_pulumi_config, find_project, stack_config

REPO = Path(__file__).resolve().parents[2]
STACK = "t"
SPOTKUBE = str(Path(sys.executable).with_name("spotkube"))


def _engine_defaults() -> dict[str, str]:
    """What the engine delivers for the keys Pulumi.yaml declares with a default (createConfigValue:
    a string as it is, an object or array as JSON). Pulumi.yaml's defaults are strings, {} and []."""
    declared = yaml.safe_load((REPO / "Pulumi.yaml").read_text())["config"]
    out = {}
    for key, declaration in declared.items():
        default = declaration["default"]
        assert default in ({}, []) or isinstance(default, str), key
        out[f"spotkube:{key}"] = default if isinstance(default, str) else ("{}" if default == {} else "[]")
    return out


DEFAULTS = _engine_defaults()
HEAD = "config:\n  spotkube:cloud: aks\n  spotkube:region: uksouth\n  spotkube:kubeflow: {enabled: false}\n"
#: Who deploys: every AKS stack names it.
DEPLOYER = "{objectId: c0ffee00-0000-4000-8000-000000000001, principalType: ServicePrincipal}"
BASE = HEAD + f"  spotkube:cluster: {{deployer: {DEPLOYER}}}\n"
BASE_DELIVERED = {"spotkube:cloud": "aks", "spotkube:region": "uksouth", "spotkube:kubeflow": '{"enabled":false}',
                  "spotkube:cluster": '{"deployer":{"objectId":"c0ffee00-0000-4000-8000-000000000001",'
                                      '"principalType":"ServicePrincipal"}}'}
#: The engine refuses the file itself (yaml.v3 or Pulumi's config loading): the program never runs.
REFUSED_BY_ENGINE = None


@dataclass(frozen=True)
class Case:
    name: str
    text: str
    delivered: dict[str, str] | None  # besides the project defaults; None = REFUSED_BY_ENGINE
    expect: str | None  # a part of the message; None = accepted


CASES = [
    # values: text stays text, null is "", objects are JSON, nothing is guessed
    Case("environment empty string", BASE + '  spotkube:environment: ""\n',
         {**BASE_DELIVERED, "spotkube:environment": ""},
         "spotkube:environment: has no value: Pulumi hands an empty value, null and ~ to the program as ''"),
    Case("environment null", BASE + "  spotkube:environment: null\n", {**BASE_DELIVERED, "spotkube:environment": ""},
         "spotkube:environment: has no value"),
    Case("environment ~", BASE + "  spotkube:environment: ~\n", {**BASE_DELIVERED, "spotkube:environment": ""},
         "spotkube:environment: has no value"),
    Case("environment left blank", BASE + "  spotkube:environment:\n", {**BASE_DELIVERED, "spotkube:environment": ""},
         "or delete the line to take the default 'dev'"),
    Case("environment starting with [", BASE + '  spotkube:environment: "[x"\n',
         {**BASE_DELIVERED, "spotkube:environment": "[x"}, "spotkube:environment: '[x' is not accepted"),
    Case("environment starting with {", BASE + "  spotkube:environment: '{x'\n",
         {**BASE_DELIVERED, "spotkube:environment": "{x"}, "spotkube:environment: '{x' is not accepted"),
    Case("environment that is JSON text", BASE + "  spotkube:environment: '[\"dev\"]'\n",
         {**BASE_DELIVERED, "spotkube:environment": '["dev"]'}, "spotkube:environment: '[\"dev\"]' is not accepted"),
    Case("environment a number", BASE + "  spotkube:environment: 42\n",
         {**BASE_DELIVERED, "spotkube:environment": "42"}, "spotkube:environment: '42' is not accepted"),
    Case("environment a whole float", BASE + "  spotkube:environment: 7.0\n",
         {**BASE_DELIVERED, "spotkube:environment": "7"}, "spotkube:environment: '7' is not accepted"),
    Case("environment a boolean", BASE + "  spotkube:environment: true\n",
         {**BASE_DELIVERED, "spotkube:environment": "true"}, None),
    Case("environment yes is text", BASE + "  spotkube:environment: yes\n",
         {**BASE_DELIVERED, "spotkube:environment": "yes"}, None),
    Case("environment with a core tag", BASE + "  spotkube:environment: !!str staging\n",
         {**BASE_DELIVERED, "spotkube:environment": "staging"}, None),
    Case("nested null is unset", BASE + "  spotkube:systemPool: {machine: null, min: 2}\n",
         {**BASE_DELIVERED, "spotkube:systemPool": '{"machine":null,"min":2}'}, None),
    Case("a whole float in an object arrives as an integer", BASE + "  spotkube:systemPool: {min: 2.0, max: 3}\n",
         {**BASE_DELIVERED, "spotkube:systemPool": '{"max":3,"min":2}'}, None),
    Case("a number as a string in an object", BASE + "  spotkube:systemPool: {min: '2'}\n",
         {**BASE_DELIVERED, "spotkube:systemPool": '{"min":"2"}'},
         "spotkube:systemPool.min: '2' is text; use a whole number"),
    Case("a YAML 1.1 boolean in an object stays text", BASE + "  spotkube:platformPool: {enabled: no}\n",
         {**BASE_DELIVERED, "spotkube:platformPool": '{"enabled":"no"}'},
         "spotkube:platformPool.enabled: 'no' is text; use true or false (YAML 1.2, which Pulumi reads, takes yes, no, "
         "on and off as text)"),
    Case("an object left blank", BASE + "  spotkube:systemPool:\n", {**BASE_DELIVERED, "spotkube:systemPool": ""},
         "spotkube:systemPool: has no value"),
    Case("a key without namespace is the project's", BASE + "  environment: staging\n",
         {**BASE_DELIVERED, "spotkube:environment": "staging"}, None),
    Case("the old ns:config:name spelling", BASE + "  spotkube:config:environment: staging\n",
         {**BASE_DELIVERED, "spotkube:environment": "staging"}, None),
    # other namespaces pass through, as the engine delivers them
    Case("a date under another namespace",
         BASE + "  azure-native:when: 2024-01-02\n  gcp:labels: {since: 2024-01-02}\n",
         {**BASE_DELIVERED, "azure-native:when": "2024-01-02 00:00:00 +0000 UTC",
          "gcp:labels": '{"since":"2024-01-02 00:00:00 +0000 UTC"}'}, None),
    Case("other namespaces pass through", BASE + "  kubernetes:context: yes\n  pulumi:tags: {team: ml}\n"
         "  azure-native:location: uksouth\n",
         {**BASE_DELIVERED, "kubernetes:context": "yes", "pulumi:tags": '{"team":"ml"}',
          "azure-native:location": "uksouth"}, None),
    # the types Pulumi.yaml declares: the engine refuses another type before the program runs
    Case("an object written as a string", BASE + "  spotkube:systemPool: '{}'\n",
         {**BASE_DELIVERED, "spotkube:systemPool": "{}"},
         "spotkube:systemPool: is a string ('{}'), but Pulumi.yaml declares it of type 'object'"),
    Case("a list written as a string", BASE + "  spotkube:gpuPools: '[]'\n",
         {**BASE_DELIVERED, "spotkube:gpuPools": "[]"},
         "spotkube:gpuPools: is a string ('[]'), but Pulumi.yaml declares it of type 'array<object>'"),
    Case("an object written as a list", BASE + "  spotkube:systemPool: []\n",
         {**BASE_DELIVERED, "spotkube:systemPool": "[]"}, "spotkube:systemPool: is a list ([]), but Pulumi.yaml"),
    Case("a list of numbers for a list of pools", BASE + "  spotkube:gpuPools: [1]\n",
         {**BASE_DELIVERED, "spotkube:gpuPools": "[1]"}, "declares it of type 'array<object>'"),
    Case("a string key written as a list", BASE + "  spotkube:environment: [dev]\n",
         {**BASE_DELIVERED, "spotkube:environment": '["dev"]'}, "declares it of type 'string'"),
    # the stack file itself
    Case("a repeated key", BASE + "  spotkube:environment: dev\n  spotkube:environment: prod\n", REFUSED_BY_ENGINE,
         "line 7: key 'spotkube:environment' repeats line 6"),
    Case("a key repeated without namespace", BASE + "  environment: dev\n  spotkube:environment: prod\n",
         {**BASE_DELIVERED, "spotkube:environment": "prod"},
         "line 7: key 'spotkube:environment' repeats line 6 ('environment' and 'spotkube:environment' are the same"),
    Case("a repeated key in a pool", BASE + "  spotkube:systemPool:\n    min: 1\n    min: 2\n", REFUSED_BY_ENGINE,
         "line 8: key 'spotkube:systemPool.min' repeats line 7"),
    Case("a key that is a number", BASE + "  42: answer\n", REFUSED_BY_ENGINE,
         "line 6: key '42' in config is a number, not text"),
    Case("a key that is a date", BASE + "  spotkube:cost: {hours: {2024-01-01: 3}}\n", REFUSED_BY_ENGINE,
         "key '2024-01-01' in spotkube:cost.hours is a date, not text"),
    Case("a key with two colons", BASE + "  a:b:c: 1\n", REFUSED_BY_ENGINE,
         "line 6: a:b:c: is not a config key; Pulumi reads namespace:name, with one colon"),
    Case("a date in a spotkube setting", BASE + "  spotkube:environment: 2024-01-02\n",
         {**BASE_DELIVERED, "spotkube:environment": "2024-01-02 00:00:00 +0000 UTC"},
         "line 6: spotkube:environment: '2024-01-02' is a YAML date, which Pulumi hands the program as "
         "'2024-01-02 00:00:00 +0000 UTC'"),
    Case("a timestamp deep in a spotkube setting",
         HEAD + f"  spotkube:cluster: {{kubernetesVersion: 2024-01-02t10:00:00Z, deployer: {DEPLOYER}}}\n",
         {**BASE_DELIVERED, "spotkube:cluster": '{"kubernetesVersion":"2024-01-02 10:00:00 +0000 UTC"}'},
         "spotkube:cluster.kubernetesVersion: '2024-01-02t10:00:00Z' is a YAML date"),
    Case("binary in a spotkube setting", BASE + "  spotkube:environment: !!binary ZGV2\n",
         {**BASE_DELIVERED, "spotkube:environment": "dev"}, "spotkube:environment: !!binary is not accepted"),
    Case("a set in a spotkube setting", BASE + "  spotkube:systemPool: !!set {min}\n",
         {**BASE_DELIVERED, "spotkube:systemPool": '{"min":null}'},
         "spotkube:systemPool: the tag !!set is not accepted"),
    Case("nan in a pool", BASE + "  spotkube:spotPools: [{name: a, min: 0, max: 1, maxPrice: .nan}]\n",
         REFUSED_BY_ENGINE, "spotkube:spotPools[0].maxPrice: .nan is not a number Pulumi can hold (its config is "
         "JSON, which has no NaN or infinity); use a finite number (Spot pools: the most to pay, in USD/hour with up "
         "to 5 decimals, or -1: never evict on price, pay at most the on-demand price)"),
    Case("infinity as a GPU pool's price", BASE + "  spotkube:gpuPools: [{name: t4, machine: Standard_NC4as_T4_v3, "
         "min: 0, max: 1, maxPrice: .inf}]\n", REFUSED_BY_ENGINE,
         "line 6: spotkube:gpuPools[0].maxPrice: .inf is not a number Pulumi can hold (its config is JSON, which has "
         "no NaN or infinity); use a finite number (Spot pools: the most to pay, in USD/hour with up to 5 decimals, "
         "or -1"),
    Case("infinity in another namespace", BASE + "  other:limit: .inf\n", REFUSED_BY_ENGINE,
         "line 6: other:limit: .inf is not a number Pulumi can hold"),
    Case("billion laughs", BASE + "  other:a: &a [l, l, l, l, l, l, l, l, l, l]\n" + "".join(
        f"  other:{n}: &{n} [{', '.join([f'*{p}'] * 10)}]\n" for p, n in zip("abcdefgh", "bcdefghi", strict=True)),
         REFUSED_BY_ENGINE, "expand into more than"),
    Case("config is a list", "config:\n  - spotkube:cloud: aks\n", REFUSED_BY_ENGINE,
         "line 1: config: is a list ([{'spotkube:cloud': 'aks'}]); it must be a mapping"),
    Case("config is a string", "config: spotkube:cloud=aks\n", REFUSED_BY_ENGINE,
         "line 1: config: is a string ('spotkube:cloud=aks'); it must be a mapping"),
    Case("config is null", "config:\n", {},
         "config: is empty (line 1), so the stack would build the project's defaults (cloud aks, environment dev, "
         "region uksouth) without saying so"),
    Case("an empty file", "", {}, "config: is missing: the file is empty"),
    Case("only comments", "# nothing yet\n", {}, "config: is missing: the file is empty"),
    Case("only another namespace", "config:\n  azure-native:location: uksouth\n",
         {"azure-native:location": "uksouth"}, "config: sets no spotkube: key"),
    Case("a misspelt section", "confg:\n  spotkube:cloud: aks\n", {},
         "line 1: confg: is not a section of a Pulumi stack file, so Pulumi would ignore it; did you mean config?"),
    Case("an unknown section", BASE + "notes: hello\n", BASE_DELIVERED, "line 6: notes: is not a section"),
    Case("a misspelt namespace", BASE + "  spotkub:environment: prod\n",
         {**BASE_DELIVERED, "spotkub:environment": "prod"},
         "line 6: spotkub:environment: 'spotkub' is not spotkube's namespace, so spotkube would never read this key; "
         "did you mean spotkube:environment?"),
    Case("a namespace with a swapped letter", BASE + "  spotkbue:environment: prod\n",
         {**BASE_DELIVERED, "spotkbue:environment": "prod"}, "did you mean spotkube:environment?"),
    Case("a namespace in capitals", BASE + "  Spotkube:environment: prod\n",
         {**BASE_DELIVERED, "Spotkube:environment": "prod"}, "'Spotkube' is not spotkube's namespace"),
    Case("invalid YAML", BASE + "  spotkube:environment: [dev\n", REFUSED_BY_ENGINE, "is not valid YAML"),
    Case("two documents", BASE + "---\nconfig: {}\n", REFUSED_BY_ENGINE, "holds more than one YAML document"),
]


def _project(root: Path, text: str) -> Project:
    shutil.copy(REPO / "Pulumi.yaml", root / "Pulumi.yaml")
    shutil.copytree(REPO / "infra", root / "infra", dirs_exist_ok=True)
    (root / "stacks").mkdir(exist_ok=True)
    (root / "stacks" / f"Pulumi.{STACK}.yaml").write_text(text)
    return find_project(root)


def _program(project: Project, config: dict[str, str]) -> Recording:
    """The real program, as `pulumi up` runs it, handed `config` as the engine hands it over."""
    folder = str(project.main.parent)
    sys.path.insert(0, folder)
    try:
        return record_program(lambda: runpy.run_path(str(project.main), run_name="__main__"),
                              project=project.name, stack=STACK, config=config)
    finally:
        sys.path.remove(folder)


def _plain(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_plan_and_program_read_a_stack_file_the_same_way(case: Case, tmp_path: Path) -> None:
    project = _project(tmp_path, case.text)
    plan = CliRunner().invoke(app, ["plan", "--stack", STACK, "--project", str(tmp_path), "--format", "json"])
    assert plan.exception is None or isinstance(plan.exception, SystemExit), plan.exception
    assert "Traceback" not in plan.stderr

    engine_config = {} if case.delivered is None else {**DEFAULTS, **case.delivered}
    if case.delivered is not None:
        try:
            offline = as_pulumi_config(stack_config(project, STACK))
        except SpecError:
            offline = None  # refused before the offline engine would hand anything over
        assert offline in (None, engine_config), "the offline engine must hand over what Pulumi would"

    try:
        recording = _program(project, engine_config)
    except ProgramFailed as failed:
        assert plan.exit_code == 2, plan.stdout[-2000:]
        assert failed.registrations == [], "nothing may be registered before a refusal"
        assert str(failed).startswith(f"stacks/Pulumi.{STACK}.yaml: ")
        assert case.expect is not None, f"refused, but should be accepted: {failed}"
        assert _plain(case.expect) in _plain(str(failed))
        printed, message = _plain(plan.stderr).removeprefix("error: "), _plain(str(failed))
        assert printed == message
        return
    assert plan.exit_code != 2, plan.stderr
    assert case.expect is None, f"accepted, but should be refused with: {case.expect}"
    assert recording.registrations, "the program registered nothing"
    if case.delivered is not None and offline is not None:
        offline_run = run_stack(project, STACK)
        registered = sorted(((r.type, r.name), r.inputs) for r in recording.registrations)
        assert sorted(((r.type, r.name), r.inputs) for r in offline_run.registrations) == registered


def test_a_refusal_through_the_real_command_has_no_traceback(tmp_path: Path) -> None:
    _project(tmp_path, BASE + "  spotkube:environment: dev\n  spotkube:environment: prod\n")
    result = subprocess.run([SPOTKUBE, "plan", "-s", STACK], cwd=tmp_path, capture_output=True, text=True,
                            timeout=120, check=False)
    assert result.returncode == 2
    assert result.stderr.strip() == ("error: stacks/Pulumi.t.yaml: line 7: key 'spotkube:environment' repeats line 6; "
                                     "a key may appear once in a mapping (Pulumi refuses the file: \"mapping key "
                                     "already defined\")")


def test_the_program_reads_values_from_pulumi_not_from_the_file(tmp_path: Path) -> None:
    """Under `pulumi up` the values come from the engine (which may merge an ESC environment); the
    program reads the stack file only for the checks the engine leaves out."""
    project = _project(tmp_path, BASE + "  spotkube:environment: dev\n")
    with pytest.raises(ProgramFailed) as caught:
        _program(project, {**DEFAULTS, **BASE_DELIVERED, "spotkube:environment": "Dev!"})
    assert "spotkube:environment: 'Dev!' is not accepted" in str(caught.value)


def test_pulumi_yaml_is_read_strictly_too(tmp_path: Path) -> None:
    (tmp_path / "Pulumi.yaml").write_text("name: a\nname: b\nruntime: python\n")
    with pytest.raises(SpecError, match="line 2: key 'name' repeats line 1"):
        find_project(tmp_path)
    (tmp_path / "Pulumi.yaml").write_text("runtime: python\n")
    with pytest.raises(SpecError, match="name: is empty \\(null\\); the project needs a name"):
        find_project(tmp_path)
    (tmp_path / "Pulumi.yaml").write_text("name: a\nruntime: python\nconfig:\n  limit: {default: .inf}\n")
    with pytest.raises(SpecError, match=r"line 4: config\.limit\.default: \.inf is not a number Pulumi can hold"):
        find_project(tmp_path)


def test_pulumi_yaml_shorthand_and_values_are_merged_as_the_engine_merges_them(tmp_path: Path) -> None:
    (tmp_path / "Pulumi.yaml").write_text(
        "name: spotkube\nruntime: python\nconfig:\n  region: westeurope\n  aws:region: eu-west-1\n"
        "  environment: {type: string, default: null, value: qa}\n  other:key: {value: 1}\n")
    project = find_project(tmp_path)
    assert project.defaults == {"spotkube:region": "westeurope", "aws:region": "eu-west-1",
                                "spotkube:environment": "qa", "other:key": 1}


def test_a_stack_whose_settings_come_from_an_esc_environment_is_not_called_empty(tmp_path: Path) -> None:
    """Only the engine reads ESC environments: the program gets their values and the file check lets it."""
    project = _project(tmp_path, "environment:\n  - ml/dev\n")
    recording = _program(project, {**DEFAULTS, **BASE_DELIVERED, "spotkube:environment": "staging"})
    assert recording.registrations


def test_each_reader_of_a_stack_file_gets_the_file_as_written(tmp_path: Path) -> None:
    """A plan reads a stack file more than once; a reader that changes what it got changes nothing
    for the next one, and an edited file is read anew."""
    project = _project(tmp_path, BASE + "  spotkube:environment: dev\n")
    first = stack_config(project, STACK)
    first["spotkube:environment"] = "changed"
    first["spotkube:cluster"]["deployer"]["objectId"] = "changed"
    again = stack_config(project, STACK)
    assert again["spotkube:environment"] == "dev"
    assert again["spotkube:cluster"]["deployer"]["objectId"] == "c0ffee00-0000-4000-8000-000000000001"
    (tmp_path / "stacks" / f"Pulumi.{STACK}.yaml").write_text(BASE + "  spotkube:environment: qa\n")
    assert stack_config(project, STACK)["spotkube:environment"] == "qa"


def test_a_plan_leaves_the_garbage_collector_as_it_found_it(tmp_path: Path) -> None:
    """The plan runs its program without full collections; a caller of the Python API gets its own
    thresholds back, whether the program succeeds or fails."""
    project = _project(tmp_path, BASE + "  spotkube:environment: dev\n")
    before = gc.get_threshold()
    _program(project, {**DEFAULTS, **BASE_DELIVERED})
    assert gc.get_threshold() == before
    with pytest.raises(ProgramFailed):
        _program(project, {**DEFAULTS, **BASE_DELIVERED, "spotkube:environment": "Dev!"})
    assert gc.get_threshold() == before
