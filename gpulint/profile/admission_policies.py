"""Policy-engine objects that refuse pods without resource requests or limits.

Read from a kubectl dump given as a profile, and from the checked manifests. The shapes are
those of the policy libraries most clusters install as they are:

- Gatekeeper (open-policy-agent/gatekeeper-library): a `K8sRequiredResources` constraint
  (`spec.parameters.limits` and `.requests`, lists of `cpu` and `memory`), and a
  `K8sContainerLimits` constraint, which needs a cpu and a memory limit in every container;
  both judge init containers too.
  `spec.enforcementAction` defaults to `deny`; `dryrun` and `warn` refuse nothing.
- Kyverno (kyverno/policies `best-practices/require-pod-requests-limits`): a `ClusterPolicy` or
  `Policy` whose rule validates `spec.containers[].resources.requests|limits.<name>: "?*"`
  (and init containers when it names `=(initContainers)`, as the library's policy does).
  It refuses only with `validationFailureAction: Enforce` (or the rule's
  `validate.failureAction: Enforce`); `Audit`, the library's default, refuses nothing.

Both run as validating webhooks, after LimitRanger has filled in its defaults.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpulint.profile.values import mapping, sequence, text
from gpulint.views import NamedTuple

#: The kinds this module reads.
POLICY_KINDS = frozenset({"K8sRequiredResources", "K8sContainerLimits", "ClusterPolicy", "Policy"})
_GATEKEEPER_GROUP = "constraints.gatekeeper.sh/"
_KYVERNO_GROUP = "kyverno.io/"


class RequiredResources(NamedTuple):
    """A policy that refuses a pod whose containers do not set these requests and limits."""

    engine: str  # Gatekeeper, Kyverno
    kind: str
    name: str
    namespaces: tuple[str, ...] = ()  # empty: every namespace
    excluded: tuple[str, ...] = ()
    requests: tuple[str, ...] = ()
    limits: tuple[str, ...] = ()
    init_containers: bool = True  # init containers must set them too

    @property
    def label(self) -> str:
        """`Gatekeeper K8sRequiredResources/container-must-have-limits`."""
        return f"{self.engine} {self.kind}/{self.name}"

    def applies_to(self, namespace: str) -> bool:
        """Whether the policy judges pods of `namespace`."""
        if namespace in self.excluded:
            return False
        return not self.namespaces or namespace in self.namespaces


def required_resources(obj: Mapping[str, Any]) -> RequiredResources | None:
    """The enforced requirement an object states, or None (another kind, or not enforced)."""
    kind, api = text(obj.get("kind")), text(obj.get("apiVersion"))
    metadata, spec = mapping(obj.get("metadata")), mapping(obj.get("spec"))
    name = text(metadata.get("name"))
    if api.startswith(_GATEKEEPER_GROUP) and kind in ("K8sRequiredResources", "K8sContainerLimits"):
        if text(spec.get("enforcementAction")) not in ("", "deny"):
            return None
        match = mapping(spec.get("match"))
        scope = (
            _names(match.get("namespaces")),
            _names(match.get("excludedNamespaces")),
        )
        if kind == "K8sContainerLimits":
            return RequiredResources("Gatekeeper", kind, name, *scope, (), ("cpu", "memory"))
        parameters = mapping(spec.get("parameters"))
        return RequiredResources(
            "Gatekeeper",
            kind,
            name,
            *scope,
            _names(parameters.get("requests")),
            _names(parameters.get("limits")),
        )
    if api.startswith(_KYVERNO_GROUP) and kind in ("ClusterPolicy", "Policy"):
        enforced = text(spec.get("validationFailureAction")).lower() == "enforce"
        requests: dict[str, None] = {}
        limits: dict[str, None] = {}
        init = False
        for rule in map(mapping, sequence(spec.get("rules"))):
            validate = mapping(rule.get("validate"))
            if not (enforced or text(validate.get("failureAction")).lower() == "enforce"):
                continue
            pod_spec = mapping(mapping(validate.get("pattern")).get("spec"))
            # `=(initContainers)`: the library's conditional anchor, init containers when any.
            init = init or "=(initContainers)" in pod_spec or "initContainers" in pod_spec
            for container in map(mapping, sequence(pod_spec.get("containers"))):
                resources = mapping(container.get("resources"))
                requests.update(dict.fromkeys(_wildcards(resources.get("requests"))))
                limits.update(dict.fromkeys(_wildcards(resources.get("limits"))))
        if not requests and not limits:
            return None
        namespaces = (text(metadata.get("namespace")) or "default",) if kind == "Policy" else ()
        return RequiredResources(
            "Kyverno", kind, name, namespaces, (), (*requests,), (*limits,), init
        )
    return None


def _names(value: Any) -> tuple[str, ...]:
    return tuple(text(v) for v in sequence(value) if isinstance(v, str))


def _wildcards(value: Any) -> list[str]:
    """The keys a Kyverno pattern requires to be set to something (`"?*"`)."""
    return [str(k) for k, v in mapping(value).items() if text(v) in ("?*", "*?")]
