"""JaxNav (Rutherford et al. 2024, arXiv 2408.15099) as in JaxMARL 0.2.0: lidar robots to goals."""

from __future__ import annotations

import difflib
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from jaxmarl import spaces
from jaxmarl.env import MultiAgentEnv, jit_method
from jaxmarl.typing import Actions, Observations

from . import lidar as _lidar
from .maps import JACKAL_COORDS, MAP_IDS, SQUARE_COORDS, GridMap, parse_map_rows

# JaxMARL's 15 discrete actions: (linear velocity m/s, angular velocity rad/s).
DISCRETE_ACTS = np.array(
    [[v, w] for v in (0.0, 0.5, 1.0) for w in (0.5, 0.25, 0.0, -0.25, -0.5)], dtype=np.float32
)
MAP_PARAMS = {"map_size": (11, 11), "fill": 0.3}
NUM_OWN_FEATURES = 5  # linear and angular velocity, goal distance and bearing, reward lambda

# map_params keys each map id accepts (JaxMARL's map constructors' keywords).
_COMMON_KEYS = {
    "map_size",
    "fill",
    "cell_size",
    "sample_test_case_type",
    "start_pad",
    "min_dist_to_goal",
    "max_dist_to_goal",
    "valid_path_check",
}
_MAP_KEYS = {
    "Grid-Rand": _COMMON_KEYS,
    "Grid-Rand-Poly": _COMMON_KEYS | {"agent_coords", "middle_line"},
    "Grid-Rand-Barn": _COMMON_KEYS
    | {"agent_coords", "middle_line", "smoothing_iters", "smoothing_upper_count"}
    | {"smoothing_lower_count"},
    "Grid-Rand-Poly-Single": _COMMON_KEYS | {"agent_coords", "middle_line", "map_data"},
    "Grid-Buffer": _COMMON_KEYS | {"map_grids"},
}


@struct.dataclass
class State:
    """Everything that changes in JaxNav (JaxMARL's field names).

    Attributes:
        pos: ``[n, 2]`` float32, robot centres (m).
        theta: ``[n]`` float32, headings in ``[-pi, pi)``.
        vel: ``[n, 2]`` float32, linear (m/s) and angular (rad/s) velocity.
        done: ``[n]`` bool, the robot has finished (with ``evaporating``: reached its goal,
            crashed or timed out; otherwise the episode's end, for every robot).
        term: ``[n]`` bool, ``done`` before the last step (the robot's action was void).
        goal_reached: ``[n]`` bool, at its goal (without ``evaporating``: ever this episode).
        move_term: ``[n]`` bool, crashed (without ``evaporating``: ever this episode).
        step: ``[]`` int32, steps taken this episode.
        ep_done: ``[]`` bool, whether the episode has ended.
        goal: ``[n, 2]`` float32, goal centres (m).
        map_data: ``[H, W]`` int32 occupancy grid (1 = wall).
        rew_lambda: ``[]`` float32, weight of the individual reward (1 - it: the team mean).
        reached: ``[n]`` bool, the robot reached its goal this episode (for metrics).
        crashed: ``[n]`` bool, the robot collided this episode (for metrics).
    """

    pos: jax.Array
    theta: jax.Array
    vel: jax.Array
    done: jax.Array
    term: jax.Array
    goal_reached: jax.Array
    move_term: jax.Array
    step: jax.Array
    ep_done: jax.Array
    goal: jax.Array
    map_data: jax.Array
    rew_lambda: jax.Array
    reached: jax.Array
    crashed: jax.Array


@struct.dataclass
class EnvInstance:
    """A level given as data (JaxMARL's ``EnvInstance``), for curriculum / UED methods.

    Attributes:
        agent_pos: ``[n, 2]`` starts; agent_theta: ``[n]`` headings; goal_pos: ``[n, 2]``;
        map_data: ``[H, W]`` int32 grid; rew_lambda: ``[]`` individual-reward weight.
    """

    agent_pos: jax.Array
    agent_theta: jax.Array
    goal_pos: jax.Array
    map_data: jax.Array
    rew_lambda: jax.Array


def wrap(angle: jax.Array) -> jax.Array:
    """JaxMARL's one-turn wrap into ``[-pi, pi)`` (enough for one step's rotation)."""
    wrapped = jnp.where(angle >= jnp.pi, angle - 2 * jnp.pi, angle)
    return jnp.where(angle < -jnp.pi, angle + 2 * jnp.pi, wrapped)


