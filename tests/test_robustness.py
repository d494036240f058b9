"""Hostile, broken and huge input, end to end: no traceback, no hang, no leak, same output."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from gpulint.cli import main

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures" / "cases"
POD = (
    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\nspec:\n  containers:\n"
    "  - name: c\n    image: trainer:1.0\n    resources:\n"
    "      requests: {{cpu: '1', memory: 1Gi}}\n      limits: {{nvidia.com/gpu: 0.5}}\n"
)


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def findings(result: Result) -> list[tuple[str, str, int, int]]:
    assert result.exit_code in (0, 1), result.output
    report = json.loads(result.stdout)
    return [(f["code"], f["path"], f["line"], f["column"]) for f in report["findings"]]


# --- determinism ----------------------------------------------------------------------------


def test_same_input_gives_byte_identical_json_whatever_the_order_or_discovery(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(FIXTURES)
    files = sorted(str(p.relative_to(FIXTURES)) for p in (FIXTURES / "manifest").rglob("*.yaml"))
    args = ("check", "--isolated", "--select", "ALL", "--format", "json")
    first = run(*args, *files)
    assert first.exit_code == 1, first.output
    again = run(*args, *files)
    reversed_order = run(*args, *reversed(files))
    discovered = run(*args, "manifest")
    assert len(json.loads(first.stdout)["findings"]) > 30
    assert again.stdout == first.stdout
    assert reversed_order.stdout == first.stdout
    assert discovered.stdout == first.stdout


# --- files that cannot be read --------------------------------------------------------------


def test_unreadable_file_is_a_finding_and_the_others_are_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "k8s").mkdir()
    (tmp_path / "k8s" / "pod.yaml").write_text(POD.format(name="p"))
    (tmp_path / "k8s" / "loop.yaml").symlink_to("loop.yaml")
    result = run("check", "--isolated", "--format", "json", "k8s", "k8s/pod.yaml", "./k8s")
    assert findings(result) == [
        ("GPU000", "k8s/loop.yaml", 1, 1),
        ("GPU003", "k8s/pod.yaml", 11, 32),
    ]
    report = json.loads(result.stdout)
    assert report["findings"][0]["message"] == (
        "cannot read file: Too many levels of symbolic links"
    )
    assert report["summary"]["files"] == 2  # a path reached three times is read once


def test_permission_denied_is_a_finding(tmp_path: Path) -> None:
    (tmp_path / "ok.yaml").write_text(POD.format(name="ok"))
    secret = tmp_path / "secret.yaml"
    secret.write_text(POD.format(name="hidden"))
    secret.chmod(0o000)
    command = [sys.executable, "-m", "gpulint", "check", "--isolated", "--format", "json", "."]
    if os.geteuid() == 0:
        # root reads any file: drop the capabilities that let it, as an unprivileged CI user.
        if shutil.which("setpriv") is None:
            pytest.skip("running as root without setpriv: no way to be refused a read")
        command = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search", *command]
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    assert [(f["code"], f["path"], f["line"], f["message"]) for f in report["findings"]] == [
        ("GPU003", "ok.yaml", 11, "container `c` limits `nvidia.com/gpu`: `0.5` is not a whole "
         "number; the API rejects it (must be an integer): extended resources are whole devices"),
        ("GPU000", "secret.yaml", 1, "cannot read file: Permission denied"),
    ]  # fmt: skip


# --- size -----------------------------------------------------------------------------------


@pytest.mark.slow
def test_a_100_mb_file_is_read_with_exact_positions(tmp_path: Path) -> None:
    line = "    " + "x" * 95 + "\n"
    lines = 100 * 1024 * 1024 // len(line)
    path = tmp_path / "huge.yaml"
    with path.open("w") as out:
        out.write("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: blob}\ndata:\n  blob: |\n")
        out.write(line * lines)
        out.write("---\n" + POD.format(name="after"))
    assert path.stat().st_size > 100 * 1024 * 1024
    result = run("check", "--isolated", "--format", "json", str(path))
    # The pod's GPU limit is on the 11th line after the 5 header lines, the blob and `---`.
    assert findings(result) == [("GPU003", str(path), 5 + lines + 1 + 11, 32)]


# --- nothing leaks --------------------------------------------------------------------------

SECRET = "hunter2-s3cr3t"
LEAKY = f"""\
apiVersion: v1
kind: Secret
metadata: {{name: creds}}
stringData: {{password: {SECRET}, cpu: {SECRET}}}
data:
  token: {SECRET}
  token: {SECRET}-again
