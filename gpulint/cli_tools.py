"""The commands other than `check`: `rules`, `explain`, `profile`, `diagnose` and `smoke`.

They are imported only when one of them runs, or when help lists them (`gpulint.cli`'s
group): a pre-commit run of `gpulint check` does not build their options.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

import click

from gpulint import cli_options
from gpulint.cli_io import EXIT_CLEAN, EXIT_USAGE
from gpulint.cli_io import FILE as _FILE
from gpulint.cli_io import PATH as _PATH
from gpulint.cli_io import emit as _emit
from gpulint.cli_io import fail as _fail
from gpulint.cli_io import live_options as _live_options
from gpulint.cli_io import noticed as _noticed
from gpulint.cli_io import wrote as _wrote
from gpulint.errors import GpulintError

if TYPE_CHECKING:
    from gpulint.live.client import ConnectionOptions
    from gpulint.profile.model import ClusterProfile


@click.command()
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["table", "json", "markdown", "docs"]),
    default="table",
    show_default=True,
    help="markdown: the README table; docs: docs/rules.md, every rule in full.",
)
def rules(output_format: str) -> None:
    """List every rule: code, name, default severity, summary."""
    from gpulint.catalogue import load_catalogue
    from gpulint.output.catalogue import rules_document, rules_json, rules_markdown, rules_table

    entries = list(load_catalogue().values())
    render = {
        "table": rules_table,
        "json": rules_json,
        "markdown": rules_markdown,
        "docs": rules_document,
    }
    click.echo(render[output_format](entries), nl=False)


@click.command()
@click.argument("code")
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text")
def explain(code: str, output_format: str) -> None:
    """Show a rule's documentation: why it matters, a failing example and its fix."""
    import json

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


@click.group()
def profile() -> None:
    """Build and inspect the cluster profile the placement rules check against."""


_PROFILE_INPUTS_HELP = (
    "Inputs: ClusterProfile, kubectl dump (kind: List), Kueue queues, eksctl ClusterConfig, "
    "Karpenter NodePools, Cluster API MachineDeployments, Terraform (.tf or a module directory)."
)


@profile.command("import")
@click.argument("files", nargs=-1, required=True, type=_PATH)
@click.option("-o", "--output", type=_FILE, help="Write the profile here.")
@click.option("--pool-label", help="Node label that names a node's pool (kubectl dumps).")
def profile_import(files: tuple[str, ...], output: str | None, pool_label: str | None) -> None:
    """Merge FILES (later wins) into one ClusterProfile; print it, or write it with -o."""
    from gpulint.profile import load_profiles
    from gpulint.profile.dump import dump_profile

    try:
        imported = load_profiles(files, pool_label)
    except GpulintError as exc:
        _fail(str(exc))
        return
    _emit(dump_profile(imported), output, "profile")
    _wrote(output, _profile_written(imported))


@profile.command("show")
@click.option(
    "--profile",
    "profile_paths",
    multiple=True,
    type=_PATH,
    help=f"Profile input; repeatable (default: the config file's `clusters:`). "
    f"{_PROFILE_INPUTS_HELP}",
)
@click.option("--pool-label", help="Node label that names a node's pool (kubectl dumps).")
@click.option("--config", "config_path", type=_PATH, help="Config file whose `clusters:` to show.")
def profile_show(
    profile_paths: tuple[str, ...], pool_label: str | None, config_path: str | None
) -> None:
    """Print the pools, admission facts, quotas and priorities gpulint believes the cluster has
    (each named cluster's, with --profile NAME=FILE or the config file's `clusters:`)."""
    from gpulint.profile import load_profiles
    from gpulint.profile.show import show_profile

    cwd = os.getcwd()
    try:
        clusters = (
            cli_options.named_clusters(profile_paths)
            if profile_paths
            else _config_clusters(config_path, "profile show")
        )
        if clusters:
            from gpulint.clusters import show_clusters

            text = show_clusters(clusters, pool_label, cwd)
        else:
            text = show_profile(load_profiles(profile_paths, pool_label), cwd)
    except GpulintError as exc:
        _fail(str(exc))
        return
    from gpulint.output.escape import text_block

    # Pool names, labels and taints come from the cluster: shown escaped.
    click.echo(text_block(text, limit=len(text)), nl=False)


