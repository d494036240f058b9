"""Live mode against a hostile or broken API server: bounded, escaped, one line and exit 2."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import kmock
import pytest

from tests.kube_server import kube_server, write_kubeconfig
from tests.test_live import gpu_node, run, serve


@pytest.fixture()
def k() -> Iterator[kmock.KubernetesScaffold]:
    """This test's view of the session's API server."""
    with kube_server().scaffold() as handler:
        yield handler


@pytest.fixture()
def kubeconfig(tmp_path: Path) -> Path:
    """A kubeconfig whose current context is the session's API server."""
    return write_kubeconfig(tmp_path / "kubeconfig", kube_server().url)


# --- numbers the API cannot hold ------------------------------------------------------------


@pytest.mark.parametrize("gpus", ["9" * 4400, "-8"])
def test_snapshot_of_a_huge_or_negative_capacity_is_one_line_and_exit_2(
    k: kmock.KubernetesScaffold, kubeconfig: Path, gpus: str
) -> None:
    serve(k, nodes=[gpu_node("gpu-1", "gpu-a100", gpus=gpus)], pods=[])
    result = run("profile", "snapshot", "--kubeconfig", str(kubeconfig))
    assert result.exit_code == 2, result.output
    (line,) = result.output.splitlines()
    written = (
        f"'{'9' * 39}…' is not a Kubernetes quantity" if gpus[0] == "9" else "'-8' is negative"
    )
    assert line.startswith("gpulint: error: ") and written in line, line
    assert len(line) < 400
