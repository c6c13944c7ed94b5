"""The environment contract, checked on every registered id with no exclusion list.

For each env: jit equals eager; vmap equals a loop; the same key gives the same trajectory and
different keys give different resets; observations lie in their declared spaces (shape, dtype,
bounds); values are finite; shapes, dtypes and weak types are stable across steps; ``step``
does not retrace; episodes end at the time limit with ``truncated`` and an auto-reset; a given
``reset_state`` is honoured; ``with_terminal_obs`` returns the pre-reset observations.

Besides every id with its defaults, ``VARIANTS`` runs the suite on constructor options that change
shapes or code paths (player counts, layouts, observation kinds). Compiling dominates the cost,
so a case's checks share its programs (one rollout, one step, ...) and run one after another.
"""

from __future__ import annotations

import functools

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxmarl
from jaxmarl import spaces
from jaxmarl.env import random_actions

ENV_IDS = list(jaxmarl.registered_envs)
# Non-default constructions, named "id[option=value, ...]": each shape-changing option of a
# family that its defaults do not reach.
VARIANTS = {
    "hanabi[num_agents=3]": ("hanabi", dict(num_agents=3)),
    "hanabi[num_agents=4]": ("hanabi", dict(num_agents=4)),
    "hanabi[num_agents=5, card_knowledge=hle_bits]": (
        "hanabi",
        dict(num_agents=5, card_knowledge="hle_bits"),
    ),
    "storm[num_agents=8, fixed_coin_location=False]": (
        "storm",
        dict(num_agents=8, fixed_coin_location=False),
    ),
    "coin_game[cnn=True, egocentric=True]": ("coin_game", dict(cnn=True, egocentric=True)),
    "switch_riddle[num_agents=4]": ("switch_riddle", dict(num_agents=4)),
    "overcooked[layout=counter_circuit, random_agent_positions=True]": (
        "overcooked",
        dict(layout="counter_circuit", random_agent_positions=True),
    ),
    "overcooked_v2[layout=grounded_coord_ring, agent_view_size=2]": (
        "overcooked_v2",
        dict(layout="grounded_coord_ring", agent_view_size=2),
    ),
}
CASES = ENV_IDS + list(VARIANTS)
ROLLOUT_STEPS = 30
BATCH = 3


def base_id(case):
    """The registered id a case builds."""
    return VARIANTS[case][0] if case in VARIANTS else case


@functools.cache
def make_env(case):
    env_id, kwargs = VARIANTS.get(case, (case, {}))
    return jaxmarl.make(env_id, **kwargs)


def rollout_steps(env_id):
    """``ROLLOUT_STEPS``, or more for envs whose time limit is longer (SMAX: 100 steps)."""
    return max(ROLLOUT_STEPS, make_env(env_id).max_steps + 1)


@functools.cache
def programs(env_id):
    """Jitted entry points shared by the tests of one env (each compiles once).

    ``step_traces`` grows by one each time ``step`` is traced, so the retrace check needs no
    program of its own.
    """
    env = make_env(env_id)
    step_traces = []

    def step(key, state, actions):
        step_traces.append(None)  # runs only while jit traces
        return env.step(key, state, actions)

    return dict(
        reset=jax.jit(env.reset),
        step=jax.jit(step),
        step_traces=step_traces,
        step_env=jax.jit(env.step_env),
        step_full=jax.jit(env.step, static_argnames="with_terminal_obs"),
        vstep=jax.jit(jax.vmap(env.step)),
        actions=jax.jit(functools.partial(random_actions, env)),
    )


@functools.cache
def rollout_fn(env_id):
    """``key -> (first obs, first state, per-step outputs [T, ...])`` for one env, jitted."""
    env = make_env(env_id)

    def rollout(key):
        reset_key, key = jax.random.split(key)
        obs, state = env.reset(reset_key)

        def body(carry, step_key):
            obs, state = carry
            action_key, step_key = jax.random.split(step_key)
            actions = random_actions(env, action_key, state)
            next_obs, next_state, rewards, dones, infos = env.step(step_key, state, actions)
            out = dict(
                obs=obs,
                state=state,
                actions=actions,
                rewards=rewards,
                dones=dones,
                terminated=infos["terminated"],
                truncated=infos["truncated"],
            )
            return (next_obs, next_state), out

        _, trajectory = jax.lax.scan(
            body, (obs, state), jax.random.split(key, rollout_steps(env_id))
        )
        return obs, state, trajectory

    return jax.jit(rollout)


