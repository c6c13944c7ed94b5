"""The reference side of the MPE parity tests: PettingZoo's MPE (``mpe2``) in plain Python.

No JAX here, so a worker process can compute the reference rollouts while the test process
compiles our side (``test_mpe_parity.py`` does that). Arrays come back as numpy,
``[episode, step, ...]``, agents in *our* env's order (``agent_order``), entities agents then
landmarks (mpe2's landmark order, e.g. obstacles, food, forests).
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

MAX_CYCLES = 25


@dataclasses.dataclass(frozen=True)
class Scenario:
    """One MPE scenario and its mpe2 counterpart.

    Attributes:
        env_id: our registry id.
        mpe2_module: module under ``mpe2`` providing ``parallel_env``.
        mpe2_kwargs: constructor keywords of the mpe2 env that match our defaults.
        goal: reads the scenario's ``goal`` (our ``State.goal`` layout, int32) from the mpe2
            world, or ``None`` for scenarios without one.
    """

    env_id: str
    mpe2_module: str
    mpe2_kwargs: dict[str, Any]
    goal: Callable[[Any], np.ndarray] | None = None

    @property
    def name(self) -> str:
        return self.env_id.removeprefix("MPE_")


def _landmark_index(world: Any, landmark: Any) -> int:
    return next(i for i, lm in enumerate(world.landmarks) if lm is landmark)


def _agent_by_name(world: Any, name: str) -> Any:
    return next(a for a in world.agents if a.name == name)


def _goal_shared(world: Any) -> np.ndarray:
    """simple_adversary / simple_push: the landmark every agent's ``goal_a`` points at."""
    return np.int32(_landmark_index(world, world.agents[0].goal_a))


def _goal_speaker_listener(world: Any) -> np.ndarray:
    """The landmark the speaker must guide the listener to (``speaker.goal_b``)."""
    return np.int32(_landmark_index(world, world.agents[0].goal_b))


def _goal_reference(world: Any) -> np.ndarray:
    """``goal[j]``: the landmark agent ``j`` must reach, i.e. its partner's ``goal_b``."""
    agent_0, agent_1 = world.agents
    return np.array(
        [_landmark_index(world, agent_1.goal_b), _landmark_index(world, agent_0.goal_b)],
        dtype=np.int32,
    )


def _goal_crypto(world: Any) -> np.ndarray:
    """``[goal landmark, key landmark]``: the code alice must transmit, and the private key."""
    alice = _agent_by_name(world, "alice_0")
    goal = _landmark_index(world, alice.goal_a)
    key = next(i for i, lm in enumerate(world.landmarks) if np.array_equal(lm.color, alice.key))
    return np.array([goal, key], dtype=np.int32)


SCENARIOS = [
    Scenario("MPE_simple_v3", "simple_v3", {}),
    Scenario("MPE_simple_spread_v3", "simple_spread_v3", {"N": 3, "local_ratio": 0.5}),
    Scenario(
        "MPE_simple_tag_v3",
        "simple_tag_v3",
        {"num_good": 1, "num_adversaries": 3, "num_obstacles": 2},
    ),
    Scenario("MPE_simple_adversary_v3", "simple_adversary_v3", {"N": 2}, goal=_goal_shared),
    Scenario("MPE_simple_push_v3", "simple_push_v3", {}, goal=_goal_shared),
    Scenario(
        "MPE_simple_reference_v3",
        "simple_reference_v3",
        {"local_ratio": 0.5},
        goal=_goal_reference,
    ),
    Scenario(
        "MPE_simple_speaker_listener_v4",
        "simple_speaker_listener_v4",
        {},
        goal=_goal_speaker_listener,
    ),
    Scenario("MPE_simple_crypto_v3", "simple_crypto_v3", {}, goal=_goal_crypto),
    Scenario(
        "MPE_simple_world_comm_v3",
        "simple_world_comm_v3",
        {"num_good": 2, "num_adversaries": 4, "num_obstacles": 1, "num_food": 2, "num_forests": 2},
    ),
]
SCENARIOS_BY_NAME = {s.name: s for s in SCENARIOS}


def make_mpe2(scenario: Scenario, continuous: bool) -> Any:
    """mpe2's ``parallel_env`` for ``scenario`` (``max_cycles = 25``)."""
    module = importlib.import_module(f"mpe2.{scenario.mpe2_module}")
    env = module.parallel_env(
        max_cycles=MAX_CYCLES, continuous_actions=continuous, **scenario.mpe2_kwargs
    )
    # The parallel wrapper calls ``last()`` once per agent per step and throws the observation
    # away; computing it is half of world_comm's step time. ``observe=False`` skips only that.
    env.aec_env.last = functools.partial(env.aec_env.last, observe=False)
    return env


