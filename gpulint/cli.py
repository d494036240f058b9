"""The `gpulint` command: parse options, call the library, pick a formatter. Nothing else."""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from gpulint import __version__, cli_options
from gpulint.cli_io import DIRECTORY as _DIRECTORY
from gpulint.cli_io import EXIT_CLEAN
from gpulint.cli_io import FILE as _FILE
from gpulint.cli_io import PATH as _PATH
from gpulint.cli_io import append as _append
from gpulint.cli_io import emit as _emit
from gpulint.cli_io import fail as _fail
from gpulint.cli_io import live_options as _live_options
from gpulint.cli_io import noticed as _noticed
from gpulint.cli_io import option_group as _option_group
from gpulint.cli_io import use_color as _use_color
from gpulint.cli_io import warn as _warn
from gpulint.cli_io import wrote as _wrote
from gpulint.errors import GpulintError

if TYPE_CHECKING:
    from gpulint.config import Config
    from gpulint.findings import LintResult

EXIT_FINDINGS = 1
SEVERITY_CHOICES = ("error", "warning", "info", "never")
#: The keys of gpulint.output.FORMATTERS, listed here so `--help` does not import them.
OUTPUT_FORMATS = ("text", "concise", "json", "sarif", "github", "junit", "gitlab")


#: The commands gpulint.cli_tools defines, imported when one runs or help lists them.
_TOOLS = ("diagnose", "explain", "profile", "rules", "smoke")


class _Commands(click.Group):
    """The `gpulint` group: Ctrl-C ends any of its commands with one line and exit code 130,
    as a shell reports SIGINT (click would print `Aborted!` and exit 1). The commands of
    `_TOOLS` are loaded when asked for: a pre-commit run of `check` does not build them."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *_TOOLS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in _TOOLS:
            from gpulint import cli_tools

            return getattr(cli_tools, cmd_name)  # type: ignore[no-any-return]
        return super().get_command(ctx, cmd_name)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            click.echo("gpulint: interrupted", err=True)
            sys.exit(130)


#: What ruff and yamllint users reach for in CI: --exit-zero, a second report, and what a run
#: would use (--show-settings, --show-files).
_ci_options = _option_group(
    click.option("--exit-zero", is_flag=True, help="Exit 0 even when findings fail the run."),
    click.option(
        "--sarif-output",
        type=_FILE,
        help="Also write a SARIF report here, whatever --format prints.",
    ),
    click.option(
        "--show-settings",
        is_flag=True,
        help="Print the resolved settings and where each came from; check nothing.",
    ),
    click.option(
        "--show-files", is_flag=True, help="Print the files a run would check; check nothing."
    ),
    click.option(
        "--changed-files",
        is_flag=True,
        help="The paths are a commit's changed files (pre-commit): a file of a chart or overlay "
        "checks it, once however many of its files changed; other files only if named .yaml, "
        ".yml or .json outside templates/.",
    ),
    click.option(
        "--respect-gitignore/--no-respect-gitignore",
        default=None,
        help="Skip what .gitignore ignores when walking directories (default: on).",
    ),
)

#: --values, --set, --release, --var, --allow-empty: how charts and overlays are rendered.
_render_options = _option_group(
    click.option(
        "-f",
        "--values",
        "values_files",
        multiple=True,
        type=_FILE,
        help="Values file for the charts checked (helm's --values); repeatable.",
    ),
    click.option(
        "--set",
        "set_values",
        multiple=True,
        help="KEY=VALUE for the charts checked (helm's --set); repeatable.",
    ),
    click.option("--release", help="Release name for the charts (default: each chart's name)."),
    click.option(
        "--var",
        "variables",
        multiple=True,
        help="NAME=VALUE substituted for $NAME and ${NAME} placeholders; repeatable.",
    ),
    click.option(
        "--allow-empty",
        is_flag=True,
        help="Accept stdin, a chart or an overlay that holds no Kubernetes object.",
    ),
)


_COMPLETION_HELP = """\b
Shell completion: add to ~/.bashrc (or ~/.zshrc with zsh_source; fish: see docs)
  eval "$(_GPULINT_COMPLETE=bash_source gpulint)"
