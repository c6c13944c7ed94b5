"""Smoke test of the throughput benchmark's workload (benchmarks/_workload.py), run in-process.

Tiny sizes only (batch 2, 3 steps, 1 repeat): this checks that the workload runs against our
environments and reports sane numbers, not how fast anything is. It never needs the peer venv.
"""

import importlib.util
import math
from pathlib import Path

import pytest

WORKLOAD = Path(__file__).resolve().parents[1] / "benchmarks" / "_workload.py"


@pytest.fixture(scope="module")
def workload():
    module_spec = importlib.util.spec_from_file_location("benchmark_workload", WORKLOAD)
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    return module


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