@functools.cache
def batched_rollout_fn(env_id):
    return jax.jit(jax.vmap(rollout_fn(env_id)))


@functools.cache
def batched_rollouts(env_id):
    keys = jax.random.split(jax.random.key(42), BATCH)
    return keys, batched_rollout_fn(env_id)(keys)


# Ids whose full contract run does not fit CI's CPU budget: multi-agent MuJoCo compiles MJX
# physics (tens of seconds per program on a loaded 2-core CPU; the eager check runs it op by op)
# and rolls out 1000-step episodes. They run here under the nightly mark; their family's tests
# check the same contract on short episodes in CI (tests/envs/mabrax).
NIGHTLY_IDS = {"ant_4x2", "halfcheetah_6x1", "hopper_3x1", "humanoid_9|8", "walker2d_2x3"}
# Ids whose eager step alone (hundreds of small ops, each compiled on its own) costs 15-30 s of
# CI: their eager check runs nightly; every other contract check runs in CI.
EAGER_NIGHTLY_IDS = NIGHTLY_IDS | {"jaxnav", "storm", "storm_np"}


def case_param(case, nightly_ids):
    """``case`` as a pytest param, marked nightly if its id is in ``nightly_ids``."""
    return pytest.param(case, marks=pytest.mark.nightly) if base_id(case) in nightly_ids else case


# Module scope makes pytest order the tests case by case, so pytest-xdist, which hands each
# worker runs of consecutive tests, mostly gives one worker all the checks of a case: its
# programs (``functools.cache`` is per process) compile once, not once per worker.
@pytest.fixture(scope="module", params=[case_param(c, NIGHTLY_IDS) for c in CASES])
def env_id(request):
    return request.param


def _signature(tree):
    return jax.tree.map(lambda x: (x.shape, x.dtype, getattr(x, "weak_type", False)), tree)


def test_api_surface(env_id):
    env = make_env(env_id)
    assert env.num_agents == len(env.agents) > 0
    assert isinstance(env.name, str) and env.name
    classes = env.agent_classes
    assert sorted(a for group in classes.values() for a in group) == sorted(env.agents)
    run = programs(env_id)
    obs, state = run["reset"](jax.random.key(0))
    assert set(obs) == set(env.agents)
    actions = run["actions"](jax.random.key(1), state)
    obs, state, rewards, dones, infos = run["step"](jax.random.key(2), state, actions)
    assert set(obs) == set(env.agents) and set(rewards) == set(env.agents)
    assert set(dones) == set(env.agents) | {"__all__"}
    for flag in ("terminated", "truncated"):
        assert infos[flag].dtype == jnp.bool_ and infos[flag].shape == dones["__all__"].shape
    avail = env.get_avail_actions(state)
    assert set(avail) == set(env.agents)
    world = env.get_world_state(state)
    assert world.ndim >= 1 and jnp.issubdtype(world.dtype, jnp.floating)


def _space_leaves(space, obs):
    """``(space, observation)`` pairs of the array leaves; a ``Dict`` space is walked by key."""
    if isinstance(space, spaces.Dict):
        assert set(obs) == set(space.spaces), (set(obs), space)
        for name, sub_space in space.spaces.items():
            yield from _space_leaves(sub_space, obs[name])
    else:
        yield space, obs


def test_observations_in_spaces_and_finite(env_id):
    env = make_env(env_id)
    _, (first_obs, first_state, trajectory) = batched_rollouts(env_id)
    for agent in env.agents:
        # [B, T, *shape] per leaf
        for space, obs in _space_leaves(env.observation_space(agent), trajectory["obs"][agent]):
            assert obs.shape[2:] == tuple(space.shape), (agent, obs.shape, space)
            assert obs.dtype == space.dtype, (agent, obs.dtype, space.dtype)
            inside = jax.vmap(jax.vmap(space.contains))(obs)
            assert bool(inside.all()), f"{agent}: observation outside {space!r}"
        action_space = env.action_space(agent)
        assert bool(jax.vmap(jax.vmap(action_space.contains))(trajectory["actions"][agent]).all())
    chex.assert_tree_all_finite(trajectory["rewards"])
    chex.assert_tree_all_finite(jax.tree.map(lambda x: x.astype(jnp.float32), trajectory["obs"]))
    float_state = [x for x in jax.tree.leaves(trajectory["state"]) if x.dtype == jnp.float32]
    chex.assert_tree_all_finite(float_state)
    for agent in env.agents:
        assert trajectory["rewards"][agent].dtype == jnp.float32


