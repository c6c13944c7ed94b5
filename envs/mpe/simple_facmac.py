"""``MPE_simple_facmac_*``: cooperative predators with a limited view radius chase scripted prey.

The FACMAC predator-prey task (Peng et al. 2021) as JaxMARL 0.2.0 implements it; there is no
PettingZoo/mpe2 counterpart, so JaxMARL's behaviour *is* the reference for these ids and is
reproduced step for step, including the quirks listed in this folder's README (which agent
the prey policy is evaluated for, its sampling, its collision mask, the summed view-radius
test). A corrected prey policy would change the dynamics and therefore needs a new id
(``..._v2``), not a silent fix here.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxmarl.env import jit_method
from jaxmarl.envs.mpe._world import (
    CONTINUOUS_ACT,
    MAX_STEPS,
    MPEBase,
    State,
    bound_penalty,
    check_count,
    drop_diagonal,
)
from jaxmarl.typing import Observations

SCORE_FUNCTIONS = ("sum", "min")
NUM_CANDIDATES = 100  # positions the prey policy samples around itself
NUM_WAYPOINTS = 5  # reachability checks along each candidate move ("sum" score)
BLOCKED = -9999999.0  # score of a rejected candidate
NO_LIMIT_RADIUS = 999999.0  # view_radius=-1 means "see everything" (JaxMARL)


class SimpleFacmacMPE(MPEBase):
    """FACMAC predator-prey, JaxMARL 0.2.0's ``SimpleFacmacMPE``.

    Agents: ``adversary_0 .. adversary_{V-1}`` (the learners; size 0.075, accel 3, max
    speed 1.0) then ``agent_0 .. agent_{G-1}`` (prey; size 0.05, max speed 1.3). The prey
    are listed in ``agents`` and take actions like JaxMARL, but their actions are ignored:
    a scripted policy moves them (force = the chosen offset, not scaled by ``accel``).
    Landmarks ``landmark 0 ..`` (size 0.2) spawn in ``[-1, 1]^2``; everything collides.

    Observation ``[4 + 2L + 2(N-1) + 2]`` float32 for every agent (16 by default; 28 for 6a,
    40 for 9a): own velocity, own position, landmark positions relative to the agent (2L),
    other agents' relative positions (2(N-1), agent order without self), then for
    adversaries the velocity of the last other agent (the last prey) and for prey two zeros.
    View radius (JaxMARL semantics): all landmarks are zeroed when the norm of the whole
    ``[L, 2]`` relative-landmark block exceeds ``view_radius``; likewise all other agents'
    positions and that velocity.

    Action: ``Box(0, 1, (5,))`` (JaxMARL, the default) or ``Discrete(5)``.

    Reward: adversaries (shared) ``+10`` per (adversary, prey) contact; prey ``-10`` per
    contact of the *last* prey (JaxMARL's indexing) and the arena bound penalty of simple_tag.

    Episode: truncated after ``max_steps`` steps (JaxMARL: one step later); never terminated.

    State: ``goal`` is ``[0]`` int32 (unused).

    Example::

        env = SimpleFacmacMPE3a()
        obs, state = env.reset(jax.random.key(0))
        actions = {a: jnp.full((5,), 0.5, jnp.float32) for a in env.agents}
        obs, state, rewards, dones, infos = env.step(jax.random.key(1), state, actions)
    """

    def __init__(
        self,
        num_good_agents: int = 1,
        num_adversaries: int = 3,
        num_landmarks: int = 2,
        view_radius: float = 1.5,
        score_function: str = "sum",
        action_type: str = CONTINUOUS_ACT,
        max_steps: int = MAX_STEPS,
    ) -> None:
        self.num_good_agents = check_count("num_good_agents", num_good_agents, 1)
        self.num_adversaries = check_count("num_adversaries", num_adversaries, 1)
        num_landmarks = check_count("num_landmarks", num_landmarks, 0)
        if score_function not in SCORE_FUNCTIONS:
            raise ValueError(
                f"score_function must be one of {list(SCORE_FUNCTIONS)}, got {score_function!r}"
            )
        try:
            radius = float(view_radius)
        except (TypeError, ValueError):
            raise ValueError(f"view_radius must be a number, got {view_radius!r}") from None
        self.score_function = score_function
        self.view_radius = NO_LIMIT_RADIUS if radius == -1 else radius
        adv, good = self.num_adversaries, self.num_good_agents
        self.adversaries = [f"adversary_{i}" for i in range(adv)]
        self.good_agents = [f"agent_{i}" for i in range(good)]
        agents = self.adversaries + self.good_agents
        obs_dim = 4 + 2 * num_landmarks + 2 * (len(agents) - 1) + 2
        self._build(
            agents=agents,
            landmarks=[f"landmark {i}" for i in range(num_landmarks)],
            action_type=action_type,
            max_steps=max_steps,
            dim_c=2,
            obs_dims={a: obs_dim for a in agents},
            agent_size=[0.075] * adv + [0.05] * good,
            landmark_size=0.2,
            agent_collide=True,
            landmark_collide=True,
            accel=[3.0] * adv + [4.0] * good,
            max_speed=[1.0] * adv + [1.3] * good,
            colours=[(0.85, 0.35, 0.35)] * adv
            + [(0.35, 0.85, 0.35)] * good
            + [(0.25, 0.25, 0.25)] * num_landmarks,
        )
        # JaxMARL evaluates prey i's policy from entity V - 1 + 2i (the last adversary for the
        # first prey); JAX clamps indices past the end, so this does too.
        self._policy_entity = np.minimum(adv - 1 + 2 * np.arange(good), self.num_entities - 1)
        # JaxMARL's prey reward reads collision row V + i of a [G, V] table: clamped to G - 1.
        self._prey_collision_row = np.minimum(adv + np.arange(good), good - 1)

    # ------------------------------------------------------------------ scripted prey
    def _scripted_forces(self, key: jax.Array, state: State, u: jax.Array) -> jax.Array:
        prey_moves = self._prey_policy(key, state)
        return jnp.concatenate([u[: self.num_adversaries], prey_moves], axis=0)

    def _prey_policy(self, key: jax.Array, state: State) -> jax.Array:
        """``[G, 2]`` prey forces: the best of 100 offsets sampled in the unit disc.

        Every prey draws the same candidates (JaxMARL reuses the step key for each prey).

        Written for speed, with the same float operations as the straightforward version:
        x and y are separate arrays and the candidate axis is the minor one (no trailing
        size-2 axis, so the elementwise work vectorises under ``vmap``), and the contact test
        ``sqrt(d2) < r`` is evaluated as ``d2 < t`` with ``t`` the exact threshold of
        :func:`sqrt_less_threshold` (bitwise the same decisions, no square root); square roots
        are taken only for the distances that enter the score.
        """
        length_key, angle_key = _two_subkeys(key)
        length = jnp.sqrt(jax.random.uniform(length_key, (NUM_CANDIDATES,), minval=0.0, maxval=1.0))
        angle = jnp.pi * jnp.sqrt(
            jax.random.uniform(angle_key, (NUM_CANDIDATES,), minval=0.0, maxval=2.0)
        )
        cos, sin = jnp.cos(angle), jnp.sin(angle)
        entity = self._policy_entity
        adv = self.num_adversaries
        pos_x, pos_y = state.p_pos[:, 0], state.p_pos[:, 1]  # [E]
        origin_x, origin_y = pos_x[entity][:, None], pos_y[entity][:, None]  # [G, 1]
        contact_radius = self.rad[None, :] + self.rad[entity][:, None]  # [G, E], float32

        if self.score_function == "sum":
            fractions = np.arange(1, NUM_WAYPOINTS + 1, dtype=np.float32)
            waypoint_len = (length / float(NUM_WAYPOINTS))[None, :] * fractions[:, None]  # [W, n]
            probe_x = (waypoint_len * cos)[None] + origin_x[:, None]  # [G, W, n]
            probe_y = (waypoint_len * sin)[None] + origin_y[:, None]
            dx = pos_x[None, None, :, None] - probe_x[:, :, None, :]  # [G, W, E, n]
            dy = pos_y[None, None, :, None] - probe_y[:, :, None, :]
            d2 = jnp.square(dx) + jnp.square(dy)
            limit = sqrt_less_threshold(contact_radius, d2.dtype)[:, None, :, None]
            # JaxMARL keeps a candidate only if *every* waypoint touches something.
            kept = jnp.all(jnp.any(d2 < limit, axis=2), axis=1)  # [G, n]
            last = jnp.sqrt(d2[:, -1, :adv])  # [G, V, n], distances to the adversaries
            total = last[:, 0]
            for i in range(1, adv):  # left to right, as the reduction over V adds them
                total = total + last[:, i]
            scores = jnp.where(kept, 0.0, BLOCKED) + total
        else:
            probe_x = (length * cos)[None] + origin_x  # [G, n]
            probe_y = (length * sin)[None] + origin_y
            dx = pos_x[None, :adv, None] - probe_x[:, None]  # [G, V, n]
            dy = pos_y[None, :adv, None] - probe_y[:, None]
            d2 = jnp.square(dx) + jnp.square(dy)
            limit = sqrt_less_threshold(contact_radius[:, :adv], d2.dtype)[:, :, None]
            kept = jnp.any(d2 < limit, axis=1)  # [G, n]
            # JaxMARL's "nearest adversary" is an argmin over a scalar: always adversary 0.
            scores = jnp.where(kept, 0.0, BLOCKED) + jnp.sqrt(d2[:, 0])

        best = jnp.argmax(scores, axis=-1)  # [G]
        best_score = jnp.take_along_axis(scores, best[:, None], axis=-1)
        choice = jnp.stack([length[best] * cos[best], length[best] * sin[best]], axis=-1)
        return jnp.where(best_score < 0, choice * 0.0, choice).astype(jnp.float32)

    # ------------------------------------------------------------------ observations
    def _views(self, state: State, masked: bool) -> jax.Array:
        n, adv = self.num_agents, self.num_adversaries
        pos, vel = state.p_pos[:n], state.p_vel[:n]
        landmark_rel = state.p_pos[None, n:] - pos[:, None]  # [N, L, 2]
        other_rel = drop_diagonal(pos[None, :] - pos[:, None])  # [N, N-1, 2]
        # Velocity of the last agent other than self (n >= 2 always), [N, 2].
        last_other_vel = jnp.where((np.arange(n) == n - 1)[:, None], vel[n - 2], vel[n - 1])
        if masked:
            far_landmarks = jnp.sqrt(jnp.sum(jnp.square(landmark_rel), axis=(1, 2))) > (
                self.view_radius
            )
            far_others = jnp.sqrt(jnp.sum(jnp.square(other_rel), axis=(1, 2))) > self.view_radius
            landmark_rel = jnp.where(far_landmarks[:, None, None], 0.0, landmark_rel)
            other_rel = jnp.where(far_others[:, None, None], 0.0, other_rel)
            last_other_vel = jnp.where(far_others[:, None], 0.0, last_other_vel)
        is_prey = (np.arange(n) >= adv)[:, None]
        tail = jnp.where(is_prey, 0.0, last_other_vel)
        return jnp.concatenate(
            [vel, pos, landmark_rel.reshape(n, -1), other_rel.reshape(n, -1), tail], axis=1
        )

    @jit_method
    def get_obs(self, state: State) -> Observations:
        return self._split(self._views(state, masked=True))

    def get_world_state(self, state: State) -> jax.Array:
        """Every agent's observation without the view-radius mask, concatenated."""
        return self._views(state, masked=False).reshape(-1)

    # ------------------------------------------------------------------ rewards
    def _rewards(self, state: State) -> jax.Array:
        adv, n = self.num_adversaries, self.num_agents
        delta = state.p_pos[adv:n, None] - state.p_pos[None, :adv]  # [G, V, 2]
        dist = jnp.sqrt(jnp.sum(jnp.square(delta), axis=-1))
        caught = (dist < self.rad[adv:n, None] + self.rad[None, :adv]).astype(jnp.float32)
        adv_reward = 10.0 * jnp.sum(caught)
        prey_caught = jnp.sum(caught[self._prey_collision_row], axis=-1)
        out_of_bounds = jnp.sum(bound_penalty(jnp.abs(state.p_pos[adv:n])), axis=-1)
        prey_reward = -10.0 * prey_caught - out_of_bounds
        return jnp.concatenate([jnp.broadcast_to(adv_reward, (adv,)), prey_reward])


def sqrt_less_threshold(radius: np.ndarray, dtype: Any) -> np.ndarray:
    """``t`` with ``sqrt(x) < r  <=>  x < t`` for every ``x`` of ``dtype`` (elementwise in ``r``).

    IEEE square roots are correctly rounded, hence monotonic, so ``{x : sqrt(x) < r}`` is the
    interval below the smallest ``x`` whose rounded root reaches ``r``: that ``x`` is ``t``,
    found here by stepping ulp by ulp from ``r * r`` and checked on both sides. ``radius`` is
    converted to ``dtype`` first, like the comparison itself promotes it (float32 constants
    against float64 distances under ``enable_x64``). NaN compares false both ways. Assumes the
    backend's ``sqrt`` is correctly rounded, as XLA's CPU and GPU ones are (checked against
    ``jnp.sqrt`` on CPU for +-5000 ulps around each facmac threshold, float32 and float64).
    """
    dtype = np.dtype(dtype)
    r = np.asarray(radius).astype(dtype)
    out = np.empty_like(r)
    for index, value in np.ndenumerate(r):
        t = value * value
        while np.sqrt(t) < value:
            t = np.nextafter(t, dtype.type(np.inf))
        while np.sqrt(np.nextafter(t, dtype.type(0))) >= value and t > 0:
            t = np.nextafter(t, dtype.type(0))
        below = np.nextafter(t, dtype.type(0))
        assert np.sqrt(t) >= value and (t == 0 or np.sqrt(below) < value)
        out[index] = t
    return out


def _two_subkeys(key: jax.Array) -> tuple[jax.Array, jax.Array]:
    """JaxMARL's ``key, sub = split(key)`` twice: the two ``sub`` keys."""
    key, first = jax.random.split(key)
    _, second = jax.random.split(key)
    return first, second


class SimpleFacmacMPE3a(SimpleFacmacMPE):
    """FACMAC 3 predators vs 1 prey, 2 landmarks, view radius 1.5, ``"min"`` prey score."""

    def __init__(self, action_type: str = CONTINUOUS_ACT, max_steps: int = MAX_STEPS) -> None:
        super().__init__(
            num_good_agents=1,
            num_adversaries=3,
            num_landmarks=2,
            view_radius=1.5,
            score_function="min",
            action_type=action_type,
            max_steps=max_steps,
        )


class SimpleFacmacMPE6a(SimpleFacmacMPE):
    """FACMAC 6 predators vs 2 prey, 4 landmarks, view radius 1.5, ``"min"`` prey score."""

    def __init__(self, action_type: str = CONTINUOUS_ACT, max_steps: int = MAX_STEPS) -> None:
        super().__init__(
            num_good_agents=2,
            num_adversaries=6,
            num_landmarks=4,
            view_radius=1.5,
            score_function="min",
            action_type=action_type,
            max_steps=max_steps,
        )


class SimpleFacmacMPE9a(SimpleFacmacMPE):
    """FACMAC 9 predators vs 3 prey, 6 landmarks, view radius 1.5, ``"min"`` prey score."""

    def __init__(self, action_type: str = CONTINUOUS_ACT, max_steps: int = MAX_STEPS) -> None:
        super().__init__(
            num_good_agents=3,
            num_adversaries=9,
            num_landmarks=6,
            view_radius=1.5,
            score_function="min",
            action_type=action_type,
            max_steps=max_steps,
        )
