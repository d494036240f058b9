"""Start-up of the pre-commit case: what a plain `gpulint check FILE` imports, and why it may not.

A run imports a rule's module only when the rule can find something (see gpulint.rules): these
tests pin which modules stay out of a plain run, and that the rules left out really had nothing
to find.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import NamedTuple

import pytest

from gpulint.api import KNOWLEDGE_KINDS, lint
from gpulint.catalogue import catalogue_entry
from gpulint.config import Config
from gpulint.loader import LoadResult, load
from gpulint.profile.model import OBJECT_FIELDS, ClusterProfile
from gpulint.rules import registry
from gpulint.rules.base import CheckContext
from gpulint.workloads import workload_of
from tests.expectations import fixture_args

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures" / "cases"
CASES = sorted(p for p in FIXTURES.rglob("*") if p.suffix in (".yaml", ".yml", ".json"))
HELM = FIXTURES / "helm" / "rendered.yaml"

#: Modules a `gpulint check` of plain manifests, without --profile or a config file, never needs.
NOT_IMPORTED = (
    "jsonschema",
    "hashlib",
    "pickle",  # findings spool to a temporary file only once a batch of them fills
    "tempfile",
    "kubernetes",
    "importlib.resources",
    "gpulint.diagnose",
    "gpulint.live",
    "gpulint.smoke",
    "gpulint.schema",
    "gpulint.profile",
    "gpulint.render.plan",  # charts and overlays only
    "gpulint.render.helm",
    "gpulint.render.kustomize",
    "gpulint.render.locate",
    "gpulint.scheduling",
    "gpulint.constraints",
    "gpulint.replicas",
    "gpulint.rules.placement",
    "gpulint.rules.capacity",
    "gpulint.rules.quota",
    "gpulint.rules.kueue",
    "gpulint.rules.priority",
    "gpulint.rules.device_plugin",
    "gpulint.device_plugins",  # no DaemonSet, and GPU001 asks only with a profile
    "gpulint.output.json",
    "gpulint.output.sarif",
    "gpulint.output.github",
    "gpulint.output.junit",
    "gpulint.output.statistics",
    "gpulint.output.catalogue",
    "gpulint.catalogue",  # selectors are checked against the registry's codes
    "gpulint.dra",  # no pod claims devices, no DRA object
    "gpulint.edits",  # no finding here carries a fix
    "gpulint.gitignore",  # a file given by name: nothing is walked
    "gpulint.render.options",  # no chart or overlay among the inputs, none configured
    "json",  # edits write and read JSON only for a fix applied to a JSON file
    "difflib",  # GPU004's `resource:` is spelt like `resources:` without it
    "gpulint.engine.cache",  # one file: no per-file results cache
    "_pickle",  # nor the context files' index (gpulint.engine.known), nor a cached profile
    "gpulint.operators",  # no object an operator builds pods from (KServe, NIM, KAITO ...)
)

_IMPORTED = """\
import sys
from gpulint.cli import main
sys.argv = ["gpulint", *sys.argv[1:]]
status = 0
try:
    main()
except SystemExit as exit:
    status = exit.code