def test_dtypes_shapes_and_weak_types_stable(env_id):
    run = programs(env_id)
    obs0, state0 = run["reset"](jax.random.key(3))
    actions = run["actions"](jax.random.key(4), state0)
    obs1, state1, rewards, dones, infos = run["step"](jax.random.key(5), state0, actions)
    assert _signature(state0) == _signature(state1)
    assert _signature(obs0) == _signature(obs1)
    for leaf in jax.tree.leaves((state1, obs1, rewards, dones)):
        assert not leaf.weak_type, "weak-typed leaf (a Python scalar leaked into the pytree)"
        assert leaf.dtype != jnp.float64


def test_same_key_same_trajectory_different_keys_differ(env_id):
    keys, first = batched_rollouts(env_id)
    again = batched_rollout_fn(env_id)(keys)
    chex.assert_trees_all_equal(first, again)
    # Different keys give different trajectories (reset draws and random actions).
    observations = first[2]["obs"]
    assert any(
        not np.array_equal(leaf[0], leaf[i])
        for leaf in jax.tree.leaves(observations)
        for i in range(1, BATCH)
    ), "three different keys gave identical trajectories"


@pytest.mark.parametrize(
    "env_id", [case_param(c, EAGER_NIGHTLY_IDS) for c in CASES], scope="module"
)
def test_jit_equals_eager(env_id):
    env = make_env(env_id)
    run = programs(env_id)
    key = jax.random.key(6)
    obs, state = run["reset"](key)
    actions = run["actions"](jax.random.key(7), state)
    jitted = run["step"](jax.random.key(8), state, actions)
    with jax.disable_jit():
        eager_reset = env.reset(key)
        eager = env.step(jax.random.key(8), state, actions)
    assert_close_eager(env_id, (obs, state), eager_reset)
    assert_close_eager(env_id, jitted, eager)


# MJX's accelerations and forces (the multi-agent MuJoCo ids) come out of float32 linear solves
# (the mass matrix's factorisation for `qacc_smooth`; the constraint solver, which iterates to a
# tolerance, for `qacc`, `qfrc_constraint`, `efc_force`): fused (jit) and op-by-op (eager)
# arithmetic, and a vmapped step against a single one, end up to about 1e-4 relative apart on
# them (ant_4x2: 1.3e-3 on a constraint force of about 250; humanoid_9|8: 1.5e-3 on an
# acceleration of about 46), and the actuator quantities scale joint values by the gear
# (walker2d_2x3: gear 100 turns a 1e-5 joint velocity difference into 9e-4), while positions,
# velocities, observations, rewards and brax's metrics agree to 1e-5. Only leaves named with
# these prefixes get the looser tolerance. The constraint solver stops on a criterion over the
# whole vector, so an entry's error scales with the vector's largest entry, not its own
# (humanoid_9|8's `qacc_warmstart`: 1.3e-3 apart on an entry of 0.86, in a vector reaching 234).
MJX_DERIVED_PREFIXES = ("qacc", "qfrc", "efc_", "cacc", "cfrc", "actuator_")


