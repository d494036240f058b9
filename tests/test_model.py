"""The typed workload model: where each kind keeps its template, roles, effective requests."""

from __future__ import annotations

from decimal import Decimal

import pytest

from gpulint.loader import load_text
from gpulint.model import ContainerRole, PodTemplate, Severity, Workload, pod_requests
from gpulint.workloads import workload_of

GPU = "nvidia.com/gpu"


def workload(text: str) -> Workload:
    """The workload of the only document in `text`."""
    (document,) = load_text("w.yaml", text).documents
    result = workload_of(document)
    assert result is not None
    return result


def pod(spec: str) -> PodTemplate:
    """The template of a Pod whose spec is `spec` (indented by two spaces)."""
    text = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n" + spec
    (template,) = workload(text).templates
    return template


def container(name: str, gpus: int | None = None, cpu: str | None = None, **extra: str) -> str:
    """One container entry (a YAML list item) requesting `gpus` and `cpu`."""
    requests = {}
    if cpu is not None:
        requests["cpu"] = cpu
    if gpus is not None:
        requests[GPU] = str(gpus)
    flow = ", ".join(f"{k}: {v!r}" if k == "cpu" else f"{k}: {v}" for k, v in requests.items())
    lines = [f"  - name: {name}"]
    lines += [f"    {k}: {v}" for k, v in extra.items()]
    lines.append(f"    resources: {{requests: {{{flow}}}, limits: {{{GPU}: {gpus or 0}}}}}")
    return "\n".join(lines) + "\n"


def test_plain_init_container_and_app_container_count_as_the_max() -> None:
    template = pod(
        "  initContainers:\n" + container("init", 1) + "  containers:\n" + container("app", 1)
    )
    assert template.effective_requests[GPU] == Decimal(1)


def test_sidecar_and_app_container_are_summed() -> None:
    template = pod(
        "  initContainers:\n"
        + container("sidecar", 1, restartPolicy="Always")
        + "  containers:\n"
        + container("app", 1)
    )
    assert [c.role for c in template.containers] == [ContainerRole.APP, ContainerRole.SIDECAR]
    assert template.effective_requests[GPU] == Decimal(2)


def test_plain_init_after_a_sidecar_runs_beside_it() -> None:
    # sidecar 1 + later init 2 = 3 at init time, which beats 1 + 1 while running
    template = pod(
        "  initContainers:\n"
        + container("sidecar", 1, restartPolicy="Always")
        + container("init", 2)
        + "  containers:\n"
        + container("app", 1)
    )
    assert template.effective_requests[GPU] == Decimal(3)


def test_plain_init_before_a_sidecar_does_not_add_to_it() -> None:
    template = pod(
        "  initContainers:\n"
        + container("init", 2)
        + container("sidecar", 1, restartPolicy="Always")
        + "  containers:\n"
        + container("app", 1)
    )
    assert template.effective_requests[GPU] == Decimal(2)


def test_app_containers_are_summed_and_cpu_is_in_milli_precision() -> None:
    template = pod("  containers:\n" + container("a", 2, cpu="500m") + container("b", 1, cpu="1.5"))
    assert template.effective_requests == {GPU: Decimal(3), "cpu": Decimal("2.000")}


def test_a_limit_without_request_counts_as_the_request() -> None:
    template = pod("  containers:\n  - name: a\n    resources: {limits: {nvidia.com/gpu: 4}}\n")
    assert template.effective_requests == {GPU: Decimal(4)}


def test_overhead_is_added() -> None:
    template = pod("  overhead: {cpu: 250m}\n  containers:\n" + container("a", 1, cpu="1"))
    assert template.effective_requests["cpu"] == Decimal("1.25")


def test_app_requests_sum_app_containers_and_sidecars_without_init_or_overhead() -> None:
    template = pod(
        "  overhead: {cpu: 250m}\n  initContainers:\n"
        + container("warmup", 4)
        + container("sidecar", 1, cpu="1", restartPolicy="Always")
        + "  containers:\n"
        + container("app", 2, cpu="2")
    )
    assert template.app_requests == {GPU: Decimal(3), "cpu": Decimal(3)}
    # The scheduler's sum counts the init container by the largest, and the overhead.
    assert template.effective_requests == {GPU: Decimal(4), "cpu": Decimal("3.25")}


def test_pod_requests_of_no_containers_is_empty() -> None:
    template = pod("  containers: []\n")
    assert pod_requests(template.containers, template.spec) == {}


def test_ephemeral_containers_request_nothing() -> None:
    template = pod(
        "  containers:\n"
        + container("a", 1)
        + "  ephemeralContainers:\n  - name: dbg\n    resources: {limits: {nvidia.com/gpu: 5}}\n"
    )
    assert template.containers[-1].role is ContainerRole.EPHEMERAL
    assert template.containers[-1].field_path == "ephemeralContainers[0]"
    assert template.effective_requests[GPU] == Decimal(1)


SPEC = "    spec:\n      containers:\n      - name: c\n        image: x\n"


