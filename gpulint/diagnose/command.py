"""What `gpulint diagnose` does once its options are parsed: read, diagnose, render.

The command line (gpulint.cli) parses options and the connection, then calls `diagnose_report`
and prints what it returns.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from typing import TYPE_CHECKING

from gpulint.errors import GpulintError

if TYPE_CHECKING:
    from gpulint.live.client import ConnectionOptions

EXIT_CLEAN, EXIT_FINDINGS = 0, 1


@dataclass(frozen=True)
class DiagnoseRequest:
    """The options of one `gpulint diagnose` run."""

    arguments: Sequence[str] = ()  # dump files, and name filters
    profile_paths: Sequence[str] = ()
    pool_label: str | None = None
    namespaces: Sequence[str] = ()
    slow_threshold: str | None = None
    now: str | None = None
    output_format: str = "text"  # text, json or html
    timeline: bool = False  # the GPU time section (implied by prices, compare and html)
    prices: str | None = None
    compare: tuple[str, str] | None = None

    @property
    def gpu_time(self) -> bool:
        """Whether the report has the GPU time section."""
        return self.timeline or bool(self.prices or self.compare) or self.output_format == "html"


def diagnose_report(
    request: DiagnoseRequest, connection: ConnectionOptions | None = None
) -> tuple[str, int]:
    """The report and the exit status (1 when GPU pods are stuck); GpulintError, one line,
    for a bad input or a cluster that cannot be read."""
    from gpulint.diagnose.classify import diagnose
    from gpulint.diagnose.events import parse_time
    from gpulint.diagnose.extra import WorkloadSource
    from gpulint.diagnose.inputs import DUMP_COMMAND, is_dump_argument, parse_duration, read_dumps

    live = connection is not None
    files = () if live else tuple(d for d in request.arguments if is_dump_argument(d))
    names = tuple(d for d in request.arguments if d not in files)
    if not live and not files:
        raise GpulintError(f"give dump files ({DUMP_COMMAND}) or --live")
    threshold = parse_duration(request.slow_threshold) if request.slow_threshold else None
    moment = parse_time(request.now) if request.now else None
    prices = None
    if request.prices:
        from gpulint.diagnose.prices import read_prices

        prices = read_prices(request.prices)
    keep = request.compare or ()
    unread: tuple[str, ...] = ()  # what RBAC kept live mode from reading
    workloads = WorkloadSource.DUMP  # where Kueue's Workloads were looked for
    if connection is not None:
        from gpulint.diagnose.live import read_live

        live_objects = read_live(connection, request.pool_label, request.namespaces, keep_jobs=keep)
        gathered, cluster_profile = live_objects.documents, live_objects.profile
        unread = live_objects.notes
        workloads = live_objects.workloads
        # What a cluster answers is as of now: read time and report time are the same moment.
        moment = moment or datetime.now(timezone.utc)
    else:
        gathered, cluster_profile, _ = read_dumps(
            files, request.profile_paths, request.pool_label, keep
        )
    # A kubectl dump records no collection time (a List's metadata has none, and the newest
    # timestamp in it is the last thing that happened, not when it was read): only a
    # `# collected:` first line does; else the dump is judged as of the current time.
    source = "--now" if request.now else "the current time"
    if moment is None and gathered.collected is not None:
        moment, source = gathered.collected, "the dump's collection time"
    result = diagnose(
        gathered,
        cluster_profile,
        moment,
        namespaces=request.namespaces,
        names=names,
        pool_label=request.pool_label,
        workloads=workloads,
        now_source=source,
    )
    result = replace(result, notes=(*unread, *result.notes))
    gpu_time = None
    if request.gpu_time:
        from gpulint.diagnose.gputime import gpu_time as measure

        gpu_time = measure(gathered, result.now, request.pool_label, prices, request.compare)
    status = EXIT_FINDINGS if result.pods else EXIT_CLEAN
    return _render(result, gpu_time, request.output_format, threshold), status


def _render(result, gpu_time, output_format: str, threshold: int | None) -> str:  # type: ignore[no-untyped-def]
    from gpulint.output.diagnose import diagnosis_json, diagnosis_text

    if output_format == "text":
        text = diagnosis_text(result, threshold)
        if gpu_time is not None:
            from gpulint.output.gputime import gpu_time_text

            text += "\n" + gpu_time_text(gpu_time)
        return text
    report = diagnosis_json(result, threshold, gpu_time)
    if output_format == "html":
        from gpulint.output.diagnose_html import diagnosis_html

        return diagnosis_html(report)
    return report