@profile.command("validate")
@click.argument("files", nargs=-1, type=_PATH)
@click.option("--pool-label", help="Node label that names a node's pool (kubectl dumps).")
@click.option("--config", "config_path", type=_PATH, help="Config file whose `clusters:` to check.")
def profile_validate(
    files: tuple[str, ...], pool_label: str | None, config_path: str | None
) -> None:
    """Check that each of FILES (default: every input of the config file's `clusters:`) is a
    profile input --profile accepts; exit 2 if one is not.

    Prints one `file:line:col: problem` line per invalid file (the pre-commit hook's check),
    and on standard error how many were valid.
    """
    from gpulint.output.escape import one_line
    from gpulint.profile.load import profile_problems

    if files:
        groups = {"": files}
    else:
        try:
            groups = dict(_config_clusters(config_path, "profile validate"))
        except GpulintError as exc:
            _fail(str(exc))
            return
    problems = []
    for name, paths in groups.items():
        found = profile_problems(paths, pool_label)
        problems += [f"cluster {name}: {p}" if name else p for p in found]
    for problem in problems:
        click.echo(one_line(problem))
    total = sum(len(paths) for paths in groups.values())
    valid = total - len(problems)
    inputs = f"{valid} of {total} profile input{'' if total == 1 else 's'}"
    click.echo(f"gpulint: {inputs} valid", err=True)
    sys.exit(EXIT_USAGE if problems else EXIT_CLEAN)


def _config_clusters(config_path: str | None, command: str) -> dict[str, tuple[str, ...]]:
    """The config file's `clusters:`, their inputs named relative to the working directory
    when inside it (as messages then name them); an error when it has none."""
    from gpulint.loader import display_path

    config = cli_options.run_config(config_path, False, warn=_noticed)
    if not config.clusters:
        where = config.path or "no config file (.gpulint.yaml) found"
        raise GpulintError(
            f"{command} needs --profile FILE, or `clusters:` in the config file ({where})"
        )
    cwd = os.getcwd()
    return {
        name: tuple(display_path(p, cwd) for p in paths) for name, paths in config.clusters.items()
    }


def _profile_written(written: ClusterProfile) -> str:
    pools = len(written.pools)
    named = f" {written.name}" if written.name else ""
    return f"the ClusterProfile{named} ({pools} pool{'' if pools == 1 else 's'})"


@profile.command("snapshot")
@click.option("-o", "--output", type=_FILE, help="Write the profile here.")
@click.option("--pool-label", help="Node label that names a node's pool.")
@_live_options
def profile_snapshot(
    output: str | None,
    pool_label: str | None,
    kube_context: str | None,
    kubeconfig: str | None,
    request_timeout: float | None,
) -> None:
    """Read the cluster from the Kubernetes API and write its ClusterProfile (lint offline)."""
    from gpulint.profile.dump import dump_profile

    try:
        from gpulint.live.session import open_live

        cluster = open_live(
            cli_options.connection(kube_context, kubeconfig, request_timeout), pool_label
        )
    except ImportError:
        _fail("live mode needs the Kubernetes client: pip install 'gpulint[live]'")
        return
    except GpulintError as exc:
        _fail(str(exc))
        return
    cluster.close()
    from gpulint.output.escape import one_line

    for note in cluster.notes:
        click.echo(f"gpulint: note: {one_line(note)}", err=True)
    text = dump_profile(cluster.profile)
    _emit(text, output, "profile")
    _wrote(output, _profile_written(cluster.profile))


def _live_connection(
    live: bool,
    profile_paths: Sequence[str],
    kube_context: str | None,
    kubeconfig: str | None,
    request_timeout: float | None,
) -> ConnectionOptions | None:
    """How --live reaches the cluster (None without --live), once the options agree."""
    flags = {
        "--context": kube_context,
        "--kubeconfig": kubeconfig,
        "--request-timeout": request_timeout,
    }
    cli_options.check_live_flags(live, profile_paths, flags)
    return cli_options.connection(kube_context, kubeconfig, request_timeout) if live else None


