"""The upstream OpenAPI schemas of each Kubernetes release, and validators built from them.

The schemas are those of the `kubernetes-validate` package (its `local-strict` set: every
object schema forbids fields it does not define, as the API server's strict field validation
does); the validator is `jsonschema-rs`. Both come with the optional `gpulint[schema]` extra:
together they are ten times the size of gpulint's other dependencies. Nothing here is imported
until an object needs validating, and each release's definitions are read, and each kind's
validator built, once per run.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

from gpulint.validation.apiversions import Release, release
from gpulint.views import NamedTuple

#: What a user runs to get schema validation.
EXTRA = "pip install 'gpulint[schema]'"
#: The URI the definitions of a release are registered under (the `$id` they declare).
DEFINITIONS_URI = "https://kubernetes.io/api/_definitions.json"

# Values the API server accepts for fields whose OpenAPI schema names no enum (server-side
# validation enforces them: `Unsupported value: "always": supported values: "Always", ...`).
# An empty value is defaulted, and null is no value: both stay valid.
_ENUMS: dict[tuple[str, str], tuple[str, ...]] = {
    ("io.k8s.api.core.v1.Container", "imagePullPolicy"): ("Always", "IfNotPresent", "Never"),
    ("io.k8s.api.core.v1.EphemeralContainer", "imagePullPolicy"): (
        "Always",
        "IfNotPresent",
        "Never",
    ),
    ("io.k8s.api.core.v1.PodSpec", "restartPolicy"): ("Always", "OnFailure", "Never"),
    ("io.k8s.api.core.v1.PodSpec", "dnsPolicy"): (
        "ClusterFirstWithHostNet",
        "ClusterFirst",
        "Default",
        "None",
    ),
    ("io.k8s.api.core.v1.PodSpec", "preemptionPolicy"): ("Never", "PreemptLowerPriority"),
    ("io.k8s.api.core.v1.Toleration", "effect"): ("NoSchedule", "PreferNoSchedule", "NoExecute"),
    ("io.k8s.api.core.v1.NodeSelectorRequirement", "operator"): (
        "In",
        "NotIn",
        "Exists",
        "DoesNotExist",
        "Gt",
        "Lt",
    ),
    ("io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelectorRequirement", "operator"): (
        "In",
        "NotIn",
        "Exists",
        "DoesNotExist",
    ),
    ("io.k8s.api.core.v1.ContainerPort", "protocol"): ("TCP", "UDP", "SCTP"),
    ("io.k8s.api.core.v1.ServicePort", "protocol"): ("TCP", "UDP", "SCTP"),
    ("io.k8s.api.core.v1.ServiceSpec", "type"): (
        "ClusterIP",
        "NodePort",
        "LoadBalancer",
        "ExternalName",
    ),
    ("io.k8s.api.apps.v1.DeploymentStrategy", "type"): ("Recreate", "RollingUpdate"),
    ("io.k8s.api.apps.v1.StatefulSetSpec", "podManagementPolicy"): ("OrderedReady", "Parallel"),
    ("io.k8s.api.core.v1.TopologySpreadConstraint", "whenUnsatisfiable"): (
        "DoNotSchedule",
        "ScheduleAnyway",
    ),
    ("io.k8s.api.batch.v1.JobSpec", "completionMode"): ("NonIndexed", "Indexed"),
    ("io.k8s.api.batch.v1.CronJobSpec", "concurrencyPolicy"): ("Allow", "Forbid", "Replace"),
}


@functools.cache
def schema_directory() -> Path | None:
    """Where kubernetes-validate keeps its schemas; None without the extra."""
    # find_spec, not an import: the package's own __init__ imports PyYAML and jsonschema.
    import importlib.util

    try:
        spec = importlib.util.find_spec("kubernetes_validate")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        directory = Path(location) / "kubernetes-json-schema"
        if directory.is_dir():
            return directory
    return None


def available() -> bool:
    """Whether schema validation can run: the extra's schemas and validator are installed."""
    return schema_directory() is not None and _validator_installed()


