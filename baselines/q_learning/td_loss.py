"""The TD loss every Q learner composes, and the sequences it reads.

* ``QSequence``: ``T`` transitions of ``B`` envs plus the observation after them and the
  recurrent state before them -- what a replay buffer stores and what the loss reads;
* ``td_loss``: agent Q-values over a sequence -> mixer -> n-step or TD(lambda) targets from a
  target network (optionally double Q) -> mean squared TD error.

Time limits. With ``bootstrap_truncation`` (the default), an episode cut by the env's time
limit bootstraps from the value of its real last observation, read one step on from the
recurrent state the agents had reached (``QNetwork.q_values_after``). The rollout records
pre-reset observations (``record_terminal``); a replayed sequence keeps only those of its
time-limit steps, in ``truncation_slots(env, T)`` slots per env (two time limits are at least
``max_steps`` steps apart, so a 25-step MPE sequence needs one slot, not 25), which bounds the
extra buffer memory and the extra network passes per loss to those slots. Without it, a time
limit counts as a termination (no future value): a bias for envs whose agents cannot see the
time, such as MPE, where the last ``1 / (1 - gamma)`` steps of every episode then look better
than they are. (JaxMARL's QMIX and VDN scripts store the previous step's done flag, so the
last step of an episode bootstraps from the first observation of the next one; its IQL script
counts every episode end as a termination. ``bootstrap_truncation=false`` is the nearest match.)
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
from flax import struct

from jaxmarl.baselines.q_learning.acting import greedy_actions
from jaxmarl.baselines.q_learning.config import QCommonConfig
from jaxmarl.networks.q_network import QNetwork
from jaxmarl.training.data_parallel import SINGLE, DataShards
from jaxmarl.training.minibatch import Minibatches, sequence_deal
from jaxmarl.training.rollout import Policy, TrainingEnv, rollout
from jaxmarl.training.types import Runner, StepInput, Transition


@struct.dataclass
class QSequence:
    """``T`` transitions of ``B`` envs, time-major (what the loss and the buffer hold).

    Attributes:
        inputs: ``StepInput`` with leaves ``[T + 1, B, ...]``: the ``T`` observed steps and the
            one after them (the bootstrap observation).
        action: ``[T, B, A]`` int32.
        reward: ``[T, B, A]`` float32.
        terminated: ``[T, B]`` bool, no bootstrapping after step t.
        done: ``[T, B]`` bool, an episode ended at step t.
        carry: ``[B, A, H]`` recurrent state before ``inputs[0]``.
        terminal_inputs: ``StepInput`` ``[K, B, ...]``: in slot k, the real last observation
            of the k-th time-limit step of the sequence (``inputs[t + 1]`` is then the next
            episode's first); ``None`` when time limits count as terminations.
        terminal_step: ``[K, B]`` int32, the step of each slot (``T``: slot unused).
    """

    inputs: StepInput
    action: jax.Array
    reward: jax.Array
    terminated: jax.Array
    done: jax.Array
    carry: jax.Array
    terminal_inputs: StepInput | None = None
    terminal_step: jax.Array | None = None

    @classmethod
    def from_rollout(
        cls,
        trajectory: Transition,
        next_inputs: StepInput,
        carry: jax.Array,
        slots: int | None = None,
    ) -> QSequence:
        """From ``rollout``'s trajectory, the inputs after it and the carry before it.

        If the rollout recorded pre-reset observations (``record_terminal``), the first
        ``slots`` (default: ``T``) time-limit steps of each env keep theirs and bootstrap from
        it; time limits beyond the slots (none when ``slots = truncation_slots(env, T)``)
        and every time limit without recorded observations count as terminations.
        """
        inputs = jax.tree.map(
            lambda steps, last: jnp.concatenate([steps, last[None]]),
            trajectory.inputs,
            next_inputs,
        )
        terminal = trajectory.extras.get("terminal_inputs")
        done = trajectory.done
        sequence = cls(
            inputs=inputs,
            action=trajectory.action.astype(jnp.int32),
            reward=trajectory.reward,
            terminated=done,
            done=done,
            carry=carry,
        )
        if terminal is None:
            return sequence
        steps = done.shape[0]
        slots = steps if slots is None else min(slots, steps)
        truncated = trajectory.truncated
        slot = jnp.cumsum(truncated, axis=0) - 1  # [T, B]: which slot a time limit takes
        kept = truncated & (slot < slots)
        hit = kept[None] & (slot[None] == jnp.arange(slots)[:, None, None])  # [K, T, B]
        terminal_step = jnp.where(jnp.any(hit, axis=1), jnp.argmax(hit, axis=1), steps)
        at = jnp.minimum(terminal_step, steps - 1)
        return sequence.replace(
            terminated=trajectory.terminated | (truncated & ~kept),
            terminal_inputs=jax.tree.map(lambda x: _take_steps(x, at), terminal),
            terminal_step=terminal_step.astype(jnp.int32),
        )

    def bootstrap_steps(self) -> tuple[jax.Array, jax.Array]:
        """``(slot [T, B], has [T, B])``: the terminal slot of each step, and whether it has
        one (a time limit with its real last observation kept)."""
        steps = self.done.shape[0]
        hit = self.terminal_step[:, None, :] == jnp.arange(steps)[None, :, None]  # [K, T, B]
        return jnp.argmax(hit, axis=0), jnp.any(hit, axis=0)

    def batch_major(self) -> QSequence:
        """Leaves ``[B, T(+1), ...]``: one item per env (for a replay buffer)."""
        swapped = jax.tree.map(lambda x: jnp.swapaxes(x, 0, 1), self.replace(carry=None))
        return swapped.replace(carry=self.carry)

    def time_major(self) -> QSequence:
        """The inverse of ``batch_major``."""
        return self.batch_major()


def _take_steps(x: jax.Array, steps: jax.Array) -> jax.Array:
    """``x [T, B, ...]`` at ``steps [K, B]`` -> ``[K, B, ...]``."""
    index = steps.reshape(steps.shape + (1,) * (x.ndim - 2))
    return jnp.take_along_axis(x, index, axis=0)


def truncation_slots(env: Any, num_steps: int) -> int:
    """Time limits one env can hit in ``num_steps`` consecutive steps: ``num_steps`` for an env
    without ``max_steps``, else ``ceil(num_steps / max_steps)`` (they are ``max_steps`` apart)."""
    max_steps = getattr(env, "max_steps", None)
    if not max_steps:
        return num_steps
    return min(num_steps, (num_steps - 1) // int(max_steps) + 1)


def stale_steps(first: jax.Array, burn_in: int) -> jax.Array:
    """``[T, B]`` bool: steps whose recurrent state still depends on the stored carry and that
    fall in the first ``burn_in`` steps of the sequence.

    A replayed sequence that begins mid-episode starts from the carry the behaviour network had
    when the sequence was collected, which the parameters have since moved away from (the
    stored-state staleness of R2D2, Kapturowski et al. 2019). Steps from the first episode start
    on (``first``) have a state computed by the current network alone and are never stale.
    """
    fresh = jnp.cumsum(first, axis=0) > 0
    early = jnp.arange(first.shape[0])[:, None] < burn_in
    return early & ~fresh


def td_loss(
    network: QNetwork,
    config: QCommonConfig,
    params: Any,
    target_params: Any | None,
    sequence: QSequence,
    double_q: bool = True,
    burn_in: int = 0,
    key: jax.Array | None = None,
) -> tuple[jax.Array, dict[str, jax.Array]]:
    """Mean squared TD error of the mixed Q-values of a sequence.

    ``next_values_t = mix_target(Q_target(s_{t+1}, a*), world_{t+1})`` with ``a*`` the greedy
    available action of the online network (double Q) or of the target network, then n-step or
    TD(lambda) targets (``config.returns``) on the mixer's reward (``mixer.team_reward``). Where an
    episode ended at step t and the sequence carries ``terminal_inputs``, ``s_{t+1}`` is the
    real last observation (bootstrapped unless ``terminated``), not the next episode's first.

    Args:
        network: the agents' ``QNetwork`` (mixer included).
        config: ``gamma``, ``returns``, ``mixer``, ``reward_scale``, ``team_reward`` are read.
        params: online parameters (differentiated).
        target_params: target parameters, or ``None`` to use ``stop_gradient(params)`` (PQN).
        sequence: ``QSequence`` ``[T(+1), B, ...]``.
        double_q: select next actions with the online network.
        burn_in: leave out of the loss the first ``burn_in`` steps of a sequence that began
            mid-episode, up to its first episode start (``stale_steps``). The returned
            metrics other than ``loss`` still average every step.
        key: the mixer's randomness, for a mixer that draws some (``mixer.needs_key``: SHAQ's
            coalitions). Every mixer is also told which taken actions were the online
            network's greedy ones (SHAQ weights only the others).

    Returns:
        ``(loss, {"loss", "q_mean", "q_tot_mean", "target_mean"})``: ``q_mean`` averages the
        agents' taken Q-values, ``q_tot_mean`` the mixed values that ``target_mean`` (the mean
        TD target) is regressed against, so the last two show values running away.
    """
    if config.mixer.needs_key and key is None:
        raise ValueError(f"mixer={config.mixer.kind} draws random numbers: pass td_loss a key")
    inputs, terminal = sequence.inputs, sequence.terminal_inputs
    q, states = network.q_values_and_states(params, sequence.carry, inputs.obs, inputs.first)
    if target_params is None:
        target_params, q_target, target_states = jax.lax.stop_gradient((params, q, states))
    else:
        q_target, target_states = network.q_values_and_states(
            target_params, sequence.carry, inputs.obs, inputs.first
        )
    # What follows each step t: the stored step t + 1, or after an episode end the real last
    # observation (when recorded), valued from the state reached at step t.
    chooser = jax.lax.stop_gradient(q[1:])
    after = (q_target[1:], chooser, inputs.avail_actions[1:], inputs.world_state[1:])
    # A mixer that reads the agents' hidden tokens (TransfQMIX's) also gets those of the next
    # steps, and episode starts to reset its own token at.
    reads_states = config.mixer.reads_agent_states
    next_first = inputs.first[1:]
    if reads_states:
        after += (target_states[1:],)
    if terminal is not None:
        last_step = sequence.done.shape[0] - 1
        # The state after step t (states[t]) is where the real last observation is read from.
        slot_states = lambda x: _take_steps(x, jnp.minimum(sequence.terminal_step, last_step))
        if reads_states:
            q_target_end, target_end_states = network.q_values_after(
                target_params, slot_states(target_states), terminal.obs, with_states=True
            )
        else:
            q_target_end = network.q_values_after(
                target_params, slot_states(target_states), terminal.obs
            )  # [K, B, A, n]
        if double_q:
            online = jax.lax.stop_gradient((params, slot_states(states)))
            q_online_end = network.q_values_after(*online, terminal.obs)
        else:
            q_online_end = q_target_end
        ends = (q_target_end, q_online_end, terminal.avail_actions, terminal.world_state)
        if reads_states:
            ends += (target_end_states,)
        slot, has = sequence.bootstrap_steps()
        placed = lambda end: _take_steps(end, slot)  # [T, B, ...]
        has_for = lambda x: has.reshape(has.shape + (1,) * (x.ndim - 2))
        after = tuple(
            jnp.where(has_for(following), placed(end), following)
            for end, following in zip(ends, after)
        )
        # A real last observation continues its episode; the step after it is the second of
        # the next episode, whose first the next-value sequence never saw.
        next_first = (next_first & ~has) | jnp.concatenate([jnp.zeros_like(has[:1]), has[:-1]])
    next_q_target, next_q_online, next_avail, next_world = after[:4]
    next_action = greedy_actions(next_q_online if double_q else next_q_target, next_avail)
    next_q = jnp.take_along_axis(next_q_target, next_action[..., None], axis=-1)[..., 0]
    any_avail = jnp.any(next_avail, axis=-1)
    next_q = jnp.where(any_avail, next_q, 0.0)  # agents with no available action add nothing
    taken = jnp.take_along_axis(q[:-1], sequence.action[..., None], axis=-1)[..., 0]
    # Whether each taken action is the online network's greedy one (read by SHAQ only).
    greedy = sequence.action == greedy_actions(
        jax.lax.stop_gradient(q[:-1]), inputs.avail_actions[:-1]
    )
    if reads_states:
        q_mixed = network.mix(
            params,
            taken,
            inputs.world_state[:-1],
            agent_states=states[:-1],
            first=inputs.first[:-1],
        )
        next_mixed = network.mix(
            target_params, next_q, next_world, agent_states=after[4], first=next_first
        )
    else:
        q_mixed = network.mix(params, taken, inputs.world_state[:-1], greedy, key)  # [T, B, K]
        # The next actions are greedy by construction: no weights for non-greedy ones.
        next_mixed = network.mix(target_params, next_q, next_world)
    reward = config.mixer.team_reward(sequence.reward, config.team_reward) * config.reward_scale
    width = reward.shape[-1]
    per_value = lambda flags: jnp.broadcast_to(flags[..., None], (*flags.shape, width))
    terminated, done = per_value(sequence.terminated), per_value(sequence.done)
    returns = config.returns.targets(reward, next_mixed, terminated, done, config.gamma)
    returns = jax.lax.stop_gradient(returns)
    squared_error = jnp.square(q_mixed - returns)
    if burn_in:
        kept = jnp.broadcast_to(~stale_steps(inputs.first[:-1], burn_in)[..., None], returns.shape)
        # Over every device's kept steps when the batch is split (``DataShards.masked_mean``).
        loss = DataShards.of(config).masked_mean(squared_error, kept)
    else:
        loss = jnp.mean(squared_error)
    return loss, {
        "loss": loss,
        "q_mean": jnp.mean(taken),
        "q_tot_mean": jnp.mean(q_mixed),
        "target_mean": jnp.mean(returns),
    }


def collect_sequence(
    env: TrainingEnv,
    policy: Policy,
    runner: Runner,
    num_steps: int,
    *,
    record_terminal: bool,
    slots: int,
    shaping: tuple[str, jax.Array] | None = None,
    data: DataShards = SINGLE,
) -> tuple[Runner, Transition, QSequence]:
    """Roll out ``num_steps`` steps and package them as a ``QSequence`` (with the inputs after
    them and the carry before them): ``(runner, trajectory, sequence)``. ``shaping`` and
    ``data``: see ``jaxmarl.training.rollout.rollout``."""
    next_runner, trajectory = rollout(
        env,
        policy,
        runner,
        num_steps,
        record_terminal=record_terminal,
        shaping=shaping,
        data=data,
    )
    next_inputs = env.runner_inputs(next_runner)
    sequence = QSequence.from_rollout(trajectory, next_inputs, runner.policy_carry, slots)
    return next_runner, trajectory, sequence


def sequence_minibatches_of(
    key: jax.Array, sequence: QSequence, num_minibatches: int, data: DataShards = SINGLE
) -> Minibatches:
    """``num_minibatches`` minibatches of whole env sequences, each a ``QSequence`` with its
    start carries (``data``: this device's share of them; ``.stacked()``: leaves ``[M, ...]``)."""
    dealt = sequence_deal(
        key, sequence.replace(carry=None), sequence.carry, num_minibatches, True, data
    )
    return dealt.map(lambda minibatch: minibatch[0].replace(carry=minibatch[1]))
