"""Errors a user can hit: bad paths, bad configuration, bad profiles."""

from __future__ import annotations


class GpulintError(Exception):
    """A problem with gpulint's input that stops the run (exit code 2).

    The message is one line that names the file (and line) and what to do about it.
    """
