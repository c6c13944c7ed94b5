"""Shared machinery of the MPE scenarios: the state pytree, the physics and action decoding.

Every scenario is a subclass of :class:`MPEBase`. A subclass describes its entities once, in
its constructor, through :meth:`MPEBase._build` (names, sizes, which entities move, collide or
speak, accelerations, speed limits, reset ranges, colours) and then implements only
``get_obs``, ``_rewards`` and, where it has one, ``_sample_goal``. Everything else (reset,
transition, time limit, action decoding) is shared and vectorised over entities.

Physics follows PettingZoo's MPE (``mpe2._mpe_utils.core.World.step``), in the same order:

1. force on each movable agent = its decoded action ``u`` (``u_noise`` is ``None`` in every
   mpe2 scenario, so no noise is drawn);
2. contact force between every pair of colliding entities,
   ``f = contact_force * delta / dist * k * log(1 + exp(-(dist - dist_min) / k))``, applied to
   the movable ones (all pairs at once, one evaluation per pair: see :func:`pair_deltas`);
3. semi-implicit update of movable entities: ``pos += vel * dt`` with the *old* velocity, then
   ``vel = vel * (1 - damping) + force / mass * dt``, then the speed is clipped to
   ``max_speed`` where an entity has one;
4. communication state ``c`` = the decoded message (zeros for silent agents).

Rewards and observations are computed from the state after the update, like mpe2.
Landmarks never move in any scenario, so only the agent rows of ``p_pos``/``p_vel`` are
integrated; landmark rows are carried over unchanged.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from jaxmarl import spaces
from jaxmarl.env import MultiAgentEnv, jit_method
from jaxmarl.env import State as BaseState
from jaxmarl.typing import Actions, Dones, Infos, Observations, Rewards

DISCRETE_ACT = "Discrete"
CONTINUOUS_ACT = "Continuous"
ACTION_TYPES = (DISCRETE_ACT, CONTINUOUS_ACT)

# World constants shared by every mpe2 scenario (mpe2 ``World.__init__``).
MAX_STEPS = 25  # PettingZoo's max_cycles
DT = 0.1
DAMPING = 0.25
CONTACT_FORCE = 100.0
CONTACT_MARGIN = 1e-3
DEFAULT_SENSITIVITY = 5.0  # mpe2 multiplies movement by agent.accel, or 5.0 when it is None
DEFAULT_SIZE = 0.05  # mpe2 Entity.size
MOVE_DIM = 5  # movement part of an action: no-op, -x, +x, -y, +y


@struct.dataclass
class State(BaseState):
    """State of every MPE scenario (one pytree structure for the whole family).

    Attributes:
        done: ``[num_agents]`` bool, the episode has ended (time limit reached).
        step: ``[]`` int32, steps taken in the current episode.
        p_pos: ``[num_entities, 2]`` float32, positions; agents first (in ``env.agents``
            order), then landmarks (in ``env.landmarks`` order).
        p_vel: ``[num_entities, 2]`` float32, velocities (always zero for landmarks).
        c: ``[num_agents, dim_c]`` float32, each agent's last message (zeros when silent).
        goal: int32 with a scenario-specific shape: ``[0]`` where a scenario has no goal,
            ``[]`` for one goal landmark index, ``[2]`` for two indices (see each scenario).
    """

    p_pos: jax.Array
    p_vel: jax.Array
    c: jax.Array
    goal: jax.Array


def check_count(name: str, value: Any, minimum: int) -> int:
    """``value`` as an ``int`` >= ``minimum``, or a ``ValueError`` that names the argument."""
    try:
        number = operator.index(value)
    except TypeError:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}") from None
    if isinstance(value, bool) or number < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return number


def check_fixed(name: str, value: Any, expected: int, scenario: str) -> int:
    """Scenarios with a fixed layout accept their counts only at the one supported value."""
    number = check_count(name, value, 1)
    if number != expected:
        raise ValueError(f"{scenario} supports only {name}={expected}, got {value!r}")
    return number


def check_action_type(action_type: Any) -> str:
    if action_type not in ACTION_TYPES:
        raise ValueError(f"action_type must be one of {list(ACTION_TYPES)}, got {action_type!r}")
    return action_type


def check_ratio(name: str, value: Any) -> float:
    try:
        ratio = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number in [0, 1], got {value!r}") from None
    if not 0.0 <= ratio <= 1.0:
        raise ValueError(f"{name} must be in [0, 1], got {value!r}")
    return ratio


def drop_diagonal(pairs: jax.Array) -> jax.Array:
    """``[n, n, ...] -> [n, n - 1, ...]``: row ``i`` keeps every column but ``i``, in order.

    Slices and reshapes only (no gather): dropping the first element of the flattened matrix
    lines the diagonal up as the last column of an ``[n - 1, n + 1]`` view.
    """
    n = pairs.shape[0]
    tail = pairs.shape[2:]
    flat = pairs.reshape((n * n, *tail))[1:]
    return flat.reshape((n - 1, n + 1, *tail))[:, :n].reshape((n, n - 1, *tail))


def softplus(x: jax.Array) -> jax.Array:
    """``log(1 + exp(x))`` the way ``numpy.logaddexp(0, x)`` evaluates it."""
    return jnp.maximum(x, 0.0) + jnp.log1p(jnp.exp(-jnp.abs(x)))


def exact_matmul(a: jax.Array, b: np.ndarray) -> jax.Array:
    """``a @ b`` in full float32 on every backend (no TF32/bf16 passes on accelerators)."""
    return jnp.matmul(a, b, precision=jax.lax.Precision.HIGHEST)


def pair_difference_matrix(num_rows: int, first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """``[num_rows, P]`` with ``+1`` at ``(first[p], p)`` and ``-1`` at ``(second[p], p)``."""
    diff = np.zeros((num_rows, len(first)), dtype=np.float32)
    diff[first, np.arange(len(first))] = 1.0
    diff[second, np.arange(len(first))] = -1.0
    return diff


def pair_deltas(pos: jax.Array, diff: np.ndarray) -> tuple[jax.Array, jax.Array]:
    """``([P], [P])``: x and y of ``pos[first] - pos[second]`` for the pairs of ``diff``.

    A product with a constant 0/+-1 matrix is exact and, under ``vmap``, a GEMM whose output
    has the pairs on the minor axis, so the elementwise work that follows vectorises; on
    CPU this is much cheaper than broadcasting ``[n, n, 2]`` arrays (tiny minor axes).
    x and y are separate products for the same reason.
    """
    return exact_matmul(pos[:, 0], diff), exact_matmul(pos[:, 1], diff)


def pair_distances(pos: jax.Array, diff: np.ndarray) -> jax.Array:
    """``[P]`` Euclidean distances of the pairs of ``diff`` (see :func:`pair_deltas`)."""
    dx, dy = pair_deltas(pos, diff)
    return jnp.sqrt(jnp.square(dx) + jnp.square(dy))


def cross_pairs(num_rows: int, first: Sequence[int], second: Sequence[int]) -> np.ndarray:
    """Difference matrix of every ``(f, s)``, ``f`` in ``first`` (outer) and ``s`` in
    ``second`` (inner): distances reshape to ``[len(first), len(second)]``."""
    grid_first, grid_second = np.meshgrid(np.asarray(first), np.asarray(second), indexing="ij")
    return pair_difference_matrix(num_rows, grid_first.ravel(), grid_second.ravel())


def bound_penalty(abs_pos: jax.Array) -> jax.Array:
    """mpe2's ``bound(x)`` of simple_tag / simple_world_comm, elementwise on ``|x|``."""
    ramp = (abs_pos - 0.9) * 10.0
    wall = jnp.minimum(jnp.exp(2.0 * abs_pos - 2.0), 10.0)
    return jnp.where(abs_pos < 0.9, 0.0, jnp.where(abs_pos < 1.0, ramp, wall))


