"""Time gpulint against the fastest Python YAML loader on a generated corpus.

Measures, each best of `--repeat` runs, every run in a fresh interpreter:
  (a) PyYAML `compose_all` on its C parser over every file: the baseline
  (b) ruamel.yaml `YAML(typ="safe", pure=False).compose_all`: for reference
  (c) gpulint's parser alone (`gpulint.yamltree.parse`)
  (d) the library, `gpulint.api.lint([corpus])` with the default rules
  (e) the command line end to end, `gpulint check CORPUS --format json -o /dev/null`
  (f) start-up: `gpulint check` on one small file, and the imports that cost it most
(a)-(d) time the work inside the child, after its imports; (e) and (f) time the whole process.

Exits 1 when (d) takes longer than `--max-ratio` times (a), or when checking one file without
a config or profile imports jsonschema or kubernetes.

Usage: python bench/run.py [--repeat N] [--max-ratio R] [--documents N] [--corpus DIR]
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

import generate  # noqa: E402  (a sibling script, not an installed module)

SUFFIXES = (".yaml", ".yml", ".json")
#: Modules that `gpulint check` must not import for a run without a config or a profile.
FORBIDDEN_AT_START = ("jsonschema", "kubernetes")
SMALL_MANIFEST = """\
apiVersion: v1
kind: Pod
metadata:
  name: smoke
spec:
  containers:
    - name: cuda
      image: nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04
      resources:
        limits:
          nvidia.com/gpu: 1
"""


@dataclass(frozen=True)
class Timing:
    """One measured row of the table."""

    label: str
    seconds: float | None  # None: skipped
    note: str = ""


def corpus_files(corpus: Path) -> list[Path]:
    """Every manifest of the corpus, in a stable order, skipping hidden files."""
    found = []
    for directory, subdirs, files in os.walk(corpus):
        subdirs[:] = sorted(d for d in subdirs if not d.startswith("."))
        found.extend(
            Path(directory) / name
            for name in sorted(files)
            if name.endswith(SUFFIXES) and not name.startswith(".")
        )
    return found


def ensure_corpus(corpus: Path, documents: int) -> dict[str, object]:
    """The corpus manifest, generating the corpus first when it is missing or stale."""
    manifest = generate.read_manifest(corpus)
    if (
        manifest is None
        or manifest.get("documents") != documents
        or manifest.get("generator") != generate.GENERATOR_VERSION
        or manifest.get("seed") != generate.DEFAULT_SEED
        or manifest.get("mistake_rate") != generate.DEFAULT_MISTAKE_RATE
    ):
        print(f"generating {documents} documents in {corpus} ...", flush=True)
        generate.generate(corpus, documents)
        manifest = generate.read_manifest(corpus)
        assert manifest is not None
    return manifest


# --- what a child interpreter runs -------------------------------------------------------------


def _child_work(kind: str, corpus: Path, files: list[Path]) -> Callable[[], object]:
    """The work to time for `kind`, with every import done before the clock starts."""
    if kind == "pyyaml":
        import yaml

        def pyyaml() -> None:
            for path in files:
                for _ in yaml.compose_all(
                    path.read_text(encoding="utf-8"), Loader=yaml.CSafeLoader
                ):
                    pass

        return pyyaml
    if kind == "ruamel":
        from ruamel.yaml import YAML

        loader = YAML(typ="safe", pure=False)

        def ruamel() -> None:
            for path in files:
                for _ in loader.compose_all(path.read_text(encoding="utf-8")):
                    pass

        return ruamel
    if kind == "parse":
        from gpulint.yamltree import parse

        def gpulint_parse() -> None:
            for path in files:
                parse(path.read_text(encoding="utf-8"))

        return gpulint_parse
    if kind == "lint":
        from gpulint.api import lint

        return lambda: lint([str(corpus)])
    raise ValueError(f"unknown measurement {kind!r}")


def child_main(kind: str, corpus: str, file_list: str) -> None:
    """Run one measurement once and print its wall-clock seconds."""
    files = [Path(line) for line in Path(file_list).read_text(encoding="utf-8").splitlines()]
    work = _child_work(kind, Path(corpus), files)
    start = time.perf_counter()
    work()
    print(f"{time.perf_counter() - start:.6f}")


# --- the parent ----------------------------------------------------------------------------------


def _best(times: Sequence[float]) -> float:
    return min(times)


def in_child(kind: str, corpus: Path, file_list: Path, repeat: int) -> Timing | str:
    """Best of `repeat` fresh interpreters; a string explains why the row was skipped."""
    runs = []
    for _ in range(repeat):
        done = subprocess.run(
            [sys.executable, __file__, "--child", kind, str(corpus), str(file_list)],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["failed"])[-1]
            return last
        runs.append(float(done.stdout.split()[-1]))
    return Timing(kind, _best(runs))


def gpulint_command() -> list[str]:
    """How to start the gpulint of this interpreter's environment."""
    script = Path(sys.executable).with_name("gpulint")
    return [str(script)] if script.exists() else [sys.executable, "-m", "gpulint"]