"""


@click.group(
    cls=_Commands,
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog=_COMPLETION_HELP,
)
@click.version_option(
    __version__, "-V", "--version", prog_name="gpulint", message="%(prog)s %(version)s"
)
def main() -> None:
    """Find why Kubernetes GPU workloads would stay Pending, before they are applied."""


@main.command()
def version() -> None:
    """Print gpulint's version (as `gpulint --version`)."""
    click.echo(f"gpulint {__version__}")


@main.command()
@click.argument("paths", nargs=-1, type=_PATH)
@click.option("--config", "config_path", type=_PATH, help="Config file to use.")
@click.option("--isolated", is_flag=True, help="Ignore every config file.")
@click.option("--select", multiple=True, help="Rules to run, by code or prefix (GPU1,GPU002).")
@click.option("--extend-select", multiple=True, help="Rules to run in addition.")
@click.option("--ignore", multiple=True, help="Rules not to run, by code or prefix.")
@click.option(
    "--fail-on",
    type=click.Choice(SEVERITY_CHOICES),
    help="Lowest severity that makes the exit code 1 (default: error).",
)
@click.option(
    "--format",
    "--output-format",
    "output_format",
    type=click.Choice(OUTPUT_FORMATS),
    default="text",
    show_default=True,
    help="text: each finding with its source line; concise: one line each; github: "
    "workflow-command annotations (and a table in $GITHUB_STEP_SUMMARY). With "
    "GITHUB_ACTIONS=true and no --format, text plus annotations.",
)
@click.option("-o", "--output", "--output-file", type=_FILE, help="Write the report here.")
@_ci_options
@click.option(
    "--statistics",
    is_flag=True,
    help="Print how many findings each rule produced instead of the findings (text, json).",
)
@click.option("-q", "--quiet", is_flag=True, help="Print the findings only: no notes, no summary.")
@click.option(
    "-s", "--silent", is_flag=True, help="Print nothing; the exit code tells (-o still writes)."
)
@click.option("--stdin-filename", help="Path to report for input read from `-`.")
@click.option(
    "--report-unused-ignores",
    is_flag=True,
    default=None,
    help="Report suppressions that match nothing.",
)
@click.option(
    "--color",
    type=click.Choice(["auto", "always", "never"]),
    default="auto",
    show_default=True,
)
@click.option("-n", "--namespace", help="Namespace assumed for objects that name none.")
@click.option(
    "-j",
    "--jobs",
    type=click.IntRange(min=1),
    help="Processes that check files (default: the available CPUs; used for large inputs only).",
)
@click.option(
    "--profile",
    "profile_paths",
    multiple=True,
    type=_PATH,
    help="Cluster profile input (ClusterProfile, kubectl dump, eksctl, Karpenter, Cluster API, "
    "Terraform); repeatable. NAME=FILE checks against named clusters: every rule runs per "
    "cluster, and the files of one NAME are merged.",
)
@click.option("--pool-label", help="Node label that names a node's pool (kubectl dumps).")
@click.option(
    "--cache-dir",
    type=_DIRECTORY,
    envvar="GPULINT_CACHE_DIR",
    show_envvar=True,
    help="Where --profile files already read, and the results of files already checked, are "
    "kept by a hash of their bytes, so a large kubectl dump is parsed once and an unchanged file "
    "is not checked again (default: $XDG_CACHE_HOME/gpulint, else ~/.cache/gpulint).",
)
@click.option(
    "--no-cache",
    is_flag=True,
    help="Parse every --profile file and check every file; read or write no cache.",
)
@click.option("--live", is_flag=True, help="Read the cluster profile from the Kubernetes API.")
@click.option(
    "--server-dry-run",
    is_flag=True,
    help="With --live: dry-run every object on the API server; refusals are GPU900.",
)
@click.option("--fix", "apply_fixes", is_flag=True, help="Apply safe fixes in place.")
@click.option(
    "--unsafe-fixes", is_flag=True, help="With --fix or --diff: also fixes that need a choice."
)
@click.option(
    "--diff",
    "show_diff",
    is_flag=True,
    help="Print the diff --fix would make and change nothing (exit 1 when there is one, "
    "unless --exit-zero).",
)
@click.option(
    "--add-ignore",
    is_flag=True,
    help="Add a `# gpulint: ignore[CODE]` comment on the line of each finding (to adopt "
    "gpulint where findings exist); with --diff, print them and change nothing.",
)
@click.option(
    "--skip-kind",
    "skip_kinds",
    multiple=True,
    metavar="KIND",
    help="Report nothing about objects of this kind (any case, * globs); repeatable.",
)
@_render_options
@_live_options
def check(
    paths: tuple[str, ...],
    config_path: str | None,
    isolated: bool,
    select: tuple[str, ...],
    extend_select: tuple[str, ...],
    ignore: tuple[str, ...],
    fail_on: str | None,
    output_format: str,
    output: str | None,
    statistics: bool,
    quiet: bool,
    silent: bool,
    stdin_filename: str | None,
    report_unused_ignores: bool | None,
    color: str,
    namespace: str | None,
    jobs: int | None,
    profile_paths: tuple[str, ...],
    pool_label: str | None,
    cache_dir: str | None,
    no_cache: bool,
    live: bool,
    server_dry_run: bool,
    apply_fixes: bool,
    unsafe_fixes: bool,
    show_diff: bool,
    add_ignore: bool,
    skip_kinds: tuple[str, ...],
    kube_context: str | None,
    kubeconfig: str | None,
    request_timeout: float | None,
    exit_zero: bool,
    sarif_output: str | None,
    show_settings: bool,
    show_files: bool,
    changed_files: bool,
    values_files: tuple[str, ...],
    set_values: tuple[str, ...],
    release: str | None,
    variables: tuple[str, ...],
    allow_empty: bool,
    respect_gitignore: bool | None,
) -> None:
    """Check manifests (files, directories, or - for stdin; default: the current directory).

    Helm charts and kustomize overlays among them are rendered (helm, kubectl or kustomize
    must be on PATH), and their findings point at the values file, template or patch to edit.
    """
    from gpulint.api import LintOptions, available_cpus, lint, with_overrides, with_profile
    from gpulint.output import FORMATTERS, STATISTICS
    from gpulint.output.options import repository_options

    # GitHub Actions sets GITHUB_ACTIONS=true: without a --format, findings become annotations
    # on the pull request as well as the text in the log (as yamllint does).
    format_given = (
        click.get_current_context().get_parameter_source("output_format")
        is not click.core.ParameterSource.DEFAULT
    )
    annotate = not format_given and os.environ.get("GITHUB_ACTIONS") == "true"
    try:
        if statistics and output_format not in STATISTICS:
            raise GpulintError(f"--statistics prints text or json, not --format {output_format}")
        from gpulint.cachedir import cache_dir as cache_location

        cache = cache_location(cache_dir, use_cache=not no_cache)
        from gpulint.loader import refuse_url

        for path in paths:  # before the paths are grouped by config (and normalized)
            refuse_url(path)
        given = paths
        if changed_files:
            paths = cli_options.changed(paths)
        # Each file is checked with its nearest config (ruff's rule): two teams' folders in
        # one run are two runs, their findings merged.
        if given and not paths:  # no changed file is checked: one run of nothing
            only = cli_options.run_config(config_path, isolated, (), stdin_filename, cache)
            groups = [(only, ())]
        else:
            groups = cli_options.run_configs(
                config_path, isolated, paths, stdin_filename, cache, _noticed, respect_gitignore
            )
        configs = []
        for config, _ in groups:
            config = config.with_overrides(respect_gitignore=respect_gitignore)
            if fail_on is not None:
                # not with_overrides: it drops None, and None is what `never` means
                config = replace(config, fail_on=cli_options.threshold(fail_on))
            configs.append(config)
        config = configs[0]
        # Merged over the config by lint(), which checks every selector.
        selection: dict[str, Any] = {
            "select": cli_options.selectors(select),
            "extend_select": cli_options.selectors(extend_select),
            "ignore": cli_options.selectors(ignore),
            "report_unused_ignores": report_unused_ignores,
        }
        if show_settings:
            settings = with_overrides(config, **selection)
            _show(settings, paths, stdin_filename, show_settings, _given_on_command_line())
            return
        if show_files:  # every config's files, each walked as its own run walks them
            for group_config, (_, group_paths) in zip(configs, groups, strict=True):
                _show(group_config, group_paths, stdin_filename, False, frozenset())
            return
        stdin = None
        if "-" in paths:
            stdin = cli_options.stdin_input(stdin_filename, cli_options.read_stdin())
        live_only = {
            "--server-dry-run": server_dry_run,
            "--context": kube_context,
            "--kubeconfig": kubeconfig,
            "--request-timeout": request_timeout,
        }
        cli_options.check_live_flags(live, profile_paths, live_only)
        if add_ignore and apply_fixes:
            raise GpulintError("--add-ignore and --fix: choose one (fix first, then add ignores)")
        fixing = apply_fixes or show_diff or add_ignore
        if fixing and live:
            what = "--add-ignore checks" if add_ignore else "--fix and --diff check"
            raise GpulintError(f"{what} against a --profile, not --live")
        clusters = cli_options.named_clusters(profile_paths)

        def options_for(config: Config, index: int) -> LintOptions:
            config = cli_options.with_skipped_kinds(config, skip_kinds)
            config = cli_options.with_variables(config, variables)
            options = LintOptions(
                config=config,
                **selection,
                # Named clusters' files are read per cluster.
                profile_paths=() if clusters else profile_paths,
                clusters=clusters,
                pool_label=pool_label,
                cache_dir=cache_dir,
                use_cache=not no_cache,
                warn=_warn,
                live=cli_options.connection(kube_context, kubeconfig, request_timeout)
                if live
                else None,
                server_dry_run=server_dry_run,
                stdin=stdin,
                root=os.getcwd(),
                namespace=namespace,
                jobs=jobs or available_cpus(),
                keep_checked=output_format == "junit",
                # Several configs' results are merged in memory.
                spool_findings=len(groups) == 1,
                render=cli_options.render_settings(
                    config, values_files, set_values, release, namespace, cache_dir, not no_cache
                ),
                allow_empty=allow_empty,
                # The other configs' files: summed with these where judged against one cluster.
                alongside=[
                    (list(other_paths) or ["."], other)
                    for other_index, (other, (_, other_paths)) in enumerate(
                        zip(configs, groups, strict=True)
                    )
                    if other_index != index
                ],
            )
            if fixing:
                # Each pass of --fix checks the same run over the texts fixed so far: the
                # profile is read once, and every render shares one time budget.
                from gpulint.render.options import shared_run

                options = replace(with_profile(options), render=shared_run(options.render))
            return options

        planned = [
            # Changed files of which none is checked are no reason to check the directory.
            (list(group_paths) or ([] if given else ["."]), options_for(group_config, index))
            for index, (group_config, (_, group_paths)) in enumerate(
                zip(configs, groups, strict=True)
            )
        ]
        failing: list[bool] = []  # of the last check, by each config's own fail-on

        def run(overlay: Mapping[str, bytes] | None = None) -> LintResult:
            results = [lint(targets, options, overlay=overlay) for targets, options in planned]
            failing[:] = [r.fails(c.fail_on) for r, c in zip(results, configs, strict=True)]
            if len(results) == 1:
                return results[0]
            from gpulint.findings import merge_runs

            return merge_runs(results)

        result = (
            _fix(run, stdin, unsafe_fixes, show_diff, exit_zero, add_ignore) if fixing else run()
        )
        if not fixing:  # `[*]` only where --fix would make the edit
            from gpulint.fixing import check_marks

            result = check_marks(result, stdin)
    except GpulintError as exc:
        _fail(str(exc))
        return
    use_color = output is None and _use_color(color, sys.stdout.isatty())
    options = repository_options(Path.cwd(), color=use_color, quiet=quiet, stdin=stdin)
    render = (STATISTICS if statistics else FORMATTERS)[output_format]
    # The console script runs with the cyclic collector off; writing a report makes
    # short-lived cycles (the json module's indenting encoder, a few per finding) that a
    # report of thousands of findings would otherwise keep to the end. What the run built so
    # far is frozen first: the collector's first pass would otherwise traverse all of it.
    gc.freeze()
    gc.enable()
    if output is not None or not silent:
        _emit(render(result, options), output, "report", use_color)
        if not silent:  # --silent prints nothing, this line included
            _wrote(output, "the statistics" if statistics else f"the {output_format} report")
    if sarif_output is not None:
        _emit(FORMATTERS["sarif"](result, options), sarif_output, "SARIF report")
        if not silent:
            _wrote(sarif_output, "the SARIF report")
    if annotate and not silent:
        from gpulint.output.github import annotation

        _emit((annotation(f, options) + "\n" for f in result.findings), None, "annotations")
    summary_file = os.environ.get("GITHUB_STEP_SUMMARY")
    if (output_format == "github" or annotate) and summary_file:
        from gpulint.output.github import step_summary

        _append(summary_file, step_summary(result, options), "the job summary")
    fails = (any(failing) if len(failing) > 1 else result.fails(config.fail_on)) and not exit_zero
    sys.exit(EXIT_FINDINGS if fails else EXIT_CLEAN)


