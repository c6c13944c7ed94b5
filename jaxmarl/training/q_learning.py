"""The Q-learning core shared by IQL, VDN, QMIX (replay) and PQN (no replay).

Pieces, each a pure function:

* ``greedy_actions`` / ``epsilon_greedy``: action selection with available-action masks (the
  random branch draws only among available actions too);
* ``QSequence``: ``T`` transitions of ``B`` envs plus the observation after them and the
  recurrent state before them -- what a replay buffer stores and what the loss reads;
* ``td_loss``: agent Q-values over a sequence -> mixer -> n-step or TD(lambda) targets from a
  target network (optionally double Q) -> mean squared TD error;
* ``QCommonConfig``: the hyperparameters every Q learner has (exploration, optimiser, targets,
  mixer), validated before anything is traced; ``make_optimiser``, ``epsilon_schedule``.

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

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp
import optax
from flax import struct

from jaxmarl.networks import QHead, encoder_from_config
from jaxmarl.networks.mixers import MIXERS, TEAM_REWARDS, make_mixer, team_reward
from jaxmarl.networks.q_network import QNetwork
from jaxmarl.networks.trunks import trunk_from_config
from jaxmarl.training import targets
from jaxmarl.training.config import (
    EnvConfig,
    NetworkConfig,
    RolloutUpdates,
    RunConfig,
    require,
    require_positive,
)
from jaxmarl.training.sgd import learning_rate
from jaxmarl.training.types import StepInput, Transition
from jaxmarl.wrappers.agent_batch import AgentBatch

RETURNS = ("n_step", "lambda")
OPTIMISERS = ("adam", "radam")


# --------------------------------------------------------------------------- acting
def masked_q(q: jax.Array, avail: jax.Array) -> jax.Array:
    """Unavailable actions get the smallest finite value (``[..., n]``)."""
    return jnp.where(avail, q, jnp.finfo(q.dtype).min)


def greedy_actions(q: jax.Array, avail: jax.Array) -> jax.Array:
    """``argmax`` over available actions: ``[..., n] -> [...]`` int32 (0 if none is available)."""
    return jnp.argmax(masked_q(q, avail), axis=-1).astype(jnp.int32)


def epsilon_greedy(key: jax.Array, q: jax.Array, avail: jax.Array, epsilon: jax.Array) -> jax.Array:
    """With probability ``epsilon`` a uniformly random *available* action, else the greedy one.

    Args:
        key: PRNG key (split here for the coin and the random action).
        q: ``[..., n]`` Q-values.
        avail: ``[..., n]`` bool available actions.
        epsilon: ``[]`` exploration rate.

    Returns:
        ``[...]`` int32 actions, always available where any action is.
    """
    coin_key, action_key = jax.random.split(key)
    uniform_logits = masked_q(jnp.zeros_like(q), avail)
    random = jax.random.categorical(action_key, uniform_logits, axis=-1).astype(jnp.int32)
    explore = jax.random.uniform(coin_key, q.shape[:-1]) < epsilon
    return jnp.where(explore, random, greedy_actions(q, avail))


def q_policies(network: QNetwork):
    """``(policy_fn, greedy_policy)`` of a Q-network for ``rollout`` and ``Learner``.

    ``policy_fn((params, epsilon), carry, inputs, key)`` acts epsilon-greedily (``rollout``
    passes its ``params`` argument through, so the epsilon of the current update travels with
    the parameters); ``greedy_policy(params, carry, inputs)`` acts greedily (evaluation).
    """

    def q_values(params, carry, inputs: StepInput):
        carry, q = network.q_values(params, carry, inputs.obs[None], inputs.first[None])
        return carry, q[0]

    def policy_fn(params_and_epsilon, carry, inputs: StepInput, key):
        params, epsilon = params_and_epsilon
        carry, q = q_values(params, carry, inputs)
        return carry, epsilon_greedy(key, q, inputs.avail_actions, epsilon), {}

    def greedy_policy(params, carry, inputs: StepInput):
        carry, q = q_values(params, carry, inputs)
        return carry, greedy_actions(q, inputs.avail_actions)

    return policy_fn, greedy_policy


# --------------------------------------------------------------------------- config
def q_network_defaults() -> NetworkConfig:
    """JaxMARL's Q-learning agent: ReLU dense 64 -> GRU 64 -> Q head, one-hot agent ids, the
    dense layer initialised orthogonally with gain 1 (not the sqrt(2) of the PPO bodies)."""
    return NetworkConfig(
        encoder_sizes=(),
        embed_dim=64,
        encoder_init_gain=1.0,
        trunk="gru",
        gru_size=64,
        activation="relu",
        agent_id=True,
    )


@dataclasses.dataclass(frozen=True, kw_only=True)
class QCommonConfig(RolloutUpdates):
    """Hyperparameters shared by every Q learner (see ``baselines/q_learning.py``, ``pqn.py``).

    Attributes:
        env, network, run: shared sections (``jaxmarl.training.config``).
        mixer: ``"none"`` (IQL), ``"vdn"`` or ``"qmix"``.
        mixer_embed_dim, mixer_hypernet_hidden_dim, mixer_init_scale: QMIX mixing network.
        num_steps: rollout length ``T`` per update (also the stored sequence length).
        lr: learning rate; ``anneal_lr`` decays it linearly to 0 over training.
        optimiser: ``"radam"`` (JaxMARL's choice) or ``"adam"``.
        max_grad_norm: global gradient-norm clip.
        gamma: discount.
        returns: ``"n_step"`` (with ``n_step``) or ``"lambda"`` (TD(lambda), ``td_lambda``).
        eps_start, eps_finish: epsilon-greedy exploration, linear from start to finish ...
        eps_decay: ... over this fraction of the updates, then constant.
        reward_scale: rewards are multiplied by this in the TD targets (JaxMARL's SMAX configs
            use 10, "the original scale of SMAC"); logged returns stay unscaled.
        team_reward: how VDN and QMIX make the team reward they regress from the agents'
            rewards: ``"sum"`` (MPE, where each agent's reward differs) or ``"mean"`` (envs
            with one shared reward per step, such as SMAX, where a sum would count it once per
            agent). IQL learns each agent's own reward either way.
        bootstrap_truncation: value time-limited episodes' real last observation instead of
            counting the time limit as a termination (see the module docstring).
    """

    env: EnvConfig = dataclasses.field(default_factory=lambda: EnvConfig(num_envs=8))
    network: NetworkConfig = dataclasses.field(default_factory=q_network_defaults)
    run: RunConfig = dataclasses.field(default_factory=lambda: RunConfig(total_timesteps=2_000_000))
    mixer: str = "qmix"
    mixer_embed_dim: int = 32
    mixer_hypernet_hidden_dim: int = 128
    mixer_init_scale: float = 1e-3
    num_steps: int = 25
    lr: float = 5e-3
    anneal_lr: bool = True
    optimiser: str = "radam"
    max_grad_norm: float = 25.0
    gamma: float = 0.9
    returns: str = "n_step"
    n_step: int = 1
    td_lambda: float = 0.9
    eps_start: float = 1.0
    eps_finish: float = 0.05
    eps_decay: float = 0.1
    reward_scale: float = 1.0
    team_reward: str = "sum"
    bootstrap_truncation: bool = True

    def __post_init__(self):
        require(self.mixer in MIXERS, f"mixer must be one of {MIXERS}, got {self.mixer!r}")
        require(self.returns in RETURNS, f"returns must be one of {RETURNS}, got {self.returns!r}")
        require(
            self.team_reward in TEAM_REWARDS,
            f"team_reward must be one of {TEAM_REWARDS}, got {self.team_reward!r}",
        )
        require(
            self.optimiser in OPTIMISERS,
            f"optimiser must be one of {OPTIMISERS}, got {self.optimiser!r}",
        )
        require_positive(
            "q_learning",
            num_steps=self.num_steps,
            lr=self.lr,
            max_grad_norm=self.max_grad_norm,
            n_step=self.n_step,
            mixer_embed_dim=self.mixer_embed_dim,
            mixer_hypernet_hidden_dim=self.mixer_hypernet_hidden_dim,
            mixer_init_scale=self.mixer_init_scale,
            reward_scale=self.reward_scale,
        )
        require(0.0 < self.gamma <= 1.0, f"gamma must be in (0, 1], got {self.gamma}")
        require(0.0 <= self.td_lambda <= 1.0, f"td_lambda must be in [0, 1], got {self.td_lambda}")
        require(
            self.n_step <= self.num_steps,
            f"n_step={self.n_step} is longer than the stored sequences (num_steps="
            f"{self.num_steps}); choose n_step <= num_steps",
        )
        for name in ("eps_start", "eps_finish"):
            value = getattr(self, name)
            require(0.0 <= value <= 1.0, f"{name} must be in [0, 1], got {value}")
        require(0.0 < self.eps_decay <= 1.0, f"eps_decay must be in (0, 1], got {self.eps_decay}")


def epsilon_schedule(config: QCommonConfig, num_updates: int) -> optax.Schedule:
    """``update -> epsilon``: linear over ``eps_decay * num_updates`` updates, then flat."""
    return optax.linear_schedule(
        config.eps_start, config.eps_finish, max(1, int(config.eps_decay * num_updates))
    )


def make_optimiser(config: QCommonConfig, optimiser_steps: int) -> optax.GradientTransformation:
    """Gradient clipping then (R)Adam, with the learning rate annealed to 0 if asked."""
    lr = learning_rate(config.lr, config.anneal_lr, optimiser_steps)
    step = optax.radam(lr) if config.optimiser == "radam" else optax.adam(lr)
    return optax.chain(optax.clip_by_global_norm(config.max_grad_norm), step)


def build_q_network(config: QCommonConfig, batch: AgentBatch) -> QNetwork:
    """Encoder -> trunk (GRU or MLP) -> Q head, plus the configured mixer.

    Raises:
        ValueError: the env's actions are not discrete.
    """
    if not batch.discrete:
        raise ValueError(
            f"Q-learning needs discrete actions, but {config.env.env_id} has continuous ones; "
            f"use alg=ippo or alg=mappo, or the env's discrete action variant"
        )
    net = config.network
    trunk = trunk_from_config(net)
    return QNetwork(
        encoder=encoder_from_config(net),
        trunk=trunk,
        head=QHead(batch.num_actions),
        mixer=build_mixer(config),
        num_agents=batch.num_agents,
    )


def build_mixer(config: QCommonConfig):
    """The configured mixer (``mixer`` and the ``mixer_*`` fields)."""
    return make_mixer(
        config.mixer,
        config.mixer_embed_dim,
        config.mixer_hypernet_hidden_dim,
        config.mixer_init_scale,
    )


# --------------------------------------------------------------------------- learning
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
) -> tuple[jax.Array, dict[str, jax.Array]]:
    """Mean squared TD error of the mixed Q-values of a sequence.

    ``next_values_t = mix_target(Q_target(s_{t+1}, a*), world_{t+1})`` with ``a*`` the greedy
    available action of the online network (double Q) or of the target network, then n-step or
    TD(lambda) targets (``config.returns``) on the mixer's reward (``team_reward``). Where an
    episode ended at step t and the sequence carries ``terminal_inputs``, ``s_{t+1}`` is the
    real last observation (bootstrapped unless ``terminated``), not the next episode's first.

    Args:
        network: the agents' ``QNetwork`` (mixer included).
        config: ``gamma``, ``returns``, ``n_step``, ``td_lambda``, ``mixer``, ``reward_scale``,
            ``team_reward`` are read.
        params: online parameters (differentiated).
        target_params: target parameters, or ``None`` to use ``stop_gradient(params)`` (PQN).
        sequence: ``QSequence`` ``[T(+1), B, ...]``.
        double_q: select next actions with the online network.
        burn_in: leave out of the loss the first ``burn_in`` steps of a sequence that began
            mid-episode, up to its first episode start (``stale_steps``). The returned
            metrics other than ``loss`` still average every step.

    Returns:
        ``(loss, {"loss", "q_mean", "q_tot_mean", "target_mean"})``: ``q_mean`` averages the
        agents' taken Q-values, ``q_tot_mean`` the mixed values that ``target_mean`` (the mean
        TD target) is regressed against, so the last two show values running away.
    """
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
    if terminal is not None:
        last_step = sequence.done.shape[0] - 1
        # The state after step t (states[t]) is where the real last observation is read from.
        slot_states = lambda x: _take_steps(x, jnp.minimum(sequence.terminal_step, last_step))
        q_target_end = network.q_values_after(
            target_params, slot_states(target_states), terminal.obs
        )  # [K, B, A, n]
        if double_q:
            online = jax.lax.stop_gradient((params, slot_states(states)))
            q_online_end = network.q_values_after(*online, terminal.obs)
        else:
            q_online_end = q_target_end
        ends = (q_target_end, q_online_end, terminal.avail_actions, terminal.world_state)
        slot, has = sequence.bootstrap_steps()
        placed = lambda end: _take_steps(end, slot)  # [T, B, ...]
        has_for = lambda x: has.reshape(has.shape + (1,) * (x.ndim - 2))
        after = tuple(
            jnp.where(has_for(following), placed(end), following)
            for end, following in zip(ends, after)
        )
    next_q_target, next_q_online, next_avail, next_world = after
    next_action = greedy_actions(next_q_online if double_q else next_q_target, next_avail)
    next_q = jnp.take_along_axis(next_q_target, next_action[..., None], axis=-1)[..., 0]
    any_avail = jnp.any(next_avail, axis=-1)
    next_q = jnp.where(any_avail, next_q, 0.0)  # agents with no available action add nothing
    taken = jnp.take_along_axis(q[:-1], sequence.action[..., None], axis=-1)[..., 0]
    q_mixed = network.mix(params, taken, inputs.world_state[:-1])  # [T, B, K]
    next_mixed = network.mix(target_params, next_q, next_world)
    reward = team_reward(config.mixer, sequence.reward, config.team_reward) * config.reward_scale
    width = reward.shape[-1]
    per_value = lambda flags: jnp.broadcast_to(flags[..., None], (*flags.shape, width))
    terminated, done = per_value(sequence.terminated), per_value(sequence.done)
    if config.returns == "n_step":
        returns = targets.n_step_returns(
            reward, next_mixed, terminated, done, config.gamma, config.n_step
        )
    else:
        returns = targets.lambda_returns(
            reward, next_mixed, terminated, done, config.gamma, config.td_lambda
        )
    returns = jax.lax.stop_gradient(returns)
    squared_error = jnp.square(q_mixed - returns)
    if burn_in:
        kept = jnp.broadcast_to(~stale_steps(inputs.first[:-1], burn_in)[..., None], returns.shape)
        loss = jnp.sum(jnp.where(kept, squared_error, 0.0)) / jnp.maximum(jnp.sum(kept), 1)
    else:
        loss = jnp.mean(squared_error)
    return loss, {
        "loss": loss,
        "q_mean": jnp.mean(taken),
        "q_tot_mean": jnp.mean(q_mixed),
        "target_mean": jnp.mean(returns),
    }
