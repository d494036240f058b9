"""`python -m gpulint`, and `run`, the `gpulint` console script."""

from __future__ import annotations

import gc
import os
import sys


def run() -> None:
    """Start the `gpulint` command with the cyclic garbage collector off.

    One run is a short-lived process: importing gpulint and its libraries creates thousands of
    classes, functions and dictionaries, and the collector would traverse them all again and
    again while nothing of it is garbage (about a tenth of a pre-commit run); loading builds
    millions of small acyclic objects more. lint() itself leaves the collector as its caller
    set it.
    """
    gc.disable()
    _import_pathlib_alone()
    from gpulint.cli import main

    try:
        main()
    except ImportError as exc:
        if exc.name != "_ruamel_yaml":
            raise
        # A dependency that moved is the installation's problem: one line, as a usage error.
        print(f"gpulint: error: {exc.msg}", file=sys.stderr)
        sys.exit(2)
    except SystemExit as exc:
        exit_now(exc.code)
        raise
    finally:
        # The interpreter runs one last full collection as it exits, disabled collector or not:
        # frozen objects are left out of it, and everything the run built is about to go
        # anyway (another tenth of a pre-commit run).
        gc.freeze()


def _import_pathlib_alone() -> None:
    """Import pathlib without urllib.parse, which it imports (with ipaddress) for
    `Path.as_uri` alone: 7 million instructions, a fiftieth of a pre-commit run that never
    makes a URI. While pathlib is imported, `urllib.parse` names a module holding only the
    function pathlib takes from it, which imports the real module when first called (a SARIF
    report's root URI); then the name is dropped, so every later import gets the real module.
    Nothing changes when either module is already imported.
    """
    if "pathlib" in sys.modules or "urllib.parse" in sys.modules:
        return
    import types

    def quote_from_bytes(*args: object, **kwargs: object) -> str:
        from urllib.parse import quote_from_bytes

        return quote_from_bytes(*args, **kwargs)  # type: ignore[arg-type]

    stand_in = types.ModuleType("urllib.parse")
    stand_in.quote_from_bytes = quote_from_bytes  # type: ignore[attr-defined]
    sys.modules["urllib.parse"] = stand_in
    try:
        import pathlib  # noqa: F401
    finally:
        if sys.modules.get("urllib.parse") is stand_in:
            del sys.modules["urllib.parse"]


def exit_now(code: object) -> None:
    """End the process with the status `SystemExit(code)` gives, without tearing down the
    interpreter; return (for a normal exit) when something is still to run at exit.

    Clearing every module and object of a run at exit costs a pre-commit run about 7M
    instructions (a fiftieth of it) and does nothing a finished command needs. What it would
    do is done here, or the normal exit is taken: the standard streams are flushed (a failure,
    such as a closed pipe, is left to the normal exit to report), and a run that registered an
    exit handler (a worker pool) or left another thread running exits normally.
    """
    import atexit

    handlers = getattr(atexit, "_ncallbacks", None)  # CPython's count of exit handlers
    if handlers is None or handlers() or _other_threads():
        return
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:  # reported, as Python reports it, by the normal exit
        return
    if code is None:
        status = 0
    elif isinstance(code, int):
        status = code
    else:  # `sys.exit("message")`: the message on stderr, status 1
        try:
            print(code, file=sys.stderr, flush=True)
        except Exception:
            return
        status = 1
    os._exit(status & 0xFF)


def _other_threads() -> bool:
    """Whether a thread besides the main one is alive (the normal exit waits for it)."""
    threading = sys.modules.get("threading")
    return threading is not None and threading.active_count() > 1


if __name__ == "__main__":
    run()
