"""The scheduling model's predicates, checked as properties over small universes of inputs."""

from __future__ import annotations

import itertools
import json
import re
from decimal import Decimal
from pathlib import Path

import pytest

from gpulint.api import lint
from gpulint.config import Config
from gpulint.constraints import SelectorRequirement, Toleration
from gpulint.loader import load_text
from gpulint.model import PodTemplate, Severity
from gpulint.profile.load import load_profiles
from gpulint.profile.model import ClusterProfile, LabelRequirement, Pool, Taint
from gpulint.scheduling import (
    Filter,
    admitted_tolerations,
    affinity_mismatch,
    can_carry,
    extended_resource_tolerations,
    format_amount,
    label_selector_matches,
    place,
    pool_fit,
    pools_named,
    requirement_matches,
    resource_shortfalls,
    selector_mismatch,
    tolerates,
    untolerated_taints,
)
from gpulint.workloads import workload_of
from gpulint.yamltree import parse

KEYS = ("nvidia.com/gpu", "dedicated", "sku")
VALUES = ("", "present", "gpu")
EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
TAINTS = tuple(Taint(k, v, e) for k, v, e in itertools.product(KEYS, VALUES, EFFECTS))
# Every label set over two keys, each absent or carrying one of three values.
LABEL_SETS = tuple(
    {k: v for k, v in zip(("zone", "gpu.count"), combo, strict=True) if v is not None}
    for combo in itertools.product((None, "a", "8", "x9"), repeat=2)
)


def toleration(
    key: str = "", operator: str = "Equal", value: str = "", effect: str = ""
) -> Toleration:
    return Toleration(key, operator, value, effect, None, (1, 1))


def requirement(key: str, operator: str, *values: str) -> SelectorRequirement:
    return SelectorRequirement(key, operator, values, (1, 1))


def template_of(text: str) -> PodTemplate:
    documents = load_text("pod.yaml", text).documents
    workload = workload_of(documents[0])
    assert workload is not None
    return workload.templates[0]


def pod(spec: str) -> PodTemplate:
    return template_of(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
        + "".join(f"  {line}\n" for line in spec.strip("\n").splitlines())
    )


GPU_POD = """
containers:
- name: c
  resources:
    requests: {cpu: "1", memory: 1Gi}
    limits: {nvidia.com/gpu: 1}
"""

GPU_TAINT = Taint("nvidia.com/gpu", "present", "NoSchedule")


def gpu_pool(name: str = "gpu", **changes: object) -> Pool:
    values: dict[str, object] = {
        "labels": {"pool": name, "accelerator": "a100"},
        "taints": (GPU_TAINT,),
        "allocatable": {"cpu": Decimal(8), "memory": Decimal(2**35), "nvidia.com/gpu": Decimal(4)},
        "nodes": 1,
        "max_nodes": 2,
        "scale_from_zero": True,
    }
    values.update(changes)
    return Pool(name, **values)  # type: ignore[arg-type]


CPU_POOL = Pool(
    "cpu",
    labels={"pool": "cpu"},
    allocatable={"cpu": Decimal(8), "memory": Decimal(2**35)},
    nodes=2,
    max_nodes=4,
)


# --- taints and tolerations ------------------------------------------------------------------


@pytest.mark.parametrize("taint", TAINTS, ids=str)
def test_exists_without_key_tolerates_every_taint(taint: Taint) -> None:
    assert tolerates(toleration(operator="Exists"), taint)


@pytest.mark.parametrize("taint", TAINTS, ids=str)
def test_exists_without_key_but_with_effect_tolerates_that_effect_only(taint: Taint) -> None:
    assert tolerates(toleration(operator="Exists", effect="NoSchedule"), taint) is (
        taint.effect == "NoSchedule"
    )


@pytest.mark.parametrize("taint", TAINTS, ids=str)
def test_equal_needs_key_and_value_and_effect(taint: Taint) -> None:
    for key, value, effect in itertools.product(KEYS, VALUES, ("", *EFFECTS)):
        expected = key == taint.key and value == taint.value and effect in ("", taint.effect)
        assert tolerates(toleration(key, "Equal", value, effect), taint) is expected
        # An empty operator means Equal.
        assert tolerates(toleration(key, "", value, effect), taint) is expected


@pytest.mark.parametrize(("taint", "key"), list(itertools.product(TAINTS, KEYS)))
def test_exists_with_key_ignores_the_value(taint: Taint, key: str) -> None:
    assert tolerates(toleration(key, "Exists"), taint) is (key == taint.key)


