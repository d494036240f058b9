"""`python -m gpulint`, and `run`, the `gpulint` console script."""

from __future__ import annotations

import gc
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
    from gpulint.cli import main

    try:
        main()
    except ImportError as exc:
        if exc.name != "_ruamel_yaml":
            raise
        # A dependency that moved is the installation's problem: one line, as a usage error.
        print(f"gpulint: error: {exc.msg}", file=sys.stderr)
        sys.exit(2)
    finally:
        # The interpreter runs one last full collection as it exits, disabled collector or not:
        # frozen objects are left out of it, and everything the run built is about to go
        # anyway (another tenth of a pre-commit run).
        gc.freeze()


if __name__ == "__main__":
    run()
