"""The Q-learning core: masked epsilon-greedy, the TD loss, sequences and config checks."""

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxmarl.baselines.q_learning.acting import epsilon_greedy, greedy_actions
from jaxmarl.baselines.q_learning.config import LambdaReturns, NStepReturns, QCommonConfig
from jaxmarl.baselines.q_learning.td_loss import QSequence, stale_steps, td_loss
from jaxmarl.networks import (
    GRUTrunk,
    MLPEncoder,
    MLPTrunk,
    QHead,
    QNetwork,
    ValueHead,
)
from jaxmarl.networks.candidate_q import CandidateLayer, CandidateQNetwork
from jaxmarl.networks.mixers import NoMixerConfig, QMIXMixerConfig, VDNMixerConfig
from jaxmarl.training import targets
from jaxmarl.training.types import StepInput


@pytest.mark.parametrize("epsilon", [0.0, 0.5, 1.0])
def test_masked_actions_are_never_selected(epsilon):
    key_q, key_mask, key_act = jax.random.split(jax.random.key(0), 3)
    q = 100.0 * jax.random.normal(key_q, (2000, 6))
    avail = jax.random.bernoulli(key_mask, 0.4, (2000, 6))
    avail = avail.at[:, 5].set(True)  # at least one available action per row
    actions = jax.jit(epsilon_greedy)(key_act, q, avail, jnp.float32(epsilon))
    assert actions.dtype == jnp.int32 and actions.shape == (2000,)
    assert bool(jnp.all(jnp.take_along_axis(avail, actions[:, None], axis=-1)))
    greedy = greedy_actions(q, avail)
    explored = float(jnp.mean(actions != greedy))
    if epsilon == 0.0:
        assert explored == 0.0
    else:  # random draws sometimes coincide with the greedy action
        assert 0.3 * epsilon < explored < epsilon


def test_random_branch_is_uniform_over_available_actions():
    avail = jnp.array([[True, False, True, False, True]] * 30000)
    q = jnp.zeros((30000, 5)).at[:, 0].set(1.0)
    actions = epsilon_greedy(jax.random.key(1), q, avail, jnp.float32(1.0))
    counts = np.bincount(np.asarray(actions), minlength=5)
    assert counts[1] == counts[3] == 0
    np.testing.assert_allclose(counts[[0, 2, 4]] / 30000, 1 / 3, atol=0.02)


def test_greedy_ignores_unavailable_higher_values():
    q = jnp.array([[5.0, 1.0, 3.0]])
    assert int(greedy_actions(q, jnp.array([[False, True, True]]))[0]) == 2


MIXERS = {
    "none": NoMixerConfig(),
    "vdn": VDNMixerConfig(),
    "qmix": QMIXMixerConfig(embed_dim=4, hypernet_hidden_dim=8),
}


def tiny_network(mixer="vdn", num_actions=3, num_agents=2):
    return QNetwork(
        encoder=MLPEncoder((), 8),
        trunk=MLPTrunk((8,)),
        head=QHead(num_actions),
        mixer=MIXERS[mixer].module(),
        num_agents=num_agents,
    )


def tiny_sequence(key, steps=5, envs=3, agents=2, actions=3, width=4):
    keys = jax.random.split(key, 4)
    done = jnp.zeros((steps, envs), dtype=bool).at[2, 0].set(True)
    return QSequence(
        inputs=StepInput(
            obs=jax.random.normal(keys[0], (steps + 1, envs, agents, width)),
            avail_actions=jnp.ones((steps + 1, envs, agents, actions), dtype=bool),
            world_state=jax.random.normal(keys[1], (steps + 1, envs, 6)),
            first=jnp.zeros((steps + 1, envs), dtype=bool).at[3, 0].set(True),
        ),
        action=jax.random.randint(keys[2], (steps, envs, agents), 0, actions),
        reward=jax.random.normal(keys[3], (steps, envs, agents)),
        terminated=done,
        done=done,
        carry=jnp.zeros((envs, agents, 0)),
    )