def assert_close_eager(env_id, jitted, eager):
    """``jitted`` and ``eager`` agree: to 1e-5, or MJX's solver-derived leaves to 1e-4."""
    if base_id(env_id) not in NIGHTLY_IDS:
        chex.assert_trees_all_close(jitted, eager, rtol=1e-5, atol=1e-5)
        return
    paths, tree = jax.tree_util.tree_flatten_with_path(jitted)
    assert tree == jax.tree.structure(eager)
    for (path, x), y in zip(paths, jax.tree.leaves(eager)):
        name = jax.tree_util.keystr(path)
        solver = name.rsplit(".", 1)[-1].startswith(MJX_DERIVED_PREFIXES)
        x, y = np.asarray(x), np.asarray(y)
        if not np.issubdtype(x.dtype, np.floating):
            np.testing.assert_array_equal(x, y, err_msg=name)
            continue
        if solver:
            tol = dict(rtol=1e-4, atol=max(1e-3, 1e-5 * float(np.abs(y).max(initial=0.0))))
        else:
            tol = dict(rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(x, y, err_msg=name, **tol)


def test_vmap_equals_loop(env_id):
    run = programs(env_id)
    keys = jax.random.split(jax.random.key(9), 3)
    # The batched step gets its inputs from separate programs: fused with them, XLA may order
    # MJX's float arithmetic differently from the single step (1e-5 apart on walker2d_2x3).
    obs, state = jax.vmap(run["reset"])(keys)
    actions = jax.vmap(run["actions"])(keys, state)
    batched = run["vstep"](keys, state, actions)
    for i in range(3):
        pick = lambda tree: jax.tree.map(lambda x: x[i], tree)
        single = run["step"](keys[i], pick(state), pick(actions))
        assert_close_eager(env_id, pick(batched), single)


def test_step_does_not_retrace(env_id):
    # The state a step returns has the reset state's signature, so stepping it hits the
    # program compiled for the first step.
    run = programs(env_id)
    _, state = run["reset"](jax.random.key(10))
    actions = run["actions"](jax.random.key(11), state)
    _, state, *_ = run["step"](jax.random.key(20), state, actions)
    traces = len(run["step_traces"])
    assert traces >= 1
    for i in range(1, 4):
        actions = run["actions"](jax.random.key(11 + i), state)
        _, state, *_ = run["step"](jax.random.key(20 + i), state, actions)
    assert len(run["step_traces"]) == traces, "step retraced on the state it returned"


def test_time_limit_truncates_and_resets(env_id):
    env = make_env(env_id)
    assert env.max_steps is not None and env.max_steps < rollout_steps(env_id)
    _, (_, _, trajectory) = batched_rollouts(env_id)
    done = np.asarray(trajectory["dones"]["__all__"])  # [B, T]
    truncated = np.asarray(trajectory["truncated"])
    terminated = np.asarray(trajectory["terminated"])
    np.testing.assert_array_equal(done, truncated | terminated)
    assert not (truncated & terminated).any()
    steps = np.asarray(trajectory["state"].step)  # step counter before each step
    # The counter restarts at 0 right after every episode end.
    np.testing.assert_array_equal(steps[:, 1:][done[:, :-1]], 0)
    # Without a real termination the episode is truncated exactly at max_steps.
    by_time = truncated & (steps + 1 == env.max_steps)
    np.testing.assert_array_equal(truncated, by_time)
    if not terminated.any():
        assert truncated[:, env.max_steps - 1].all()


def test_reset_state_and_terminal_obs(env_id):
    env = make_env(env_id)
    run = programs(env_id)
    _, state = run["reset"](jax.random.key(30))
    last = state.replace(step=jnp.asarray(env.max_steps - 1, dtype=state.step.dtype))
    _, fixed = run["reset"](jax.random.key(31))
    actions = run["actions"](jax.random.key(32), last)
    obs, next_state, _, dones, infos = run["step_full"](
        jax.random.key(33), last, actions, fixed, with_terminal_obs=True
    )
    assert bool(dones["__all__"])
    chex.assert_trees_all_equal(next_state, fixed)
    chex.assert_trees_all_close(obs, jax.jit(env.get_obs)(fixed), rtol=1e-6)
    pre_reset = run["step_env"](jax.random.split(jax.random.key(33))[0], last, actions)[0]
    chex.assert_trees_all_close(infos["terminal_obs"], pre_reset, rtol=1e-6, atol=1e-6)


def test_observations_from_state_claim_holds(env_id):
    # Envs that set observations_from_state let `step` recompute observations from the state
    # it keeps, so reset and step_env must return exactly get_obs of their state.
    env = make_env(env_id)
    if not env.observations_from_state:
        pytest.skip(f"{env_id} does not claim observations_from_state")
    run = programs(env_id)
    get_obs = jax.jit(env.get_obs)
    obs, state = run["reset"](jax.random.key(40))
    chex.assert_trees_all_close(obs, get_obs(state), rtol=1e-6, atol=1e-6)
    for step in range(3):
        actions = run["actions"](jax.random.key(41 + step), state)
        obs, state, *_ = run["step_env"](jax.random.key(50 + step), state, actions)
        chex.assert_trees_all_close(obs, get_obs(state), rtol=1e-6, atol=1e-6)
