"""`gpulint check --fix` never loses data, never damages a file, and says why when it does not fix.

Every hostile case is built here: line breaks only the parser sees, values from the cluster that
YAML would read as another type, a rename onto a key that exists, JSON, flow lists, anchors,
links, read-only files, a file changed or removed during the run, a kill during the write and
a full disk (a file size limit the kernel enforces).
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from gpulint.atomic import NotWritten, locate, replace
from gpulint.cli import main
from gpulint.errors import GpulintError
from gpulint.fixing import FixResult, fix
from gpulint.yamltree import parse

PROFILE = """\
apiVersion: gpulint.io/v1alpha1
kind: ClusterProfile
metadata: {{name: t}}
spec:
  pools:
  - name: gpu
    labels: {{pool: gpu}}
    taints: [{{key: dedicated, value: {value}, effect: NoSchedule}}]
    allocatable: {{cpu: "8", memory: 64Gi, pods: 110, nvidia.com/gpu: 4}}
    nodes: 1
"""
POD = """\
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
  - name: c
    image: i
    resources:
      limits: {nvidia.com/gpu: 1}
"""
TOLERATION = """\
  tolerations:
  - key: dedicated
    operator: Equal
    value: ml
    effect: NoSchedule
"""
FIXED = POD.replace("spec:\n", "spec:\n" + TOLERATION)


@pytest.fixture()
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A checked tree: the working directory, with a profile of one tainted GPU pool."""
    root = tmp_path / "tree"
    root.mkdir()
    (root / "profile.yaml").write_text(PROFILE.format(value="ml"), encoding="utf-8")
    monkeypatch.chdir(root)
    return root


def run(*args: str) -> Result:
    """`gpulint check ARGS --profile profile.yaml`, in-process."""
    return CliRunner().invoke(main, ["check", *args, "--profile", "profile.yaml"])


def content(path: Path) -> str:
    """The text of `path`, every line break as it is written."""
    return path.read_bytes().decode("utf-8")


def tolerations(path: Path) -> list[object]:
    """The tolerations of the pod in `path`, as YAML reads them."""
    return parse(content(path)).documents[0].value["spec"]["tolerations"]


# Edits land where the parser sees the lines


@pytest.mark.parametrize("brk", ["\r", "\x85", "\u2028", "\u2029"], ids=["cr", "nel", "ls", "ps"])
def test_a_line_break_only_the_parser_sees_moves_no_insertion(tree: Path, brk: str) -> None:
    # The parser ends a line at each of these; an edit that counted only LF put the toleration
    # one line late, inside `containers:` (the container became a toleration).
    head = f"# team ml{brk}# owner x\n"
    (tree / "pod.yaml").write_text(head + POD, encoding="utf-8")
    result = run("pod.yaml", "--fix")
    assert content(tree / "pod.yaml") == head + FIXED
    assert "GPU102" not in result.stdout
    assert "gpulint: fixed 1 finding in 1 file(s)" in result.stderr


@pytest.mark.parametrize("control", ["\v", "\f"], ids=["vt", "ff"])
def test_vt_and_ff_are_not_line_breaks_and_such_a_file_is_not_fixed(
    tree: Path, control: str
) -> None:
    # The parser refuses both characters (and Python's splitlines breaks at them): no edit.
    text = f"# team ml{control}# owner x\n" + POD
    (tree / "pod.yaml").write_text(text, encoding="utf-8")
    result = run("pod.yaml", "--fix")
    assert content(tree / "pod.yaml") == text
    assert result.stdout.startswith("pod.yaml:1:10: GPU000 [error] character U+000")


def test_crlf_and_a_bom_are_kept(tree: Path) -> None:
    crlf = ("\ufeff" + POD).replace("\n", "\r\n").encode("utf-8")
    (tree / "pod.yaml").write_bytes(crlf)
    run("pod.yaml", "--fix")
    fixed = ("\ufeff" + FIXED).replace("\n", "\r\n").encode("utf-8")
    assert (tree / "pod.yaml").read_bytes() == fixed


def test_a_utf16_file_is_not_touched(tree: Path) -> None:
    data = POD.encode("utf-16")
    (tree / "pod.yaml").write_bytes(data)
    result = run("pod.yaml", "--fix")
    assert (tree / "pod.yaml").read_bytes() == data
    assert "GPU000" in result.stdout


# Values from the cluster are written so that YAML reads them back as the same string


