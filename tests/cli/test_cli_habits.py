"""The habits a command-line user expects of `spotkube`: help, completion, width, colour, pipes, exit.

Each test runs the command as a user would (a subprocess, a real pipe or terminal, or typer's runner
for the fast ones) and asserts what they would see.
"""

from __future__ import annotations

import fcntl
import io
import json
import os
import pty
import re
import select
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from rich.console import Console
from typer.core import TyperGroup
from typer.main import get_command
from typer.testing import CliRunner

from in_process import run_spotkube
from spotkube.cli import plan_views, terminal
from spotkube.cli.app import app
from spotkube.components.offline import StackRun
from spotkube.platform.project import Project
from spotkube.review.plan_document import PlanDocument
from spotkube.review.program_review import stack_document

REPO = Path(__file__).resolve().parents[2]
SPOTKUBE = str(Path(sys.executable).with_name("spotkube"))
ESCAPE = "\x1b"


def run(*args: str, env: dict[str, str] | None = None, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    """`spotkube ARGS` in this process (tests/in_process.py), without the colour and width settings of
    whoever runs the tests."""
    return run_spotkube(*args, cwd=cwd, env={"NO_COLOR": None, "FORCE_COLOR": None, "COLUMNS": None, **(env or {})})


def run_process(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`spotkube ARGS` as a process of its own, for what only a process shows: its exit, its shell."""
    environ = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "COLUMNS")}
    return subprocess.run([SPOTKUBE, *args], cwd=REPO, capture_output=True, text=True, timeout=300, check=False,
                          env={**environ, **env})


def in_a_terminal(*args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    """Run spotkube with stdout and stderr on a real pseudo-terminal; its exit code and all it wrote."""
    environ = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "COLUMNS")}
    controller, child = pty.openpty()
    process = subprocess.Popen([SPOTKUBE, *args], cwd=REPO, stdin=subprocess.DEVNULL, stdout=child, stderr=child,
                               env={**environ, "TERM": "xterm-256color", **(env or {})})
    os.close(child)
    chunks = []
    while True:
        ready, _, _ = select.select([controller], [], [], 300)
        if not ready:
            process.kill()
            raise AssertionError("spotkube wrote nothing for 300 s")
        try:
            chunk = os.read(controller, 65536)
        except OSError:  # the terminal closed: the process has exited
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(controller)
    return process.wait(timeout=60), b"".join(chunks).decode(errors="replace")


def every_command(group: TyperGroup, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    commands = [path]
    for name, command in group.commands.items():
        if isinstance(command, TyperGroup):
            commands += every_command(command, (*path, name))
        else:
            commands.append((*path, name))
    return commands


COMMANDS = every_command(get_command(app))  # type: ignore[arg-type]


# --- help and completion -------------------------------------------------------------------------


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c) or "spotkube")
def test_dash_h_is_help_everywhere(command: tuple[str, ...]) -> None:
    short = CliRunner().invoke(app, [*command, "-h"])
    long = CliRunner().invoke(app, [*command, "--help"])
    assert short.exit_code == 0, short.output
    assert "Usage:" in short.output
    assert short.output == long.output


@pytest.mark.parametrize("command", [*COMMANDS, ("prices",)], ids=lambda c: " ".join(c) or "spotkube")
def test_help_shows_real_placeholders_and_whole_sentences(command: tuple[str, ...]) -> None:
    """No `<bool>` beside a flag or `<list[str]>` for a value; each paragraph of a command's description
    is wrapped at the width, not broken where its source line ended."""
    result = run(*command, "-h", env={"COLUMNS": "80", "NO_COLOR": "1"})
    assert result.returncode == 0, result.stderr
    boxes = re.findall(r"╭─ (?:Options|Arguments) ─+╮\n(.*?)╰", result.stdout, re.DOTALL)
    assert boxes and not re.findall(r"<[a-z|\[\]]+>", "".join(boxes)), result.stdout
    description = result.stdout.split("╭")[0].splitlines()[3:]  # after the usage line
    paragraph: list[str] = []
    for line in [*description, ""]:
        if line.strip():
            paragraph.append(line.strip())
            continue
        # every line but a paragraph's last is filled to the width
        for inner in paragraph[:-1]:  # loop may be empty: a one-line paragraph, as `spotkube -h` has
            assert len(inner) > 55, (inner, paragraph)
        paragraph = []


def test_help_offers_shell_completion() -> None:
    result = CliRunner().invoke(app, ["--help"])
    assert result.exit_code == 0
    assert "--install-completion" in result.output
    assert "--show-completion" in result.output


def test_completion_script_for_bash() -> None:
    """The installed command's own script (typer reads which shell from the process it runs in)."""
    result = run_process("--show-completion", "bash", env={})
    assert result.returncode == 0, result.stderr
    assert "_SPOTKUBE_COMPLETE" in result.stdout


# --- width -----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def documents(repo_project: Project, shipped_run: Callable[[str], StackRun]) -> list[PlanDocument]:
    return [stack_document(shipped_run(stack)) for stack in repo_project.stacks()]


def taints(documents: list[PlanDocument]) -> set[str]:
    found = {taint for document in documents for pool in document.pools for taint in pool.taints}
    assert "kubernetes.azure.com/scalesetpriority=spot:NoSchedule" in found
    return found


def test_columns_80_fits_every_shipped_stack_and_keeps_taints_whole(
        repo_project: Project, documents: list[PlanDocument]) -> None:
    result = run("plan", "--all", env={"COLUMNS": "80"})
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    stacks = repo_project.stacks()
    assert stacks, "the repository ships stacks"
    for stack in stacks:
        assert any(line.startswith(f"{stack}  (") for line in lines), stack
    too_wide = [line for line in lines if len(line) > 80]
    assert too_wide == []
    cells = {cell.strip() for line in lines for cell in re.split(r"[│┃]", line)}
    assert taints(documents) <= cells, "a taint was cut across lines"


@pytest.mark.parametrize("width", [72, 100, 120, 160, 200, 300])
def test_the_plan_fits_any_width_without_cutting_a_taint(documents: list[PlanDocument], width: int) -> None:
    out = io.StringIO()
    plan_views.render_table(documents, Console(file=out, width=width, color_system=None))
    lines = out.getvalue().splitlines()
    assert max(len(line) for line in lines) <= width
    cells = {cell.strip() for line in lines for cell in re.split(r"[│┃]", line)}
    assert taints(documents) <= cells


def test_pool_tables_have_columns_at_120(documents: list[PlanDocument]) -> None:
    """A PR comment or a 120-column pipe sees each pool as a row of columns, not a block of lines."""
    assert documents, "the shipped stacks' plans"
    for document in documents:
        out = io.StringIO()
        Console(file=out, width=120, color_system=None).print(plan_views.pool_table(document, 120))
        header = next(line for line in out.getvalue().splitlines() if line.startswith("┃"))
        assert [cell.strip() for cell in header.strip("┃").split("┃")] == ["pool", "taints", "cost / month"], (
            document.stack)


@pytest.mark.parametrize("width", [80, 100, 120])
def test_no_table_cuts_a_name_a_type_or_a_taint(documents: list[PlanDocument], width: int) -> None:
    """Tables wrap at spaces; where a word is longer than its column (a URL), it ends in an ellipsis,
    never continues on the next line (rich's fold made `RandomPa│ssword`, `KubeflowP│ipelines`)."""
    out = io.StringIO()
    plan_views.render_table(documents, Console(file=out, width=width, color_system=None))
    words = {word.rstrip(",;") for line in out.getvalue().splitlines() for cell in re.split(r"[│┃]", line)
             for word in cell.split()}
    assert documents, "the shipped stacks' plans"
    for document in documents:
        expected = {r.type for r in document.resources} | {r.name for r in document.resources}
        expected |= {pool.machine for pool in document.pools} | {t for pool in document.pools for t in pool.taints}
        assert expected <= words, (document.stack, sorted(expected - words))
    assert "RandomPassword" in " ".join(words) and "KubeflowPipelines" in " ".join(words)


def test_piped_output_is_120_columns_unless_columns_says_otherwise() -> None:
    piped = io.StringIO()
    assert terminal.output_width(piped, environ={}) == terminal.PIPED_WIDTH == 120
    assert terminal.output_width(piped, environ={"COLUMNS": "95"}) == 95
    assert terminal.output_width(piped, environ={"COLUMNS": "wide"}) == 120


def test_a_terminal_gets_its_own_width() -> None:
    controller, child = pty.openpty()
    try:
        with os.fdopen(os.dup(child), "w") as tty:
            assert terminal.output_width(tty, environ={}) is None  # rich asks the terminal
    finally:
        os.close(controller)
        os.close(child)


# --- colour ----------------------------------------------------------------------------------------


def test_a_terminal_gets_colour_and_no_color_gets_none_at_all() -> None:
    code, coloured = in_a_terminal("plan", "--stack", "aks-dev-uksouth")
    assert code == 0, coloured
    assert ESCAPE + "[" in coloured  # bold headers, colours: what --no-color must remove
    code, plain = in_a_terminal("plan", "--stack", "aks-dev-uksouth", "--no-color")
    assert code == 0, plain
    assert ESCAPE not in plain
    assert "aks-dev-uksouth  (aks, uksouth, dev)" in plain


@pytest.mark.parametrize("args", [("plan", "--stack", "aks-dev-mars"), ("-h",), ("plan", "-h")],
                         ids=["error", "help", "command help"])
def test_no_color_env_gives_plain_text_even_on_a_forced_terminal(args: tuple[str, ...]) -> None:
    """Processes of their own: on a forced terminal the plan's spinner runs in a thread of its own, which
    a failing plan leaves to the process's exit to stop."""
    forced = run_process(*args, env={"FORCE_COLOR": "1"})
    assert ESCAPE in forced.stdout + forced.stderr  # the control: forced colour has escapes
    plain = run_process(*args, env={"FORCE_COLOR": "1", "NO_COLOR": "1"})
    assert plain.returncode == forced.returncode
    assert ESCAPE not in plain.stdout + plain.stderr
    assert plain.stdout + plain.stderr != ""
    flag = run_process("--no-color", *args, env={"FORCE_COLOR": "1"})
    assert ESCAPE not in flag.stdout + flag.stderr


def test_an_empty_no_color_is_not_set() -> None:
    assert terminal.wants_plain(environ={"NO_COLOR": ""}) is False
    assert terminal.wants_plain(environ={"NO_COLOR": "0"}) is True  # any non-empty value, as no-color.org says
    assert terminal.wants_plain(True, environ={}) is True


# --- a closed pipe ---------------------------------------------------------------------------------


@pytest.mark.parametrize("output", ["table", "json"])
def test_a_reader_that_stops_early_ends_the_command_quietly(output: str) -> None:
    """`spotkube plan | head -1`: the pipe is shrunk to one page so the command must still be writing
    when the reader has taken its line and gone."""
    process = subprocess.Popen([SPOTKUBE, "plan", "--stack", "aks-dev-uksouth", "--format", output], cwd=REPO,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stdout is not None and process.stderr is not None
    fcntl.fcntl(process.stdout.fileno(), fcntl.F_SETPIPE_SZ, 4096)
    first = b""
    while not first.endswith(b"\n"):
        byte = os.read(process.stdout.fileno(), 1)
        assert byte, "spotkube ended before writing a line"
        first += byte
    process.stdout.close()
    stderr = process.stderr.read().decode()
    assert process.wait(timeout=300) == 0, stderr
    assert first.strip()
    assert stderr == ""


# --- the event loops of the offline engine ---------------------------------------------------------


def test_the_offline_engine_closes_every_event_loop_it_used() -> None:
    """Pulumi's runtime leaves an event loop per worker thread unclosed; finalised at exit in the wrong
    order, one printed "Exception ignored ... Invalid file descriptor" now and then. Python reports
    every unclosed loop it collects as a ResourceWarning, so none may be reported."""
    result = run_process("plan", "--stack", "aks-dev-uksouth", "--format", "json",
                         env={"PYTHONWARNINGS": "always::ResourceWarning"})
    assert result.returncode == 0, result.stderr
    assert "unclosed event loop" not in result.stderr
    assert "Exception ignored" not in result.stderr


# --- progress --------------------------------------------------------------------------------------


def test_progress_on_a_terminal_says_which_stack_and_how_long() -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=80, color_system=None)
    assert list(terminal.progress(["aks-dev-uksouth", "gke-dev-us-central1"], stderr=console)) == [
        "aks-dev-uksouth", "gke-dev-us-central1"]
    text = out.getvalue()
    assert re.search(r"planned aks-dev-uksouth \(1/2\) in \d+\.\d s", text)
    assert re.search(r"planned gke-dev-us-central1 \(2/2\) in \d+\.\d s", text)


def test_progress_with_plain_output_is_one_line_per_item_without_escapes() -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=80, color_system=None, no_color=True)
    list(terminal.progress(["a", "b"], stderr=console))
    lines = out.getvalue().splitlines()
    assert [line.split(" in ")[0] for line in lines] == ["planning a (1/2) ...", "planned a (1/2)",
                                                          "planning b (2/2) ...", "planned b (2/2)"]
    assert ESCAPE not in out.getvalue()


def test_progress_is_silent_when_stderr_is_not_a_terminal() -> None:
    out = io.StringIO()
    assert list(terminal.progress(["a", "b"], stderr=Console(file=out))) == ["a", "b"]
    assert out.getvalue() == ""


# --- -s ORG/PROJECT/STACK --------------------------------------------------------------------------


def test_pipeline_check_takes_pulumis_fully_qualified_stack_name(tmp_path: Path) -> None:
    pipeline = tmp_path / "pipeline.yaml"
    pipeline.write_text("pipelineInfo: {name: empty}\nroot: {dag: {tasks: {}}}\n")
    result = run("pipeline-check", str(pipeline), "-s", "acme/spotkube/aks-dev-uksouth", "--format", "json")
    assert result.returncode == 0, result.stderr
    assert '"stack": "aks-dev-uksouth"' in result.stdout


@pytest.mark.parametrize(("stack", "message"), [
    ("acme/webshop/aks-dev-uksouth", "error: --stack acme/webshop/aks-dev-uksouth: project 'webshop' is not this "
                                     "project; Pulumi.yaml names it 'spotkube'"),
    ("x/../../y", "error: --stack 'x/../../y': not a stack name"),
])
def test_pipeline_check_refuses_another_project_or_a_path(tmp_path: Path, stack: str, message: str) -> None:
    pipeline = tmp_path / "pipeline.yaml"
    pipeline.write_text("pipelineInfo: {name: empty}\nroot: {dag: {tasks: {}}}\n")
    result = run("pipeline-check", str(pipeline), "-s", stack)
    assert result.returncode == 2
    assert result.stdout == ""
    assert " ".join(result.stderr.split()).startswith(message)


def test_cost_takes_pulumis_fully_qualified_stack_name() -> None:
    result = run("cost", "-s", "acme/spotkube/aks-dev-uksouth", "--format", "json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["stack"] == "aks-dev-uksouth"
    other = run("cost", "-s", "acme/webshop/aks-dev-uksouth")
    assert other.returncode == 2
    assert "project 'webshop' is not this project" in other.stderr


def test_cost_table_follows_columns_and_no_color() -> None:
    result = run("cost", "-s", "aks-dev-uksouth", env={"COLUMNS": "80", "FORCE_COLOR": "1", "NO_COLOR": "1"})
    assert result.returncode == 0, result.stderr
    table = [line for line in result.stdout.splitlines() if line[:1] in "┏┃┡│└"]
    assert table and max(len(line) for line in table) <= 80
    assert ESCAPE not in result.stdout


def test_the_cli_needs_no_click_of_its_own() -> None:
    """typer carries its own click and spotkube declares none, so `make plan`'s install (spotkube's
    runtime dependencies only) has no click: the command must start without it."""
    code = ("import sys; sys.modules['click'] = None\n"
            "from spotkube.cli.app import app\n"
            "app(['--version'])")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("spotkube ")


@pytest.mark.parametrize(("args", "message"), [
    (("quota", "--stack", "gke-dev-us-central1", "--timeout", "0", "--endpoint", "http://127.0.0.1:9"),
     "the timeout must be a positive, finite number of seconds, got 0"),
    (("quota", "--stack", "aks-dev-uksouth", "--timeout", "-5", "--endpoint", "http://127.0.0.1:9",
      "--subscription", "00000000-0000-0000-0000-000000000001"),
     "the timeout must be a positive, finite number of seconds, got -5"),
    (("prices", "refresh", "--cloud", "azure", "--region", "uksouth", "--sku", "Standard_D4s_v3", "--timeout",
      "inf", "--azure-endpoint", "http://127.0.0.1:9/", "--retries", "0"),
     "the timeout must be a positive, finite number of seconds, got inf"),
    (("simulate", "--stack", "aks-dev-uksouth", "examples/pipelines/download_csvs.yaml", "--seed", "-1"),
     "Invalid value for '--seed': Input should be greater than or equal to 0"),
])
def test_a_number_no_client_can_use_is_refused_with_a_message(args: tuple[str, ...], message: str,
                                                              tmp_path: Path) -> None:
    """A timeout the HTTP clients can't use and a seed numpy can't take end in spotkube's message, not
    in the client's traceback."""
    done = run(*args, env={"SPOTKUBE_PRICES": str(tmp_path / "prices.json")})
    assert done.returncode == 2, done.stderr
    assert message in " ".join(done.stderr.split())
    assert "Traceback" not in done.stderr