modules = sorted(sys.modules)  # before this script imports json to write them
import json
sys.__stderr__.write("\\n" + json.dumps(modules))
sys.exit(status)
"""


def started(*args: str, cwd: Path) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """A fresh `gpulint ARGS` process (its status, report and messages), and every module it
    has imported when it exits."""
    # As a user runs it: the cache in its default place, not one the suite names.
    environ = {k: v for k, v in os.environ.items() if k != "GPULINT_CACHE_DIR"}
    done = subprocess.run(
        [sys.executable, "-c", _IMPORTED, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=environ,
    )
    # The last line is the modules: a run that crashed before writing them fails here.
    messages, _, modules = done.stderr.rpartition("\n")
    run = subprocess.CompletedProcess(done.args, done.returncode, done.stdout, messages)
    return run, set(json.loads(modules))


def imported_by(*args: str, cwd: Path) -> set[str]:
    """Every module a fresh `gpulint ARGS` process has imported when it exits."""
    return started(*args, cwd=cwd)[1]


def _under(modules: set[str], package: str) -> list[str]:
    return sorted(m for m in modules if m == package or m.startswith(f"{package}."))


def test_the_checked_file_is_what_the_import_tests_expect() -> None:
    # A Helm file of plain workloads: no DaemonSet, quota, LimitRange or PriorityClass.
    text = HELM.read_text(encoding="utf-8")
    assert "# Source:" in text
    for kind in ("DaemonSet", "ResourceQuota", "LimitRange", "PriorityClass"):
        assert f"kind: {kind}" not in text


def test_plain_check_imports_only_what_it_runs(tmp_path: Path) -> None:
    # As every run after a user's first: the schemas of the kinds it meets are in the cache
    # (the first run reads them from the release's JSON files).
    imported_by("check", str(HELM), cwd=tmp_path)
    modules = imported_by("check", str(HELM), cwd=tmp_path)
    assert "gpulint.api" in modules and "gpulint.rules.resources" in modules
    imported = {name: _under(modules, name) for name in NOT_IMPORTED}
    assert {name: found for name, found in imported.items() if found} == {}


def test_the_console_script_imports_pathlib_without_urllib(tmp_path: Path) -> None:
    # `python -m gpulint` starts as the console script does (gpulint.__main__.run): pathlib
    # without urllib.parse and ipaddress, which only Path.as_uri needs.
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "gpulint", "check", str(HELM)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert done.returncode in (0, 1), done.stderr
    modules = {line.rpartition("|")[2].strip() for line in done.stderr.splitlines()}
    assert "pathlib" in modules and "gpulint.api" in modules
    assert not {"urllib.parse", "ipaddress"} & modules
    # A SARIF report names the root by its URI: the real module is imported for it then.
    sarif = subprocess.run(
        [sys.executable, "-m", "gpulint", "check", "--format", "sarif", str(HELM)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    uri = json.loads(sarif.stdout)["runs"][0]["originalUriBaseIds"]["SRCROOT"]["uri"]
    assert uri == tmp_path.as_uri() + "/"


#: What the pre-commit hook of a real repository runs: a config with every kind of setting, and
#: a profile of pools (no quotas, LimitRanges, PriorityClasses or claims) that an earlier run
#: put in the cache.
HOOK_CONFIG = """\
select: [GPU]
ignore: [GPU402]
severity: {GPU601: info}
per-file-ignores:
  "examples/*.yaml": [GPU003]
context: [k8s]
"""
HOOK_PROFILE = ROOT / "fixtures" / "profiles" / "clusters-prod-h100.yaml"

#: Modules that such a run, the config validated and the profile read before, never needs.
NOT_IMPORTED_BY_THE_HOOK = (
    "jsonschema",
    "gpulint.schema",  # the config's bytes validated before
    "hashlib",  # a config and a small profile hash without loading OpenSSL
    "pickle",  # an entry is read by the C unpickler alone
    "gpulint.profile.clusterprofile",  # the importers: the profile's facts are in the cache
    "gpulint.profile.kubectl",
    "gpulint.profile.eksctl",
    "gpulint.profile.karpenter",
    "gpulint.profile.clusterapi",
    "gpulint.profile.terraform",
    "gpulint.profile.nodes",
    "gpulint.cuda",  # GPU801-803 run, but no GPU container's image is one the CUDA tables list
    "gpulint.data.cuda",
    "gpulint.profile.admission_policies",  # which objects are policies: parsing a profile only
    "gpulint.profile.values",
    "gpulint.dra",  # neither the profile nor the manifests hold DRA objects
    "gpulint.profile.policy",  # the profile lists no quota, LimitRange or PriorityClass
    "gpulint.kueue",  # nor a ClusterQueue or LocalQueue
    "gpulint.profile.kueue",
    "gpulint.rules.quota",
    "gpulint.rules.priority",
    "gpulint.render.plan",  # no chart or overlay among the inputs
    "gpulint.catalogue",
    "gpulint.output.json",
    "gpulint.output.sarif",
    "json",
    "difflib",
    "gpulint.engine.cache",  # one file and no other in `context:`: no per-file results cache
    "gpulint.rules.kueue",  # GPU310 reads queues, and neither the profile nor a manifest has one
    "gpulint.profile.objects",  # the profile lists pools alone: no quota, queue or CRD class
    "gpulint.operators",
)


def _hook_repository(tmp_path: Path) -> tuple[Path, list[str]]:
    (tmp_path / "k8s").mkdir()
    (tmp_path / ".gpulint.yaml").write_text(HOOK_CONFIG, encoding="utf-8")
    (tmp_path / "k8s" / "rendered.yaml").write_bytes(HELM.read_bytes())
    args = ["check", "k8s/rendered.yaml", "--profile", str(HOOK_PROFILE)]
    return tmp_path, [*args, "--cache-dir", str(tmp_path / "cache")]


class HookRun(NamedTuple):
    """A repository checked once as the pre-commit hook checks it, which filled its cache."""

    repository: Path
    args: list[str]
    first: subprocess.CompletedProcess[str]
    imported: set[str]  # by the first run


@pytest.fixture(scope="module")
def hook_run(tmp_path_factory: pytest.TempPathFactory) -> HookRun:
    """The hook's repository after its first run; the runs of the tests read its cache only."""
    repository, args = _hook_repository(tmp_path_factory.mktemp("hook"))
    first, imported = started(*args, cwd=repository)
    return HookRun(repository, args, first, imported)


