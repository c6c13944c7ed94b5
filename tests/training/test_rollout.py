"""The shared rollout: pre-reset observations recorded for learners that bootstrap time limits."""

import chex
import jax
import jax.numpy as jnp
import numpy as np

from jaxmarl.baselines.q_learning.td_loss import QSequence, truncation_slots
from jaxmarl.training.rollout import TrainingEnv, rollout
from jaxmarl.wrappers import AgentBatch, LogWrapper
from tests.toy_envs import CounterEnv


def constant_policy(carry, inputs, key):
    return carry, jnp.zeros(inputs.obs.shape[:2], jnp.int32), {}


def run(record_terminal, num_steps=7, num_envs=2, slots=None):
    # target is unreachable with action 0, so every episode ends at the time limit (3 steps).
    wrapped = LogWrapper(CounterEnv(target=100, max_steps=3))
    env = TrainingEnv(wrapped, AgentBatch.from_env(wrapped))
    runner = env.reset(jax.random.key(0), num_envs, jnp.zeros((num_envs, 2, 0)))
    slots = truncation_slots(wrapped, num_steps) if slots is None else slots

    @jax.jit
    def go(runner):
        last, trajectory = rollout(
            env, constant_policy, runner, num_steps, record_terminal=record_terminal
        )
        next_inputs = env.runner_inputs(last)
        sequence = QSequence.from_rollout(trajectory, next_inputs, runner.policy_carry, slots)
        return trajectory, sequence

    return go(runner)


def test_truncation_slots_bound_the_time_limits_of_a_sequence():
    env = CounterEnv(max_steps=3)
    assert [truncation_slots(env, t) for t in (1, 3, 4, 6, 7)] == [1, 1, 2, 2, 3]
    assert truncation_slots(LogWrapper(env), 7) == 3  # read through wrappers
    env.max_steps = None
    assert truncation_slots(env, 7) == 7


def test_record_terminal_keeps_the_pre_reset_observation():
    trajectory, sequence = run(record_terminal=True)
    ends = np.asarray(trajectory.truncated)
    assert ends[:, 0].tolist() == [False, False, True, False, False, True, False]
    terminal = trajectory.extras["terminal_inputs"]
    assert terminal.obs.shape == trajectory.inputs.obs.shape
    assert terminal.obs.dtype == jnp.float32
    # Observation feature 1 is the step counter: 3 in the real last observation, while the
    # stored next input is the next episode's first (counter 0).
    np.testing.assert_array_equal(terminal.obs[2, :, :, 1], 3.0)
    np.testing.assert_array_equal(sequence.inputs.obs[3, :, :, 1], 0.0)
    assert bool(jnp.all(sequence.inputs.first[3]))
    # Time limits are not terminations when the terminal inputs are kept: steps 2 and 5 take
    # the first two of the sequence's 3 slots, the third is unused (step T = 7).
    assert not bool(jnp.any(sequence.terminated)) and bool(jnp.all(sequence.done[2]))
    np.testing.assert_array_equal(sequence.terminal_step, [[2, 2], [5, 5], [7, 7]])
    kept = jax.tree.map(lambda x: x[jnp.array([2, 5, 6])], terminal)
    chex.assert_trees_all_equal(sequence.terminal_inputs, kept)
    slot, has = sequence.bootstrap_steps()
    np.testing.assert_array_equal(has[:, 0], [False, False, True, False, False, True, False])
    np.testing.assert_array_equal(slot[[2, 5], 0], [0, 1])


def test_time_limits_beyond_the_slots_count_as_terminations():
    _, sequence = run(record_terminal=True, slots=1)
    assert sequence.terminal_inputs.obs.shape[0] == 1
    np.testing.assert_array_equal(sequence.terminal_step, [[2, 2]])
    np.testing.assert_array_equal(sequence.terminated[:, 0], [0, 0, 0, 0, 0, 1, 0])


def test_without_record_terminal_time_limits_are_terminations():
    trajectory, sequence = run(record_terminal=False)
    assert "terminal_inputs" not in trajectory.extras
    assert sequence.terminal_inputs is None and sequence.terminal_step is None
    np.testing.assert_array_equal(sequence.terminated, sequence.done)
    assert bool(jnp.all(sequence.done[2]))


def test_bootstrap_values_each_steps_pre_reset_observation_with_that_steps_carry():
    # The bootstrap runs once after the loop on every step's recorded inputs and carry: it must
    # see step t's pre-reset observation (counter 3 at a time limit) and the carry after step t.
    wrapped = LogWrapper(CounterEnv(target=100, max_steps=3))
    env = TrainingEnv(wrapped, AgentBatch.from_env(wrapped))
    runner = env.reset(jax.random.key(0), 2, jnp.zeros(2))

    def counting_policy(carry, inputs, key):
        return carry + 1.0, jnp.zeros(inputs.obs.shape[:2], jnp.int32), {}

    def bootstrap(carry, inputs):  # [B, A]: 100 * the step counter seen + the carry
        return 100.0 * inputs.obs[..., 1] + carry[:, None]

    _, trajectory = jax.jit(lambda r: rollout(env, counting_policy, r, 7, bootstrap=bootstrap))(
        runner
    )
    assert "terminal_inputs" not in trajectory.extras
    counter = np.array([1, 2, 3, 1, 2, 3, 1.0])  # pre-reset counters; the carry is t + 1
    expected = 100.0 * counter + np.arange(1, 8)
    np.testing.assert_array_equal(
        trajectory.extras["bootstrap_value"], np.broadcast_to(expected[:, None, None], (7, 2, 2))
    )