@pytest.mark.parametrize("operator", ["Gt", "Lt", "NotEqual", "exists"])
def test_other_operators_never_tolerate(operator: str) -> None:
    assert not any(tolerates(toleration(t.key, operator, t.value, t.effect), t) for t in TAINTS)


def test_only_no_schedule_and_no_execute_block() -> None:
    blocking = untolerated_taints((), TAINTS)
    assert {t.effect for t in blocking} == {"NoSchedule", "NoExecute"}
    assert len(blocking) == len(TAINTS) * 2 // 3


def test_every_taint_must_be_tolerated() -> None:
    taints = (GPU_TAINT, Taint("dedicated", "ml", "NoSchedule"))
    held = (toleration("nvidia.com/gpu", "Exists"),)
    assert untolerated_taints(held, taints) == (taints[1],)


def test_a_pod_bound_by_node_name_is_kept_off_only_by_no_execute_taints() -> None:
    # The scheduler never sees it; the kubelet's admission checks NoExecute taints alone.
    bound = pod("nodeName: gpu-node-1\n" + GPU_POD)
    evicting = Taint("maintenance", "true", "NoExecute")
    pool = gpu_pool(taints=(GPU_TAINT, evicting))
    assert pool_fit(bound, pool, None).untolerated == (evicting,)
    assert pool_fit(pod(GPU_POD), pool, None).untolerated == (GPU_TAINT, evicting)
    profile = ClusterProfile(pools=(pool,))
    (fit,) = place(bound, profile).fits
    assert fit.untolerated == (evicting,)


# --- node selector requirements --------------------------------------------------------------


@pytest.mark.parametrize("labels", LABEL_SETS, ids=str)
def test_not_in_matches_nodes_without_the_label(labels: dict[str, str]) -> None:
    for values in (("a",), ("a", "8"), ("zzz",)):
        matched = requirement_matches(requirement("zone", "NotIn", *values), labels)
        if "zone" not in labels:
            assert matched
        else:
            assert matched is (labels["zone"] not in values)
            assert matched is not requirement_matches(requirement("zone", "In", *values), labels)


@pytest.mark.parametrize("labels", LABEL_SETS, ids=str)
def test_exists_and_does_not_exist_are_opposites(labels: dict[str, str]) -> None:
    exists = requirement_matches(requirement("zone", "Exists"), labels)
    assert exists is ("zone" in labels)
    assert exists is not requirement_matches(requirement("zone", "DoesNotExist"), labels)


@pytest.mark.parametrize("labels", LABEL_SETS, ids=str)
def test_gt_and_lt_compare_integers_strictly(labels: dict[str, str]) -> None:
    have = labels.get("gpu.count")
    for bound in ("7", "8", "9"):
        gt = requirement_matches(requirement("gpu.count", "Gt", bound), labels)
        lt = requirement_matches(requirement("gpu.count", "Lt", bound), labels)
        if have is None or not have.isdigit():
            # A missing or non-integer label never matches either way.
            assert not gt and not lt
        else:
            assert gt is (int(have) > int(bound))
            assert lt is (int(have) < int(bound))


@pytest.mark.parametrize(
    "req",
    [
        requirement("gpu.count", "Gt", "x"),
        requirement("gpu.count", "Gt", "1", "2"),
        requirement("gpu.count", "Lt"),
        requirement("gpu.count", "Gt", "1.5"),
        requirement("gpu.count", "Lt", str(2**63)),
        requirement("gpu.count", "Near", "8"),
    ],
    ids=lambda r: f"{r.operator}{list(r.values)}",
)
def test_malformed_comparisons_never_match(req: SelectorRequirement) -> None:
    assert not any(requirement_matches(req, labels | {"gpu.count": "8"}) for labels in LABEL_SETS)


def test_terms_are_ored_and_expressions_anded() -> None:
    labels = {"zone": "a", "gpu.count": "8"}
    affinity = pod("""
affinity:
  nodeAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
      nodeSelectorTerms:
      - matchExpressions:
        - {key: zone, operator: In, values: [a]}
        - {key: gpu.count, operator: Gt, values: ["8"]}
      - matchExpressions:
        - {key: zone, operator: In, values: [b]}
""")
    terms = affinity.required_node_affinity
    assert terms is not None
    miss = affinity_mismatch(terms, labels, (1, 1))
    assert miss is not None and "term 1: required affinity gpu.count Gt [8]" in miss.detail
    assert miss.key == "gpu.count"
    assert affinity_mismatch(terms, {"zone": "b"}, (1, 1)) is None
    assert affinity_mismatch(terms, {"zone": "a", "gpu.count": "16"}, (1, 1)) is None


