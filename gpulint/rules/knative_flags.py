"""GPU026 knative-podspec-extension-flag: a Knative Service's GPU pod sets a scheduling field
that Knative Serving refuses unless an extension flag of its `config-features` allows it."""

from __future__ import annotations

from collections.abc import Iterator

from gpulint.fields import mapping_at
from gpulint.gpus import accelerator_names
from gpulint.model import of_kind
from gpulint.rules.base import CheckContext, Problem
from gpulint.shapes import api_group

# Knative Serving's pod spec extensions that decide where a pod runs, by field, with the
# `config-features` key that allows each (knative/docs docs/versioned/serving/configuration/
# feature-flags.md at 62e167ed: "Each extension is always controlled by a flag and is never
# enabled by default"; the webhook refuses a Service that sets a field whose flag is
# disabled, "must not set the field(s)").
_EXTENSIONS = (
    ("nodeSelector", "kubernetes.podspec-nodeselector"),
    ("affinity", "kubernetes.podspec-affinity"),
    ("tolerations", "kubernetes.podspec-tolerations"),
    ("topologySpreadConstraints", "kubernetes.podspec-topologyspreadconstraints"),
    ("runtimeClassName", "kubernetes.podspec-runtimeclassname"),
    ("priorityClassName", "kubernetes.podspec-priorityclassname"),
    ("schedulerName", "kubernetes.podspec-schedulername"),
)
_KNATIVE_SERVING = "serving.knative.dev"


def knative_podspec_extension(ctx: CheckContext) -> Iterator[Problem]:
    """A Knative Service (or Configuration) whose pod requests accelerators and sets fields
    that only an extension flag lets Knative accept (unless the inputs enable it): one finding
    per pod, at the first."""
    enabled: frozenset[str] | None = None
    for workload, template in ctx.pod_templates():
        if api_group(workload.document.ref.api_version) != _KNATIVE_SERVING:
            continue
        if not accelerator_names(template.effective_requests):
            continue
        spec = template.spec
        used = [(field, flag) for field, flag in _EXTENSIONS if spec.get(field) is not None]
        if enabled is None:
            enabled = _enabled_flags(ctx)
        used = [(field, flag) for field, flag in used if flag not in enabled]
        if not used:
            continue
        first = min(used, key=lambda item: spec.pos_of_key(item[0]))[0]
        fields = _listed([f"`{field}`" for field, _ in used])
        flags = _listed([f"`{flag}`" for _, flag in used])
        enable = "\n".join(f"  {flag}: enabled" for _, flag in used)
        yield Problem.at(
            template.document,
            spec.pos_of_key(first),
            f"the pod sets {fields}, which Knative Serving accepts only where its "
            f"`config-features` ConfigMap enables {flags} (extensions, disabled on a default "
            "install): where they are not enabled, Knative's webhook refuses the "
            f"{workload.document.ref.kind} and no GPU pod runs",
            "Enable the flags in the `config-features` ConfigMap of the `knative-serving` "
            "namespace (or the KnativeServing resource's `spec.config.features`), as GPU "
            f"pods on tainted or labelled pools need:\n{enable}\nOn a cluster that has, "
            "ignore GPU026 in the config.",
        )


def _enabled_flags(ctx: CheckContext) -> frozenset[str]:
    """The flags the inputs enable: the `config-features` ConfigMap of the `knative-serving`
    namespace, and a KnativeServing's `spec.config.features` (operator.knative.dev), whose
    values the operator writes into that ConfigMap."""
    found: set[str] = set()
    for document in of_kind(ctx.knowledge, "ConfigMap", "KnativeServing"):
        if document.ref.kind == "ConfigMap":
            if ctx.namespace_of(document) != "knative-serving":
                continue
            flags = mapping_at(document.obj, "data")
        elif api_group(document.ref.api_version) == "operator.knative.dev":
            flags = mapping_at(document.obj, "spec", "config", "features")
        else:
            continue
        found.update(k for k, v in flags.items() if str(v).strip().lower() == "enabled")
    return frozenset(found)


def _listed(words: list[str]) -> str:
    """`a`, `a and b`, `a, b and c`."""
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"
