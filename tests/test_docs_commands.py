"""Every `gpulint` command the README and docs/ show is one the CLI accepts as written.

The commands are taken from shell blocks and inline code; placeholders (`FILES`, `...`,
`[-n NAMESPACE ...]`) stand for paths or are optional. Each is parsed by the real command:
an option that does not exist, a value outside its choices or a command that is gone fails.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import click
import pytest

from gpulint.cli import main

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_SHELL_BLOCK = re.compile(r"^```(?:sh|bash|console|shell)\n(.*?)^```", re.M | re.S)
_INLINE = re.compile(r"`((?:\.venv/bin/)?gpulint [^`]+)`")
_CALL = re.compile(r"(?:^|&&|\||;|\$ )\s*(?:\.venv/bin/)?(gpulint\s.*?)(?=&&|\||;|$)")


def _commands() -> list[tuple[str, str]]:
    """(where, command) for every gpulint command line of the docs."""
    found: list[tuple[str, str]] = []
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        name = doc.relative_to(ROOT).as_posix()
        for block in _SHELL_BLOCK.findall(text):
            joined = block.replace("\\\n", " ")
            for line in joined.splitlines():
                line = re.sub(r"\s#\s.*$", "", line)
                found += [(name, m.group(1).strip()) for m in _CALL.finditer(line)]
        found += [(name, m.group(1)) for m in _INLINE.finditer(text)]
    return found


def _words(command: str) -> list[str]:
    """The arguments after `gpulint`, with the docs' placeholders made concrete."""
    command = re.sub(r"<\([^)]*\)", "rendered.yaml", command)  # process substitution
    command = re.sub(r"\[[^\[\]]*\]", "", command)  # optional parts: [-n NAMESPACE ...]
    # `...` stands for a value or more paths.
    return ["placeholder" if w.strip(".") == "" else w for w in shlex.split(command)[1:]]


def _option_named(command: click.Command, words: list[str]) -> bool:
    """An inline `gpulint check --profile`: the option named, its value told by the sentence."""
    if not words or not words[-1].startswith("--"):
        return False
    return any(
        words[-1] in p.opts and not p.is_flag for p in command.params if isinstance(p, click.Option)
    )


COMMANDS = _commands()


def test_the_docs_show_commands() -> None:
    assert len(COMMANDS) > 40
    assert {where for where, _ in COMMANDS} >= {"README.md", "docs/fix.md", "docs/profile.md"}


@pytest.mark.parametrize(("where", "command"), COMMANDS, ids=[c for _, c in COMMANDS])
def test_documented_command_parses(where: str, command: str) -> None:
    words = _words(command)
    command_object: click.Command = main
    path = ["gpulint"]
    while isinstance(command_object, click.Group) and words and not words[0].startswith("-"):
        sub = command_object.get_command(click.Context(command_object), words[0])
        assert sub is not None, f"{where}: `{command}`: no command `{words[0]}`"
        path.append(words.pop(0))
        command_object = sub
    if _option_named(command_object, words):
        words.append("placeholder")
    try:
        command_object.make_context(" ".join(path), words)
    except click.BadParameter as error:
        # A path the docs name as an example need not exist here; anything else is stale.
        assert isinstance(getattr(error.param, "type", None), click.Path), (
            f"{where}: `{command}`: {error.format_message()}"
        )
    except click.UsageError as error:
        pytest.fail(f"{where}: `{command}`: {error.format_message()}")