def test_empty_term_matches_nothing() -> None:
    template = pod("""
affinity:
  nodeAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
      nodeSelectorTerms:
      - {}
""")
    assert all(selector_mismatch(template, labels) is not None for labels in LABEL_SETS)


def test_no_terms_matches_nothing() -> None:
    template = pod("""
affinity:
  nodeAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
      nodeSelectorTerms: []
""")
    assert all(selector_mismatch(template, labels) is not None for labels in LABEL_SETS)


def test_match_fields_on_node_name_cannot_be_decided_from_a_pool() -> None:
    template = pod("""
affinity:
  nodeAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
      nodeSelectorTerms:
      - matchFields:
        - {key: metadata.name, operator: In, values: [node-1]}
""")
    miss = selector_mismatch(template, {"zone": "a"})
    assert miss is not None and not miss.decidable
    placement = place(template, ClusterProfile(pools=(CPU_POOL,)))
    assert not placement.decidable and placement.eligible == ()


def test_match_fields_on_other_keys_matches_nothing() -> None:
    template = pod("""
affinity:
  nodeAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
      nodeSelectorTerms:
      - matchFields:
        - {key: metadata.labels, operator: In, values: [x]}
""")
    miss = selector_mismatch(template, {"zone": "a"})
    assert miss is not None and miss.decidable


def test_node_selector_and_affinity_must_both_match() -> None:
    template = pod("""
nodeSelector: {zone: a}
affinity:
  nodeAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
      nodeSelectorTerms:
      - matchExpressions:
        - {key: gpu.count, operator: Exists}
""")
    assert selector_mismatch(template, {"zone": "a", "gpu.count": "1"}) is None
    by_selector = selector_mismatch(template, {"zone": "b", "gpu.count": "1"})
    assert by_selector is not None
    assert by_selector.detail == "nodeSelector zone=a (pool has b)"
    assert by_selector.pos == (5, 18)
    by_affinity = selector_mismatch(template, {"zone": "a"})
    assert by_affinity is not None and by_affinity.key == "gpu.count"


# --- Labels whose value differs from node to node (a NodePool's zones) --------------------------

# Pool-side requirements over one label, and pod-side ones, from small universes; every
# brute-force value below decides them (the bounds are 3 and 8).
POOL_SIDES = (
    (),
    (LabelRequirement("k", "In", ("a", "b")),),
    (LabelRequirement("k", "In", ("a", "8")),),
    (LabelRequirement("k", "Exists"),),
    (LabelRequirement("k", "NotIn", ("a",)),),
    (LabelRequirement("k", "Gt", ("3",)), LabelRequirement("k", "Lt", ("8",))),
    (LabelRequirement("k", "Gte", ("8",)),),
)
POD_SIDES = tuple(
    requirement("k", op, *values)
    for op, values in (
        ("In", ("a",)), ("In", ("c",)), ("In", ("8",)), ("NotIn", ("a", "b")), ("Exists", ()),
        ("DoesNotExist", ()), ("Gt", ("3",)), ("Lt", ("8",)), ("Gt", ("8",)),
    )
)  # fmt: skip
BRUTE_VALUES = (None, "a", "b", "c", "zz", *(str(n) for n in range(-1, 12)))


@pytest.mark.parametrize("pool_side", POOL_SIDES, ids=lambda p: " & ".join(map(str, p)) or "-")
def test_a_varying_label_fits_when_some_one_value_meets_both_sides(
    pool_side: tuple[LabelRequirement, ...],
) -> None:
    for wanted in itertools.chain(([w] for w in POD_SIDES), itertools.combinations(POD_SIDES, 2)):
        brute = any(
            all(r.allows(v) for r in pool_side)
            and all(requirement_matches(w, {} if v is None else {"k": v}) for w in wanted)
            for v in BRUTE_VALUES
        )
        assert can_carry(pool_side, wanted) == brute, (pool_side, wanted)


def test_a_zone_a_nodepool_spans_is_selected_and_a_zone_it_does_not_is_named() -> None:
    zones = (LabelRequirement("topology.kubernetes.io/zone", "In", ("us-west-2a", "us-west-2b")),)
    selecting = pod("nodeSelector: {topology.kubernetes.io/zone: us-west-2a}")
    assert selector_mismatch(selecting, {}, zones) is None
    assert selector_mismatch(selecting, {}) is not None  # without them the pool lacks the label
    elsewhere = pod("nodeSelector: {topology.kubernetes.io/zone: us-east-1a}")
    miss = selector_mismatch(elsewhere, {}, zones)
    assert miss is not None
    assert miss.detail == (
        "nodeSelector topology.kubernetes.io/zone=us-east-1a "
        "(pool has one of us-west-2a, us-west-2b)"
    )


