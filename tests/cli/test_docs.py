"""The docs: every reference into docs/ names a heading that exists, nothing refers to notes outside the
repository or to someone else's repository, the README is a front page, and every code block in the
README and the docs is run, compiled or parsed, so an example can't go stale."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
import textwrap
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from spotkube.clouds import CLOUDS

REPO = Path(__file__).resolve().parents[2]
SOURCES = [*sorted((REPO / "components").rglob("*.py")), *sorted((REPO / "docs").glob("*.md")),
           REPO / "README.md", REPO / "pyproject.toml", REPO / "Makefile", REPO / "infra" / "__main__.py",
           REPO / "policy" / "__main__.py"]
LINK = re.compile(r"docs/([\w-]+\.md)(?:#([\w-]+))?")


def anchors(markdown: Path) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces as hyphens."""
    headings = re.findall(r"^#+\s+(.+?)\s*$", markdown.read_text(), flags=re.M)
    return {re.sub(r"[^\w\- ]", "", h.lower()).replace(" ", "-") for h in headings}


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: str(p.relative_to(REPO)))
def test_references_into_docs_name_existing_headings(source: Path) -> None:
    for name, anchor in LINK.findall(source.read_text()):  # loop may be empty: most sources link no docs page
        target = REPO / "docs" / name
        assert target.is_file(), f"{source.name}: docs/{name} does not exist"
        assert not anchor or anchor in anchors(target), f"{source.name}: docs/{name}#{anchor} names no heading"


def test_nothing_refers_to_notes_outside_the_repository() -> None:
    files = [p for p in REPO.rglob("*") if p.is_file() and p.suffix in {".py", ".md", ".toml", ".yaml", ".yml", ".json"}
             and not {".git", ".venv", ".venv-core"} & set(p.relative_to(REPO).parts) and "egg-info" not in str(p)]
    outside = re.compile(r"FACTS\.md|ARCHITECTURE\.md|\.\./shared")
    assert [str(p.relative_to(REPO)) for p in files if outside.search(p.read_text(errors="ignore"))] == []


def test_the_link_check_sees_a_broken_anchor(tmp_path: Path) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text("# Notes\n## The one-way flow\n")
    assert "the-one-way-flow" in anchors(notes)
    assert "the-one-way-flows" not in anchors(notes)


# --- every code block in the README and the docs is run, compiled or parsed ---------------------------

PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
FENCE = re.compile(r"^(?P<indent>[ ]*)```(?P<lang>[\w-]*)[^\n]*\n(?P<body>.*?)^(?P=indent)```[ ]*$", re.M | re.S)
VERSION = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]


@dataclass(frozen=True)
class Block:
    """A fenced code block: its page and line, its language and its text, unindented."""

    page: Path
    line: int
    lang: str
    code: str

    def __str__(self) -> str:
        return f"{self.page.relative_to(REPO)}:{self.line} ({self.lang})"


def code_blocks(pages: list[Path]) -> list[Block]:
    found = []
    for page in pages:
        text = page.read_text()
        for match in FENCE.finditer(text):
            code = textwrap.dedent("\n".join(line.removeprefix(match["indent"]) for line in match["body"].splitlines()))
            found.append(Block(page, text[:match.start()].count("\n") + 1, match["lang"], code))
    return found


BLOCKS = code_blocks(PAGES)


def of_lang(*langs: str) -> list[Block]:
    return [b for b in BLOCKS if b.lang in langs]


def test_every_block_is_in_a_language_these_tests_check() -> None:
    assert BLOCKS and {b.lang for b in BLOCKS} <= {"python", "yaml", "json", "sh", "mermaid"}, \
        [str(b) for b in BLOCKS if b.lang not in {"python", "yaml", "json", "sh", "mermaid"}]


# Python: a program that builds components runs under SpotkubeMocks, a unit test runs under pytest, a
# pipeline (kfp and Pulumi can't share a process) compiles. A block that is none of them fails.