class JaxNav(MultiAgentEnv):
    """Differential-drive robots with a 2-D lidar drive to their goals through a walled grid.

    Observation (per agent, ``Box(-inf, inf, (lidar_num_beams + 5,), float32)``):
        ``lidar_num_beams`` ranges over a ``2 pi lidar_angle_factor`` arc from straight behind
        (beam 0 at ``-pi``), then linear and angular velocity, distance to goal (capped at
        ``lidar_max_range``), goal bearing relative to the heading and ``rew_lambda``. With
        ``normalise_obs`` (default): ranges and goal distance ``/ max_range - 0.5``,
        velocities ``/ (max_v, max_w) - (0.5, 0)``, bearing ``/ pi``, lambda ``- 0.5``.
    Action (per agent): ``Box([min_v, -pi/6], [max_v, pi/6], (2,), float32)`` desired
        (linear, angular) velocity, or ``Discrete(15)`` (``DISCRETE_ACTS``). Velocities move
        toward the command by at most ``max_v_acc dt`` / ``max_w_acc dt`` per step and are
        clipped to ``[min_v, max_v]`` / ``[-max_w, max_w]``; then the robot moves
        ``v dt`` along its heading and turns ``w dt``.
    Reward: per robot, goal progress ``weight_g (|p - g|_before - |p - g|_after)``, or
        ``goal_rew`` on reaching the goal (within ``goal_radius``); ``coll_rew`` on a
        collision with a wall or robot; ``dt_rew`` per step while active; ``lidar_rew`` when a
        range is within ``rad + lidar_thresh``; ``weight_w |w|`` when ``|w| > lim_w``. Each
        robot gets ``rew_lambda * own + (1 - rew_lambda) * mean(all)``; with
        ``share_only_sparse`` the team part is the mean of the sparse terms only (goal
        reward on arrival, collision, time).
    Termination: without ``evaporating`` a crashed robot stops where it is and a robot at its
        goal keeps driving; the episode ends when every robot has reached its goal or crashed
        (``infos["terminated"]``) or at ``max_steps`` (``infos["truncated"]``). With
        ``evaporating`` a robot leaves the map once done; the episode ends when all are.
    Infos: JaxMARL's ``NumC``, ``GoalR``, ``AgentC``, ``MapC``, ``TimeO``, ``Return`` (per
        robot with ``info_by_agent``, else summed; ``Return`` is then the mean individual
        reward), ``agent_terminated`` (JaxMARL's per-robot ``terminated``), and per env
        ``success_rate``, ``collision_rate``, ``timeout_rate``
        (fractions of robots this episode; read them where the episode ends).

    Example::

        import jax, jaxmarl
        env = jaxmarl.make("jaxnav")
        obs, state = env.reset(jax.random.key(0))
        actions = {a: env.action_space(a).sample(jax.random.key(1)) for a in env.agents}
        obs, state, rewards, dones, infos = env.step(jax.random.key(2), state, actions)
    """

    observations_from_state = True
    # Whether reset draws levels from the map sampler (so the constructor checks that it can
    # place every robot); the fixed test levels (``jaxnav_singletons``) never sample.
    samples_levels = True

    def __init__(
        self,
        num_agents: int = 2,
        act_type: str = "Continuous",
        normalise_obs: bool = True,
        rad: float = 0.3,
        evaporating: bool = False,
        map_id: str = "Grid-Rand-Poly",
        map_params: dict | None = None,
        lidar_num_beams: int = 200,
        lidar_range_resolution: float = 0.05,
        lidar_max_range: float = 6.0,
        lidar_min_range: float = 0.0,
        lidar_angle_factor: float = 1.0,
        min_v: float = 0.0,
        max_v: float = 1.0,
        max_v_acc: float = 1.0,
        max_w: float = 0.6,
        max_w_acc: float = 1.0,
        max_steps: int = 500,
        dt: float = 0.1,
        fixed_lambda: bool = True,
        rew_lambda: float = 0.5,
        lambda_range: tuple[float, float] = (0.0, 1.0),
        goal_radius: float = 0.5,
        goal_rew: float = 4.0,
        weight_g: float = 0.25,
        lim_w: float = 0.7,
        weight_w: float = -0.0,
        dt_rew: float = -0.01,
        coll_rew: float = -4.0,
        lidar_thresh: float = 0.1,
        lidar_rew: float = -0.1,
        do_sep_reward: bool = False,
        share_only_sparse: bool = False,
        info_by_agent: bool = True,
    ):
        _check_config(locals())
        super().__init__(num_agents)
        self.rad = float(rad)
        self.evaporating = bool(evaporating)
        self.act_type = act_type
        self.normalise_obs = bool(normalise_obs)
        self.map_id = map_id
        self.map_params = dict(MAP_PARAMS if map_params is None else map_params)
        self.map_obj = _make_map(
            map_id, num_agents, self.rad, self.map_params, check_placement=self.samples_levels
        )
        self.lidar_num_beams = int(lidar_num_beams)
        self.lidar_range_resolution = float(lidar_range_resolution)
        self.lidar_max_range = float(lidar_max_range)
        self.lidar_min_range = float(lidar_min_range)
        self.lidar_angle_factor = float(lidar_angle_factor)
        self.lidar_angles = np.linspace(
            -np.pi * lidar_angle_factor, np.pi * lidar_angle_factor, lidar_num_beams
        ).astype(np.float32)
        self.lidar_ranges = _lidar.sample_ranges(self.lidar_max_range, lidar_range_resolution)
        self.min_v, self.max_v, self.max_v_acc = float(min_v), float(max_v), float(max_v_acc)
        self.max_w, self.max_w_acc = float(max_w), float(max_w_acc)
        self.max_steps = int(max_steps)
        self.dt = float(dt)
        self.fixed_lambda = bool(fixed_lambda)
        self.rew_lambda = float(rew_lambda)
        self.lambda_range = tuple(float(x) for x in lambda_range)
        self.goal_radius = float(goal_radius)
        self.goal_rew, self.weight_g = float(goal_rew), float(weight_g)
        self.lim_w, self.weight_w = float(lim_w), float(weight_w)
        self.dt_rew, self.coll_rew = float(dt_rew), float(coll_rew)
        self.lidar_thresh, self.lidar_rew = float(lidar_thresh), float(lidar_rew)
        self.do_sep_reward = bool(do_sep_reward)
        self.share_only_sparse = bool(share_only_sparse)
        self.info_by_agent = bool(info_by_agent)
        # Last sample still counted as "too close" by the lidar proximity penalty.
        close = np.nonzero(self.lidar_ranges <= self.lidar_thresh + self.rad)[0]
        self._close_samples = int(close[-1]) + 1 if close.size else 0
        action_space = (
            spaces.Discrete(len(DISCRETE_ACTS))
            if act_type == "Discrete"
            else spaces.Box(
                np.array([min_v, -np.pi / 6], np.float32),
                np.array([max_v, np.pi / 6], np.float32),
                (2,),
                jnp.float32,
            )
        )
        obs_space = spaces.Box(-np.inf, np.inf, (self.obs_size,), jnp.float32)
        self.action_spaces = {a: action_space for a in self.agents}
        self.observation_spaces = {a: obs_space for a in self.agents}

    @property
    def obs_size(self) -> int:
        return self.lidar_num_beams + NUM_OWN_FEATURES

    @property
    def name(self) -> str:
        return "jaxnav"

    @property
    def agent_classes(self) -> dict[str, list[str]]:
        return {"agent": list(self.agents)}

    # ------------------------------------------------------------------ episodes
    @jit_method
    def reset(self, key: jax.Array) -> tuple[Observations, State]:
        case_key, lambda_key = jax.random.split(key)
        map_data, case = self.map_obj.sample_scenario(case_key)
        state = self._initial_state(
            case[:, 0, :2], case[:, 0, 2], case[:, 1, :2], map_data, self.sample_lambda(lambda_key)
        )
        return self.get_obs(state), state

    def sample_lambda(self, key: jax.Array) -> jax.Array:
        """The episode's ``rew_lambda``: fixed, or uniform in ``lambda_range``."""
        if self.fixed_lambda:
            return jnp.float32(self.rew_lambda)
        low, high = self.lambda_range
        return jax.random.uniform(key, (), jnp.float32, low, high)

    def _initial_state(self, pos, theta, goal, map_data, rew_lambda) -> State:
        n = self.num_agents
        no = jnp.zeros((n,), jnp.bool_)
        return State(
            pos=jnp.asarray(pos, jnp.float32),
            theta=jnp.asarray(theta, jnp.float32),
            vel=jnp.zeros((n, 2), jnp.float32),
            done=no,
            term=no,
            goal_reached=no,
            move_term=no,
            step=jnp.int32(0),
            ep_done=jnp.bool_(False),
            goal=jnp.asarray(goal, jnp.float32),
            map_data=jnp.asarray(map_data, jnp.int32),
            rew_lambda=jnp.asarray(rew_lambda, jnp.float32).reshape(()),
            reached=no,
            crashed=no,
        )

    def set_env_instance(self, instance: EnvInstance) -> tuple[Observations, State]:
        """Start an episode on a level given as data (JaxMARL's ``set_env_instance``)."""
        state = self._initial_state(
            instance.agent_pos,
            instance.agent_theta,
            instance.goal_pos,
            instance.map_data,
            instance.rew_lambda,
        )
        return self.get_obs(state), state

    def set_state(self, state: State) -> tuple[Observations, State]:
        """Observations of a given state, and the state (JaxMARL's ``set_state``)."""
        return self.get_obs(state), state

    # ------------------------------------------------------------------ dynamics
    def command(self, actions: Actions) -> jax.Array:
        """``[n, 2]`` float32 commanded (linear, angular) velocities from the actions."""
        batch = jnp.stack([jnp.asarray(actions[a]) for a in self.agents])
        if self.act_type == "Discrete":
            return jnp.asarray(DISCRETE_ACTS)[batch.astype(jnp.int32).reshape(-1)]
        return batch.astype(jnp.float32).reshape(self.num_agents, 2)

    def move(self, pos, theta, vel, command, frozen):
        """Kinematics with velocity and acceleration limits; ``frozen`` robots stop.

        Shapes ``[n, 2]``, ``[n]``, ``[n, 2]``, ``[n, 2]``, ``[n]``; returns new
        ``(pos, theta, vel)``.
        """
        v_acc = jnp.clip((command[:, 0] - vel[:, 0]) / self.dt, -self.max_v_acc, self.max_v_acc)
        w_acc = jnp.clip((command[:, 1] - vel[:, 1]) / self.dt, -self.max_w_acc, self.max_w_acc)
        v = jnp.clip(vel[:, 0] + v_acc * self.dt, self.min_v, self.max_v)
        w = jnp.clip(vel[:, 1] + w_acc * self.dt, -self.max_w, self.max_w)
        step = jnp.stack([v * jnp.cos(theta) * self.dt, v * jnp.sin(theta) * self.dt], -1)
        new_pos = pos + step
        new_theta = wrap(theta + w * self.dt)
        new_vel = jnp.stack([v, w], -1)
        stop_pos = jnp.zeros_like(pos) if self.evaporating else pos
        frozen2 = frozen[:, None]
        return (
            jnp.where(frozen2, stop_pos, new_pos),
            jnp.where(frozen, theta, new_theta),
            jnp.where(frozen2, 0.0, new_vel),
        )

    def step_env(self, key: jax.Array, state: State, actions: Actions):
        command = self.command(actions)
        old = state
        frozen = old.done if self.evaporating else old.done | old.move_term
        pos, theta, vel = self.move(old.pos, old.theta, old.vel, command, frozen)
        step = old.step + 1
        active = ~old.done
        map_hits = self.map_obj.map_collision(pos, theta, old.map_data) & active
        agent_hits = self.map_obj.agent_collisions(pos, theta) & active
        collisions = map_hits | agent_hits
        at_goal = (jnp.linalg.norm(pos - old.goal, axis=1) <= self.goal_radius) & active
        time_up = jnp.full((self.num_agents,), step >= self.max_steps)
        if self.evaporating:
            done = collisions | at_goal | time_up | old.done
            ep_done = jnp.all(done)
            goal_reached, move_term = at_goal, collisions
        else:
            goal_reached = at_goal | old.goal_reached
            move_term = collisions | old.move_term
            ep_done = jnp.all(goal_reached | move_term | time_up)
            done = jnp.full((self.num_agents,), ep_done)
        reached = old.reached | at_goal
        crashed = old.crashed | collisions
        state = old.replace(
            pos=pos,
            theta=theta,
            vel=vel,
            move_term=move_term,
            goal_reached=goal_reached,
            done=done,
            term=old.done,
            step=step,
            ep_done=ep_done,
            reached=reached,
            crashed=crashed,
        )
        own, sparse = self.individual_rewards(old, state, command, collisions, goal_reached)
        team = own.mean()
        shared = sparse.mean() if self.share_only_sparse else team
        rew = state.rew_lambda * own + (1 - state.rew_lambda) * shared
        rewards = {a: rew[i] for i, a in enumerate(self.agents)}
        dones = {a: done[i] for i, a in enumerate(self.agents)}
        dones["__all__"] = ep_done
        infos = self._infos(old, state, map_hits, agent_hits, collisions, time_up)
        infos["Return"] = rew if self.info_by_agent else team
        return self.get_obs(state), state, rewards, dones, infos

    def individual_rewards(self, old: State, new: State, command, collisions, goal_reached):
        """Each robot's reward before team mixing (JaxMARL's terms) and its sparse part.

        Returns ``(total, sparse)``, both ``[n]`` float32: ``sparse`` is the goal reward on
        reaching the goal, the collision reward and the time penalty (JaxMARL's
        ``Reward.sparse``; the rest, progress, turning and lidar proximity, is dense).
        """
        progress = self.weight_g * (
            jnp.linalg.norm(old.pos - old.goal, axis=1)
            - jnp.linalg.norm(new.pos - old.goal, axis=1)
        )
        not_before = (~old.goal_reached).astype(jnp.float32)
        r_goal = jnp.where(goal_reached, self.goal_rew, progress) * not_before
        r_coll = collisions * self.coll_rew * (~old.move_term)
        r_turn = jnp.where(
            jnp.abs(command[:, 1]) > self.lim_w, self.weight_w * jnp.abs(command[:, 1]), 0.0
        )
        r_time = self.dt_rew * (~(old.goal_reached | old.move_term))
        r_lidar = self.too_close(new) * self.lidar_rew
        total = r_goal + r_coll + r_turn + r_time + r_lidar
        sparse = jnp.where(goal_reached, r_goal, 0.0) + r_coll + r_time
        active = ~old.done
        return (total * active).astype(jnp.float32), (sparse * active).astype(jnp.float32)

    def _infos(self, old, new, map_hits, agent_hits, collisions, time_up):
        ep_done, goal_reached = new.ep_done, new.goal_reached
        first_goal = (goal_reached & ~old.goal_reached).astype(jnp.int32)
        agent_c = (agent_hits & ~old.move_term).astype(jnp.int32)
        map_c = (map_hits & ~old.move_term).astype(jnp.int32)
        if self.evaporating:
            time_o = time_up & ~old.done
            num_c = jnp.sum(collisions | goal_reached | time_up).astype(jnp.int32)
        else:
            time_o = time_up & ~(new.move_term | goal_reached)
            num_c = jnp.where(ep_done, self.num_agents, 0).astype(jnp.int32)
        if self.info_by_agent:
            infos = dict(
                NumC=jnp.full((self.num_agents,), ep_done, jnp.int32),
                GoalR=first_goal,
                AgentC=agent_c,
                MapC=map_c,
                TimeO=time_o,
            )
            agent_terminated = old.done
        else:
            infos = dict(
                NumC=num_c,
                GoalR=first_goal.sum(dtype=jnp.int32),
                AgentC=agent_c.sum(dtype=jnp.int32),
                MapC=map_c.sum(dtype=jnp.int32),
                TimeO=time_o.sum().astype(jnp.int32),
            )
            agent_terminated = {a: old.done[i] for i, a in enumerate(self.agents)}
        infos["agent_terminated"] = agent_terminated
        # Ended for a reason other than the time limit: every robot at its goal or crashed.
        infos["terminated"] = ep_done & jnp.all(new.reached | new.crashed)
        infos["success_rate"] = jnp.mean(new.reached.astype(jnp.float32))
        infos["collision_rate"] = jnp.mean(new.crashed.astype(jnp.float32))
        infos["timeout_rate"] = jnp.mean((~(new.reached | new.crashed)).astype(jnp.float32))
        return infos

    # ------------------------------------------------------------------ sensing
    def lidar_indices(self, state: State, num_samples: int) -> jax.Array:
        """``[n, beams]`` int32 sample index of each reading, searching ``num_samples`` samples.

        ``num_samples`` below the full count searches a shorter beam (the proximity penalty);
        a beam with no hit in it returns ``num_samples``.
        """
        full = len(self.lidar_ranges)
        spacing = float(self.lidar_ranges[1] - self.lidar_ranges[0]) if full > 1 else 0.0
        skip = jnp.eye(self.num_agents, dtype=jnp.bool_)

        angles = jnp.asarray(self.lidar_angles) + state.theta[:, None]  # [n, B]
        wall = _lidar.wall_sample_index(
            state.pos, angles, state.map_data, self.map_obj.cell_size, spacing, num_samples
        )
        robot = _lidar.robot_sample_index(
            state.pos,
            state.theta,
            angles,
            skip,
            self.map_obj,
            float(self.lidar_ranges[-1]),
            self.lidar_range_resolution,
            num_samples,
        )
        return jnp.minimum(wall, robot)

    @jit_method
    def lidar(self, state: State) -> jax.Array:
        """``[n, beams]`` float32 ranges (m), ``lidar_max_range`` where nothing is hit."""
        full = len(self.lidar_ranges)
        index = jnp.minimum(self.lidar_indices(state, full), full - 1)
        return jnp.asarray(self.lidar_ranges)[index]

    def too_close(self, state: State) -> jax.Array:
        """``[n]`` bool: some reading within ``rad + lidar_thresh`` (the proximity penalty)."""
        if self._close_samples == 0:
            return jnp.zeros((self.num_agents,), jnp.bool_)
        if self._close_samples >= len(self.lidar_ranges):
            return jnp.ones((self.num_agents,), jnp.bool_)
        index = self.lidar_indices(state, self._close_samples)
        return jnp.any(index < self._close_samples, axis=1)

    @jit_method
    def get_obs(self, state: State) -> Observations:
        ranges = self.lidar(state)  # [n, B]
        vel = state.vel
        delta = state.goal - state.pos
        goal_dist = jnp.clip(jnp.linalg.norm(delta, axis=1), 0, self.lidar_max_range)
        bearing = wrap(jnp.arctan2(delta[:, 1], delta[:, 0]) - state.theta)
        lam = jnp.broadcast_to(state.rew_lambda, (self.num_agents,))
        if self.normalise_obs:
            ranges = ranges / self.lidar_max_range - 0.5
            vel = vel / jnp.array([self.max_v, self.max_w]) - jnp.array([0.5, 0.0])
            goal_dist = goal_dist / self.lidar_max_range - 0.5
            bearing = bearing / jnp.pi
            lam = lam - 0.5
        own = jnp.concatenate([vel, goal_dist[:, None], bearing[:, None], lam[:, None]], axis=1)
        obs = jnp.concatenate([ranges, own], axis=1).astype(jnp.float32)
        return {a: obs[i] for i, a in enumerate(self.agents)}

    def get_world_state(self, state: State) -> jax.Array:
        """JaxMARL's ``[n, D]`` centralised-critic input: agent one-hot, inner walls, poses,
        goals, velocities, episode progress and the agent's own observation."""
        size = jnp.asarray(self.map_obj.size_m)
        walls = state.map_data[1:-1, 1:-1].ravel().astype(jnp.float32)
        pos = (state.pos / size - 0.5).ravel()
        theta = (state.theta / jnp.pi - 0.5).ravel()
        goal = (state.goal / size - 0.5).ravel()
        vel = (state.vel / jnp.array([self.max_v, self.max_w]) - 0.5).ravel()
        step = jnp.asarray(state.step / self.max_steps - 0.5, jnp.float32)[None]
        shared = jnp.concatenate([walls, pos, theta, goal, vel, step])
        obs = self.get_obs(state)
        own = jnp.stack([obs[a] for a in self.agents])
        shared = jnp.broadcast_to(shared, (self.num_agents, shared.size))
        eye = jnp.eye(self.num_agents, dtype=jnp.float32)
        return jnp.concatenate([eye, shared, own], axis=1).astype(jnp.float32)

    def noop_action(self, agent: str) -> jax.Array:
        return jnp.zeros((2,), jnp.float32)

    def get_monitored_metrics(self) -> list[str]:
        return ["NumC", "GoalR", "AgentC", "MapC", "TimeO", "Return"]