def test_a_node_selector_and_a_term_must_meet_one_value_of_a_varying_label() -> None:
    template = pod("""
nodeSelector: {zone: a}
affinity:
  nodeAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
      nodeSelectorTerms:
      - matchExpressions:
        - {key: zone, operator: In, values: [b]}
""")
    zones = (LabelRequirement("zone", "In", ("a", "b")),)
    miss = selector_mismatch(template, {}, zones)
    assert miss is not None
    assert miss.detail == (
        "required affinity zone In [b] (pool has one of a, b; no single value also meets "
        "nodeSelector zone=a)"
    )
    assert selector_mismatch(template, {"zone": "b"}, zones) is not None  # a fixed label wins


def test_place_judges_a_varying_label_like_pool_fit() -> None:
    varying = Pool(
        "np", label_requirements=(LabelRequirement("zone", "In", ("a", "b")),),
        allocatable={"nvidia.com/gpu": Decimal(1)},
    )  # fmt: skip
    fixed = Pool("a-only", labels={"zone": "a"}, allocatable={"nvidia.com/gpu": Decimal(1)})
    profile = ClusterProfile(pools=(varying, fixed))
    template = pod("nodeSelector: {zone: b}")
    placement = place(template, profile)
    assert [p.name for p in placement.eligible] == ["np"]
    assert [f.mismatch for f in placement.fits] == [
        pool_fit(template, p, profile).mismatch for p in profile.pools
    ]
    assert pools_named(profile, "zone", "b") == (varying,)


# --- ExtendedResourceToleration --------------------------------------------------------------


def test_ert_adds_an_exists_no_schedule_toleration_per_requested_extended_resource() -> None:
    template = pod("""
initContainers:
- name: fetch
  resources: {limits: {vpc.amazonaws.com/efa: 1, memory: 1Gi}}
containers:
- name: c
  resources: {limits: {nvidia.com/gpu: 1, cpu: "1"}}
ephemeralContainers:
- name: debug
  resources: {limits: {amd.com/gpu: 1}}
""")
    added = extended_resource_tolerations(template)
    assert {(t.key, t.operator, t.effect) for t in added} == {
        ("vpc.amazonaws.com/efa", "Exists", "NoSchedule"),
        ("nvidia.com/gpu", "Exists", "NoSchedule"),
    }


def test_ert_tolerates_only_the_exact_key_and_no_schedule() -> None:
    template = pod(GPU_POD)
    on = admitted_tolerations(template, ClusterProfile(provider="eks"))
    off = admitted_tolerations(template, ClusterProfile(provider="kubeadm"))
    assert untolerated_taints(on, (GPU_TAINT,)) == ()
    assert untolerated_taints(off, (GPU_TAINT,)) == (GPU_TAINT,)
    others = (
        Taint("sku", "gpu", "NoSchedule"),
        Taint("nvidia.com/gpu", "present", "NoExecute"),
        Taint("nvidia.com/GPU", "present", "NoSchedule"),
    )
    assert untolerated_taints(on, others) == others


def test_the_profile_overrides_the_provider_for_ert() -> None:
    template = pod(GPU_POD)
    forced_off = ClusterProfile(provider="eks", extended_resource_toleration=False)
    forced_on = ClusterProfile(provider="kubeadm", extended_resource_toleration=True)
    assert untolerated_taints(admitted_tolerations(template, forced_off), (GPU_TAINT,))
    assert not untolerated_taints(admitted_tolerations(template, forced_on), (GPU_TAINT,))


# --- resource fit ----------------------------------------------------------------------------


def test_an_extended_resource_the_pool_lacks_counts_as_zero() -> None:
    short = resource_shortfalls({"nvidia.com/gpu": Decimal(1)}, CPU_POOL)
    assert [(s.resource, s.allocatable, s.reason) for s in short] == [
        ("nvidia.com/gpu", Decimal(0), "Insufficient nvidia.com/gpu")
    ]


def test_unlisted_cpu_memory_and_pods_do_not_constrain() -> None:
    pool = Pool("bare", allocatable={"nvidia.com/gpu": Decimal(8)})
    requests = {"cpu": Decimal(500), "memory": Decimal(2**50), "nvidia.com/gpu": Decimal(8)}
    assert resource_shortfalls(requests, pool) == ()
    assert resource_shortfalls({"nvidia.com/gpu": Decimal(9)}, pool)


