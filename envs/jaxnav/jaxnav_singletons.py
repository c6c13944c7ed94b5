"""JaxNav's hand-made test levels ("singletons"), JaxMARL 0.2.0's ``jaxnav_singletons``.

Eighteen fixed levels (a grid, every robot's start pose and goal) on which navigation policies
are evaluated after training on random maps, as in the JaxNav paper (Rutherford et al., *No
Regrets*, arXiv 2408.15099), and JaxMARL's named collections of them::

    from jaxmarl.environments.jaxnav.jaxnav_singletons import make_jaxnav_singleton

    env = make_jaxnav_singleton("Corridor4", map_id="Grid-Rand-Poly")
    obs, state = env.reset(key)          # always the level; the key is not used
    envs, names = make_jaxnav_singleton_collection("hard", map_id="Grid-Rand-Poly")

A singleton is a ``JaxNav`` whose ``reset`` (and so the auto-reset of ``step``) starts the
level; everything else is the env's. Levels are data (``Level``: grid rows, start poses
``(x, y, heading)``, goal poses), so new ones are a ``Level`` and ``JaxNavSingleton(n, level)``.

As in JaxMARL: the default ``map_id`` is ``"Grid-Rand"`` (disc robots), ``Grid-Rand-Poly``
gives the square robots of JaxNav's default (the one to use for policies trained on it; JaxMARL
itself can only reset, not step, disc robots), the walls are the level's grid on a map of its
size, and ``rew_lambda`` is 0 unless ``fixed_lambda=True``.
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Callable
from typing import Any

import numpy as np

from .jaxnav_env import JaxNav

__all__ = [
    "JaxNavSingleton",
    "Level",
    "LevelResults",
    "TestCase",
    "circle_cross",
    "evaluate_on_levels",
    "level_kwargs",
    "level_names",
    "levels_report",
    "make_jaxnav_singleton",
    "make_jaxnav_singleton_collection",
    "registered_singleton_collections",
    "registered_singletons",
]

Pose = tuple[float, float, float]  # x, y (metres; cells are 1 m), heading (radians)


@dataclasses.dataclass(frozen=True)
class Level:
    """One test level.

    Attributes:
        map_data: grid rows, ``"1 0 ..."`` (1: wall), the first row at y = 0.
        start_pose: one ``(x, y, heading)`` per robot.
        goal_pose: one ``(x, y, heading)`` per robot (the heading is not used).
    """

    map_data: tuple[str, ...]
    start_pose: tuple[Pose, ...]
    goal_pose: tuple[Pose, ...]


TestCase = Level  # JaxMARL's name

_OPEN_7 = ("1 1 1 1 1 1 1", *["1 0 0 0 0 0 1"] * 5, "1 1 1 1 1 1 1")
_CHICANE = (
    "1 1 1 1 1 1 1 1 1 1 1 1 1 1",
    "1 0 0 0 0 0 0 0 1 1 0 0 0 1",
    "1 0 0 0 1 1 0 0 1 1 0 0 0 1",
    "1 0 0 0 1 1 0 0 0 0 0 0 0 1",
    "1 1 1 1 1 1 1 1 1 1 1 1 1 1",
)
_NARROW_CHICANE = (
    *_CHICANE[:2],
    "1 0 0 0 1 1 1 0 1 1 0 0 0 1",
    "1 0 0 0 1 1 1 0 0 0 0 0 0 1",
    _CHICANE[4],
)
_SINGLE_NAV_23 = (
    "1 1 1 1 1 1 1 1 1 1 1",
    "1 0 0 1 1 1 1 1 0 0 1",
    "1 0 0 0 1 0 0 1 1 0 1",
    "1 0 1 0 1 0 0 0 0 0 1",
    "1 0 1 0 0 0 0 1 0 0 1",
    "1 0 1 0 1 0 0 0 0 0 1",
    "1 1 1 1 1 1 1 1 1 1 1",
)
_CORRIDOR_4 = (
    "1 1 1 1 1 1 1 1 1 1",
    "1 0 0 0 1 1 0 0 0 1",
    "1 0 0 0 1 1 0 0 0 1",
    "1 0 0 0 0 0 0 0 0 1",
    "1 0 0 0 1 1 0 0 0 1",
    "1 0 0 0 1 1 0 0 0 1",
    "1 1 1 1 1 1 1 1 1 1",
)
_EAST, _WEST = 0.0, 3.14
_FOUR_WAY = ((2.0, 2.5), (2.0, 4.5), (8.0, 2.5), (8.0, 4.5))
# Corridor4 and Layby4: two robots each side, each to the mirror spot across.
_FOUR_WAY_STARTS = tuple((x, y, _EAST if x < 5 else _WEST) for x, y in _FOUR_WAY)
_FOUR_WAY_GOALS = tuple((10.0 - x, y, _WEST if x < 5 else _EAST) for x, y in _FOUR_WAY)

# The fixed levels (facts of JaxMARL 0.2.0's ``jaxnav_singletons``: grids, starts and goals).
LEVELS: dict[str, Level] = {
    # one robot
    "BlankTest": Level(_OPEN_7, ((1.5, 1.5, 0.0),), ((5.5, 5.5, 0.0),)),
    "MiddleTest": Level(
        (_OPEN_7[0], _OPEN_7[1], *["1 0 1 1 1 0 1"] * 3, _OPEN_7[1], _OPEN_7[0]),
        ((1.5, 1.5, 0.0),),
        ((5.5, 5.5, 0.0),),
    ),
    "SingleNav1": Level(
        (
            "1 1 1 1 1 1 1 1 1 1 1",
            "1 1 0 0 0 0 0 0 0 0 1",
            "1 0 0 1 1 0 1 1 1 0 1",
            "1 1 0 0 0 0 0 0 0 0 1",
            "1 1 0 1 1 0 1 1 1 0 1",
            "1 0 0 0 0 0 0 1 0 0 1",
            "1 1 1 1 1 1 1 1 1 1 1",
        ),
        ((9.5, 1.5, 0.78),),
        ((1.5, 5.5, 0.0),),
    ),
    "SingleNav2": Level(_SINGLE_NAV_23, ((8.5, 1.5, _WEST),), ((1.5, 5.5, 0.0),)),
    "SingleNav3": Level(_SINGLE_NAV_23, ((9.1, 1.5, _WEST),), ((1.5, 5.5, 0.0),)),
    # several robots
    "BlankCross2": Level(
        _OPEN_7, ((1.5, 1.5, 0.78), (5.5, 5.5, 3.92)), ((5.5, 5.5, 0.0), (1.5, 1.5, 0.0))
    ),
    "BlankCross4": Level(
        _OPEN_7,
        ((1.5, 1.5, 0.78), (5.5, 5.5, 3.92), (1.5, 5.5, -0.78), (5.5, 1.5, -3.92)),
        ((5.5, 5.5, 0.0), (1.5, 1.5, 0.0), (5.5, 1.5, 0.0), (1.5, 5.5, 0.0)),
    ),
    "BlankCrossUneven2": Level(
        _OPEN_7, ((2.0, 2.5, 0.78), (5.5, 5.5, 3.92)), ((5.5, 5.5, 0.0), (1.5, 1.5, 0.0))
    ),
    "LongCorridor2": Level(
        (
            "1 1 1 1 1 1 1 1 1 1",
            "1 1 1 1 1 1 1 0 0 1",
            "1 0 0 1 1 1 1 0 0 1",
            "1 0 0 0 0 0 0 0 0 1",
            "1 0 0 1 1 1 1 0 0 1",
            "1 1 1 1 1 1 1 0 0 1",
            "1 1 1 1 1 1 1 1 1 1",
        ),
        ((1.5, 3.5, _EAST), (8.0, 3.5, _WEST)),
        ((6.0, 3.5, 0.0), (1.5, 3.5, 0.0)),
    ),
    "Corridor4": Level(
        _CORRIDOR_4,
        _FOUR_WAY_STARTS,
        _FOUR_WAY_GOALS,
    ),
    "Corridor8": Level(
        (
            "1 1 1 1 1 1 1 1 1 1",
            *["1 0 0 0 1 1 0 0 0 1"] * 3,
            "1 0 0 0 0 0 0 0 0 1",
            *["1 0 0 0 1 1 0 0 0 1"] * 3,
            "1 1 1 1 1 1 1 1 1 1",
        ),
        tuple((x, y, _EAST if x < 5 else _WEST) for x in (2.0, 8.0) for y in (2.0, 3.5, 5.5, 7.0)),
        tuple((x, y, _WEST if x > 5 else _EAST) for x in (8.0, 2.0) for y in (2.0, 3.5, 5.5, 7.0)),
    ),
    "Layby4": Level(
        (
            "1 1 1 1 1 1 1 1 1 1",
            "1 0 0 1 1 1 1 0 0 1",
            "1 0 0 1 0 1 1 0 0 1",
            "1 0 0 0 0 0 0 0 0 1",
            "1 0 0 1 1 0 1 0 0 1",
            "1 0 0 1 1 1 1 0 0 1",
            "1 1 1 1 1 1 1 1 1 1",
        ),
        _FOUR_WAY_STARTS,
        _FOUR_WAY_GOALS,
    ),
    "Corner2": Level(
        (
            "1 1 1 1 1 1 1",
            "1 0 0 0 0 0 1",
            "1 1 1 1 0 0 1",
            *["1 1 1 1 1 0 1"] * 3,
            "1 1 1 1 1 1 1",
        ),
        ((1.5, 1.5, 0.0), (5.5, 5.5, -1.57)),
        ((5.5, 5.5, 3.14), (1.5, 1.5, 3.14)),
    ),
    "Chicane2": Level(
        _CHICANE, ((2.5, 2.5, 0.0), (11.5, 2.5, _WEST)), ((9.5, 3.5, 3.14), (2.5, 2.5, 3.14))
    ),
    "Chicane4": Level(
        _CHICANE,
        ((2.5, 1.75, 0.0), (2.5, 3.25, 0.0), (11.5, 1.75, _WEST), (11.5, 3.25, _WEST)),
        ((9.5, 3.5, 3.14), (11.5, 1.75, 3.14), (2.5, 3.25, 3.14), (4.5, 1.5, 3.14)),
    ),
    "NarrowChicane2a": Level(
        _NARROW_CHICANE,
        ((2.5, 2.5, 0.0), (11.5, 2.5, _WEST)),
        ((9.5, 3.5, 3.14), (2.5, 2.5, 3.14)),
    ),
    "NarrowChicane2b": Level(
        _NARROW_CHICANE,
        ((2.5, 1.5, 0.0), (11.5, 2.5, _WEST)),
        ((7.5, 1.5, 3.14), (2.5, 2.5, 3.14)),
    ),
}


def circle_cross(num_agents: int = 10, circle_rad: float = 6) -> Level:
    """``num_agents`` robots evenly spaced on a circle of radius ``circle_rad`` in an open
    square room of side ``3 circle_rad``, each facing the centre, each to go to the opposite
    point."""
    if num_agents < 1 or circle_rad <= 0:
        raise ValueError(
            f"CircleCross needs num_agents >= 1 and circle_rad > 0, got {num_agents} and "
            f"{circle_rad}"
        )
    side = int(circle_rad * 3)
    wall, inside = "1 " * side, "1 " + "0 " * (side - 2) + "1"
    centre = np.float32(side / 2)
    angles = 2 * np.pi * np.arange(num_agents, dtype=np.float32) / num_agents

    def on_circle(angle):
        return (
            float(np.float32(circle_rad) * np.cos(angle) + centre),
            float(np.float32(circle_rad) * np.sin(angle) + centre),
        )

    starts = tuple((*on_circle(a), float(a + np.pi)) for a in angles)
    goals = tuple((*on_circle(a + np.float32(np.pi)), float(a + np.pi)) for a in angles)
    return Level((wall, *[inside] * (side - 2), wall), starts, goals)


registered_singletons = [
    "BlankTest",
    "MiddleTest",
    "BlankCross2",
    "BlankCross4",
    "BlankCrossUneven2",
    "CircleCross",
    "SingleNav1",
    "SingleNav2",
    "SingleNav3",
    "Corridor4",
    "LongCorridor2",
    "Layby4",
    "Corner2",
    "Corridor8",
    "Chicane2",
    "Chicane4",
    "NarrowChicane2a",
    "NarrowChicane2b",
]

# JaxMARL's collections (the "multi" one holds one-robot levels too, as in JaxMARL).
registered_singleton_collections = {
    "test": ["BlankTest"],
    "multi": [
        "CircleCross",
        "BlankCross4",
        "BlankCrossUneven2",
        "Corridor4",
        "LongCorridor2",
        "Layby4",
        "Corner2",
        "SingleNav1",
        "SingleNav2",
        "SingleNav3",
    ],
    "single": ["BlankTest", "MiddleTest", "SingleNav1", "SingleNav2", "SingleNav3"],
    "hard": [
        "SingleNav2",
        "Layby4",
        "Corner2",
        "Corridor4",
        "Corridor8",
        "CircleCross",
        "NarrowChicane2a",
        "NarrowChicane2b",
        "Chicane4",
    ],
    "corridor": ["BlankCross4", "LongCorridor2", "Corridor4", "Corner2"],
    "just-long-corridor": ["LongCorridor2"],
}

_GRID_MAPS = ("Grid-Rand", "Grid-Rand-Poly", "Grid-Rand-Poly-Single")


class JaxNavSingleton(JaxNav):
    """A ``JaxNav`` that always starts on one level.

    Args:
        num_agents: robots; must equal the level's.
        test_case: the ``Level``.
        fixed_lambda, rew_lambda: ``rew_lambda`` is used only with ``fixed_lambda=True``,
            else 0 (JaxMARL's singletons).
        map_id: ``"Grid-Rand"`` (discs, default), ``"Grid-Rand-Poly"`` (squares) or
            ``"Grid-Rand-Poly-Single"`` (the same as ``"Grid-Rand-Poly"``).
        level_name: the env's ``name``.
        **env_kwargs: any other ``JaxNav`` keyword (lidar, speeds, rewards, ``max_steps``);
            ``map_params`` may set the robots' ``agent_coords``.
    """

    samples_levels = False

    def __init__(
        self,
        num_agents: int,
        test_case: Level | None = None,
        fixed_lambda: bool = False,
        rew_lambda: float = 0.0,
        map_id: str = "Grid-Rand",
        level_name: str = "JaxNavSingleton",
        **env_kwargs: Any,
    ):
        if test_case is None:
            raise ValueError(
                "JaxNavSingleton needs test_case=Level(map_data, start_pose, goal_pose)"
            )
        counts = (len(test_case.start_pose), len(test_case.goal_pose))
        if counts != (num_agents, num_agents):
            raise ValueError(
                f"{level_name}: num_agents={num_agents}, but the level has {counts[0]} start "
                f"poses and {counts[1]} goals; use num_agents={counts[0]}"
            )
        if map_id not in _GRID_MAPS:
            raise ValueError(
                f"{level_name}: test levels are grids; map_id must be one of {_GRID_MAPS}, "
                f"got {map_id!r}"
            )
        map_id = "Grid-Rand-Poly" if map_id == "Grid-Rand-Poly-Single" else map_id
        grid = np.array([[int(c) for c in row.split()] for row in test_case.map_data], np.int32)
        if grid.ndim != 2 or not np.isin(grid, (0, 1)).all():
            raise ValueError(f"{level_name}: map_data must be rows of equal length of 0/1")
        height, width = grid.shape
        map_params = dict(env_kwargs.pop("map_params", None) or {})
        map_params.update(map_size=(width, height), fill=0.5)
        super().__init__(
            num_agents,
            map_id=map_id,
            map_params=map_params,
            fixed_lambda=True,
            rew_lambda=rew_lambda if fixed_lambda else 0.0,
            **env_kwargs,
        )
        self.level_name = level_name
        self.level = test_case
        self.map_data = grid
        self.start_pose = np.asarray(test_case.start_pose, np.float32).reshape(num_agents, 3)
        self.goal_pose = np.asarray(test_case.goal_pose, np.float32).reshape(num_agents, 3)

    @property
    def name(self) -> str:
        return self.level_name

    def reset(self, key=None):
        """The level's first state (``key`` is not used)."""
        start, goal = self.start_pose, self.goal_pose
        state = self._initial_state(
            start[:, :2], start[:, 2], goal[:, :2], self.map_data, self.rew_lambda
        )
        return self.get_obs(state), state

    def viz_testcase(self, save: bool = True, show: bool = False, plot_lidar: bool = True):
        """A picture of the level at reset (``<name>.png`` with ``save``), as an RGB array."""
        from .render import render_frame

        _, state = self.reset()
        frame = render_frame(self, state, beam_stride=10 if plot_lidar else 0)
        if save:
            import imageio.v3 as iio

            iio.imwrite(f"{self.name}.png", frame)
        if show:
            import matplotlib.pyplot as plt

            plt.imshow(frame)
            plt.axis("off")
            plt.show()
        return frame


def make_jaxnav_singleton(env_id: str, **env_kwargs: Any) -> JaxNavSingleton:
    """The test level ``env_id`` (``registered_singletons``) as an env.

    ``CircleCross`` also takes ``num_agents`` and ``circle_rad``; on the other levels
    ``num_agents``, if given, must be the level's.
    """
    if env_id not in registered_singletons:
        close = difflib.get_close_matches(env_id, registered_singletons, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ValueError(
            f"unknown JaxNav test level {env_id!r}{hint}; known: {', '.join(registered_singletons)}"
        )
    if env_id == "CircleCross":
        level = circle_cross(env_kwargs.pop("num_agents", 10), env_kwargs.pop("circle_rad", 6))
    else:
        level = LEVELS[env_id]
    num_agents = env_kwargs.pop("num_agents", len(level.start_pose))
    return JaxNavSingleton(num_agents, level, level_name=env_id, **env_kwargs)


def make_jaxnav_singleton_collection(
    collection_id: str, **env_kwargs: Any
) -> tuple[list[JaxNavSingleton], list[str]]:
    """``(envs, names)`` of a named collection (``registered_singleton_collections``)."""
    if collection_id not in registered_singleton_collections:
        raise ValueError(
            f"unknown JaxNav test-level collection {collection_id!r}; known: "
            f"{', '.join(registered_singleton_collections)}"
        )
    names = list(registered_singleton_collections[collection_id])
    return [make_jaxnav_singleton(name, **env_kwargs) for name in names], names


@dataclasses.dataclass(frozen=True)
class LevelResults:
    """A trained run's greedy episodes on test levels (:func:`evaluate_on_levels`).

    Attributes:
        metrics: level name -> metric name (``episode_return``, ``episode_length``,
            ``success_rate``, ``collision_rate``, ``timeout_rate``, ...) -> ``[seeds]``.
        skipped: levels left out because their number of robots is not the run's.
        num_agents: the run's number of robots.
    """

    metrics: dict[str, dict[str, np.ndarray]]
    skipped: tuple[str, ...]
    num_agents: int

    def table(self) -> str:
        """Markdown: one row per level, the mean over seeds."""
        names = (
            "success_rate",
            "collision_rate",
            "timeout_rate",
            "episode_return",
            "episode_length",
        )
        lines = ["| level | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]
        for level, metrics in self.metrics.items():
            cells = [f"{float(np.mean(metrics[n])):.3g}" for n in names]
            lines.append(f"| {level} | " + " | ".join(cells) + " |")
        return "\n".join(lines)


def level_kwargs(env_kwargs: dict[str, Any]) -> dict[str, Any]:
    """The keywords of a run's JaxNav that carry over to the test levels: everything but the
    robot count and the map; disc robots stay discs, any other map gives squares (with the
    run's ``agent_coords``)."""
    kwargs = {
        k: v for k, v in env_kwargs.items() if k not in ("num_agents", "map_id", "map_params")
    }
    kwargs["map_id"] = "Grid-Rand" if env_kwargs.get("map_id") == "Grid-Rand" else "Grid-Rand-Poly"
    coords = (env_kwargs.get("map_params") or {}).get("agent_coords")
    if coords is not None:
        kwargs["map_params"] = {"agent_coords": coords}
    return kwargs


def level_names(levels: str | list[str] | tuple[str, ...]) -> list[str]:
    """Collection ids and level names, expanded to level names (in order, once each)."""
    names: list[str] = []
    for item in [levels] if isinstance(levels, str) else list(levels):
        found = registered_singleton_collections.get(item, [item])
        for name in found:
            if name not in registered_singletons:
                raise ValueError(
                    f"{item!r} is neither a JaxNav test level nor a collection; levels: "
                    f"{', '.join(registered_singletons)}; collections: "
                    f"{', '.join(registered_singleton_collections)}"
                )
            if name not in names:
                names.append(name)
    return names


def evaluate_on_levels(run: Any, levels: str | list[str], seed: int = 0) -> LevelResults:
    """One greedy episode of every seed of a trained JaxNav run on each test level.

    The levels and greedy policies are deterministic, so one episode per seed and level is
    the result. A level is played with the run's JaxNav keywords (``level_kwargs``); levels
    with another number of robots than the run's are skipped (its policies are built for its
    own). ``run`` is a ``jaxmarl.evaluate.TrainedRun``; ``levels`` collection ids and/or level
    names.
    """
    import jax

    from jaxmarl.training.learner import greedy_episodes
    from jaxmarl.wrappers import LogWrapper

    env_config = run.config.env
    if env_config.env_id != "jaxnav":
        raise ValueError(f"test levels are JaxNav's; {run.run_dir} trained on {env_config.env_id}")
    names = level_names(levels)
    kwargs = level_kwargs(dict(env_config.env_kwargs))
    learner, num_agents = run.learner, run.env.num_agents
    metrics, skipped = {}, []
    for name in names:
        # CircleCross takes any number of robots: the run's.
        robots = {"num_agents": num_agents} if name == "CircleCross" else {}
        env = make_jaxnav_singleton(name, **robots, **kwargs)
        if env.num_agents != num_agents:
            skipped.append(name)
            continue
        training_env = dataclasses.replace(learner.env, env=LogWrapper(env))

        def play(params, training_env=training_env):
            return greedy_episodes(
                training_env,
                learner.greedy_policy,
                learner.initial_carry,
                params,
                jax.random.key(seed),
                1,
            )

        result = jax.device_get(jax.jit(jax.vmap(play))(run.params))
        metrics[name] = {k: np.asarray(v, np.float64) for k, v in result.items()}
    return LevelResults(metrics, tuple(skipped), num_agents)


def levels_report(run: Any, levels: list[str]) -> Callable[[int], None]:
    """``python -m jaxmarl.evaluate RUN_DIR --jaxnav-levels LEVEL...`` (a ``ReportFlag``).

    Checks the level names, and that some of them have the run's number of robots, before
    anything compiles (``ValueError``); returns ``report(seed)``, which plays
    :func:`evaluate_on_levels`, prints its table and writes
    ``RUN_DIR/evaluation/jaxnav_levels_step_N.json``.
    """
    names = level_names(list(levels))
    robots = run.env.num_agents
    fitting = [n for n in LEVELS if len(LEVELS[n].start_pose) == robots] + ["CircleCross"]
    if not set(names) & set(fitting):
        raise ValueError(
            f"none of {names} has the run's {robots} robots; levels that do: {', '.join(fitting)}"
        )

    def report(seed: int) -> None:
        results = evaluate_on_levels(run, names, seed)
        record = {
            "evaluation_seed": seed,
            "num_agents": results.num_agents,
            "skipped": list(results.skipped),
            "levels": {
                level: {name: values.tolist() for name, values in metrics.items()}
                for level, metrics in results.metrics.items()
            },
        }
        json_path = run.write_evaluation(f"jaxnav_levels_step_{run.step}", record)
        print(
            f"{run.alg}, checkpoint step {run.step}: one greedy episode per seed "
            f"({run.num_seeds}) on each JaxNav test level with {results.num_agents} robots; "
            f"mean over seeds"
        )
        print(results.table())
        if results.skipped:
            print(f"skipped (another number of robots): {', '.join(results.skipped)}")
        print(f"-> {json_path}")

    return report