def test_the_hook_with_a_config_and_a_cached_profile_imports_only_what_it_runs(
    hook_run: HookRun,
) -> None:
    # The first run filled the cache: it validated the config and parsed the profile.
    assert {"gpulint.schema", "gpulint.profile.clusterprofile"} <= hook_run.imported

    modules = imported_by(*hook_run.args, cwd=hook_run.repository)

    assert {"gpulint.config", "gpulint.profile.cache", "gpulint.rules.placement"} <= modules
    imported = {name: _under(modules, name) for name in NOT_IMPORTED_BY_THE_HOOK}
    assert {name: found for name, found in imported.items() if found} == {}


def test_the_hook_reports_from_the_cache_what_it_reports_without_it(hook_run: HookRun) -> None:
    command = [sys.executable, "-m", "gpulint", *hook_run.args]
    cached = subprocess.run(command, cwd=hook_run.repository, capture_output=True, text=True)
    uncached = subprocess.run(
        [*command, "--no-cache"], cwd=hook_run.repository, capture_output=True, text=True
    )
    runs = [hook_run.first, cached]
    assert runs[0].returncode == 1 and "GPU" in runs[0].stdout
    assert [(r.returncode, r.stdout, r.stderr) for r in runs] == [
        (uncached.returncode, uncached.stdout, uncached.stderr)
    ] * 2


def test_a_profile_without_drivers_reads_no_cuda_table(tmp_path: Path) -> None:
    # GPU801 runs, but no pool of the profile states a driver or has GPU Feature Discovery's
    # CUDA labels, and no GPU Operator says which it installs: no pool's driver is known, and
    # the CUDA tables (image rows, driver floors, GPU models) are never read.
    run, modules = started("check", str(HELM), "--profile", str(HOOK_PROFILE), cwd=tmp_path)
    assert run.returncode == 1 and "GPU002" in run.stdout
    assert "gpulint.rules.cuda" in modules
    assert _under(modules, "gpulint.cuda") + _under(modules, "gpulint.data.cuda") == []


def test_a_profile_with_drivers_judges_them_with_the_cuda_tables(tmp_path: Path) -> None:
    fixture = FIXTURES / "cuda" / "GPU801-driver-floor.yaml"
    run, modules = started("check", str(fixture), *fixture_args(fixture), cwd=tmp_path)
    assert "GPU801" in run.stdout
    assert {"gpulint.cuda", "gpulint.data.cuda"} <= modules


def test_check_imports_the_rules_the_manifests_give_work(tmp_path: Path) -> None:
    plugin = FIXTURES / "device-plugin" / "GPU501-image-tags.yaml"
    quota = FIXTURES / "admission" / "GPU302-quota-key-not-enforced.yaml"
    modules = imported_by("check", str(plugin), str(quota), cwd=tmp_path)
    assert {"gpulint.rules.device_plugin", "gpulint.rules.quota"} <= modules
    assert "gpulint.rules.placement" not in modules


def test_the_chosen_format_is_the_only_one_imported(tmp_path: Path) -> None:
    modules = imported_by("check", "--format", "sarif", str(HELM), cwd=tmp_path)
    assert "gpulint.output.sarif" in modules
    assert not _under(modules, "gpulint.output.text") + _under(modules, "gpulint.output.json")


