"""OBL's pretrained-agent network (``jaxmarl.environments.hanabi.pretrained.OBLAgentR2D2``).

Against JaxMARL 0.2.0's own module, as ``make_obl_reference.py`` recorded it: a narrow network
saved with JaxMARL's ``save_params`` must load here and give the same advantages, greedy moves
and recurrent state on JaxMARL's recorded 2-player games, and the published network's parameter
tree must be this module's, so the OBL weight files load unchanged.
"""

from __future__ import annotations

import pathlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxmarl
from jaxmarl.environments.hanabi.pretrained import OBLAgentR2D2
from jaxmarl.wrappers.baselines import load_params

DATA = pathlib.Path(__file__).parent / "data"


@pytest.fixture(scope="module")
def reference():
    return dict(np.load(DATA / "obl_reference.npz"))


@pytest.fixture(scope="module")
def small():
    """JaxMARL's narrow stand-in network (``hid_dim=16``) and its parameters."""
    return OBLAgentR2D2(hid_dim=16), load_params(DATA / "obl_small.safetensors")


def tree_lines(params):
    flat = jax.tree_util.tree_flatten_with_path(params)[0]
    return sorted(
        "/".join(str(k.key) for k in path) + ":" + "x".join(map(str, leaf.shape))
        for path, leaf in flat
    )


def test_the_published_weights_have_this_modules_parameter_tree(reference):
    agent = OBLAgentR2D2()
    carry = agent.initialize_carry(jax.random.key(0), (2,))
    obs = jnp.zeros((2, 658))
    shapes = jax.eval_shape(lambda: agent.init(jax.random.key(0), carry, (obs, obs[:, 125:])))
    assert tree_lines(shapes) == reference["published_tree"].tolist()


def test_matches_jaxmarl_move_for_move_on_recorded_games(reference, small):
    agent, params = small
    games = np.load(DATA / "jaxmarl_games.npz")
    obs = jnp.asarray(games["p2_obs"], jnp.float32)
    legal = jnp.asarray(np.unpackbits(games["p2_legal"], axis=-1)[..., :21], jnp.float32)

    def step(carry, inputs):
        _, advantages = agent.advantages(params, carry, inputs[0])
        carry, moves = agent.greedy_act(params, carry, inputs)
        return carry, (advantages, moves)

    carry = agent.initialize_carry(jax.random.key(0), (2,))
    carry, (advantages, moves) = jax.jit(lambda c: jax.lax.scan(step, c, (obs, legal)))(carry)

    np.testing.assert_allclose(advantages, reference["advantages"], rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(moves, reference["moves"])
    np.testing.assert_allclose(carry[0], reference["carry_c"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(carry[1], reference["carry_h"], rtol=1e-5, atol=1e-6)
    # The recorded games exercise the masking: the agent to move picks among several moves.
    on_turn = np.asarray(moves).min(axis=1)
    assert len(np.unique(on_turn)) > 3


def test_greedy_move_is_the_best_legal_one():
    agent = OBLAgentR2D2(hid_dim=8)
    carry = agent.initialize_carry(jax.random.key(0), (4,))
    obs = jax.random.bernoulli(jax.random.key(1), 0.3, (4, 658)).astype(jnp.float32)
    params = agent.init(jax.random.key(2), carry, (obs, obs[:, 125:]))
    legal = jax.random.bernoulli(jax.random.key(3), 0.4, (4, 21)).at[:, 20].set(True)
    _, advantages = agent.advantages(params, carry, obs)
    _, moves = agent.greedy_act(params, carry, (obs, legal.astype(jnp.float32)))
    best = [max(np.flatnonzero(row), key=lambda m, a=a: a[m]) for row, a in zip(legal, advantages)]
    np.testing.assert_array_equal(moves, best)


def test_jaxmarls_documented_example_self_plays_on_this_hanabi(small):
    """JaxMARL's docs example (one move), then whole self-play games, jitted and vmapped."""
    agent, params = small
    env = jaxmarl.make("hanabi")
    obs, state = env.reset(jax.random.PRNGKey(0))
    batchify = lambda x: jnp.stack([x[a] for a in env.agents])  # noqa: E731
    carry = agent.initialize_carry(jax.random.PRNGKey(0), batch_dims=(2,))
    carry, actions = agent.greedy_act(
        params, carry, (batchify(obs), batchify(env.get_legal_moves(state)))
    )
    actions = {a: actions[i] for i, a in enumerate(env.agents)}
    assert env.action_encoding[int(actions[env.agents[0]])]
    env.step(jax.random.PRNGKey(1), state, actions)

    def play(key):
        obs, state = env.reset(key)

        def turn(loop, key):
            carry, obs, state, score, over = loop
            legal = env.get_legal_moves(state)
            carry, moves = agent.greedy_act(params, carry, (batchify(obs), batchify(legal)))
            actions = {a: moves[i] for i, a in enumerate(env.agents)}
            obs, state, rewards, dones, infos = env.step(key, state, actions)
            score = score + jnp.where(over, 0.0, rewards[env.agents[0]])
            illegal = infos["illegal_action"].any() & ~over
            return (carry, obs, state, score, over | dones["__all__"]), illegal

        start = (agent.initialize_carry(None, (2,)), obs, state, jnp.float32(0), jnp.bool_(False))
        (_, _, _, score, over), illegal = jax.lax.scan(
            turn, start, jax.random.split(key, env.longest_game)
        )
        return score, over, illegal.any()

    keys = jax.random.split(jax.random.key(3), 8)
    score, over, illegal = jax.jit(jax.vmap(play))(keys)
    again = jax.jit(jax.vmap(play))(keys)[0]
    assert bool(over.all()) and not bool(illegal.any())
    np.testing.assert_array_equal(score, again)
    assert ((score >= 0) & (score <= 25)).all()
