"""From a position in a rendered stream back to the file the author edits.

Only exact origins are used:

- a value from a values file: the values file is changed at that one scalar (same length, so
  nothing else moves) and the chart rendered again; if exactly the characters at the finding's
  position change to the new text, they come from that scalar;
- text written literally in a template: the rendered line matches exactly one line of the
  template named by `# Source:` (its `{{ }}` actions standing for any text), and the finding's
  characters lie in that line's literal start;
- kustomize: the same object, field path and value in exactly one patch, else in exactly one
  resource file (`gpulint.render.kustomize`).

Anything else stays unmapped: the finding names the template (or the overlay) at line 1, and
carries the rendered position.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from gpulint.errors import GpulintError
from gpulint.findings import Finding, RenderedAt
from gpulint.render.confine import is_inside, read_text
from gpulint.render.helm import HelmRender, render_chart
from gpulint.render.tokens import TextIndex, Token, tokens
from gpulint.render.tools import RenderRun, RenderTimeout
from gpulint.views import NamedTuple

#: Values-file scalars tried per finding at most; more equal candidates mean a common word
#: ("1", "true"), and each try is a render.
MAX_CANDIDATES = 6
_ACTION = re.compile(r"\{\{.*?\}\}")


class Location(NamedTuple):
    """A position in a file the author edits."""

    path: str
    line: int
    column: int


@dataclass(frozen=True)
class HelmOrigin:
    """How to trace findings of one chart render back to values files and templates."""

    request: HelmRender
    label: str  # what the render is called in reports
    chart_path: str  # the chart directory as reported
    cache_dir: Path | None = None
    trace_values: bool = True  # False: the values files of the render are not known
    run: RenderRun | None = None  # shared with the render: the same tree and time budget

    def locate(self, findings: Sequence[Finding], rendered: str) -> list[Finding]:
        """`findings` (at positions of `rendered`) moved to the files the author edits."""
        if not findings:
            return []
        index, found = tokens(rendered)
        values = _ValuesFiles.read(self.request) if self.trace_values else None
        located = []
        for finding in findings:
            at = RenderedAt(self.label, finding.line, finding.column)
            token = found.get((finding.line, finding.column))
            where = None
            if token is not None and values is not None:
                where = self._from_values(token, rendered, values)
            if where is None:
                where = self._from_template(finding, index, token)
            if where is None and token is not None:
                where = self._from_template_text(finding, token)
            if where is None:
                where = Location(self._template_path(finding.source) or self.label, 1, 1)
            located.append(
                replace(
                    finding,
                    path=where.path,
                    line=where.line,
                    column=where.column,
                    rendered=at,
                    edits=(),
                    applicability=None,
                )
            )
        return located

    def _template_path(self, source: str | None) -> str | None:
        """`trainer/templates/x.yaml` (Helm's `# Source:`) as a path under the chart."""
        if not source or "/" not in source:
            return None
        path = os.path.normpath(os.path.join(self.chart_path, source.split("/", 1)[1]))
        # The comment is text the chart prints: it may name any file (`x/../../etc/...`).
        return path if is_inside(path, Path(self.chart_path)) else None

    def _from_template(
        self, finding: Finding, index: TextIndex, token: Token | None
    ) -> Location | None:
        path = self._template_path(finding.source)
        if path is None:
            return None
        template = read_text(path)
        if template is None:
            return None
        rendered_line = index.line(finding.line)
        body = rendered_line.lstrip(" ")
        start = finding.column - 1 - (len(rendered_line) - len(body))
        width = len(token.text) if token is not None else 1
        if start < 0:
            return None
        matches = []
        for number, line in enumerate(template.split("\n"), start=1):
            text = line.lstrip(" ")
            parts = _ACTION.split(text)
            literal = parts[0]
            if start + width > len(literal) or "{{" in literal:
                continue
            pattern = ".*?".join(re.escape(part) for part in parts)
            if re.fullmatch(pattern, body):
                matches.append((number, len(line) - len(text) + start + 1))
        if len(matches) != 1:
            return None
        line, column = matches[0]
        return Location(path, line, column)

    def _from_template_text(self, finding: Finding, token: Token) -> Location | None:
        """The one place the template spells the rendered text, inside an action or not
        (`dict "amd.com/gpu" ...` renders the key `amd.com/gpu`): where a line built by
        template logic is written, when no literal line of the template renders it."""
        path = self._template_path(finding.source)
        if path is None or len(token.text) < 3 or not any(c.isalpha() for c in token.text):
            return None
        template = read_text(path)
        if template is None or template.count(token.text) != 1:
            return None
        before = template[: template.index(token.text)]
        line = before.count("\n") + 1
        return Location(path, line, len(before) - (before.rfind("\n") + 1) + 1)

    def _from_values(self, token: Token, rendered: str, values: _ValuesFiles) -> Location | None:
        if not any(c.isalnum() for c in token.text):
            return None
        candidates = [
            (number, candidate)
            for number, (_, _, file_tokens) in reversed(list(enumerate(values.files)))
            for candidate in file_tokens
            if candidate.text == token.text
        ]
        if not candidates or len(candidates) > MAX_CANDIDATES:
            return None
        for number, candidate in candidates:
            if self._changes(values, number, candidate, token, rendered):
                path = values.files[number][0]
                line, column = candidate.pos
                return Location(path, line, column)
        return None

    def _changes(
        self, values: _ValuesFiles, number: int, candidate: Token, token: Token, rendered: str
    ) -> bool:
        """Whether changing `candidate` changes exactly the rendered characters of `token`."""
        mark = sentinel(candidate.text)
        text = values.files[number][1].text
        changed = text[: candidate.offset] + mark + text[candidate.offset + len(mark) :]
        with _values_file(changed, self.cache_dir) as copy:
            files = list(values.arguments)
            if values.chart_defaults and number == 0:
                # Read after the chart's own values.yaml and before the user's files, the copy
                # differs from what it replaces in that one scalar.
                files.insert(0, copy)
            else:
                files[number - values.chart_defaults] = copy
            try:
                again = render_chart(self.request, self.cache_dir, tuple(files), self.run)
            except RenderTimeout:  # the run is out of time: no more renders
                raise
            except GpulintError:  # a schema or a `required` refusing the new text
                return False
        start = token.offset
        return (
            len(again) == len(rendered)
            and again[start : start + len(mark)] == mark
            and rendered[start : start + len(mark)] == token.text
        )


@dataclass(frozen=True)
class StdinOrigin:
    """Rendered output read from stdin and reported under `--stdin-filename NAME`.

    Its positions are the stream's, never NAME's lines. When NAME is the chart the stream was
    rendered from, literal template text is traced to its template; everything else is reported
    on the template (or on NAME) at line 1, with the stdin position as the rendered one.
    """

    name: str

    def locate(self, findings: Sequence[Finding], rendered: str) -> list[Finding]:
        """`findings` (at positions of `rendered`) moved off NAME's lines."""
        chart = Path(self.name)
        if (chart / "Chart.yaml").is_file():
            origin = HelmOrigin(HelmRender(chart, ""), "<stdin>", self.name, trace_values=False)
            return origin.locate(findings, rendered)
        return [
            replace(
                finding,
                path=self.name,
                line=1,
                column=1,
                rendered=RenderedAt("<stdin>", finding.line, finding.column),
                edits=(),
                applicability=None,
            )
            for finding in findings
        ]


class _ValuesFiles(NamedTuple):
    files: list[tuple[str, TextIndex, list[Token]]]  # the chart's values.yaml first, if any
    arguments: tuple[Path, ...]  # the --values files, in order
    chart_defaults: bool

    @classmethod
    def read(cls, request: HelmRender) -> _ValuesFiles:
        paths = list(request.values)
        defaults = request.chart / "values.yaml"
        has_defaults = defaults.is_file()
        if has_defaults:
            paths.insert(0, defaults)
        files = []
        for path in paths:
            text = read_text(path) or ""
            index, found = tokens(text)
            files.append((display_path(path), index, list(found.values())))
        return cls(files, request.values, has_defaults)


def display_path(path: Path) -> str:
    """`path` as given: the run names files relative to its root when it reports them
    (gpulint.api.LintOptions.root), never relative to the working directory."""
    return path.as_posix()


def sentinel(text: str) -> str:
    """Text as long as `text`, differing in every letter and digit, keeping punctuation.

    Punctuation stays so the new text is still a valid name wherever the old one was (a
    resource name keeps its `/`, a label value its dots).
    """
    out = []
    for char in text:
        if char.isdigit():
            out.append("7" if char != "7" else "3")
        elif char.isalpha():
            out.append("z" if char.lower() != "z" else "q")
        else:
            out.append(char)
    return "".join(out)


@contextmanager
def _values_file(text: str, cache_dir: Path | None) -> Iterator[Path]:
    """`text` in a file; under the cache, named by its hash, so its render can be cached too."""
    if cache_dir is not None:
        path = (
            cache_dir / "renders" / "values" / f"{hashlib.sha256(text.encode()).hexdigest()}.yaml"
        )
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            if not path.is_file():
                path.write_text(text, encoding="utf-8")
        except OSError:
            pass
        else:
            yield path
            return
    with tempfile.TemporaryDirectory(prefix="gpulint-values-") as tmp:
        path = Path(tmp) / "values.yaml"
        path.write_text(text, encoding="utf-8")
        yield path