@pytest.mark.parametrize(
    "value", ["0x10", "yes", "Y", "1e3", "null", "~", "0o17", "1_000", "12:30", "2024-01-01"]
)
def test_a_taint_value_yaml_would_retype_is_quoted_and_the_fix_converges(
    tree: Path, value: str
) -> None:
    (tree / "profile.yaml").write_text(PROFILE.format(value=json.dumps(value)), encoding="utf-8")
    (tree / "pod.yaml").write_text(POD, encoding="utf-8")
    result = run("pod.yaml", "--fix")
    assert "GPU102" not in result.stdout
    assert tolerations(tree / "pod.yaml") == [
        {"key": "dedicated", "operator": "Equal", "value": value, "effect": "NoSchedule"}
    ]
    assert run("pod.yaml", "--diff").stdout == ""


# A fix that would change anything but its target is not written, and says why


def test_a_rename_onto_a_key_that_exists_is_not_written(tree: Path) -> None:
    text = POD.replace("{nvidia.com/gpu: 1}", "{nvidia.com/gpu: 1, nvidia.com/gpus: 1}")
    (tree / "pod.yaml").write_text(text, encoding="utf-8")
    result = run("pod.yaml", "--select", "GPU001")
    assert result.stdout.startswith("pod.yaml:9:35: GPU001 [error] ")  # no [*]
    assert "fixable" not in result.stdout
    result = run("pod.yaml", "--select", "GPU001", "--fix")
    assert content(tree / "pod.yaml") == text
    assert result.stderr == (
        "gpulint: pod.yaml:9:35: GPU001: not fixed: `nvidia.com/gpu` would be written twice "
        "in one mapping\n"
    )


def test_an_anchored_list_that_an_alias_repeats_is_not_extended(tree: Path) -> None:
    # Adding to the anchor would add to every pod that repeats it: not the fix's target alone.
    first = POD.replace(
        "spec:\n", "spec:\n  tolerations: &shared\n  - {key: x, operator: Exists}\n"
    )
    second = POD.replace("name: p}", "name: q}").replace(
        "spec:\n", "spec:\n  tolerations: *shared\n"
    )
    pods = [
        p.replace("\n", "\n    ").replace("apiVersion", "- apiVersion", 1) for p in (first, second)
    ]
    text = "apiVersion: v1\nkind: List\nitems:\n  " + "\n  ".join(pods)
    (tree / "pod.yaml").write_text(text, encoding="utf-8")
    result = run("pod.yaml", "--fix")
    assert content(tree / "pod.yaml") == text
    assert result.stderr.startswith(
        "gpulint: pod.yaml:8:7: GPU102: not fixed: it is in an anchored node that an alias or "
        "merge repeats elsewhere\n"
    )


def test_json_gets_json_edits(tree: Path) -> None:
    pod = parse(POD).documents[0].value
    (tree / "pod.json").write_text(json.dumps(pod, indent=2) + "\n", encoding="utf-8")
    result = run("pod.json", "--fix")
    assert "gpulint: fixed 1 finding in 1 file(s)" in result.stderr
    fixed = json.loads(content(tree / "pod.json"))
    assert fixed["spec"]["tolerations"] == [
        {"key": "dedicated", "operator": "Equal", "value": "ml", "effect": "NoSchedule"}
    ]
    assert fixed["spec"]["containers"] == pod["spec"]["containers"]
    pod["spec"]["tolerations"] = [{"key": "other", "operator": "Exists"}]
    (tree / "pod.json").write_text(json.dumps(pod, indent=2) + "\n", encoding="utf-8")
    run("pod.json", "--fix")
    fixed = json.loads(content(tree / "pod.json"))
    assert [t["key"] for t in fixed["spec"]["tolerations"]] == ["other", "dedicated"]


def test_a_flow_list_gets_a_flow_edit(tree: Path) -> None:
    text = POD.replace("spec:\n", "spec:\n  tolerations: [{key: other, operator: Exists}]\n")
    (tree / "pod.yaml").write_text(text, encoding="utf-8")
    assert "GPU102 [*] [error]" in run("pod.yaml").stdout
    run("pod.yaml", "--fix")
    assert content(tree / "pod.yaml") == text.replace(
        "Exists}]",
        "Exists}, {key: dedicated, operator: Equal, value: ml, effect: NoSchedule}]",
    )


