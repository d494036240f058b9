"""From a position in a rendered stream back to the file the author edits.

Only exact origins are used:

- a value from a values file: the values file is changed at that one scalar (same length, so
  nothing else in the finding's document moves) and the chart rendered again; if exactly the
  characters at the finding's position in its document change to the new text, they come
  from that scalar (another template's documents may differ: a certificate of `genCA`, a
  random token); when many scalars have the
  same text (a `1` under each of a chart's NIMs), halves of them are changed a render at a
  time to find the few to try one by one;
- a key whose renaming tells nothing (the chart's defaults set the same key, which comes back
  beside the renamed one; toYaml sorts the renamed key elsewhere): the key of the values-file
  entry its value comes from, when that entry spells the key as it is rendered;
- text written literally in a template: the rendered line matches exactly one line of the
  template named by `# Source:` (its `{{ }}` actions standing for any text, the spaces a
  `{{-` or `-}}` trims left out), and the finding's characters lie in that line's literal
  start; when several lines can print it and order does not tell, the chart is rendered once
  more (a copy, each of those lines carrying a comment naming it on the line it prints) and
  the comment on the finding's line names its line, provided that
  the template's documents in that render are the first's with only the comments added;
- kustomize: the same object, field path and value in exactly one patch, else in exactly one
  resource file (`gpulint.render.kustomize`).

A render compared with another is compared but on the lines that change from one render of
the chart to the next on their own (a template printing `now`, `randAlphaNum` or a generated
certificate): those are found, the first time a comparison fails, by one render more outside
the cache, and a comparison holds when only they differ, each keeping its length.

Anything else stays unmapped: the finding names the template (or the overlay) at line 1, and
carries the rendered position.
"""

from __future__ import annotations

import bisect
import contextlib
import hashlib
import os
import re
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from gpulint.errors import GpulintError
from gpulint.findings import Finding, RenderedAt
from gpulint.render.confine import is_inside, read_text
from gpulint.render.helm import HelmRender, built_dependencies, render_chart
from gpulint.render.tokens import TextIndex, Token, tokens
from gpulint.render.tools import RenderRun, RenderTimeout
from gpulint.views import NamedTuple

#: Values-file scalars tried per finding at most; more equal candidates mean a common word
#: ("1", "true"), and each try is a render.
MAX_CANDIDATES = 6
#: More equal candidates than MAX_CANDIDATES (a chart's `nvidia.com/gpu: 1` under each of its
#: NIMs) are halved, a render a time, down to MAX_CANDIDATES; past this many they are not.
MAX_NARROWED = 256
#: Template files read at most to tell whether a chart writes a key itself.
MAX_TEMPLATES_READ = 2000
_ACTION = re.compile(r"\{\{.*?\}\}")


#: An action that begins a line's rendered text anew: `{{-` trims the spaces before it and
#: `nindent` starts what it prints on a line of its own (`resources: {{- toYaml . | nindent 12 }}`).
_TRIMMED_NINDENT = re.compile(r"\{\{-(?:[^}]|\}(?!\}))*?\|\s*nindent\b.*?\}\}")


def _printed_parts(text: str) -> list[str]:
    """The literal texts of a template line between its actions, as Helm prints them: the
    spaces before a `{{-` and after a `-}}` are trimmed (`resources: {{- toYaml ... }}` prints
    `resources:`, then what the action prints)."""
    parts = _ACTION.split(text)
    for number, action in enumerate(_ACTION.findall(text)):
        if action.startswith("{{-"):
            parts[number] = parts[number].rstrip(" \t")
        if action.endswith("-}}"):
            parts[number + 1] = parts[number + 1].lstrip(" \t")
    return parts


def _marked(line: str, mark: str) -> str:
    """Template `line` with comment `mark` on the rendered line its literal start prints: at its
    end, or before a first action that trims the spaces before it and prints from a new line
    (`resources: #mark {{- toYaml . | nindent 12 }}`), where the end would put the comment
    after the last line that action prints."""
    first = _ACTION.search(line)
    head = line[: first.start()].rstrip(" \t") if first is not None else ""
    if first is not None and head.strip() and _TRIMMED_NINDENT.fullmatch(first.group()):
        return f"{head}{mark} {line[first.start() :]}"
    return line + mark


_CONTROL = re.compile(r"\{\{-?\s*(if|range|with|define|block|else|end)\b")
_OPENS = frozenset({"if", "range", "with", "define", "block"})


