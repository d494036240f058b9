"""The rule catalogue: one YAML record per rule under `rules/`, shipped inside the wheel.

A record is the single source of everything about a rule: its code, name and default
severity, what the engine needs to run it (on by default or not, needs a profile or not, per
file or corpus-wide, the kinds it judges and the cluster kinds it reads, where its check
function lives) and its documentation. `gpulint rules`, `gpulint explain`, docs/rules.md, the
README's rule table and the findings' fix texts all come from the records.

A run must know the engine facts of every rule, and parsing every record would cost a
pre-commit run on one file a quarter of its work; so the engine facts are also written, by
`python -m gpulint.catalogue`, into the module gpulint/_registry.py, which a test keeps in step
with the records. The documentation is read from the records when it is asked for.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable
from pathlib import Path

from gpulint.model import Severity
from gpulint.rules import registry
from gpulint.rules.base import Rule
from gpulint.views import NamedTuple

#: The keys of a record: required ones, then the ones with a default.
REQUIRED_FIELDS = (
    "code",
    "name",
    "severity",
    "enabled",
    "needs_profile",
    "scope",
    "check",
    "summary",
    "why",
    "example",
    "fixed",
    "fix",
)
OPTIONAL_FIELDS = ("judges", "reads", "keeps", "summarizes", "autofix", "profile_fields")
#: `autofix` values: applied by `--fix`, or only with `--unsafe-fixes` too.
AUTOFIXES = ("safe", "unsafe")
#: The documentation part of a record.
CATALOGUE_FIELDS = ("code", "name", "severity", "summary", "why", "example", "fixed", "fix")
#: `scope` values: judged on each file alone, or once over what every file kept.
SCOPES = ("file", "corpus")
#: `check` value of the codes the engine reports itself (GPU006, unused suppressions).
ENGINE = "engine"
_SUFFIX = ".yaml"


class CatalogueError(ValueError):
    """A record of the catalogue is malformed; the message names its file."""


class RuleInfo(NamedTuple):
    """One whole catalogue record: the engine's facts plus the documentation."""

    rule: Rule
    summary: str
    why: str
    example: str
    fixed: str

    @property
    def code(self) -> str:
        """The rule's code, `GPU102`."""
        return self.rule.code

    @property
    def name(self) -> str:
        """The rule's kebab-case name."""
        return self.rule.name

    @property
    def severity(self) -> Severity:
        """The default severity."""
        return self.rule.severity

    @property
    def fix(self) -> str:
        """The fix text findings carry unless the rule gives one of its own."""
        return self.rule.fix

    @property
    def enabled(self) -> bool:
        """Whether the rule runs when the configuration does not say otherwise."""
        return self.rule.enabled

    @property
    def needs_profile(self) -> bool:
        """Whether the rule only runs when a cluster profile is given."""
        return self.rule.needs_profile


def catalogue_dir() -> Path:
    """Where the catalogue lives: inside the installed package, or `rules/` of a checkout."""
    # The package directory itself rather than importlib.resources, which costs a run more
    # to import than reading the whole catalogue.
    package = Path(__file__).resolve().parent
    packaged = package / "catalogue"
    return packaged if packaged.is_dir() else package.parent / "rules"


@functools.cache
def catalogue_codes() -> tuple[str, ...]:
    """Every code the catalogue has a record for, in code order."""
    return tuple(rule.code for rule in registry())


@functools.cache
def catalogue_entry(code: str) -> RuleInfo:
    """The whole record of rule `code`, read from its file the first time it is asked for."""
    return read_record(catalogue_dir() / f"{code}{_SUFFIX}")


def load_catalogue() -> dict[str, RuleInfo]:
    """Every catalogue record by code, in code order (reads every record)."""
    return {code: catalogue_entry(code) for code in catalogue_codes()}


def record_paths(directory: Path) -> list[Path]:
    """The record files of a catalogue directory, in code order."""
    names = sorted(os.listdir(directory))
    return [directory / n for n in names if n.startswith("GPU") and n.endswith(_SUFFIX)]


def read_records(directory: Path) -> tuple[Rule, ...]:
    """Every rule of the catalogue in `directory`, in code order, parsed from its record."""
    return tuple(read_record(path).rule for path in record_paths(directory))


