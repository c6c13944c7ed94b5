"""Step-by-step parity of our MPE environments with their references.

Parity. Every scenario with a PettingZoo counterpart (``mpe2``, the maintained MPE) is checked
in both action modes on 200 episodes: ``mpe2``'s ``parallel_env`` (``max_cycles=25``, our
default sizes) is reset from seeds 0..199, its positions are rounded to float32 in place (so
both sides start from exactly the same world state), and that world state is written into our
``State``: positions and velocities of all entities (agents in our order, then landmarks in
mpe2's order, e.g. obstacles, food, forests), messages ``c``, ``step = 0``, and ``goal``
(adversary / push: the goal landmark; speaker_listener: the landmark the listener must reach;
reference: ``goal[j]`` = the landmark agent ``j`` must reach, i.e. ``agents[1 - j].goal_b``;
crypto: ``[goal, key]`` landmarks). Colours that reach observations derive from these indices
on both sides and are compared through the observations. Both sides take the same random valid
actions from a seeded numpy Generator (ints for discrete, float32 in ``[0, 1)`` for
continuous). Everything is compared within ``atol=1e-4`` (``rtol=0``) at every step,
including the last, in two runs over the same 200 episodes:

1. Whole episodes: our env free-running from the translated reset for all 25 steps (one jitted
   ``lax.scan`` over steps of ``jax.vmap(env.step_env)``), under ``jax.enable_x64`` with the
   world state in float64 like mpe2's. Compared: observations and rewards per agent,
   ``dones[agent]`` vs mpe2's ``termination | truncation`` and ``dones["__all__"]``,
   ``p_pos`` / ``p_vel`` of all entities, ``c`` of all agents.
2. Every step, shipped float32: one ``env.step(..., with_terminal_obs=True)`` from mpe2's state
   before each step (JaxMARL's method). Compared: the same quantities, with the pre-reset
   observations of ``infos["terminal_obs"]``, ``step``'s returned obs on every step but the
   last (which must be a reset: ``state.step`` back to 0), ``infos["terminated"]`` /
   ``infos["truncated"]`` vs mpe2's terminations / truncations, and ``get_obs`` of the
   translated states (the reset observations at step 0). The last step's post-step positions
   come from the same transition run with the step counter at 0 (no auto-reset).

Why not float32 free-running: MPE's explicit contact integration is unstable while entities
overlap and amplifies float32 rounding ~3-5x per step, and world_comm's boundary penalty
multiplies position error by 20; measured, up to 1.7e-4 (p_vel) and 2.1e-4 (rewards) in a few
of 200 world_comm episodes, while the same rollout with float64 state and constants agrees with
mpe2 to 1e-14. Run 1 therefore checks the formulas over whole episodes, run 2 the float32 code.
The facmac scenarios have no mpe2 counterpart: their reference is JaxMARL 0.2.0,
recorded by ``make_facmac_reference.py`` (run with JaxMARL's interpreter; JaxMARL is never
imported here) into ``data/*.npz``: reset states, step keys, actions and every step's outputs,
once under ``enable_x64`` (replayed here as whole episodes with our env in float64) and once in
float32 (replayed one step from each recorded state with our shipped float32 env, facmac's
random prey moves included); ``simple_spread`` is recorded too, as a JaxMARL cross-check. The
same quantities are compared for the 25 steps of an episode (JaxMARL's time limit fires one
step later than mpe2's; ours follows mpe2, which the test asserts). Failures name scenario,
mode, quantity, episode, step and agent or entity. The mpe2 rollouts run in a worker process
while this one compiles.
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import pathlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxmarl
from tests.envs.mpe import mpe2_bridge as bridge
from tests.envs.mpe import mpe2_reference as reference

EPISODES = 200
STEPS = reference.MAX_CYCLES
MODES = {"discrete": False, "continuous": True}
CASES = [(s.name, mode) for s in reference.SCENARIOS for mode in MODES]
DATA = pathlib.Path(__file__).resolve().parent / "data"


# --------------------------------------------------------------------------- JaxMARL fixtures
X64_FIXTURES = sorted(DATA.glob("jaxmarl_*_x64.npz"))
F32_FIXTURES = sorted(DATA.glob("jaxmarl_*_f32.npz"))


def _fixture_id(path: pathlib.Path) -> str:
    return path.stem.removeprefix("jaxmarl_").rsplit("_", 1)[0]


def _load_fixture(path: pathlib.Path):
    data = dict(np.load(path))
    env_id, _, mode = _fixture_id(path).rpartition("_")
    ours = jaxmarl.make(env_id, action_type=mode.capitalize())
    agents = [str(a) for a in data["agents"]]
    assert agents == list(ours.agents), f"{env_id}: agents ours {ours.agents} vs {agents}"
    if "actions" in data:
        actions = data["actions"][:, :STEPS]
    else:
        actions = data["actions_u8"][:, :STEPS].astype(np.float32) / np.float32(255)
    actions = {a: actions[:, :, i] for i, a in enumerate(agents)}
    return f"{env_id} [{mode}] vs JaxMARL 0.2.0", ours, agents, data, actions


def _fixture_fields(template, data, per_step: bool):
    """Our state fields from a fixture: the resets, or the state before each step ``[E, T]``."""
    episodes = data["keys"].shape[0]
    fields = {k: data[f"init_{k}"] for k in ("p_pos", "p_vel", "c")}
    goal = data.get("init_goal", np.zeros((episodes, *template.goal.shape), np.int32))
    batch = (episodes,)
    if per_step:
        batch = (episodes, STEPS)
        fields = {
            k: np.concatenate([data[f"init_{k}"][:, None], data[k][:, : STEPS - 1]], axis=1)
            for k in ("p_pos", "p_vel", "c")
        }
        goal = np.broadcast_to(goal[:, None], (*batch, *goal.shape[1:]))
    fields["goal"] = goal
    step = np.arange(STEPS, dtype=np.int32) if per_step else np.int32(0)
    fields["step"] = np.broadcast_to(step, batch)
    # JaxMARL's ``done`` is one flag per env (False before every recorded step), ours per agent.
    fields["done"] = np.zeros((*batch, *template.done.shape), bool)
    return fields, batch


def _assert_matches_fixture(got, data, agents, where):
    agent_axes = ("episode", "step", "agent")
    names = {"agent": [*agents, "__all__"]}
    for i, agent in enumerate(agents):
        at = f"{where}, agent {agent}"
        ref_obs = data["obs"][:, :STEPS, i]
        bridge.check_close(got["obs"][agent], ref_obs, what="obs", where=at)
        if "input_obs" in got:
            bridge.check_close(
                got["input_obs"][agent][:, 0], data["init_obs"][:, i], what="reset obs",
                where=at, index_names=("episode",),
            )  # fmt: skip
            bridge.check_close(
                got["input_obs"][agent][:, 1:], ref_obs[:, :-1], what="get_obs", where=at
            )
    bridge.check_close(
        got["rewards"], data["rewards"][:, :STEPS], what="rewards", where=where,
        index_names=agent_axes, labels=names,
    )  # fmt: skip
    for key in ("p_pos", "p_vel"):
        bridge.check_close(
            got[key], data[key][:, :STEPS], what=key, where=where,
            index_names=("episode", "step", "entity"),
        )  # fmt: skip
    bridge.check_close(
        got["c"], data["c"][:, :STEPS], what="c", where=where, index_names=agent_axes,
        labels=names,
    )  # fmt: skip
    # JaxMARL's dones stay False through step 25 (its limit fires on step 26); ours end the
    # episode on step 25 like mpe2's truncation.
    bridge.check_close(
        got["dones"][:, :-1], data["dones"][:, : STEPS - 1], what="dones", where=where,
        index_names=agent_axes, labels=names,
    )  # fmt: skip
    assert not data["dones"][:, STEPS - 1].any() and data["dones"][:, STEPS].all(), where
    assert got["dones"][:, -1].all(), f"{where}: episodes not done after {STEPS} steps"


@pytest.mark.parametrize("path", X64_FIXTURES, ids=[_fixture_id(p) for p in X64_FIXTURES])
def test_whole_episodes_match_jaxmarl(path):
    where, ours, agents, data, actions = _load_fixture(path)
    where += " (whole episodes, float64 on both sides)"
    with jax.enable_x64(True):
        template = bridge.state_template(ours)
        fields, batch = _fixture_fields(template, data, per_step=False)
        states = bridge.stack_states(template, fields, batch, float_dtype=jnp.float64)
        keys = jnp.asarray(np.swapaxes(data["keys"][:, :STEPS], 0, 1))
        got = bridge.run_episodes(ours, states, actions, keys)
        init_obs = jax.vmap(ours.get_obs)(states)
    assert got["p_pos"].dtype == np.float64, got["p_pos"].dtype
    for i, agent in enumerate(agents):
        bridge.check_close(
            init_obs[agent], data["init_obs"][:, i], what="reset obs",
            where=f"{where}, agent {agent}", index_names=("episode",),
        )  # fmt: skip
    _assert_matches_fixture(got, data, agents, where)


@pytest.mark.parametrize("path", F32_FIXTURES, ids=[_fixture_id(p) for p in F32_FIXTURES])
def test_each_float32_step_matches_jaxmarl(path):
    where, ours, agents, data, actions = _load_fixture(path)
    where += " (each step from JaxMARL's state, float32)"
    template = bridge.state_template(ours)
    fields, batch = _fixture_fields(template, data, per_step=True)
    states = bridge.stack_states(template, fields, batch)
    got = bridge.run_steps(ours, states, actions, jnp.asarray(data["keys"][:, :STEPS]))
    assert got["p_pos"].dtype == np.float32, got["p_pos"].dtype
    _assert_matches_fixture(got, data, agents, where)
    assert got["truncated"][:, -1].all() and not got["terminated"].any(), where
    expected_step = np.broadcast_to(np.arange(1, STEPS + 1) % STEPS, got["next_step"].shape)
    np.testing.assert_array_equal(got["next_step"], expected_step, err_msg=where)


# --------------------------------------------------------------------------- mpe2
# After the JaxMARL tests, which need no mpe2 rollouts: the worker process gets a head start.
def _seed(scenario_name: str, mode: str) -> int:
    return 1 + CASES.index((scenario_name, mode))


@pytest.fixture(scope="module", autouse=True)
def mpe2_rollouts(request):
    """``(scenario, mode) -> mpe2 rollout``; one worker process computes them in test order,
    starting before the module's first test (autouse) so it runs while this process compiles."""
    wanted = []
    for item in request.session.items:
        if getattr(item, "module", None) is not request.module:
            continue
        params = getattr(getattr(item, "callspec", None), "params", {})
        case = (params.get("scenario_name"), params.get("mode"))
        if case in CASES and case not in wanted:
            wanted.append(case)

    def submit(run, name, mode):
        env = bridge.make_ours(reference.SCENARIOS_BY_NAME[name], MODES[mode])
        return run(
            reference.rollout_mpe2, name, MODES[mode], list(env.agents), _seed(name, mode), EPISODES
        )

    try:
        pool = concurrent.futures.ProcessPoolExecutor(1, multiprocessing.get_context("spawn"))
        futures = {case: submit(pool.submit, *case) for case in wanted}
    except OSError:  # no worker processes here: compute each rollout when it is needed
        pool, futures = None, {}
    cache = {}

    def get(name, mode):
        if (name, mode) not in cache:
            future = futures.get((name, mode))
            cache[name, mode] = future.result() if future else submit(_call, name, mode)
        return cache[name, mode]

    yield get
    if pool is not None:
        pool.shutdown(cancel_futures=True)


