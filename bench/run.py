"""Time gpulint as whole processes against its floors and targets; write bench/results.md.

Every row is a fresh process, run `--repeat` times; the table shows the median wall time and
the median peak RSS (`ru_maxrss` of the child, from wait4). Rows:
  (a) the parse floor: ruamel.yaml `YAML(typ="safe", pure=False).compose_all` over every file
      of the corpus (PyYAML's C `compose_all` is shown beside it when PyYAML is installed)
  (b) `gpulint check CORPUS`
  (c) `gpulint check` on one 10-document Helm file, against `python -c "import ruamel.yaml, click"`
  (d) peak RSS: a column of every row
  (e) (b) on 4x and 16x the corpus (hard links to the same files, in more directories)
  (f) `checkov --framework kubernetes -d CORPUS` once, when checkov is found (`--checkov PATH`,
      or on PATH)
  (g) `gpulint check CORPUS --profile` with a 5,000-node kubectl dump (as YAML and as JSON)
      against a 5-node one, each read from the profile cache (judged) and with --no-cache
  (k) `gpulint check CORPUS` against 1 and 10 named clusters (kubectl dumps made like the (g)
      rows' small profile, one node more each), with --no-cache, judged in CPU time
  (m) (b) and (e) at the largest scale with the small profile: the peak RSS of the corpus-wide
      rules' memory (GPU201 and the others that keep workloads run only with a profile)
  (i) `gpulint diagnose` on a synthetic cluster's JSON dump (make_cluster.py: 5,000 nodes,
      50,000 pods, 500,000 events) against `json.load` of the same file, and on a quarter and
      a half of it (time linear in the dump's size); judged in a section of their own
  (l) `gpulint check --live` on a cluster served by the test API server (serve_cluster.py:
      the nodes and pods of make_cluster.py's cluster, 5,000 nodes and 50,000 pods), against
      the same list calls made with plain Python (list_floor.py); run in turn
Each target of the performance budget is then judged PASS or FAIL.

The run also fails when `gpulint check` on one file, without a config or profile, imports
jsonschema or kubernetes.

Usage: python bench/run.py [--repeat N] [--files N --docs-per-file M] [--checkov PATH]
                           [--scales 1,4,16] [--profile-nodes 5,5000] [--no-checkov]
                           [--work DIR] [--results FILE] [--note TEXT]
       python bench/run.py --startup [--repeat N] [--update-results]  # the (c) rows only
       python bench/run.py --context [--repeat N] [--update-results]  # the (h) rows only
       python bench/run.py --diagnose [--repeat N] [--cluster 5000,50000,500000]
                           [--update-results]  # the (i) rows only
"""

from __future__ import annotations

import argparse
import datetime
import importlib.metadata
import importlib.util
import json
import multiprocessing
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

import make_cluster  # noqa: E402
import make_corpus  # noqa: E402  (a sibling script, not an installed module)

SUFFIXES = (".yaml", ".yml", ".json")
WORK = BENCH / "corpus"
RESULTS = BENCH / "results.md"
#: Modules that `gpulint check` must not import for a run without a config or a profile.
FORBIDDEN_AT_START = ("jsonschema", "kubernetes")
PROFILE_NODES = (5, 5000)
#: The rules that validate objects against the Kubernetes schemas, left out of the (j) row.
SCHEMA_CODES = "GPU010,GPU011,GPU012"
#: kubeconform's published throughput (resources per second, 4 cores), for comparison.
KUBECONFORM_PER_SECOND = 7_500
#: The (g) rows: the small profile, the large one as `-o yaml` and as `-o json`.
PROFILE_ROWS = (
    ("profile-small", ".yaml"),
    ("profile-large", ".yaml"),
    ("profile-large-json", ".json"),
)
PROFILE_POOLS = 50
HELM_DOCUMENTS = 10
#: Replica capacity is a cross-workload rule whose findings depend on how many GPUs the
#: profile has, not on how the profile is read; the profile-size comparison leaves it out so
#: both runs do the same work.
CAPACITY_RULE = "GPU201"
#: The (k) rows: the corpus against this many named clusters, the fewest and the most.
CLUSTER_COUNTS = (1, 10)


@dataclass(frozen=True)
class Run:
    """One process: wall seconds, peak RSS in MB, exit status and CPU seconds (user + system:
    what a loaded machine inflates less than wall time)."""

    seconds: float
    rss_mb: float
    status: int
    cpu: float | None = None


@dataclass(frozen=True)
class Row:
    """A measured line of the table: medians of its runs."""

    key: str  # a short name targets refer to
    label: str
    runs: tuple[Run, ...] = ()
    note: str = ""

    @property
    def seconds(self) -> float | None:
        """Median wall time, None when the row was skipped."""
        return statistics.median(r.seconds for r in self.runs) if self.runs else None

    @property
    def rss_mb(self) -> float | None:
        """Median peak RSS in MB, None when the row was skipped."""
        return statistics.median(r.rss_mb for r in self.runs) if self.runs else None


@dataclass(frozen=True)
class Target:
    """One budget line of the performance targets, judged on measured rows."""

    name: str
    limit: str
    measured: str
    passed: bool | None  # None: not measured

    @property
    def verdict(self) -> str:
        """PASS, FAIL or `not measured`."""
        return {True: "PASS", False: "FAIL", None: "not measured"}[self.passed]


# --- running processes ---------------------------------------------------------------------------


def run_once(command: Sequence[str], cwd: Path) -> Run:
    """Run `command` to its end with output discarded; its wall time and its own peak RSS."""
    start = time.perf_counter()
    process = subprocess.Popen(
        command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    assert process.stderr is not None
    errors = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)  # keep Popen from waiting again
    if process.returncode not in (0, 1):
        raise RuntimeError(f"{' '.join(command)} exited {process.returncode}: {errors[-2000:]}")
    cpu = usage.ru_utime + usage.ru_stime
    return Run(seconds, usage.ru_maxrss / 1024, process.returncode, cpu)  # ru_maxrss is in KiB


def measure(key: str, label: str, command: Sequence[str], cwd: Path, repeat: int) -> Row:
    """`repeat` runs of `command` as one row."""
    return Row(key, label, tuple(run_once(command, cwd) for _ in range(repeat)))


def measure_in_turn(
    commands: Sequence[tuple[str, str, Sequence[str]]], cwd: Path, repeat: int
) -> list[Row]:
    """A row per (key, label, command), run one after the other, round after round, so that a
    change of the machine's load falls on every row alike."""
    runs: list[list[Run]] = [[] for _ in commands]
    for _ in range(repeat):
        for found, (_, _, command) in zip(runs, commands, strict=True):
            found.append(run_once(command, cwd))
    labelled = zip(runs, commands, strict=True)
    return [Row(key, label, tuple(found)) for found, (key, label, _) in labelled]


