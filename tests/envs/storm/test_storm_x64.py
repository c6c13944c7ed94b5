"""Under ``jax_enable_x64`` the STORM ids still give int32/float32 everywhere, without
dtype-promotion warnings (traced with ``jax.eval_shape``: nothing is compiled)."""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import pytest

import jaxmarl


@pytest.mark.parametrize(
    ("env_id", "kwargs"), [("storm", {"num_agents": 3}), ("storm_2p", {}), ("storm_np", {})]
)
def test_no_64_bit_values_or_promotion_warnings_under_x64(env_id, kwargs):
    with jax.enable_x64(True), warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)  # e.g. an int64 -> int32 scatter
        env = jaxmarl.make(env_id, **kwargs)
        key = jax.random.key(0)
        obs, state = jax.eval_shape(env.reset, key)
        actions = {agent: jnp.int32(2) for agent in env.agents}
        out = jax.eval_shape(env.step, key, state, actions)
    wide = [
        (jax.tree_util.keystr(path), leaf.dtype)
        for path, leaf in jax.tree_util.tree_leaves_with_path((obs, state, out))
        if str(leaf.dtype) in ("int64", "uint64", "float64")
    ]
    assert not wide, wide
    assert out[4]["coins_collected"].dtype == jnp.int32
