"""The environment contract every jaxmarl environment implements.

Compatible with JaxMARL's ``MultiAgentEnv``: ``reset(key) -> (obs, state)`` and
``step(key, state, actions, reset_state=None) -> (obs, state, rewards, dones, infos)`` with
observations, actions, rewards and dones as dicts keyed by agent name, ``dones["__all__"]``
ending the episode and ``step`` resetting automatically. What this contract adds:

* ``infos["terminated"]`` and ``infos["truncated"]`` (``bool`` scalars, per environment) on every
  step, so learners bootstrap through time limits and not through real terminations. An env
  that can end an episode for a reason other than its time limit reports
  ``infos["terminated"]`` from ``step_env``; otherwise the base class derives both from
  ``state.step >= self.max_steps``. ``dones["__all__"] == terminated | truncated`` always.
* ``step(..., with_terminal_obs=True)`` puts the pre-reset observations and state of the step
  in ``infos["terminal_obs"]`` and ``infos["terminal_state"]`` (opt-in because it doubles
  observation memory), so learners can bootstrap truncated episodes from the true last state.
* Actions are checked while tracing (before anything compiles): missing or extra agents, a
  wrong shape or a wrong dtype kind raise an error naming the agent, the expected and the given.
* Non-finite continuous actions are the no-op. ``step`` replaces the action of an agent whose
  ``Box`` action has any NaN or infinite entry by ``noop_action(agent)`` before ``step_env``
  sees it (a clip to the bounds does not catch NaN, and one NaN force would make positions,
  observations and rewards NaN until the episode resets). Finite actions pass unchanged, so the
  normal path is one ``jnp.where`` per agent. To find where non-finite actions come from, run
  ``checked_step(env)``: the same step under ``jax.experimental.checkify`` with a check that
  every continuous action is finite, which returns an error to ``.throw()``.

Subclasses override ``reset``, ``step_env``, ``get_obs``, ``observation_space`` /
``action_space`` (or fill ``observation_spaces`` / ``action_spaces``) and, where it applies,
``get_avail_actions``, ``get_world_state`` and ``noop_action``. Auto-reset and the handling of
non-finite actions live here only.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from functools import partial, update_wrapper, wraps
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct
from jax.experimental import checkify

from jaxmarl import spaces
from jaxmarl.typing import Actions, AvailActions, Dones, Infos, Observations, Rewards


def jit_method(method: Callable | None = None, **jit_kwargs: Any) -> Any:
    """Decorator: a method compiled with ``jax.jit``, with compiled programs owned by the instance.

    Use it where JaxMARL writes ``@partial(jax.jit, static_argnums=(0,))``: ``env.step(...)``
    compiles once per env instance and is traced into an enclosing ``jit`` or ``vmap`` the same
    way. The difference: with ``self`` as a static argument, JAX's caches hold every env ever
    called, and its compiled programs, until ``jax.clear_caches()``; a process that makes an env
    per layout, map or sweep point then grows without bound, and XLA:CPU segfaults at the
    kernel's limit of memory mappings. Here each instance keeps its own ``jax.jit`` of the
    bound method, freed with the instance.

    ``jit_kwargs`` go to ``jax.jit`` (e.g. ``static_argnames``; argument positions exclude
    ``self``). On the class, ``Env.step(env, ...)`` calls ``env``'s compiled step.
    """
    if method is None:
        return partial(jit_method, **jit_kwargs)
    return _JitMethod(method, jit_kwargs)


class _JitMethod:
    def __init__(self, method: Callable, jit_kwargs: dict[str, Any]) -> None:
        self._method = method
        self._jit_kwargs = jit_kwargs
        self._attr = f"_jit_method.{method.__qualname__}"
        update_wrapper(self, method)

    def __set_name__(self, owner: type, name: str) -> None:
        # A subclass's method of the same name gets an entry of its own.
        self._attr = f"_jit_method.{owner.__qualname__}.{name}"

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        if instance is None:
            return self
        jitted = instance.__dict__.get(self._attr)
        if jitted is None:
            bound = partial(self._method, instance)
            jitted = instance.__dict__[self._attr] = jax.jit(bound, **self._jit_kwargs)
        return jitted

    def __call__(self, instance: Any, *args: Any, **kwargs: Any) -> Any:
        return self.__get__(instance)(*args, **kwargs)


@struct.dataclass
class State:
    """Smallest environment state: the episode flag and the step counter.

    Attributes:
        done: ``[]`` or ``[num_agents]`` bool, whether the episode has ended.
        step: ``[]`` int32, steps taken in the current episode.
    """

    done: jax.Array
    step: jax.Array


StepResult = tuple[Observations, Any, Rewards, Dones, Infos]


class MultiAgentEnv:
    """Base class of all jaxmarl environments (pure functions of a key and a state).

    Environment objects are immutable: they hold static configuration only (agent names,
    spaces, sizes, constants); everything that changes lives in the state pytree.

    Attributes:
        num_agents: number of agents (a fixed maximum where agents can die).
        agents: agent names, in the order used when agents are stacked on an axis.
        max_steps: episode time limit in steps, or ``None`` for none.
        observation_spaces / action_spaces: per-agent spaces keyed by agent name.
        observations_from_state: set ``True`` in an env whose ``reset`` and ``step_env``
            return exactly ``get_obs(state)`` for the state they return; ``step`` then
            computes the next observations once, from the state it keeps, instead of for both
            the stepped and the reset state (observations are often most of a step's work).
            The contract suite checks the claim for every registered env that makes it.
    """

    max_steps: int | None = None
    observations_from_state: bool = False

    def __init__(self, num_agents: int) -> None:
        self.num_agents = num_agents
        self.agents = [f"agent_{i}" for i in range(num_agents)]
        self.observation_spaces: dict[str, spaces.Space] = {}
        self.action_spaces: dict[str, spaces.Space] = {}

    def __getstate__(self) -> dict[str, Any]:
        # copy.copy, deepcopy and pickle leave out jit_method's compiled methods, which are
        # bound to this instance: a copy compiles its own.
        return {k: v for k, v in self.__dict__.items() if not k.startswith("_jit_method.")}

    # ----------------------------------------------------------------- to override
    @jit_method
    def reset(self, key: jax.Array) -> tuple[Observations, Any]:
        """Start an episode: ``key -> (obs, state)``."""
        raise NotImplementedError

    def step_env(self, key: jax.Array, state: Any, actions: Actions) -> StepResult:
        """One transition without auto-reset; ``dones`` include the time limit."""
        raise NotImplementedError

    def get_obs(self, state: Any) -> Observations:
        """Observations of every agent for ``state``."""
        raise NotImplementedError

    @jit_method
    def get_avail_actions(self, state: Any) -> AvailActions:
        """Available-action masks per agent (``bool``); the default allows every action."""
        return {agent: _all_actions_mask(self.action_space(agent)) for agent in self.agents}

    def get_world_state(self, state: Any) -> jax.Array:
        """Input of a centralised critic; default: every agent's flat observation, concatenated."""
        obs = self.get_obs(state)
        return jnp.concatenate([jnp.ravel(obs[agent]) for agent in self.agents])

    def observation_space(self, agent: str | None = None) -> spaces.Space:
        """``agent``'s observation space; without an agent, the one every agent shares (as
        JaxMARL's Overcooked scripts call it)."""
        return _space_of(self.observation_spaces, agent, "observation_space")

    def action_space(self, agent: str | None = None) -> spaces.Space:
        """``agent``'s action space; without an agent, the one every agent shares."""
        return _space_of(self.action_spaces, agent, "action_space")

    def noop_action(self, agent: str) -> jax.Array:
        """The action that does nothing, used in place of a non-finite continuous action.

        Default for a ``Box``: zeros, clipped into the bounds. Override where zero is not the
        no-op (SMAX's continuous actions).
        """
        space = self.action_space(agent)
        zeros = jnp.zeros(space.shape, space.dtype)
        return jnp.clip(zeros, space.low, space.high).astype(space.dtype)

    # ----------------------------------------------------------------- provided
    @jit_method(static_argnames=("with_terminal_obs", "check_finite_actions"))
    def step(
        self,
        key: jax.Array,
        state: Any,
        actions: Actions,
        reset_state: Any | None = None,
        *,
        with_terminal_obs: bool = False,
        check_finite_actions: bool = False,
    ) -> StepResult:
        """Step every agent, resetting the episode when ``dones["__all__"]``.

        Args:
            key: PRNG key; split into a step key and a reset key (JaxMARL's order).
            state: current state.
            actions: one action per agent, keyed by agent name.
            reset_state: state to restart from when the episode ends (default: a fresh
                ``reset``).
            with_terminal_obs: also return the pre-reset observations and state in
                ``infos["terminal_obs"]`` and ``infos["terminal_state"]``.
            check_finite_actions: also add a ``checkify.check`` that every continuous action is
                finite; only valid under ``jax.experimental.checkify.checkify`` (use
                ``checked_step(env)``). Non-finite actions are the no-op either way.

        Returns:
            ``(obs, state, rewards, dones, infos)``; on the last step of an episode ``obs`` and
            ``state`` already belong to the next episode while ``rewards`` and ``dones`` belong
            to the finished one.
        """
        actions = self.finite_actions(self.check_actions(actions), check=check_finite_actions)
        step_key, reset_key = jax.random.split(key)
        obs_step, state_step, rewards, dones, infos = self.step_env(step_key, state, actions)
        infos = dict(infos)
        terminated, truncated = self._episode_end(state_step, dones, infos)
        infos["terminated"] = terminated
        infos["truncated"] = truncated

        if reset_state is None:
            obs_reset, state_reset = self.reset(reset_key)
        else:
            state_reset = reset_state
            obs_reset = self.get_obs(reset_state)

        done = dones["__all__"]
        # Select rather than cond: under vmap a cond becomes a select anyway.
        next_state = jax.tree.map(lambda r, s: jnp.where(done, r, s), state_reset, state_step)
        if self.observations_from_state:
            # The stepped and reset observations above are then unused (unless asked for as
            # terminal observations) and XLA drops their computation.
            next_obs = self.get_obs(next_state)
        else:
            next_obs = jax.tree.map(lambda r, s: jnp.where(done, r, s), obs_reset, obs_step)
        if with_terminal_obs:
            infos["terminal_obs"] = obs_step
            infos["terminal_state"] = state_step
        return next_obs, next_state, rewards, dones, infos

    def _episode_end(self, state: Any, dones: Dones, infos: Infos) -> tuple[jax.Array, jax.Array]:
        done = jnp.asarray(dones["__all__"], dtype=jnp.bool_)
        if "terminated" in infos:
            terminated = jnp.asarray(infos["terminated"], dtype=jnp.bool_) & done
            return terminated, done & ~terminated
        if self.max_steps is None or not hasattr(state, "step"):
            return done, jnp.zeros_like(done)
        time_up = state.step >= self.max_steps
        return done & ~time_up, done & time_up

    def finite_actions(self, actions: Actions, *, check: bool = False) -> Actions:
        """``actions`` with every non-finite continuous action replaced by the no-op.

        An agent's ``Box`` action with any NaN or infinite entry becomes
        ``noop_action(agent)`` as a whole (a half-NaN action has no meaning); discrete and
        structured actions pass unchanged. ``step`` calls this; call it yourself before
        ``step_env`` if you feed ``step_env`` actions that may not be finite.

        Args:
            actions: one action per agent (already checked by ``check_actions``).
            check: also ``checkify.check`` that the actions were finite (only valid under
                ``jax.experimental.checkify.checkify``).
        """
        out = dict(actions)
        for agent in self.agents:
            if not isinstance(self.action_space(agent), spaces.Box):
                continue
            action = jnp.asarray(actions[agent])
            finite = jnp.all(jnp.isfinite(action))
            if check:
                checkify.check(
                    finite,
                    f"{self.name}.step: non-finite continuous action for agent '{agent}': "
                    "{action}",
                    action=action,
                )
            noop = self.noop_action(agent).astype(action.dtype)
            out[agent] = jnp.where(finite, action, noop)
        return out

    def check_actions(self, actions: Actions) -> Actions:
        """Raise a clear error for actions that do not fit the action spaces; return them as
        the env takes them.

        Runs on shapes and dtypes only, so it works on tracers and costs nothing at run time.
        Out-of-range discrete values cannot be seen while tracing; each env documents what
        it does with them. A ``Discrete`` action of shape ``(1,)`` is taken as its one element:
        JaxMARL's baseline scripts ``unbatchify`` actions to ``[num_envs, 1]`` per agent, and
        JaxMARL's envs accept that.

        Raises:
            TypeError: ``actions`` is not a mapping, or an action has the wrong dtype kind.
            ValueError: agents are missing or unknown, or an action has the wrong shape.
        """
        if not isinstance(actions, Mapping):
            raise TypeError(
                f"{self.name}.step expects actions as a dict keyed by agent name "
                f"{self.agents}, got {type(actions).__name__}"
            )
        missing = [a for a in self.agents if a not in actions]
        extra = [a for a in actions if a not in self.agents]
        if missing or extra:
            raise ValueError(
                f"{self.name}.step: actions must have exactly one entry per agent "
                f"{self.agents}; missing {missing}, unexpected {extra}"
            )
        taken = {}
        for agent in self.agents:
            space, action = self.action_space(agent), actions[agent]
            if isinstance(space, spaces.Discrete) and np.shape(action) == (1,):
                action = jnp.reshape(action, ())
            _check_action(self.name, agent, space, action)
            taken[agent] = action
        return taken

    @property
    def name(self) -> str:
        """Environment name (the class name)."""
        return type(self).__name__

    @property
    def agent_classes(self) -> dict[str, list[str]]:
        """Agents grouped by role: a name up to its last ``_`` (``adversary_0``: ``adversary``)."""
        classes: dict[str, list[str]] = {}
        for agent in self.agents:
            role = agent.rsplit("_", 1)[0] if "_" in agent else agent
            classes.setdefault(role, []).append(agent)
        return classes


def _space_of(by_agent: Mapping[str, spaces.Space], agent: str | None, method: str):
    if agent is not None:
        return by_agent[agent]
    distinct = {repr(space) for space in by_agent.values()}
    if len(distinct) != 1:
        raise ValueError(
            f"{method}() without an agent needs one space shared by every agent, but they "
            f"differ: {dict(by_agent)}; call {method}(agent)"
        )
    return next(iter(by_agent.values()))


def _all_actions_mask(space: spaces.Space) -> jax.Array:
    if isinstance(space, spaces.Discrete):
        return jnp.ones((space.n,), dtype=jnp.bool_)
    if isinstance(space, spaces.MultiDiscrete):
        return jnp.ones((int(np.sum(space.nvec)),), dtype=jnp.bool_)
    return jnp.ones(space.shape, dtype=jnp.bool_)


def _check_action(env_name: str, agent: str, space: spaces.Space, action: Any) -> None:
    if isinstance(space, (spaces.Dict, spaces.Tuple)):
        return  # structured action spaces check themselves in the env
    shape = tuple(np.shape(action))
    dtype = jnp.result_type(action)
    expected = tuple(space.shape)
    if shape != expected:
        raise ValueError(
            f"{env_name}.step: action for agent '{agent}' has shape {shape}, expected "
            f"{expected} for {space!r}; pass one action per agent and jax.vmap the env for "
            f"a batch of environments"
        )
    integer = isinstance(space, (spaces.Discrete, spaces.MultiDiscrete))
    if integer and not jnp.issubdtype(dtype, jnp.integer):
        raise TypeError(
            f"{env_name}.step: action for agent '{agent}' has dtype {dtype}, expected an "
            f"integer dtype for {space!r}; cast with .astype(jnp.int32)"
        )
    if not integer and not jnp.issubdtype(dtype, jnp.floating):
        raise TypeError(
            f"{env_name}.step: action for agent '{agent}' has dtype {dtype}, expected a "
            f"floating dtype for {space!r}; cast with .astype(jnp.float32)"
        )


def one_pass_step(fast_step: Callable[..., StepResult]) -> Callable[..., StepResult]:
    """Decorator: an env's ``step`` whose usual case, ``fast_step(self, key, state, actions)``,
    is computed in one pass.

    The base ``step`` runs ``step_env`` and ``reset`` and selects between them, so under
    ``vmap`` both always run. An env that can do better (draw only the random numbers that
    are kept, say) writes ``fast_step``: it gets checked, finite actions and must return
    exactly what ``MultiAgentEnv.step`` returns for the same arguments (test that it does).
    With a ``reset_state`` or ``with_terminal_obs=True`` the step is the base class's.
    """

    @wraps(fast_step)
    def step(self, key, state, actions, reset_state=None, **options) -> StepResult:
        # ``options``: MultiAgentEnv.step's keywords; unknown ones go there too, to be refused.
        known = options.keys() <= {"with_terminal_obs", "check_finite_actions"}
        if reset_state is not None or options.get("with_terminal_obs") or not known:
            return MultiAgentEnv.step(self, key, state, actions, reset_state, **options)
        actions = self.check_actions(actions)
        check = options.get("check_finite_actions", False)
        return fast_step(self, key, state, self.finite_actions(actions, check=check))

    step.__signature__ = inspect.signature(MultiAgentEnv.step)  # what callers may pass
    return step


def checked_step(env: MultiAgentEnv, **step_kwargs: Any):
    """``env.step`` under ``jax.experimental.checkify`` with the finite-action check on.

    Returns a jitted ``(key, state, actions, reset_state=None) -> (error, step result)``; the
    step result is what ``env.step`` returns (non-finite actions already replaced by the
    no-op) and ``error.throw()`` raises ``JaxRuntimeError`` naming the agent when any
    continuous action was not finite. Works under ``vmap``. For debugging: keep ``env.step``
    in training code.

    >>> err, (obs, state, rewards, dones, infos) = checked_step(env)(key, state, actions)
    >>> err.throw()
    """

    def step(key, state, actions, reset_state=None):
        return env.step(key, state, actions, reset_state, check_finite_actions=True, **step_kwargs)

    return jax.jit(checkify.checkify(step, errors=checkify.user_checks))


def random_actions(env: MultiAgentEnv, key: jax.Array, state: Any) -> Actions:
    """One uniformly random valid action per agent (discrete: among the available actions).

    Works under ``jit`` and ``vmap``; keys are split per agent.
    """
    avail = env.get_avail_actions(state)
    keys = jax.random.split(key, env.num_agents)
    actions = {}
    for agent_key, agent in zip(keys, env.agents):
        space = env.action_space(agent)
        if isinstance(space, spaces.Discrete):
            logits = jnp.where(avail[agent], 0.0, -jnp.inf)
            actions[agent] = jax.random.categorical(agent_key, logits).astype(space.dtype)
        else:
            actions[agent] = space.sample(agent_key)
    return actions
