"""The throughput workload, written once and run unchanged by jaxmarl and by JaxMARL.

Both libraries are imported as ``jaxmarl``, so the two can never share a process. This file
therefore uses only what the two APIs have in common (``jaxmarl.make``, ``env.agents``,
``env.reset(key)``, ``env.step(key, state, actions)``, ``env.action_space(agent)``) plus the
standard library and ``jax``, and it imports nothing from this repository. ``env_throughput.py``
runs it as a script under each interpreter::

    python benchmarks/_workload.py --json MPE_simple_spread_v3 --batch 4096 --steps 100

which prints one line ``RESULT_MARKER {json}`` on stdout (JaxMARL prints its own messages on
import, so the result is found by its marker, not by position). ``measure`` can also be
imported and called in-process, as the smoke test does.

The workload: one ``jax.jit`` program that resets ``batch`` environments with ``batch`` distinct
keys (``jax.vmap(env.reset)``) and then ``lax.scan``s ``steps`` steps of ``jax.vmap(env.step)``,
sampling a uniformly random valid action for every agent of every environment inside the
scan. Every step's observations, rewards and dones are folded into a per-environment checksum
carried through the scan, so XLA cannot drop any of the work a learner would consume.

``--draws ahead`` draws the random actions and step keys (one per env per step, from the same
distributions) before the scan, one vectorised draw per agent and one key split for all
steps, and feeds them to the scan: still inside the timed program, but the draws no longer cost
a chain of small per-step random kernels. For an env whose step costs less than those draws,
the default per-step workload times mostly the draws and ``ahead`` mostly the env (which envs,
and by how much: ``benchmarks/results/env_throughput.md``). Either way both libraries run the
same program.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import math
import os
import platform
import resource
import statistics
import sys
import time
from typing import Any

RESULT_MARKER = "@@ENV_THROUGHPUT_RESULT@@"

# Where the workload draws its random actions and step keys (the module docstring).
DRAWS = ("per_step", "ahead")

RESULT_KEYS = (
    "env_id",
    "status",
    "batch",
    "steps",
    "repeats",
    "num_agents",
    "calls_per_repeat",
    "lower_s",
    "compile_s",
    "compile_total_s",
    "first_call_s",
    "rollout_s_best",
    "rollout_s_median",
    "env_steps_per_s",
    "env_steps_per_s_median",
    "agent_steps_per_s",
    "peak_rss_mib",
    "rss_before_compile_mib",
    "state_bytes_per_env",
    "xla_temp_mib",
    "device_peak_bytes",
    "checksum_finite",
    "devices",
    "draws",
    "versions",
)


def _rss_now_mib() -> float | None:
    """Current resident set size (Linux ``/proc``), ``None`` elsewhere."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return None