def test_a_pool_without_pod_slots_reports_too_many_pods() -> None:
    pool = Pool("full", allocatable={"pods": Decimal(0)})
    assert [s.reason for s in resource_shortfalls({}, pool)] == ["Too many pods"]


def test_shortfall_detail_writes_memory_in_binary_units() -> None:
    (short,) = resource_shortfalls({"memory": Decimal(64 * 2**30)}, CPU_POOL)
    assert short.detail == "Insufficient memory (pod requests 64Gi, a node has 32Gi)"
    assert format_amount("cpu", Decimal("7.91")) == "7.91"
    assert format_amount("memory", Decimal(1536 * 2**20)) == "1.5Gi"


def test_effective_request_is_what_must_fit() -> None:
    # A plain init container's GPUs are not added; a sidecar's are.
    plain = pod("""
initContainers:
- {name: init, resources: {limits: {nvidia.com/gpu: 4}}}
containers:
- {name: app, resources: {limits: {nvidia.com/gpu: 4}}}
""")
    sidecar = pod("""
initContainers:
- {name: side, restartPolicy: Always, resources: {limits: {nvidia.com/gpu: 1}}}
containers:
- {name: app, resources: {limits: {nvidia.com/gpu: 4}}}
""")
    profile = ClusterProfile(provider="eks", pools=(gpu_pool(),))
    assert place(plain, profile).eligible == profile.pools
    assert place(sidecar, profile).eligible == ()


# --- placement: verdicts and scheduler wording -----------------------------------------------


def test_placement_gives_the_schedulers_first_reason_per_pool() -> None:
    template = pod("nodeSelector: {accelerator: a100}\n" + GPU_POD)
    small = gpu_pool("small", allocatable={"nvidia.com/gpu": Decimal(0)}, taints=())
    profile = ClusterProfile(provider="kubeadm", pools=(gpu_pool(), CPU_POOL, small))
    placement = place(template, profile)
    assert placement.eligible == ()
    reasons = {f.pool.name: f.reason for f in placement.rejected}
    assert reasons == {
        "gpu": "node(s) had untolerated taint {nvidia.com/gpu: present}",
        "cpu": "node(s) didn't match Pod's node affinity/selector",
        "small": "Insufficient nvidia.com/gpu",
    }
    gpu = placement.fit("gpu")
    assert gpu is not None and gpu.failed == (Filter.TAINTS,)
    assert gpu.explanation == "untolerated taint nvidia.com/gpu=present:NoSchedule"
    cpu = placement.fit("cpu")
    # The CPU pool fails two filters; the taint filter runs first, affinity second.
    assert cpu is not None and cpu.failed == (Filter.NODE_AFFINITY, Filter.RESOURCES)


def test_placement_with_ert_makes_the_gpu_pool_eligible() -> None:
    template = pod("nodeSelector: {accelerator: a100}\n" + GPU_POD)
    placement = place(template, ClusterProfile(provider="gke", pools=(gpu_pool(), CPU_POOL)))
    assert [p.name for p in placement.eligible] == ["gpu"]


# --- placement through the pool index ----------------------------------------------------------

# Pools that repeat taints, allocatable and labels in every combination, as large clusters do.
SHAPED_POOLS = tuple(
    gpu_pool(f"p{i}", labels={**labels, "pool": f"p{i}"}, taints=taints, allocatable=allocatable)
    for i, (labels, taints, allocatable) in enumerate(
        itertools.product(
            LABEL_SETS,
            ((), (GPU_TAINT,), (GPU_TAINT, Taint("dedicated", "gpu", "NoExecute"))),
            ({"nvidia.com/gpu": Decimal(4)}, {"nvidia.com/gpu": Decimal(0)}, {}),
        )
    )
)
PLACEMENT_PODS = (
    GPU_POD,
    "nodeSelector: {zone: a}\n" + GPU_POD,
    "nodeSelector: {zone: a, pool: p7}\ntolerations: [{operator: Exists}]\n" + GPU_POD,
    """
affinity:
  nodeAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
      nodeSelectorTerms:
      - matchExpressions: [{key: gpu.count, operator: Gt, values: ["4"]}]
      - matchExpressions: [{key: zone, operator: NotIn, values: [a]}]
      - {}
tolerations: [{key: nvidia.com/gpu, operator: Exists}]
"""
    + GPU_POD,
)


@pytest.mark.parametrize("spec", PLACEMENT_PODS)
@pytest.mark.parametrize("provider", ["kubeadm", "gke"])
def test_indexed_placement_is_every_pools_own_verdict(spec: str, provider: str) -> None:
    template = pod(spec)
    profile = ClusterProfile(provider=provider, pools=SHAPED_POOLS)
    fits = place(template, profile).fits
    assert fits == tuple(pool_fit(template, p, profile) for p in SHAPED_POOLS)
    assert len({f.mismatch for f in fits}) > 1 or spec == GPU_POD


