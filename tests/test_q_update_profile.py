"""benchmarks/q_update_profile.py: its count of matrix-product FLOPs is exact, and a short
profile of a real update reports a consistent split. How fast anything is, is not tested."""

import jax
import jax.numpy as jnp
import pytest

from tests.benchmark_scripts import load_benchmark_script


@pytest.fixture(scope="module")
def profiler():
    return load_benchmark_script("q_update_profile")


PLAIN = (((1,), (0,)), ((), ()))  # [m, k] x [k, n]


def test_scan_bodies_count_once_per_step(profiler):
    def recurrence(h, w):
        step = lambda h, _: (jnp.tanh(h @ w), None)
        return jax.lax.scan(step, h, None, length=5)[0]

    jaxpr = jax.make_jaxpr(recurrence)(jnp.ones((4, 3)), jnp.ones((3, 3))).jaxpr
    flops, products, whiles = profiler.matmul_flops(jaxpr)
    assert flops == 5 * 2 * 4 * 3 * 3
    assert products == {((4, 3), (3, 3), PLAIN): 5}
    assert whiles == 0


def test_cond_counts_the_branch_asked_for(profiler):
    def maybe_product(p, a, b):
        return jax.lax.cond(p, lambda: a @ b, lambda: a[:, :2])

    args = (True, jnp.ones((6, 5)), jnp.ones((5, 2)))
    jaxpr = jax.make_jaxpr(maybe_product)(*args).jaxpr
    assert profiler.matmul_flops(jaxpr, max)[0] == 2 * 6 * 5 * 2
    assert profiler.matmul_flops(jaxpr, min)[0] == 0


def test_batched_and_transposed_products(profiler):
    batched = ((3, 4, 5), (3, 5, 6), (((2,), (1,)), ((0,), (0,))))
    assert profiler.product_flops(batched) == 2 * 3 * 4 * 5 * 6
    weight_gradient = ((7, 4), (7, 6), (((0,), (0,)), ((), ())))  # x^T g
    assert profiler.product_flops(weight_gradient) == 2 * 4 * 6 * 7
    jaxpr = jax.make_jaxpr(lambda x, g: x.T @ g)(jnp.ones((7, 4)), jnp.ones((7, 6))).jaxpr
    assert profiler.matmul_flops(jaxpr)[0] == 2 * 4 * 6 * 7


def test_profile_of_a_vdn_update_is_consistent(profiler):
    result = profiler.profile("vdn", "MPE_simple_spread_v3", ["buffer_size=64"], updates=2)
    assert result["env_steps_per_update"] == 200
    assert 0 < result["rollout_ms"] < result["ms_per_update"]  # learning costs time
    assert result["products_alone_ms"] > 0
    # The rollout's products (8 envs x 3 agents = 24 rows per step) are not the learning step's,
    # and the learning step's total is exactly the sum over its listed products.
    assert all(24 not in p["lhs"] for p in result["products"])
    assert 0 < result["rollout_gflop"] < result["learning_gflop"]
    assert sum(p["gflop"] for p in result["products"]) == pytest.approx(result["learning_gflop"])
    # The learning step multiplies what the GRU needs for 32 sequences of 26 steps x 3 agents:
    # at least the online and target input projections, [2496, 64] x [64, 192] each.
    assert result["learning_gflop"] > 2 * 2 * 2496 * 64 * 192 / 1e9
    shapes = {(tuple(p["lhs"]), tuple(p["rhs"])) for p in result["products"]}
    assert ((26, 96, 64), (64, 192)) in shapes
    assert all(p["count"] > 0 and p["alone_ms"] > 0 for p in result["products"])
    assert "learning step" in profiler.report(result)
