"""Mixers: VDN is the sum, QMIX is monotonic in every agent's Q (gradient check), IQL passes."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxmarl.networks import GRUTrunk, MLPEncoder, QHead, QNetwork
from jaxmarl.networks.mixers import (
    NoMixer,
    NoMixerConfig,
    QMixer,
    QMIXMixerConfig,
    VDNMixer,
    VDNMixerConfig,
)

NONE, VDN, QMIX = NoMixerConfig(), VDNMixerConfig(), QMIXMixerConfig()


def test_vdn_is_the_sum_over_agents():
    q = jnp.array([[1.0, -2.0, 0.5], [3.0, 0.0, 1.0]])
    mixer = VDNMixer()
    params = mixer.init(jax.random.key(0), q, jnp.zeros((2, 4)))
    np.testing.assert_allclose(mixer.apply(params, q, jnp.zeros((2, 4))), [[-0.5], [4.0]])


def test_no_mixer_returns_agent_values():
    q = jnp.arange(6.0).reshape(2, 3)
    out = NoMixer().apply({}, q, jnp.zeros((2, 5)))
    np.testing.assert_array_equal(out, q)


def test_team_reward_per_mixer():
    reward = jnp.array([[1.0, 2.0, 3.0]])
    np.testing.assert_array_equal(NONE.team_reward(reward), reward)
    np.testing.assert_array_equal(VDN.team_reward(reward), [[6.0]])
    np.testing.assert_array_equal(QMIX.team_reward(reward), [[6.0]])
    # A shared reward (every agent gets the same) is itself under "mean", N times it under "sum".
    shared = jnp.full((4, 3), 0.5)
    np.testing.assert_array_equal(VDN.team_reward(shared, "mean"), jnp.full((4, 1), 0.5))
    np.testing.assert_array_equal(QMIX.team_reward(reward, "mean"), [[2.0]])
    np.testing.assert_array_equal(NONE.team_reward(reward, "mean"), reward)  # IQL: per agent
    for mixer in (NONE, VDN, QMIX):
        with pytest.raises(ValueError, match=r"unknown team reward 'first'; choose one of"):
            mixer.team_reward(reward, "first")


def test_mixer_configs_say_what_they_read_and_build():
    assert [m.needs_world_state for m in (NONE, VDN, QMIX)] == [False, False, True]
    assert [m.kind for m in (NONE, VDN, QMIX)] == ["none", "vdn", "qmix"]
    assert isinstance(NONE.module(), NoMixer) and isinstance(VDN.module(), VDNMixer)
    assert QMIXMixerConfig(embed_dim=4, hypernet_hidden_dim=8, init_scale=0.5).module() == QMixer(
        embed_dim=4, hypernet_hidden_dim=8, init_scale=0.5
    )


@pytest.mark.parametrize("init_scale", [1e-3, 1.0])
def test_qmix_is_monotonic_in_every_agent_q(init_scale):
    num_agents, width = 4, 7
    mixer = QMixer(embed_dim=8, hypernet_hidden_dim=16, init_scale=init_scale)
    q_key, s_key, p_key = jax.random.split(jax.random.key(1), 3)
    q = 10.0 * jax.random.normal(q_key, (64, num_agents))
    state = 3.0 * jax.random.normal(s_key, (64, width))
    params = mixer.init(p_key, q, state)
    # Perturb the parameters away from the (small) initialisation so the check is not trivial.
    params = jax.tree.map(lambda p: p + jax.random.normal(jax.random.key(2), p.shape), params)
    q_tot = lambda qs, s: mixer.apply(params, qs, s)[0]
    grads = jax.vmap(jax.grad(q_tot))(q, state)  # [64, A]: dQ_tot / dQ_a
    assert grads.shape == (64, num_agents)
    assert bool(jnp.all(grads >= 0.0))
    assert bool(jnp.any(grads > 0.0))
    # And it depends on the state (a hypernetwork, not a fixed mix).
    assert not np.allclose(mixer.apply(params, q, state), mixer.apply(params, q, state + 1.0))


def test_qmix_shapes_keep_leading_axes():
    mixer = QMIXMixerConfig(embed_dim=4, hypernet_hidden_dim=8, init_scale=0.5).module()
    q = jnp.ones((5, 3, 2))  # [T, B, A]
    state = jnp.ones((5, 3, 6))
    params = mixer.init(jax.random.key(0), q, state)
    out = mixer.apply(params, q, state)
    assert out.shape == (5, 3, 1) and out.dtype == jnp.float32


def test_q_network_subtrees_and_shapes():
    net = QNetwork(
        encoder=MLPEncoder((), 8),
        trunk=GRUTrunk(6),
        head=QHead(5),
        mixer=QMIXMixerConfig(embed_dim=4, hypernet_hidden_dim=8).module(),
        num_agents=3,
    )
    params = net.init(jax.random.key(0), jnp.zeros((2, 3, 7)), jnp.zeros((2, 10)))
    assert set(params) == {"encoder", "trunk", "heads", "mixer"}
    carry = net.initial_carry(2)
    assert carry.shape == (2, 3, 6)
    obs = jax.random.normal(jax.random.key(1), (4, 2, 3, 7))
    first = jnp.zeros((4, 2), dtype=bool).at[2, 1].set(True)
    new_carry, q = net.q_values(params, carry, obs, first)
    assert q.shape == (4, 2, 3, 5) and new_carry.shape == (2, 3, 6)
    # A reset at t=2 in env 1 makes its later Q-values independent of what came before.
    _, q_alone = net.q_values(params, carry[1:], obs[2:, 1:], first[2:, 1:])
    np.testing.assert_allclose(q[2:, 1:], q_alone, rtol=1e-5, atol=1e-6)
    assert not np.allclose(
        q[1:, 0], net.q_values(params, carry[:1], obs[1:, :1], first[1:, :1])[1][:, 0]
    )
