"""The `gpulint` command: parse options, call the library, pick a formatter. Nothing else."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

import click

from gpulint import __version__
from gpulint.errors import GpulintError
from gpulint.model import Severity

EXIT_CLEAN, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2
SEVERITY_CHOICES = ("error", "warning", "info", "never")


def _selectors(values: Sequence[str]) -> tuple[str, ...] | None:
    """`--select GPU1,GPU002 --select GPU6` -> ("GPU1", "GPU002", "GPU6"); None if not given."""
    if not values:
        return None
    return tuple(s.strip().upper() for v in values for s in v.split(",") if s.strip())


def _fail(message: str) -> None:
    click.echo(f"gpulint: error: {message}", err=True)
    sys.exit(EXIT_USAGE)


def _use_color(choice: str, stream_is_tty: bool) -> bool:
    if choice == "always":
        return True
    if choice == "never" or os.environ.get("NO_COLOR"):
        return False
    return stream_is_tty


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="gpulint")
def main() -> None:
    """Find why Kubernetes GPU workloads would stay Pending, before they are applied."""


@main.command()
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--config", "config_path", type=click.Path(), help="Config file to use.")
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
    "output_format",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
)
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write the report here.")
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
    stdin_filename: str | None,
    report_unused_ignores: bool | None,
    color: str,
    namespace: str | None,
) -> None:
    """Check manifests (files, directories, or - for stdin; default: the current directory)."""
    from gpulint.api import lint
    from gpulint.output import FORMATTERS

    try:
        config = _config(config_path, isolated)
        config = config.with_overrides(
            select=_selectors(select),
            extend_select=_selectors(extend_select),
            ignore=_selectors(ignore),
            report_unused_ignores=report_unused_ignores,
        )
        if fail_on is not None:
            config = config.with_overrides(fail_on=_threshold(fail_on))
        _check_cli_selectors(config.select, config.extend_select, config.ignore)
        stdin = None
        if "-" in paths:
            stdin = (stdin_filename or "<stdin>", click.get_binary_stream("stdin").read())
        result = lint(list(paths) or ["."], config, stdin=stdin, namespace=namespace)
    except GpulintError as exc:
        _fail(str(exc))
        return
    if output:
        text = FORMATTERS[output_format](result, False)
        try:
            Path(output).write_text(text, encoding="utf-8")
        except OSError as exc:
            _fail(f"{output}: cannot write report: {exc.strerror}")
    else:
        stream = click.get_text_stream("stdout")
        text = FORMATTERS[output_format](result, _use_color(color, stream.isatty()))
        click.echo(text, nl=False)
    sys.exit(EXIT_FINDINGS if result.fails(config.fail_on) else EXIT_CLEAN)


def _threshold(fail_on: str) -> Severity | None:
    return None if fail_on == "never" else Severity.parse(fail_on)


def _config(config_path: str | None, isolated: bool):  # -> Config
    from gpulint.catalogue import load_catalogue
    from gpulint.config import Config, find_config, load_config

    if isolated:
        return Config()
    if config_path is not None:
        path = Path(config_path)
        if not path.is_file():
            raise GpulintError(f"{config_path}: config file not found")
    else:
        path = find_config(Path.cwd())
        if path is None:
            return Config()
    return load_config(path, load_catalogue())


def _check_cli_selectors(*groups: Sequence[str] | None) -> None:
    from gpulint.catalogue import load_catalogue

    codes = load_catalogue()
    for group in groups:
        for selector in group or ():
            if selector != "ALL" and not any(code.startswith(selector) for code in codes):
                raise GpulintError(f"`{selector}` selects no rule (see `gpulint rules`)")


@main.command()
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["table", "json", "markdown"]),
    default="table",
    show_default=True,
)
def rules(output_format: str) -> None:
    """List every rule: code, name, default severity, summary."""
    from gpulint.catalogue import load_catalogue
    from gpulint.output.catalogue import rules_json, rules_markdown, rules_table

    entries = list(load_catalogue().values())
    render = {"table": rules_table, "json": rules_json, "markdown": rules_markdown}
    click.echo(render[output_format](entries), nl=False)


@main.command()
@click.argument("code")
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text")
def explain(code: str, output_format: str) -> None:
    """Show a rule's documentation: why it matters, a failing example and its fix."""
    from gpulint.catalogue import load_catalogue
    from gpulint.output.catalogue import explain_text, rule_to_dict

    catalogue = load_catalogue()
    wanted = code.upper()
    info = catalogue.get(wanted) or next(
        (i for i in catalogue.values() if i.name == code.lower()), None
    )
    if info is None:
        _fail(f"no rule `{code}` (see `gpulint rules`)")
        return
    if output_format == "json":
        click.echo(json.dumps(rule_to_dict(info), indent=2))
    else:
        click.echo(explain_text(info), nl=False)
