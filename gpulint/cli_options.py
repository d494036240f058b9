"""What `gpulint check`'s options mean to the library: the config a run reads, the rule
selection, standard input as an input, `--var` values, how charts are rendered, named clusters
and the live connection. Plain functions that raise GpulintError for a bad value; the command
(gpulint.cli) prints and exits.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from gpulint.errors import GpulintError

if TYPE_CHECKING:
    from gpulint.config import Config
    from gpulint.live.client import ConnectionOptions
    from gpulint.model import Severity
    from gpulint.render.options import RenderOptions


def selectors(values: Sequence[str]) -> tuple[str, ...] | None:
    """`--select GPU1,GPU002 --select GPU6` -> ("GPU1", "GPU002", "GPU6"); None if not given."""
    if not values:
        return None
    return tuple(s.strip().upper() for v in values for s in v.split(",") if s.strip())


def read_stdin() -> bytes:
    """Standard input, up to the size gpulint reads of any file."""
    from gpulint.loader import MAX_FILE_BYTES

    data = sys.stdin.buffer.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise GpulintError(f"standard input is larger than {MAX_FILE_BYTES >> 20} MiB")
    return data


def stdin_input(name: str | None, data: bytes) -> tuple[str, bytes]:
    """Standard input as a run checks it, reported under `--stdin-filename` NAME if given.

    Rendered output (Helm's `# Source:` comments, or NAME a directory) keeps the stream's own
    positions rather than passing them off as NAME's lines (gpulint.render.locate.StdinOrigin),
    unless NAME is a file holding exactly these bytes.
    """
    if name is None:
        return "<stdin>", data
    if os.path.isdir(name) or (b"# Source:" in data and not _holds(name, data)):
        from gpulint.render.locate import StdinOrigin
        from gpulint.render.rendered import RenderedInput

        return RenderedInput(name, data, StdinOrigin(name))
    return name, data


def _holds(path: str, data: bytes) -> bool:
    """Whether the regular file `path` holds exactly `data` (a FIFO or device named by
    `--stdin-filename` is not opened: it would block or never end)."""
    import stat

    try:
        if not stat.S_ISREG(os.stat(path).st_mode) or os.path.getsize(path) != len(data):
            return False
        from gpulint.filetypes import open_input

        with open(open_input(path), "rb") as file:
            return file.read(len(data) + 1) == data
    except OSError:
        return False


def changed(paths: Sequence[str]) -> tuple[str, ...]:
    """The changed files of a commit (`--changed-files`) that a run checks: a chart's or
    overlay's files, which stand for it, and manifests by their names
    (gpulint.loader.checked_when_changed)."""
    from gpulint.loader import checked_when_changed

    kinds: dict[str, str | None] = {}
    return tuple(path for path in paths if checked_when_changed(path, kinds))


def with_variables(config: Config, variables: Sequence[str]) -> Config:
    """`config` with each `--var NAME=VALUE` added to its `variables:` (the command line wins)."""
    assigned = dict(config.variables)
    for item in variables:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise GpulintError(f"--var {item}: expected NAME=VALUE")
        assigned[name] = value
    return replace(config, variables=assigned)


def render_settings(
    config: Config,
    values_files: Sequence[str],
    set_values: Sequence[str],
    release: str | None,
    namespace: str | None,
    cache_dir: str | None,
    use_cache: bool,
) -> RenderOptions | None:
    """How this run renders charts and overlays: the config's charts, the command line's;
    None when nothing differs from the defaults (the options are then made only if a chart or
    an overlay turns up among the inputs)."""
    given_any = config.charts or values_files or set_values or release or namespace
    if not given_any and cache_dir is None and use_cache:
        return None
    from gpulint.render.options import ChartSettings, RenderOptions, ValuesSet

    given = ValuesSet(None, tuple(values_files), tuple(set_values))
    charts = config.charts
    if values_files or set_values or release or namespace:
        # The command line renders every chart its own way, whatever the config says.
        charts = {}
    return RenderOptions(
        charts=charts,
        default=ChartSettings(release, namespace, (given,)),
        cache_dir=cache_dir,
        use_cache=use_cache,
    )


def named_clusters(profile_arguments: Sequence[str]) -> dict[str, tuple[str, ...]] | None:
    """The named clusters of `--profile NAME=FILE` arguments; None when none names one."""
    if not any("=" in argument for argument in profile_arguments):
        return None  # the usual run does not import gpulint.clusters
    from gpulint.clusters import group_profiles

    return group_profiles(profile_arguments) or None


def check_live_flags(
    live: bool, profile_paths: Sequence[str], live_only: Mapping[str, object]
) -> None:
    """Raise GpulintError when --live comes with --profile, or a flag of `live_only` (by its
    name) without --live."""
    if live and profile_paths:
        raise GpulintError("--live reads the profile from the cluster: drop --profile")
    given = next((name for name, value in live_only.items() if value), None)
    if not live and given is not None:
        raise GpulintError(f"{given} needs --live")


def connection(
    kube_context: str | None, kubeconfig: str | None, request_timeout: float | None
) -> ConnectionOptions:
    """How live mode reaches the cluster (needs the `live` extra)."""
    try:
        from gpulint.live.client import DEFAULT_TIMEOUT, ConnectionOptions
    except ImportError:
        raise GpulintError(
            "live mode needs the Kubernetes client: pip install 'gpulint[live]'"
        ) from None
    timeout = DEFAULT_TIMEOUT if request_timeout is None else request_timeout
    return ConnectionOptions(kubeconfig, kube_context, timeout)


def threshold(fail_on: str) -> Severity | None:
    """The lowest severity that fails a run, for `--fail-on` (None: `never`)."""
    from gpulint.model import Severity

    return None if fail_on == "never" else Severity.parse(fail_on)


def run_configs(
    config_path: str | None,
    isolated: bool,
    paths: Sequence[str] = (),
    stdin_filename: str | None = None,
    cache: Path | None = None,
    warn: Callable[[str], None] | None = None,
    respect_gitignore: bool | None = None,
) -> list[tuple[Config, tuple[str, ...]]]:
    """The configs a run reads, each with the paths it applies to: the nearest config of each
    given path, and of each directory under a given directory that holds a config file of its
    own (ruff's rule: nearest wins, no merging), so one run over two teams' folders applies
    both; one config with `isolated` or a config file given. A config's own run leaves the
    directories other configs govern to theirs (`Config.governed_elsewhere`)."""
    from gpulint.config import Config, configs_for_paths, configs_under, load_config
    from gpulint.rules import rule_codes

    if isolated or config_path is not None:
        config = run_config(config_path, isolated, paths, stdin_filename, cache, warn)
        return [(config, tuple(paths))]
    cwd = Path.cwd()
    named = [(stdin_filename or ".") if p == "-" else p for p in paths or ["."]]
    found, notes = configs_for_paths(named, cwd)
    loaded: dict[Path | None, Config] = {}

    def load(path: Path | None) -> Config:
        if path not in loaded:
            loaded[path] = (
                Config(root=cwd) if path is None else load_config(path, rule_codes(), cache)
            )
        return loaded[path]

    groups: dict[Path | None, list[str]] = {}
    elsewhere: dict[Path | None, set[str]] = {}
    skipped: set[str] = set()
    for path, indexes in found:
        for index in indexes:
            given = paths[index] if paths else "."
            groups.setdefault(path, []).append(given)
            if given == "-" or not os.path.isdir(given):
                continue
            governing = {os.path.abspath(given): path}
            for directory, own, _ in configs_under(
                given, load(path), load, respect_gitignore, skipped
            ):
                parent = os.path.dirname(os.path.abspath(directory))
                while parent not in governing:
                    parent = os.path.dirname(parent)
                elsewhere.setdefault(governing[parent], set()).add(os.path.abspath(directory))
                governing[os.path.abspath(directory)] = own
                if directory not in groups.setdefault(own, []):
                    groups[own].append(directory)
    if warn is not None:
        for note in sorted({*notes, *skipped}):
            warn(note)
    if len(groups) == 1 and not elsewhere:
        (path,) = groups
        return [(load(path), tuple(paths))]
    return [
        (replace(load(path), governed_elsewhere=frozenset(elsewhere.get(path, ()))), tuple(given))
        for path, given in groups.items()
    ]


def run_config(
    config_path: str | None,
    isolated: bool,
    paths: Sequence[str] = (),
    stdin_filename: str | None = None,
    cache: Path | None = None,
    warn: Callable[[str], None] | None = None,
) -> Config:
    """The config a run reads: none with `isolated`, the file given, else the one found for
    `paths` (`warn` is told what the search noticed); validated through `cache`."""
    from gpulint.config import Config, config_for_paths, load_config
    from gpulint.rules import rule_codes

    if isolated:
        return Config(root=Path.cwd())
    if config_path is not None:
        path = Path(config_path)
        if not path.is_file():
            raise GpulintError(f"{config_path}: config file not found")
    else:
        named = [(stdin_filename or ".") if p == "-" else p for p in paths or ["."]]
        choice = config_for_paths(named, Path.cwd())
        for note in choice.notes if warn is not None else ():
            warn(note)
        if choice.path is None:
            return Config(root=Path.cwd())
        path = choice.path
    return load_config(path, rule_codes(), cache)


def with_skipped_kinds(config: Config, kinds: Sequence[str]) -> Config:
    """`config` dropping every finding about objects of `kinds` (`--skip-kind`), as an
    `ignore-objects` entry each; a kind matches in any case (`deployment`), with * globs."""
    if not kinds:
        return config
    from gpulint.config import ObjectPattern

    patterns = tuple(
        ObjectPattern(kind="".join(f"[{c.upper()}{c.lower()}]" if c.isalpha() else c for c in k))
        for k in kinds
    )
    return replace(config, ignore_objects=(*config.ignore_objects, *patterns))