def gpulint_command() -> list[str]:
    """How to start the gpulint of this interpreter's environment."""
    script = Path(sys.executable).with_name("gpulint")
    return [str(script)] if script.exists() else [sys.executable, "-m", "gpulint"]


def checkov_version(checkov: str) -> str:
    """`checkov 3.2.1`, as the executable reports itself."""
    done = subprocess.run([checkov, "--version"], capture_output=True, text=True, check=False)
    return f"checkov {done.stdout.strip() or 'of unknown version'}"


def find_checkov(given: str | None) -> str | None:
    """The checkov executable: `--checkov`, else the one on PATH, else None."""
    if given:
        return given if Path(given).exists() else shutil.which(given)
    return shutil.which("checkov")


# --- what a child interpreter runs for the floors ------------------------------------------------


def corpus_files(corpus: Path) -> list[Path]:
    """Every manifest under `corpus`, in a stable order, skipping hidden files and directories."""
    found = []
    for directory, subdirs, files in os.walk(corpus):
        subdirs[:] = sorted(d for d in subdirs if not d.startswith("."))
        found.extend(
            Path(directory) / name
            for name in sorted(files)
            if name.endswith(SUFFIXES) and not name.startswith(".")
        )
    return found


def _composer(kind: str) -> Callable[[str], object]:
    if kind == "ruamel":
        from ruamel.yaml import YAML

        return YAML(typ="safe", pure=False).compose_all
    if kind == "pyyaml":
        import yaml

        return lambda text: yaml.compose_all(text, Loader=yaml.CSafeLoader)
    raise ValueError(f"unknown floor {kind!r}")


def compose_corpus(kind: str, corpus: Path) -> None:
    """The parse floor: compose every document of every file, keeping nothing."""
    compose = _composer(kind)
    for path in corpus_files(corpus):
        for _ in compose(path.read_text(encoding="utf-8")):  # type: ignore[attr-defined]
            pass


def floor_command(kind: str, corpus: Path) -> list[str]:
    """A whole process that composes the corpus with `kind` (ruamel or pyyaml)."""
    return [sys.executable, __file__, "--compose", kind, str(corpus)]


def has_pyyaml() -> bool:
    """Whether PyYAML with its C loader can be imported here."""
    try:
        import yaml
    except ImportError:
        return False
    return hasattr(yaml, "CSafeLoader")


# --- the corpus on disk --------------------------------------------------------------------------


def in_child(make: Callable[..., object], *args: object) -> None:
    """`make(*args)` in a child process, which keeps what it builds out of this one.

    A process started from this one reports this one's peak RSS as the floor of its own
    (Linux carries the peak of the address space it replaces into `ru_maxrss`): building a
    5,000-node dump here would add 150 MB to every row measured after it.
    """
    child = multiprocessing.get_context("fork").Process(target=make, args=args)
    child.start()
    child.join()
    if child.exitcode != 0:
        raise RuntimeError(f"{make.__name__}{args} exited {child.exitcode}")


def ensure_corpus(work: Path, files: int, docs_per_file: int) -> Path:
    """bench/corpus/x1, generated again when missing or written with other settings."""
    corpus = work / "x1"
    manifest = make_corpus.read_manifest(corpus)
    wanted = {
        "generator": make_corpus.GENERATOR_VERSION,
        "seed": make_corpus.DEFAULT_SEED,
        "files": files,
        "docs_per_file": docs_per_file,
        "mistake_rate": make_corpus.DEFAULT_MISTAKE_RATE,
    }
    if manifest is None or any(manifest.get(k) != v for k, v in wanted.items()):
        print(f"generating {files * docs_per_file} documents in {corpus} ...", flush=True)
        if work.exists():
            shutil.rmtree(work)
        in_child(make_corpus.generate, corpus, files, docs_per_file)
    return corpus


def scaled_corpus(corpus: Path, scale: int) -> Path:
    """`scale` copies of the corpus as hard links (no extra disk), in xN/copyK directories."""
    if scale == 1:
        return corpus
    target = corpus.parent / f"x{scale}"
    done = target / ".complete"
    if done.exists():
        return target
    if target.exists():
        shutil.rmtree(target)
    files = corpus_files(corpus)
    for copy in range(scale):
        for path in files:
            link = target / f"copy{copy}" / path.relative_to(corpus)
            link.parent.mkdir(parents=True, exist_ok=True)
            os.link(path, link)
    done.write_text("", encoding="utf-8")
    return target


def ensure_profile(work: Path, nodes: int, suffix: str = ".yaml") -> Path:
    """bench/corpus/profile-N.yaml (or .json), a kubectl dump of N nodes in up to 50 groups."""
    path = work / f"profile-{nodes}{suffix}"
    if not path.exists():
        in_child(make_corpus.make_profile, path, nodes, min(PROFILE_POOLS, nodes))
    return path


def helm_file(work: Path) -> Path:
    """One Helm-rendered file of 10 documents: the pre-commit case."""
    path = work / "helm-10.yaml"
    if not path.exists():
        with tempfile.TemporaryDirectory() as tmp:
            in_child(make_corpus.generate, Path(tmp), 3, HELM_DOCUMENTS)
            rendered = next(p for p in corpus_files(Path(tmp)) if "rendered" in p.parts)
            shutil.copyfile(rendered, path)
    return path


# --- imports of the pre-commit case ---------------------------------------------------------------

_IMPORT_LINE = re.compile(r"import time:\s*(\d+) \|\s*(\d+) \|( *)(\S+)")


def forbidden_imports(small: Path, cwd: Path) -> tuple[int, list[str]]:
    """(modules `gpulint check small` imports, those of FORBIDDEN_AT_START among them)."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "gpulint", "check", str(small)],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )
    imported = {m.group(4) for m in map(_IMPORT_LINE.match, done.stderr.splitlines()) if m}
    tops = {name.split(".")[0] for name in imported}
    return len(imported), [name for name in FORBIDDEN_AT_START if name in tops]


# --- the measurements -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Plan:
    """What to measure and where."""

    # (the diagnose rows' cluster is the last field: nodes, pods, events)

    corpus: Path
    work: Path
    repeat: int
    scales: tuple[int, ...]
    checkov: str | None
    profile_nodes: tuple[int, int] = PROFILE_NODES  # the small and the large profile
    recorded_checkov: Row | None = None  # the Checkov row of an earlier report, reused
    cluster: tuple[int, int, int] = make_cluster.NODES, make_cluster.PODS, make_cluster.EVENTS


def compile_package() -> None:
    """Byte-compile gpulint as `pip install` does for a wheel.

    An editable install has no .pyc files until Python writes them, and with
    PYTHONDONTWRITEBYTECODE set it never does: every start would compile gpulint's sources
    again, which is not what an installed gpulint costs.
    """
    spec = importlib.util.find_spec("gpulint")
    if spec is not None and spec.origin is not None:
        package = str(Path(spec.origin).parent)
        subprocess.run([sys.executable, "-m", "compileall", "-q", package], check=True)


#: The config of the pre-commit row: every kind of setting a real repository's config has.
PRE_COMMIT_CONFIG = """\
select: [GPU]
ignore: [GPU402]
severity: {GPU601: info}
per-file-ignores:
  "examples/*.yaml": [GPU003]