def _colour255(rgb: Sequence[float]) -> tuple[int, int, int]:
    r, g, b = (int(round(255 * float(x))) for x in rgb[:3])
    return (r, g, b)


class MPEBase(MultiAgentEnv):
    """Common base of the MPE scenarios (JaxMARL's ``SimpleMPE`` plays this role there).

    Static per-entity properties are NumPy arrays (compile-time constants); JaxMARL's
    attribute names are kept: ``rad``, ``moveable``, ``silent``, ``collide``, ``mass``,
    ``accel``, ``max_speed`` (``inf`` = no limit), ``colour`` (RGB 0-255), ``dim_c``,
    ``dim_p``, ``dt``, ``damping``, ``contact_force``, ``contact_margin``, ``landmarks``,
    ``num_landmarks``, ``num_entities``, ``a_to_i``, ``l_to_i``.
    """

    observations_from_state = True  # reset/step_env return get_obs(state)

    dim_p = 2
    dt = DT
    damping = DAMPING
    contact_force = CONTACT_FORCE
    contact_margin = CONTACT_MARGIN

    def _build(
        self,
        *,
        agents: Sequence[str],
        landmarks: Sequence[str],
        action_type: str,
        max_steps: int,
        dim_c: int,
        obs_dims: dict[str, int],
        agent_size: Sequence[float] | float = DEFAULT_SIZE,
        landmark_size: Sequence[float] | float = DEFAULT_SIZE,
        movable: Sequence[bool] | bool = True,
        silent: Sequence[bool] | bool = True,
        agent_collide: Sequence[bool] | bool = False,
        landmark_collide: Sequence[bool] | bool = False,
        accel: Sequence[float | None] | float | None = None,
        max_speed: Sequence[float | None] | float | None = None,
        landmark_spawn: Sequence[float] | float = 1.0,
        colours: Sequence[Sequence[float]] | None = None,
        goal_shape: tuple[int, ...] = (0,),
    ) -> None:
        """Describe the world; called once from each scenario's constructor.

        Args:
            agents / landmarks: entity names; agents occupy the first rows of ``p_pos``.
            action_type: ``"Discrete"`` or ``"Continuous"`` (validated here).
            max_steps: episode length (validated here).
            dim_c: communication channel size.
            obs_dims: observation size per agent.
            agent_size / landmark_size: radii (scalar or one per entity).
            movable / silent / agent_collide: per-agent flags (scalar or sequence).
            landmark_collide: per-landmark collision flags.
            accel: movement sensitivity per agent (``None`` = mpe2's default 5.0).
            max_speed: speed limit per agent (``None`` = none).
            landmark_spawn: landmarks reset uniformly in ``[-s, s]^2`` (agents in ``[-1, 1]^2``).
            colours: RGB in ``[0, 1]`` per entity, for rendering.
            goal_shape: shape of ``State.goal``.
        """
        check_action_type(action_type)
        self.max_steps = check_count("max_steps", max_steps, 1)
        super().__init__(num_agents=len(agents))
        self.agents = list(agents)
        self.landmarks = list(landmarks)
        self.action_type = action_type
        self.discrete = action_type == DISCRETE_ACT
        self.dim_c = int(dim_c)
        self.num_landmarks = len(self.landmarks)
        self.num_entities = self.num_agents + self.num_landmarks
        self.a_to_i = {a: i for i, a in enumerate(self.agents)}
        self.l_to_i = {lm: i + self.num_agents for i, lm in enumerate(self.landmarks)}
        self.agent_range = np.arange(self.num_agents)
        self.entity_range = np.arange(self.num_entities)
        self.goal_shape = tuple(goal_shape)

        num_agents, num_landmarks = self.num_agents, self.num_landmarks

        def per(value: Any, n: int, dtype: Any) -> np.ndarray:
            out = np.asarray(value, dtype=dtype)
            return np.broadcast_to(out, (n,)).copy() if out.ndim == 0 else out

        self.rad = np.concatenate(
            [per(agent_size, num_agents, np.float32), per(landmark_size, num_landmarks, np.float32)]
        )
        self.moveable = np.concatenate(
            [per(movable, num_agents, bool), np.zeros(num_landmarks, dtype=bool)]
        )
        self.silent = per(silent, num_agents, bool)
        self.collide = np.concatenate(
            [per(agent_collide, num_agents, bool), per(landmark_collide, num_landmarks, bool)]
        )
        self.mass = np.ones(self.num_entities, dtype=np.float32)
        accel_list = accel if isinstance(accel, Sequence) else [accel] * num_agents
        self.accel = np.array(
            [DEFAULT_SENSITIVITY if a is None else a for a in accel_list], dtype=np.float32
        )
        speed_list = max_speed if isinstance(max_speed, Sequence) else [max_speed] * num_agents
        self.max_speed = np.array(
            [np.inf if s is None else s for s in speed_list], dtype=np.float32
        )
        spawn = per(landmark_spawn, num_landmarks, np.float32)
        self._spawn_half_width = np.concatenate([np.ones(num_agents, np.float32), spawn])[:, None]
        if colours is None:
            colours = [(0.25, 0.25, 0.25)] * num_agents + [(0.75, 0.75, 0.75)] * num_landmarks
        self.colours = np.asarray(colours, dtype=np.float32)
        self.colour = [_colour255(c) for c in self.colours]

        # Collisions as a list of unique pairs (a < b, a an agent, both colliding, at least one
        # movable). Colliders come first in p_pos in every scenario, so they are a prefix.
        colliders = np.flatnonzero(self.collide)
        self._num_colliders = 0 if colliders.size == 0 else int(colliders.max()) + 1
        if colliders.size and colliders.size != self._num_colliders:
            raise ValueError("colliding entities must come first in p_pos")
        pairs = [
            (a, b)
            for a in range(num_agents)
            for b in range(a + 1, self._num_colliders)
            if self.collide[a] and self.collide[b] and (self.moveable[a] or self.moveable[b])
        ]
        self._has_contacts = bool(pairs)
        if pairs:
            first, second = (np.array(side) for side in zip(*pairs))
            self._contact_diff = pair_difference_matrix(self._num_colliders, first, second)
            self._contact_dist_min = (self.rad[first] + self.rad[second]).astype(np.float32)
            # Pair p pushes its first entity along +f and its second along -f (movable only).
            spread = np.zeros((len(pairs), num_agents), dtype=np.float32)
            rows = np.arange(len(pairs))
            spread[rows, first] = self.moveable[first].astype(np.float32)
            is_agent = second < num_agents
            spread[rows[is_agent], second[is_agent]] = -self.moveable[second[is_agent]].astype(
                np.float32
            )
            self._contact_spread = spread
        self._has_speed_limit = bool(np.isfinite(self.max_speed).any())
        self._move_scale = (self.accel * self.moveable[:num_agents]).astype(np.float32)[:, None]

        # Action layout per agent, as mpe2's SimpleEnv builds it: movement (5) if movable, then
        # a message (dim_c) if not silent; discrete actions encode them as move + 5 * message.
        self._speaks = (~self.silent) & (self.dim_c > 0)
        self._any_speaks = bool(self._speaks.any())
        self._any_moves = bool(self.moveable[:num_agents].any())
        self.action_spaces = {}
        self.observation_spaces = {}
        for i, agent in enumerate(self.agents):
            moves, speaks = bool(self.moveable[i]), bool(self._speaks[i])
            if self.discrete:
                size = (MOVE_DIM if moves else 1) * (self.dim_c if speaks else 1)
                self.action_spaces[agent] = spaces.Discrete(size)
            else:
                size = (MOVE_DIM if moves else 0) + (self.dim_c if speaks else 0)
                self.action_spaces[agent] = spaces.Box(0.0, 1.0, (size,), jnp.float32)
            self.observation_spaces[agent] = spaces.Box(
                -np.inf, np.inf, (int(obs_dims[agent]),), jnp.float32
            )
        self._discrete_sizes = np.array(
            [self.action_spaces[a].n for a in self.agents] if self.discrete else [], np.int32
        )
        self._move_radix = np.where(self.moveable[:num_agents], MOVE_DIM, 1).astype(np.int32)

    # ------------------------------------------------------------------ reset
    @jit_method
    def reset(self, key: jax.Array) -> tuple[Observations, State]:
        """Agents uniform in ``[-1, 1]^2``, landmarks in the scenario's range, at rest."""
        if self.goal_shape == (0,):
            pos_key = key
            goal = jnp.zeros((0,), dtype=jnp.int32)
        else:
            pos_key, goal_key = jax.random.split(key)
            goal = self._sample_goal(goal_key)
        unit = jax.random.uniform(
            pos_key, (self.num_entities, self.dim_p), jnp.float32, minval=-1.0, maxval=1.0
        )
        state = State(
            done=jnp.zeros((self.num_agents,), dtype=jnp.bool_),
            step=jnp.zeros((), dtype=jnp.int32),
            p_pos=unit * self._spawn_half_width,
            p_vel=jnp.zeros((self.num_entities, self.dim_p), dtype=jnp.float32),
            c=jnp.zeros((self.num_agents, self.dim_c), dtype=jnp.float32),
            goal=goal,
        )
        return self.get_obs(state), state

    def _sample_goal(self, key: jax.Array) -> jax.Array:
        """Scenario hook: the random part of the reset besides positions (int32)."""
        raise NotImplementedError

    # ------------------------------------------------------------------ step
    @jit_method
    def step_env(
        self, key: jax.Array, state: State, actions: Actions
    ) -> tuple[Observations, State, Rewards, Dones, Infos]:
        """One world step; ``dones`` are all true once ``step`` reaches ``max_steps``."""
        u, c = self.decode_actions(actions)
        u = self._scripted_forces(key, state, u)
        p_pos, p_vel = self._integrate(state.p_pos, state.p_vel, u)
        step = state.step + 1
        done = step >= self.max_steps
        state = state.replace(
            p_pos=p_pos,
            p_vel=p_vel,
            c=c,
            step=step,
            done=jnp.broadcast_to(done, (self.num_agents,)),
        )
        rewards = self._rewards(state)
        reward_dict = {agent: rewards[i] for i, agent in enumerate(self.agents)}
        dones = {agent: done for agent in self.agents}
        dones["__all__"] = done
        return self.get_obs(state), state, reward_dict, dones, {}

    def _scripted_forces(self, key: jax.Array, state: State, u: jax.Array) -> jax.Array:
        """Scenario hook for scripted agents (facmac's prey); default: the decoded actions."""
        return u

    def _rewards(self, state: State) -> jax.Array:
        """Scenario hook: ``[num_agents]`` float32 rewards for the post-step ``state``."""
        raise NotImplementedError

    # ------------------------------------------------------------------ actions
    def decode_actions(self, actions: Actions) -> tuple[jax.Array, jax.Array]:
        """Actions dict -> (``u`` [num_agents, 2] movement force, ``c`` [num_agents, dim_c]).

        Discrete: ``a % 5`` moves (0 none, 1 -x, 2 +x, 3 -y, 4 +y) and ``a // 5`` picks the
        one-hot message, for agents that both move and speak (mpe2's encoding); an
        out-of-range value is replaced by ``0``. Continuous: clipped to ``[0, 1]`` like mpe2's
        ``ClipOutOfBoundsWrapper``; ``u = (a[2] - a[1], a[4] - a[3])`` and the message is
        the next ``dim_c`` entries. Movement is scaled by the agent's sensitivity (``accel``).
        """
        if self.discrete:
            return self._decode_discrete(actions)
        return self._decode_continuous(actions)

    def _decode_discrete(self, actions: Actions) -> tuple[jax.Array, jax.Array]:
        a = jnp.stack([jnp.asarray(actions[agent]) for agent in self.agents]).astype(jnp.int32)
        if self._any_speaks:
            # Out of range -> 0 before splitting into movement and message.
            a = jnp.where((a >= 0) & (a < self._discrete_sizes), a, 0)
            move = a % self._move_radix
        else:
            # Movement only: values outside 1..4 already select no movement below.
            move = a
        if self._any_moves:
            axis_x = (move == 2).astype(jnp.float32) - (move == 1).astype(jnp.float32)
            axis_y = (move == 4).astype(jnp.float32) - (move == 3).astype(jnp.float32)
            u = jnp.stack([axis_x, axis_y], axis=-1) * self._move_scale
        else:
            u = jnp.zeros((self.num_agents, self.dim_p), jnp.float32)
        if self._any_speaks:
            word = a // self._move_radix
            one_hot = word[:, None] == np.arange(self.dim_c)[None, :]
            c = (one_hot & self._speaks[:, None]).astype(jnp.float32)
        else:
            c = jnp.zeros((self.num_agents, self.dim_c), jnp.float32)
        return u, c

    def _decode_continuous(self, actions: Actions) -> tuple[jax.Array, jax.Array]:
        acts = [jnp.clip(jnp.asarray(actions[a], jnp.float32), 0.0, 1.0) for a in self.agents]
        if self._any_moves:
            zeros_move = jnp.zeros((MOVE_DIM,), jnp.float32)
            move = jnp.stack(
                [a[:MOVE_DIM] if self.moveable[i] else zeros_move for i, a in enumerate(acts)]
            )
            u = jnp.stack([move[:, 2] - move[:, 1], move[:, 4] - move[:, 3]], axis=-1)
            u = u * self._move_scale
        else:
            u = jnp.zeros((self.num_agents, self.dim_p), jnp.float32)
        if self._any_speaks:
            silence = jnp.zeros((self.dim_c,), jnp.float32)
            words = []
            for i, a in enumerate(acts):
                start = MOVE_DIM if self.moveable[i] else 0
                words.append(a[start : start + self.dim_c] if self._speaks[i] else silence)
            c = jnp.stack(words)
        else:
            c = jnp.zeros((self.num_agents, self.dim_c), jnp.float32)
        return u, c

    # ------------------------------------------------------------------ physics
    def _integrate(
        self, p_pos: jax.Array, p_vel: jax.Array, u: jax.Array
    ) -> tuple[jax.Array, jax.Array]:
        """mpe2's ``World.step`` for the agent rows; landmark rows are returned unchanged."""
        n = self.num_agents
        pos, vel = p_pos[:n], p_vel[:n]
        force = u
        if self._has_contacts:
            force = force + self._contact_forces(p_pos)
        moves = self.moveable[:n, None]
        new_pos = pos + vel * self.dt
        new_vel = vel * (1.0 - self.damping) + (force / self.mass[:n, None]) * self.dt
        if self._has_speed_limit:
            speed = jnp.sqrt(jnp.square(new_vel[:, 0]) + jnp.square(new_vel[:, 1]))[:, None]
            over = speed > self.max_speed[:, None]
            capped = new_vel / jnp.where(over, speed, 1.0) * self.max_speed[:, None]
            new_vel = jnp.where(over, capped, new_vel)
        if not moves.all():
            new_pos = jnp.where(moves, new_pos, pos)
            new_vel = jnp.where(moves, new_vel, vel)
        if self.num_landmarks:
            new_pos = jnp.concatenate([new_pos, p_pos[n:]], axis=0)
            new_vel = jnp.concatenate([new_vel, p_vel[n:]], axis=0)
        return new_pos, new_vel

    def _contact_forces(self, p_pos: jax.Array) -> jax.Array:
        """``[num_agents, 2]``: summed soft contact forces, one evaluation per colliding pair.

        One evaluation per pair: differences gathered and forces scattered back with constant
        0/+-1 matrices (exact: they only add and negate; see :func:`pair_deltas`).
        """
        dx, dy = pair_deltas(p_pos[: self._num_colliders], self._contact_diff)
        dist = jnp.sqrt(jnp.square(dx) + jnp.square(dy))
        k = self.contact_margin
        penetration = softplus(-(dist - self._contact_dist_min) / k) * k
        # Same operation order as mpe2: contact_force * delta / dist * penetration.
        force_x = self.contact_force * dx / dist * penetration
        force_y = self.contact_force * dy / dist * penetration
        spread = self._contact_spread
        return jnp.stack([exact_matmul(force_x, spread), exact_matmul(force_y, spread)], axis=-1)

    # ------------------------------------------------------------------ helpers
    def _split(self, matrix: jax.Array, agents: Sequence[str] | None = None) -> Observations:
        """Rows of ``matrix`` keyed by agent name."""
        names = self.agents if agents is None else agents
        return {agent: matrix[i] for i, agent in enumerate(names)}

    def is_collision(self, a: int, b: int, state: State) -> jax.Array:
        """Whether entities ``a`` and ``b`` overlap (mpe2's scenario ``is_collision``)."""
        dist = jnp.sqrt(jnp.sum(jnp.square(state.p_pos[a] - state.p_pos[b])))
        return dist < self.rad[a] + self.rad[b]

    def entity_colours(self, state: State) -> np.ndarray:
        """``[num_entities, 3]`` RGB in ``[0, 1]`` for rendering; goal scenarios override."""
        return self.colours