def test_a_flow_list_the_edit_cannot_extend_is_shown_without_a_mark_and_says_why(
    tree: Path,
) -> None:
    # The list's last line ends in a comment: text after it would be part of the comment.
    text = POD.replace(
        "spec:\n", "spec:\n  tolerations: [\n    {key: other, operator: Exists}  # ours\n  ]\n"
    )
    (tree / "pod.yaml").write_text(text, encoding="utf-8")
    result = run("pod.yaml")
    assert "pod.yaml:5:3: GPU102 [error]" in result.stdout
    assert "fixable" not in result.stdout
    result = run("pod.yaml", "--fix")
    assert content(tree / "pod.yaml") == text
    assert result.stderr == (
        "gpulint: pod.yaml:5:3: GPU102: not fixed: the fixed text would not parse (did not "
        "find expected ',' or ']' (while parsing a flow sequence))\n"
    )


def test_the_name_in_a_not_fixed_line_is_escaped(tree: Path) -> None:
    name = "pod\x1b[2J.yaml"
    (tree / name).write_text("# DO NOT EDIT\n" + POD, encoding="utf-8")
    result = run(name, "--fix")
    assert "\x1b" not in result.stderr
    assert result.stderr.startswith("gpulint: pod\\x1b[2J.yaml: not fixed: a tool generated it")


# The file on the disk: replaced whole or not at all, and only when it is still what was read


def _run_fix(unsafe: bool = False) -> FixResult:
    """`--fix` on pod.yaml in the library, before it writes."""
    from gpulint.api import lint, read_profile

    profile = read_profile(["profile.yaml"], None, None, use_cache=False)
    return fix(
        lambda overlay: lint(["pod.yaml"], root=os.getcwd(), profile=profile, overlay=overlay),
        unsafe=unsafe,
    )


def test_a_file_changed_after_it_was_read_is_not_overwritten(tree: Path) -> None:
    (tree / "pod.yaml").write_text(POD, encoding="utf-8")
    outcome = _run_fix()
    edited = POD + "# the author's edit, made while gpulint ran\n"
    (tree / "pod.yaml").write_text(edited, encoding="utf-8")
    outcome = outcome.write()
    assert content(tree / "pod.yaml") == edited
    assert outcome.written == ()
    assert outcome.notes() == [
        "gpulint: pod.yaml: not fixed: it changed since gpulint read it; run gpulint again"
    ]
    assert [f.code for f in outcome.final_result().findings] == ["GPU102", "GPU601"]


def test_a_file_removed_during_the_run_is_not_written_back(tree: Path) -> None:
    (tree / "pod.yaml").write_text(POD, encoding="utf-8")
    outcome = _run_fix()
    (tree / "pod.yaml").unlink()
    outcome = outcome.write()
    assert not (tree / "pod.yaml").exists()
    assert outcome.notes() == ["gpulint: pod.yaml: not fixed: it no longer exists"]
    with pytest.raises(GpulintError, match=r"pod\.yaml: no such file or directory"):
        outcome.final_result()
    assert [p.name for p in tree.iterdir()] == ["profile.yaml"]


def test_a_symlink_out_of_the_tree_is_not_followed(tree: Path) -> None:
    outside = tree.parent / "outside.yaml"
    outside.write_text(POD, encoding="utf-8")
    (tree / "pod.yaml").symlink_to(outside)
    with pytest.raises(NotWritten, match="a symbolic link to a file outside the checked tree"):
        locate("pod.yaml", ".")
    result = run("pod.yaml", "--fix")
    assert content(outside) == POD
    assert (tree / "pod.yaml").is_symlink()
    # The check does not read it either (gpulint.filetypes): nothing is left to fix.
    assert result.stderr == ""
    assert (
        f"pod.yaml:1:1: GPU000 [error] cannot read file: a symlink to {outside}, outside the "
        "checked tree"
    ) in result.stdout


def test_a_symlink_inside_the_tree_fixes_its_target_and_stays_a_link(tree: Path) -> None:
    (tree / "real").mkdir()
    (tree / "real" / "pod.yaml").write_text(POD, encoding="utf-8")
    (tree / "pod.yaml").symlink_to("real/pod.yaml")
    run("pod.yaml", "--fix")
    assert (tree / "pod.yaml").is_symlink()
    assert content(tree / "real" / "pod.yaml") == FIXED


def test_a_file_with_other_hard_links_is_not_split(tree: Path) -> None:
    (tree / "pod.yaml").write_text(POD, encoding="utf-8")
    os.link(tree / "pod.yaml", tree / "same.yml")
    result = run("pod.yaml", "--fix")
    assert content(tree / "pod.yaml") == POD
    assert (tree / "pod.yaml").stat().st_ino == (tree / "same.yml").stat().st_ino
    assert result.stderr == (
        "gpulint: pod.yaml: not fixed: it has 2 hard links; a fixed copy would leave the other "
        "names with the old text (--diff shows the fix)\n"
    )
    assert "GPU102 [error]" in result.stdout  # no [*]: --fix will not make it