context: [k8s]
"""


def pre_commit_repository(work: Path) -> tuple[Path, list[str]]:
    """A repository with a `.gpulint.yaml`, the Helm file in k8s/ and a 5-node kubectl dump,
    and the arguments of a hook's run there, reading the profile from a warm cache."""
    repository = work / "pre-commit"
    (repository / "k8s").mkdir(parents=True, exist_ok=True)
    (repository / ".gpulint.yaml").write_text(PRE_COMMIT_CONFIG, encoding="utf-8")
    shutil.copyfile(helm_file(work), repository / "k8s" / "helm-10.yaml")
    shutil.copyfile(ensure_profile(work, PROFILE_NODES[0]), repository / "profile.yaml")
    cache = repository / "cache"
    args = ["k8s/helm-10.yaml", "--profile", "profile.yaml", "--cache-dir", str(cache)]
    # The first run fills the cache (the profile's facts, the config's validation).
    run_once([*gpulint_command(), "check", *args], repository)
    return repository, args


def measure_startup(work: Path, repeat: int) -> list[Row]:
    """The (c) rows: the import floor, `gpulint check` on one Helm file, and the same in a
    repository with a config and a cached profile, 3 x `repeat` runs each.

    The three commands run in turn, round after round, rather than each `repeat` times in a
    row: on a shared machine the load then weighs on all three alike, and their ratios hold.
    """
    compile_package()
    helm = helm_file(work)
    floor = [sys.executable, "-c", "import ruamel.yaml, click"]
    check = [*gpulint_command(), "check", str(helm)]
    repository, args = pre_commit_repository(work)
    commands = [
        ("import-floor", '(c) python -c "import ruamel.yaml, click"', floor, work),
        ("check-helm", f"(c) gpulint check one {HELM_DOCUMENTS}-document Helm file", check, work),
        (
            "check-config-profile",
            f"(c) ... the same file with a config and a cached {PROFILE_NODES[0]}-node profile",
            [*gpulint_command(), "check", *args],
            repository,
        ),
    ]
    runs: list[list[Run]] = [[] for _ in commands]
    for _ in range(repeat * 3):
        for found, (_, _, command, cwd) in zip(runs, commands, strict=True):
            found.append(run_once(command, cwd))
    labelled = zip(runs, commands, strict=True)
    return [Row(key, label, tuple(found)) for found, (key, label, _, _) in labelled]


def measure_all(plan: Plan, progress: Callable[[str], None] = print) -> list[Row]:
    """Every row of the table, in order."""
    gpulint = gpulint_command()
    corpus, work, repeat = plan.corpus, plan.work, plan.repeat
    rows: list[Row] = []

    def add(row: Row) -> None:
        rows.append(row)
        progress(format_row(row))

    add(
        measure(
            "floor",
            "(a) ruamel.yaml compose_all, C parser",
            floor_command("ruamel", corpus),
            work,
            repeat,
        )
    )
    if has_pyyaml():
        add(
            measure(
                "pyyaml",
                "(a) PyYAML compose_all, CSafeLoader (reference)",
                floor_command("pyyaml", corpus),
                work,
                repeat,
            )
        )
    # The targets are for one process; `--jobs` is measured in a row of its own.
    # Judged with --no-cache: the check itself, not the per-file results cache (`cached` rows
    # and the profile rows read it).
    cached = [*gpulint, "check", "--jobs", "1", "--format", "json", "-o", os.devnull]
    check = [*cached, "--no-cache"]
    for scale in plan.scales:
        tree = scaled_corpus(corpus, scale)
        label = "(b) gpulint check CORPUS" if scale == 1 else f"(e) gpulint check {scale}x CORPUS"
        add(measure(f"check-{scale}x", label, [*check, str(tree)], work, repeat))
    for row in measure_profile_memory_rows(plan, check):
        add(row)
    run_once([*cached, str(corpus)], work)  # fills the results cache
    label = "(b) ... again, every file's result read from the per-file results cache"
    add(measure("check-cached", label, [*cached, str(corpus)], work, repeat))

    # gpulint's own run without what GPU010-GPU012 cost (the (b) row validates every object
    # when the `gpulint[schema]` extra is installed).
    label = "(j) gpulint check CORPUS without schema validation (--ignore GPU010,GPU011,GPU012)"
    unvalidated = [*check, "--ignore", SCHEMA_CODES, str(corpus)]
    add(measure("check-no-schema", label, unvalidated, work, repeat))

    cpus = len(os.sched_getaffinity(0))
    parallel = [*gpulint, "check", "--no-cache", "--format", "json", "-o", os.devnull, str(corpus)]
    label = f"(b) gpulint check CORPUS, --jobs {cpus} (the default: available CPUs)"
    add(measure("check-jobs", label, parallel, work, repeat))

    for row in measure_startup(work, repeat):
        add(row)

    for row in measure_profile_rows(plan, cached):
        add(row)

    for row in measure_context_rows(plan):
        add(row)

    for row in measure_cluster_rows(plan, check):
        add(row)

    for row in measure_diagnose(plan.work, plan.repeat, plan.cluster):
        add(row)

    for row in measure_live(plan.work, plan.repeat, plan.cluster[:2]):
        add(row)

    if plan.recorded_checkov is not None:
        rows.append(plan.recorded_checkov)
    elif plan.checkov is None:
        rows.append(Row("checkov", "(f) checkov --framework kubernetes", note="not installed"))
    else:
        command = [
            plan.checkov,
            "--framework",
            "kubernetes",
            "-d",
            str(corpus),
            "--quiet",
            "--compact",
        ]
        add(measure("checkov", "(f) checkov --framework kubernetes -d CORPUS", command, work, 1))
    return rows


def measure_profile_memory_rows(plan: Plan, check: Sequence[str]) -> list[Row]:
    """The (m) rows: the 1x corpus and the largest scale with the small profile and every
    rule, --no-cache (as the (e) rows), for the peak RSS of what corpus-wide rules keep."""
    profile = ensure_profile(plan.work, plan.profile_nodes[0])
    rows = []
    for scale in dict.fromkeys((1, max(plan.scales))):
        tree = scaled_corpus(plan.corpus, scale)
        name = "CORPUS" if scale == 1 else f"{scale}x CORPUS"
        label = f"(m) gpulint check {name} --profile {plan.profile_nodes[0]:,}-node dump"
        command = [*check, "--profile", str(profile), str(tree)]
        rows.append(measure(f"profile-memory-{scale}x", label, command, plan.work, plan.repeat))
    return rows