def test_td_loss_matches_a_hand_built_vdn_target():
    config = QCommonConfig(mixer=VDNMixerConfig(), gamma=0.8, returns=NStepReturns(n=1))
    net = tiny_network("vdn")
    seq = tiny_sequence(jax.random.key(0))
    params = net.init(jax.random.key(1), seq.inputs.obs[0], seq.inputs.world_state[0])
    target_params = net.init(jax.random.key(2), seq.inputs.obs[0], seq.inputs.world_state[0])
    loss, metrics = td_loss(net, config, params, target_params, seq, double_q=True)

    _, q = net.q_values(params, seq.carry, seq.inputs.obs, seq.inputs.first)
    _, qt = net.q_values(target_params, seq.carry, seq.inputs.obs, seq.inputs.first)
    best = jnp.argmax(q[1:], axis=-1)  # double Q: online picks ...
    next_q = jnp.take_along_axis(qt[1:], best[..., None], axis=-1)[..., 0]  # ... target values
    taken = jnp.take_along_axis(q[:-1], seq.action[..., None], axis=-1)[..., 0]
    target = seq.reward.sum(-1) + 0.8 * (1.0 - seq.done) * next_q.sum(-1)
    expected = jnp.mean((taken.sum(-1) - target) ** 2)
    np.testing.assert_allclose(loss, expected, rtol=1e-5)
    np.testing.assert_allclose(metrics["target_mean"], jnp.mean(target), rtol=1e-5)
    np.testing.assert_allclose(metrics["q_tot_mean"], jnp.mean(taken.sum(-1)), rtol=1e-5)

    # Without double Q the target network both picks and values the next action.
    loss_max, _ = td_loss(net, config, params, target_params, seq, double_q=False)
    target_max = seq.reward.sum(-1) + 0.8 * (1.0 - seq.done) * qt[1:].max(-1).sum(-1)
    np.testing.assert_allclose(loss_max, jnp.mean((taken.sum(-1) - target_max) ** 2), rtol=1e-5)

    # reward_scale multiplies the rewards in the targets, nothing else.
    scaled = QCommonConfig(
        mixer=VDNMixerConfig(), gamma=0.8, returns=NStepReturns(n=1), reward_scale=10.0
    )
    loss_scaled, _ = td_loss(net, scaled, params, target_params, seq, double_q=True)
    target_scaled = 10.0 * seq.reward.sum(-1) + 0.8 * (1.0 - seq.done) * next_q.sum(-1)
    np.testing.assert_allclose(
        loss_scaled, jnp.mean((taken.sum(-1) - target_scaled) ** 2), rtol=1e-5
    )

    # team_reward="mean" regresses the agents' mean reward (a shared reward counted once).
    mean = QCommonConfig(
        mixer=VDNMixerConfig(), gamma=0.8, returns=NStepReturns(n=1), team_reward="mean"
    )
    loss_mean, metrics_mean = td_loss(net, mean, params, target_params, seq, double_q=True)
    target_mean = seq.reward.mean(-1) + 0.8 * (1.0 - seq.done) * next_q.sum(-1)
    np.testing.assert_allclose(loss_mean, jnp.mean((taken.sum(-1) - target_mean) ** 2), rtol=1e-5)
    np.testing.assert_allclose(metrics_mean["target_mean"], jnp.mean(target_mean), rtol=1e-5)


def test_stale_steps_end_at_the_first_episode_start_or_the_burn_in():
    first = jnp.zeros((6, 3), dtype=bool)
    first = first.at[0, 1].set(True)  # env 1 starts with a reset: its carry is not used
    first = first.at[2, 2].set(True)  # env 2 resets at step 2
    stale = jax.jit(stale_steps, static_argnums=1)(first, 4)
    expected = np.zeros((6, 3), dtype=bool)
    expected[:4, 0] = True  # no reset: the whole burn-in
    expected[:2, 2] = True  # up to the reset
    chex.assert_shape(stale, (6, 3))
    assert stale.dtype == jnp.bool_
    np.testing.assert_array_equal(stale, expected)
    np.testing.assert_array_equal(stale_steps(first, 0), np.zeros((6, 3), dtype=bool))


