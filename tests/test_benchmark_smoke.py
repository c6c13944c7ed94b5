"""Smoke test of the throughput benchmark's workload (benchmarks/_workload.py), run in-process.

Tiny sizes only (batch 2, 3 steps, 1 repeat): this checks that the workload runs against our
environments and reports sane numbers, not how fast anything is. It never needs the peer venv.
"""

import math

from tests.benchmark_scripts import load_benchmark_script


def test_measure_reports_positive_finite_rates():
    workload = load_benchmark_script("_workload")
    result = workload.measure("MPE_simple_spread_v3", batch=2, steps=3, repeats=1, min_repeat_s=0.0)

    assert set(result) == set(workload.RESULT_KEYS)
    assert (result["status"], result["num_agents"], result["checksum_finite"]) == ("ok", 3, True)
    assert math.isfinite(result["env_steps_per_s"]) and result["env_steps_per_s"] > 0
    assert workload.measure("MPE_not_an_env_v0", batch=2, steps=3, repeats=1)["status"] == (
        "unavailable"
    )
