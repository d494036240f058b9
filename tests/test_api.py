"""The library entry point does what `gpulint check` does, from one options object."""

from __future__ import annotations

import gc
import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpulint.api import LintOptions, lint, with_profile
from gpulint.cli import main
from gpulint.config import Config
from gpulint.errors import GpulintError
from gpulint.model import PodTemplate, Severity
from gpulint.profile.model import ClusterProfile
from gpulint.rules.base import CheckContext, Problem, Rule
from gpulint.scheduling import Placement

ROOT = Path(__file__).resolve().parent.parent
TRAINING = ROOT / "fixtures" / "demo" / "training.yaml"
PLACEMENT = ROOT / "fixtures" / "demo" / "placement.yaml"
PROFILE = ROOT / "fixtures" / "profiles" / "placement-eks.yaml"


def _cli(*args: str) -> list[tuple[str, int, int, str]]:
    result = CliRunner().invoke(main, ["check", "--isolated", "--format", "json", *args])
    assert result.exit_code in (0, 1), result.output
    return [
        (f["code"], f["line"], f["column"], f["message"])
        for f in json.loads(result.stdout)["findings"]
    ]


def _found(*args: str, **options: object) -> list[tuple[str, int, int, str]]:
    result = lint(list(args), **options)
    return [(f.code, f.line, f.column, f.message) for f in result.findings]


def test_selection_is_applied_as_the_command_line_applies_it() -> None:
    path = str(TRAINING)
    assert _found(path, select=("GPU002",)) == _cli("--select", "GPU002", path)
    assert {code for code, *_ in _found(path, select=("GPU002",))} == {"GPU002"}
    # --select starts a new selection: the config's ignore no longer applies.
    config = Config(ignore=("GPU002",))
    assert _found(path, config=config, select=("GPU002",)) == _cli("--select", "GPU002", path)
    assert _found(path, ignore=("GPU0",)) == _cli("--ignore", "GPU0", path)


def test_a_selector_of_no_rule_is_refused() -> None:
    with pytest.raises(GpulintError, match=r"`GPU99` selects no rule"):
        lint([str(TRAINING)], select=("GPU99",))


def test_profile_paths_are_read_as_check_reads_them() -> None:
    path, profile = str(PLACEMENT), str(PROFILE)
    found = _found(path, profile_paths=(profile,))
    assert found == _cli("--profile", profile, path)
    assert any(code.startswith("GPU1") for code, *_ in found)


def test_with_profile_reads_once_what_lint_reads_each_run() -> None:
    # --fix runs lint() once per pass: the profile is read before, not on every pass.
    options = LintOptions(profile_paths=(str(PROFILE),))
    read = with_profile(options)
    assert read.profile_paths == () and isinstance(read.profile, ClusterProfile)
    found = lint([str(PLACEMENT)], read)
    assert found == lint([str(PLACEMENT)], options)
    assert any(f.code.startswith("GPU1") for f in found.findings)
    assert with_profile(LintOptions()) == LintOptions()
    with pytest.raises(GpulintError, match="a profile or profile paths, not both"):
        with_profile(replace(read, profile_paths=(str(PROFILE),)))


def test_an_options_object_and_keyword_changes_combine() -> None:
    options = LintOptions(select=("GPU002", "GPU003"))
    changed = lint([str(TRAINING)], options, select=("GPU003",))
    assert {f.code for f in changed.findings} == {"GPU003"}
    assert options.select == ("GPU002", "GPU003")  # the caller's object is left alone


_COLLECTOR_STATES: list[bool] = []


def collector_state(ctx: CheckContext) -> Iterator[Problem]:
    """A check that notes whether the cyclic collector runs while rules run."""
    _COLLECTOR_STATES.append(gc.isenabled())
    return iter(())