def test_burn_in_leaves_stale_steps_out_of_the_loss():
    config = QCommonConfig(mixer=VDNMixerConfig(), gamma=0.8, returns=NStepReturns(n=1))
    net = tiny_gru_network()
    seq = tiny_sequence(jax.random.key(4))  # env 0 resets at step 3, envs 1-2 never
    params = net.init(jax.random.key(1), seq.inputs.obs[0], seq.inputs.world_state[0])
    target_params = net.init(jax.random.key(2), seq.inputs.obs[0], seq.inputs.world_state[0])
    seq = seq.replace(carry=jax.random.normal(jax.random.key(5), (3, 2, 6)))  # a stored carry

    _, q = net.q_values(params, seq.carry, seq.inputs.obs, seq.inputs.first)
    _, qt = net.q_values(target_params, seq.carry, seq.inputs.obs, seq.inputs.first)
    best = jnp.argmax(q[1:], axis=-1)
    next_q = jnp.take_along_axis(qt[1:], best[..., None], axis=-1)[..., 0]
    taken = jnp.take_along_axis(q[:-1], seq.action[..., None], axis=-1)[..., 0]
    target = seq.reward.sum(-1) + 0.8 * (1.0 - seq.done) * next_q.sum(-1)
    squared_error = (taken.sum(-1) - target) ** 2  # [T=5, B=3]

    loss = jax.jit(lambda p: td_loss(net, config, p, target_params, seq, burn_in=4)[0])(params)
    # env 0: steps 0-2 stale (reset at 3); envs 1, 2: steps 0-3 stale (no reset).
    kept = np.ones((5, 3), dtype=bool)
    kept[:3, 0] = False
    kept[:4, 1:] = False
    np.testing.assert_allclose(loss, squared_error[kept].mean(), rtol=1e-5)
    # Off, every step counts.
    loss_off = td_loss(net, config, params, target_params, seq)[0]
    np.testing.assert_allclose(loss_off, squared_error.mean(), rtol=1e-5)
    # Stale steps do not enter the loss: changing their rewards leaves it unchanged.
    noisy = seq.replace(reward=seq.reward.at[0].add(100.0))
    np.testing.assert_allclose(
        td_loss(net, config, params, target_params, noisy, burn_in=4)[0], loss, rtol=1e-6
    )


@pytest.mark.parametrize("mixer", ["none", "vdn", "qmix"])
@pytest.mark.parametrize("returns", ["n_step", "lambda"])
def test_td_loss_is_finite_with_finite_gradients(mixer, returns):
    chosen = NStepReturns(n=3) if returns == "n_step" else LambdaReturns(td_lambda=0.7)
    config = QCommonConfig(mixer=MIXERS[mixer], returns=chosen)
    net = tiny_network(mixer)
    seq = tiny_sequence(jax.random.key(3))
    # One agent in one env has no available action at all at one step: still finite.
    seq = seq.replace(
        inputs=seq.inputs.replace(avail_actions=seq.inputs.avail_actions.at[2, 1, 0].set(False))
    )
    params = net.init(jax.random.key(4), seq.inputs.obs[0], seq.inputs.world_state[0])
    (loss, metrics), grads = jax.jit(
        jax.value_and_grad(lambda p: td_loss(net, config, p, None, seq), has_aux=True)
    )(params)
    assert loss.dtype == jnp.float32 and loss.shape == ()
    chex.assert_tree_all_finite((loss, metrics, grads))
    assert float(optax_norm(grads)) > 0.0


def optax_norm(tree):
    return jnp.sqrt(sum(jnp.sum(x**2) for x in jax.tree.leaves(tree)))