@pytest.mark.parametrize(
    ("api_version", "kind", "body", "replicas"),
    [
        ("apps/v1", "Deployment", "spec:\n  replicas: 3\n  template:\n" + SPEC, (3, "replicas", 5)),
        ("apps/v1", "ReplicaSet", "spec:\n  template:\n" + SPEC, (1, "replicas", None)),
        (
            "apps/v1",
            "StatefulSet",
            "spec:\n  replicas: 2\n  template:\n" + SPEC,
            (2, "replicas", 5),
        ),
        ("apps/v1", "DaemonSet", "spec:\n  template:\n" + SPEC, None),
        (
            "v1",
            "ReplicationController",
            "spec:\n  replicas: 0\n  template:\n" + SPEC,
            (0, "replicas", 5),
        ),
        ("batch/v1", "Job", "spec:\n  parallelism: 4\n  template:\n" + SPEC, (4, "parallelism", 5)),
    ],
)
def test_workload_kinds_find_template_and_replicas(
    api_version: str, kind: str, body: str, replicas: tuple[int, str, int | None] | None
) -> None:
    text = f"apiVersion: {api_version}\nkind: {kind}\nmetadata: {{name: w}}\n{body}"
    result = workload(text)
    assert result.kind == kind
    (template,) = result.templates
    # the container item sits one line lower when a replica count is written
    container_line = 8 if replicas is None or replicas[2] is None else 9
    assert [(c.name, c.pos) for c in template.containers] == [("c", (container_line, 9))]
    if replicas is None:
        assert result.replicas is None
    else:
        value, field, line = replicas
        assert result.replicas is not None
        assert (result.replicas.value, result.replicas.field) == (value, field)
        assert result.replicas.pos == (None if line is None else (line, 3))


def test_cronjob_template_is_two_levels_down() -> None:
    text = (
        "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: nightly}\nspec:\n"
        "  schedule: '@daily'\n  jobTemplate:\n    spec:\n      parallelism: 2\n      template:\n"
        "        spec:\n          containers:\n          - name: eval\n"
    )
    result = workload(text)
    (template,) = result.templates
    assert template.containers[0].name == "eval"
    assert template.containers[0].pos == (12, 13)
    assert result.replicas is not None
    assert (result.replicas.value, result.replicas.pos) == (2, (8, 7))


def test_pod_is_its_own_template() -> None:
    template = pod("  containers:\n" + container("a", 1))
    assert template.node is template.document.obj


def test_unknown_kind_or_group_is_not_a_workload() -> None:
    (cm,) = load_text("a.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n").documents
    assert workload_of(cm) is None
    text = "apiVersion: example.com/v1\nkind: Deployment\nmetadata: {name: a}\nspec: {}\n"
    (custom,) = load_text("b.yaml", text).documents
    assert workload_of(custom) is None


def test_container_quantities_know_key_and_value_positions() -> None:
    template = pod(
        "  containers:\n  - name: a\n    resources:\n      limits:\n        nvidia.com/gpu: 2\n"
    )
    quantity = template.containers[0].resources.limits[GPU]
    assert (quantity.raw, quantity.amount) == (2, Decimal(2))
    assert (quantity.key_pos, quantity.value_pos) == ((9, 9), (9, 25))
    assert template.containers[0].resources.pos == (7, 5)


def test_severity_order_and_parse() -> None:
    assert Severity.ERROR > Severity.WARNING > Severity.INFO
    assert Severity.parse("warning") is Severity.WARNING
    assert Severity.WARNING.label == "warning"
    with pytest.raises(KeyError):
        Severity.parse("fatal")


def test_what_is_drawn_from_a_runs_knowledge_is_computed_once_and_not_sent_along() -> None:
    import pickle

    from gpulint.model import Knowledge, drawn, of_kind

    text = (
        "apiVersion: v1\nkind: LimitRange\nmetadata: {name: a}\n---\n"
        "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: b}\n---\n"
        "apiVersion: v1\nkind: LimitRange\nmetadata: {name: c}\n"
    )
    documents = load_text("k.yaml", text).documents
    knowledge = Knowledge(documents)
    calls: list[int] = []

    def names(found: Knowledge) -> tuple[str, ...]:
        calls.append(1)
        return tuple(d.ref.name for d in found)

    assert drawn(knowledge, names) == ("a", "b", "c")
    assert drawn(knowledge, names) == ("a", "b", "c")
    assert len(calls) == 1
    assert [d.ref.name for d in of_kind(knowledge, "LimitRange")] == ["a", "c"]
    assert of_kind(knowledge, "LimitRange") is of_kind(knowledge, "LimitRange")
    # A plain tuple (a file's own documents) is read each time.
    assert drawn(documents, names) == ("a", "b", "c")
    assert len(calls) == 2
    assert [d.ref.name for d in of_kind(documents, "ResourceQuota")] == ["b"]
    # A worker process gets the objects, not what this process drew from them.
    copy = pickle.loads(pickle.dumps(knowledge))
    assert type(copy) is Knowledge and [d.ref.name for d in copy] == ["a", "b", "c"]
    assert drawn(copy, names) == ("a", "b", "c")
    assert len(calls) == 3