def _call(fn, *args):
    return fn(*args)


def _translated(template, ref, batch_shape, per_step):
    """Every field of our state from an mpe2 rollout, with leaves ``[*batch_shape, ...]``.

    ``per_step=False``: the reset of each episode (``batch_shape = (E,)``). ``per_step=True``:
    the state before each step ``t`` (``batch_shape = (E, T)``), step counter ``t``.
    """
    if per_step:
        fields = {
            k: np.concatenate([ref[f"init_{k}"][:, None], ref[k][:, :-1]], axis=1)
            for k in ("p_pos", "p_vel", "c")
        }
        step = np.broadcast_to(np.arange(STEPS, dtype=np.int32), batch_shape)
    else:
        fields = {k: ref[f"init_{k}"] for k in ("p_pos", "p_vel", "c")}
        step = np.zeros(batch_shape, np.int32)
    goal = ref.get("goal", np.zeros((batch_shape[0], *template.goal.shape), np.int32))
    goal = goal.reshape(batch_shape[0], *[1] * (len(batch_shape) - 1), *goal.shape[1:])
    fields["goal"] = np.broadcast_to(goal, (*batch_shape, *goal.shape[len(batch_shape) :]))
    fields["step"] = step
    fields["done"] = np.zeros((*batch_shape, *template.done.shape), bool)
    return fields