def unavailable_note() -> tuple[str, ...]:
    """The run's note when schema validation (GPU012) is selected but cannot run."""
    if available():
        return ()
    return (f"GPU012 skipped: objects not validated against the Kubernetes schemas ({EXTRA})",)


@functools.cache
def _validator_installed() -> bool:
    import importlib.util

    return importlib.util.find_spec("jsonschema_rs") is not None


@functools.cache
def releases() -> tuple[Release, ...]:
    """The releases whose strict schemas are installed, oldest first."""
    directory = schema_directory()
    if directory is None:
        return ()
    found = []
    for entry in directory.iterdir():
        name = entry.name
        if name.startswith("v") and name.endswith("-local-strict"):
            version = release(name)
            if version is not None:
                found.append(version)
    return tuple(sorted(found))


def schema_release(target: Release) -> Release | None:
    """The newest installed release not newer than `target` (the newest for a newer target);
    None when `target` is older than every installed release."""
    installed = releases()
    if not installed or target < installed[0]:
        return None
    return max(r for r in installed if r <= target) if target <= installed[-1] else installed[-1]


class KindSchema(NamedTuple):
    """Where the schema of one kind in one API version lives."""

    definition: str  # its name among the release's definitions
    release: Release


class ReleaseSchemas:
    """One release's definitions: which kinds each built-in API version serves, and the
    validators of the kinds asked for (each built once)."""

    # A plain class: a handful per run, holding caches filled in place.
    def __init__(self, version: Release, definitions: dict[str, Any]) -> None:
        self.release = version
        self.definitions: dict[str, Any] = definitions["$defs"]
        self._document = definitions
        # (apiVersion, kind) -> definition name, from each definition's group-version-kind.
        self.kinds: dict[tuple[str, str], str] = {}
        for name, schema in self.definitions.items():
            properties = schema.get("properties") or {}
            if "metadata" not in properties or "apiVersion" not in properties:
                continue  # DeleteOptions, WatchEvent ... list every group, and are no objects
            for gvk in schema.get("x-kubernetes-group-version-kind") or ():
                group, version = gvk.get("group", ""), gvk.get("version", "")
                api_version = f"{group}/{version}" if group else version
                self.kinds.setdefault((api_version, gvk.get("kind", "")), name)
        self.groups = frozenset(_group(api_version) for api_version, _ in self.kinds)
        self._validators: dict[str, Any] = {}
        self._registry: Any = None

    def definition(self, api_version: str, kind: str) -> str | None:
        """The definition of `kind` in `api_version`, when this release serves it."""
        return self.kinds.get((api_version, kind))

    def served_versions(self, group: str, kind: str) -> list[str]:
        """The API versions of `group` in which this release serves `kind`."""
        return sorted(v for v, k in self.kinds if k == kind and _group(v) == group)

    def validator(self, definition: str) -> Any:
        """The validator of one definition (a jsonschema_rs validator), built on first use."""
        found = self._validators.get(definition)
        if found is None:
            import jsonschema_rs

            if self._registry is None:
                self._registry = jsonschema_rs.Registry([(DEFINITIONS_URI, self._document)])
            reference = {"$ref": f"{DEFINITIONS_URI}#/$defs/{definition}"}
            found = jsonschema_rs.validator_for(reference, registry=self._registry)
            self._validators[definition] = found
        return found


def _group(api_version: str) -> str:
    return api_version.rpartition("/")[0] if "/" in api_version else ""


@functools.cache
def release_schemas(version: Release) -> ReleaseSchemas | None:
    """The definitions of installed release `version` (see `schema_release`), read once."""
    directory = schema_directory()
    if directory is None:
        return None
    path = directory / f"v{version[0]}.{version[1]}.0-local-strict" / "_definitions.json"
    try:
        definitions = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    for (name, field), values in _ENUMS.items():
        schema = definitions["$defs"].get(name)
        prop = schema.get("properties", {}).get(field) if schema else None
        if isinstance(prop, dict) and "enum" not in prop:
            prop["enum"] = [*values, "", None]
    return ReleaseSchemas(version, definitions)
