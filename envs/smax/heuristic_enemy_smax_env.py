"""SMAX with only the allies controlled: the enemy team is scripted or driven by a policy.

``HeuristicEnemySMAX`` (the scripted policy of ``heuristic_enemy``) and
``LearnedPolicyEnemySMAX`` (any ``policy.apply(params, enemy_obs) -> (distribution, _)``) share
:class:`EnemySMAX`: agents are ``ally_0 ..`` only; each step the enemy actions are chosen from
the state before the step, then both teams act at once, exactly as in ``SMAX``.
"""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any

import distrax
import jax
import jax.numpy as jnp
from flax import struct

from jaxmarl.env import jit_method
from jaxmarl.envs.smax.heuristic_enemy import (
    _check_mode,
    get_heuristic_policy_initial_state,
    team_heuristic_actions,
)
from jaxmarl.envs.smax.smax_env import DISCRETE_ACT, SMAX, STOP_ACTION, State
from jaxmarl.typing import Actions, Dones, Infos, Observations, Rewards


@struct.dataclass
class EnemyState(State):
    """:class:`~jaxmarl.envs.smax.smax_env.State` plus the enemy policy's state.

    Attributes:
        enemy_policy_state: pytree; the heuristic's per-unit memory (leading axis
            ``num_enemies``) or the learned policy's parameters.
    """

    enemy_policy_state: Any

    @property
    def state(self) -> EnemyState:
        """The SMAX state itself (JaxMARL nests it as ``state.state``; both spellings work)."""
        return self


def _with_smax_keywords(cls: type) -> type:
    """Give ``cls`` a signature listing its own keywords and SMAX's, so ``jaxmarl.make``
    rejects misspelled keywords with a did-you-mean instead of accepting ``**env_kwargs``."""
    own = [
        p
        for p in inspect.signature(cls.__init__).parameters.values()
        if p.kind is p.POSITIONAL_OR_KEYWORD and p.name != "self"
    ]
    names = {p.name for p in own}
    smax = [
        p.replace(kind=p.KEYWORD_ONLY)
        for p in inspect.signature(SMAX.__init__).parameters.values()
        if p.name not in names and p.name != "self"
    ]
    cls.__signature__ = inspect.Signature(own + smax)
    return cls


class EnemySMAX(SMAX):
    """Base of the single-team SMAX envs; subclasses choose the enemy actions.

    Agents, observations, actions, rewards and dones are the allies' (see :class:`SMAX`);
    ``enemy_agents`` / ``all_agents`` name the rest. Subclasses implement
    ``initial_enemy_policy_state(key, state)`` and ``enemy_actions(key, state)``.
    """

    def __init__(self, **env_kwargs: Any) -> None:
        super().__init__(**env_kwargs)
        self.all_agents = list(self.agents)
        self.enemy_agents = self.all_agents[self.num_allies :]
        self.agents = self.all_agents[: self.num_allies]
        self.num_agents = self.num_allies
        self.observation_spaces = {a: self.observation_spaces[a] for a in self.agents}
        self.action_spaces = {a: self.action_spaces[a] for a in self.agents}

    def initial_enemy_policy_state(self, key: jax.Array, state: State) -> Any:
        raise NotImplementedError

    def enemy_actions(self, key: jax.Array, state: EnemyState) -> tuple[jax.Array, Any]:
        """``([num_enemies] int32 discrete actions, new enemy policy state)``."""
        raise NotImplementedError

    @jit_method
    def reset(self, key: jax.Array) -> tuple[Observations, EnemyState]:
        reset_key, policy_key = jax.random.split(key)
        base = self.initial_state(reset_key)
        fields = {f.name: getattr(base, f.name) for f in dataclasses.fields(base)}
        state = EnemyState(
            **fields, enemy_policy_state=self.initial_enemy_policy_state(policy_key, base)
        )
        return self.get_obs(state), state

    def step_env(
        self, key: jax.Array, state: EnemyState, actions: Actions
    ) -> tuple[Observations, EnemyState, Rewards, Dones, Infos]:
        enemy_key, decode_key, world_key = jax.random.split(key, 3)
        enemy_actions, policy_state = self.enemy_actions(enemy_key, state)
        allies = jnp.stack([jnp.asarray(actions[agent]) for agent in self.agents])
        if self.action_type == DISCRETE_ACT:
            padding = jnp.full((self.num_enemies,), STOP_ACTION, dtype=allies.dtype)
        else:
            padding = jnp.zeros((self.num_enemies, allies.shape[-1]), dtype=allies.dtype)
        ally_move, ally_attack = self.decode_actions(
            decode_key, state, jnp.concatenate([allies, padding])
        )
        scripted = jnp.concatenate(
            [jnp.full((self.num_allies,), STOP_ACTION, jnp.int32), enemy_actions]
        )
        enemy_move, enemy_attack = self.decode_discrete_actions(scripted)
        movement = jnp.where(self._is_ally[:, None], ally_move, enemy_move)
        attack = jnp.where(self._is_ally, ally_attack, enemy_attack)
        obs, next_state, rewards, dones, infos = self.step_decoded(
            world_key, state, movement, attack
        )
        return obs, next_state.replace(enemy_policy_state=policy_state), rewards, dones, infos

    def get_enemy_obs(self, state: State) -> jax.Array:
        """``[num_enemies, D]`` unit-list observations of the enemy units."""
        return self._unit_list_obs(state)[self.num_allies :]