def test_pqn_style_target_uses_stopped_online_values():
    config = QCommonConfig(mixer=VDNMixerConfig(), returns=LambdaReturns(td_lambda=0.5), gamma=0.9)
    net = tiny_network("vdn")
    seq = tiny_sequence(jax.random.key(5))
    params = net.init(jax.random.key(6), seq.inputs.obs[0], seq.inputs.world_state[0])
    loss, _ = td_loss(net, config, params, None, seq)
    _, q = net.q_values(params, seq.carry, seq.inputs.obs, seq.inputs.first)
    taken = jnp.take_along_axis(q[:-1], seq.action[..., None], axis=-1)[..., 0].sum(-1)
    expected_targets = targets.lambda_returns(
        seq.reward.sum(-1), q[1:].max(-1).sum(-1), seq.done, seq.done, 0.9, 0.5
    )
    np.testing.assert_allclose(loss, jnp.mean((taken - expected_targets) ** 2), rtol=1e-5)


def test_sequence_batch_major_round_trip():
    seq = tiny_sequence(jax.random.key(7))
    items = seq.batch_major()
    assert items.inputs.obs.shape == (3, 6, 2, 4) and items.action.shape == (3, 5, 2)
    assert items.carry.shape == seq.carry.shape
    chex.assert_trees_all_equal(items.time_major(), seq)