def measure_profile_rows(plan: Plan, check: Sequence[str]) -> list[Row]:
    """The (g) rows: each profile with --no-cache (what a first run parses) and with the cache
    a first, untimed run wrote (what every later run reads; the targets judge these).

    The cached rows, whose ratios the targets judge, run in turn, round after round, as the
    (c) rows do: measured one row after the other, a load that comes and goes on a shared
    machine lands on one row and not the other, and their ratio measures the load.
    """
    work, repeat = plan.work, plan.repeat
    few, many = plan.profile_nodes
    cache = work / "profile-cache"
    shutil.rmtree(cache, ignore_errors=True)
    cached = ["--cache-dir", str(cache)]
    without_capacity = [*check, "--ignore", CAPACITY_RULE, str(plan.corpus)]
    rows: list[Row] = []
    warm: list[tuple[int, str, str, list[str]]] = []  # (where in rows, key, label, command)
    for key, suffix in PROFILE_ROWS:
        nodes = few if key == "profile-small" else many
        profile = ensure_profile(work, nodes, suffix)
        label = f"(g) ... --profile {nodes:,}-node {suffix[1:].upper()} dump"
        command = [*without_capacity, "--profile", str(profile)]
        cold = f"{label}, --no-cache, no {CAPACITY_RULE}"
        rows.append(measure(f"{key}-cold", cold, [*command, "--no-cache"], work, repeat))
        run_once([*command, *cached], work)
        warm.append((len(rows), key, f"{label}, cached, no {CAPACITY_RULE}", [*command, *cached]))
        rows.append(Row(key, ""))  # filled in below
    runs: list[list[Run]] = [[] for _ in warm]
    for _ in range(repeat):
        for found, (_, _, _, command) in zip(runs, warm, strict=True):
            found.append(run_once(command, work))
    for found, (at, key, label, _) in zip(runs, warm, strict=True):
        rows[at] = Row(key, label, tuple(found))
    small = ensure_profile(work, few)
    command = [*check, str(plan.corpus), "--profile", str(small), *cached]
    label = f"(g) ... --profile {few:,}-node dump, cached, every rule"
    rows.append(measure("profile-all-rules", label, command, work, 1))
    return rows


def measure_context_rows(plan: Plan) -> list[Row]:
    """The (h) rows: what `context:` costs a pre-commit run given one file of the corpus, with
    the small profile read from the cache (so the corpus-wide rules have work): the file alone,
    then with the whole corpus as its context, both with their caches warm (the profile's, and
    the per-file results of the context files); run in turn, round after round, as the (c)
    rows. The file is the corpus's first, a GPU workload on the pool the corpus overflows (the
    most a commit can cost: its findings sum every workload of the pool); the same pair again for
    its first file without a GPU workload (what most commits cost). Then once with
    `--no-cache`: what a first run, or CI without a kept cache, pays.

    The configs sit in the directory that holds the corpus: `context:` names files inside the
    project (the config's directory), never outside it.
    """
    work, repeat = plan.work, plan.repeat
    few = plan.profile_nodes[0]
    repository = plan.corpus.parent
    (repository / "alone.gpulint.yaml").write_text("select: [GPU]\n", encoding="utf-8")
    (repository / "context.gpulint.yaml").write_text(
        f"select: [GPU]\ncontext: [{json.dumps(plan.corpus.name)}]\n", encoding="utf-8"
    )
    files = corpus_files(plan.corpus)
    plain = next((p for p in files if b"gpu" not in p.read_bytes()), None)
    cache = work / "profile-cache"

    def base(one: Path) -> list[str]:
        command = [*gpulint_command(), "check", str(one), "--profile"]
        return [*command, str(ensure_profile(work, few)), "--cache-dir", str(cache)]

    alone, context = ["--config", "alone.gpulint.yaml"], ["--config", "context.gpulint.yaml"]
    commands = [
        (
            "context-alone",
            f"(h) gpulint check one file of CORPUS, cached {few:,}-node profile",
            [*base(files[0]), *alone],
        ),
        (
            "context-corpus",
            "(h) ... the same file with `context:` CORPUS, cache warm",
            [*base(files[0]), *context],
        ),
    ]
    if plain is not None:  # (a corpus of a few files may have none)
        commands += [
            (
                "context-plain-alone",
                "(h) ... a file without a GPU workload, alone",
                [*base(plain), *alone],
            ),
            (
                "context-plain",
                "(h) ... that file with `context:` CORPUS, cache warm",
                [*base(plain), *context],
            ),
        ]
    for _, _, command in commands:
        run_once(command, repository)  # fills the caches
    rows = measure_in_turn(commands, repository, repeat)
    cold = [*commands[1][2], "--no-cache"]
    label = "(h) ... the first file with `context:` CORPUS, --no-cache"
    rows.append(measure("context-corpus-cold", label, cold, repository, 1))
    return rows


def context_only(work: Path, repeat: int, results: Path | None = None) -> int:
    """`--context`: the (h) rows and their targets on the default corpus and small profile,
    printed (and put in place of those of the report `results`); 1 when a target fails."""
    work.mkdir(parents=True, exist_ok=True)
    compile_package()
    corpus = ensure_corpus(work, make_corpus.DEFAULT_FILES, make_corpus.DEFAULT_DOCS_PER_FILE)
    print(f"{'measurement':<58} {'median s':>9} {'RSS MB':>8}  range s")
    load_before = load_average()
    rows = measure_context_rows(Plan(corpus, work, repeat, (1,), None))
    for row in rows:
        print(format_row(row))
    targets = [t for t in judge(rows, (1,), 0) if "`context:`" in t.name]
    for target in targets:
        print(f"{target.verdict:<13} {target.name}: {target.measured} (limit {target.limit})")
    if results is not None:
        update_results(results, rows, targets, "(h)", "--context", load_before)
    return 1 if any(t.passed is False for t in targets) else 0


def measure_cluster_rows(plan: Plan, check: Sequence[str]) -> list[Row]:
    """The (k) rows: the corpus against 1 and against 10 named clusters (`--profile cN=...`),
    every rule, with --no-cache. Cluster N is a kubectl dump made like the (g) rows' small
    profile with N more nodes (so each has pools of its own and the clusters' findings differ).
    Run in turn, round after round, as the (c) rows, and judged in CPU time.
    """
    work, repeat = plan.work, plan.repeat
    few = plan.profile_nodes[0]
    commands = []
    for count in CLUSTER_COUNTS:
        named = [f"c{n}={ensure_profile(work, few + n)}" for n in range(count)]
        profiles = [arg for cluster in named for arg in ("--profile", cluster)]
        clusters = "1 cluster" if count == 1 else f"{count} clusters"
        label = f"(k) gpulint check CORPUS against {clusters} ({few:,}+ nodes each), --no-cache"
        commands.append((f"clusters-{count}", label, [*check, *profiles, str(plan.corpus)]))
    return measure_in_turn(commands, work, repeat)


# --- diagnose on a large cluster's dump ------------------------------------------------------