---
apiVersion: v1
kind: Secret
metadata: {{name: {SECRET}x}}
data: [{SECRET}]
spec: {SECRET}
---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: app}}
spec:
  replicas: {SECRET}
  selector: {{matchLabels: {{app: app}}}}
  template:
    spec:
      containers:
      - name: c
        image: app:1.0
        env:
        - {{name: PASSWORD, value: {SECRET}}}
        - name: TOKEN
          valueFrom: {{secretKeyRef: {{name: creds, key: token}}}}
        resources:
          requests: {{cpu: {{value: {SECRET}}}, memory: [{SECRET}], nvidia.com/gpu: [{SECRET}]}}
          limits: {{nvidia.com/gpu: {{value: {SECRET}}}}}
"""


@pytest.mark.parametrize("output", ["concise", "json"])
def test_secret_values_never_reach_the_output(tmp_path: Path, output: str) -> None:
    path = tmp_path / "leaky.yaml"
    path.write_text(LEAKY)
    result = run("check", "--isolated", "--select", "ALL", "--format", output, str(path))
    assert result.exit_code == 1, result.output
    assert "GPU000" in result.output  # the malformed parts are reported ...
    # ... by field and type: the only secret text allowed out is the name given to an object
    assert SECRET not in result.output.replace(f"{SECRET}x", "")


def test_the_text_report_shows_no_line_of_a_secret(tmp_path: Path) -> None:
    # The text report shows the line of each finding, from the user's own file; a Secret's
    # lines are left out, those of the Deployment (which quote its malformed values) are not.
    path = tmp_path / "leaky.yaml"
    path.write_text(LEAKY)
    result = run("check", "--isolated", "--select", "ALL", str(path))
    assert result.exit_code == 1, result.output
    shown = [line for line in result.output.splitlines() if re.match(r"\d+ \| ", line)]
    assert [line.split(" | ")[0] for line in shown] == ["19", "31", "31", "31", "32"]
    secret_document = LEAKY.split("---")[0]
    assert not any(line.split(" | ", 1)[1] in secret_document for line in shown)


def test_paths_are_reported_as_the_user_gave_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "pod.yaml").write_text(POD.format(name="p"))
    (tmp_path / "elsewhere.yaml").write_text(POD.format(name="e"))
    monkeypatch.chdir(tmp_path / "work")
    relative = run("check", "--isolated", "--format", "json", "pod.yaml", "../elsewhere.yaml")
    assert str(tmp_path) not in relative.stdout
    assert [f[1] for f in findings(relative)] == ["../elsewhere.yaml", "pod.yaml"]
    absolute = run("check", "--isolated", "--format", "json", str(tmp_path / "elsewhere.yaml"))
    assert [f[1] for f in findings(absolute)] == [str(tmp_path / "elsewhere.yaml")]


# --- numbers beyond what the API holds ------------------------------------------------------

HUGE = ("1e26", '"1e999999"', "12345678901234567890123456789")


@pytest.mark.parametrize("amount", HUGE)
def test_a_huge_gpu_quantity_is_a_finding_at_the_value(tmp_path: Path, amount: str) -> None:
    path = tmp_path / "pod.yaml"
    path.write_text(
        POD.format(name="p").replace("nvidia.com/gpu: 0.5", f"nvidia.com/gpu: {amount}")
    )
    result = run("check", "--isolated", "--format", "json", str(path))
    assert findings(result) == [("GPU003", str(path), 11, 32)]
    message = json.loads(result.stdout)["findings"][0]["message"]
    assert message.endswith("is not a valid quantity"), message


NODE_LIST = """\
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata:
    name: n1
    labels: {{node.kubernetes.io/instance-type: g5.xlarge}}
  status:
    capacity: {{cpu: "4", nvidia.com/gpu: {gpus}}}
    allocatable: {{cpu: "4", nvidia.com/gpu: {gpus}}}
    conditions: [{{type: Ready, status: "True"}}]