@click.command()
@click.argument("dumps", nargs=-1, type=_PATH)
@click.option(
    "--profile",
    "profile_paths",
    multiple=True,
    type=_PATH,
    help=f"Cluster profile input besides the dumps; repeatable. {_PROFILE_INPUTS_HELP}",
)
@click.option("--pool-label", help="Node label that names a node's pool (kubectl dumps).")
@click.option(
    "--live",
    is_flag=True,
    help="Read pods, events, jobs, Kueue Workloads, DRA objects and the profile from the cluster.",
)
@click.option(
    "-n",
    "--namespace",
    "namespaces",
    multiple=True,
    help="Only this namespace; repeatable. With --live, only its objects are read, so a "
    "namespaced Role is enough.",
)
@click.option(
    "--slow-threshold",
    help="List the GPU pods that took longer than this to schedule (90s, 5m, 1h30m).",
)
@click.option(
    "--now",
    help="Measure pending time up to this RFC 3339 time (default: the dump's newest "
    "timestamp; with --live, the current time).",
)
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json", "html"]),
    default="text",
    show_default=True,
    help="html: one self-contained page, with the GPU time section.",
)
@click.option(
    "--timeline",
    is_flag=True,
    help="Add where GPU pods' time went: phases per pod, workload and pool, GPU time before "
    "the first container start, GPU-hours per Job.",
)
@click.option(
    "--prices",
    type=_PATH,
    help="CSV of hourly node prices (SkyPilot's or OpenCost's columns): cost per run of Jobs "
    "(implies --timeline).",
)
@click.option(
    "--compare",
    nargs=2,
    metavar="JOB_A JOB_B",
    help="A CPU and a GPU variant of a Job: speedup, break-even speedup and which costs less "
    "per run (implies --timeline).",
)
@click.option("-o", "--output", type=_FILE, help="Write the report here.")
@_live_options
def diagnose(
    dumps: tuple[str, ...],
    profile_paths: tuple[str, ...],
    pool_label: str | None,
    live: bool,
    namespaces: tuple[str, ...],
    slow_threshold: str | None,
    now: str | None,
    output_format: str,
    timeline: bool,
    prices: str | None,
    compare: tuple[str, str] | None,
    output: str | None,
    kube_context: str | None,
    kubeconfig: str | None,
    request_timeout: float | None,
) -> None:
    """Explain why GPU pods are Pending now, from DUMPS of the cluster.

    One dump holds everything diagnose reads (leave out the kinds your cluster does not serve):

    \b
    kubectl get pods,events,replicasets,jobs,nodes,resourcequotas,\\
    workloads,localqueues,resourceclaims,resourceclaimtemplates,deviceclasses,\\
    resourceslices -A -o yaml > dump.yaml

    Arguments that are not files are name filters (a substring, or a glob with * ? [) on
    the pod, job or owner name; with --live, every argument is one.
    """
    from gpulint.diagnose.command import DiagnoseRequest, diagnose_report

    request = DiagnoseRequest(
        dumps, profile_paths, pool_label, namespaces, slow_threshold, now, output_format,
        timeline, prices, compare,
    )  # fmt: skip
    try:
        connection = _live_connection(
            live, profile_paths, kube_context, kubeconfig, request_timeout
        )
        report, status = diagnose_report(request, connection)
    except GpulintError as exc:
        _fail(str(exc))
        return
    _emit(report, output, "report")
    _wrote(output, f"the {output_format} report")
    sys.exit(status)


@click.command()
@click.option(
    "--profile",
    "profile_paths",
    multiple=True,
    type=_PATH,
    help=f"Cluster profile input; repeatable. {_PROFILE_INPUTS_HELP}",
)
@click.option("--pool-label", help="Node label that names a node's pool (kubectl dumps).")
@click.option("--live", is_flag=True, help="Read the cluster profile from the Kubernetes API.")
@click.option("--pool", "pool_name", help="Only this pool (default: every GPU pool).")
@click.option(
    "-n", "--namespace", help="Namespace of the Jobs (default: the profile's, else default)."
)
@click.option("--image", help="Image of the check instead of the vendor's.")
@click.option(
    "--command", "command", help="Check command instead of the vendor's (split like a shell)."
)
@click.option("-o", "--output", type=_FILE, help="Write the Jobs here.")
@_live_options
def smoke(
    profile_paths: tuple[str, ...],
    pool_label: str | None,
    live: bool,
    pool_name: str | None,
    namespace: str | None,
    image: str | None,
    command: str | None,
    output: str | None,
    kube_context: str | None,
    kubeconfig: str | None,
    request_timeout: float | None,
) -> None:
    """Write a smoke-test Job per GPU pool: one GPU, its labels and taints, a device check."""
    import shlex

    from gpulint.smoke import SmokeOptions, dump_jobs, smoke_jobs

    try:
        connection = _live_connection(
            live, profile_paths, kube_context, kubeconfig, request_timeout
        )
        if connection is not None:
            from gpulint.live.session import open_live

            cluster = open_live(connection, pool_label)
            cluster.close()
            cluster_profile = cluster.profile
        elif profile_paths:
            from gpulint.api import read_profile

            cluster_profile = read_profile(profile_paths, pool_label)
        else:
            raise GpulintError("smoke needs the cluster's pools: pass --profile FILE or --live")
        try:
            argv = tuple(shlex.split(command)) if command else ()
        except ValueError as exc:
            raise GpulintError(f"--command: {exc}") from None
        options = SmokeOptions(namespace, image, argv)
        result = smoke_jobs(cluster_profile, pool_name, options)
    except GpulintError as exc:
        _fail(str(exc))
        return
    from gpulint.output.escape import one_line

    for note in result.skipped:
        click.echo(f"gpulint: note: skipped {one_line(note)}", err=True)
    _emit(dump_jobs(result.jobs), output, "smoke Jobs")
    jobs = len(result.jobs)
    _wrote(output, f"{jobs} smoke-test Job{'' if jobs == 1 else 's'}")
