"""benchmarks/q_update_profile.py: its FLOP count of matrix products is exact, and the script
runs end to end on a small update. How fast anything is, is not tested."""

import jax
import jax.numpy as jnp

from tests.benchmark_scripts import load_benchmark_script

profiler = load_benchmark_script("q_update_profile")


def test_products_are_counted_per_scan_step_and_per_branch():
    def recurrence(h, w):
        step = lambda h, _: (jnp.tanh(h @ w), None)
        return jax.lax.scan(step, h, None, length=5)[0]

    jaxpr = jax.make_jaxpr(recurrence)(jnp.ones((4, 3)), jnp.ones((3, 3))).jaxpr
    assert profiler.matmul_flops(jaxpr)[0] == 5 * 2 * 4 * 3 * 3

    maybe = lambda p, a, b: jax.lax.cond(p, lambda: a @ b, lambda: a[:, :2])
    jaxpr = jax.make_jaxpr(maybe)(True, jnp.ones((6, 5)), jnp.ones((5, 2))).jaxpr
    assert profiler.matmul_flops(jaxpr, max)[0] == 2 * 6 * 5 * 2
    assert profiler.matmul_flops(jaxpr, min)[0] == 0


def test_profile_of_a_small_vdn_update_runs(monkeypatch):
    monkeypatch.setattr(profiler, "time_product", lambda key: 1e-5)  # no per-product timing
    small = ["env.num_envs=2", "batch_size=2", "buffer_size=4", "network.embed_dim=8"]
    small += ["network.trunk.size=8"]
    result = profiler.profile("vdn", "MPE_simple_spread_v3", small, updates=1)
    assert result["ms_per_update"] > 0 and result["learning_gflop"] > 0
    assert "learning step" in profiler.report(result)