def whole_process(command: list[str], repeat: int, cwd: Path) -> float:
    """Best wall-clock time of `command` (exit codes 0 and 1 both mean it ran)."""
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False)
        runs.append(time.perf_counter() - start)
        if done.returncode not in (0, 1):
            raise RuntimeError(f"{' '.join(command)} exited {done.returncode}: {done.stderr}")
    return _best(runs)


_IMPORT_LINE = re.compile(r"import time:\s*(\d+) \|\s*(\d+) \|( *)(\S+)")


def import_profile(small: Path, cwd: Path) -> tuple[list[tuple[str, float]], list[str]]:
    """(every imported module with its own import ms, slowest first; forbidden ones imported)."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "gpulint", "check", str(small)],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )
    own: list[tuple[str, float]] = []
    imported: set[str] = set()
    for line in done.stderr.splitlines():
        match = _IMPORT_LINE.match(line)
        if match is None:
            continue
        self_us, name = int(match.group(1)), match.group(4)
        imported.add(name.split(".")[0])
        own.append((name, self_us / 1000))
    own.sort(key=lambda item: -item[1])
    return own, [name for name in FORBIDDEN_AT_START if name in imported]


def main(argv: list[str] | None = None) -> int:
    """Run every measurement, print the table; 1 when a limit is exceeded."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=generate.DEFAULT_OUT)
    parser.add_argument("--documents", type=int, default=generate.DEFAULT_DOCUMENTS)
    parser.add_argument("--repeat", type=int, default=3, help="runs per row; the best counts")
    parser.add_argument(
        "--max-ratio", type=float, default=1.5, help="limit for (d) lint / (a) PyYAML"
    )
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child_main(*args.child)
        return 0

    corpus = args.corpus.resolve()
    manifest = ensure_corpus(corpus, args.documents)
    files = corpus_files(corpus)
    size = sum(p.stat().st_size for p in files)
    print(
        f"corpus: {corpus} - {manifest['documents']} documents in {len(files)} files, "
        f"{size / 1e6:.1f} MB; Python {platform.python_version()}, {os.cpu_count()} CPUs; "
        f"best of {args.repeat}"
    )
    rows: list[Timing] = []
    failures: list[str] = []
    with tempfile.TemporaryDirectory(prefix="gpulint-bench-") as tmp:
        work = Path(tmp)
        file_list = work / "files.txt"
        file_list.write_text("\n".join(str(p) for p in files) + "\n", encoding="utf-8")
        labels = {
            "pyyaml": "(a) PyYAML compose_all, CSafeLoader (baseline)",
            "ruamel": "(b) ruamel.yaml compose_all, typ=safe pure=False",
            "parse": "(c) gpulint.yamltree.parse",
            "lint": "(d) gpulint.api.lint, default rules",
        }
        for kind, label in labels.items():
            measured = in_child(kind, corpus, file_list, args.repeat)
            if isinstance(measured, str):
                rows.append(Timing(label, None, f"skipped: {measured}"))
            else:
                rows.append(Timing(label, measured.seconds))
        cli = [*gpulint_command(), "check", str(corpus), "--format", "json", "-o", os.devnull]
        rows.append(
            Timing("(e) gpulint check CORPUS, whole process", whole_process(cli, args.repeat, work))
        )
        small = work / "small.yaml"
        small.write_text(SMALL_MANIFEST, encoding="utf-8")
        start_up = whole_process([*gpulint_command(), "check", str(small)], args.repeat * 3, work)
        rows.append(Timing("(f) gpulint check small.yaml, whole process", start_up))
        top, forbidden = import_profile(small, work)

    baseline = rows[0].seconds
    print()
    print(f"{'measurement':<50} {'seconds':>9} {'x (a)':>7}")
    for row in rows:
        seconds = f"{row.seconds:9.3f}" if row.seconds is not None else f"{'-':>9}"
        ratio = f"{row.seconds / baseline:7.2f}" if baseline and row.seconds is not None else ""
        print(f"{row.label:<50} {seconds} {ratio:>7} {row.note}".rstrip())
    print()
    print(
        f"(f) imports {len(top)} modules; slowest, own ms: "
        + ", ".join(f"{name} {ms:.0f}" for name, ms in top[:8])
    )

    lint_seconds = rows[3].seconds
    if baseline is None:
        print("PyYAML is not installed (pip install -e '.[bench]'): no baseline, ratio not checked")
    elif lint_seconds is None:
        failures.append("gpulint.api.lint did not run")
    elif lint_seconds > args.max_ratio * baseline:
        failures.append(
            f"lint takes {lint_seconds / baseline:.2f} x the baseline, more than {args.max_ratio}"
        )
    if forbidden:
        failures.append(f"`gpulint check` on one file imports {', '.join(forbidden)}")
    for failure in failures:
        print(f"FAIL: {failure}")
    if not failures and baseline is not None:
        print(f"OK: lint is {lint_seconds / baseline:.2f} x the baseline (limit {args.max_ratio})")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
