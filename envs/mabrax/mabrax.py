"""Multi-agent MuJoCo on brax: a brax robot whose joints are split between agents (MaMuJoCo).

``MABraxEnv("ant_4x2")`` wraps brax's single-agent ``ant`` (on brax's MJX pipeline by
default): agent ``i`` actuates the joints MaMuJoCo's ``4x2`` factorisation gives it and
observes the joints within ``agent_obsk`` hops of them plus the robot's root
(``factorisation.py``). All agents get brax's reward. An episode ends when brax's robot falls
(``infos["terminated"]``) or after ``episode_length`` steps (``infos["truncated"]``).
"""

from __future__ import annotations

import os
import warnings
from typing import Any, Literal

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from jaxmarl import spaces
from jaxmarl.env import MultiAgentEnv, StepResult, jit_method
from jaxmarl.typing import Actions, Observations

from . import factorisation as fz

# XLA's CPU runtime deadlocked (compiled, then waited forever at 0% CPU) on brax's MJX
# halfcheetah and walker2d stepping 1024 or more envs at once, on a 2-core CPU with jax 0.10.2;
# ant, hopper and humanoid ran. This scheduler flag avoided it (envs/mabrax/README.md).
CPU_DEADLOCK_ROBOTS = ("halfcheetah", "walker2d")
CPU_DEADLOCK_FLAG = "--xla_cpu_enable_concurrency_optimized_scheduler=false"


def warn_if_cpu_deadlock(brax_name: str, backend: str) -> None:
    """Warn where a large batch of this robot can hang XLA on CPU (Python shows a warning once
    per place it comes from)."""
    if brax_name not in CPU_DEADLOCK_ROBOTS or backend != "mjx":
        return
    if CPU_DEADLOCK_FLAG in os.environ.get("XLA_FLAGS", "") or jax.default_backend() != "cpu":
        return
    warnings.warn(
        f"brax's MJX {brax_name} has deadlocked XLA's CPU runtime when 1024 or more envs step "
        f"at once. For large batches on CPU start Python with XLA_FLAGS={CPU_DEADLOCK_FLAG}, or "
        "pass backend='positional' (see envs/mabrax/README.md)",
        RuntimeWarning,
        stacklevel=3,
    )


INSTALL_HINT = "pip install 'jaxmarl[mujoco]'"

try:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from brax import envs as brax_envs
        from brax.envs.base import State as BraxState
except ImportError as error:  # the optional extra is not installed
    raise ImportError(
        f"the multi-agent MuJoCo environments (ant_4x2, halfcheetah_6x1, hopper_3x1, "
        f"humanoid_9|8, walker2d_2x3) need brax and mujoco-mjx: {INSTALL_HINT} "
        f"(missing: {error.name})"
    ) from error

BACKENDS = ("mjx", "generalized", "positional", "spring")
HOMOGENISATION = (None, "max", "concat")