def test_a_check_reads_no_catalogue_record() -> None:
    # The engine's facts, names and fix texts come from the generated registry.
    catalogue_entry.cache_clear()
    result = lint([str(HELM)])
    reported = {finding.code for finding in result.findings}
    # GPU012: the fixture's Deployment has no spec.selector.
    assert reported == {"GPU002", "GPU012", "GPU601"}
    assert catalogue_entry.cache_info().currsize == 0
    assert {finding.name for finding in result.findings} == {
        catalogue_entry(code).name for code in reported
    }


@pytest.mark.parametrize(
    "args", [("rules",), ("explain", "GPU001"), ("--help",)], ids=lambda a: a[0]
)
def test_catalogue_commands_import_no_rule(args: tuple[str, ...], tmp_path: Path) -> None:
    modules = imported_by(*args, cwd=tmp_path)
    # The registry (gpulint.rules, gpulint.rules.base) lists the codes; no rule's module runs.
    engine = {"gpulint.rules", "gpulint.rules.base"}
    assert not [m for m in modules if m.startswith("gpulint.rules") and m not in engine]


def _context_without(path: Path, kinds: frozenset[str], with_profile: bool) -> CheckContext:
    """The fixture's documents except those of `kinds`, with its profile if `with_profile`."""
    loaded = _loaded(path)
    documents = tuple(d for d in loaded.documents if d.ref.kind not in kinds)
    kept = LoadResult(loaded.files, documents, loaded.issues)
    shapes = Config().workloads
    workloads = tuple(w for d in documents if (w := workload_of(d, shapes)) is not None)
    args = fixture_args(path)
    profiles = [args[i + 1] for i, arg in enumerate(args) if arg == "--profile"]
    profile = None
    if with_profile and profiles:
        profile = _without_kinds(_profile(tuple(profiles)), kinds)
    knowledge = tuple(d for d in documents if d.ref.kind in KNOWLEDGE_KINDS)
    return CheckContext(kept, workloads, profile, knowledge=knowledge)


# Every gated rule is tried on every fixture: each fixture and profile is read once (the
# views are immutable; a fresh context is built for each rule).
@functools.cache
def _loaded(path: Path) -> LoadResult:
    return load([path])


@functools.cache
def _profile(paths: tuple[str, ...]) -> ClusterProfile:
    from gpulint.profile import load_profiles

    return load_profiles(paths)


def _without_kinds(profile: ClusterProfile, kinds: frozenset[str]) -> ClusterProfile:
    """`profile` without the objects of `kinds` it lists."""
    emptied: dict[str, object] = {name: () for kind, name in OBJECT_FIELDS.items() if kind in kinds}
    if "RuntimeClass" in kinds:
        # A profile that knows every class lists the kind even when there is none.
        emptied["runtime_classes_known"] = False
    claims = tuple(c for c in profile.resource_claims if c.kind not in kinds)
    stripped = replace(profile, **emptied, resource_claims=claims)
    assert stripped.object_kinds.isdisjoint(kinds)
    return stripped


# Subject-kind rules are left out without such objects among the manifests, whether a profile
# is given or not; policy rules when neither the manifests nor the profile list such objects.
GATED = sorted(
    [(r.code, r.judges, True) for r in registry() if r.judges]
    + [(r.code, r.reads, True) for r in registry() if r.reads and not r.judges]
)


@pytest.mark.parametrize(("code", "kinds", "with_profile"), GATED, ids=[g[0] for g in GATED])
def test_rules_left_out_would_have_found_nothing(
    code: str, kinds: frozenset[str], with_profile: bool
) -> None:
    # The registry does not run these rules when no manifest is of their kinds: sound only if
    # on every fixture, without those objects, they report nothing.
    check = next(r for r in registry() if r.code == code).check_function()
    for path in CASES:
        assert not list(check(_context_without(path, kinds, with_profile))), path


# Runs gpulint's CLI with the script's arguments, as the `gpulint` command does.
_RUN_CLI = """\
from gpulint.cli import main
sys.argv = ["gpulint", *sys.argv[1:]]
try:
    main()
except SystemExit:
    pass
"""