"""


@pytest.mark.parametrize(
    ("gpus", "problem"),
    [
        ("-4", "-4 is negative; write 0 or more"),
        (f'"{"9" * 4400}x"', f"'{'9' * 39}…' is not a Kubernetes quantity"),
        ("[4]", "[…] is not a Kubernetes quantity"),
    ],
)
@pytest.mark.parametrize("command", ["validate", "import"])
def test_a_negative_or_malformed_node_capacity_is_one_line_and_exit_2(
    tmp_path: Path, gpus: str, problem: str, command: str
) -> None:
    path = tmp_path / "nodes.yaml"
    path.write_text(NODE_LIST.format(gpus=gpus))
    result = run("profile", command, str(path))
    assert result.exit_code == 2, result.output
    validate = command == "validate"
    prefix = "" if validate else "gpulint: error: "
    where = f"{path}:10:42: items.0.status.capacity.nvidia.com/gpu: "
    # validate prints the problem on stdout and how many inputs were valid on stderr.
    shown = result.stdout if validate else result.stderr
    assert shown.splitlines() == [prefix + where + problem + (
        " (write it like 8, 500m or 16Gi)" if "quantity" in problem else ""
    )]  # fmt: skip
    if validate:
        assert result.stderr == "gpulint: 0 of 1 profile input valid\n"


# --- text a manifest controls, in every output --------------------------------------------

HOSTILE = r"""apiVersion: v1
kind: Pod
metadata:
  name: "<img src=x onerror=alert(1)>\e]0;pwned\a"
spec:
  containers:
  - name: "c\n::error file=README.md,line=1::INJECTED\e[2J\x01\u202e"
    image: trainer:1.0
    resources:
      requests: {cpu: "1", memory: 1Gi}
      limits: {nvidia.com/gpu: 0.5}
