"""Hypothesis profiles (`default` keeps the suite quick, `--hypothesis-profile=long` digs
deeper), a profile cache of the suite's own, `--update-snapshots`, and the Kubernetes API
server of the live-mode tests (`k`, `kubeconfig`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from hypothesis import HealthCheck, settings

if TYPE_CHECKING:
    import kmock

# No deadline: the machine running the suite may be busy, and speed is measured by bench/.
settings.register_profile(
    "default",
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "long",
    max_examples=5000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def pytest_addoption(parser: pytest.Parser) -> None:
    """`--update-snapshots`: rewrite the fixtures' message snapshots (tests/snapshots/)."""
    parser.addoption(
        "--update-snapshots",
        action="store_true",
        help="rewrite tests/snapshots/ from the findings of this run",
    )


@pytest.fixture(scope="session", autouse=True)
def _profile_cache_in_a_temporary_directory(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[None]:
    """`gpulint check --profile` in tests (and the processes they start) caches profiles here,
    not in the home directory."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("GPULINT_CACHE_DIR", str(tmp_path_factory.mktemp("gpulint-cache")))
        yield


@pytest.fixture(autouse=True)
def _not_in_github_actions(monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs of the suite inside GitHub Actions print what they print elsewhere: with
    GITHUB_ACTIONS=true, `gpulint check` without --format adds annotations."""
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)


# The API server is imported when a test asks for it: kmock and aiohttp load only then.


@pytest.fixture()
def k() -> Iterator[kmock.KubernetesScaffold]:
    """This test's view of the session's Kubernetes API server (tests/kube_server.py)."""
    from tests.kube_server import kube_server

    with kube_server().scaffold() as handler:
        yield handler


@pytest.fixture()
def kubeconfig(tmp_path: Path) -> Path:
    """A kubeconfig whose current context is the session's API server."""
    from tests.kube_server import kube_server, write_kubeconfig

    return write_kubeconfig(tmp_path / "kubeconfig", kube_server().url)
