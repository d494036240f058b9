"""The syntax of a suppression: `# gpulint: ignore[GPU601, rule-name: reason]` comments and
the lists of the `gpulint.io/ignore` annotation; read by the loader, written by `--add-ignore`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from gpulint.fields import shown

#: A `# gpulint:` comment (after a blank or at a line start) and the rest of its line.
SUPPRESSION = r"(?m)(?:^|[ \t])#[ \t]*gpulint:[ \t]*([^\n]*)"
_SELECTOR_SPLIT = r"[\s,]+"
_IGNORE = r"ignore(?![-\w])"
_NEXT_DIRECTIVE = r"\s+#\s*[\w.-]+:"
# What may follow a suppression on its line: a reason, or another comment.
_REASON_LEAD = (":", "--", "\u2014", "#")


def parse_ignore_list(text: str) -> tuple[tuple[str, ...], str]:
    """`GPU601, gpu-limit-request-mismatch: why` -> the selectors as written, and the reason.

    The reason is everything after the first colon (it may hold commas); selectors are
    separated by commas or spaces.
    """
    names, _, reason = text.partition(":")
    return tuple(s for s in re.split(_SELECTOR_SPLIT, names) if s), reason.strip()


def parse_comment(rest: str) -> tuple[tuple[str, ...], str, str | None]:
    """What follows `# gpulint:` on a line -> (selectors, reason, problem or None).

    `ignore` alone suppresses every rule; `ignore[LIST]` those of the list (see
    `parse_ignore_list`). A reason may also follow, after `:` or `--`. Anything else is a
    problem: a suppression that does not say what it means suppresses nothing.
    """
    # Another tool's comment may follow on the line (`# expect: ...`, a linter's directive).
    rest = re.split(_NEXT_DIRECTIVE, rest, maxsplit=1)[0].rstrip()
    keyword = re.match(_IGNORE, rest)
    if keyword is None:
        found = shown(rest.split()[0] if rest.split() else rest)
        return (), "", f'expected "ignore" after "gpulint:", found "{found}"'
    after = rest[keyword.end() :]
    selectors: tuple[str, ...] = ()
    reason = ""
    if after.startswith("["):
        close = after.find("]")
        if close < 0:
            return (), "", f'"{shown(rest)}": the "[" is never closed'
        selectors, reason = parse_ignore_list(after[1:close])
        if not selectors:
            return (), "", f'"{shown(rest)}" names no rule: write "ignore" to suppress every rule'
        after = after[close + 1 :]
    tail = after.strip()
    if tail and not tail.startswith(_REASON_LEAD):
        return (
            (),
            "",
            (
                f'"{shown(rest)}": put the codes or names in brackets, '
                f'"ignore[{shown(tail.split()[0])}]", and a reason after a colon'
            ),
        )
    if tail.startswith((":", "--", "\u2014")) and not reason:
        reason = tail.lstrip(":-\u2014 ").strip()
    return selectors, reason, None


def ignore_comment(codes: Sequence[str]) -> str:
    """The comment that suppresses `codes` on its line."""
    return f"# gpulint: ignore[{', '.join(codes)}]"


def added_to_line(line: str, codes: Sequence[str]) -> tuple[int, str] | str:
    """Where (a column offset into `line`) and what to insert so that `line` suppresses
    `codes` too; or why it cannot.

    A line without a suppression gains one at its end; one whose suppression lists rules gains
    the codes it lacks in that list (its reason kept).
    """
    # The last one counts, as the loader reads them.
    found = next(reversed(list(re.finditer(SUPPRESSION, line))), None)
    if found is None:
        gap = "" if line.endswith((" ", "\t")) else "  "
        return len(line), f"{gap}{ignore_comment(codes)}"
    rest = found.group(1)
    selectors, _, problem = parse_comment(rest.rstrip())
    if problem is not None:
        return "the line holds a malformed suppression (GPU006): correct it first"
    if not selectors:
        return "the line's suppression already covers every rule"
    written = {s.upper() for s in selectors}
    missing = [c for c in codes if c.upper() not in written]
    if not missing:
        return "the line's suppression already lists the codes"
    opening = found.start(1) + rest.index("[")
    names = line[opening + 1 : line.index("]", opening)].partition(":")[0]
    return opening + 1 + len(names.rstrip()), f", {', '.join(missing)}"