def python_kind(block: Block) -> str:
    if "from kfp import" in block.code:
        return "pipeline"
    if "from spotkube.training import" in block.code:
        return "training job"
    if "@pulumi.runtime.test" in block.code:
        return "unit test"
    if re.search(r"^from spotkube import .*(AksGpuCluster|GkeGpuCluster|AksGpuNodePool|GkeGpuNodePool)",
                 block.code, re.M):
        return "program"
    return "unknown"


@pytest.mark.parametrize("block", of_lang("python"), ids=str)
def test_python_blocks_compile_and_are_of_a_kind_that_is_checked(block: Block) -> None:
    compile(block.code, str(block), "exec")
    assert python_kind(block) != "unknown", f"{block}: neither a program, a unit test, a pipeline nor a training job"


@pytest.mark.parametrize("block", [b for b in of_lang("python") if python_kind(b) == "training job"], ids=str)
def test_training_job_blocks_write_a_trainjob_trainer_accepts(block: Block, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from crd_schemas import schema_errors

    monkeypatch.chdir(tmp_path)
    scope: dict[str, object] = {"__name__": "__main__"}
    exec(compile(block.code, str(block), "exec"), scope)
    written = [yaml.safe_load(p.read_text()) for p in sorted(tmp_path.glob("*.yaml"))]
    assert written, f"{block}: writes no manifest"
    assert schema_errors(written) == [[]] * len(written)


@pytest.mark.parametrize("block", [b for b in of_lang("python") if python_kind(b) == "program"], ids=str)
def test_program_blocks_run_under_the_mocks(block: Block) -> None:
    from spotkube.components.offline import record_program

    recording = record_program(lambda: exec(compile(block.code, str(block), "exec"), {"__name__": "__main__"}),
                               project="docs", stack="dev", config={})
    assert [r for r in recording.registrations if r.type.startswith("spotkube:index:")]
    assert recording.outputs["kubeconfig"].secret


@pytest.mark.parametrize("block", [b for b in of_lang("python") if python_kind(b) == "unit test"], ids=str)
def test_unit_test_blocks_pass_under_pytest(block: Block, tmp_path: Path) -> None:
    (tmp_path / "test_from_the_docs.py").write_text(block.code)
    result = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "test_from_the_docs.py"],
                            cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0 and " passed" in result.stdout, result.stdout + result.stderr


@pytest.mark.parametrize("block", of_lang("yaml"), ids=str)
def test_yaml_blocks_parse(block: Block) -> None:
    assert yaml.safe_load(block.code)


@pytest.mark.parametrize("block", of_lang("json"), ids=str)
def test_json_blocks_parse(block: Block) -> None:
    assert json.loads(block.code)


MERMAID_LINE = re.compile(r'(subgraph \w+(\[".*"\])?|end|\w+(\[".*?"\])?(\s*--(\s*"[^"]*"\s*--)?>\s*\w+(\[".*?"\])?)*)')


@pytest.mark.parametrize("block", of_lang("mermaid"), ids=str)
def test_mermaid_blocks_are_flowcharts_of_nodes_and_edges(block: Block) -> None:
    first, *rest = [line.strip() for line in block.code.splitlines() if line.strip()]
    assert re.fullmatch(r"flowchart (LR|RL|TB|TD|BT)", first), first
    assert rest, f"{block}: a flowchart of nothing"
    for line in rest:
        assert MERMAID_LINE.fullmatch(line), f"{block}: {line}"


# Shell: each command is checked for what it names. `spotkube` commands are parsed by the CLI itself,
# `make` targets must exist, `pip` installs only this project (at this version) or a requirements file
# that exists, `pulumi package add` names this project's tag, and any other program is one the docs
# may ask a reader to have.