"""
ESCAPED_NAME = r"c\n::error file=README.md,line=1::INJECTED\x1b[2J\x01\u202e"
FORMATS = ("text", "json", "sarif", "github", "junit")


def _commands(output: str) -> list[str]:
    """The lines a GitHub runner reads as workflow commands (leading spaces are trimmed)."""
    return [line for line in output.splitlines() if line.lstrip().startswith("::")]


@pytest.mark.parametrize("output", ["text", "github"])
def test_manifest_text_cannot_inject_workflow_commands_or_terminal_escapes(
    tmp_path: Path, output: str
) -> None:
    path = tmp_path / "pod.yaml"
    path.write_text(HOSTILE)
    result = run("check", "--isolated", "--format", output, str(path))
    assert result.exit_code == 1, result.output
    expected = [] if output == "text" else [result.stdout.splitlines()[0]]
    assert _commands(result.stdout) == expected
    assert expected == [] or expected[0].startswith(f"::error file={path},line=11,col=32,")
    assert f"container `{ESCAPED_NAME}` limits" in result.stdout
    assert not any(char in result.stdout for char in "\x1b\x07\x01\u202e")


def test_junit_is_well_formed_xml_whatever_a_key_holds(tmp_path: Path) -> None:
    from xml.etree import ElementTree

    path = tmp_path / "pod.yaml"
    path.write_text(HOSTILE + '  "\\x02key": 1\n  "\\x02key": 2\n')
    result = run("check", "--isolated", "--format", "junit", str(path))
    assert result.exit_code == 1, result.output
    suite = ElementTree.fromstring(result.stdout)
    names = [case.get("name") for case in suite.iter("testcase")]
    assert names == [r"Pod/<img src=x onerror=alert(1)>\x1b]0;pwned\x07", "(file)"]
    messages = [failure.get("message") for failure in suite.iter("failure")]
    assert messages[0].startswith(f"GPU003 container `{ESCAPED_NAME}` limits")
    assert messages[1] == (
        r"GPU000 key `\x02key` is written twice in one mapping (lines 12 and 13): `kubectl "
        "apply` keeps the later value without a word (the first never reaches the API server), "
        "kustomize refuses the file"
    )


def test_step_summary_holds_no_html_from_a_manifest(tmp_path: Path) -> None:
    path = tmp_path / "pod.yaml"
    path.write_text(HOSTILE)
    summary = tmp_path / "summary.md"
    env = {"GITHUB_STEP_SUMMARY": str(summary)}
    result = CliRunner().invoke(
        main, ["check", "--isolated", "--format", "github", str(path)], env=env
    )
    assert result.exit_code == 1, result.output
    row = summary.read_text().splitlines()[-2]
    assert row == (
        f"| error | GPU003 fractional-gpu-quantity | `{path}:11:32` "
        r"| Pod/&lt;img src=x onerror=alert(1)&gt;\\x1b\]0;pwned\\x07 "
        r"| container `c\n::error file=README.md,line=1::INJECTED\x1b[2J\x01\u202e` limits "
        "`nvidia.com/gpu`: `0.5` is not a whole number; the API rejects it (must be an integer): "
        "extended resources are whole devices |"
    )


@pytest.mark.parametrize("output", FORMATS)
def test_a_megabyte_key_or_name_gives_a_bounded_report(tmp_path: Path, output: str) -> None:
    key, name = "k" * 1_000_000, "n" * 1_000_000
    path = tmp_path / "pod.yaml"
    path.write_text(
        HOSTILE.replace("c\\n::error", name).replace("<img", "m" * 1_000_000)
        + f"  ? {key}\n  : 1\n  ? {key}\n  : 2\n"  # explicit keys: a plain one is 1024 at most
    )
    result = run("check", "--isolated", "--format", output, str(path))
    assert result.exit_code == 1, result.output
    shown = result.stdout
    if output in ("json", "sarif"):
        report = json.loads(shown)
        # SARIF carries the whole rule catalogue besides the results.
        results = report["runs"][0]["results"] if "runs" in report else report
        shown = json.dumps(results, ensure_ascii=False)
    assert len(shown) < 40_000
    assert "kkkk…`" in shown and "nnnn…" in shown


def test_a_file_name_cannot_start_a_workflow_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("::warning title=x::y\nz.yaml").write_text(POD.format(name="p"))
    result = run("check", "--isolated", ".")
    assert result.exit_code == 1, result.output
    assert _commands(result.stdout) == []
    assert result.stdout.startswith(r"\x3a:warning title=x::y\nz.yaml:11:32: GPU003 ")


def test_the_source_line_of_a_finding_shows_control_characters_escaped(tmp_path: Path) -> None:
    path = tmp_path / "pod.yaml"
    path.write_bytes(b"apiVersion: v1\nkind: Pod\nmetadata: {name: a\x1b]0;pwned\x07b}\n")
    result = run("check", "--isolated", str(path))
    assert result.exit_code == 1, result.output
    assert "\x1b" not in result.stdout and "\x07" not in result.stdout
    lines = result.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("3 | "))
    assert lines[at : at + 2] == [
        r"3 | metadata: {name: a\x1b]0;pwned\x07b}",
        "  |                   ^",
    ]


# --- the file system, the terminal and the process -----------------------------------------


def gpulint(*args: str, **options: object) -> subprocess.CompletedProcess[str]:
    """`python -m gpulint ARGS` in a process of its own (120 s at most)."""
    command = [sys.executable, "-m", "gpulint", *args]
    streams = {} if "stdout" in options else {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
    return subprocess.run(command, text=True, timeout=120, **streams, **options)  # type: ignore[call-overload]


def _unprivileged(command: list[str]) -> list[str]:
    """`command` as a user that permissions apply to (root drops the capabilities that
    bypass them), or skip."""
    if os.geteuid() != 0:
        return command
    if shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: no way to be refused a read")
    return ["setpriv", "--bounding-set", "-dac_override,-dac_read_search", *command]


def _limit_file_size(limit: int) -> None:
    """In the child: writing a file past `limit` bytes fails with EFBIG, as on a full disk."""
    import resource

    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


def _pods(count: int) -> str:
    return "---\n".join(POD.format(name=f"p{i}") for i in range(count))


def test_a_tree_a_thousand_directories_deep_is_walked(tmp_path: Path) -> None:
    chain = [tmp_path / "d"]
    while len(chain) < 1000:
        chain.append(chain[-1] / "d")
    try:
        for directory in chain:
            directory.mkdir()
        (chain[-1] / "pod.yaml").write_text(POD.format(name="deep"))
        result = run("check", "--isolated", "--format", "json", str(tmp_path))
        assert findings(result) == [("GPU003", str(chain[-1] / "pod.yaml"), 11, 32)]
    finally:
        # pytest removes old temporary directories recursively, which a tree this deep would
        # make fail: it goes now, from the bottom.
        (chain[-1] / "pod.yaml").unlink(missing_ok=True)
        for directory in reversed(chain):
            if directory.exists():
                directory.rmdir()


def test_a_failed_write_to_stdout_is_one_line_and_exit_2(tmp_path: Path) -> None:
    (tmp_path / "pod.yaml").write_text(POD.format(name="p"))
    with open("/dev/full", "w") as full:
        done = gpulint("check", "--isolated", str(tmp_path), stdout=full, stderr=subprocess.PIPE)
    assert done.returncode == 2
    assert done.stderr == (
        "gpulint: error: cannot write the report to standard output: No space left on device\n"
    )


@pytest.mark.parametrize(("fail_on", "status"), [("error", 1), ("never", 0)])
def test_a_closed_pipe_keeps_the_exit_status_of_the_run(
    tmp_path: Path, fail_on: str, status: int
) -> None:
    # 600 findings: 220 kB of report, three times what a pipe (64 KiB) and a reader hold.
    (tmp_path / "pods.yaml").write_text(_pods(600))
    command = [sys.executable, "-m", "gpulint", "check", "--isolated", "--fail-on", fail_on]
    reader = subprocess.Popen(
        [*command, str(tmp_path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert reader.stdout is not None and reader.stderr is not None
    assert "GPU003" in reader.stdout.readline()  # `| head -1`
    reader.stdout.close()
    assert reader.wait(timeout=120) == status
    assert reader.stderr.read() == ""


def test_findings_stay_in_memory_when_the_temporary_directory_is_full(tmp_path: Path) -> None:
    # More findings than one spooled batch (FindingSpool._BATCH, 512) holds.
    (tmp_path / "pods.yaml").write_text(_pods(600))
    done = gpulint(
        "check", "--isolated", "--format", "json", str(tmp_path),
        preexec_fn=lambda: _limit_file_size(1),
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert len(json.loads(done.stdout)["findings"]) == 600


def test_output_on_a_full_disk_leaves_the_old_report_whole(tmp_path: Path) -> None:
    (tmp_path / "pods.yaml").write_text(_pods(200))
    report = tmp_path / "report.json"
    report.write_text("the previous report\n")
    done = gpulint(
        "check", "--isolated", "--format", "json", "-o", str(report), str(tmp_path / "pods.yaml"),
        preexec_fn=lambda: _limit_file_size(4096),
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr == f"gpulint: error: {report}: cannot write report: File too large\n"
    assert report.read_text() == "the previous report\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pods.yaml", "report.json"]


def _children(pid: int) -> list[int]:
    """The child processes of `pid` (Linux)."""
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        pytest.skip("needs /proc/PID/task/PID/children")
    return [int(child) for child in text.split()]


def _default_interrupt() -> None:
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _started_with_two_workers(
    tmp_path: Path, workers: int = 2, settle: float = 0.5
) -> subprocess.Popen[str]:
    """A `--jobs 2` run over enough input to use worker processes, once `workers` of them
    exist and `settle` seconds more have passed."""
    import time

    for index in range(16):
        (tmp_path / f"pods-{index:02}.yaml").write_text(_pods(1500))  # 6 MB in all
    command = [sys.executable, "-m", "gpulint", "check", "--isolated", "--jobs", "2"]
    process = subprocess.Popen(
        [*command, str(tmp_path)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # a process group, as a terminal's foreground job
        # A job started in the background of a shell inherits SIGINT ignored (as CI runners
        # and `( ... &)` start them): the terminal's foreground job that a user interrupts
        # does not, so neither does this run.
        preexec_fn=_default_interrupt,
    )
    deadline = time.monotonic() + 60
    while len(_children(process.pid)) < workers:
        assert process.poll() is None, "the run ended before it started its workers"
        assert time.monotonic() < deadline
        time.sleep(0.005)
    time.sleep(settle)
    return process


def test_ctrl_c_under_jobs_is_one_line_and_exit_130(tmp_path: Path) -> None:
    import signal

    process = _started_with_two_workers(tmp_path)
    os.killpg(process.pid, signal.SIGINT)  # what the terminal does on Ctrl-C
    assert process.wait(timeout=120) == 130
    assert process.stderr is not None and process.stderr.read() == "gpulint: interrupted\n"


def test_ctrl_c_while_the_workers_start_is_one_line_and_exit_130(tmp_path: Path) -> None:
    import signal

    # No time for the workers to set up: the interrupt meets them as they are forked.
    process = _started_with_two_workers(tmp_path, workers=1, settle=0)
    os.killpg(process.pid, signal.SIGINT)
    assert process.wait(timeout=120) == 130
    assert process.stderr is not None and process.stderr.read() == "gpulint: interrupted\n"


def test_a_killed_worker_is_one_line_and_exit_2(tmp_path: Path) -> None:
    import signal

    process = _started_with_two_workers(tmp_path)
    os.kill(_children(process.pid)[0], signal.SIGKILL)
    assert process.wait(timeout=120) == 2
    assert process.stderr is not None and process.stderr.read() == (
        "gpulint: error: a process checking files stopped unexpectedly (killed, or out of "
        "memory); run again, or with --jobs 1\n"
    )


def test_an_unreadable_directory_is_a_finding_not_a_clean_run(tmp_path: Path) -> None:
    (tmp_path / "ok.yaml").write_text(POD.format(name="ok").replace("0.5", "1"))
    (tmp_path / "locked").mkdir()
    (tmp_path / "locked" / "pod.yaml").write_text(POD.format(name="hidden"))
    (tmp_path / "locked").chmod(0o000)
    command = [sys.executable, "-m", "gpulint", "check", "--isolated", "--format", "json", "."]
    done = subprocess.run(
        _unprivileged(command), cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    (tmp_path / "locked").chmod(0o755)
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    assert [(f["code"], f["path"], f["line"], f["message"]) for f in report["findings"]] == [
        ("GPU000", "locked", 1, "cannot read directory: Permission denied")
    ]


def test_a_file_in_an_untraversable_directory_is_not_missing(tmp_path: Path) -> None:
    (tmp_path / "locked").mkdir()
    (tmp_path / "locked" / "pod.yaml").write_text(POD.format(name="hidden"))
    (tmp_path / "locked").chmod(0o600)  # listable by its owner, not searchable
    command = [sys.executable, "-m", "gpulint", "check", "--isolated", "--format", "json"]
    done = subprocess.run(
        _unprivileged([*command, "locked/pod.yaml"]),
        cwd=tmp_path, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    (tmp_path / "locked").chmod(0o755)
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    assert [(f["code"], f["path"], f["message"]) for f in report["findings"]] == [
        ("GPU000", "locked/pod.yaml", "cannot read file: Permission denied")
    ]


@pytest.mark.parametrize(
    ("source", "refusal"),
    [
        # A device is refused before it is opened, whatever it would give.
        ("/dev/zero", "not a regular file (a device, FIFO or socket is not read)"),
        ("sparse", "larger than 128 MiB, which gpulint refuses"),
    ],
)
def test_an_endless_device_or_a_huge_file_is_refused_with_a_finding(
    tmp_path: Path, source: str, refusal: str
) -> None:
    path = source
    if source == "sparse":
        huge = tmp_path / "huge.yaml"
        with huge.open("wb") as stream:
            stream.truncate(200 << 20)  # 200 MB that take no disk
        path = str(huge)
    result = run("check", "--isolated", "--format", "json", path)
    assert findings(result) == [("GPU000", path, 1, 1)]
    message = json.loads(result.stdout)["findings"][0]["message"]
    assert message == f"cannot read file: {refusal}"


def test_a_setting_written_twice_in_the_config_is_one_line_and_exit_2(tmp_path: Path) -> None:
    config = tmp_path / "gpulint.yaml"
    config.write_text("select: [GPU1]\nignore: [GPU601]\nselect: [GPU0]\n")
    (tmp_path / "pod.yaml").write_text(POD.format(name="p"))
    result = run("check", "--config", str(config), str(tmp_path / "pod.yaml"))
    assert result.exit_code == 2
    assert result.stderr == (
        f"gpulint: error: {config}:3:1: `select` is set twice (lines 1 and 3); keep one\n"
    )


# --- dependencies ---------------------------------------------------------------------------


def test_the_private_c_parser_of_ruamel_yaml_clib_is_where_gpulint_reads_it() -> None:
    from importlib.metadata import version

    from _ruamel_yaml import CParser

    events = CParser("a: 1\n")
    assert type(events.get_event()).__name__ == "StreamStartEvent"
    # pyproject.toml bounds both to the minor versions tested: ruamel.yaml <0.20, clib <0.3.
    assert (0, 18) <= tuple(int(p) for p in version("ruamel.yaml").split(".")[:2]) < (0, 20)
    assert (0, 2) <= tuple(int(p) for p in version("ruamel.yaml.clib").split(".")[:2]) < (0, 3)


def test_a_moved_c_parser_is_one_clear_line_and_exit_2(tmp_path: Path) -> None:
    (tmp_path / "pod.yaml").write_text(POD.format(name="p"))
    hide = (
        "import sys; sys.modules['_ruamel_yaml'] = None; "
        "sys.argv = ['gpulint', 'check', '--isolated', 'pod.yaml']; "
        "from gpulint.__main__ import run; run()"
    )
    done = subprocess.run(
        [sys.executable, "-c", hide], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2
    (line,) = done.stderr.splitlines()
    assert line.startswith(
        "gpulint: error: the C parser of ruamel.yaml.clib (_ruamel_yaml.CParser) cannot be "
        "imported ("
    )
    assert line.endswith("pip install 'ruamel.yaml.clib>=0.2.8,<0.3'")


def test_standard_input_larger_than_the_limit_is_one_line_and_exit_2(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("gpulint.loader.MAX_FILE_BYTES", 2 << 20)  # 128 MiB in the product
    result = CliRunner().invoke(main, ["check", "--isolated", "-"], input="#" * ((2 << 20) + 1))
    assert result.exit_code == 2
    assert result.stderr == "gpulint: error: standard input is larger than 2 MiB\n"


@pytest.mark.parametrize("command", [["profile", "validate"], ["diagnose"]])
def test_ctrl_c_in_any_command_is_one_line_and_exit_130(tmp_path: Path, command: list) -> None:
    import signal
    import time

    # A pipe passed as the shell passes `<(...)`; nobody writes to it: the command waits on
    # it until it is interrupted.
    read_end, write_end = os.pipe()
    process = subprocess.Popen(
        [sys.executable, "-m", "gpulint", *command, f"/dev/fd/{read_end}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_default_interrupt,
        pass_fds=(read_end,),
    )
    os.close(read_end)
    try:
        time.sleep(1.5)
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=60) == 130
    finally:
        os.close(write_end)
    assert process.stderr is not None and process.stderr.read() == "gpulint: interrupted\n"