def _unconditional_lines(template: str) -> frozenset[int]:
    """The lines (1-based) of a template that every render prints once, each at the start of
    a line of its own and in order: lines that start with text, outside every `if`, `range`,
    `with`, `define` and `block`, with no control action of their own, not inside an action
    that spans lines, and not joined to the line before by a `-}}` that trims the line break
    between them. A line the next one's `{{-` joins to is printed too, with that action's
    text after it (`spec:` then `{{- include "x" . | indent 6 }}`): its pattern says so
    (_continued)."""
    index = TextIndex(template)
    depth_at: dict[int, int] = {}  # line -> depth at its start, for lines where it changes
    spanned: set[int] = set()
    controlled: set[int] = set()
    depth = 0
    for action in re.finditer(r"\{\{.*?\}\}", template, re.S):
        first, _ = index.position(action.start())
        last, _ = index.position(action.end() - 1)
        spanned.update(range(first + 1, last + 1))
        control = _CONTROL.match(action.group())
        if control is None:
            continue
        controlled.add(first)
        if control.group(1) in _OPENS:
            depth += 1
        elif control.group(1) == "end":
            depth = max(depth - 1, 0)
        depth_at[last + 1] = depth
    lines = template.split("\n")
    inside_actions = spanned | controlled
    found = set()
    depth = 0
    for number, line in enumerate(lines, start=1):
        depth = depth_at.get(number, depth)
        joined = line.rstrip().endswith("-}}") or (
            number > 1 and lines[number - 2].rstrip().endswith("-}}")
        )
        if (
            depth == 0
            and not line.lstrip().startswith("{{")
            and number not in inside_actions
            and not joined
        ):
            found.add(number)
    return frozenset(found)


def _keeps_line_break(following: str) -> bool:
    """Whether a line followed by `following` (the next line with text) ends its rendered line
    where it ends in the template: a `{{-` there trims the line break away, and the line goes on
    with what that action prints, unless the action prints nothing before a line break of its
    own (a control action without `-}}`) or begins with one (`nindent`)."""
    text = following.lstrip()
    if not text.startswith("{{-"):
        return True
    action = re.match(r"\{\{-(.*?)\}\}", text)
    if action is None or action.group(1).endswith("-"):
        return False
    return _CONTROL.match(action.group()) is not None or bool(
        re.search(r"\|\s*nindent\b", action.group(1))
    )


def _continued(lines: Sequence[str], number: int) -> bool:
    """Whether the rendered line of template line `number` (1-based) goes on with text the
    next line's action prints: that action's `{{-` trims the line break before it."""
    following = next((text for text in lines[number:] if text.strip()), "")
    return not _keeps_line_break(following)


def _source_documents(index: TextIndex, source: str) -> list[list[int]]:
    """The rendered lines (1-based) of each document Helm printed from `source`."""
    header, inside, found = f"# Source: {source}", False, []
    for number in range(1, len(index.starts) + 1):
        line = index.line(number)
        if line == "---":
            inside = False
        elif line == header:
            inside = True
            found.append([])
        elif inside:
            found[-1].append(number)
    return found


def _source_lines(index: TextIndex, source: str) -> list[int]:
    """The rendered lines (1-based) of every document Helm printed from `source`."""
    return [number for document in _source_documents(index, source) for number in document]


_KIND = re.compile(r"kind:[ \t]*([^\s{#'\"][^\s#]*)[ \t]*(?:#.*)?")
#: A template line that starts a document (`---`, maybe with a comment after it).
_TEMPLATE_SEPARATOR = re.compile(r"---(?:[ \t]|$)")


def _template_documents(lines: Sequence[str]) -> list[range]:
    """The line ranges (1-based) of a template's documents, split at its `---` lines; those
    with no text outside actions and comments (what a `{{- if }}` before a `---` leaves) are
    left out."""
    documents, first = [], 1
    separators = [n for n, line in enumerate(lines, 1) if _TEMPLATE_SEPARATOR.match(line)]
    for number in [*separators, None]:
        last = len(lines) if number is None else number - 1
        texts = (_ACTION.sub("", lines[n - 1]).strip() for n in range(first, last + 1))
        if any(text and not text.startswith("#") for text in texts):
            documents.append(range(first, last + 1))
        first = last + 2
    return documents


def _kinds(lines: Iterable[str]) -> set[str]:
    """The kinds a document's lines write as literal text at its top level."""
    return {m.group(1) for line in lines if (m := _KIND.fullmatch(line.rstrip()))}


def _by_order(
    index: TextIndex, finding: Finding, template: str, patterns: Mapping[int, str]
) -> int | None:
    """Which of several template lines that can print the finding's line printed it, told by
    order: when the template's lines that print such a line at every render (its unconditional
    ones) are as many as the rendered lines of that template that read like one, no other
    line printed any, and the n-th rendered one is the n-th of them."""
    fixed = sorted(patterns.keys() & _unconditional_lines(template))
    if not fixed or finding.source is None:
        return None
    lines = _source_lines(index, finding.source)
    documents = _template_documents(template.split("\n"))
    if len(documents) > 1:
        # Helm prints a template's documents sorted by kind (its Services before its
        # Deployment), whatever their order in the template: order tells only inside the
        # finding's document, against the one template document that can write its kind.
        within = _document_order(index, finding, template, documents)
        if within is None:
            return None
        lines, document = within
        fixed = [n for n in fixed if n in document]
    compiled = [re.compile(patterns[n]) for n in patterns]
    printed = [n for n in lines if any(c.fullmatch(index.line(n).lstrip(" ")) for c in compiled)]
    if len(printed) != len(fixed) or finding.line not in printed:
        return None
    if not all(
        re.fullmatch(patterns[line], index.line(n).lstrip(" "))
        for n, line in zip(printed, fixed, strict=True)
    ):
        return None
    return fixed[printed.index(finding.line)]