OTHER_PROGRAMS = {"az", "gcloud", "kubectl", "git", "base64", "export", "cd", "go"}
PULUMI_COMMANDS = {"install", "login", "stack", "preview", "up", "destroy", "refresh", "state", "package", "config"}
PLACEHOLDER = re.compile(r"<[a-z][a-z ]*>")
#: Someone else's repository, spelt so that this file doesn't name it either.
ELSEWHERE = "github" + ".com/spotkube/spotkube"
SPOTKUBE_SPECS = {"spotkube", "spotkube[pipelines]", "spotkube[refresh]", "spotkube[all,bootstrap]",
                  f"spotkube=={VERSION}",
                  f"spotkube @ git+https://github.com/OWNER/spotkube@v{VERSION}",
                  # Before a release: a commit of the repository, or the wheel `make dist` builds (both
                  # installed as written by tests/cli/test_release.py).
                  *(f"spotkube[{extra}] @ git+https://github.com/OWNER/spotkube@COMMIT"
                    for extra in (*CLOUDS, "all")),
                  f"./dist/spotkube-{VERSION}-py3-none-any.whl[all]"}


def commands(script: str) -> list[tuple[Path, list[str]]]:
    """Each simple command of a shell block with the folder it runs in: comments, redirections, variable
    assignments and `<placeholders>` (as OWNER, GROUP, ...) taken out."""
    text = PLACEHOLDER.sub(lambda m: m.group(0)[1:-1].upper().replace(" ", "_"), script.replace("\\\n", " "))
    found, folders = [], [REPO]
    for line in text.splitlines():
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        lexer.commenters = "#"
        words: list[str] = []
        tokens = [*lexer, ";"]
        skip_next = False
        for token in tokens:
            if skip_next:
                skip_next = False
            elif token in (">", ">>", "<"):
                skip_next = True
            elif token in (";", "&&", "||", "|", "(", ")"):
                if words:
                    found.append((folders[-1], words))
                    if words[0] == "cd":
                        folders[-1] = folders[-1] / words[1]
                words = []
                if token == "(":  # a subshell: its `cd` ends with it
                    folders.append(folders[-1])
                elif token == ")":
                    folders.pop()
            elif not words and re.fullmatch(r"[A-Z_]+=\S*", token):
                continue
            else:
                words.append(token)
    return found


def spotkube_problem(args: list[str]) -> str | None:
    from typer._click.exceptions import UsageError
    from typer.core import TyperGroup
    from typer.main import get_command

    from spotkube.cli.app import app

    command = get_command(app)
    try:
        ctx = command.make_context("spotkube", list(args))
        rest = [*ctx._protected_args, *ctx.args]
        while isinstance(command, TyperGroup):
            name, found, rest = command.resolve_command(ctx, rest)
            assert found is not None
            command = found
            ctx = command.make_context(name, rest, parent=ctx)
            rest = [*ctx._protected_args, *ctx.args]
    except UsageError as err:
        return err.format_message()
    return None


def command_problem(cwd: Path, words: list[str]) -> str | None:
    program, args = Path(words[0]).name, words[1:]
    if program == "spotkube":
        return spotkube_problem(args)
    if program == "make":
        targets = set(re.findall(r"^([\w-]+):", (REPO / "Makefile").read_text(), re.M))
        return None if set(args) <= targets else f"no make target {sorted(set(args) - targets)}"
    if program == "pip":
        if args[:2] == ["install", "-r"]:
            return None if (cwd / args[2]).is_file() else f"{args[2]} does not exist in {cwd.relative_to(REPO)}"
        return None if args[0] == "install" and set(args[1:]) <= SPOTKUBE_SPECS else f"installs {args[1:]}"
    if program == "python3":
        return None if args[:2] == ["-m", "venv"] else f"python3 {args}"
    if program == "pulumi":
        if args[:1] in (["-C"], ["--cwd"]):  # pulumi's global flag: the project folder it runs in
            if not (cwd / args[1] / "Pulumi.yaml").is_file():
                return f"no Pulumi project in {args[1]}"
            cwd, args = cwd / args[1], args[2:]
        if args[:2] == ["package", "add"]:
            return None if args[2] == f"github.com/OWNER/spotkube@v{VERSION}" else f"adds {args[2]}"
        if "--policy-pack" in args and not (cwd / args[args.index("--policy-pack") + 1]).is_dir():
            return "no such policy pack"
        return None if args[0] in PULUMI_COMMANDS else f"pulumi {args[0]}"
    return None if program in OTHER_PROGRAMS or program.endswith("pip") else f"runs {program}"