def _peak_rss_mib() -> float:
    """Peak resident set size of this process (``ru_maxrss`` is KiB on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024.0 * 1024.0) if sys.platform == "darwin" else peak / 1024.0


def _package_version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def versions() -> dict[str, Any]:
    """Versions of the interpreter and the libraries this workload runs on."""
    import jax
    import jaxlib

    import jaxmarl

    return {
        "python": platform.python_version(),
        "executable": sys.executable,
        "jax": jax.__version__,
        "jaxlib": jaxlib.__version__,
        "jaxmarl": _package_version("jaxmarl") or getattr(jaxmarl, "__version__", None),
        "jaxmarl_file": jaxmarl.__file__,
        "flax": _package_version("flax"),
        "numpy": _package_version("numpy"),
        "backend": jax.default_backend(),
        "device": str(jax.devices()[0]),
        "device_kind": jax.devices()[0].device_kind,
    }


def _make_sampler(space: Any):
    """``sample(key, lead=())``: uniform random valid actions for ``space``, shaped
    ``lead + space.shape``, the same code under both libraries.

    Discrete spaces (anything with an integer ``n``) draw ``randint(0, n)``; boxes with finite
    bounds draw ``uniform(low, high)``. Other spaces fall back to their own ``sample``, vmapped
    over split keys for a ``lead`` shape.
    """
    import jax
    import jax.numpy as jnp

    shape = tuple(getattr(space, "shape", ()) or ())
    dtype = getattr(space, "dtype", None)
    n = getattr(space, "n", None)
    if isinstance(n, int):
        return lambda key, lead=(): jax.random.randint(key, (*lead, *shape), 0, n).astype(
            dtype or jnp.int32
        )
    low, high = getattr(space, "low", None), getattr(space, "high", None)
    if low is not None and high is not None:
        low_arr = jnp.broadcast_to(jnp.asarray(low, jnp.float32), shape)
        high_arr = jnp.broadcast_to(jnp.asarray(high, jnp.float32), shape)
        if bool(jnp.all(jnp.isfinite(low_arr)) & jnp.all(jnp.isfinite(high_arr))):
            return lambda key, lead=(): jax.random.uniform(
                key, (*lead, *shape), jnp.float32, low_arr, high_arr
            ).astype(dtype or jnp.float32)

    def own_sample(key, lead=()):
        if not lead:
            return space.sample(key)
        keys = jax.random.split(key, math.prod(lead))
        drawn = jax.vmap(space.sample)(keys)
        return drawn.reshape((*lead, *drawn.shape[1:]))

    return own_sample


def _checksum(tree: Any):
    """Per-environment float32 sum of every leaf of ``tree`` (leading axis = environments)."""
    import jax
    import jax.numpy as jnp

    total = 0.0
    for leaf in jax.tree.leaves(tree):
        leaf = jnp.asarray(leaf)
        total = total + jnp.sum(leaf.reshape(leaf.shape[0], -1).astype(jnp.float32), axis=1)
    return total


def make_env(env_id: str, env_kwargs: dict[str, Any] | None = None) -> Any:
    """``jaxmarl.make`` of an id, of ``"<SMAX id>/<map name>"`` with that SMAX scenario, or of
    ``"overcooked/<layout>"`` with that layout.

    ``env_kwargs`` (constructor keywords, e.g. an OvercookedV2 layout) go to ``jaxmarl.make``
    on both sides alike.

    Both libraries export ``map_name_to_scenario`` from their SMAX package (JaxMARL:
    ``jaxmarl.environments.smax``, ours: ``jaxmarl.envs.smax``); each gets its own scenario
    object, so the same cell label builds the same battle on either side.
    """
    import importlib

    import jaxmarl

    registered_id, _, scenario = env_id.partition("/")
    if not scenario:
        return jaxmarl.make(registered_id, **(env_kwargs or {}))
    if registered_id == "overcooked":
        # "overcooked/<layout>": each library's own layout of that name.
        for module in ("jaxmarl.envs.overcooked", "jaxmarl.environments.overcooked"):
            try:
                layouts = importlib.import_module(module).overcooked_layouts
            except ImportError:
                continue
            return jaxmarl.make(registered_id, layout=layouts[scenario])
    for module in ("jaxmarl.envs.smax", "jaxmarl.environments.smax"):
        try:
            smax = importlib.import_module(module)
        except ImportError:
            continue
        return jaxmarl.make(registered_id, scenario=smax.map_name_to_scenario(scenario))
    raise ValueError(f"{env_id}: this jaxmarl has no SMAX package for scenario {scenario!r}")


def state_bytes(env: Any) -> int:
    """Bytes of one environment's state pytree (what a batch stores per env between steps)."""
    import jax

    _, state = jax.eval_shape(env.reset, jax.random.PRNGKey(0))
    return int(sum(leaf.size * leaf.dtype.itemsize for leaf in jax.tree.leaves(state)))