def _is_int(value: Any) -> bool:
    """An integer (Python or NumPy), not a bool, float or None."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


@struct.dataclass
class MABraxState:
    """State of a multi-agent brax episode.

    Attributes:
        brax_state: brax's single-agent state (physics, its observation, reward, done).
        done: ``[]`` bool, whether the episode has ended.
        step: ``[]`` int32, steps taken in the current episode.
    """

    brax_state: BraxState
    done: jax.Array
    step: jax.Array


class MABraxEnv(MultiAgentEnv):
    """A brax robot controlled by several agents, factorised as MaMuJoCo does.

    Args:
        env_name: ``<robot>_<factorisation>`` (``ant_4x2``; ``factorisation.KNOWN`` lists
            them). With both ``agent_obs_mapping`` and ``agent_action_mapping`` given, only
            the robot part is used; with one, the other is the factorisation's.
        episode_length: time limit in steps (truncation).
        action_repeat: physics steps per agent step, with the rewards summed (brax's
            ``action_repeat``).
        auto_reset: must stay ``True``: ``step`` always resets at an episode's end and
            ``step_env`` never does (the jaxmarl contract).
        homogenisation_method: ``None`` (each agent its own sizes), ``"max"`` (observations
            are an agent one-hot followed by the agent's observation zero-padded to the
            largest; actions are padded to the largest and the first entries used) or
            ``"concat"`` (observations are brax's full vector with other agents' entries zero;
            actions are the full vector, of which the agent's entries are used).
        backend: brax's physics pipeline; ``"mjx"`` (the default here) or JaxMARL's
            ``"positional"``, ``"generalized"``, ``"spring"``.
        agent_obs_mapping / agent_action_mapping: agent name -> indices into brax's
            observation / action vector, replacing the factorisation's (either alone, or
            both); the agents must be the same, in the same order, in both.
        agent_obsk: MaMuJoCo's observation distance ``k`` (JaxMARL's fixed value is 1).
        global_categories: MaMuJoCo's global observation categories of the root: ``"qpos"``
            and/or ``"qvel"`` (a name or a tuple of names).
        **kwargs: passed to brax's environment (``ctrl_cost_weight=...``).
            ``exclude_current_positions_from_observation=False`` adds the root's x (and y) to
            brax's observation and so to the world state; the agents' index lists follow it
            (they observe the same quantities).
    """

    observations_from_state = True

    def __init__(
        self,
        env_name: str,
        episode_length: int = 1000,
        action_repeat: int = 1,
        auto_reset: bool = True,
        homogenisation_method: Literal["max", "concat"] | None = None,
        backend: str = "mjx",
        agent_obs_mapping: dict | None = None,
        agent_action_mapping: dict | None = None,
        agent_obsk: int = 1,
        global_categories: tuple[str, ...] = ("qpos", "qvel"),
        **kwargs: Any,
    ):
        given = [
            name
            for name, mapping in (
                ("agent_obs_mapping", agent_obs_mapping),
                ("agent_action_mapping", agent_action_mapping),
            )
            if mapping is not None
        ]
        if len(given) == 2:
            robot = fz.ROBOTS.get(env_name.partition("_")[0])
            if robot is None:
                raise ValueError(f"unknown robot in {env_name!r}; known: {', '.join(fz.ROBOTS)}")
        else:
            try:
                robot, conf = fz.parse(env_name)
            except ValueError as error:
                if not given:
                    raise
                raise ValueError(
                    f"{error}. Only {given[0]} was given, so the other mapping comes from the "
                    "factorisation: name a known one, or pass both agent_obs_mapping and "
                    "agent_action_mapping"
                ) from None
        if isinstance(global_categories, str):
            global_categories = (global_categories,)
        if not isinstance(global_categories, (tuple, list)):
            raise TypeError(
                "global_categories must be a category name or a tuple of them ('qpos', 'qvel'), "
                f"got {global_categories!r}"
            )
        bad = [c for c in global_categories if c not in fz.GLOBAL_CATEGORIES]
        if bad:
            raise ValueError(
                f"global category {bad[0]!r} is not supported; global_categories takes "
                f"{' and/or '.join(map(repr, fz.GLOBAL_CATEGORIES))} (a name or a tuple of "
                f"names), got {global_categories!r}"
            )
        if not kwargs.get("exclude_current_positions_from_observation", True):
            # brax then observes the root's x (and y) too: every entry moves up by as many.
            robot = fz.observing_root_position(robot)
        if not _is_int(agent_obsk) or agent_obsk < 0:
            raise ValueError(
                f"agent_obsk (observation distance) must be an integer >= 0, got {agent_obsk!r}"
            )
        if homogenisation_method not in HOMOGENISATION:
            raise ValueError(
                f"homogenisation_method must be one of {HOMOGENISATION}, "
                f"got {homogenisation_method!r}"
            )
        if backend not in BACKENDS:
            raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
        if not _is_int(episode_length) or episode_length < 1:
            raise ValueError(f"episode_length must be a positive integer, got {episode_length!r}")
        if not _is_int(action_repeat) or action_repeat < 1:
            raise ValueError(f"action_repeat must be a positive integer, got {action_repeat!r}")
        if not auto_reset:
            raise ValueError(
                "auto_reset=False is not supported: step() always resets at an episode's end; "
                "call step_env() for a step without reset"
            )
        if len(given) < 2:
            groups = robot.partitions[conf]
            names = fz.agent_names(len(groups))
        if agent_obs_mapping is None:
            agent_obs_mapping = {
                a: fz.observation_indices(robot, g, agent_obsk, tuple(global_categories))
                for a, g in zip(names, groups)
            }
        if agent_action_mapping is None:
            agent_action_mapping = {a: fz.action_indices(robot, g) for a, g in zip(names, groups)}
        if list(agent_obs_mapping) != list(agent_action_mapping):
            raise ValueError(
                "agent_obs_mapping and agent_action_mapping must name the same agents in the "
                f"same order, got {list(agent_obs_mapping)} and {list(agent_action_mapping)}"
            )

        self.env = brax_envs.get_environment(robot.brax_name, backend=backend, **kwargs)
        super().__init__(len(agent_obs_mapping))
        self.agents = list(agent_obs_mapping)
        self.env_name = env_name
        self.robot = robot
        self.backend = backend
        self.episode_length = self.max_steps = int(episode_length)
        self.action_repeat = int(action_repeat)
        self.auto_reset = True
        self.homogenisation_method = homogenisation_method
        self.agent_obsk = int(agent_obsk)
        self.global_categories = tuple(global_categories)
        self.agent_obs_mapping = {a: np.asarray(v, np.int32) for a, v in agent_obs_mapping.items()}
        self.agent_action_mapping = {
            a: np.asarray(v, np.int32) for a, v in agent_action_mapping.items()
        }
        # From the layout: brax's observation_size property runs an eager (slow) reset.
        self.obs_size = robot.layout.size
        self.action_size = int(self.env.sys.act_size())
        self._check_mappings()

        ctrl = np.asarray(self.env.sys.actuator.ctrl_range, np.float32)
        self.action_low, self.action_high = ctrl[:, 0], ctrl[:, 1]
        self.observation_spaces = {a: self._obs_space(a) for a in self.agents}
        self.action_spaces = {a: self._action_space(a) for a in self.agents}

    # ------------------------------------------------------------------ spaces and mappings
    def _check_mappings(self) -> None:
        for kind, mapping, size in (
            ("observation", self.agent_obs_mapping, self.obs_size),
            ("action", self.agent_action_mapping, self.action_size),
        ):
            for agent, idx in mapping.items():
                if idx.ndim != 1 or idx.size == 0 or idx.min() < 0 or idx.max() >= size:
                    raise ValueError(
                        f"{kind} mapping of {agent} must be a non-empty list of indices in "
                        f"[0, {size}) (brax's {self.robot.brax_name} {kind} size), got {idx}"
                    )
        used = np.concatenate(list(self.agent_action_mapping.values()))
        if len(set(used.tolist())) != used.size:
            raise ValueError("agent_action_mapping gives one actuator to several agents")

    def _obs_space(self, agent: str) -> spaces.Box:
        return spaces.Box(-np.inf, np.inf, (self._obs_width(agent),), jnp.float32)

    def _obs_width(self, agent: str) -> int:
        if self.homogenisation_method == "max":
            return self.num_agents + max(v.size for v in self.agent_obs_mapping.values())
        if self.homogenisation_method == "concat":
            return self.obs_size
        return int(self.agent_obs_mapping[agent].size)

    def _action_space(self, agent: str) -> spaces.Box:
        idx = self.agent_action_mapping[agent]
        if self.homogenisation_method == "concat":
            return spaces.Box(self.action_low, self.action_high, (self.action_size,))
        low, high = self.action_low[idx], self.action_high[idx]
        if self.homogenisation_method == "max":
            width = max(v.size for v in self.agent_action_mapping.values())
            # Padding entries are ignored; they share the agent's first bounds.
            low = np.concatenate([low, np.full(width - idx.size, low.min())])
            high = np.concatenate([high, np.full(width - idx.size, high.max())])
        return spaces.Box(low, high, (low.size,))

    # ------------------------------------------------------------------ contract
    @jit_method
    def reset(self, key: jax.Array) -> tuple[Observations, MABraxState]:
        warn_if_cpu_deadlock(self.robot.brax_name, self.backend)  # at trace time only
        brax_state = self.env.reset(key)
        state = MABraxState(
            brax_state=brax_state,
            done=jnp.zeros((), jnp.bool_),
            step=jnp.zeros((), jnp.int32),
        )
        return self.get_obs(state), state

    def step_env(self, key: jax.Array, state: MABraxState, actions: Actions) -> StepResult:
        del key  # brax's dynamics are deterministic
        action = self.global_action(actions)
        # brax's step updates its state's metrics dict in place: hand it copies, so that an
        # eager (unjitted) step leaves the caller's state untouched.
        brax_state = state.brax_state.replace(
            metrics=dict(state.brax_state.metrics), info=dict(state.brax_state.info)
        )
        reward = jnp.zeros((), jnp.float32)
        fell = jnp.zeros((), jnp.bool_)
        for _ in range(self.action_repeat):
            brax_state = self.env.step(brax_state, action)
            reward = reward + brax_state.reward
            fell = fell | (brax_state.done > 0)
        step = state.step + 1
        done = fell | (step >= self.max_steps)
        next_state = MABraxState(brax_state=brax_state, done=done, step=step)
        rewards = {a: reward for a in self.agents}
        dones = {a: done for a in self.agents}
        dones["__all__"] = done
        return self.get_obs(next_state), next_state, rewards, dones, {"terminated": fell}

    def get_obs(self, state: MABraxState) -> Observations:
        return self.local_observations(state.brax_state.obs)

    def get_world_state(self, state: MABraxState) -> jax.Array:
        """brax's full single-agent observation, the input of a centralised critic."""
        return state.brax_state.obs

    # ------------------------------------------------------------------ mappings
    def global_action(self, actions: Actions) -> jax.Array:
        """brax's action vector from the agents' actions, clipped to the actuator bounds."""
        full = jnp.zeros(self.action_size, jnp.float32)
        for agent in self.agents:
            idx = self.agent_action_mapping[agent]
            own = jnp.asarray(actions[agent], jnp.float32)
            if self.homogenisation_method == "max":
                own = own[: idx.size]
            elif self.homogenisation_method == "concat":
                own = own[idx]
            full = full.at[idx].set(own)
        return jnp.clip(full, self.action_low, self.action_high)

    def local_observations(self, global_obs: jax.Array) -> Observations:
        """Each agent's observation taken from brax's observation vector."""
        obs = {}
        for i, agent in enumerate(self.agents):
            idx = self.agent_obs_mapping[agent]
            own = global_obs[idx].astype(jnp.float32)
            if self.homogenisation_method == "max":
                width = self._obs_width(agent) - self.num_agents
                one_hot = jax.nn.one_hot(i, self.num_agents, dtype=jnp.float32)
                own = jnp.concatenate([one_hot, own, jnp.zeros(width - idx.size, jnp.float32)])
            elif self.homogenisation_method == "concat":
                own = jnp.zeros(self.obs_size, jnp.float32).at[idx].set(own)
            obs[agent] = own
        return obs

    @property
    def sys(self):
        """brax's physical system of the robot."""
        return self.env.sys

    @property
    def name(self) -> str:
        return self.env_name


class Ant(MABraxEnv):
    def __init__(self, **kwargs: Any):
        super().__init__("ant_4x2", **kwargs)


class HalfCheetah(MABraxEnv):
    def __init__(self, **kwargs: Any):
        super().__init__("halfcheetah_6x1", **kwargs)


class Hopper(MABraxEnv):
    def __init__(self, **kwargs: Any):
        super().__init__("hopper_3x1", **kwargs)


class Humanoid(MABraxEnv):
    def __init__(self, **kwargs: Any):
        super().__init__("humanoid_9|8", **kwargs)


class Walker2d(MABraxEnv):
    def __init__(self, **kwargs: Any):
        super().__init__("walker2d_2x3", **kwargs)