#: Command-line options that change a setting, by the setting's config key.
_SETTING_OPTIONS = {
    "select": "select",
    "extend_select": "extend-select",
    "ignore": "ignore",
    "fail_on": "fail-on",
    "report_unused_ignores": "report-unused-ignores",
    "respect_gitignore": "respect-gitignore",
}


def _given_on_command_line() -> frozenset[str]:
    """The config keys the command line set (for --show-settings)."""
    context = click.get_current_context()
    return frozenset(
        key
        for name, key in _SETTING_OPTIONS.items()
        if context.get_parameter_source(name) is click.core.ParameterSource.COMMANDLINE
    )


def _show(
    config: Config,
    paths: Sequence[str],
    stdin_filename: str | None,
    settings: bool,
    from_command_line: frozenset[str],
) -> None:
    """--show-settings and --show-files: what a run would use, without checking anything."""
    from gpulint.config import settings_lines
    from gpulint.loader import STDIN, discover, display_path, input_name
    from gpulint.output.escape import one_line

    if settings:  # values are shown JSON-encoded: no control character reaches the terminal
        for line in settings_lines(config, from_command_line):
            click.echo(line)
        return
    stdin = (stdin_filename or "<stdin>", b"") if STDIN in paths else None
    cwd = os.getcwd()
    found = discover(
        [p for p in paths or ["."] if p != STDIN],
        config.walk_excluded(None),
        stdin,
        ignored=config.gitignore_filter(),
        base=cwd,
    )
    for item in found:
        click.echo(one_line(display_path(input_name(item), cwd)))


