"""JUnit XML for CI systems that show test reports: a testcase per checked object.

A finding is a `<failure>` of the object it is about; findings about a whole file (a file that
does not parse) get a testcase for that file.
"""

from __future__ import annotations

from gpulint.findings import Finding, LintResult
from gpulint.output.escape import MAX_NAME, one_line, xml_text
from gpulint.output.text import format_finding

FILE_CASE = "(file)"  # testcase name for findings that belong to no object


def testcases(result: LintResult) -> dict[tuple[str, str], list[Finding]]:
    """(classname = path, name = object) -> its findings, in input order."""
    cases: dict[tuple[str, str], list[Finding]] = {
        (checked.path, str(checked.ref)): [] for checked in result.checked
    }
    for finding in result.findings:
        name = FILE_CASE if finding.object is None else str(finding.object)
        cases.setdefault((finding.path, name), []).append(finding)
    return cases


def format_junit(result: LintResult) -> str:
    """The run as a `<testsuites>` document with one `gpulint` suite."""
    # Imported here: pre-commit start-up should not pay for XML when the output is text.
    from xml.etree import ElementTree

    cases = testcases(result)
    counts = {
        "tests": str(len(cases)),
        "failures": str(sum(1 for findings in cases.values() if findings)),
        "errors": "0",
        "skipped": "0",
    }
    suites = ElementTree.Element("testsuites", {"name": "gpulint", **counts})
    suite = ElementTree.SubElement(suites, "testsuite", {"name": "gpulint", **counts})
    # Every text is made XML 1.0 (a key may hold a control character) and cut.
    for (path, name), findings in cases.items():
        attributes = {"classname": xml_text(path, len(path)), "name": xml_text(name, MAX_NAME)}
        case = ElementTree.SubElement(suite, "testcase", attributes)
        for finding in findings:
            failure = ElementTree.SubElement(
                case,
                "failure",
                {
                    "type": finding.code,
                    "message": xml_text(f"{finding.code} {one_line(finding.message)}"),
                },
            )
            text = format_finding(finding)  # escaped and cut for text already
            failure.text = xml_text(text, len(text))
    ElementTree.indent(suites)
    return ElementTree.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"
