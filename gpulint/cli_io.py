"""What the `gpulint` commands print and write: reports to standard output or a file
(replaced whole), warnings and errors on standard error, escaped; usage errors exit 2. And the
option types and options several commands share."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

import click

EXIT_CLEAN, EXIT_USAGE = 0, 2

Command = TypeVar("Command", bound=Callable[..., Any])

# One instance of each path type for every option: click looks up the translation of the
# type's name each time one is made, which costs a start more than all its options otherwise.
PATH = click.Path()
FILE = click.Path(dir_okay=False)
DIRECTORY = click.Path(file_okay=False)


def option_group(*options: Callable[[Any], Any]) -> Callable[[Command], Command]:
    """One decorator for options several commands share, listed in --help in the order given."""

    def add(command: Command) -> Command:
        for option in reversed(options):
            command = option(command)
        return command

    return add


#: --context, --kubeconfig, --request-timeout: how live mode reaches the cluster.
live_options = option_group(
    click.option("--context", "kube_context", help="kubeconfig context (default: current)."),
    click.option(
        "--kubeconfig",
        type=FILE,
        help="kubeconfig file (default: $KUBECONFIG, else ~/.kube/config).",
    ),
    click.option(
        "--request-timeout",
        type=click.FloatRange(min=0, min_open=True),
        help="Seconds each Kubernetes API request may take in all (default: 10); a run "
        "stops after 60 times this.",
    ),
)


def fail(message: str) -> None:
    from gpulint.output.escape import one_line

    # The message may quote a file name or a server's answer: one line, escaped, bounded.
    click.echo(f"gpulint: error: {one_line(message)}", err=True)
    sys.exit(EXIT_USAGE)


def emit(text: str | Iterable[str], output: str | None, what: str, color: bool = False) -> None:
    """Print `text` (or its pieces), or write it to the file `output` (exit 2 naming the file
    if that fails; a file is replaced whole or not at all)."""
    pieces = (text,) if isinstance(text, str) else text
    if output is not None:
        write_file(output, pieces, what)
        return
    try:
        for piece in pieces:
            # click strips ANSI codes from non-TTY output unless told otherwise: --color
            # always must survive a pipe.
            click.echo(piece, nl=False, color=color)
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader went away (`| head -1`): what it did not read is not an error, and the
        # exit code stays the run's.
        silence_stdout()
    except OSError as exc:
        silence_stdout()
        fail(f"cannot write the {what} to standard output: {exc.strerror}")


def silence_stdout() -> None:
    """Point standard output at /dev/null, so the flush at exit has nowhere to fail."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def write_file(output: str, pieces: Iterable[str], what: str) -> None:
    """Write `pieces` to a new file next to `output`, then rename it over `output`: a full disk
    leaves the old file (or none), never half a report. A device or pipe is written to."""
    import stat
    import tempfile

    try:
        mode = os.stat(output).st_mode
    except OSError:
        mode = None
    try:
        if mode is not None and not stat.S_ISREG(mode):
            with open(output, "w", encoding="utf-8") as stream:
                stream.writelines(pieces)
            return
        directory = os.path.dirname(os.path.abspath(output))
        descriptor, temporary = tempfile.mkstemp(dir=directory, prefix=".gpulint-", suffix=".tmp")
    except OSError as exc:
        fail(f"{output}: cannot write {what}: {exc.strerror}")
        return
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as stream:
            stream.writelines(pieces)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, stat.S_IMODE(mode) if mode is not None else 0o666 & ~umask)
        os.replace(temporary, output)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        if isinstance(exc, OSError):
            fail(f"{output}: cannot write {what}: {exc.strerror}")
        raise


def use_color(choice: str, stream_is_tty: bool) -> bool:
    if choice == "always":
        return True
    if choice == "never" or os.environ.get("NO_COLOR"):
        return False
    return stream_is_tty


def append(path: str, text: str, what: str) -> None:
    try:
        with open(path, "a", encoding="utf-8") as stream:
            stream.write(text)
    except OSError as exc:
        fail(f"{path}: cannot write {what}: {exc.strerror}")


def noticed(note: str) -> None:
    click.echo(f"gpulint: warning: {note}", err=True)


def warn(message: str) -> None:
    from gpulint.output.escape import one_line

    click.echo(f"gpulint: warning: {one_line(message)}", err=True)


def wrote(output: str | None, what: str) -> None:
    """Say on standard error what a command wrote to the file `output` (nothing without one)."""
    if output is None:
        return
    from gpulint.output.escape import one_line

    click.echo(f"gpulint: wrote {what} to {one_line(output)}", err=True)