#: The (i) rows: a share of the cluster's counts each.
CLUSTER_SHARES = (("quarter", 0.25), ("half", 0.5), ("whole", 1.0))
DIAGNOSE_SECTION = "## Diagnose on a large cluster"


def ensure_cluster(work: Path, cluster: tuple[int, int, int], share: float) -> Path:
    """A JSON dump of `share` of the cluster, generated (in a child process) when missing."""
    counts = [max(1, round(n * share)) for n in cluster]
    path = work / f"cluster-{'-'.join(str(n) for n in counts)}.json"
    if not path.exists():
        in_child(make_cluster.write_dump, path, *counts)
    return path


def json_load(path: Path) -> None:
    """The floor of a JSON dump: the C JSON parser's objects, kept until the end."""
    with path.open(encoding="utf-8") as handle:
        json.load(handle)


def measure_diagnose(work: Path, repeat: int, cluster: tuple[int, int, int]) -> list[Row]:
    """The (i) rows: `json.load` of the whole dump, then diagnose on a quarter, a half and the
    whole of it; run in turn, round after round, as the (c) rows."""
    work.mkdir(parents=True, exist_ok=True)
    dumps = {name: ensure_cluster(work, cluster, share) for name, share in CLUSTER_SHARES}
    whole = dumps["whole"]
    size = whole.stat().st_size / 1e6
    nodes, pods, events = cluster
    what = f"{nodes:,} nodes, {pods:,} pods, {events:,} events"
    diagnose = [*gpulint_command(), "diagnose", "--format", "json", "-o", os.devnull]
    commands = [
        (
            "diagnose-floor",
            f"(i) json.load of a {size:,.0f} MB dump ({what})",
            [sys.executable, __file__, "--json-load", str(whole)],
        ),
        *(
            (
                f"diagnose-{name}",
                f"(i) gpulint diagnose, the {name} of that dump",
                [*diagnose, str(path)],
            )
            for name, path in dumps.items()
        ),
    ]
    return measure_in_turn(commands, work, repeat)