def draw_actions(
    env: Any, continuous: bool, episodes: int, steps: int, seed: int
) -> dict[str, np.ndarray]:
    """Random valid actions ``[episodes, steps(, dim)]`` per agent, from a seeded Generator.

    Discrete: int32 uniform over the agent's ``Discrete(n)``. Continuous: float32 uniform in
    ``[0, 1)``; both sides receive the same float32 values.
    """
    rng = np.random.default_rng(seed)
    actions = {}
    for agent in env.possible_agents:
        space = env.action_space(agent)
        if continuous:
            actions[agent] = rng.random((episodes, steps, *space.shape)).astype(np.float32)
        else:
            actions[agent] = rng.integers(0, space.n, (episodes, steps), dtype=np.int32)
    return actions


def _world_arrays(world: Any, agent_order: list[str]) -> dict[str, np.ndarray]:
    agents = [_agent_by_name(world, name) for name in agent_order]
    entities = agents + list(world.landmarks)
    return {
        "p_pos": np.stack([e.state.p_pos for e in entities]),
        "p_vel": np.stack([e.state.p_vel for e in entities]),
        "c": np.stack([np.asarray(a.state.c, np.float64).reshape(world.dim_c) for a in agents]),
    }


def rollout_mpe2(
    scenario_name: str, continuous: bool, agent_order: list[str], seed: int, episodes: int
) -> dict[str, Any]:
    """Reset mpe2 from seeds ``0 .. episodes - 1`` and step each episode to its end.

    Positions after the reset are rounded to float32 in the mpe2 world, so both sides start
    from the same world state exactly (ours holds float32). Actions are drawn with
    :func:`draw_actions` from ``seed``.

    Returns:
        numpy arrays: ``actions`` per agent; ``init_obs`` per agent [E, obs_dim] f32,
        ``init_p_pos`` / ``init_p_vel`` [E, num_entities, 2] f64, ``init_c`` [E, A, dim_c];
        ``goal`` [E, ...] int32 (scenarios with a goal); per step ``obs`` per agent
        [E, T, obs_dim] f32, ``rewards`` [E, T, A] f64, ``terminations`` / ``truncations``
        [E, T, A] bool, ``p_pos`` / ``p_vel`` [E, T, num_entities, 2] f64 and ``c``
        [E, T, A, dim_c] f64 after the step; ``live`` [E, T] (False once mpe2 had no agents
        left before the step, which must not happen before ``MAX_CYCLES``).
    """
    scenario = SCENARIOS_BY_NAME[scenario_name]
    env = make_mpe2(scenario, continuous)
    world = env.unwrapped.world
    actions = draw_actions(env, continuous, episodes, MAX_CYCLES, seed)
    per_step = ("rewards", "terminations", "truncations", "p_pos", "p_vel", "c", "live")
    out: dict[str, list] = {k: [] for k in (*per_step, "goal", "init_p_pos", "init_p_vel")}
    out["init_c"] = []
    obs: dict[str, list] = {a: [] for a in agent_order}
    init_obs: dict[str, list] = {a: [] for a in agent_order}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for episode in range(episodes):
            env.reset(seed=episode)
            for entity in world.entities:
                entity.state.p_pos = entity.state.p_pos.astype(np.float32).astype(np.float64)
            for agent in agent_order:
                init_obs[agent].append(env.unwrapped.observe(agent))
            for k, v in _world_arrays(world, agent_order).items():
                out[f"init_{k}"].append(v)
            if scenario.goal is not None:
                out["goal"].append(scenario.goal(world))
            episode_out: dict[str, list] = {k: [] for k in per_step}
            episode_obs: dict[str, list] = {a: [] for a in agent_order}
            for t in range(MAX_CYCLES):
                live = bool(env.agents)
                if live:
                    step_obs, rew, term, trunc, _ = env.step(
                        {a: actions[a][episode, t] for a in agent_order}
                    )
                else:  # mpe2 ended early: keep the shapes, the comparison reports it
                    step_obs = {a: np.full_like(init_obs[a][-1], np.nan) for a in agent_order}
                    rew = dict.fromkeys(agent_order, np.nan)
                    term = trunc = dict.fromkeys(agent_order, True)
                episode_out["live"].append(live)
                for agent in agent_order:
                    episode_obs[agent].append(step_obs[agent])
                episode_out["rewards"].append([rew[a] for a in agent_order])
                episode_out["terminations"].append([term[a] for a in agent_order])
                episode_out["truncations"].append([trunc[a] for a in agent_order])
                for k, v in _world_arrays(world, agent_order).items():
                    episode_out[k].append(v)
            for agent in agent_order:
                obs[agent].append(np.stack(episode_obs[agent]))
            for k, v in episode_out.items():
                out[k].append(np.asarray(v))
    result: dict[str, Any] = {k: np.stack(v) for k, v in out.items() if v}
    result["rewards"] = result["rewards"].astype(np.float64)
    result["obs"] = {a: np.stack(v) for a, v in obs.items()}
    result["init_obs"] = {a: np.stack(v) for a, v in init_obs.items()}
    result["actions"] = {a: actions[a] for a in agent_order}
    return result