def _document_order(
    index: TextIndex, finding: Finding, template: str, documents: Sequence[range]
) -> tuple[list[int], range] | None:
    """The rendered lines of the finding's document and the template lines that printed it:
    when its kind is written by no other rendered document of the template, and by one
    template document alone (a document whose kind is an action may write any)."""
    if finding.source is None:
        return None
    rendered = _source_documents(index, finding.source)
    mine = next((d for d in rendered if finding.line in d), None)
    if mine is None or len(kinds := _kinds(index.line(n) for n in mine)) != 1:
        return None
    if sum(_kinds(index.line(n) for n in d) == kinds for d in rendered) != 1:
        return None
    lines = template.split("\n")
    writers = [
        d for d in documents if not (written := _kinds(lines[n - 1] for n in d)) or kinds & written
    ]
    if len(writers) != 1:
        return None
    return mine, writers[0]


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
        at_tokens = [found.get((f.line, f.column)) for f in findings]
        changing = _Changing(self, rendered)
        known: dict[int, Location | None] = {}  # by token offset: what one render told
        if values is not None:
            known = self._from_one_render(
                [t for t in at_tokens if t is not None], rendered, values, changing
            )
        # (file, scalar offset, new text) -> the render with that scalar changed (None: refused)
        renders: dict[tuple[int, int, str], str | None] = {}
        entries = {t.path: t for t in found.values() if not t.is_key}  # value of each key
        # Template lines that may each have printed a finding's line: told apart, when order
        # cannot, by one render of each such template with its lines marked.
        ambiguous: dict[str, set[int]] = {}
        for finding, token in zip(findings, at_tokens, strict=True):
            matched = self._template_matches(finding, index, token)
            if matched is not None and len(matched[1]) > 1:
                ambiguous.setdefault(matched[0], set()).update(matched[1])
        marked: dict[str, _Marked | None] = {}
        located = []
        for finding, token in zip(findings, at_tokens, strict=True):
            at = RenderedAt(self.label, finding.line, finding.column)
            where = None
            if token is not None and values is not None:
                if token.offset in known:
                    where = known[token.offset]
                else:
                    where = self._from_values(token, rendered, values, renders)
            if where is None:
                where = self._from_template(finding, index, token)
            if where is None and self.trace_values:
                where = self._from_marked(
                    finding, index, token, rendered, ambiguous, marked, changing
                )
            if where is None and token is not None and token.is_key and values is not None:
                value = entries.get(token.path)
                if value is not None:
                    where = self._key_of_value(token, value, rendered, values, renders)
                if where is None:
                    where = self._key_by_suffix(token, rendered, values, renders)
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
        """`trainer/templates/x.yaml` (Helm's `# Source:`) as a path under the chart; a
        subchart built from a `file://` dependency (`trainer/charts/common/templates/x.yaml`)
        as a path under the directory it is built from."""
        if not source or "/" not in source:
            return None
        chart, parts = self.chart_path, source.split("/")[1:]
        while len(parts) > 2 and parts[0] == "charts":
            held = os.path.join(chart, "charts", parts[1])
            if os.path.isdir(held):
                chart = held  # a subchart `charts/` holds as a directory
            else:
                target = built_dependencies(Path(chart)).get(parts[1])
                # The render built it only from inside the checked tree; what a Chart.yaml
                # names is checked again, since the file may have changed since.
                if target is None or not is_inside(target, self._tree()):
                    break
                chart = str(target)
            parts = parts[2:]
        path = os.path.normpath(os.path.join(chart, *parts))
        # The comment is text the chart prints: it may name any file (`x/../../etc/...`).
        return path if is_inside(path, Path(chart)) else None

    def _tree(self) -> Path:
        """The checked tree of the chart: where its local dependencies may lie."""
        run = self.run or RenderRun.start()
        return run.tree(Path(self.chart_path))

    def _from_template(
        self, finding: Finding, index: TextIndex, token: Token | None
    ) -> Location | None:
        matched = self._template_matches(finding, index, token)
        if matched is None:
            return None
        path, matches = matched
        if len(matches) != 1:
            return None
        ((line, column),) = matches.items()
        return Location(path, line, column)

    def _template_matches(
        self, finding: Finding, index: TextIndex, token: Token | None
    ) -> tuple[str, dict[int, int]] | None:
        """The template and its lines whose literal start can print the finding's characters
        (line -> the finding's column there), narrowed by order when that tells."""
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
        matches = {}  # template line -> the finding's column there
        patterns = {}  # every template line that can print `body`, to its pattern
        lines = template.split("\n")
        for number, line in enumerate(lines, start=1):
            text = line.lstrip(" ")
            parts = _printed_parts(text)
            literal = parts[0]
            if not "".join(parts).strip():
                continue  # actions alone: they print any text, on any number of lines
            pattern = ".*?".join(re.escape(part) for part in parts)
            if _continued(lines, number):
                pattern += ".*"  # what the next line's action prints, spaces at least
            if not re.fullmatch(pattern, body):
                continue
            patterns[number] = pattern
            if start + width <= len(literal) and "{{" not in literal:
                matches[number] = len(line) - len(text) + start + 1
        if len(matches) > 1:
            number = _by_order(index, finding, template, patterns)
            if number in matches:
                matches = {number: matches[number]}
        return path, matches

    def _from_marked(
        self,
        finding: Finding,
        index: TextIndex,
        token: Token | None,
        rendered: str,
        ambiguous: Mapping[str, set[int]],
        marked: dict[str, _Marked | None],
        changing: _Changing,
    ) -> Location | None:
        """Which of several template lines printed the finding's line, told by a render of
        the chart with a comment marking each of them (`marked` keeps one per template)."""
        matched = self._template_matches(finding, index, token)
        if matched is None or len(matched[1]) < 2:
            return None
        path, matches = matched
        if path not in marked:
            marked[path] = self._marked_render(
                path, finding.source or "", ambiguous.get(path, set()), rendered, changing
            )
        render = marked[path]
        if render is None:
            return None
        line = render.index.line(finding.line)
        numbers = [int(n) for n in re.findall(rf" #{render.tag}:(\d+)", line)]
        if len(numbers) != 1 or numbers[0] not in matches:
            return None
        return Location(path, numbers[0], matches[numbers[0]])

    def _marked_render(
        self,
        path: str,
        source: str,
        lines: Iterable[int],
        rendered: str,
        changing: _Changing,
    ) -> _Marked | None:
        """The chart rendered with ` #TAG:N` at the end of each of `lines` (N) of the template
        at `path` (Helm's `# Source:` name `source`); None unless every document that template
        prints is as in `rendered` with only those comments added, each line at its number,
        but for the lines that change at every render (`changing`: a `now` in that template).

        The comment ends a template line and holds no line break, so each rendered line keeps
        its number; a marked line whose text an action goes on from carries its comment in
        the middle of a rendered line (no rendered line ends with it), and one that changes
        what the template itself prints makes its documents differ. Other templates' documents
        may differ in their text, not in their number of lines: a Secret of `randAlphaNum`
        differs at every render, a checksum of the marked template with the marks; neither
        moves a line of the marked template's documents, which are all the marks tell about."""
        template = read_text(path)
        if template is None or not lines:
            return None
        tag = "gpulint-" + hashlib.sha256(template.encode("utf-8")).hexdigest()[:12]
        if tag in template or tag in rendered:
            return None
        text = template.split("\n")
        for number in lines:
            text[number - 1] = _marked(text[number - 1], f" #{tag}:{number}")
        relative = os.path.relpath(path, self.chart_path)
        request = replace(self.request, template_overrides=((relative, "\n".join(text)),))
        try:
            again = render_chart(request, self.cache_dir, None, self.run)
        except RenderTimeout:
            raise
        except GpulintError:  # the marked chart refused: nothing told
            return None
        unmarked = re.sub(rf" #{tag}:\d+", "", again)
        if not _same_document_lines(rendered, unmarked, source) and not _same_document_lines(
            rendered, unmarked, source, changing.lines()
        ):
            return None
        return _Marked(tag, TextIndex(again))

    def _from_one_render(
        self, found: Sequence[Token], rendered: str, values: _ValuesFiles, changing: _Changing
    ) -> dict[int, Location | None]:
        """Where each of `found` (rendered tokens) comes from, told by one render that changes
        every candidate scalar at once, each to a text of its own (by token offset; a token
        left out is for _from_values to try candidate by candidate).

        What one render tells counts only when it differs from `rendered` in exactly those
        texts, each where its scalar's text was: then nothing else moved (no value changed
        which way a template went), and a token shows a candidate's new text exactly when
        changing that candidate alone changes it, which is what _from_values tests. So no
        finding is placed otherwise than by the renders of one candidate each; when the
        render shows more (or fails), each token is tried as before.
        """
        per_token = {t.offset: _candidates(t, values) for t in found}
        # A top-level key of a values file (its path: the document, the key) is what a
        # template reads a value by: changing it changes what is rendered, and the one render
        # would tell nothing. Its tokens are tried candidate by candidate.
        wanted = {
            t.offset: t
            for t in found
            if per_token[t.offset]
            and not any(c.is_key and len(c.path) <= 2 for _, c in per_token[t.offset] or ())
        }
        scalars = {(n, c.offset): c for o in wanted for n, c in per_token[o] or ()}
        if sum(len(per_token[t.offset] or ()) for t in found if t.offset in wanted) < 2:
            return {}  # one candidate render in all: the one render would be no fewer
        texts = [f[1].text for f in values.files]
        marks: dict[tuple[int, int], str] = {}
        for key, candidate in sorted(scalars.items()):
            mark = _unique_sentinel(candidate.text, marks.values(), [rendered, *texts])
            if mark is None:
                return {}
            marks[key] = mark
        files = list(values.arguments)
        defaults: list[Path] = []
        with contextlib.ExitStack() as stack:
            for number in sorted({n for n, _ in marks}):
                text = texts[number]
                for (n, offset), mark in marks.items():
                    if n == number:
                        text = text[:offset] + mark + text[offset + len(mark) :]
                copy = stack.enter_context(_values_file(text, self.cache_dir))
                if values.chart_defaults and number == 0:
                    defaults = [copy]  # after the chart's own values.yaml (see _changes)
                else:
                    files[number - values.chart_defaults] = copy
            files = [*defaults, *files]
            try:
                again = render_chart(self.request, self.cache_dir, tuple(files), self.run)
            except RenderTimeout:
                raise
            except GpulintError:
                return {}
        substituted = {marks[k]: scalars[k].text for k in marks}
        if not _only_substituted(rendered, again, substituted) and not _only_substituted(
            rendered, again, substituted, changing.lines()
        ):
            return {}
        known: dict[int, Location | None] = {}
        for offset in wanted:
            candidates = per_token[offset]
            known[offset] = None
            for number, candidate in candidates or ():
                mark = marks[(number, candidate.offset)]
                if again[offset : offset + len(mark)] == mark:
                    line, column = candidate.pos
                    known[offset] = Location(values.files[number][0], line, column)
        return known

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

    def _from_values(
        self,
        token: Token,
        rendered: str,
        values: _ValuesFiles,
        renders: dict[tuple[int, int, str], str | None] | None = None,
    ) -> Location | None:
        """The values-file scalar `token` comes from, candidate by candidate: one render each
        (one `renders` holds from an earlier token is not made again)."""
        origin = self._values_origin(token, rendered, values, renders)
        if origin is None:
            return None
        number, candidate = origin
        line, column = candidate.pos
        return Location(values.files[number][0], line, column)

    def _values_origin(
        self,
        token: Token,
        rendered: str,
        values: _ValuesFiles,
        renders: dict[tuple[int, int, str], str | None] | None = None,
        narrow: bool = True,
    ) -> tuple[int, Token] | None:
        """The values file (its number) and scalar `token` comes from, as _from_values
        proves it (among many equal scalars too when `narrow`)."""
        candidates = _candidates(token, values)
        if candidates is None and narrow:
            candidates = self._narrowed(token, rendered, values)
        if candidates is None:
            return None
        renders = {} if renders is None else renders
        for number, candidate in candidates:
            if self._changes(values, number, candidate, token, rendered, renders):
                return number, candidate
        return None

    def _key_of_value(
        self,
        key: Token,
        value: Token,
        rendered: str,
        values: _ValuesFiles,
        renders: dict[tuple[int, int, str], str | None],
    ) -> Location | None:
        """Where the rendered `key` is written in a values file, told by its `value`.

        Renaming a key the chart's own values.yaml also sets brings the default back beside the
        renamed one (a user's `nvidia.com/gpu: 16` over the chart's `nvidia.com/gpu: 1`), and
        toYaml sorts a renamed key elsewhere: the render moves and tells nothing. The value can
        still be traced by a change of the same length; the entry it is written in holds the
        key, when it spells it as the rendered key is spelled (a key a template writes itself
        is tried on the template first). Among many equal values (`1`) the entry is sought
        only when no template of the chart writes the key itself (`maxReplicas: {{ ... }}`
        in a helper the `# Source:` template includes): the values file spelling such a key
        too is a coincidence."""
        narrow = not self._templates_write_key(key.text)
        origin = self._values_origin(value, rendered, values, renders, narrow)
        if origin is None:
            return None
        number, scalar = origin
        path, _, file_tokens = values.files[number]
        written = next((t for t in file_tokens if t.is_key and t.path == scalar.path), None)
        if written is None or written.text != key.text:
            return None
        line, column = written.pos
        return Location(path, line, column)

    def _key_by_suffix(
        self,
        key: Token,
        rendered: str,
        values: _ValuesFiles,
        renders: dict[tuple[int, int, str], str | None],
    ) -> Location | None:
        """The values-file key the rendered `key` is built from behind a prefix the template
        writes (`printf "nvidia.com/mig-%s" $profile` over `gpu.mig.devices`): a key of a
        values file that ends the rendered key after a punctuation mark, proven as a value is,
        by a render with it changed (the changed characters are where the rendered key ends;
        changed past where it differs from its siblings, when toYaml would sort it elsewhere)."""
        found = [
            (number, candidate)
            for number, (_, _, file_tokens) in reversed(list(enumerate(values.files)))
            for candidate in file_tokens
            if candidate.is_key
            and 0 < len(candidate.text) < len(key.text)
            and key.text.endswith(candidate.text)
            and not key.text[-len(candidate.text) - 1].isalnum()
            and any(c.isalnum() for c in candidate.text)
        ]
        if not found or len(found) > MAX_CANDIDATES:
            return None
        for number, candidate in found:
            start = len(key.text) - len(candidate.text)
            suffix = key._replace(text=candidate.text, offset=key.offset + start)
            ordered = sorted_sentinel(key.text, _sibling_keys(rendered, key))
            marks = [sentinel(candidate.text)]
            if ordered is not None and ordered[:start] == key.text[:start]:
                marks.append(ordered[start:])
            for mark in marks:
                if (
                    mark
                    and mark != candidate.text
                    and self._changed_at(values, number, candidate, suffix, rendered, renders, mark)
                ):
                    line, column = candidate.pos
                    return Location(values.files[number][0], line, column)
        return None

    def _changes(
        self,
        values: _ValuesFiles,
        number: int,
        candidate: Token,
        token: Token,
        rendered: str,
        renders: dict[tuple[int, int, str], str | None],
    ) -> bool:
        """Whether changing `candidate` changes exactly the rendered characters of `token`.

        Its render is kept in `renders` for the other tokens it is a candidate of. A rendered
        key toYaml sorts among others (`cpu`, `gpu.intel.com/xe`, `memory`) moves when its
        new text sorts elsewhere: it is tried again with a text that sorts where it does."""
        mark = sentinel(candidate.text) or candidate.text  # variant 0 is never None
        if self._changed_at(values, number, candidate, token, rendered, renders, mark):
            return True
        # Only a key the render shows elsewhere in its document, all else the same length, was
        # moved by sorting.
        again = renders[(number, candidate.offset, mark)]
        document = _same_document(rendered, again, token.offset) if again is not None else None
        if not token.is_key or document is None or mark not in again[document[1] : document[2]]:
            return False
        ordered = sorted_sentinel(candidate.text, _sibling_keys(rendered, token))
        return ordered is not None and self._changed_at(
            values, number, candidate, token, rendered, renders, ordered
        )

    def _changed_at(
        self,
        values: _ValuesFiles,
        number: int,
        candidate: Token,
        token: Token,
        rendered: str,
        renders: dict[tuple[int, int, str], str | None],
        mark: str,
    ) -> bool:
        """Whether changing `candidate` to `mark` shows `mark` exactly where `token` is."""
        key = (number, candidate.offset, mark)
        if key not in renders:
            renders[key] = self._render_changed(values, number, candidate, mark)
        again = renders[key]
        start = token.offset
        at = _aligned(rendered, again, start) if again is not None else None
        return (
            at is not None
            and again is not None
            and again[at : at + len(mark)] == mark
            and rendered[start : start + len(mark)] == token.text
        )

    def _templates_write_key(self, key: str) -> bool:
        """Whether a template of the chart (or of a subchart in it) writes `key:` as text."""
        chart = Path(self.chart_path)
        written = re.compile(rf"(?:^|[\s{{-])['\"]?{re.escape(key)}['\"]?:", re.M)
        seen = 0
        for top, directories, names in os.walk(chart):
            directories[:] = sorted(d for d in directories if not d.startswith("."))
            if "templates" not in Path(top).relative_to(chart).parts:
                continue
            for name in sorted(names):
                seen += 1
                if seen > MAX_TEMPLATES_READ:
                    return True  # too many to tell: assume it may be written
                path = Path(top, name)
                text = read_text(path) if is_inside(str(path), chart) else None
                if text is not None and written.search(text):
                    return True
        return False

    def _narrowed(
        self, token: Token, rendered: str, values: _ValuesFiles
    ) -> list[tuple[int, Token]] | None:
        """Of more than MAX_CANDIDATES equal scalars, the few `token` may come from: half of
        them changed at once (each to its sentinel, the same length), the render shows whether
        the token's text changed with them, and that half (or the other) is kept, until few
        are left. Each survivor is still proven alone by _changes; None when a render moves
        anything (a value that decides what is printed) or is refused, and for a key: a key of
        the chart's values.yaml comes back beside its renamed copy and moves the render, so a
        key is traced by its value (_key_of_value)."""
        if token.is_key:
            return None
        candidates = _candidates(token, values, MAX_NARROWED)
        if candidates is None:
            return None
        end = token.offset + len(token.text)
        while len(candidates) > MAX_CANDIDATES:
            half = candidates[: len(candidates) // 2]
            again = self._render_group(values, half)
            at = _aligned(rendered, again, token.offset) if again is not None else None
            if again is None or at is None:
                return None
            moved = again[at : at + end - token.offset] != rendered[token.offset : end]
            candidates = half if moved else candidates[len(half) :]
        return candidates

    def _render_changed(
        self, values: _ValuesFiles, number: int, candidate: Token, mark: str
    ) -> str | None:
        """The chart rendered with `candidate` changed to `mark`; None when that is refused."""
        return self._render_group(values, [(number, candidate)], mark)

    def _render_group(
        self, values: _ValuesFiles, group: Sequence[tuple[int, Token]], mark: str | None = None
    ) -> str | None:
        """The chart rendered with each scalar of `group` (values file number, scalar) changed
        to `mark`, or to its sentinel; None when that is refused."""
        texts = {number: values.files[number][1].text for number, _ in group}
        # From the end of each file, so an earlier offset still points where it did.
        for number, candidate in sorted(group, key=lambda g: -g[1].offset):
            new = mark or sentinel(candidate.text) or candidate.text
            text = texts[number]
            texts[number] = text[: candidate.offset] + new + text[candidate.offset + len(new) :]
        with contextlib.ExitStack() as stack:
            files = list(values.arguments)
            defaults: list[Path] = []
            for number, text in sorted(texts.items()):
                copy = stack.enter_context(_values_file(text, self.cache_dir))
                if values.chart_defaults and number == 0:
                    # Read after the chart's own values.yaml and before the user's files, the
                    # copy differs from what it replaces in those scalars.
                    defaults = [copy]
                else:
                    files[number - values.chart_defaults] = copy
            try:
                return render_chart(self.request, self.cache_dir, (*defaults, *files), self.run)
            except RenderTimeout:  # the run is out of time: no more renders
                raise
            except GpulintError:  # a schema or a `required` refusing the new text
                return None


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


def _candidates(
    token: Token, values: _ValuesFiles, limit: int = MAX_CANDIDATES
) -> list[tuple[int, Token]] | None:
    """The values-file scalars a rendered token may come from (the same text), later files
    first; None when there are none or more than `limit`, or the token has no letter or
    digit."""
    if not any(c.isalnum() for c in token.text):
        return None
    candidates = [
        (number, candidate)
        for number, (_, _, file_tokens) in reversed(list(enumerate(values.files)))
        for candidate in file_tokens
        if candidate.text == token.text
    ]
    if not candidates or len(candidates) > limit:
        return None
    return candidates


def _unique_sentinel(text: str, taken: Iterable[str], texts: Sequence[str]) -> str | None:
    """A sentinel of `text` found in none of `texts`, neither within nor holding one of
    `taken`; None when none of the first few is."""
    taken = list(taken)
    for variant in range(MAX_VARIANTS):
        mark = sentinel(text, variant)
        if mark is None:
            return None
        if any(mark in t or t in mark for t in taken) or any(mark in t for t in texts):
            continue
        return mark
    return None


#: A line of a render that starts a document: Helm prints `---` alone.
_RENDERED_SEPARATOR = re.compile(r"^---$", re.M)


def _documents(text: str) -> list[int]:
    """Where each document of a rendered stream starts: at 0 and at each `---` line."""
    return [0, *(m.start() for m in _RENDERED_SEPARATOR.finditer(text))]


def _same_document(rendered: str, again: str, offset: int) -> tuple[int, int, int] | None:
    """Where the document that holds `offset` starts in `rendered`, and where it starts and
    ends in `again`: the document of the same number, when both streams have as many and it
    is as long in both; else None.

    A value changed to a text of the same length leaves its document as long as it was; the
    documents of other templates may differ (a certificate of `genCA`, a random length), and
    no offset of this document moves with them."""
    before, after = _documents(rendered), _documents(again)
    if len(before) != len(after):
        return None
    number = bisect.bisect_right(before, offset) - 1
    length = [*before[1:], len(rendered)][number] - before[number]
    end = [*after[1:], len(again)][number]
    if end - after[number] != length:
        return None
    return before[number], after[number], end


def _aligned(rendered: str, again: str, offset: int) -> int | None:
    """`offset` of `rendered` as the same place of its document in `again` (_same_document)."""
    span = _same_document(rendered, again, offset)
    return None if span is None else span[1] + offset - span[0]


def _same_document_lines(
    rendered: str, again: str, source: str, changing: frozenset[int] = frozenset()
) -> bool:
    """Whether `again` has as many lines as `rendered`, and every line of the documents Helm
    printed from `source` (their `# Source:` line too) is the same line of both, but for the
    lines of `changing` (1-based), which change at every render."""
    before, after = rendered.split("\n"), again.split("\n")
    if len(before) != len(after):
        return False
    printed = _source_lines(TextIndex(rendered), source)
    # A document's first line follows its `# Source:` line.
    compared = (set(printed) | {n - 1 for n in printed}) - changing
    return bool(printed) and all(before[n - 1] == after[n - 1] for n in compared)


def _only_substituted(
    rendered: str, again: str, marks: Mapping[str, str], changing: frozenset[int] = frozenset()
) -> bool:
    """Whether `again` is `rendered` with some of the texts of `marks` (new text -> old text)
    replaced by their new text where they were, and with nothing else changed but lines of
    `changing` (see _same_but)."""
    if len(again) != len(rendered):
        return False
    # Where each line of `again` starts: a mark's text printed by chance on a changing line (a
    # digit in a random token) is no substitution, and no proof of one missing either.
    starts = [0, *(m.end() for m in re.finditer("\n", again))] if changing else []
    expected = list(rendered)
    for mark, old in marks.items():
        start = again.find(mark)
        while start >= 0:
            if rendered[start : start + len(mark)] == old:
                expected[start : start + len(mark)] = mark
            elif bisect.bisect_right(starts, start) not in changing:
                return False
            start = again.find(mark, start + 1)
    return _same_but("".join(expected), again, changing)


def _same_but(text: str, rendered: str, changing: frozenset[int]) -> bool:
    """Whether `text` is `rendered` but on the lines (1-based) of `changing`, each of which
    keeps its length: every other character is where it was."""
    if text == rendered:
        return True
    ours, theirs = text.split("\n"), rendered.split("\n")
    return len(ours) == len(theirs) and all(
        a == b or (number in changing and len(a) == len(b))
        for number, (a, b) in enumerate(zip(ours, theirs, strict=True), start=1)
    )


class _Changing:
    """The lines of a render that differ from one render of the same chart to the next on
    their own (`now`, `randAlphaNum`, `genCA` in a template): found the first time they are
    asked for, by rendering the chart once more outside the cache (whose render may be from
    another second). None differ when that render is refused or moves any line."""

    def __init__(self, origin: HelmOrigin, rendered: str) -> None:
        self._origin = origin
        self._rendered = rendered
        self._lines: frozenset[int] | None = None

    def lines(self) -> frozenset[int]:
        """The changing lines of the render, 1-based."""
        if self._lines is None:
            self._lines = frozenset()
            try:
                again = render_chart(self._origin.request, None, None, self._origin.run)
            except RenderTimeout:  # the run is out of time: no more renders
                raise
            except GpulintError:
                return self._lines
            ours, theirs = self._rendered.split("\n"), again.split("\n")
            if len(ours) == len(theirs):
                self._lines = frozenset(
                    number
                    for number, (a, b) in enumerate(zip(ours, theirs, strict=True), start=1)
                    if a != b
                )
        return self._lines


class _Marked(NamedTuple):
    """A render with template lines marked by ` #TAG:LINE` comments."""

    tag: str
    index: TextIndex


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


def sentinel(text: str, variant: int = 0) -> str | None:
    """Text as long as `text`, differing in every letter and digit, keeping punctuation; the
    `variant`-th of them (each differs from the others), None past the last.

    Punctuation stays so the new text is still a valid name wherever the old one was (a
    resource name keeps its `/`, a label value its dots); letters become lower-case ones.
    """
    out = []
    for char in reversed(text):
        if char.isdigit():
            choices = [d for d in _DIGITS if d != char]
        elif char.isalpha():
            choices = [c for c in _LETTERS if c != char.lower()]
        else:
            out.append(char)
            continue
        variant, chosen = divmod(variant, len(choices))
        out.append(choices[chosen])
    return None if variant else "".join(reversed(out))


def sorted_sentinel(text: str, siblings: Iterable[str]) -> str | None:
    """A sentinel of `text` that sorts among `siblings` where `text` does: `text`'s first
    characters up to where it differs from each sibling, kept, and the rest changed as
    sentinel() changes them; None when nothing would be left to change."""
    keep = 0
    for other in siblings:
        if other == text:
            continue
        common = next(
            (i for i, (a, b) in enumerate(zip(text, other, strict=False)) if a != b),
            min(len(text), len(other)),
        )
        keep = max(keep, common + 1)
    rest = sentinel(text[keep:]) if keep < len(text) else None
    if not rest or rest == text[keep:]:
        return None
    return text[:keep] + rest


def _sibling_keys(rendered: str, token: Token) -> list[str]:
    """The keys of the mapping that holds the key `token` in `rendered`."""
    _, found = tokens(rendered)
    parent = token.path[:-1]
    return [t.text for t in found.values() if t.is_key and t.path[:-1] == parent]


# The first choice of each is what a single candidate's sentinel has always been.
_DIGITS = "7385962410"
_LETTERS = "zqyxwvutsrponmlkjihgfedcba"
#: Sentinels of one text tried for a unique one.
MAX_VARIANTS = 32


@contextmanager
def _values_file(text: str, cache_dir: Path | None) -> Iterator[Path]:
    """`text` in a file; under the cache, named by its hash, so its render can be cached too.
    Written whole before it is named (a run beside this one may pass the same file to helm)."""
    if cache_dir is not None:
        from gpulint.cachedir import VALUES, write_atomically

        data = text.encode("utf-8")
        name = f"{hashlib.sha256(data).hexdigest()}.yaml"
        path = cache_dir / VALUES / name
        try:
            if not path.is_file():
                write_atomically(cache_dir, VALUES, name, data)
        except OSError:
            pass
        else:
            yield path
            return
    with tempfile.TemporaryDirectory(prefix="gpulint-values-") as tmp:
        path = Path(tmp) / "values.yaml"
        path.write_text(text, encoding="utf-8")
        yield path