def measure_live(work: Path, repeat: int, cluster: tuple[int, int]) -> list[Row]:
    """The (l) rows: the plain list calls, then `gpulint check --live` on one GPU Deployment,
    both against the nodes and pods of a generated cluster served by serve_cluster.py; run in
    turn, round after round, as the (c) rows."""
    work.mkdir(parents=True, exist_ok=True)
    nodes, pods = cluster
    dump = ensure_cluster(work, (nodes, pods, 1), 1.0)
    manifest = work / "live-deployment.yaml"
    manifest.write_text(LIVE_MANIFEST, encoding="utf-8")
    kubeconfig = work / "live-kubeconfig"
    server = subprocess.Popen(
        [sys.executable, str(BENCH / "serve_cluster.py"), str(dump), str(kubeconfig)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        if server.stdout.readline().strip() != "ready":
            raise RuntimeError("serve_cluster.py did not start")
        what = f"{nodes:,} nodes, {pods:,} pods"
        check_live = [*gpulint_command(), "check", "--live", "--format", "json", "-o", os.devnull]
        commands = [
            (
                "live-floor",
                f"(l) the same list calls in plain Python, a served cluster of {what}",
                [sys.executable, str(BENCH / "list_floor.py"), str(kubeconfig)],
            ),
            (
                "live-check",
                "(l) gpulint check --live on that cluster, one Deployment",
                [*check_live, "--kubeconfig", str(kubeconfig), str(manifest)],
            ),
        ]
        rows = measure_in_turn(commands, work, repeat)
    finally:
        assert server.stdin is not None
        server.stdin.close()
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
    return rows


LIVE_MANIFEST = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: trainer, namespace: ml}
spec:
  replicas: 2
  selector: {matchLabels: {app: trainer}}
  template:
    metadata: {labels: {app: trainer}}
    spec:
      containers:
      - name: trainer
        image: nvcr.io/nvidia/pytorch:24.05-py3
        resources:
          limits: {nvidia.com/gpu: 1}
"""


def judge_diagnose(rows: Sequence[Row]) -> list[Target]:
    """The diagnose targets: within 3x the time and 1.5x the memory of `json.load`, and time
    per object of the whole dump and of its half no more than 1.25x that of its quarter
    (linear). Times are CPU times (user + system): on a shared machine the wall time of a
    process that reads 758 MB measures the other load as much as the process."""
    row = by_key(rows)
    whole, half, quarter = (row.get(f"diagnose-{k}") for k in ("whole", "half", "quarter"))
    floor = row.get("diagnose-floor")
    per_whole, per_half = _cpu_ratio(whole, quarter), _cpu_ratio(half, quarter)
    budget: list[tuple[str, float | None, str, float, str]] = [
        ("diagnose the whole dump / json.load, CPU time", _cpu_ratio(whole, floor), "<=", 3, "x"),
        (
            "diagnose the whole dump / json.load, peak RSS",
            _ratio(whole, floor, "rss_mb"),
            "<=",
            1.5,
            "x",
        ),
        (
            "diagnose CPU time per object: whole / quarter",
            per_whole / 4 if per_whole else None,
            "<=",
            1.25,
            "x",
        ),
        (
            "diagnose CPU time per object: half / quarter",
            per_half / 2 if per_half else None,
            "<=",
            1.25,
            "x",
        ),
    ]
    return [_target(*line) for line in budget]


def _cpu_ratio(top: Row | None, bottom: Row | None) -> float | None:
    if top is None or bottom is None:
        return None
    a, b = _median_cpu(top), _median_cpu(bottom)
    return a / b if a is not None and b else None


def diagnose_section(rows: Sequence[Row], targets: Sequence[Target], note: str) -> list[str]:
    """The report's section of the (i) rows and their targets."""
    cpu = "; ".join(f"{row.label[4:]} {_median_cpu(row) or 0:.2f} s" for row in rows)
    return [
        DIAGNOSE_SECTION,
        "",
        note,
        "",
        f"Median CPU time (user + system), which the targets judge: {cpu}.",
        "",
        "| target | limit | measured | verdict |",
        "|---|---|---:|---|",
        *[f"| {t.name} | {t.limit} | {t.measured} | {t.verdict} |" for t in targets],
        "",
        *table(rows),
        "",
    ]


def with_diagnose_section(report_text: str, section: Sequence[str]) -> str:
    """`report_text` with its diagnose section replaced by `section` (or `section` added)."""
    lines = report_text.rstrip("\n").split("\n")
    if DIAGNOSE_SECTION in lines:
        start = lines.index(DIAGNOSE_SECTION)
        end = next(
            (i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines)
        )
        lines[start:end] = list(section)
    else:
        lines += ["", *section]
    return "\n".join(lines).rstrip("\n") + "\n"


def diagnose_only(
    work: Path, repeat: int, cluster: tuple[int, int, int], results: Path | None = None
) -> int:
    """`--diagnose`: the (i) rows and their targets, printed (and put in place of the diagnose
    section of the report `results`); 1 when a target fails."""
    print(f"{'measurement':<58} {'median s':>9} {'RSS MB':>8}  range s")
    load_before = load_average()
    rows = measure_diagnose(work, repeat, cluster)
    for row in rows:
        print(format_row(row))
    targets = judge_diagnose(rows)
    for target in targets:
        print(f"{target.verdict:<13} {target.name}: {target.measured} (limit {target.limit})")
    if results is not None:
        note = (
            f"Measured on {datetime.date.today().isoformat()} (`run.py --diagnose "
            f"--update-results`, {repeat} runs per row, medians): 1-minute load average "
            f"{load_before} before and {load_average()} after, on {os.cpu_count()} CPUs."
        )
        text = results.read_text(encoding="utf-8")
        section = diagnose_section(rows, targets, note)
        results.write_text(with_diagnose_section(text, section), encoding="utf-8")
        print(f"updated {results}")
    return 1 if any(t.passed is False for t in targets) else 0


def format_row(row: Row) -> str:
    """One line of the printed table."""
    if row.seconds is None or row.rss_mb is None:
        return f"{row.label:<58} {'-':>9} {'-':>8}  {row.note}".rstrip()
    spread = ""
    if len(row.runs) > 1:
        spread = f"{min(r.seconds for r in row.runs):.2f}-{max(r.seconds for r in row.runs):.2f}"
    return f"{row.label:<58} {row.seconds:9.3f} {row.rss_mb:8.0f}  {spread}".rstrip()


def by_key(rows: Sequence[Row]) -> dict[str, Row]:
    """Rows by their key."""
    return {row.key: row for row in rows}


def _ratio(top: Row | None, bottom: Row | None, what: str = "seconds") -> float | None:
    if top is None or bottom is None:
        return None
    a, b = getattr(top, what), getattr(bottom, what)
    return a / b if a is not None and b else None


def judge(
    rows: Sequence[Row],
    scales: Sequence[int],
    documents: int,
    profile_nodes: tuple[int, int] = PROFILE_NODES,
) -> list[Target]:
    """Each target of the performance budget against the measured rows."""
    row = by_key(rows)
    largest = max(scales)
    one, big, small = row.get("check-1x"), row.get(f"check-{largest}x"), row.get("profile-small")
    few, many = profile_nodes
    corpus = _ratio(one, row.get("floor"))
    helm = _ratio(row.get("check-helm"), row.get("import-floor"))
    pre_commit = _ratio(row.get("check-config-profile"), row.get("import-floor"))
    as_yaml, as_json = (_ratio(row.get(k), small) for k in ("profile-large", "profile-large-json"))
    schema = _ratio(one, row.get("check-no-schema"))
    context = _cpu_ratio(row.get("context-corpus"), row.get("context-alone"))
    most = CLUSTER_COUNTS[-1]
    clusters = _cpu_ratio(row.get(f"clusters-{most}"), row.get(f"clusters-{CLUSTER_COUNTS[0]}"))
    kept = _ratio(row.get(f"profile-memory-{largest}x"), row.get("profile-memory-1x"), "rss_mb")
    budget: list[tuple[str, float | None, str, float, str]] = [
        # (target, measured, comparison, limit, unit)
        (f"{documents:,} documents: gpulint / compose floor", corpus, "<=", 1.5, "x"),
        # The same run, one process, against PyYAML's C composer (when PyYAML is installed).
        (
            "the same, one core / PyYAML C compose_all",
            _ratio(one, row.get("pyyaml")),
            "<=",
            1.3,
            "x",
        ),
        ("Checkov / gpulint, same corpus", _ratio(row.get("checkov"), one), ">=", 30, "x"),
        (f"one {HELM_DOCUMENTS}-document Helm file / import floor", helm, "<=", 1.5, "x"),
        ("the same with a config and a cached profile / import floor", pre_commit, "<=", 1.5, "x"),
        (f"{largest}x corpus time / 1x", _ratio(big, one), "<=", largest + 1, "x"),
        (f"{largest}x corpus peak RSS", big.rss_mb if big else None, "<=", 250, " MB"),
        (f"{largest}x corpus peak RSS / 1x", _ratio(big, one, "rss_mb"), "<=", 1.2, "x"),
        (f"{largest}x corpus with a profile peak RSS / 1x", kept, "<=", 1.5, "x"),
        (f"{many:,}-node YAML dump / {few:,}-node profile", as_yaml, "<=", 1.2, "x"),
        (f"{many:,}-node JSON dump / {few:,}-node profile", as_json, "<=", 1.2, "x"),
        ("schema validation: gpulint / gpulint without it", schema, "<=", 2, "x"),
        ("one file with `context:` / without, cache warm, CPU time", context, "<=", 2, "x"),
        (
            "a file without a GPU workload with `context:` / without, CPU time",
            _cpu_ratio(row.get("context-plain"), row.get("context-plain-alone")),
            "<=",
            2,
            "x",
        ),
        (
            "check --live / plain list calls",
            _ratio(row.get("live-check"), row.get("live-floor")),
            "<=",
            1.5,
            "x",
        ),
        (f"{most} clusters / 1 cluster, CPU time", clusters, "<=", 3, "x"),
    ]
    return [_target(*line) for line in budget]


def _target(name: str, value: float | None, comparison: str, limit: float, unit: str) -> Target:
    limit_text = f"{comparison} {limit:g}{unit}"
    if value is None:
        return Target(name, limit_text, "-", None)
    passed = value <= limit if comparison == "<=" else value >= limit
    digits = 0 if value >= 100 else 1 if value >= 10 else 2
    return Target(name, limit_text, f"{value:.{digits}f}{unit}", passed)


def recorded_checkov(results: Path) -> Row | None:
    """The Checkov row of an earlier report, to judge the ratio without a 5-minute run."""
    pattern = re.compile(
        # The label without the `, recorded in ...` of a row that was itself reused.
        r"^\| (\(f\) checkov[^|]*?)(?:, recorded in [^|]*)?"
        r" \| (\d+) \| ([\d.]+) \| [^|]* \| ([\d.]+) \|$",
        re.MULTILINE,
    )
    match = pattern.search(results.read_text(encoding="utf-8"))
    if match is None:
        return None
    label, _, seconds, rss = match.groups()
    return Row(
        "checkov", f"{label}, recorded in {results.name}", (Run(float(seconds), float(rss), 1),)
    )


def schema_note(rows: Sequence[Row], documents: int) -> str | None:
    """gpulint's throughput with schema validation in one process, beside kubeconform's
    published figure; None without the (b) row."""
    seconds = by_key(rows).get("check-1x")
    if seconds is None or not seconds.seconds:
        return None
    rate = documents / seconds.seconds
    return (
        f"with schema validation, one process checks {rate:,.0f} resources/s "
        f"(kubeconform publishes about {KUBECONFORM_PER_SECOND:,}/s on 4 cores)"
    )


def profile_cpu_note(
    rows: Sequence[Row], profile_nodes: tuple[int, int] = PROFILE_NODES
) -> str | None:
    """The (g) targets' ratios in CPU time (user + system, medians), which a load on a shared
    machine inflates less than wall time; None when a row has no CPU time."""
    row = by_key(rows)
    small = row.get("profile-small")
    bottom = _median_cpu(small) if small is not None else None
    few, many = profile_nodes
    ratios = []
    for key, kind in (("profile-large", "YAML"), ("profile-large-json", "JSON")):
        found = row.get(key)
        top = _median_cpu(found) if found is not None else None
        if top is None or not bottom:
            return None
        ratios.append(f"{kind} {top / bottom:.2f}x")
    return f"(g) in CPU time, {many:,}-node dump / {few:,}-node profile: {', '.join(ratios)}"


def rss_growth(rows: Sequence[Row], scales: Sequence[int], documents: int) -> float | None:
    """MB of peak RSS each further 1,000 documents add, from the 1x and the largest run."""
    row = by_key(rows)
    largest = max(scales)
    one, big = row.get("check-1x"), row.get(f"check-{largest}x")
    if largest == 1 or one is None or big is None or one.rss_mb is None or big.rss_mb is None:
        return None
    return (big.rss_mb - one.rss_mb) / ((largest - 1) * documents / 1000)


# --- the report -----------------------------------------------------------------------------------


def _version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def machine() -> list[str]:
    """What the numbers were measured on."""
    model = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory = ""
    if hasattr(os, "sysconf") and "SC_PHYS_PAGES" in os.sysconf_names:
        memory = f", {os.sysconf('SC_PHYS_PAGES') * os.sysconf('SC_PAGE_SIZE') / 2**30:.0f} GiB RAM"
    return [
        f"{platform.system()} {platform.release()}, {model}, {os.cpu_count()} CPUs{memory}",
        f"Python {platform.python_version()}; ruamel.yaml {_version('ruamel.yaml')}, "
        f"ruamel.yaml.clib {_version('ruamel.yaml.clib')}, PyYAML {_version('pyyaml')}, "
        f"click {_version('click')}",
    ]


def load_average() -> str:
    """The 1-minute load average, to tell a quiet machine from a shared one."""
    return f"{os.getloadavg()[0]:.1f}" if hasattr(os, "getloadavg") else "unknown"


def table(rows: Sequence[Row]) -> list[str]:
    """The rows as a Markdown table."""
    lines = [
        "| measurement | runs | median s | range s | peak RSS MB |",
        "|---|---:|---:|---:|---:|",
    ]
    for row in rows:
        if row.seconds is None:
            lines.append(f"| {row.label} | 0 | - | - | - ({row.note}) |")
            continue
        low, high = min(r.seconds for r in row.runs), max(r.seconds for r in row.runs)
        lines.append(
            f"| {row.label} | {len(row.runs)} | {row.seconds:.3f} | {low:.2f}-{high:.2f} | "
            f"{row.rss_mb:.0f} |"
        )
    return lines


def report(
    rows: Sequence[Row],
    targets: Sequence[Target],
    corpus_line: str,
    notes: Sequence[str],
) -> str:
    """bench/results.md."""
    lines = [
        "# gpulint benchmark results",
        "",
        f"Written by `python bench/run.py` on {datetime.date.today().isoformat()}. What the "
        "figures mean, and where the time and memory go: "
        "[README.md](README.md#where-the-time-and-memory-go).",
        "",
        *[f"- {line}" for line in [*machine(), corpus_line, *notes]],
        "",
        "## Targets",
        "",
        "| target | limit | measured | verdict |",
        "|---|---|---:|---|",
        *[f"| {t.name} | {t.limit} | {t.measured} | {t.verdict} |" for t in targets],
        "",
        "## Measurements",
        "",
        *table(rows),
        "",
    ]
    return "\n".join(lines)


def startup_only(work: Path, repeat: int, results: Path | None = None) -> int:
    """`--startup`: the (c) rows and their targets, printed (and put in place of the start-up
    rows and targets of the report `results`); 1 when a target fails."""
    work.mkdir(parents=True, exist_ok=True)
    print(f"{'measurement':<58} {'median s':>9} {'RSS MB':>8}  range s")
    load_before = load_average()
    rows = measure_startup(work, repeat)
    for row in rows:
        print(format_row(row))
    targets = [t for t in judge(rows, (1,), 0) if "import floor" in t.name]
    for target in targets:
        print(f"{target.verdict:<13} {target.name}: {target.measured} (limit {target.limit})")
    floor_cpu = _median_cpu(rows[0])
    for row in rows[1:]:
        cpu = _median_cpu(row)
        if cpu is not None and floor_cpu:
            print(f"{'(CPU time)':<13} {row.label[4:]} / import floor: {cpu / floor_cpu:.2f}x")
    if results is not None:
        update_results(results, rows, targets, "(c)", "--startup", load_before)
    return 1 if any(t.passed is False for t in targets) else 0


def _cpu_ratio(top: Row | None, bottom: Row | None) -> float | None:
    """The ratio of two rows' median CPU times (a load on the shared machine inflates wall
    time more), else of their wall times; None without both."""
    if top is None or bottom is None:
        return None
    high, low = _median_cpu(top), _median_cpu(bottom)
    if high is None or not low:
        return _ratio(top, bottom)
    return high / low


def _median_cpu(row: Row) -> float | None:
    cpu = [r.cpu for r in row.runs if r.cpu is not None]
    return statistics.median(cpu) if cpu else None


def update_results(
    results: Path,
    rows: Sequence[Row],
    targets: Sequence[Target],
    group: str,
    option: str,
    load_before: str,
) -> None:
    """Put the rows of `group`, measured again by `run.py <option>`, and their targets in
    place of those of the report `results`, with a note saying when and under what load."""
    note = (
        f"the {group} rows were measured again on {datetime.date.today().isoformat()} "
        f"(`run.py {option} --update-results`): 1-minute load average {load_before} "
        f"before and {load_average()} after, on {os.cpu_count()} CPUs"
    )
    text = results.read_text(encoding="utf-8")
    results.write_text(with_rows(text, rows, targets, note, group), encoding="utf-8")
    print(f"updated {results}")


def with_rows(
    report_text: str, rows: Sequence[Row], targets: Sequence[Target], note: str, group: str
) -> str:
    """`report_text` (a results.md) with the rows of `group` (`(c)`), their targets and the
    note saying when they were measured again replaced by `rows`, `targets` and `note`, each
    where the old ones were (a target or row the report lacks goes where the others of its
    table are; the note ends the notes)."""
    names = tuple(f"| {t.name} |" for t in targets)
    replacing = {
        "targets": ([f"| {t.name} | {t.limit} | {t.measured} | {t.verdict} |" for t in targets]),
        "rows": table(rows)[2:],
    }
    again = f"- the {group} rows were measured again on "
    out: list[str] = []
    placed: set[str] = set()
    for line in report_text.splitlines():
        if line.startswith(again):
            continue
        what = (
            "targets"
            if line.startswith(names)
            else "rows"
            if line.startswith(f"| {group} ")
            else None
        )
        if what is not None:
            if what not in placed:
                out += replacing[what]
                placed.add(what)
            continue
        if line == "## Targets":
            while out and out[-1] == "":
                out.pop()
            out += [f"- {note}", ""]
        out.append(line)
    for what, header in (("targets", "|---|---|---:|---|"), ("rows", "|---|---:|---:|---:|---:|")):
        if what not in placed and header in out:
            # After the table that the header starts.
            at = out.index(header) + 1
            while at < len(out) and out[at].startswith("|"):
                at += 1
            out[at:at] = replacing[what]
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Measure, print the table and the targets, write the results; 1 when a target fails."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=make_corpus.DEFAULT_FILES)
    parser.add_argument("--docs-per-file", type=int, default=make_corpus.DEFAULT_DOCS_PER_FILE)
    parser.add_argument("--repeat", type=int, default=3, help="runs per row; the median counts")
    parser.add_argument("--scales", default="1,4,16", help="corpus sizes to compare (1 first)")
    parser.add_argument("--checkov", help="the checkov executable (default: checkov on PATH)")
    parser.add_argument("--no-checkov", action="store_true", help="skip the Checkov row")
    parser.add_argument(
        "--checkov-from",
        type=Path,
        help="reuse the Checkov row of an earlier report (e.g. bench/results.md) instead",
    )
    parser.add_argument("--work", type=Path, default=WORK, help="where corpora are generated")
    parser.add_argument("--results", type=Path, default=RESULTS, help="Markdown report to write")
    parser.add_argument(
        "--profile-nodes", default="5,5000", help="nodes of the small and the large profile"
    )
    parser.add_argument("--note", action="append", default=[], help="a line for the report")
    parser.add_argument(
        "--startup",
        action="store_true",
        help="measure only the (c) rows and judge their target; write no report",
    )
    parser.add_argument(
        "--context",
        action="store_true",
        help="measure only the (h) rows and judge their targets; write no report",
    )
    parser.add_argument(
        "--update-results",
        action="store_true",
        help="with --startup or --context: put the (c) or (h) rows and their targets in place "
        "of those in --results",
    )
    parser.add_argument(
        "--diagnose",
        action="store_true",
        help="measure only the (i) rows and judge their targets (with --update-results: put "
        "them in place of the diagnose section of --results)",
    )
    parser.add_argument(
        "--cluster",
        help="nodes, pods and events of the (i) rows' cluster (default: the large profile's "
        "nodes, ten pods and a hundred events per node: 5000,50000,500000)",
    )
    parser.add_argument("--compose", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--json-load", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.compose:
        compose_corpus(args.compose[0], Path(args.compose[1]))
        return 0
    if args.json_load:
        json_load(args.json_load)
        return 0
    few, many = (int(n) for n in args.profile_nodes.split(","))
    cluster = args.cluster or f"{many},{many * 10},{many * 100}"
    nodes, pods, events = (int(n) for n in cluster.split(","))
    if args.diagnose:
        results = args.results if args.update_results else None
        return diagnose_only(args.work.resolve(), args.repeat, (nodes, pods, events), results)
    if args.startup:
        results = args.results if args.update_results else None
        return startup_only(args.work.resolve(), args.repeat, results)
    if args.context:
        results = args.results if args.update_results else None
        return context_only(args.work.resolve(), args.repeat, results)

    scales = tuple(sorted({1, *(int(s) for s in args.scales.split(","))}))
    work = args.work.resolve()
    corpus = ensure_corpus(work, args.files, args.docs_per_file)
    files = corpus_files(corpus)
    documents = args.files * args.docs_per_file
    size = sum(p.stat().st_size for p in files)
    corpus_line = (
        f"corpus: {documents:,} documents in {len(files):,} files, {size / 1e6:.1f} MB "
        f"(`make_corpus.py --files {args.files} --docs-per-file {args.docs_per_file}`); "
        f"{args.repeat} runs per row unless noted, medians"
    )
    recorded = recorded_checkov(args.checkov_from) if args.checkov_from else None
    if args.checkov_from and recorded is None:
        parser.error(f"{args.checkov_from}: no Checkov row to reuse")
    checkov = None if args.no_checkov or recorded else find_checkov(args.checkov)
    print(corpus_line)
    load_before = load_average()
    plan = Plan(
        corpus, work, args.repeat, scales, checkov, (few, many), recorded, (nodes, pods, events)
    )
    print(f"{'measurement':<58} {'median s':>9} {'RSS MB':>8}  range s")
    rows = measure_all(plan)

    module_count, forbidden = forbidden_imports(helm_file(work), work)
    targets = judge(rows, scales, documents, (few, many))
    growth = rss_growth(rows, scales, documents)
    notes = [
        f"1-minute load average {load_before} before and {load_average()} after the run "
        f"on {os.cpu_count()} CPUs",
        f"`gpulint check` on one file imports {module_count} modules"
        + (
            f", among them {', '.join(forbidden)}"
            if forbidden
            else ", neither jsonschema nor kubernetes"
        ),
        *args.note,
    ]
    if growth is not None:
        notes.append(f"peak RSS grows by {growth:.1f} MB per 1,000 documents checked")
    throughput = schema_note(rows, documents)
    if throughput is not None:
        notes.append(throughput)
    profile_cpu = profile_cpu_note(rows, (few, many))
    if profile_cpu is not None:
        notes.append(profile_cpu)
    if checkov is not None:
        notes.append(f"{checkov_version(checkov)}, run once")
    if recorded is not None:
        notes.append(f"the Checkov row is reused from an earlier run ({args.checkov_from})")

    print()
    for t in targets:
        print(f"{t.verdict:<13} {t.name}: {t.measured} (limit {t.limit})")
    for note in notes:
        print(f"note: {note}")
    if forbidden:
        print(f"FAIL: `gpulint check` on one file imports {', '.join(forbidden)}")
    diagnose_targets = judge_diagnose(rows)
    for t in diagnose_targets:
        print(f"{t.verdict:<13} {t.name}: {t.measured} (limit {t.limit})")
    diagnose_rows = [r for r in rows if r.key.startswith("diagnose-")]
    section = diagnose_section(
        diagnose_rows, diagnose_targets, f"{args.repeat} runs per row, medians."
    )
    others = [r for r in rows if not r.key.startswith("diagnose-")]
    text = with_diagnose_section(report(others, targets, corpus_line, notes), section)
    args.results.write_text(text, encoding="utf-8")
    print(f"wrote {args.results}")
    failed = any(t.passed is False for t in (*targets, *diagnose_targets))
    return 1 if forbidden or failed else 0


if __name__ == "__main__":
    sys.exit(main())