def test_pools_named_finds_every_pool_with_the_label_value() -> None:
    profile = ClusterProfile(pools=SHAPED_POOLS)
    assert pools_named(profile, "zone", "x9") == tuple(
        p for p in SHAPED_POOLS if p.labels.get("zone") == "x9"
    )
    assert len(pools_named(profile, "zone", "x9")) == 4 * 9
    assert pools_named(profile, "zone", "b") == ()
    assert pools_named(profile, "nolabel", "a") == ()


# --- pod anti-affinity selectors -------------------------------------------------------------


def test_label_selector_of_anti_affinity_terms() -> None:
    template = template_of("""
apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
spec:
  template:
    metadata: {labels: {app: web, tier: gpu}}
    spec:
      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - topologyKey: kubernetes.io/hostname
            labelSelector: {matchLabels: {app: web}}
          - topologyKey: kubernetes.io/hostname
            labelSelector:
              matchExpressions: [{key: tier, operator: NotIn, values: [gpu]}]
          - topologyKey: kubernetes.io/hostname
      containers: [{name: c}]
""")
    own, other, no_selector = template.required_pod_anti_affinity
    assert label_selector_matches(own, template.labels)
    assert not label_selector_matches(other, template.labels)
    assert not label_selector_matches(no_selector, template.labels)


# --- rule severities -------------------------------------------------------------------------


SCALE_TO_ZERO = """
apiVersion: v1
kind: Pod
metadata: {name: %s, namespace: ml}
spec:
  nodeSelector: {eks.amazonaws.com/nodegroup: %s}
  containers:
  - name: c
    resources:
      requests: {cpu: "1", memory: 1Gi}
      limits: {nvidia.com/gpu: 1}
"""


def _gpu103(tmp_path: Path, pool: str, config: Config | None = None) -> list[Severity]:
    path = tmp_path / "pod.yaml"
    path.write_text(SCALE_TO_ZERO % ("p", pool))
    profile = ClusterProfile(
        provider="eks",
        pools=(
            gpu_pool("cold", labels={"eks.amazonaws.com/nodegroup": "cold"}, nodes=0),
            gpu_pool("dead", labels={"eks.amazonaws.com/nodegroup": "dead"}, nodes=0, max_nodes=0),
            gpu_pool("warm", labels={"eks.amazonaws.com/nodegroup": "warm"}),
        ),
    )
    config = (config or Config()).with_overrides(select=("GPU1",))
    result = lint([str(path)], config=config, profile=profile)
    return [f.severity for f in result.findings if f.code == "GPU103"]


def test_gpu103_warns_for_a_pool_that_scales_from_zero(tmp_path: Path) -> None:
    assert _gpu103(tmp_path, "cold") == [Severity.WARNING]


@pytest.mark.parametrize("pool", ["dead", "missing"])
def test_gpu103_is_an_error_when_the_pool_never_gets_a_node(tmp_path: Path, pool: str) -> None:
    assert _gpu103(tmp_path, pool) == [Severity.ERROR]


def test_gpu103_warm_pool_is_fine(tmp_path: Path) -> None:
    assert _gpu103(tmp_path, "warm") == []


def test_configured_severity_beats_the_findings_own(tmp_path: Path) -> None:
    config = Config().with_overrides(severity={"GPU103": Severity.INFO})
    assert _gpu103(tmp_path, "dead", config) == [Severity.INFO]


# --- fixes are paste-ready -------------------------------------------------------------------


TAINTED_POOL_POD = """
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ml}
spec:
  nodeSelector: {pool: gpu}
  tolerations: %s
  containers:
  - name: c
    resources:
      requests: {cpu: "1", memory: 1Gi}
      limits: {nvidia.com/gpu: 1}
"""