@pytest.mark.parametrize("enabled", [True, False])
def test_the_callers_garbage_collector_is_left_as_it_was(enabled: bool) -> None:
    probe = Rule("GPU799", "probe", Severity.INFO, "", check="tests.test_api:collector_state")
    was = gc.isenabled()
    _COLLECTOR_STATES.clear()
    try:
        (gc.enable if enabled else gc.disable)()
        lint([str(TRAINING)], rules=(probe,))
        assert [enabled] == _COLLECTOR_STATES
        assert gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()


def test_each_templates_placement_is_computed_once_per_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # GPU101-GPU105 judge each file's templates and GPU106/GPU201 the kept ones at the end:
    # all of them read one verdict per template.
    import gpulint.scheduling

    placed: list[tuple[str, object, tuple[int, int], object]] = []
    place = gpulint.scheduling.place

    def counted(
        template: PodTemplate,
        profile: ClusterProfile,
        tolerations: object = None,
        added: object = None,
        overhead: object = None,
    ) -> Placement:
        # The verdict on the pod as admitted, and the one if the admission's assumptions held,
        # are two verdicts: each is computed once.
        key = (template.document.file.path, template.document.ref, template.node.pos)
        placed.append((*key, tolerations))
        return place(template, profile, tolerations, added or {}, overhead or {})  # type: ignore[arg-type]

    monkeypatch.setattr(gpulint.scheduling, "place", counted)
    cases = ROOT / "fixtures" / "cases"
    result = lint(
        [str(PLACEMENT), str(cases / "placement"), str(cases / "capacity")],
        profile_paths=(str(PROFILE),),
    )
    codes = {f.code for f in result.findings}
    assert {"GPU101", "GPU102", "GPU106", "GPU201"} <= codes
    assert len(placed) == len(set(placed)) > 10


def test_one_path_given_as_a_string_is_refused_not_read_letter_by_letter() -> None:
    with pytest.raises(TypeError) as refused:
        lint(str(TRAINING))
    assert str(refused.value) == "lint() takes a list of paths: lint([path]), not lint(path)"


PYTORCH_JOB = """\
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: llama-ft, namespace: ml}
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          containers: [{name: m, image: "trainer:1"}]
    Worker:
      replicas: 2
      template:
        spec:
          containers: [{name: w, image: "trainer:1"}]
"""


def pods_beside_another_job(ctx: CheckContext) -> Iterator[Problem]:
    """A check whose message names another workload of the same kind, not its own."""
    for _, template in ctx.pod_templates():
        yield Problem.at(
            template.document, template.spec.pos, "pods share nodes with PyTorchJob/ml/other"
        )


def whole_job(ctx: CheckContext) -> Iterator[Problem]:
    """A check whose message names its own workload, and says so."""
    for workload, template in ctx.pod_templates():
        if template.role == "Worker":
            yield Problem.at(
                template.document,
                template.spec.pos,
                f"{workload.document.ref} is too large",
                names_workload=True,
            )


@pytest.mark.parametrize(
    ("check", "expected"),
    [
        (
            "pods_beside_another_job",
            [
                (10, 11, "PyTorchJob/llama-ft Master: pods share nodes with PyTorchJob/ml/other"),
                (15, 11, "PyTorchJob/llama-ft Worker: pods share nodes with PyTorchJob/ml/other"),
            ],
        ),
        ("whole_job", [(15, 11, "PyTorchJob/ml/llama-ft is too large")]),
    ],
)
def test_a_role_is_named_unless_the_check_says_its_message_names_the_workload(
    tmp_path: Path, check: str, expected: list[tuple[int, int, str]]
) -> None:
    manifest = tmp_path / "job.yaml"
    manifest.write_text(PYTORCH_JOB, encoding="utf-8")
    probe = Rule("GPU799", "probe", Severity.INFO, "", check=f"tests.test_api:{check}")
    found = lint([str(manifest)], rules=(probe,)).findings
    assert [(f.line, f.column, f.message) for f in found] == expected