@pytest.mark.parametrize(("scenario_name", "mode"), CASES)
def test_agents_and_spaces_match_mpe2(scenario_name, mode):
    scenario = reference.SCENARIOS_BY_NAME[scenario_name]
    where = f"{scenario_name} [{mode}]"
    ours = bridge.make_ours(scenario, MODES[mode])
    ref = reference.make_mpe2(scenario, MODES[mode])
    assert sorted(ours.agents) == sorted(ref.possible_agents), (
        f"{where}: agents ours {ours.agents} vs mpe2 {ref.possible_agents}"
    )
    for agent in ours.agents:
        ours_act, ref_act = ours.action_space(agent), ref.action_space(agent)
        if MODES[mode]:
            assert tuple(ours_act.shape) == tuple(ref_act.shape), (where, agent, ours_act, ref_act)
        else:
            assert int(ours_act.n) == int(ref_act.n), (where, agent, ours_act, ref_act)
        ours_obs, ref_obs = ours.observation_space(agent), ref.observation_space(agent)
        assert tuple(ours_obs.shape) == tuple(ref_obs.shape), (where, agent, ours_obs, ref_obs)


@pytest.mark.parametrize(("scenario_name", "mode"), CASES)
def test_whole_episodes_match_mpe2(scenario_name, mode, mpe2_rollouts):
    scenario = reference.SCENARIOS_BY_NAME[scenario_name]
    where = f"{scenario_name} [{mode}, whole episodes, float64]"
    ref = mpe2_rollouts(scenario_name, mode)
    with jax.enable_x64(True):
        ours = bridge.make_ours(scenario, MODES[mode])
        template = bridge.state_template(ours)
        fields = _translated(template, ref, (EPISODES,), per_step=False)
        states = bridge.stack_states(template, fields, (EPISODES,), float_dtype=jnp.float64)
        keys = jax.random.split(jax.random.key(_seed(scenario_name, mode)), (STEPS, EPISODES))
        got = bridge.run_episodes(ours, states, ref["actions"], keys)
    assert got["p_pos"].dtype == np.float64, got["p_pos"].dtype
    bridge.assert_matches_mpe2(got, ref, list(ours.agents), where)


@pytest.mark.parametrize(("scenario_name", "mode"), CASES)
def test_each_float32_step_matches_mpe2(scenario_name, mode, mpe2_rollouts):
    scenario = reference.SCENARIOS_BY_NAME[scenario_name]
    where = f"{scenario_name} [{mode}, each step from mpe2's state, float32]"
    ref = mpe2_rollouts(scenario_name, mode)
    ours = bridge.make_ours(scenario, MODES[mode])
    template = bridge.state_template(ours)
    batch = (EPISODES, STEPS)
    states = bridge.stack_states(template, _translated(template, ref, batch, True), batch)
    keys = jax.random.split(jax.random.key(_seed(scenario_name, mode)), batch)
    got = bridge.run_steps(ours, states, ref["actions"], keys)
    assert got["p_pos"].dtype == np.float32, got["p_pos"].dtype
    bridge.assert_matches_mpe2(got, ref, list(ours.agents), where)