@pytest.mark.parametrize("provider", ["eks", "kubeadm"])
def test_the_gpu102_fix_makes_the_pod_schedulable(tmp_path: Path, provider: str) -> None:
    taints = (GPU_TAINT, Taint("dedicated", "", "NoExecute"), Taint("sku", "gpu", "NoSchedule"))
    profile = ClusterProfile(provider=provider, pools=(gpu_pool(taints=taints), CPU_POOL))
    config = Config().with_overrides(select=("GPU1", "GPU2"))
    path = tmp_path / "pod.yaml"
    path.write_text(TAINTED_POOL_POD % "[]")
    (finding,) = lint([str(path)], config=config, profile=profile).findings
    assert finding.code == "GPU102"
    assert finding.fix is not None
    pasted = parse("\n".join(finding.fix.splitlines()[1:])).documents[0].value
    path.write_text(TAINTED_POOL_POD % json.dumps(list(pasted)))
    assert lint([str(path)], config=config, profile=profile).findings == ()
    keys = [t["key"] for t in pasted]
    # With ERT the nvidia.com/gpu NoSchedule taint needs no toleration of its own.
    assert keys == (
        ["dedicated", "sku"] if provider == "eks" else ["nvidia.com/gpu", "dedicated", "sku"]
    )


CAPACITY_CASES = Path(__file__).resolve().parent.parent / "fixtures" / "cases" / "capacity"


@pytest.mark.parametrize("name", ["GPU201-replicas-exceed-pool.yaml", "GPU201-shared-pool.yaml"])
def test_the_gpu201_fix_lowers_the_count_to_what_fits(tmp_path: Path, name: str) -> None:
    source = CAPACITY_CASES / name
    profile = load_profiles([str(CAPACITY_CASES.parent.parent / "profiles" / "placement-eks.yaml")])
    config = Config().with_overrides(select=("GPU201",))
    findings = lint([str(source)], config=config, profile=profile).findings
    assert findings
    for finding in findings:
        match = re.match(r"Lower (\w+) to (\d+)", finding.fix or "")
        assert match is not None, finding.fix
        field, count = match.groups()
        lines = source.read_text().splitlines()
        lines[finding.line - 1] = re.sub(
            rf"{field}: \d+", f"{field}: {count}", lines[finding.line - 1]
        )
        path = tmp_path / name
        path.write_text("\n".join(lines) + "\n")
        after = lint([str(path)], config=config, profile=profile).findings
        assert finding.line not in [f.line for f in after]
        # One more pod than the fix allows would not fit.
        lines[finding.line - 1] = re.sub(
            rf"{field}: \d+", f"{field}: {int(count) + 1}", lines[finding.line - 1]
        )
        path.write_text("\n".join(lines) + "\n")
        assert finding.line in [
            f.line for f in lint([str(path)], config=config, profile=profile).findings
        ]


def test_gpu201_counts_only_the_gpus_not_already_in_use() -> None:
    source = CAPACITY_CASES / "GPU201-gpus-in-use.yaml"
    profiles = CAPACITY_CASES.parent.parent / "profiles"
    config = Config().with_overrides(select=("GPU201",))
    busy = load_profiles([str(profiles / "placement-in-use.yaml")])
    (finding,) = lint([str(source)], config=config, profile=busy).findings
    assert (finding.line, finding.column) == (9, 3)
    assert finding.message == (
        "Deployment/serving/server needs 8 nvidia.com/gpu (replicas: 2 × 4 per pod), but pool "
        "g5 can have at most 6 nvidia.com/gpu free (g5: 3 nodes × 4, 6 already in use): "
        "2 nvidia.com/gpu worth of pods stay Pending"
    )
    assert finding.fix == "Lower replicas to 1, or raise maxNodes of g5 to 4."
    # The same pools with nothing running: both Deployments fit.
    idle = load_profiles([str(profiles / "placement-eks.yaml")])
    assert lint([str(source)], config=config, profile=idle).findings == ()


def test_gpu201_names_the_three_largest_sharing_workloads_and_counts_the_rest(
    tmp_path: Path,
) -> None:
    # Six 8-GPU Deployments confined to p4d (at most 4 nodes × 8 = 32 GPUs): the total adds up
    # the members, 8 + 24 + 16 + 8 + 8 + 8 = 72, in every one's finding.
    deployment = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: w{index}, namespace: ml}}
spec:
  replicas: {replicas}
  selector:
    matchLabels: {{app: w{index}}}
  template:
    metadata:
      labels: {{app: w{index}}}
    spec:
      containers:
      - name: main
        image: trainer:1.0
        resources:
          requests: {{cpu: "1", memory: 1Gi}}
          limits: {{memory: 1Gi, nvidia.com/gpu: 8}}
