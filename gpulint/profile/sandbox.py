"""Reads a child process may make, bounded by the kernel (Linux Landlock), where it has one.

tfparse evaluates `file("../../x")` with no bound of its own; gpulint checks every such call
before it runs (terraform_tree), and on Linux 5.13 and later the child that runs it may also
read only the module's tree and what Python needs to start (its installation, the shared
libraries): a call the checks missed then fails instead of reading a secret. Where Landlock is
missing (another system, an older kernel, a kernel built without it) the checks alone stand.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Sequence
from typing import Any

# <linux/landlock.h>: the rights read-only access needs, and the syscalls (one number on
# every architecture: they are newer than the unified table).
_READ_FILE = 1 << 2
_READ_DIR = 1 << 3
_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38
#: What Python and the dynamic loader read to start, besides Python's own directories.
_SYSTEM = ("/lib", "/lib64", "/usr/lib", "/usr/lib64", "/usr/local/lib", "/etc/ld.so.cache")


def python_paths() -> list[str]:
    """The directories the Python running gpulint (and its packages) is read from."""
    found = {sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix}
    executable = os.path.realpath(sys.executable)
    found |= {os.path.dirname(executable), os.path.dirname(os.path.dirname(executable))}
    found |= {entry for entry in sys.path if entry and os.path.isabs(entry)}
    return sorted(found)


def read_only_to(paths: Iterable[str]) -> Callable[[], None] | None:
    """A function for `subprocess`'s preexec_fn that lets the child read only under `paths`
    (and what Python and the loader need), or None where Linux cannot bound it."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    # Version 1 and later: the ABI is asked with a null attribute and flag 1.
    if libc.syscall(_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(1)) < 1:
        return None
    allowed = [os.path.realpath(p) for p in (*paths, *python_paths(), *_SYSTEM)]
    kinds = [(path, os.path.isdir(path)) for path in allowed if os.path.exists(path)]

    def restrict() -> None:  # pragma: no cover - runs in the child between fork and exec
        _restrict(libc, kinds)

    return restrict


def _restrict(libc: Any, kinds: Sequence[tuple[str, bool]]) -> None:
    import ctypes

    handled = ctypes.c_uint64(_READ_FILE | _READ_DIR)
    ruleset = libc.syscall(
        _CREATE_RULESET, ctypes.byref(handled), ctypes.c_size_t(8), ctypes.c_uint32(0)
    )
    if ruleset < 0:
        raise OSError(ctypes.get_errno(), "cannot create a Landlock ruleset")

    class PathBeneath(ctypes.Structure):
        _pack_ = 1
        _fields_ = (("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32))

    for path, is_dir in kinds:
        try:
            descriptor = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            continue
        rights = _READ_FILE | _READ_DIR if is_dir else _READ_FILE
        rule = PathBeneath(rights, descriptor)
        libc.syscall(_ADD_RULE, ruleset, ctypes.c_int(_RULE_PATH_BENEATH), ctypes.byref(rule), 0)
        os.close(descriptor)
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "cannot set no_new_privs")
    if libc.syscall(_RESTRICT_SELF, ruleset, ctypes.c_uint32(0)) != 0:
        raise OSError(ctypes.get_errno(), "cannot restrict the child with Landlock")
    os.close(ruleset)