def _fix(
    run: Callable[[Mapping[str, bytes]], LintResult],
    stdin: tuple[str, bytes] | None,
    unsafe: bool,
    show_diff: bool,
    exit_zero: bool = False,
    add_ignore: bool = False,
) -> LintResult:
    """Fix (or, with `add_ignore`, suppress), then print the diff (and exit) or write the
    files; the check of the fixed text."""
    from gpulint.fixing import add_ignores, fix
    from gpulint.output.escape import diff_text

    if add_ignore:
        outcome = add_ignores(run, stdin=stdin)
        did, would = "added ignore comments for", "would add ignore comments for"
    else:
        outcome = fix(run, unsafe=unsafe, stdin=stdin)
        did, would = "fixed", "would fix"
    if show_diff:
        for line in outcome.notes():
            click.echo(line, err=True)
        diff = outcome.diff()
        _emit(diff_text(diff, outcome.changed), None, "diff")
        count = _plural_findings(outcome.fixed)
        click.echo(f"gpulint: {would} {count} in {len(outcome.changed)} file(s)", err=True)
        sys.exit(EXIT_FINDINGS if diff and not exit_zero else EXIT_CLEAN)
    outcome = outcome.write()
    for line in outcome.notes():
        click.echo(line, err=True)
    if outcome.written:
        count = _plural_findings(outcome.fixed)
        click.echo(f"gpulint: {did} {count} in {len(outcome.written)} file(s)", err=True)
    return outcome.final_result()


def _plural_findings(count: int) -> str:
    return f"{count} finding{'' if count == 1 else 's'}"