"""
    replicas = [1, 2, 1, 3, 1, 1]
    path = tmp_path / "many.yaml"
    path.write_text(
        "---\n".join(deployment.format(index=i, replicas=r) for i, r in enumerate(replicas))
    )
    profile = load_profiles([str(CAPACITY_CASES.parent.parent / "profiles" / "placement-eks.yaml")])
    config = Config().with_overrides(select=("GPU201",))
    findings = lint([str(path)], config=config, profile=profile).findings
    assert len(findings) == len(replicas)
    first = findings[0]
    assert first.message.startswith(
        "Deployment/ml/w0 needs 8 nvidia.com/gpu (replicas: 1 × 8 per pod); with "
        "Deployment/ml/w3 (24: replicas: 3 × 8), Deployment/ml/w1 (16: replicas: 2 × 8), "
        "Deployment/ml/w2 (8: replicas: 1 × 8) and 2 more, which can only run on the same "
        "pools, that is 72, but pool p4d can have at most 32 nvidia.com/gpu (p4d: 4 nodes × 8): "
        "40 nvidia.com/gpu worth of pods stay Pending"
    )
    assert all("that is 72," in f.message for f in findings)


# --- deprecated labels, and amounts a profile does not know --------------------------------

BETA_POD = """
nodeSelector: {beta.kubernetes.io/instance-type: p4d.24xlarge}
containers:
- name: c
  resources:
    limits: {nvidia.com/gpu: 8, hugepages-2Mi: 5120Mi, vpc.amazonaws.com/efa: 4}
"""


def test_a_deprecated_label_reads_its_stable_twin_where_the_pool_does_not_state_it() -> None:
    template = pod(BETA_POD)
    p4d = {"node.kubernetes.io/instance-type": "p4d.24xlarge"}
    g5 = {"node.kubernetes.io/instance-type": "g5.12xlarge"}
    assert selector_mismatch(template, p4d) is None
    miss = selector_mismatch(template, g5)
    assert miss is not None
    assert (
        miss.detail
        == "nodeSelector beta.kubernetes.io/instance-type=p4d.24xlarge (pool has g5.12xlarge)"
    )
    # A pool that states the deprecated label itself is taken at its word.
    assert selector_mismatch(template, {**p4d, "beta.kubernetes.io/instance-type": "x"}) is not None
    # A zone that differs from node to node: the twin allows the same zones.
    zones = [LabelRequirement("topology.kubernetes.io/zone", "In", ("us-east-1a", "us-east-1b"))]
    in_zone = pod("nodeSelector: {failure-domain.beta.kubernetes.io/zone: us-east-1b}\n" + GPU_POD)
    elsewhere = pod(
        "nodeSelector: {failure-domain.beta.kubernetes.io/zone: us-east-1c}\n" + GPU_POD
    )
    assert selector_mismatch(in_zone, {}, zones) is None
    assert selector_mismatch(elsewhere, {}, zones) is not None


def test_pools_differing_only_in_the_stable_twin_are_told_apart() -> None:
    # place() judges each distinct value of the labels the pod selects once: the stable
    # twin of a deprecated label is one of them.
    pools = (
        gpu_pool("p4d", labels={"node.kubernetes.io/instance-type": "p4d.24xlarge"}),
        gpu_pool("g5", labels={"node.kubernetes.io/instance-type": "g5.12xlarge"}),
    )
    placement = place(
        pod("nodeSelector: {beta.kubernetes.io/instance-type: g5.12xlarge}\n" + GPU_POD),
        ClusterProfile(pools=pools, extended_resource_toleration=True),
    )
    assert [f.pool.name for f in placement.fits if f.mismatch is None] == ["g5"]


def test_huge_pages_a_pool_does_not_list_are_not_judged_and_a_listed_zero_is() -> None:
    requests = {"nvidia.com/gpu": Decimal(8), "hugepages-2Mi": Decimal(5 * 2**30)}
    unknown = gpu_pool(allocatable={"nvidia.com/gpu": Decimal(8)})
    assert resource_shortfalls(requests, unknown) == ()
    none = gpu_pool(allocatable={"nvidia.com/gpu": Decimal(8), "hugepages-2Mi": Decimal(0)})
    [short] = resource_shortfalls(requests, none)
    assert short.detail == "Insufficient hugepages-2Mi (pod requests 5Gi, a node has 0)"


def test_an_amount_the_profile_does_not_know_is_not_judged() -> None:
    requests = {"nvidia.com/gpu": Decimal(8), "vpc.amazonaws.com/efa": Decimal(4)}
    efa = frozenset({"vpc.amazonaws.com/efa"})
    with_efa = gpu_pool(allocatable={"nvidia.com/gpu": Decimal(8)}, unknown_amounts=efa)
    assert resource_shortfalls(requests, with_efa) == ()
    [short] = resource_shortfalls(requests, gpu_pool(allocatable={"nvidia.com/gpu": Decimal(8)}))
    assert short.detail == "Insufficient vpc.amazonaws.com/efa (pod requests 4, a node has 0)"
