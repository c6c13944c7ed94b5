"""Q-learning on MPE simple_spread: our ``jaxmarl.train`` against JaxMARL 0.2.0's own scripts.

``qmix``: ``python -m jaxmarl.train alg=qmix env=MPE_simple_spread_v3`` (preset
``configs/qmix/MPE_simple_spread_v3.yaml``, which mirrors JaxMARL's
``baselines/QLearning/config/alg/ql_rnn_mpe.yaml``) against JaxMARL's
``baselines/QLearning/qmix_rnn.py`` with that YAML; ``vdn`` / ``iql``: ``alg=vdn`` / ``alg=iql``
(presets ``configs/{vdn,iql}/MPE_simple_spread_v3.yaml``, the same settings with
``mixer: vdn`` / ``mixer: none``) against ``vdn_rnn.py`` / ``iql_rnn.py`` with the same YAML;
``pqn_vdn``: ``alg=pqn_vdn`` (preset ``configs/pqn_vdn/MPE_simple_spread_v3.yaml``) against
``pqn_vdn_rnn.py`` with ``config/alg/pqn_vdn_rnn_mpe.yaml``; ``shaq`` and ``transf_qmix``:
``alg=shaq`` / ``alg=transf_qmix`` against ``shaq.py`` / ``transf_qmix.py`` (``transf_qmix.py``
also needs ``utils/fast_attention.py`` beside it, and its own greedy test stands for the
driver's evaluation). ``PAIRINGS`` lists them.
Same env steps per seed (each side floors the total to whole updates), same number of seeds,
and by default each side's seeds ``vmap``ped in one program (JaxMARL's ``single_run`` does
``jax.jit(jax.vmap(train))``; ours ``run.num_seeds``).

Fetching the peer scripts (this file embeds none of JaxMARL's code)
-------------------------------------------------------------------
The PyPI package ``jaxmarl==0.2.0`` ships no baseline scripts. Copy, from the public repository
``FLAIROx/JaxMARL``, into a folder *outside this repository*::

    PEER_SCRIPTS/QLearning/qmix_rnn.py   (and vdn_rnn.py, iql_rnn.py, pqn_vdn_rnn.py)
    PEER_SCRIPTS/QLearning/config/alg/ql_rnn_mpe.yaml   (and pqn_vdn_rnn_mpe.yaml)

Only the scripts' ``make_train`` and ``env_from_config`` are used. The peer interpreter
(``--peer-python``, default ``/tmp/peer/bin/python``) needs ``jaxmarl==0.2.0``, ``flashbax`` and
``hydra-core`` (and ``gymnax``, which ``iql_rnn.py`` imports); ``wandb`` is stubbed.

How each side is run and timed
------------------------------
Both sides run as subprocesses, one after the other. For each the driver records wall time and
the subprocess's CPU time (user + sys from ``os.wait4``), and, inside
the process, the wall **and CPU** time (``time.process_time``: all threads) of the compile and
of the training phase separately. **The primary throughput number is training env steps per
CPU-second** (all seeds' env steps / CPU seconds of the training phase): on a shared machine the
CPU a process actually got is far steadier than wall time. Env steps per wall-second is shown
next to it, with the load averages.

Peer: a runner (``PEER_RUNNER``) imports the script, builds the env with its
``env_from_config``, reads the YAML, overrides only ``TOTAL_TIMESTEPS``, ``NUM_SEEDS``,
``SEED`` and ``TEST_DURING_TRAINING`` (``False`` for the ``jaxmarl_notest`` side: JaxMARL's
in-loop greedy test sits behind a ``lax.cond`` that ``vmap`` turns into a ``select``, so it
would run 512 envs x 30 steps at *every* update; that is the ``jaxmarl`` side, "as published"),
and times ``jax.jit(jax.vmap(make_train(config, env))).lower(keys).compile()`` and the call
separately. Its metrics reach the runner through the script's own per-update
``jax.debug.callback`` (``WANDB_MODE`` is not ``"disabled"``; ``wandb.log`` is a stub), as in a
real run. After training, the runner evaluates each seed's final parameters greedily on 512
episodes with its own code (the network is the script's ``RNNQNetwork``; greedy argmax over
valid actions; mean of ``returned_episode_returns`` over finished episodes, the quantity the
script's test reports), so JaxMARL gets a greedy return without the in-loop test.

Ours: a runner (``OURS_RUNNER``) calls ``jaxmarl.train.main`` with the same arguments as
``python -m jaxmarl.train ...`` (shown in the table) and records process CPU time at the
training loop's own timing points (compile, and each chunk from call to ``device_get`` of its
metrics), so compile, host-side logging, the end-of-run greedy evaluation (128 episodes per seed)
and checkpointing are excluded exactly as in ``summary.md``'s env steps/s.

Hangs: before the fix in ``jaxmarl/networks/init.py`` (2026-11-23), vmapped multi-seed programs
could hang at 0% CPU on jaxlib 0.10.2's CPU runtime: batched LAPACK QRs (flax's ``orthogonal``
initialiser under ``vmap``) deadlock its thread pool. Our networks now use our own initialiser;
JaxMARL's scripts still use flax's. The driver therefore watches each subprocess: if its CPU
time does not advance for ``--stall-s`` seconds (default 60) it is killed and the seeds are run
as separate processes (``NUM_SEEDS=1, SEED=s`` / ``run.num_seeds=1 run.seed=s``: a single,
unbatched QR does not hang). ``--peer-separate`` / ``--ours-separate`` go straight to separate
processes. The table's "mode" column says which way each side ran.

Both cores busy: one JaxMARL process keeps ~1.3 of two cores busy, ours with ``ours_devices``
(``run.devices`` = seeds) both. ``--peer-separate --peer-concurrent 2`` runs JaxMARL's
single-seed processes two at a time, so both sides use the whole machine: the fair CPU
comparison. A group's training wall time is its env steps over the sum of its processes'
training rates (the training phases overlap; the compiles, ~20 s, run side by side first).

Returns
-------
JaxMARL's ``MPELogWrapper`` multiplies rewards by ``num_agents`` (3) before logging, so its
logged returns are 3x the per-agent raw returns; the table shows per-agent raw returns
(JaxMARL's divided by 3) and JaxMARL's scale. Its MPE episodes are 26 steps, ours 25
(``docs/mpe-parity-findings.md`` F3), so its returns hold one more (negative) step reward.
"Greedy" is the greedy evaluation of the final parameters (ours: 128 episodes per seed; JaxMARL:
the runner's 512 episodes per seed, or the script's last in-loop test on the ``jaxmarl`` side);
"train" is the mean episode return of the last 5% of updates (epsilon-greedy at the final
epsilon: 0.05, PQN 0.1). JaxMARL's Q-learning scripts log the mean over the rollout's 26 steps of
a value that is 0 until the episode ends at the last step, so per-agent raw = logged x 26 / 3;
its PQN script's envs run on across updates, so per-agent raw = logged / 3
(``peer_train_raw``).

Usage::

    python benchmarks/q_learning_vs_jaxmarl.py --algs qmix --steps 2000000 --seeds 3 \\
        --sides ours,jaxmarl_notest
    python benchmarks/q_learning_vs_jaxmarl.py --report-only --plot curves.png
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import itertools
import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
import time
from concurrent import futures as concurrent_futures
from pathlib import Path

from ppo_vs_jaxmarl import _mean_std, machine_load

from jaxmarl.training.host.logging import read_jsonl, rows_with_episodes

REPO = Path(__file__).resolve().parents[1]
NUM_AGENTS = 3  # MPE_simple_spread_v3
PEER_EVAL_EPISODES = 512


@dataclasses.dataclass(frozen=True)
class Pairing:
    """One of our learners and the JaxMARL script it is compared with.

    Attributes:
        script: the peer script under ``PEER_SCRIPTS/QLearning``.
        config: the peer's YAML, relative to ``PEER_SCRIPTS``.
        our_steps_per_update: env steps of one update in our preset.
        peer_steps_per_update: env steps of one update in the peer's config.
        peer_train_scale: JaxMARL's logged training return times this is the per-agent raw
            return (see ``peer_train_raw``).
        peer_extra: config entries the peer's YAML lacks (``shaq_mpe.yaml`` names no env).
    """

    script: str
    config: str
    our_steps_per_update: int
    peer_steps_per_update: int
    peer_train_scale: float
    peer_extra: tuple[tuple[str, object], ...] = ()


# ql_rnn_mpe.yaml: 8 envs; ours 25-step rollouts, JaxMARL resets and rolls out one 26-step
# episode per update, so its logged return is (3x return) / 26 (see peer_train_raw).
_QL = dict(
    config="QLearning/config/alg/ql_rnn_mpe.yaml",
    our_steps_per_update=8 * 25,
    peer_steps_per_update=8 * 26,
    peer_train_scale=26 / NUM_AGENTS,
)
PAIRINGS = {
    "qmix": Pairing(script="qmix_rnn.py", **_QL),
    "vdn": Pairing(script="vdn_rnn.py", **_QL),
    "iql": Pairing(script="iql_rnn.py", **_QL),
    # pqn_vdn_rnn_mpe.yaml: 256 envs x 16 steps on both sides; the envs run on across updates,
    # so the logged value is the last finished episode's return (x3), not diluted by steps.
    "pqn_vdn": Pairing(
        script="pqn_vdn_rnn.py",
        config="QLearning/config/alg/pqn_vdn_rnn_mpe.yaml",
        our_steps_per_update=256 * 16,
        peer_steps_per_update=256 * 16,
        peer_train_scale=1 / NUM_AGENTS,
    ),
    # shaq_mpe.yaml: 8 envs x 25 steps (its env's max_steps) from a reset every update; it
    # logs the rollout's summed team reward (3 agents' shared reward: 3x), undiluted.
    "shaq": Pairing(
        script="shaq.py",
        config="QLearning/config/alg/shaq_mpe.yaml",
        our_steps_per_update=8 * 25,
        peer_steps_per_update=8 * 25,
        peer_train_scale=1 / NUM_AGENTS,
        peer_extra=(("ENV_NAME", "MPE_simple_spread_v3"), ("ENV_KWARGS", {})),
    ),
    # transf_qmix_mpe.yaml: as shaq_mpe.yaml, 8 envs x 25 steps from a reset every update,
    # logging the rollout's summed team reward (3x).
    "transf_qmix": Pairing(
        script="transf_qmix.py",
        config="QLearning/config/alg/transf_qmix_mpe.yaml",
        our_steps_per_update=8 * 25,
        peer_steps_per_update=8 * 25,
        peer_train_scale=1 / NUM_AGENTS,
    ),
}


# --eps-fraction: both sides' epsilon schedules end at this fraction of the run (ours:
# eps_decay; the peer's EPSILON_ANNEAL_TIME counts steps of its NUM_ENVS envs), for runs shorter
# than the published configs' whose schedule would otherwise end at a different point.
MATCHED_EPSILON: dict[str, float] = {}


def peer_train_raw(alg: str, logged: list[float]) -> list[float]:
    """JaxMARL's logged training return -> per-agent raw episode return.

    The Q-learning scripts (``qmix_rnn.py`` ...) log the mean over the rollout's 26 steps of
    ``returned_episode_returns``, which is 0 until the episode ends at the rollout's last step
    (every update starts from a reset), so the logged value is (3x return) / 26.
    ``pqn_vdn_rnn.py``'s envs run on across updates, so every step holds the last finished
    episode's (3x) return.
    """
    return [v * PAIRINGS[alg].peer_train_scale for v in logged]


PEER_RUNNER = r"""
import importlib.util, json, sys, time, types