def _start_reports(
    script: str, hook: bool, tmp_path: Path, request: pytest.FixtureRequest
) -> list[str]:
    """What `script` (which runs gpulint's CLI and writes JSON last on stderr) reports of a
    plain check of one file, or of the hook's run that reads its profile from the cache."""
    if hook:  # reads the profile from the cache the hook's first run filled
        hook_run: HookRun = request.getfixturevalue("hook_run")
        repository, args = hook_run.repository, hook_run.args
    else:
        repository, args = tmp_path, ["check", str(HELM)]
    run = subprocess.run(
        [sys.executable, "-c", script, *args],
        cwd=repository,
        capture_output=True,
        text=True,
        check=True,
    )
    reported: list[str] = json.loads(run.stderr.splitlines()[-1])
    return reported


_NAMED_TUPLES = (
    """\
import collections, json, sys
made = []
namedtuple = collections.namedtuple
def counted(typename, *args, module=None, **kwargs):
    made.append(f"{module or sys._getframe(1).f_globals.get('__name__')}.{typename}")
    return namedtuple(typename, *args, module=module, **kwargs)
collections.namedtuple = counted  # typing.NamedTuple classes are made by it too
"""
    + _RUN_CLI
    + """\
sys.__stderr__.write(json.dumps([name for name in made if name.startswith("gpulint")]))
"""
)