@_with_smax_keywords
class HeuristicEnemySMAX(EnemySMAX):
    """SMAX against JaxMARL's scripted enemy (see ``heuristic_enemy``).

    Args:
        enemy_shoots: the scripted units attack (otherwise they only move).
        attack_mode: ``"closest"`` or ``"random"`` target among those in range.
        **env_kwargs: :class:`SMAX`'s keywords (``scenario="3m"``, ...).

    Example::

        env = HeuristicEnemySMAX(scenario="3m")
        obs, state = env.reset(jax.random.key(0))
        obs, state, rewards, dones, infos = env.step(
            jax.random.key(1), state, {a: jnp.int32(1) for a in env.agents})
    """

    def __init__(
        self, enemy_shoots: bool = True, attack_mode: str = "closest", **env_kwargs: Any
    ) -> None:
        super().__init__(**env_kwargs)
        self.enemy_shoots = bool(enemy_shoots)
        self.attack_mode = _check_mode(attack_mode)

    def initial_enemy_policy_state(self, key: jax.Array, state: State) -> Any:
        single = get_heuristic_policy_initial_state()
        return jax.tree.map(lambda x: jnp.stack([x] * self.num_enemies), single)

    def enemy_actions(self, key: jax.Array, state: EnemyState) -> tuple[jax.Array, Any]:
        return team_heuristic_actions(
            self,
            key,
            state.enemy_policy_state,
            state,
            team=1,
            shoot=self.enemy_shoots,
            attack_mode=self.attack_mode,
        )


class UniformRandomPolicy:
    """Default enemy policy of ``LearnedPolicyEnemySMAX``: uniform over all actions.

    ``apply(params, obs [E, D]) -> (distrax.Categorical [E], None)``; ``params`` are unused.
    """

    def __init__(self, num_actions: int) -> None:
        self.num_actions = int(num_actions)

    def apply(self, params: Any, obs: jax.Array) -> tuple[distrax.Categorical, None]:
        logits = jnp.zeros((*obs.shape[:-1], self.num_actions), dtype=jnp.float32)
        return distrax.Categorical(logits=logits), None


@_with_smax_keywords
class LearnedPolicyEnemySMAX(EnemySMAX):
    """SMAX whose enemies sample from ``policy.apply(params, enemy_obs)``.

    ``enemy_obs`` is ``[num_enemies, D]`` unit-list observations (as in JaxMARL, whatever
    ``observation_type`` is); ``apply`` returns ``(distribution, anything)`` and
    ``distribution.sample(seed=key)`` must give ``num_enemies`` discrete actions. The
    parameters live in ``state.enemy_policy_state``, so they can be swapped between episodes
    (e.g. for self-play) without recompiling.

    Args:
        policy: an object with ``apply`` (a flax module works). ``None``: uniformly random
            enemies (:class:`UniformRandomPolicy`), so the id can be built without arguments.
        params: its parameters (``None``: an empty dict).
        **env_kwargs: :class:`SMAX`'s keywords.
    """

    def __init__(self, policy: Any = None, params: Any = None, **env_kwargs: Any) -> None:
        super().__init__(**env_kwargs)
        self.policy = UniformRandomPolicy(self.num_enemy_actions) if policy is None else policy
        self.params = {} if params is None else params

    def initial_enemy_policy_state(self, key: jax.Array, state: State) -> Any:
        return self.params

    def enemy_actions(self, key: jax.Array, state: EnemyState) -> tuple[jax.Array, Any]:
        params = state.enemy_policy_state
        distribution, _ = self.policy.apply(params, self.get_enemy_obs(state))
        actions = jnp.reshape(distribution.sample(seed=key), (self.num_enemies,))
        return actions.astype(jnp.int32), params


__all__ = [
    "EnemySMAX",
    "EnemyState",
    "HeuristicEnemySMAX",
    "LearnedPolicyEnemySMAX",
    "UniformRandomPolicy",
]