script, config_path, total_steps, num_seeds, seed, test, eval_episodes, extra = sys.argv[1:9]
sys.path.insert(0, script.rsplit("/", 1)[0])  # transf_qmix.py imports utils.fast_attention
logged = []
module = types.ModuleType("wandb")
module.init = lambda *a, **k: None
progress = {"next": 0.0}
def _log(metrics, *args, **kwargs):  # WANDB_LOG_ALL_SEEDS adds "rng<seed>/<key>" copies
    row = {k: float(v) for k, v in metrics.items() if "/" not in k}
    # shaq.py has no WANDB_LOG_ALL_SEEDS: its vmapped callback runs once per seed, in order
    labels = [k.split("/")[0] for k in metrics if k.startswith("rng")]
    row["seed"] = labels[0] if labels else None
    row.setdefault("update_steps", row.get("updates", row.get("num_updates", 0.0)))
    logged.append(row)
    if row["update_steps"] >= progress["next"]:
        print(f"update {int(row['update_steps'])} t={time.perf_counter() - T0:.0f}s "
              f"cpu={time.process_time() - C0:.0f}s", file=sys.stderr, flush=True)
        progress["next"] = row["update_steps"] + max(1, NUM_UPDATES // 20)
module.log = _log
sys.modules["wandb"] = module

import jax, jax.numpy as jnp, numpy as np, yaml
if not hasattr(jax, "tree_leaves"):  # transf_qmix.py calls jax.tree_leaves, gone in jax 0.6
    jax.tree_leaves = jax.tree_util.tree_leaves

spec = importlib.util.spec_from_file_location("peer_script", script)
peer = importlib.util.module_from_spec(spec)
spec.loader.exec_module(peer)
from jaxmarl.wrappers.baselines import CTRolloutManager

config = yaml.safe_load(open(config_path))
def _number(v):  # the YAML writes 2e6 and 5e-3, which YAML 1.1 reads as strings
    try:
        return float(v) if isinstance(v, str) else v
    except ValueError:
        return v
config = {k: _number(v) for k, v in config.items()}
# WANDB_MODE is not "disabled" so the script's per-update jax.debug.callback runs and reaches
# the stub above: that is how the script reports its metrics (train returns none).
config.update(SEED=int(seed), NUM_SEEDS=int(num_seeds), WANDB_MODE="online",
              WANDB_LOG_ALL_SEEDS=True, TOTAL_TIMESTEPS=int(total_steps),
              TEST_DURING_TRAINING=test == "1", **json.loads(extra))
for key in ("NUM_ENVS", "NUM_STEPS", "BUFFER_SIZE", "BUFFER_BATCH_SIZE", "HIDDEN_SIZE",
            "TARGET_UPDATE_INTERVAL", "NUM_EPOCHS", "TEST_NUM_STEPS", "TEST_NUM_ENVS",
            "MIXER_EMBEDDING_DIM", "MIXER_HYPERNET_HIDDEN_DIM", "LEARNING_STARTS",
            "NUM_MINIBATCHES", "NUM_LAYERS", "MEMORY_WINDOW", "AGENT_HIDDEN_DIM",
            "EPSILON_ANNEAL_TIME", "NUM_TEST_EPISODES", "TEST_INTERVAL", "SAMPLE_SIZE"):
    if key in config:
        config[key] = int(config[key])
from jaxmarl.wrappers.baselines import MPELogWrapper
if hasattr(peer, "env_from_config"):
    env, _ = peer.env_from_config(dict(config))
else:  # shaq.py builds its env in main(): unwrapped, one rollout of max_steps per update
    from jaxmarl import make
    env = make(config["ENV_NAME"], **config["ENV_KWARGS"])
    config.setdefault("NUM_STEPS", env.max_steps)
train = peer.make_train(config, env)
# shaq.py and transf_qmix.py log each rollout's summed team reward and their in-loop test as
# "(test_)returns"
TRANSFORMER = hasattr(peer, "TransformerAgent")
PEER_CURVE, PEER_TEST = (
    ("returns", "test_returns") if hasattr(peer, "AgentRNN") or TRANSFORMER
    else ("returned_episode_returns", "test_returned_episode_returns"))
NUM_UPDATES = config["NUM_UPDATES"]
rngs = jax.random.split(jax.random.PRNGKey(config["SEED"]), config["NUM_SEEDS"])
fn = jax.jit(jax.vmap(train))
T0, C0 = time.perf_counter(), time.process_time()
compiled = fn.lower(rngs).compile()
compile_s, compile_cpu_s = time.perf_counter() - T0, time.process_time() - C0
print(f"compiled in {compile_s:.0f}s", file=sys.stderr, flush=True)
T0, C0 = time.perf_counter(), time.process_time()
out = jax.block_until_ready(compiled(rngs)); jax.effects_barrier()
train_s, train_cpu_s = time.perf_counter() - T0, time.process_time() - C0


def greedy_return(state, key):
    # The runner's own greedy evaluation of final parameters: one episode in each of
    # eval_episodes envs, greedy over valid actions, mean returned_episode_returns (x3 scale).
    n = int(eval_episodes)
    wrapped = env if hasattr(peer, "env_from_config") else MPELogWrapper(env)
    test_env = CTRolloutManager(wrapped, batch_size=n)
    hidden_size = config.get("HIDDEN_SIZE", config.get("AGENT_HIDDEN_DIM"))
    if hasattr(peer, "AgentRNN"):  # shaq.py: the agents' parameters are the first train state
        params = state.params
        net = peer.AgentRNN(action_dim=test_env.max_action_space, hidden_dim=hidden_size,
                            init_scale=config["AGENT_INIT_SCALE"])
        apply = lambda variables, h, x, d: net.apply(variables, h, (x, d))
    elif hasattr(peer, "RNNQNetwork"):  # qmix_rnn.py, vdn_rnn.py, iql_rnn.py
        params = state.params
        params = params["agent"] if "agent" in params else params  # qmix: {"agent", "mixer"}
        net = peer.RNNQNetwork(action_dim=test_env.max_action_space,
                               hidden_dim=config["HIDDEN_SIZE"])
        apply = net.apply
    else:  # pqn_vdn_rnn.py: layer-normed QNetwork with (unused) batch statistics
        params = {"params": state.params, "batch_stats": state.batch_stats}
        net = peer.QNetwork(action_dim=test_env.max_action_space,
                            hidden_size=config["HIDDEN_SIZE"],
                            num_layers=config["NUM_LAYERS"], norm_type=config["NORM_TYPE"],
                            norm_input=config.get("NORM_INPUT", False))
        apply = lambda variables, h, x, d: net.apply(variables, h, x, d, False)
    key, reset_key = jax.random.split(key)
    obs, state = test_env.batch_reset(reset_key)
    dones = {a: jnp.zeros((n,), dtype=bool) for a in env.agents + ["__all__"]}
    hidden = peer.ScannedRNN.initialize_carry(hidden_size, len(env.agents), n)
    stack = lambda d: jnp.stack([d[a] for a in env.agents])

    def step(carry, step_key):
        obs, dones, state, hidden = carry
        hidden, q = jax.vmap(apply, in_axes=(None, 0, 0, 0))(
            params, hidden, stack(obs)[:, None], stack(dones)[:, None])
        valid = stack(test_env.get_valid_actions(state.env_state))
        act = jnp.argmax(q[:, 0] - (1 - valid) * 1e10, axis=-1)
        obs, state, _, dones, infos = test_env.batch_step(
            step_key, state, {a: act[i] for i, a in enumerate(env.agents)})
        return (obs, dones, state, hidden), infos

    _, infos = jax.lax.scan(step, (obs, dones, state, hidden),
                            jax.random.split(key, config.get("TEST_NUM_STEPS", 30)))
    done = infos["returned_episode"]
    return jnp.nanmean(jnp.where(done, infos["returned_episode_returns"], jnp.nan))


eval_keys = jax.vmap(lambda k: jax.random.fold_in(k, 12345))(rngs)
greedy_eval = []
if not TRANSFORMER:  # transf_qmix.py's own greedy test (below) ran at its last update
    try:
        greedy_eval = np.asarray(
            jax.jit(jax.vmap(greedy_return))(out["runner_state"][0], eval_keys)).tolist()
    except Exception as error:  # keep the training result if the evaluation fails
        print(f"greedy evaluation failed: {error!r}", file=sys.stderr, flush=True)
# the script labels each seed's rows "rng<key[0]>": list them in vmap order (as the evaluation)
seeds = [f"rng{int(k[0])}" for k in np.asarray(rngs)]
if all(row["seed"] is None for row in logged):  # in call order: seed 0, 1, ... per update
    for i, row in enumerate(logged):
        row["seed"] = seeds[i % len(seeds)]
    for s in seeds:
        steps = [r["update_steps"] for r in logged if r["seed"] == s]
        assert steps == sorted(steps) and len(set(steps)) == len(steps), "calls out of order"
assert set(seeds) == {row["seed"] for row in logged}, "seed labels do not match the keys"
def per_seed(name):
    rows = {s: sorted((r for r in logged if r["seed"] == s), key=lambda r: r["update_steps"])
            for s in seeds}
    names = [k for k in logged[0] if k == name or k.startswith(name + "_agent")]
    name = name if name in names else names  # iql logs test metrics per agent only
    value = (lambda r: r[name]) if isinstance(name, str) else (
        lambda r: float(np.mean([r[k] for k in name])))
    return np.asarray([[value(r) for r in rows[s]] for s in seeds])
result = {"num_updates": NUM_UPDATES, "seeds": config["NUM_SEEDS"], "seed": config["SEED"],
          "compile_s": compile_s, "compile_cpu_s": compile_cpu_s,
          "train_s": train_s, "train_cpu_s": train_cpu_s, "jax": jax.__version__,
          "env_steps_per_seed": NUM_UPDATES * config["NUM_ENVS"] * config["NUM_STEPS"],
          "eval_greedy_logged": greedy_eval}
curve = per_seed(PEER_CURVE)  # [seeds, updates], x3 scale
tail = max(1, NUM_UPDATES // 20)
result["train_logged"] = curve[:, -tail:].mean(axis=1).tolist()
stride = max(1, NUM_UPDATES // 200)
result["logged_curve"] = curve[:, ::stride].tolist()
result["curve_updates"] = list(range(1, NUM_UPDATES + 1))[::stride]
if TRANSFORMER:
    result["eval_greedy_logged"] = per_seed(PEER_TEST)[:, -1].tolist()
if config["TEST_DURING_TRAINING"]:
    result["greedy_logged"] = per_seed(PEER_TEST)[:, -1].tolist()
print("RESULT " + json.dumps(result))
"""

OURS_RUNNER = r"""
import json, sys, time
import jaxmarl.training.host.loop as loop

class _Clock:
    # loop.py times compile and each chunk with time.perf_counter(); record process CPU
    # time at the same points.
    def __init__(self):
        self.marks = []
    def perf_counter(self):
        now = time.perf_counter()
        self.marks.append((now, time.process_time()))
        return now
    def __getattr__(self, name):
        return getattr(time, name)

clock = _Clock()
loop.time = clock
from jaxmarl.train import main
rc = main(sys.argv[1:])
pairs = list(zip(clock.marks[0::2], clock.marks[1::2]))
cpu = [b[1] - a[1] for a, b in pairs]
wall = [b[0] - a[0] for a, b in pairs]
print("CPU " + json.dumps({"marks": len(clock.marks), "compile_s": wall[0],
      "compile_cpu_s": cpu[0], "train_s": sum(wall[1:]), "train_cpu_s": sum(cpu[1:])}))
sys.exit(rc)
"""


def _proc_cpu_s(pid: int) -> float:
    """utime + stime of a live process (all its threads), in seconds."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return -1.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_watched(cmd: list[str], cwd, stall_s: float, log: Path) -> dict:
    """Run ``cmd``; kill it if its CPU time stops advancing for ``stall_s`` seconds.

    Returns wall seconds, the child's user+sys CPU seconds (from ``os.wait4``, so only this
    child's, even with other children running at once), stdout, stderr, the return code and
    whether it was killed as stalled.
    """
    t0 = time.perf_counter()
    with open(log, "w") as out, open(log.with_suffix(".err"), "w") as err:
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=out, stderr=err, text=True)
        last_cpu, last_progress, stalled = 0.0, time.perf_counter(), False
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            time.sleep(1)
            cpu = _proc_cpu_s(proc.pid)
            if cpu > last_cpu + 1.0:
                last_cpu, last_progress = cpu, time.perf_counter()
            elif time.perf_counter() - last_progress > stall_s:
                stalled = True
                print(
                    f"  stalled ({cpu:.0f} CPU-s, no progress for {stall_s:.0f} s): killing",
                    flush=True,
                )
                proc.send_signal(signal.SIGKILL)
                _, status, usage = os.wait4(proc.pid, 0)
                break
        proc.returncode = os.waitstatus_to_exitcode(status)
    return {
        "returncode": proc.returncode,
        "stalled": stalled,
        "wall_s": time.perf_counter() - t0,
        "process_cpu_s": usage.ru_utime + usage.ru_stime,
        "stdout": log.read_text(),
        "stderr": log.with_suffix(".err").read_text(),
    }


def _merge_separate(runs: list[dict], seeds: int, concurrent: int = 1) -> dict:
    """Seeds run one process each -> one row: CPU summed, returns concatenated.

    With ``concurrent`` processes at a time, each group's training phases overlap, so a group
    counts the wall seconds its env steps would take at the sum of its processes' training
    rates (steps / own training seconds); one at a time, that is the plain sum of the times.
    """
    mode = f"{seeds} separate processes" + (f", {concurrent} at a time" if concurrent > 1 else "")
    merged = dict(runs[0], seeds=seeds, mode=mode)
    for key in ("train_cpu_s", "process_cpu_s"):
        merged[key] = sum(r[key] for r in runs)
    groups = [runs[i : i + concurrent] for i in range(0, len(runs), concurrent)]
    merged["train_s"] = sum(
        sum(r["env_steps_per_seed"] for r in g)
        / sum(r["env_steps_per_seed"] / r["train_s"] for r in g)
        for g in groups
    )
    merged["wall_s"] = sum(max(r["wall_s"] for r in g) for g in groups)
    for key in ("compile_s", "compile_cpu_s"):
        merged[key] = sum(r[key] for r in runs) / len(runs)
    for key in (
        "train_raw",
        "greedy_raw",
        "train_logged",
        "logged_curve",
        "eval_greedy_logged",
        "curve",
    ):
        if key in runs[0]:
            merged[key] = [v for r in runs for v in r[key]]
    merged["load_before"], merged["load_after"] = runs[0]["load_before"], runs[-1]["load_after"]
    merged["per_process"] = [
        {k: r[k] for k in ("train_s", "train_cpu_s", "compile_s", "wall_s") if k in r} for r in runs
    ]
    return merged


def _rates(r: dict) -> dict:
    steps = r["env_steps_per_seed"] * r["seeds"]
    r["steps_per_s"] = steps / r["train_s"]
    r["steps_per_cpu_s"] = steps / r["train_cpu_s"]
    return r


def _vmapped_or_separate(
    run_seeds, seeds: int, separate: bool, label: str, concurrent: int = 1
) -> dict:
    """``run_seeds(seed) -> result | None`` (``None``: stalled; ``seed=None``: all seeds vmapped
    in one process). Vmapped first, unless ``separate``; on a stall, or if ``separate``, one
    process per seed, ``concurrent`` at a time (seeds 0..k-1 together, then the next k), merged."""
    if not separate:
        r = run_seeds(None)
        if r is not None:
            return _rates(dict(r, mode="vmapped, 1 process"))
        print(
            f"  {label}: vmapped run stalled; running the seeds as separate processes", flush=True
        )
    runs = []
    with concurrent_futures.ThreadPoolExecutor(max_workers=concurrent) as pool:
        for first in range(0, seeds, concurrent):
            group = range(first, min(seeds, first + concurrent))
            for s, r in zip(group, pool.map(run_seeds, group)):
                if r is None:
                    raise RuntimeError(f"{label} seed {s} stalled in a single-seed process")
                runs.append(r)
    merged = _rates(_merge_separate(runs, seeds, concurrent))
    merged["fell_back_from_vmapped"] = not separate
    return merged


def run_ours(
    alg: str, steps: int, seeds: int, out_dir: Path, separate: bool, stall_s, devices: int = 1
) -> dict:
    """Our command line, seeds vmapped in one program (``separate``: one process per seed;
    ``devices``: the vmapped seeds split over that many host devices, ``run.devices``)."""

    def run_seeds(seed):
        if seed is None:
            name = f"ours_{alg}" + (f"_devices{devices}" if devices > 1 else "")
            extra = [f"run.devices={devices}"] if devices > 1 else []
            return _run_ours(alg, steps, seeds, out_dir, name, extra, stall_s)
        name, extra = f"ours_{alg}_seed{seed}", [f"run.seed={seed}"]
        return _run_ours(alg, steps, 1, out_dir, name, extra, stall_s)

    return _vmapped_or_separate(run_seeds, seeds, separate, "ours")


def _run_ours(alg, steps, seeds, out_dir, name, extra, stall_s) -> dict | None:
    steps_per_update = PAIRINGS[alg].our_steps_per_update
    updates = steps // steps_per_update
    chunk = min(updates, 500)  # a run it does not divide ends with a shorter chunk
    args = [
        f"alg={alg}",
        "env=MPE_simple_spread_v3",
        f"run.num_seeds={seeds}",
        f"run.total_timesteps={updates * steps_per_update}",
        f"run.updates_per_chunk={chunk}",
        "run.checkpoint_every=0",
        f"run.out_dir={out_dir}",
        f"run.name={name}",
        "run.gif=false",
        *extra,
        *([f"eps_decay={MATCHED_EPSILON['fraction']}"] if MATCHED_EPSILON else []),
        "--no-progress",
    ]
    load_before = machine_load()
    with tempfile.TemporaryDirectory() as tmp:
        runner = Path(tmp) / "ours_runner.py"
        runner.write_text(OURS_RUNNER)
        cmd = [sys.executable, str(runner), *args]
        proc = run_watched(cmd, REPO, stall_s, out_dir / f"{name}.log")
    if proc["stalled"]:
        return None
    if proc["returncode"]:
        raise RuntimeError(f"ours failed:\n{proc['stdout'][-3000:]}\n{proc['stderr'][-3000:]}")
    timing = json.loads(
        next(x for x in proc["stdout"].splitlines() if x.startswith("CPU "))[len("CPU ") :]
    )
    num_chunks = -(-updates // chunk)  # the last one shorter when chunk does not divide
    if timing["marks"] != 2 + 2 * num_chunks:
        raise RuntimeError(f"unexpected timing marks {timing['marks']} for {num_chunks} chunks")
    run_dir = out_dir / name
    # Updates in which no episode ended log a placeholder 0 (PQN's 16-step rollouts on 25-step
    # episodes): leave them out of the training return and its curve.
    rows = rows_with_episodes(read_jsonl(run_dir / "metrics.jsonl"))
    tail_from = updates - max(1, updates // 20)
    train = [
        _mean_std(
            [r["episode_return"] for r in rows if r["seed"] == s and r["update"] > tail_from]
        )[0]
        for s in range(seeds)
    ]
    stride = max(1, updates // 200)
    curve = [
        [r["episode_return"] for r in rows if r["seed"] == s][stride - 1 :: stride]
        for s in range(seeds)
    ]
    curve_updates = [r["update"] for r in rows if r["seed"] == 0][stride - 1 :: stride]
    evals = [json.loads(x) for x in (run_dir / "eval.jsonl").read_text().splitlines() if x]
    last_eval = max(r["update"] for r in evals)
    return {
        "side": "ours",
        "cmd": "python -m jaxmarl.train " + " ".join(args),
        "env_steps_per_seed": updates * steps_per_update,
        "seeds": seeds,
        **{k: timing[k] for k in ("compile_s", "compile_cpu_s", "train_s", "train_cpu_s")},
        "train_raw": train,
        "greedy_raw": [r["eval_episode_return"] for r in evals if r["update"] == last_eval],
        "curve": curve,
        "curve_env_steps": [u * steps_per_update for u in curve_updates],
        "wall_s": proc["wall_s"],
        "process_cpu_s": proc["process_cpu_s"],
        "load_before": load_before,
        "load_after": machine_load(),
    }


def run_peer(
    alg, steps, seeds, test, python, scripts, out_dir, separate, stall_s, concurrent=1
) -> dict:
    side = "jaxmarl" if test else "jaxmarl_notest"

    def run_seeds(seed):
        if seed is None:
            log = out_dir / f"{side}_{alg}"
            return _run_peer(alg, steps, seeds, 0, test, python, scripts, log, stall_s)
        log = out_dir / f"{side}_{alg}_seed{seed}"
        return _run_peer(alg, steps, 1, seed, test, python, scripts, log, stall_s)

    return _vmapped_or_separate(run_seeds, seeds, separate, "peer", concurrent)


def _run_peer(alg, steps, seeds, seed, test, python, scripts, log, stall_s):
    side = "jaxmarl" if test else "jaxmarl_notest"
    with tempfile.TemporaryDirectory() as tmp:
        runner = Path(tmp) / "peer_runner.py"
        runner.write_text(PEER_RUNNER)
        script = scripts / "QLearning" / PAIRINGS[alg].script
        peer_config = scripts / PAIRINGS[alg].config
        cmd = [python, "-I", str(runner), str(script), str(peer_config)]
        cmd += [str(steps), str(seeds), str(seed), "1" if test else "0", str(PEER_EVAL_EPISODES)]
        peer_extra = dict(PAIRINGS[alg].peer_extra)
        if MATCHED_EPSILON:
            per_env = steps / (PAIRINGS[alg].peer_steps_per_update / 25)  # 25-step rollouts
            peer_extra["EPSILON_ANNEAL_TIME"] = int(MATCHED_EPSILON["fraction"] * per_env)
        cmd += [json.dumps(peer_extra)]
        load_before = machine_load()
        proc = run_watched(cmd, tmp, stall_s, log.with_suffix(".log"))
    if proc["stalled"]:
        return None
    if proc["returncode"]:
        raise RuntimeError(f"peer failed:\n{proc['stdout'][-3000:]}\n{proc['stderr'][-3000:]}")
    line = next(x for x in proc["stdout"].splitlines() if x.startswith("RESULT "))
    result = json.loads(line[len("RESULT ") :])
    result.update(
        side=side,
        cmd=(
            f"{python} -I <PEER_RUNNER> {script} {peer_config} "
            f"TOTAL_TIMESTEPS={steps} NUM_SEEDS={seeds} SEED={seed} "
            f"TEST_DURING_TRAINING={bool(test)}"
        ),
        train_raw=peer_train_raw(alg, result["train_logged"]),
        greedy_raw=[v / NUM_AGENTS for v in result["eval_greedy_logged"]],
        wall_s=proc["wall_s"],
        process_cpu_s=proc["process_cpu_s"],
        load_before=load_before,
        load_after=machine_load(),
    )
    return result


LABELS = {
    "ours": "ours",
    "ours_devices": "ours, run.devices = seeds",
    "jaxmarl": "JaxMARL 0.2.0, as published (in-loop test)",
    "jaxmarl_notest": "JaxMARL 0.2.0, TEST_DURING_TRAINING=False",
}


def _load(text: str) -> str:
    return " ".join(x.strip("[]' ") for x in text.split(","))


def _title(alg: str) -> str:
    return "TransfQMIX" if alg == "transf_qmix" else f"{alg.upper()}-RNN"


def table(results: dict) -> str:
    out = []
    for alg, sides in results.items():
        out.append(f"### {_title(alg)} on MPE_simple_spread_v3\n")
        out.append(
            "| | mode | env steps / seed | seeds | greedy return, per agent raw "
            "| train return (last 5%), per agent raw | greedy, x3 (JaxMARL scale) "
            "| **env steps / CPU-s** (training) | env steps / wall-s (training) "
            "| training CPU s / wall s | compile wall s (CPU s) | process CPU s / wall s "
            "| load before / after |"
        )
        out.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
        for key in ("ours", "ours_devices", "jaxmarl", "jaxmarl_notest"):
            r = sides.get(key)
            if not r:
                continue
            m, s = _mean_std(r["greedy_raw"]) if r["greedy_raw"] else (float("nan"),) * 2
            tm, ts = _mean_std(r["train_raw"])
            out.append(
                f"| {LABELS[key]} | {r['mode']} | {r['env_steps_per_seed']:,} | {r['seeds']} "
                f"| {m:.2f} ± {s:.2f} | {tm:.2f} ± {ts:.2f} | {m * NUM_AGENTS:.1f} "
                f"| **{r['steps_per_cpu_s']:,.0f}** | {r['steps_per_s']:,.0f} "
                f"| {r['train_cpu_s']:,.0f} / {r['train_s']:,.0f} "
                f"| {r['compile_s']:.0f} ({r['compile_cpu_s']:.0f}) "
                f"| {r['process_cpu_s']:,.0f} / {r['wall_s']:,.0f} "
                f"| {_load(r['load_before'])} / {_load(r['load_after'])} |"
            )
        for ours_key, key in itertools.product(
            ("ours", "ours_devices"), ("jaxmarl", "jaxmarl_notest")
        ):
            ours = sides.get(ours_key)
            if ours and sides.get(key):
                peer = sides[key]
                out.append(
                    f"\nThroughput {LABELS[ours_key]} / {LABELS[key]}: "
                    f"**{ours['steps_per_cpu_s'] / peer['steps_per_cpu_s']:.2f}x per CPU-second**"
                    f", {ours['steps_per_s'] / peer['steps_per_s']:.2f}x per wall-second"
                )
        out.append("")
    return "\n".join(out) + "\n"


def plot(results: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    algs = list(results)
    fig, axes = plt.subplots(1, len(algs), figsize=(5 * len(algs), 3.6), squeeze=False)
    for ax, alg in zip(axes[0], algs):
        sides = (
            ("ours", "C0"),
            ("ours_devices", "C2"),
            ("jaxmarl_notest", "C1"),
            ("jaxmarl", "C3"),
        )
        for key, colour in sides:
            r = results[alg].get(key)
            if not r:
                continue
            if key in ("ours", "ours_devices"):
                xs, curves = r["curve_env_steps"], r["curve"]
            else:
                xs = [u * PAIRINGS[alg].peer_steps_per_update for u in r["curve_updates"]]
                curves = [peer_train_raw(alg, c) for c in r["logged_curve"]]
            for i, c in enumerate(curves):
                n = min(len(xs), len(c))
                label = LABELS[key] if i == 0 else None
                ax.plot(xs[:n], c[:n], color=colour, alpha=0.6, lw=0.8, label=label)
        ax.set_title(f"{_title(alg)}, MPE simple_spread (train, eps-greedy)")
        ax.set_xlabel("env steps per seed")
        ax.set_ylabel("episode return per agent (raw)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--algs", default="qmix")
    parser.add_argument("--steps", type=int, default=2_000_000)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--sides", default="ours,jaxmarl_notest")
    parser.add_argument("--peer-python", default="/tmp/peer/bin/python")
    parser.add_argument("--peer-scripts", type=Path, default=Path("/tmp/peer_scripts"))
    parser.add_argument("--out-dir", type=Path, default=REPO / "runs" / "q_learning_vs_jaxmarl")
    parser.add_argument("--report-only", action="store_true")
    parser.add_argument("--plot", type=Path, help="write the training curves to this PNG")
    parser.add_argument("--stall-s", type=float, default=60.0)
    parser.add_argument(
        "--eps-fraction",
        type=float,
        help="end both sides' epsilon schedules at this fraction of the run (shaq, "
        "transf_qmix: their scripts' EPSILON_ANNEAL_TIME counts per-env steps)",
    )
    parser.add_argument("--ours-separate", action="store_true", help="one process per seed")
    parser.add_argument("--peer-separate", action="store_true", help="one process per seed")
    parser.add_argument(
        "--peer-concurrent",
        type=int,
        default=1,
        help="with --peer-separate: run this many single-seed processes at a time (2 keeps "
        "both cores of a 2-core machine busy, as ours with run.devices does)",
    )
    args = parser.parse_args(argv)
    unknown = [alg for alg in args.algs.split(",") if alg not in PAIRINGS]
    if unknown:
        parser.error(f"--algs: unknown {unknown}; choose from {sorted(PAIRINGS)}")
    if args.peer_concurrent < 1 or (args.peer_concurrent > 1 and not args.peer_separate):
        parser.error("--peer-concurrent must be >= 1, and above 1 only with --peer-separate")
    if args.eps_fraction is not None:
        if not 0.0 < args.eps_fraction <= 1.0:
            parser.error("--eps-fraction must be in (0, 1]")
        if set(args.algs.split(",")) - {"shaq", "transf_qmix"}:
            parser.error("--eps-fraction is for --algs shaq,transf_qmix (8 envs x 25 steps)")
        MATCHED_EPSILON["fraction"] = args.eps_fraction
    args.out_dir.mkdir(parents=True, exist_ok=True)
    store = args.out_dir / "results.json"
    results = json.loads(store.read_text()) if store.exists() else {}
    if not args.report_only:
        for alg in args.algs.split(","):
            for side in args.sides.split(","):
                print(
                    f"[{dt.datetime.now(dt.timezone.utc):%H:%M:%S}] {alg} {side}: "
                    f"{args.steps:,} steps x {args.seeds} seeds, load {machine_load()}",
                    flush=True,
                )
                if side in ("ours", "ours_devices"):
                    devices = args.seeds if side == "ours_devices" else 1
                    r = run_ours(
                        alg,
                        args.steps,
                        args.seeds,
                        args.out_dir,
                        args.ours_separate,
                        args.stall_s,
                        devices,
                    )
                else:
                    r = run_peer(
                        alg,
                        args.steps,
                        args.seeds,
                        side == "jaxmarl",
                        args.peer_python,
                        args.peer_scripts,
                        args.out_dir,
                        args.peer_separate,
                        args.stall_s,
                        args.peer_concurrent,
                    )
                r["finished_utc"] = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
                results.setdefault(alg, {})[side] = r
                store.write_text(json.dumps(results, indent=1))
                print(
                    f"  -> {r['mode']}: {r['steps_per_cpu_s']:,.0f} env steps/CPU-s, "
                    f"{r['steps_per_s']:,.0f} env steps/s wall, process {r['process_cpu_s']:,.0f} "
                    f"CPU-s / {r['wall_s']:,.0f} wall-s",
                    flush=True,
                )
    if args.plot:
        plot(results, args.plot)
    text = table(results) + f"\n{platform.platform()}, {os.cpu_count()} CPUs\n"
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