# ---------------------------------------------------------------------- construction checks
def _check_config(cfg: dict[str, Any]) -> None:
    """Raise a clear error for a bad configuration, before anything compiles."""
    if not isinstance(cfg["num_agents"], (int, np.integer)) or cfg["num_agents"] < 1:
        raise ValueError(f"num_agents must be a positive int, got {cfg['num_agents']!r}")
    if cfg["act_type"] not in ("Continuous", "Discrete"):
        raise ValueError(f"act_type must be 'Continuous' or 'Discrete', got {cfg['act_type']!r}")
    if not 0 < cfg["rad"] < 1:
        raise ValueError(
            f"rad (robot radius, m) must be in (0, 1), got {cfg['rad']!r}; "
            "JaxMARL's collision code assumes a radius below one cell"
        )
    beams = cfg["lidar_num_beams"]
    if not isinstance(beams, (int, np.integer)) or beams < 1:
        raise ValueError(f"lidar_num_beams must be an int >= 1, got {beams!r}")
    if cfg["lidar_max_range"] <= 0 or cfg["lidar_range_resolution"] <= 0:
        raise ValueError("lidar_max_range and lidar_range_resolution must be positive")
    if int(cfg["lidar_max_range"] / cfg["lidar_range_resolution"]) < 2:
        raise ValueError(
            "lidar_max_range / lidar_range_resolution must give at least 2 samples per beam, "
            f"got {cfg['lidar_max_range']} / {cfg['lidar_range_resolution']}"
        )
    if cfg["lidar_min_range"] != 0.0:
        raise ValueError("lidar_min_range must be 0.0 (as in JaxMARL)")
    if not cfg["min_v"] < cfg["max_v"]:
        raise ValueError(f"min_v must be below max_v, got {cfg['min_v']} >= {cfg['max_v']}")
    if cfg["act_type"] == "Discrete" and cfg["min_v"] != 0.0:
        raise ValueError("Discrete actions need min_v == 0.0 (as in JaxMARL)")
    for name in ("dt", "max_v_acc", "max_w", "max_w_acc", "goal_radius"):
        if not cfg[name] > 0:
            raise ValueError(f"{name} must be positive, got {cfg[name]!r}")
    if not isinstance(cfg["max_steps"], (int, np.integer)) or cfg["max_steps"] < 1:
        raise ValueError(f"max_steps must be an int >= 1, got {cfg['max_steps']!r}")
    low, high = cfg["lambda_range"]
    if not cfg["fixed_lambda"] and not low <= high:
        raise ValueError(f"lambda_range must be (low, high) with low <= high, got {(low, high)}")
    if cfg["do_sep_reward"]:
        raise NotImplementedError(
            "do_sep_reward=True is not implemented (JaxMARL raises NotImplementedError in step)"
        )
    if cfg["map_id"] not in MAP_IDS:
        close = difflib.get_close_matches(str(cfg["map_id"]), MAP_IDS, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ValueError(f"unknown map_id {cfg['map_id']!r}{hint}; known map ids: {list(MAP_IDS)}")


def _make_map(
    map_id: str, num_agents: int, rad: float, params: dict, check_placement: bool = True
) -> GridMap:
    unknown = set(params) - _MAP_KEYS[map_id]
    if unknown:
        raise TypeError(
            f"unknown map_params {sorted(unknown)} for map_id {map_id!r}; "
            f"accepted: {sorted(_MAP_KEYS[map_id])}"
        )
    kwargs: dict[str, Any] = dict(
        cell_size=float(params.get("cell_size", 0.15 if map_id == "Grid-Rand-Barn" else 1.0)),
        fill=float(params.get("fill", 0.4)),
        sample_test_case_type=params.get("sample_test_case_type", "random"),
        start_pad=float(params.get("start_pad", 1.5)),
        min_dist_to_goal=params.get("min_dist_to_goal"),
        max_dist_to_goal=params.get("max_dist_to_goal"),
        valid_path_check=bool(params.get("valid_path_check", False)),
    )
    if kwargs["sample_test_case_type"] not in ("random", "grid"):
        raise ValueError(
            "map_params['sample_test_case_type'] must be 'random' or 'grid', got "
            f"{kwargs['sample_test_case_type']!r}"
        )
    if kwargs["start_pad"] < 1.0:
        raise ValueError("map_params['start_pad'] must be >= 1.0 (as in JaxMARL)")
    if not 0.0 <= kwargs["fill"] < 1.0:
        raise ValueError(f"map_params['fill'] must be in [0, 1), got {kwargs['fill']}")
    coords = np.asarray(
        params.get("agent_coords", JACKAL_COORDS if map_id == "Grid-Rand-Barn" else SQUARE_COORDS),
        np.float32,
    )
    if coords.ndim != 2 or coords.shape[1] != 2 or coords.shape[0] < 3:
        raise ValueError(f"agent_coords must be [V >= 3, 2] polygon vertices, got {coords.shape}")
    kwargs["coords"] = coords
    kwargs["footprint"] = "circle" if map_id == "Grid-Rand" else "polygon"
    fixed = None
    if map_id == "Grid-Rand-Poly-Single":
        if "map_data" not in params:
            raise ValueError("map_id 'Grid-Rand-Poly-Single' needs map_params['map_data']")
        fixed = parse_map_rows(params["map_data"])[None]
    elif map_id == "Grid-Buffer":
        if params.get("map_grids") is None:
            raise ValueError(
                "map_id 'Grid-Buffer' needs map_params['map_grids']: an [M, H, W] (or [H, W]) "
                "array of 0/1 occupancy grids, one drawn per episode"
            )
        fixed = np.asarray(params["map_grids"], np.int32)
        fixed = fixed[None] if fixed.ndim == 2 else fixed
    if map_id == "Grid-Rand-Barn":
        if num_agents != 1:
            raise ValueError("map_id 'Grid-Rand-Barn' is single-robot: use num_agents=1")
        kwargs["smoothing"] = (
            int(params.get("smoothing_iters", 4)),
            int(params.get("smoothing_upper_count", 3)),
            int(params.get("smoothing_lower_count", 1)),
        )
        kwargs["sample_test_case_type"] = "barn"
        kwargs["valid_path_check"] = True
    if fixed is not None:
        if fixed.ndim != 3 or not np.isin(fixed, (0, 1)).all():
            raise ValueError(f"maps must be [M, H, W] grids of 0/1, got shape {fixed.shape}")
        height, width = fixed.shape[1:]
        if "map_size" in params and tuple(params["map_size"]) != (width, height):
            raise ValueError(
                f"map_params['map_size']={tuple(params['map_size'])} does not match the map "
                f"data's (width, height)=({width}, {height})"
            )
    else:
        width, height = (int(s) for s in params.get("map_size", MAP_PARAMS["map_size"]))
        if width < 3 or height < 3:
            raise ValueError(f"map_size must be at least (3, 3), got {(width, height)}")
    grid = GridMap(
        map_id=map_id,
        num_agents=num_agents,
        rad=rad,
        width=width,
        height=height,
        fixed_maps=fixed,
        **kwargs,
    )
    if check_placement:
        _check_placeable(grid)
    return grid


def _check_placeable(grid: GridMap) -> None:
    """Raise if the sampler can never place every robot's start and goal (a reset would not
    end). Fixed maps are checked one by one; generated maps through the map without inner
    walls, which is drawn with positive probability and admits every case another map does."""
    if grid.fixed_maps is not None:
        for index, map_data in enumerate(grid.fixed_maps):
            problem = grid.placement_problem(map_data)
            if problem is not None:
                which = "the map" if len(grid.fixed_maps) == 1 else f"map {index}"
                raise ValueError(
                    f"{which} of {grid.map_id!r} ({map_data.shape[1]}x{map_data.shape[0]}, "
                    f"{grid.sample_test_case_type!r} cases): cannot place {grid.num_agents} "
                    f"robots' starts and goals: {problem}; free more cells, use fewer agents "
                    "or change map_params"
                )
        return
    # Random starts must be 2 rad start_pad apart: beyond a quarter of the area covered by
    # such discs, drawing them one by one rarely succeeds and resets would take forever.
    low, high, _, _, clear = grid.random_case_limits
    span = high - low
    if grid.sample_test_case_type == "random" and grid.num_agents * np.pi * clear**2 > 0.25 * (
        span.prod()
    ):
        raise ValueError(
            f"{grid.num_agents} robots with start clearance rad * start_pad = {clear:.2f} m "
            f"crowd the {span[0]:.1f} x {span[1]:.1f} m start area of a {grid.width}x"
            f"{grid.height} map too much to place by random sampling; use a larger map_size, "
            "fewer agents or map_params sample_test_case_type='grid'"
        )
    empty = np.ones((grid.height, grid.width), np.int32)
    empty[1:-1, 1:-1] = 0
    problem = grid.placement_problem(empty)
    if problem is not None:
        raise ValueError(
            f"a {grid.width}x{grid.height} {grid.map_id!r} map cannot place {grid.num_agents} "
            f"robots' starts and goals even without inner walls: {problem}; use a larger "
            "map_size, fewer agents or change map_params"
        )
