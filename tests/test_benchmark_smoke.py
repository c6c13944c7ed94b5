"""Smoke test of the throughput benchmark's workload (benchmarks/_workload.py), run in-process.

Tiny sizes only (batch 2, 3 steps, 1 repeat): this checks that the workload runs against our
environments and reports sane numbers, not how fast anything is. It never needs the peer venv.
"""

import json
import math
import subprocess
import sys

import pytest

from tests.benchmark_scripts import BENCHMARKS, load_benchmark_script

WORKLOAD = BENCHMARKS / "_workload.py"


@pytest.fixture(scope="module")
def workload():
    return load_benchmark_script("_workload")


def test_measure_reports_positive_finite_rates(workload):
    result = workload.measure("MPE_simple_spread_v3", batch=2, steps=3, repeats=1, min_repeat_s=0.0)

    assert set(result) == set(workload.RESULT_KEYS)
    assert result["status"] == "ok"
    assert (result["env_id"], result["batch"], result["steps"]) == ("MPE_simple_spread_v3", 2, 3)
    assert result["num_agents"] == 3
    for key in ("env_steps_per_s", "agent_steps_per_s", "compile_total_s", "compile_s"):
        assert math.isfinite(result[key]) and result[key] > 0, (key, result[key])
    assert result["agent_steps_per_s"] == pytest.approx(3 * result["env_steps_per_s"])
    assert result["compile_total_s"] >= result["compile_s"]
    assert result["peak_rss_mib"] > 0
    assert result["checksum_finite"] is True


def test_measure_reports_unknown_env_as_unavailable(workload):
    result = workload.measure("MPE_not_an_env_v0", batch=2, steps=3, repeats=1)

    assert result["status"] == "unavailable"
    assert result["env_steps_per_s"] is None


def test_measure_splits_the_batch_over_host_devices():
    # The device count must be set before jax is imported, so this runs in a fresh process.
    completed = subprocess.run(
        [sys.executable, str(WORKLOAD), "MPE_simple_spread_v3", "--batch", "4", "--steps", "3"]
        + ["--repeats", "1", "--min-repeat-s", "0", "--devices", "2", "--json"],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    line = next(line for line in completed.stdout.splitlines() if line.startswith("@@"))
    result = json.loads(line.split(" ", 1)[1])

    assert (result["status"], result["devices"], result["batch"]) == ("ok", 2, 4)
    assert result["env_steps_per_s"] > 0 and result["checksum_finite"] is True


def test_measure_rejects_more_devices_than_exist(workload):
    with pytest.raises(ValueError, match="device_count_flag"):
        workload.measure("MPE_simple_spread_v3", batch=4, steps=3, repeats=1, devices=64)