@pytest.mark.parametrize("hook", [False, True], ids=["plain", "hook"])
def test_the_start_compiles_no_named_tuple(
    hook: bool, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    # gpulint's NamedTuples are gpulint.views.NamedTuple classes: typing.NamedTuple (through
    # collections.namedtuple) compiles each class's __new__ from source and checks every field's
    # type, about 700,000 instructions a class, and a run with a profile defines 80 of them.
    reported = _start_reports(_NAMED_TUPLES, hook, tmp_path, request)
    assert reported == []


_DATACLASSES = (
    """\
import dataclasses, json, sys
made = []
process_class = dataclasses._process_class  # what dataclass() runs for every class
def counted(cls, *args, **kwargs):
    made.append(f"{cls.__module__}.{cls.__qualname__}")
    return process_class(cls, *args, **kwargs)
dataclasses._process_class = counted
"""
    + _RUN_CLI
    + """\
sys.__stderr__.write(json.dumps(made))
"""
)


@pytest.mark.parametrize("hook", [False, True], ids=["plain", "hook"])
def test_the_start_makes_no_dataclass(
    hook: bool, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    # Views and records are frozen_view / frozen_record classes: a dataclass on the start path
    # would compile four to six methods at every start (about 4 million instructions), and
    # dataclass() looks into every field's annotation even when it compiles nothing (0.3 to
    # 1.2 million a record).
    reported = _start_reports(_DATACLASSES, hook, tmp_path, request)
    assert reported == []


_ENUMS = (
    _RUN_CLI
    + """\
import enum
made = sorted(
    f"{name}.{attribute}"
    for name, module in list(sys.modules.items())
    if name.startswith("gpulint")
    for attribute, value in vars(module).items()
    if isinstance(value, enum.EnumMeta) and value.__module__ == name
)
sys.__stderr__.write(json.dumps(made))
"""
)


@pytest.mark.parametrize("hook", [False, True], ids=["plain", "hook"])
def test_the_start_makes_only_the_model_enums(
    hook: bool, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    # Defining an Enum costs 100 to 200 microseconds at every start: names a run only compares
    # (the scheduler's filters, why a pod is never placed) are plain class attributes.
    reported = _start_reports("import json, sys\n" + _ENUMS, hook, tmp_path, request)
    assert reported == [
        "gpulint.model.ContainerRole",
        "gpulint.model.IssueKind",
        "gpulint.model.Severity",
    ]


_PATTERNS = (
    """\
import json, re, sys
compiled = []
compile_pattern = re._compile
def counted(pattern, flags):
    if (type(pattern), pattern, flags) not in re._cache:
        caller = sys._getframe(1)
        while caller.f_globals.get("__name__", "").partition(".")[0] in ("re", "fnmatch"):
            caller = caller.f_back
        module = caller.f_globals.get("__name__", "")
        if module.startswith("gpulint"):
            compiled.append(module)
    return compile_pattern(pattern, flags)
re._compile = counted
"""
    + _RUN_CLI
    + """\
sys.__stderr__.write(json.dumps(sorted(compiled)))
"""
)


@pytest.mark.parametrize("hook", [False, True], ids=["plain", "hook"])
def test_the_start_compiles_only_the_patterns_it_runs(
    hook: bool, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    # A pattern costs 150,000 to 1,300,000 instructions to compile. Those only some runs need
    # (another output format, a conflict marker, a suppression, a wrong label value, a config
    # shape) are kept as strings for `re` to compile on first use, and a glob or a path of
    # plain keys is matched without one.
    reported = _start_reports(_PATTERNS, hook, tmp_path, request)
    # By the module that compiles each: YAML's int, octal/hex and float scalars, quantities,
    # resource name tokens, Helm's `# Source:` comments, the document starts of the text
    # report's source lines. The hook's config and profile add none: its per-file-ignores
    # glob (`examples/*.yaml`) and the rolling-update surges (`25%`) are read without one.
    expected = [
        "gpulint.accelerators",
        "gpulint.loader",
        "gpulint.output.text",
        "gpulint.quantity",
        *["gpulint.yamltree"] * 3,
    ]
    assert reported == sorted(expected)


# --- schema validation (the `gpulint[schema]` extra) ------------------------------------------

#: What a pre-commit run of a valid file validates: four kinds, one of which (the Deployment)
#: reaches a hundred definitions; the container's `resource:` is GPU004's (GPU012 drops it).
VALID = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: trainer, labels: {app: trainer}}
data: {steps: "100"}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: trainer}
spec:
  replicas: 1
  selector: {matchLabels: {app: trainer}}
  template:
    metadata: {labels: {app: trainer}}
    spec:
      containers:
      - name: trainer
        image: "trainer:1.0"
        imagePullPolicy: IfNotPresent
        resources: {limits: {nvidia.com/gpu: 1, memory: 8Gi}, requests: {cpu: 500m}}
        ports: [{containerPort: 8080, protocol: TCP}]
      - name: sidecar
        image: "sidecar:1.0"
        resource: {limits: {nvidia.com/gpu: 1}}
      tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
---
apiVersion: v1
kind: Service
metadata: {name: trainer}
spec: {ports: [{port: 80, targetPort: 8080}], selector: {app: trainer}}
"""

#: Every module a run imported, and whether it opened a release's whole definitions file
#: (seen by an audit hook on `open`: what the process really did).
_OPENED = """\
import json, sys
opened = []
sys.addaudithook(lambda event, args: event == "open" and opened.append(str(args[0])))
from gpulint.cli import main
sys.argv = ["gpulint", *sys.argv[1:]]
try:
    main()
except SystemExit:
    pass
whole = any(path.endswith("_definitions.json") for path in opened)
sys.__stderr__.write("\\n" + json.dumps([whole, sorted(sys.modules)]))
"""


def _schema_run(path: Path, cache: Path) -> tuple[str, bool, set[str]]:
    """(report, whether the whole definitions were read, modules) of `gpulint check path`."""
    done = subprocess.run(
        [sys.executable, "-c", _OPENED, "check", str(path), "--cache-dir", str(cache)],
        cwd=path.parent,
        capture_output=True,
        text=True,
    )
    whole, modules = json.loads(done.stderr.rpartition("\n")[2])
    return done.stdout, whole, set(modules)


def test_a_valid_file_is_checked_without_the_validator_or_the_whole_schemas(
    tmp_path: Path,
) -> None:
    from gpulint.validation.kube import available

    if not available():
        pytest.skip("needs the gpulint[schema] extra")
    manifest = tmp_path / "trainer.yaml"
    manifest.write_text(VALID, encoding="utf-8")
    cache = tmp_path / "cache"

    # The first run makes the index of kinds and each kind's definitions from the whole file.
    first, whole, _ = _schema_run(manifest, cache)
    assert whole
    assert "GPU004" in first and "GPU012" not in first

    # Later runs read what the first kept, and need no validator: every object is valid.
    again, whole, modules = _schema_run(manifest, cache)
    assert again == first
    assert not whole
    assert not _under(modules, "jsonschema_rs")
    assert "email.utils" not in modules

    # An object with a problem of its own is the validator's, as ever (and only then).
    manifest.write_text(VALID.replace("IfNotPresent", "always"), encoding="utf-8")
    invalid, whole, modules = _schema_run(manifest, cache)
    assert not whole
    assert "jsonschema_rs" in modules
    assert "GPU012" in invalid and "imagePullPolicy: always` is not a value" in invalid
