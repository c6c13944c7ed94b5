"""The dueling Q head: its value and advantage streams and how acting masks its Q-values."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxmarl.baselines.q_learning.acting import greedy_actions, masked_q
from jaxmarl.baselines.q_learning.config import QCommonConfig
from jaxmarl.networks import QHead


def dueling_q_and_streams():
    head = QHead(5, hidden_sizes=(8,), dueling=True)
    x = jax.random.normal(jax.random.key(0), (3, 4, 6))
    variables = head.init(jax.random.key(1), x)
    # Random biases too, so that neither stream is zero at the input's mean.
    variables = jax.tree.map(lambda p: p + jax.random.normal(jax.random.key(2), p.shape), variables)
    q, state = head.apply(variables, x, capture_intermediates=True)
    streams = state["intermediates"]
    return (
        variables["params"],
        q,
        streams["value"]["__call__"][0],
        streams["advantage"]["__call__"][0],
    )


def test_dueling_q_is_value_plus_centred_advantage_of_the_heads_own_streams():
    params, q, value, advantage = dueling_q_and_streams()
    # The streams share the head's hidden layer and have one output layer each.
    assert set(params) == {"hidden_0", "value", "advantage"}
    assert params["value"]["kernel"].shape == (8, 1)
    assert params["advantage"]["kernel"].shape == (8, 5)
    assert q.shape == advantage.shape == (3, 4, 5) and value.shape == (3, 4, 1)
    q, value, advantage = (np.asarray(a, np.float64) for a in (q, value, advantage))
    centred = advantage - advantage.mean(axis=-1, keepdims=True)
    np.testing.assert_allclose(q, value + centred, rtol=1e-5, atol=1e-5)
    # The value is the mean Q over actions, and it is not the zero that makes the check blind.
    np.testing.assert_allclose(q.mean(axis=-1), value[..., 0], rtol=1e-5, atol=1e-5)
    assert np.abs(value).min() > 1e-3 and np.abs(advantage.mean(axis=-1)).min() > 1e-3


def test_masking_a_dueling_head_hits_only_the_illegal_actions():
    _, q, _, _ = dueling_q_and_streams()
    avail = jax.random.bernoulli(jax.random.key(3), 0.5, q.shape).at[..., 0].set(True)
    masked = masked_q(q, avail)
    lowest = jnp.finfo(q.dtype).min
    np.testing.assert_array_equal(masked == lowest, ~avail)
    np.testing.assert_array_equal(jnp.where(avail, masked, 0.0), jnp.where(avail, q, 0.0))
    chosen = greedy_actions(q, avail)
    assert bool(jnp.all(jnp.take_along_axis(avail, chosen[..., None], axis=-1)))
    best_legal = jnp.max(jnp.where(avail, q, -jnp.inf), axis=-1)
    np.testing.assert_array_equal(jnp.take_along_axis(q, chosen[..., None], -1)[..., 0], best_legal)


def test_plain_q_head_keeps_its_single_output_layer():
    params = QHead(4).init(jax.random.key(0), jnp.zeros((2, 3)))["params"]
    assert set(params) == {"Dense_0"}


@pytest.mark.parametrize("bad", ["yes", 1, None])
def test_dueling_must_be_a_bool(bad):
    with pytest.raises(ValueError, match=r"dueling must be true or false .*got"):
        QCommonConfig(dueling=bad)