@pytest.mark.parametrize(
    "overrides, match",
    [
        (dict(eps_start=1.5), r"eps_start must be in \[0, 1\]"),
        (dict(eps_finish=-0.1), r"eps_finish must be in \[0, 1\]"),
        (dict(lr=-1.0), r"lr must be > 0"),
        (dict(mixer="qmix"), r"mixer must be one of"),
        (dict(returns="lambda"), r"returns must be an NStepReturns or a LambdaReturns"),
        (
            dict(returns=NStepReturns(n=30), num_steps=25),
            r"returns.n=30 is longer than the stored sequences",
        ),
        (dict(gamma=0.0), r"gamma must be in"),
    ],
)
def test_invalid_common_configs(overrides, match):
    with pytest.raises(ValueError, match=match):
        QCommonConfig(**overrides)


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: LambdaReturns(td_lambda=1.2), r"returns.td_lambda must be in \[0, 1\]"),
        (lambda: NStepReturns(n=0), r"returns.n must be >= 1"),
        (lambda: QMIXMixerConfig(embed_dim=0), r"mixer.embed_dim must be > 0"),
        (lambda: QMIXMixerConfig(init_scale=-1.0), r"mixer.init_scale must be > 0"),
    ],
)
def test_invalid_choices_fail_when_built(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def tiny_gru_network(num_actions=3, num_agents=2):
    return QNetwork(
        encoder=MLPEncoder((), 8),
        trunk=GRUTrunk(6),
        head=QHead(num_actions),
        mixer=VDNMixerConfig().module(),
        num_agents=num_agents,
    )


def tiny_candidate_network(num_actions=3, num_agents=2):
    return CandidateQNetwork(
        encoder=MLPEncoder((), 8),
        trunk=GRUTrunk(6),
        candidate=CandidateLayer(num_actions, 6),
        decision_trunk=MLPTrunk((8,)),
        decision_head=ValueHead(),
        mixer=VDNMixerConfig().module(),
        num_agents=num_agents,
    )


@pytest.mark.parametrize("build", [tiny_gru_network, tiny_candidate_network])
def test_q_values_after_continues_the_sequence_by_one_step(build):
    net = build()
    keys = jax.random.split(jax.random.key(8), 4)
    obs = jax.random.normal(keys[0], (4, 3, 2, 5))
    extra = jax.random.normal(keys[1], (4, 3, 2, 5))
    first = jnp.zeros((4, 3), dtype=bool).at[2, 1].set(True)
    carry = jax.random.normal(keys[2], (3, 2, 6))
    params = net.init(keys[3], obs[0], jnp.zeros((3, 0)))
    q, states = net.q_values_and_states(params, carry, obs, first)
    assert q.shape == (4, 3, 2, 3) and states.shape == (4, 3, 2, 6)
    after = jax.jit(net.q_values_after)(params, states, extra)
    for t in range(4):  # reference: rerun the sequence up to t, then read extra[t]
        continued = jnp.concatenate([obs[: t + 1], extra[t][None]])
        flags = jnp.concatenate([first[: t + 1], jnp.zeros((1, 3), dtype=bool)])
        _, reference = net.q_values(params, carry, continued, flags)
        np.testing.assert_allclose(after[t], reference[-1], rtol=1e-5, atol=1e-6)


def test_td_loss_bootstraps_time_limits_from_the_real_last_observation():
    """Env 0 is cut by the time limit after step 1, env 1 terminates after step 2: the
    truncated step bootstraps from its terminal observation, the terminated one from nothing,
    and every other step from the stored next step."""
    net = tiny_gru_network()
    seq = tiny_sequence(jax.random.key(9), steps=4, width=5)
    truncated = jnp.zeros((4, 3), dtype=bool).at[1, 0].set(True)
    terminated = jnp.zeros((4, 3), dtype=bool).at[2, 1].set(True)
    first = jnp.zeros((5, 3), dtype=bool).at[2, 0].set(True).at[3, 1].set(True)
    terminal_obs = jax.random.normal(jax.random.key(10), (1, *seq.inputs.obs.shape[1:]))
    seq = seq.replace(
        inputs=seq.inputs.replace(first=first),
        terminated=terminated,
        done=terminated | truncated,
        carry=jax.random.normal(jax.random.key(11), (3, 2, 6)),
        # One slot per env: env 0's time limit at step 1; envs 1 and 2 have none (step T).
        terminal_inputs=jax.tree.map(lambda x: x[:1], seq.inputs).replace(obs=terminal_obs),
        terminal_step=jnp.array([[1, 4, 4]], dtype=jnp.int32),
    )
    params = net.init(jax.random.key(12), seq.inputs.obs[0], seq.inputs.world_state[0])
    target_params = net.init(jax.random.key(13), seq.inputs.obs[0], seq.inputs.world_state[0])
    config = QCommonConfig(mixer=VDNMixerConfig(), gamma=0.8, returns=NStepReturns(n=1))
    loss = jax.jit(lambda p, tp: td_loss(net, config, p, tp, seq)[0])(params, target_params)

    inputs = seq.inputs
    _, q = net.q_values(params, seq.carry, inputs.obs, inputs.first)
    _, qt = net.q_values(target_params, seq.carry, inputs.obs, inputs.first)
    # Env 0's real observation after step 1, reached by running its episode on to it.
    cut = jnp.concatenate([inputs.obs[:2], terminal_obs])
    cut_first = jnp.concatenate([inputs.first[:2], jnp.zeros((1, 3), dtype=bool)])
    _, q_cut = net.q_values(params, seq.carry, cut, cut_first)
    _, qt_cut = net.q_values(target_params, seq.carry, cut, cut_first)
    best = jnp.argmax(q[1:], axis=-1).at[1, 0].set(jnp.argmax(q_cut[-1, 0], axis=-1))
    values = qt[1:].at[1, 0].set(qt_cut[-1, 0])
    next_q = jnp.take_along_axis(values, best[..., None], axis=-1)[..., 0].sum(-1)
    target = seq.reward.sum(-1) + 0.8 * (1.0 - terminated) * next_q
    taken = jnp.take_along_axis(q[:-1], seq.action[..., None], axis=-1)[..., 0].sum(-1)
    np.testing.assert_allclose(loss, jnp.mean((taken - target) ** 2), rtol=1e-5)
    # Counting the time limit as a termination (no terminal inputs) gives a different loss.
    as_termination = seq.replace(terminated=seq.done, terminal_inputs=None, terminal_step=None)
    other = td_loss(net, config, params, target_params, as_termination)[0]
    assert abs(float(other) - float(loss)) > 1e-4