def read_record(path: Path) -> RuleInfo:
    """Parse one record file; raises CatalogueError naming the file and what is wrong."""
    from gpulint.yamltree import YMap, parse  # only the catalogue commands parse records

    code = path.name.removesuffix(_SUFFIX)
    result = parse(path.read_text(encoding="utf-8"))
    if result.error is not None or not result.documents:
        raise CatalogueError(f"{path}: broken catalogue record: {result.error}")
    entry = result.documents[0].value
    if not isinstance(entry, YMap):
        raise CatalogueError(f"{path}: a catalogue record must be a mapping")
    missing = [k for k in REQUIRED_FIELDS if k not in entry]
    unknown = [k for k in entry if k not in REQUIRED_FIELDS + OPTIONAL_FIELDS]
    if missing or unknown or entry["code"] != code:
        raise CatalogueError(
            f"{path}: a catalogue record has the keys {', '.join(REQUIRED_FIELDS)} (and "
            f"optionally {', '.join(OPTIONAL_FIELDS)}), and `code: {code}`; "
            f"missing {missing}, unknown {unknown}"
        )

    def text(key: str) -> str:
        return str(entry[key]).strip()

    def flag(key: str) -> bool:
        if not isinstance(entry[key], bool):
            raise CatalogueError(f"{path}: `{key}` is true or false")
        return entry[key]

    def kinds(key: str) -> frozenset[str]:
        value = entry.get(key) or []
        if not isinstance(value, list) or not all(isinstance(k, str) for k in value):
            raise CatalogueError(f"{path}: `{key}` is a list of kinds")
        return frozenset(value)

    scope = text("scope")
    if scope not in SCOPES:
        raise CatalogueError(f"{path}: `scope` is one of {', '.join(SCOPES)}")
    check = text("check")
    keeps = entry.get("keeps")
    summarizes = entry.get("summarizes")
    for key, target in (("check", check), ("keeps", keeps), ("summarizes", summarizes)):
        if target not in (None, ENGINE) and not _is_target(target):
            raise CatalogueError(f"{path}: `{key}` is `package.module:function`")
    autofix = entry.get("autofix")
    if autofix is not None and autofix not in AUTOFIXES:
        raise CatalogueError(f"{path}: `autofix` is one of {', '.join(AUTOFIXES)}")
    if keeps is not None and scope != "corpus":
        raise CatalogueError(f"{path}: only a rule of `scope: corpus` keeps workloads")
    if summarizes is not None and keeps is None:
        raise CatalogueError(f"{path}: only a rule that keeps workloads summarizes them")
    profile_fields = entry.get("profile_fields")
    if profile_fields is not None:
        if not isinstance(profile_fields, list) or not all(
            isinstance(f, str) and f.isidentifier() for f in profile_fields
        ):
            raise CatalogueError(f"{path}: `profile_fields` is a list of ClusterProfile fields")
        if flag("needs_profile") and not profile_fields:
            raise CatalogueError(f"{path}: a rule that needs a profile reads some of its fields")
        profile_fields = tuple(profile_fields)
    try:
        severity = Severity.parse(text("severity"))
    except KeyError:
        raise CatalogueError(f"{path}: `severity` is error, warning or info") from None
    rule = Rule(
        code=code,
        name=text("name"),
        severity=severity,
        fix=text("fix"),
        enabled=flag("enabled"),
        needs_profile=flag("needs_profile"),
        scope=scope,
        judges=kinds("judges"),
        reads=kinds("reads"),
        check=None if check == ENGINE else check,
        keeps=keeps,
        summarizes=summarizes,
        autofix=autofix,
        profile_fields=profile_fields,
    )
    return RuleInfo(rule, text("summary"), text("why"), text("example"), text("fixed"))


def _is_target(value: object) -> bool:
    if not isinstance(value, str):
        return False
    module, colon, attribute = value.partition(":")
    return bool(colon and module and attribute.isidentifier())


REGISTRY_MODULE = Path(__file__).resolve().parent / "_registry.py"


def registry_source(rules: Iterable[Rule]) -> str:
    """The text of gpulint/_registry.py listing `rules`."""
    lines = [
        '"""Every rule\'s engine facts, generated from rules/*.yaml: do not edit.',
        "",
        "Regenerate with `python -m gpulint.catalogue` after changing a record.",
        '"""',
        "",
        "from gpulint.model import Severity",
        "from gpulint.rules.base import Rule",
        "",
        "RULES = (",
    ]
    for rule in rules:
        fields = [
            f"code={rule.code!r}",
            f"name={rule.name!r}",
            f"severity=Severity.{rule.severity.name}",
            f"fix={rule.fix!r}",
            f"enabled={rule.enabled!r}",
            f"needs_profile={rule.needs_profile!r}",
            f"scope={rule.scope!r}",
        ]
        if rule.judges:
            fields.append(f"judges=frozenset({sorted(rule.judges)!r})")
        if rule.reads:
            fields.append(f"reads=frozenset({sorted(rule.reads)!r})")
        fields.append(f"check={rule.check!r}")
        if rule.keeps:
            fields.append(f"keeps={rule.keeps!r}")
        if rule.summarizes:
            fields.append(f"summarizes={rule.summarizes!r}")
        if rule.autofix:
            fields.append(f"autofix={rule.autofix!r}")
        if rule.profile_fields is not None:
            fields.append(f"profile_fields={rule.profile_fields!r}")
        lines.append("    Rule(")
        lines.extend(f"        {field}," for field in fields)
        lines.append("    ),")
    lines.append(")")
    return "\n".join(lines) + "\n"


README_TABLE_START = "<!-- rules-table"
README_TABLE_END = "<!-- end rules-table -->"


def regenerate(root: Path) -> list[Path]:
    """Write what the records of checkout `root` generate; return the files that changed.

    gpulint/_registry.py (the engine's facts), docs/rules.md and the README's rule table.
    """
    from gpulint.output.catalogue import rules_document, rules_markdown

    entries = [read_record(path) for path in record_paths(root / "rules")]
    readme = root / "README.md"
    old_readme = readme.read_text(encoding="utf-8")
    start = old_readme.index("\n", old_readme.index(README_TABLE_START)) + 1
    end = old_readme.index(README_TABLE_END)
    outputs = {
        root / "gpulint" / "_registry.py": registry_source(e.rule for e in entries),
        root / "docs" / "rules.md": rules_document(entries),
        readme: old_readme[:start] + rules_markdown(entries) + old_readme[end:],
    }
    changed = []
    for path, text in outputs.items():
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            changed.append(path)
    return changed


if __name__ == "__main__":
    # Through the imported module: this file run as __main__ is a second copy of it, whose
    # Rule class the generated registry does not use.
    from gpulint.catalogue import regenerate as _regenerate

    for _path in _regenerate(Path(__file__).resolve().parent.parent):
        print(f"wrote {_path}")