def test_a_read_only_file_is_not_replaced(tree: Path) -> None:
    (tree / "pod.yaml").write_text(POD, encoding="utf-8")
    (tree / "pod.yaml").chmod(0o444)
    result = run("pod.yaml", "--fix")
    assert content(tree / "pod.yaml") == POD
    assert result.stderr == "gpulint: pod.yaml: not fixed: it is read-only\n"
    assert result.exit_code == 1


def test_mode_and_owner_are_kept_and_no_temporary_file_is_left(tree: Path) -> None:
    (tree / "pod.yaml").write_text(POD, encoding="utf-8")
    (tree / "pod.yaml").chmod(0o640)
    if os.geteuid() == 0:  # only root can give a file away
        os.chown(tree / "pod.yaml", 1234, 5678)
    before = (tree / "pod.yaml").stat()
    run("pod.yaml", "--fix")
    after = (tree / "pod.yaml").stat()
    assert content(tree / "pod.yaml") == FIXED
    assert (after.st_mode, after.st_uid, after.st_gid) == (
        before.st_mode,
        before.st_uid,
        before.st_gid,
    )
    assert after.st_ino != before.st_ino  # a new file renamed over the old one
    assert sorted(p.name for p in tree.iterdir()) == ["pod.yaml", "profile.yaml"]


_WRITER = """\
import sys
from gpulint.atomic import replace
path, size = sys.argv[1], int(sys.argv[2])
original = open(path, "rb").read()
replace(path, original, b"# fixed\\n" * (size // 8), ".")
"""


def test_a_kill_during_the_write_leaves_the_original_whole(tmp_path: Path) -> None:
    original = b"kind: Pod\n" + b"# padding\n" * 2_000_000  # 20 MB
    target = tmp_path / "pod.yaml"
    killed_mid_write = False
    for _ in range(5):
        target.write_bytes(original)
        child = subprocess.Popen(
            [sys.executable, "-c", _WRITER, "pod.yaml", str(64 << 20)], cwd=tmp_path
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and child.poll() is None:
            temporary = [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
            if temporary and temporary[0].stat().st_size > 0:
                child.send_signal(signal.SIGKILL)
                killed_mid_write = True
                break
            time.sleep(0.0005)
        child.wait()
        assert target.read_bytes() == original or child.returncode == 0
        if killed_mid_write:
            assert child.returncode == -signal.SIGKILL
            assert target.read_bytes() == original  # a leftover temporary file, nothing more
            break
    assert killed_mid_write


def test_a_full_disk_leaves_the_original_whole_and_says_so(tree: Path) -> None:
    # RLIMIT_FSIZE makes the kernel refuse writes past a size, as a full disk does (EFBIG).
    text = POD + "".join(f"# line {i} of a long comment\n" for i in range(2000))
    (tree / "pod.yaml").write_text(text, encoding="utf-8")
    size = len(text.encode())

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (size + 10, size + 10))

    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "gpulint",
            "check",
            "pod.yaml",
            "--profile",
            "profile.yaml",
            "--fix",
        ],
        cwd=tree,
        preexec_fn=limit,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert content(tree / "pod.yaml") == text
    assert done.stderr == "gpulint: pod.yaml: not fixed: cannot write the fix: File too large\n"
    assert "pod.yaml:4:1: GPU102 [*] [error]" in done.stdout  # what the file still holds
    assert done.returncode == 1
    assert sorted(p.name for p in tree.iterdir()) == ["pod.yaml", "profile.yaml"]


@pytest.mark.slow
def test_five_thousand_documents_are_fixed_in_seconds(tree: Path) -> None:
    pods = "---\n".join(POD.replace("name: p}", f"name: p{i}}}") for i in range(5000))
    (tree / "pod.yaml").write_text(pods, encoding="utf-8")
    start = time.monotonic()
    result = run("pod.yaml", "--fix", "--select", "GPU102")
    elapsed = time.monotonic() - start
    assert "gpulint: fixed 5000 findings in 1 file(s)" in result.stderr
    assert result.stdout.startswith("All checks passed")
    fixed = "---\n".join(FIXED.replace("name: p}", f"name: p{i}}}") for i in range(5000))
    assert content(tree / "pod.yaml") == fixed
    assert elapsed < 30


def test_a_fifo_in_the_files_place_is_refused_without_waiting(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pod.yaml")
    with pytest.raises(NotWritten, match="it is not a regular file"):
        replace(str(tmp_path / "pod.yaml"), b"", b"fixed", str(tmp_path))
