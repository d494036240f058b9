"""The profile cache: `gpulint check --profile` parses a file once and reads its facts after."""

from __future__ import annotations

import os
import pickle
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpulint.cachedir import default_cache_dir
from gpulint.cli import main
from gpulint.profile.cache import (
    ProfileCache,
    entry_key,
    read_entry,
    write_entry,
)
from gpulint.profile.load import profile_facts

ROOT = Path(__file__).resolve().parent.parent
PROFILES = ROOT / "fixtures" / "profiles"
MANIFEST = ROOT / "fixtures" / "cases" / "placement" / "GPU101-no-eligible-pool.yaml"
USED = 'requests.nvidia.com/gpu: "6"'  # the quota usage in the dump's `status.used`


def check(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """`gpulint check --isolated MANIFEST ARGS`: exit code, stdout, stderr."""
    result = CliRunner().invoke(main, ["check", "--isolated", str(MANIFEST), *args], env=env)
    return result.exit_code, result.stdout, result.stderr


def entries(cache: Path) -> list[Path]:
    """The entry files in the cache directory `cache`."""
    return sorted((cache / "profiles").glob("*.pickle"))


def _parsing_refused(*args: object) -> None:
    raise AssertionError("the profile file was parsed, not read from the cache")


@pytest.fixture
def dump(tmp_path: Path) -> Path:
    path = tmp_path / "dump.yaml"
    shutil.copy(PROFILES / "eks-prod-kubectl.yaml", path)
    return path


@pytest.fixture
def expected(dump: Path) -> tuple[int, str, str]:
    """What a run that parses the dump prints."""
    found = check("--profile", str(dump), "--no-cache")
    assert found[0] == 1 and "GPU101" in found[1] and "used 6 + requested" in found[1]
    return found


def test_the_first_run_writes_an_entry_the_next_reads_without_parsing(
    dump: Path, expected: tuple[int, str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"

    assert check("--profile", str(dump), "--cache-dir", str(cache)) == expected
    (entry,) = entries(cache)
    assert (cache / "CACHEDIR.TAG").is_file() and (cache / ".gitignore").read_text() == "*\n"

    monkeypatch.setattr("gpulint.profile.load.profile_facts", _parsing_refused)
    assert check("--profile", str(dump), "--cache-dir", str(cache)) == expected
    json_args = ("--profile", str(dump), "--format", "json")
    cached_json = check(*json_args, "--cache-dir", str(cache))
    monkeypatch.undo()
    assert cached_json == check(*json_args, "--no-cache")
    assert entries(cache) == [entry]


def test_the_same_bytes_under_another_name_share_the_entry(dump: Path, tmp_path: Path) -> None:
    cache = ProfileCache(tmp_path / "cache")
    data = dump.read_bytes()
    key = entry_key(data, None)
    write_entry(cache, key, str(dump), profile_facts(str(dump), data))

    other = str(tmp_path / "copy.yaml")
    found = read_entry(cache, key, other)

    assert found == profile_facts(other, data)
    assert found is not None and found[0].profile.sources == (other,)
    evidence = "node labels eks.amazonaws.com/*"
    assert found[0].profile.provider_source == f"inferred from {evidence} in {other}"


@pytest.mark.parametrize("name", sorted(p.name for p in PROFILES.glob("*.yaml")))
def test_an_entry_reads_back_the_facts_the_file_says(name: str, tmp_path: Path) -> None:
    # Every kind of input and every field of the facts, which pool fields are only estimates
    # (they lose to another input's stated values when merged) included.
    path = str(PROFILES / name)
    data = Path(path).read_bytes()
    facts = profile_facts(path, data, "workload")
    cache = ProfileCache(tmp_path)
    key = entry_key(data, "workload")

    write_entry(cache, key, path, facts)

    assert read_entry(cache, key, path) == facts
    assert read_entry(cache, entry_key(data, None), path) is None


def _unused_quota(entry: bytes) -> bytes:
    """The entry, saying that the dump's quota is unused: read, it changes the findings."""
    facts = pickle.loads(entry)
    profile = facts[0].profile
    quotas = (profile.quotas[0]._replace(used={}), *profile.quotas[1:])
    facts[0] = facts[0]._replace(profile=replace(profile, quotas=quotas))
    return pickle.dumps(facts)


class _Planted:
    """An object whose unpickling would delete a file."""

    def __init__(self, victim: Path) -> None:
        self.victim = victim

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return os.remove, (str(self.victim),)


def _not_a_pool(entry: bytes) -> bytes:
    facts = pickle.loads(entry)
    view = facts[0].pools[0]
    facts[0] = facts[0]._replace(pools=(view._replace(pool="a100"),))
    return pickle.dumps(facts)


@pytest.mark.parametrize(
    "corrupt",
    [
        lambda entry: b"",
        lambda entry: entry[: len(entry) // 2],
        lambda entry: b"\xff\xfe not a pickle",
        lambda entry: pickle.dumps([{"profile": 1}]),
        lambda entry: pickle.dumps([]),
        lambda entry: pickle.dumps({"facts": pickle.loads(entry)}),
        lambda entry: pickle.dumps([Path("profile.yaml")]),
        _not_a_pool,
    ],
    ids=[
        "empty",
        "truncated",
        "garbage",
        "wrong-shape",
        "no-facts",
        "a-dict",
        "foreign",
        "not-a-pool",
    ],
)
def test_a_corrupt_entry_is_parsed_again_and_rewritten(
    corrupt: object,
    dump: Path,
    expected: tuple[int, str, str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cache = tmp_path / "cache"
    check("--profile", str(dump), "--cache-dir", str(cache))
    (entry,) = entries(cache)
    good = entry.read_bytes()
    entry.write_bytes(corrupt(good))  # type: ignore[operator]

    assert check("--profile", str(dump), "--cache-dir", str(cache)) == expected
    assert entry.read_bytes() == good

    monkeypatch.setattr("gpulint.profile.load.profile_facts", _parsing_refused)
    assert check("--profile", str(dump), "--cache-dir", str(cache)) == expected


def test_an_entry_calls_no_function_it_names(
    dump: Path, expected: tuple[int, str, str], tmp_path: Path
) -> None:
    cache, victim = tmp_path / "cache", tmp_path / "victim.txt"
    check("--profile", str(dump), "--cache-dir", str(cache))
    (entry,) = entries(cache)
    victim.write_text("precious\n")
    entry.write_bytes(pickle.dumps([_Planted(victim)]))

    assert check("--profile", str(dump), "--cache-dir", str(cache)) == expected
    assert victim.read_text() == "precious\n"


def test_a_changed_file_is_parsed_again(dump: Path, tmp_path: Path) -> None:
    cache = str(tmp_path / "cache")
    check("--profile", str(dump), "--cache-dir", cache)
    dump.write_text(dump.read_text().replace(USED, USED.replace("6", "7"), 1))

    code, out, _ = check("--profile", str(dump), "--cache-dir", cache)

    assert code == 1 and "used 7 + requested" in out and "used 6" not in out
    assert len(entries(Path(cache))) == 2


def test_the_pool_label_is_part_of_the_key(dump: Path, tmp_path: Path) -> None:
    cache = str(tmp_path / "cache")
    for label in ((), ("--pool-label", "workload")):
        cached = check("--profile", str(dump), *label, "--cache-dir", cache)
        assert cached == check("--profile", str(dump), *label, "--no-cache")
    assert len(entries(Path(cache))) == 2


def _beneath_a_file(tmp_path: Path) -> Path:
    (tmp_path / "a-file").write_text("")
    return tmp_path / "a-file" / "cache"


def _read_only(tmp_path: Path) -> Path:
    if os.geteuid() == 0:
        pytest.skip("root writes into a read-only directory")
    cache = tmp_path / "cache"
    cache.mkdir()
    cache.chmod(0o555)
    return cache


@pytest.mark.parametrize("place", [_beneath_a_file, _read_only], ids=["under-a-file", "read-only"])
def test_a_cache_that_cannot_be_written_does_not_fail_the_run(
    place: object, dump: Path, expected: tuple[int, str, str], tmp_path: Path
) -> None:
    cache = place(tmp_path)  # type: ignore[operator]

    assert check("--profile", str(dump), "--cache-dir", str(cache)) == expected
    assert check("--profile", str(dump), "--cache-dir", str(cache)) == expected
    assert not [p for p in tmp_path.rglob("*") if p.suffix in (".pickle", ".tmp")]


def test_no_cache_neither_writes_nor_reads_entries(
    dump: Path, expected: tuple[int, str, str], tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    assert check("--profile", str(dump), "--cache-dir", str(cache), "--no-cache") == expected
    assert not cache.exists()

    # An entry that says the quota is unused: read, it would change the findings.
    check("--profile", str(dump), "--cache-dir", str(cache))
    (entry,) = entries(cache)
    entry.write_bytes(_unused_quota(entry.read_bytes()))
    assert "used 6" not in check("--profile", str(dump), "--cache-dir", str(cache))[1]

    assert check("--profile", str(dump), "--cache-dir", str(cache), "--no-cache") == expected


@pytest.mark.parametrize(
    ("change", "position"),
    [
        (('"8"', '"eight"'), "49:12"),
        (("  kind: ResourceQuota", "  kind: [ResourceQuota"), "598:11"),
    ],
    ids=["bad-quantity", "bad-yaml"],
)
def test_an_invalid_profile_is_never_cached(
    change: tuple[str, str], position: str, dump: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    dump.write_text(dump.read_text().replace(*change, 1))

    for _ in range(2):
        code, out, err = check("--profile", str(dump), "--cache-dir", str(cache))
        assert (code, out) == (2, "")
        assert err.startswith(f"gpulint: error: {dump}:{position}: ") and err.count("\n") == 1
    assert not entries(cache)


def test_the_environment_names_the_cache(dump: Path, tmp_path: Path) -> None:
    cache = tmp_path / "from-env"

    check("--profile", str(dump), env={"GPULINT_CACHE_DIR": str(cache)})

    assert len(entries(cache)) == 1


def test_the_default_cache_is_in_the_xdg_cache_home(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", "/home/u")
    assert default_cache_dir({"XDG_CACHE_HOME": "/var/cache/u"}) == Path("/var/cache/u/gpulint")
    # The XDG spec says a relative path is to be ignored.
    assert default_cache_dir({"XDG_CACHE_HOME": "cache"}) == Path("/home/u/.cache/gpulint")
    assert default_cache_dir({}) == Path("/home/u/.cache/gpulint")


# --- a cache directory others can write to --------------------------------------------------

OTHER_USER = 4242


def _as_another_user(path: Path) -> None:
    """Give `path` to another user (root only: only root can)."""
    if os.geteuid() != 0:
        pytest.skip("only root can give a file to another user")
    os.chown(path, OTHER_USER, OTHER_USER, follow_symlinks=False)


def test_marker_files_are_never_written_through_planted_symlinks(
    dump: Path, expected: tuple[int, str, str], tmp_path: Path
) -> None:
    cache, victim = tmp_path / "cache", tmp_path / "victim.txt"
    cache.mkdir()
    victim.write_text("precious\n")
    (cache / "CACHEDIR.TAG").symlink_to(victim)
    (cache / ".gitignore").symlink_to(victim)

    assert check("--profile", str(dump), "--cache-dir", str(cache)) == expected
    assert victim.read_text() == "precious\n"
    assert len(entries(cache)) == 1  # the cache itself works


def test_an_entry_planted_by_another_user_is_not_read(
    dump: Path, expected: tuple[int, str, str], tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    check("--profile", str(dump), "--cache-dir", str(cache))
    (entry,) = entries(cache)
    entry.write_bytes(_unused_quota(entry.read_bytes()))
    assert check("--profile", str(dump), "--cache-dir", str(cache)) != expected
    _as_another_user(entry)

    assert check("--profile", str(dump), "--cache-dir", str(cache)) == expected


def test_a_fifo_planted_as_an_entry_cannot_block_the_run(dump: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    check("--profile", str(dump), "--cache-dir", str(cache))
    (entry,) = entries(cache)
    entry.unlink()
    os.mkfifo(entry)
    command = [sys.executable, "-m", "gpulint", "check", "--isolated", str(MANIFEST)]
    done = subprocess.run(
        [*command, "--profile", str(dump), "--cache-dir", str(cache)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 1 and "used 6 + requested" in done.stdout, done.stderr


@pytest.mark.parametrize("planted", ["directory", "symlink"])
def test_an_entry_that_is_not_a_regular_file_is_ignored(
    dump: Path, expected: tuple[int, str, str], tmp_path: Path, planted: str
) -> None:
    cache = tmp_path / "cache"
    check("--profile", str(dump), "--cache-dir", str(cache))
    (entry,) = entries(cache)
    tampered = tmp_path / "tampered.pickle"
    tampered.write_bytes(_unused_quota(entry.read_bytes()))
    entry.unlink()
    if planted == "directory":
        entry.mkdir()
    else:
        entry.symlink_to(tampered)

    assert check("--profile", str(dump), "--cache-dir", str(cache)) == expected


def test_a_cache_directory_of_another_user_is_one_warning_and_no_cache(
    dump: Path, expected: tuple[int, str, str], tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    _as_another_user(cache)

    code, out, err = check("--profile", str(dump), "--cache-dir", str(cache))
    assert (code, out) == expected[:2]
    assert err == (
        f"gpulint: warning: cache directory {cache} belongs to another user; running "
        "without a cache\n"
    )
    assert list(cache.iterdir()) == []


def test_an_entries_directory_planted_as_a_symlink_is_one_warning(
    dump: Path, expected: tuple[int, str, str], tmp_path: Path
) -> None:
    cache, elsewhere = tmp_path / "cache", tmp_path / "elsewhere"
    cache.mkdir()
    elsewhere.mkdir()
    (cache / "profiles").symlink_to(elsewhere)

    code, out, err = check("--profile", str(dump), "--cache-dir", str(cache))
    assert (code, out) == expected[:2]
    assert err == (
        f"gpulint: warning: {cache / 'profiles'} is not a directory of the user's own; "
        "running without a cache\n"
    )
    assert list(elsewhere.iterdir()) == []


@pytest.mark.parametrize("size", [0, 1 << 20], ids=["small", "large"])
def test_cache_names_are_sha256_whichever_module_hashes(size: int) -> None:
    import hashlib

    from gpulint.cachedir import sha256

    data = b"x" * (size + 3)
    digest = sha256(len(data))
    digest.update(data)
    assert digest.hexdigest() == hashlib.sha256(data).hexdigest()


def test_without_the_model_sources_the_key_follows_every_model_field() -> None:
    from gpulint.profile.cache import model_fields

    layout = model_fields()
    for field in ("Claim(kind:", "PoolFacts(pool:", "Pool(name:", "ClusterProfile(name:"):
        assert field in layout


def test_the_key_follows_the_model_sources(monkeypatch: pytest.MonkeyPatch) -> None:
    import gpulint.profile.cache as cache_module

    data = (PROFILES / "eks-prod-kubectl.yaml").read_bytes()
    key = entry_key(data, None)
    # Another model (here: one module fewer) is another key; a model without its sources on
    # disk falls back to its classes' fields.
    monkeypatch.setattr(cache_module, "MODEL_MODULES", cache_module.MODEL_MODULES[1:])
    assert entry_key(data, None) != key
    monkeypatch.setattr(cache_module, "MODEL_MODULES", ("gpulint.no_such_module",))
    monkeypatch.setattr(cache_module, "model_fields", lambda: "Pool(name:str)")
    assert cache_module._layout() == b"Pool(name:str)"


def test_an_importer_changed_within_a_version_leaves_its_entries_unused() -> None:
    # A checkout installed for development changes its importers without a new version.
    from gpulint.profile import cache

    before = cache.entry_hash(0, None).hexdigest()
    importer = Path(cache.__file__).with_name("eksctl.py")
    info = importer.stat()
    try:
        os.utime(importer, ns=(info.st_atime_ns, info.st_mtime_ns + 1_000_000_000))
        assert cache.entry_hash(0, None).hexdigest() != before
    finally:
        os.utime(importer, ns=(info.st_atime_ns, info.st_mtime_ns))
    assert cache.entry_hash(0, None).hexdigest() == before
