"""GPU107: a node selector on a GPU model label value that no GPU model carries."""

import functools
import re
from collections.abc import Iterator

from gpulint.data.gpu_products import GFD_PRODUCT_LABEL, PRODUCT_LABELS, ProductFamily
from gpulint.model import PodTemplate, Severity
from gpulint.rules.base import CheckContext, Problem
from gpulint.views import NamedTuple
from gpulint.yamltree import Pos, YMap

# Patterns compiled on first use (re caches them): only a run with a GPU model label among
# its selectors reads them, and the last two only for a value no model carries.
# What GFD appends to the model: `-MIG-1g.5gb` under the `single` strategy, `-SHARED` when
# time-slicing or MPS does not rename the resource.
_GFD_SUFFIX = r"(?:-MIG-[0-9A-Za-z.]+)?(?:-SHARED)?\Z"
_TOKEN = r"[-_ ]+"
# The first words of a value written the way the labeller writes it.
_LABELLER_SPELLING = {
    GFD_PRODUCT_LABEL: r"(?i)(?:NVIDIA|Tesla|Quadro)-",
    "cloud.google.com/gke-accelerator": r"(?i)nvidia-",
}
_WRITER = {
    GFD_PRODUCT_LABEL: "GPU Feature Discovery",
    "cloud.google.com/gke-accelerator": "GKE",
}


class LabelVerdict(NamedTuple):
    """Why no node carries a label value, and the value that was meant."""

    severity: Severity  # ERROR: no model carries it; INFO: not the labeller's spelling
    family: ProductFamily
    suggestion: str


def unknown_gpu_product_label(ctx: CheckContext) -> Iterator[Problem]:
    """A nodeSelector or required node affinity on a GPU model value no node can carry.

    With a cluster profile the pools' own labels decide (GPU101); without one, and for pods
    another controller creates on other clusters (`managedBy`), the catalogue of the values GPU
    Feature Discovery and GKE write does.
    """
    pools = ctx.profile is not None and bool(ctx.profile.pools)
    for workload, template in ctx.pod_templates():
        if pools and ctx.managed_elsewhere(workload) is None:
            continue
        yield from _in_node_selector(template)
        if "affinity" in template.spec:  # reading affinity imports the constraint model
            yield from _in_node_affinity(template)


def _in_node_selector(template: PodTemplate) -> Iterator[Problem]:
    selector = template.spec.get("nodeSelector")
    if not isinstance(selector, YMap):
        return
    for label, value in template.node_selector.items():
        verdict = judge(label, value) if label in PRODUCT_LABELS else None
        if verdict is not None:
            pos = selector.pos_of_value(label)
            yield _problem(template, pos, f"nodeSelector `{label}: {value}`", label, verdict)


def _in_node_affinity(template: PodTemplate) -> Iterator[Problem]:
    for term in template.required_node_affinity or ():
        for requirement in term.match_expressions:
            label = requirement.key
            if label not in PRODUCT_LABELS or requirement.operator != "In":
                continue
            verdicts = [judge(label, value) for value in requirement.values]
            if not verdicts or any(v is None for v in verdicts):
                continue  # some value can match: the others are only dead alternatives
            for value, verdict in zip(requirement.values, verdicts, strict=True):
                assert verdict is not None
                where = f"required node affinity `{label} In [{value}]`"
                yield _problem(template, requirement.pos, where, label, verdict)


def _problem(
    template: PodTemplate, pos: Pos, where: str, label: str, verdict: LabelVerdict
) -> Problem:
    writer = _WRITER[label]
    spelled = ", ".join(f"`{v}`" for v in verdict.family.values[:4])
    if verdict.severity is Severity.ERROR:
        message = (
            f"{where}: {writer} labels no node with this value (no {verdict.family.model} "
            f"GPU carries it; it writes {spelled}), so the pod can never be scheduled; did you "
            f"mean `{verdict.suggestion}`?"
        )
    else:
        message = (
            f"{where}: not how {writer} spells any GPU model ({verdict.family.model} nodes "
            f"carry {spelled}); unless the nodes are labelled by hand, no node matches; did "
            f"you mean `{verdict.suggestion}`?"
        )
    return Problem.at(
        template.document,
        pos,
        message,
        f"Select `{label}: {verdict.suggestion}`, or the value `kubectl get nodes -L {label}` "
        "shows on the GPU nodes.",
        severity=verdict.severity,
    )


@functools.lru_cache(maxsize=1024)
def judge(label: str, value: str) -> LabelVerdict | None:
    """Why no node of any known GPU model carries `label: value`; None when one can, or when
    the value names a model the catalogue does not know (a newer GPU is not an error)."""
    families = PRODUCT_LABELS[label]
    suffix_match = re.search(_GFD_SUFFIX, value) if label == GFD_PRODUCT_LABEL else None
    suffix = suffix_match.group(0) if suffix_match else ""
    base = value[: len(value) - len(suffix)] if suffix else value
    if _carried(families, base):
        return None
    for family in families:
        for known in family.values:
            if known.lower() == base.lower():  # label values are case-sensitive
                return LabelVerdict(Severity.ERROR, family, known + suffix)
    family = _family_of(families, base)
    if family is None:
        return None
    if re.match(_LABELLER_SPELLING[label], base):
        return LabelVerdict(Severity.ERROR, family, _closest(base, family) + suffix)
    return LabelVerdict(Severity.INFO, family, family.values[0] + suffix)


def _closest(base: str, family: ProductFamily) -> str:
    """The family's value that shares most words with `base`, a memory size counting double
    (`NVIDIA-H100-SXM4-80GB` meant the 80GB board), then the closest spelling."""
    import difflib  # only for a value that is wrong

    words = set(re.split(_TOKEN, base.lower()))

    def score(known: str) -> tuple[int, float]:
        shared = words & set(re.split(_TOKEN, known.lower()))
        weight = sum(2 if word.endswith("gb") else 1 for word in shared)
        return weight, difflib.SequenceMatcher(None, base, known).ratio()

    return max(family.values, key=score)


def _carried(families: tuple[ProductFamily, ...], base: str) -> bool:
    """Whether a GPU of some family carries `base`: the listed values of every family are
    looked at before any family's pattern, which is compiled only then."""
    return any(base in family.values for family in families) or any(
        family.pattern is not None and re.fullmatch(family.pattern, base) is not None
        for family in families
    )


def _family_of(families: tuple[ProductFamily, ...], base: str) -> ProductFamily | None:
    """The family whose model the value names (`H100` in `NVIDIA-H100-SXM4-80GB`)."""
    by_model = {family.model.lower(): family for family in families}
    for token in re.split(_TOKEN, base.lower()):
        family = by_model.get(token)
        if family is not None:
            return family
    return None
