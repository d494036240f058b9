"""Tool configuration files with `apiVersion`/`kind` are not read as Kubernetes objects."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpulint.data.tool_configs import TOOL_CONFIGS, is_tool_config
from gpulint.loader import load_path, load_text

NON_KUBERNETES = Path(__file__).resolve().parent.parent / "fixtures/cases/manifest/non-kubernetes"


@pytest.mark.parametrize("path", sorted(NON_KUBERNETES.glob("*.yaml")), ids=lambda p: p.name)
def test_tool_config_files_hold_no_objects(path: Path) -> None:
    result = load_path(path)
    assert result.documents == ()
    assert result.issues == ()


@pytest.mark.parametrize(
    ("api_version", "kind"),
    [(f"{entry.group}/v1", kind) for entry in TOOL_CONFIGS for kind in entry.kinds]
    + [("kubelet.config.k8s.io/v1beta1", "KubeletConfiguration"), ("v1", "Config")],
)
def test_every_listed_kind_is_a_tool_config(api_version: str, kind: str) -> None:
    assert is_tool_config(api_version, kind)


@pytest.mark.parametrize(
    ("api_version", "kind"),
    [
        ("v1", "Pod"),
        ("apps/v1", "Deployment"),
        ("cluster.x-k8s.io/v1beta1", "Cluster"),  # Cluster API objects live on a cluster
        ("kueue.x-k8s.io/v1beta1", "ClusterQueue"),
        ("resource.k8s.io/v1", "DeviceClass"),
        ("v1", "ConfigMap"),
        # Groups where only some kinds are a tool's: their CRDs are objects.
        ("inference.networking.x-k8s.io/v1alpha2", "InferenceObjective"),
        ("gateway.networking.k8s.io/v1", "Gateway"),
    ],
)
def test_api_objects_are_not_tool_configs(api_version: str, kind: str) -> None:
    assert not is_tool_config(api_version, kind)


def test_tool_config_beside_a_pod_keeps_the_pod() -> None:
    text = (
        "apiVersion: kind.x-k8s.io/v1alpha4\nkind: Cluster\n---\n"
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: []}\n"
    )
    result = load_text("mixed.yaml", text)
    assert [d.ref.kind for d in result.documents] == ["Pod"]
    assert result.issues == ()


def test_robustness_doc_lists_every_group() -> None:
    doc = (Path(__file__).resolve().parent.parent / "docs/robustness.md").read_text()
    missing = [entry.group for entry in TOOL_CONFIGS if f"| `{entry.group}` |" not in doc]
    assert missing == []