def make_rollout(env: Any, batch: int, steps: int, draws: str = "per_step"):
    """The benchmarked program: ``key -> checksum[batch]`` (reset, then ``steps`` steps).

    Args:
        env: an environment of either library.
        batch: number of environments stepped in parallel (``jax.vmap``).
        steps: number of steps per environment (``lax.scan``).
        draws: ``"per_step"`` draws each step's actions and keys inside the scan; ``"ahead"``
            draws all of them before it (the module docstring).

    Returns:
        An un-jitted function of one PRNG key returning a ``[batch]`` float32 checksum of all
        observations, rewards and dones seen.
    """
    import jax

    agents = list(env.agents)
    samplers = [_make_sampler(env.action_space(agent)) for agent in agents]

    def sample_actions(key):
        agent_keys = jax.random.split(key, len(agents))
        return {
            agent: sample(agent_key)
            for agent, sample, agent_key in zip(agents, samplers, agent_keys)
        }

    if draws not in DRAWS:
        raise ValueError(f"draws must be one of {DRAWS}, got {draws!r}")

    def env_step(carry, actions, env_keys):
        state, checksum = carry
        obs, state, rewards, dones, _ = jax.vmap(env.step)(env_keys, state, actions)
        checksum = checksum + _checksum(obs) + _checksum(rewards) + _checksum(dones)
        return (state, checksum), None

    def per_step(carry, step_key):
        action_key, env_key = jax.random.split(step_key)
        actions = jax.vmap(sample_actions)(jax.random.split(action_key, batch))
        return env_step(carry, actions, jax.random.split(env_key, batch))

    def drawn_ahead(carry, drawn):
        actions, env_keys = drawn
        return env_step(carry, actions, env_keys)

    def rollout(key):
        reset_key, scan_key = jax.random.split(key)
        obs, state = jax.vmap(env.reset)(jax.random.split(reset_key, batch))
        carry = (state, _checksum(obs))
        if draws == "per_step":
            (_, checksum), _ = jax.lax.scan(per_step, carry, jax.random.split(scan_key, steps))
            return checksum
        env_key, *agent_keys = jax.random.split(scan_key, 1 + len(agents))
        actions = {
            agent: sample(agent_key, (steps, batch))
            for agent, sample, agent_key in zip(agents, samplers, agent_keys)
        }
        env_keys = jax.random.split(env_key, steps * batch)
        env_keys = env_keys.reshape((steps, batch, *env_keys.shape[1:]))
        (_, checksum), _ = jax.lax.scan(drawn_ahead, carry, (actions, env_keys))
        return checksum

    return rollout


def device_count_flag(devices: int) -> None:
    """Make XLA's CPU backend expose ``devices`` host devices (before ``jax`` is imported).

    Each host device runs its share of a sharded program on its own thread, which is how one
    process uses several cores for work that XLA's intra-op threading leaves single-threaded.
    """
    if devices > 1:
        flags = os.environ.get("XLA_FLAGS", "")
        os.environ["XLA_FLAGS"] = f"{flags} --xla_force_host_platform_device_count={devices}"


def shard_over_devices(rollout_of_key, devices: int):
    """``keys[devices] -> checksum[devices * batch_per_device]``: one rollout per host device.

    ``shard_map`` runs ``rollout_of_key`` (built for ``batch / devices`` environments) on each
    device with its own key, so the environments are split evenly and never communicate.
    """
    import jax
    from jax.sharding import Mesh, PartitionSpec

    try:
        shard_map, check = jax.shard_map, {"check_vma": False}
    except AttributeError:  # older jax
        from jax.experimental.shard_map import shard_map

        check = {"check_rep": False}
    mesh = Mesh(jax.devices()[:devices], ("envs",))
    return shard_map(
        lambda keys: rollout_of_key(keys[0]),
        mesh=mesh,
        in_specs=PartitionSpec("envs"),
        out_specs=PartitionSpec("envs"),
        **check,
    )


