"""Text a manifest, a file name or an API server controls, made safe for where it is printed.

Such text may hold anything: newlines and `::error` lines that a CI runner reads as workflow
commands, terminal escape sequences, HTML, characters XML 1.0 cannot hold, a key of a
megabyte. Every formatter passes finding text through these functions: each cuts the text to
a bounded length (ending in `…`) and escapes what the output it lands in would interpret.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

#: The most characters of a message, a fix or a note that are printed.
MAX_TEXT = 2000
#: The most characters of a name (an object, a Helm template) that are printed. Kubernetes
#: names are at most 253 characters.
MAX_NAME = 300
ELLIPSIS = "…"

# C0 and C1 control characters and DEL (terminal escapes, carriage returns, NEL), line and
# paragraph separators, the bidirectional overrides that reorder what a terminal shows, and
# lone surrogates (a file name that is not UTF-8) that no output encoding can write.
# Compiled on first use (re caches it): most text is printable ASCII, which needs no pattern.
_CONTROL = "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]"
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
# A runner reads a line as a workflow command when it starts with `::` after leading spaces.
# (Compiled on first use: only a text holding `::` is searched.)
_COMMAND_START = r"(?m)^(\s*)::"
# Characters XML 1.0 cannot hold at all (even as references), besides the controls above.
_NOT_XML = "[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]"
# Backslash, code, emphasis, links and images, table cells, strikethrough. (Compiled on first
# use: only Markdown output escapes them.)
_MARKDOWN_SPECIAL = r"([\\`*_\[\]|~])"


def cut(text: str, limit: int = MAX_TEXT) -> str:
    """`text`, or its first `limit` - 1 characters and `…` when it is longer."""
    return text if len(text) <= limit else text[: limit - 1] + ELLIPSIS


def _controls(text: str, replace: Callable[[re.Match[str]], str]) -> str:
    """`text` with each control character replaced by `replace(match)`."""
    if text.isascii() and text.isprintable():  # the common case: nothing to escape
        return text
    return re.sub(_CONTROL, replace, text)


def _escaped(match: re.Match[str]) -> str:
    char = match.group()
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def escape_controls(text: str) -> str:
    """`text` with every control character shown escaped (`\\n`, `\\x1b`), nothing cut."""
    return _controls(text, _escaped)


def no_command(text: str) -> str:
    """`text` with the first `:` of a line that would start with `::` shown as `\\x3a`."""
    return re.sub(_COMMAND_START, r"\1\\x3a:", text) if "::" in text else text


def one_line(text: str, limit: int = MAX_TEXT) -> str:
    """Plain-text output: cut, every control character (newlines too) shown escaped (`\\n`,
    `\\x1b`), and no `::` where a line starts."""
    return no_command(_controls(cut(text, limit), _escaped))


def text_block(text: str, limit: int = MAX_TEXT) -> str:
    """Like one_line, but line breaks stay line breaks (a block of YAML to paste)."""
    lines = cut(text, limit).split("\n")
    return no_command("\n".join(_controls(line, _escaped) for line in lines))


def diff_text(text: str, names: Iterable[str] = ()) -> str:
    """A unified diff to print: each line's controls shown escaped but a tab (and the CR of a
    CRLF line break, which shows nothing), and no `::` where a line starts, so that an echoed
    manifest line is neither a terminal escape nor a workflow command. The file `names` of its
    `---`/`+++` headers are shown as one_line shows them (a line break in a name stays in its
    header). Nothing else is cut: the diff is the fix to review."""
    for name in names:
        if not (name.isascii() and name.isprintable()):
            shown = one_line(name, limit=len(name) * 6 + 1)  # no cut: escaped, at most 6 each
            for mark in ("---", "+++"):
                text = text.replace(f"\n{mark} {name}\n", f"\n{mark} {shown}\n")
                if text.startswith(f"{mark} {name}\n"):
                    text = f"{mark} {shown}\n" + text[len(mark) + len(name) + 2 :]
    lines = text.split("\n")
    return no_command("\n".join(_controls_but_crlf(line) for line in lines))


def _controls_but_crlf(line: str) -> str:
    if line.endswith("\r"):
        return _controls(line[:-1], _keep_tab) + "\r"
    return _controls(line, _keep_tab)


def xml_text(text: str, limit: int = MAX_TEXT) -> str:
    """XML 1.0 content or attribute value: cut, controls but tab and newline shown escaped.

    The XML writer escapes `<`, `&` and quotes; what it cannot do is write a character XML
    1.0 does not allow at all.
    """
    lines = cut(text, limit).split("\n")
    escaped = "\n".join(_controls(line, _keep_tab) for line in lines)
    return re.sub(_NOT_XML, _escaped, escaped)


def _keep_tab(match: re.Match[str]) -> str:
    return "\t" if match.group() == "\t" else _escaped(match)


def markdown(text: str, limit: int = MAX_TEXT) -> str:
    """Text in a Markdown table cell: no HTML, no link or emphasis, no cell break.

    Pairs of backticks stay code spans (inside one, Markdown shows everything as written);
    line breaks outside them become `<br>`, the one piece of HTML a cell may hold.
    """
    text = cut(text, limit)
    parts = text.split("`")
    if len(parts) % 2 == 0 or "``" in text:  # not plain pairs: every backtick is text
        return _markdown_text(text)
    return "`".join(
        _markdown_text(part) if index % 2 == 0 else _controls(part, _escaped).replace("|", "\\|")
        for index, part in enumerate(parts)
    )


def _markdown_text(text: str) -> str:
    return "<br>".join(_markdown_line(line) for line in text.replace("\r\n", "\n").split("\n"))


def _markdown_line(line: str) -> str:
    safe = _controls(line, _escaped)
    safe = safe.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return re.sub(_MARKDOWN_SPECIAL, r"\\\1", safe)


def markdown_code(text: str, limit: int = MAX_TEXT) -> str:
    """Text as a Markdown code span in a table cell: backticks fence it whatever it holds."""
    safe = one_line(text, limit).replace("|", "\\|")
    fence = "`" * (max((len(run) for run in re.findall("`+", safe)), default=0) + 1)
    pad = " " if safe.startswith("`") or safe.endswith("`") else ""
    return f"{fence}{pad}{safe}{pad}{fence}"
