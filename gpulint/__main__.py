"""`python -m gpulint`, and `run`, the `gpulint` console script."""

from __future__ import annotations

import gc


def run() -> None:
    """Start the `gpulint` command with the cyclic garbage collector off.

    One run is a short-lived process: importing gpulint and its libraries creates thousands of
    classes, functions and dictionaries, and the collector would traverse them all again and
    again while nothing of it is garbage (about a tenth of a pre-commit run). lint() pauses the
    collector while it loads anyway.
    """
    gc.disable()
    from gpulint.cli import main

    main()


if __name__ == "__main__":
    run()