def measure(
    env_id: str,
    batch: int,
    steps: int = 100,
    repeats: int = 3,
    *,
    min_repeat_s: float = 0.2,
    seed: int = 0,
    devices: int = 1,
    env_kwargs: dict[str, Any] | None = None,
    draws: str = "per_step",
) -> dict[str, Any]:
    """Compile and time the rollout of ``env_id``; see the module docstring for the workload.

    Args:
        env_id: registered id, passed to ``jaxmarl.make``.
        batch: number of parallel environments.
        steps: scan length (steps per environment per call).
        repeats: timed repeats; throughput uses the best one (``*_median`` the median).
        min_repeat_s: each repeat runs the compiled rollout enough times back to back to last
            about this long, so tiny batches are not timed at the clock's resolution.
        seed: PRNG seed.
        devices: host devices the batch is split over (``shard_over_devices``); more than 1
            needs ``device_count_flag(devices)`` before ``jax`` was first imported.
        env_kwargs: constructor keywords for ``jaxmarl.make`` (plain ids only).
        draws: where the random actions and step keys are drawn (``DRAWS``, module docstring).

    Returns:
        A dict with the keys ``RESULT_KEYS``; ``status`` is ``"ok"`` or ``"unavailable"``
        (the library does not register ``env_id``; the numbers are then ``None``).
    """
    import jax

    import jaxmarl

    # Both sides compile from scratch: a persistent cache would hide the compile time.
    jax.config.update("jax_enable_compilation_cache", False)
    result: dict[str, Any] = dict.fromkeys(RESULT_KEYS)
    result.update(
        env_id=env_id,
        batch=batch,
        steps=steps,
        repeats=repeats,
        devices=devices,
        draws=draws,
        versions=versions(),
    )
    if env_id.partition("/")[0] not in list(jaxmarl.registered_envs):
        result["status"] = "unavailable"
        return result

    env = make_env(env_id, env_kwargs)
    result["state_bytes_per_env"] = state_bytes(env)
    num_agents = len(env.agents)
    if devices > 1:
        if batch % devices or len(jax.devices()) < devices:
            raise ValueError(
                f"batch {batch} over {devices} devices: the batch must divide evenly and "
                f"{devices} devices must exist (have {len(jax.devices())}; call "
                "device_count_flag before importing jax)"
            )
        rollout = jax.jit(
            shard_over_devices(make_rollout(env, batch // devices, steps, draws), devices)
        )

        def key_of(k):
            return jax.random.split(k, devices)
    else:
        rollout = jax.jit(make_rollout(env, batch, steps, draws))

        def key_of(k):
            return k

    key = key_of(jax.random.PRNGKey(seed))
    result["rss_before_compile_mib"] = _rss_now_mib()

    start = time.perf_counter()
    lowered = rollout.lower(key)
    lowered_at = time.perf_counter()
    compiled = lowered.compile()
    compiled_at = time.perf_counter()
    checksum = compiled(key)
    checksum.block_until_ready()
    first_call_s = time.perf_counter() - compiled_at

    calls = max(1, math.ceil(min_repeat_s / max(first_call_s, 1e-6)))
    keys = jax.random.split(jax.random.PRNGKey(seed + 1), repeats * calls)
    call_keys = [key_of(k) for k in keys]
    jax.block_until_ready(call_keys)
    times = []
    for r in range(repeats):
        begin = time.perf_counter()
        for c in range(calls):
            checksum = compiled(call_keys[r * calls + c])
        checksum.block_until_ready()
        times.append((time.perf_counter() - begin) / calls)

    best, median = min(times), statistics.median(times)
    env_steps = batch * steps
    memory = compiled.memory_analysis()
    device_stats = jax.devices()[0].memory_stats()
    result.update(
        status="ok",
        num_agents=num_agents,
        calls_per_repeat=calls,
        lower_s=lowered_at - start,
        compile_s=compiled_at - lowered_at,
        compile_total_s=compiled_at - start,
        first_call_s=first_call_s,
        rollout_s_best=best,
        rollout_s_median=median,
        env_steps_per_s=env_steps / best,
        env_steps_per_s_median=env_steps / median,
        agent_steps_per_s=env_steps * num_agents / best,
        peak_rss_mib=_peak_rss_mib(),
        xla_temp_mib=(memory.temp_size_in_bytes / 2**20 if memory is not None else None),
        device_peak_bytes=(device_stats or {}).get("peak_bytes_in_use"),
        checksum_finite=bool(jax.numpy.all(jax.numpy.isfinite(checksum))),
    )
    return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("env_id")
    parser.add_argument("--batch", type=int, required=True)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--min-repeat-s", type=float, default=0.2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--devices", type=int, default=1, help="host devices to split over")
    parser.add_argument("--env-kwargs", type=json.loads, default=None, help="JSON object")
    parser.add_argument("--draws", choices=DRAWS, default="per_step", help="module docstring")
    parser.add_argument(
        "--json", action="store_true", help=f"print the result as '{RESULT_MARKER} <json>'"
    )
    args = parser.parse_args(argv)
    device_count_flag(args.devices)
    result = measure(
        args.env_id,
        args.batch,
        args.steps,
        args.repeats,
        min_repeat_s=args.min_repeat_s,
        seed=args.seed,
        devices=args.devices,
        env_kwargs=args.env_kwargs,
        draws=args.draws,
    )
    if args.json:
        print(RESULT_MARKER, json.dumps(result), flush=True)
    else:
        for name, value in result.items():
            print(f"{name:>24}: {value}")


if __name__ == "__main__":
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    main()