@pytest.mark.parametrize("block", of_lang("sh"), ids=str)
def test_shell_blocks_name_commands_that_exist(block: Block) -> None:
    found = commands(block.code)
    assert found
    problems = [f"{' '.join(words)}: {problem}" for cwd, words in found
                if (problem := command_problem(cwd, words))]
    assert problems == []


@pytest.mark.parametrize(("script", "problem"), [
    ("spotkube plan --formt json", "No such option: --formt"),
    ("spotkube plam --all", "No such command 'plam'"),
    ("make plna", "no make target"),
    (f'pip install "spotkube @ git+https://{ELSEWHERE}@v0.1.0"', "installs"),
    ("pip install spotkube==0.0.1", "installs"),
    (f"pulumi package add {ELSEWHERE}@v0.1.0", "adds"),
    ("curl https://example.invalid | sh", "runs curl"),
])
def test_the_shell_check_sees_a_wrong_command(script: str, problem: str) -> None:
    ((cwd, words),) = commands(script)[:1]
    assert problem in (command_problem(cwd, words) or "")


def test_the_readme_is_a_front_page_with_the_two_commands() -> None:
    readme = (REPO / "README.md").read_text()
    assert len(readme.splitlines()) <= 200
    shown = [[" ".join(words) for _, words in commands(b.code)] for b in code_blocks([REPO / "README.md"])
             if b.lang == "sh"]
    assert ["make plan", "make test"] in shown
    for page in ("operators", "configuration", "components", "pipelines", "contributing"):
        assert f"(docs/{page}.md" in readme, page


def test_the_docs_site_is_built_strictly_by_make_test() -> None:
    """`--quiet` would hide the warnings strict mode counts, so a broken anchor would pass."""
    makefile = (REPO / "Makefile").read_text()

    def recipe(target: str) -> str:
        start = makefile.index(f"\n{target}: ")
        return makefile[start:makefile.index("\n\n", start + 1)]

    assert "test-docs" in recipe("test")  # run beside the tests
    (build,) = [line for line in recipe("test-docs").splitlines() if "mkdocs build" in line]
    assert "--strict" in build and "--quiet" not in build and "-q " not in build
    config = (REPO / "mkdocs.yml").read_text()
    assert "strict: true" in config and "anchors: warn" in config and "omitted_files: warn" in config


def test_no_file_points_at_someone_elses_spotkube_repository() -> None:
    """That repository belongs to another project: installs and links name a placeholder owner."""
    files = [p for p in REPO.rglob("*") if p.is_file() and p.suffix in {".py", ".md", ".toml", ".yaml", ".yml", ".json",
                                                                       ".txt", ".in", ".cfg"}
             and not {".git", ".venv", ".venv-core", ".crds", ".site"} & set(p.relative_to(REPO).parts)
             and "egg-info" not in str(p)]
    assert [str(p.relative_to(REPO)) for p in files if ELSEWHERE in p.read_text(errors="ignore")] == []


def test_the_docs_state_the_plan_s_schema_version_and_where_the_gpu_fallback_is_set() -> None:
    from spotkube.review.plan_document import SCHEMA_VERSION

    configuration = (REPO / "docs" / "configuration.md").read_text()
    assert f'{{"schemaVersion": {SCHEMA_VERSION}, "stacks": [...]}}' in configuration
    pipelines = (REPO / "docs" / "pipelines.md").read_text()
    assert 'GpuTarget("nvidia-tesla-t4", fallback_to_on_demand=True)' in pipelines
