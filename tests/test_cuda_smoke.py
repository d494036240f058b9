"""`gpulint smoke` runs its NVIDIA check in a CUDA image each pool's driver can run: the Jobs
it writes, linted against the same profile, leave GPU801 nothing to say where an image fits."""

from __future__ import annotations

from pathlib import Path

from gpulint.api import lint
from gpulint.config import Config
from gpulint.cuda import driver_floor, image_row, parse_version, runs_as_released
from gpulint.data.cuda import DRIVER_FLOORS, SMOKE_IMAGES
from gpulint.profile.load import load_profiles
from gpulint.smoke import DEVICE_CHECKS, SmokeOptions, dump_jobs, smoke_jobs

ROOT = Path(__file__).resolve().parent.parent
DRIVERS = load_profiles([str(ROOT / "fixtures" / "profiles" / "cuda" / "cuda-drivers.yaml")])


def test_every_smoke_image_row_is_a_cuda_image_of_a_table3_release() -> None:
    floors = {row.cuda for row in DRIVER_FLOORS}
    versions = []
    for row in SMOKE_IMAGES:
        assert row.cuda in floors, row  # its floor is exactly a Table 3 row
        known = image_row(row.image)
        assert known is not None and known[0] == row.cuda, row  # the image table agrees
        assert row.image.endswith(f":{row.cuda}-base-ubuntu22.04")
        assert "nvcr.io/nvidia/cuda" in row.source and row.cuda in row.source
        versions.append(parse_version(row.cuda))
    assert versions == sorted(versions, reverse=True)  # newest first: the default leads
    nvidia = next(check for prefix, check in DEVICE_CHECKS if prefix == "nvidia.com/")
    assert nvidia.image == SMOKE_IMAGES[0].image


def test_each_pool_gets_the_image_its_driver_runs() -> None:
    jobs = smoke_jobs(DRIVERS).jobs
    images = {
        job["metadata"]["labels"]["gpulint.io/pool"]: job["spec"]["template"]["spec"]["containers"][
            0
        ]["image"]
        for job in jobs
    }
    assert images["a100-r570"] == "nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04"
    # 535.104.05 is 12.2 Update 2's driver: below 12.4.1's 550.54.15.
    assert images["v100-r535"] == "nvcr.io/nvidia/cuda:12.2.2-base-ubuntu22.04"
    # GFD says the driver runs CUDA 12.4 at most.
    assert images["t4-cuda124"] == "nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04"
    # 515.105.01 is below every image NVIDIA still publishes: the oldest is the nearest.
    assert images["v100-r515"] == "nvcr.io/nvidia/cuda:11.8.0-base-ubuntu22.04"
    # No driver known: the default.
    assert images["l4-unknown"] == "nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04"


def test_an_image_chosen_by_option_is_kept_whatever_the_driver() -> None:
    options = SmokeOptions(image="registry.example/check:1", command=("nvidia-smi", "-L"))
    job = smoke_jobs(DRIVERS, "v100-r515", options).jobs[0]
    assert job["spec"]["template"]["spec"]["containers"][0]["image"] == "registry.example/check:1"


def test_gpu801_says_nothing_of_the_jobs_but_where_no_published_image_fits(tmp_path) -> None:
    path = tmp_path / "smoke.yaml"
    path.write_text(dump_jobs(smoke_jobs(DRIVERS).jobs), encoding="utf-8")
    found = [
        (f.code, f.severity.label, f.object.name)
        for f in lint([str(path)], config=Config(), profile=DRIVERS).findings
        if f.code.startswith("GPU80")
    ]
    # 11.8 on R515 runs by minor-version compatibility only: a warning, not an error.
    assert found == [("GPU801", "warning", "gpulint-smoke-v100-r515")]


def test_every_smoke_image_runs_on_its_own_release_driver() -> None:
    from gpulint.cuda import PoolDriver

    for row in SMOKE_IMAGES:
        cuda = parse_version(row.cuda)
        floor = driver_floor(cuda)
        driver = PoolDriver(floor.driver, parse_version(floor.driver), None, "test")
        assert runs_as_released(cuda, driver)
        older = PoolDriver("x", (parse_version(floor.driver)[0] - 1,), None, "test")
        assert not runs_as_released(cuda, older)
