"""Our side of the MPE parity tests: translated states, batched runs, comparisons.

``test_mpe_parity.py`` feeds these with the reference rollouts of ``mpe2_reference.py`` (mpe2)
or of the JaxMARL fixtures. All episodes run at once: :func:`run_episodes` is one jitted
``lax.scan`` over the steps of an episode with ``step_env`` ``vmap``-ed over episodes;
:func:`run_steps` is one ``vmap``-ed ``step`` from every recorded state. Records are
``[episode, step, ...]`` numpy arrays, which :func:`assert_matches_mpe2` compares.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

import jaxmarl
from tests.envs.mpe.mpe2_reference import MAX_CYCLES, Scenario

ATOL = 1e-4
# The batches here are tiny and compiling dominates the runtime: compile without LLVM's
# optimisations (about 3x faster; codegen level, IEEE float semantics are unchanged).
FAST_COMPILE = {"xla_backend_optimization_level": 0, "xla_llvm_disable_expensive_passes": True}


def _compile_and_run(fn, *args):
    return jax.jit(fn).lower(*args).compile(FAST_COMPILE)(*args)


def make_ours(scenario: Scenario, continuous: bool) -> jaxmarl.MultiAgentEnv:
    return jaxmarl.make(scenario.env_id, action_type="Continuous" if continuous else "Discrete")


def state_template(env: jaxmarl.MultiAgentEnv) -> Any:
    """Shapes and dtypes of one state of ``env`` (traced, not compiled)."""
    return jax.eval_shape(env.reset, jax.random.key(0))[1]


def stack_states(
    template: Any,
    fields: dict[str, np.ndarray],
    batch_shape: tuple[int, ...],
    float_dtype: Any = None,
) -> Any:
    """A batch of states with leaves ``[*batch_shape, ...]`` built from translated ``fields``.

    ``fields`` must name every leaf of ``template`` (see :func:`state_template`) with its
    shape after ``batch_shape``; values are cast to the template's dtypes, or to
    ``float_dtype`` for floating leaves when given (float64 for the whole-episode run).
    """
    names = {f.name for f in dataclasses.fields(template)}
    if names != set(fields):
        raise AssertionError(
            f"translation covers {sorted(fields)}, our state has {sorted(names)}; "
            "translate the new fields from the reference"
        )
    replaced = {}
    for name, value in fields.items():
        leaf = getattr(template, name)
        value = np.asarray(value)
        expected = (*batch_shape, *leaf.shape)
        if value.shape != expected:
            raise AssertionError(
                f"translated field {name!r} has shape {value.shape}, our state expects {expected}"
            )
        dtype = leaf.dtype
        if float_dtype is not None and jnp.issubdtype(dtype, jnp.floating):
            dtype = float_dtype
        replaced[name] = np.asarray(value, dtype=dtype)
    return jax.device_put(template.replace(**replaced))


def run_episodes(
    env: jaxmarl.MultiAgentEnv, init_states: Any, actions: dict[str, np.ndarray], keys: jax.Array
) -> dict[str, Any]:
    """Whole episodes of ``step_env``: one jitted scan over steps, ``vmap``-ed over episodes.

    The carried state keeps the dtypes of ``init_states`` (float64 under ``enable_x64``): each
    step's state is cast back to them, which is exact when the env computes in that precision
    and shows up as a tolerance failure when it does not.

    Args:
        env: our env.
        init_states: batched states, leaves ``[E, ...]``.
        actions: per agent ``[E, T(, dim)]``.
        keys: ``[T, E]`` PRNG keys; ``step_env`` receives ``split(key)[0]`` as in ``step``.

    Returns:
        numpy ``[E, T, ...]``: ``obs`` per agent, ``rewards`` ``[E, T, A]``, ``dones``
        ``[E, T, A + 1]`` (agents, then ``__all__``), ``p_pos`` / ``p_vel`` / ``c``.
    """
    agents = list(env.agents)
    actions_t = {a: jnp.asarray(np.swapaxes(v, 0, 1)) for a, v in actions.items()}

    def one(state, key, action):
        step_key, _ = jax.random.split(key)
        obs, next_state, rewards, dones, _ = env.step_env(step_key, state, action)
        next_state = jax.tree.map(lambda n, s: n.astype(s.dtype), next_state, state)
        record = {
            "obs": obs,
            "rewards": jnp.stack([rewards[a] for a in agents]),
            "dones": jnp.stack([dones[a] for a in [*agents, "__all__"]]),
            "p_pos": next_state.p_pos,
            "p_vel": next_state.p_vel,
            "c": next_state.c,
        }
        return next_state, record

    def run(states, keys, actions_t):
        return jax.lax.scan(lambda s, xs: jax.vmap(one)(s, *xs), states, (keys, actions_t))[1]

    records = jax.device_get(_compile_and_run(run, init_states, keys, actions_t))
    return jax.tree.map(lambda x: np.swapaxes(np.asarray(x), 0, 1), records)


def run_steps(
    env: jaxmarl.MultiAgentEnv, states: Any, actions: dict[str, np.ndarray], keys: jax.Array
) -> dict[str, Any]:
    """One ``env.step(..., with_terminal_obs=True)`` from each of ``[E, T]`` given states.

    The last step of an episode auto-resets, so its post-step positions come from the same
    transition run once more with the step counter at 0 (time limit not reached).

    Args:
        env: our env.
        states: leaves ``[E, T, ...]``; ``states[:, t]`` is the state before step ``t``.
        actions: per agent ``[E, T(, dim)]``.
        keys: ``[E, T]`` PRNG keys given to ``step``.

    Returns:
        numpy ``[E, T, ...]``: ``input_obs`` (``get_obs`` of the given state), ``obs``
        (``infos["terminal_obs"]``) and ``next_obs`` (returned) per agent; ``rewards``
        ``[E, T, A]``; ``dones`` ``[E, T, A + 1]``; ``terminated`` / ``truncated``;
        ``next_step`` (the returned state's counter); ``p_pos`` / ``p_vel`` / ``c`` after
        the step.
    """
    agents = list(env.agents)
    episodes, steps = states.step.shape[:2]
    rows = episodes * steps

    def one(state, key, action):
        obs, next_state, rewards, dones, infos = env.step(
            key, state, action, with_terminal_obs=True
        )
        return {
            "input_obs": env.get_obs(state),
            "obs": infos["terminal_obs"],
            "next_obs": obs,
            "rewards": jnp.stack([rewards[a] for a in agents]),
            "dones": jnp.stack([dones[a] for a in [*agents, "__all__"]]),
            "terminated": infos["terminated"],
            "truncated": infos["truncated"],
            "next_step": next_state.step,
            "p_pos": next_state.p_pos,
            "p_vel": next_state.p_vel,
            "c": next_state.c,
        }

    def run(states, keys, actions):
        # Rows: every (episode, step), then each episode's last step again with step = 0.
        last = jax.tree.map(lambda x: x[:, -1], states)
        last = last.replace(step=jnp.zeros_like(last.step))

        def with_last(tree, last_tree):
            def join(x, y):
                return jnp.concatenate([jnp.reshape(x, (rows, *jnp.shape(x)[2:])), y])

            return jax.tree.map(join, tree, last_tree)

        last_actions = {a: v[:, -1] for a, v in actions.items()}
        return jax.vmap(one)(
            with_last(states, last),
            with_last(keys, keys[:, -1]),
            with_last(actions, last_actions),
        )

    records = jax.device_get(_compile_and_run(run, states, keys, actions))
    main = jax.tree.map(
        lambda x: np.array(x[:rows]).reshape(episodes, steps, *np.shape(x)[1:]), records
    )
    for key in ("p_pos", "p_vel", "c"):
        main[key][:, -1] = records[key][rows:]
    return main


# --------------------------------------------------------------------------- comparison
def check_close(
    ours: Any,
    ref: Any,
    *,
    what: str,
    where: str,
    index_names: tuple[str, ...] = ("episode", "step"),
    labels: dict[str, list[str]] | None = None,
    atol: float = ATOL,
) -> float:
    """``assert_allclose(atol, rtol=0)`` naming the first mismatch; returns the max abs error.

    ``ours`` and ``ref`` are ``[episode, step, ...]``; ``index_names`` names the leading axes in
    the message (the first mismatch in episode, then step order), ``labels`` names the indices
    of some of those axes (e.g. ``{"agent": env.agents}``). NaN never matches.
    """
    ours = np.asarray(ours, np.float64)
    ref = np.asarray(ref, np.float64)
    if ours.shape != ref.shape:
        raise AssertionError(f"{where}: {what} has shape {ours.shape}, reference {ref.shape}")
    error = np.abs(ours - ref)
    bad = ~(error <= atol)
    message = ""
    if bad.any():
        first = tuple(int(i) for i in np.argwhere(bad)[0])
        labels = labels or {}
        named = ", ".join(
            f"{n} {labels[n][i] if n in labels else i}"
            for n, i in zip(index_names, first, strict=False)
        )
        rest = first[len(index_names) :]
        message = (
            f"{where}: {what} differs first at {named}"
            + (f", element {rest}" if rest else "")
            + f": ours {ours[first]!r} vs reference {ref[first]!r}; "
            f"{int(bad.sum())} of {bad.size} values off by more than {atol}"
        )
    np.testing.assert_allclose(ours, ref, atol=atol, rtol=0, err_msg=message)
    return float(error.max()) if error.size else 0.0


def assert_matches_mpe2(
    got: dict[str, Any], ref: dict[str, Any], agents: list[str], where: str
) -> dict[str, float]:
    """Every quantity of ``got`` (a :func:`run_episodes` or :func:`run_steps` record) vs ``ref``
    (an mpe2 rollout), at every step; returns the max abs error per quantity."""
    num_agents = len(agents)
    agent_axes = ("episode", "step", "agent")
    names = {"agent": [*agents, "__all__"]}
    errors: dict[str, float] = {}

    def note(name: str, value: float) -> None:
        errors[name] = max(errors.get(name, 0.0), value)

    assert ref["live"].all(), f"{where}: mpe2 ended an episode before step {MAX_CYCLES}"
    for agent in agents:
        at = f"{where}, agent {agent}"
        ref_obs = ref["obs"][agent]
        note("obs", check_close(got["obs"][agent], ref_obs, what="obs", where=at))
        if "next_obs" in got:  # ``step``'s returned obs: the step's own except after the last
            check_close(got["next_obs"][agent][:, :-1], ref_obs[:, :-1], what="next_obs", where=at)
        if "input_obs" in got:  # get_obs of the translated states: reset obs, then each step's
            init = ref["init_obs"][agent]
            note(
                "obs",
                check_close(
                    got["input_obs"][agent][:, 0], init, what="reset obs", where=at,
                    index_names=("episode",),
                ),
            )  # fmt: skip
            check_close(got["input_obs"][agent][:, 1:], ref_obs[:, :-1], what="get_obs", where=at)
    note(
        "rewards",
        check_close(got["rewards"], ref["rewards"], what="rewards", where=where,
                    index_names=agent_axes, labels=names),
    )  # fmt: skip
    ref_done = ref["terminations"] | ref["truncations"]
    check_close(
        got["dones"][..., :num_agents], ref_done, what="dones[agent]", where=where,
        index_names=agent_axes, labels=names,
    )  # fmt: skip
    check_close(got["dones"][..., num_agents], ref_done.all(-1), what='dones["__all__"]',
                where=where)  # fmt: skip
    if "terminated" in got:
        check_close(got["terminated"], ref["terminations"].any(-1), what="terminated", where=where)
        check_close(got["truncated"], ref["truncations"].any(-1), what="truncated", where=where)
        expected = np.broadcast_to(
            np.arange(1, MAX_CYCLES + 1) % MAX_CYCLES, got["next_step"].shape
        )
        check_close(
            got["next_step"], expected, what="state.step after step (0 = auto-reset)", where=where
        )
    entity_axes = ("episode", "step", "entity")
    for key in ("p_pos", "p_vel"):
        note(key, check_close(got[key], ref[key], what=key, where=where, index_names=entity_axes))
    note(
        "c",
        check_close(
            got["c"], ref["c"], what="c", where=where, index_names=agent_axes, labels=names
        ),
    )
    return errors
