"""JaxMARL 0.2.0's own baseline scripts, run unchanged against this package.

Each script (PPO and Q-learning) is imported from a JaxMARL checkout (``--jaxmarl DIR``, its
``baselines/`` folder; nothing of it is copied here) and trained for a few updates by this
package's interpreter, with ``hydra``, ``omegaconf`` and ``wandb`` stubbed. The PPO scripts'
YAML is read as ``benchmarks/ppo_vs_jaxmarl.py``'s peer runner reads it (``PEER_PRELUDE``:
``TOTAL_TIMESTEPS`` and ``NUM_SEEDS`` set, Overcooked layouts looked up by name); the
Q-learning scripts get their env from their own ``env_from_config``. Each script runs in its
own process; the table says whether one jitted training run finished, or the error's line.
Sizes are cut to 4 envs so that compiling dominates; nothing is measured. ``jax.tree_leaves``,
which ``transf_qmix.py`` calls and jax 0.6 removed, is restored as ``jax.tree_util.tree_leaves``
on both sides.

Usage::

    python benchmarks/jaxmarl_scripts_here.py --jaxmarl /path/to/JaxMARL \\
        --peer /tmp/peer/bin/python --main --jobs 3 --md benchmarks/results/jaxmarl_scripts_here.md

The Q-learning scripts import ``flashbax`` (``pip install "jaxmarl[jaxmarl-scripts]"`` here; in
the peer's venv ``pip install flashbax distrax``).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ppo_vs_jaxmarl import PEER_PRELUDE, SCRIPT_STUBS  # noqa: E402

# (script, config) under the checkout's baselines/ folder.
SCRIPTS = [
    ("IPPO/ippo_ff_mpe.py", "IPPO/config/ippo_ff_mpe.yaml"),
    ("IPPO/ippo_ff_mpe_facmac.py", "IPPO/config/ippo_ff_mpe_facmac.yaml"),
    ("IPPO/ippo_rnn_mpe.py", "IPPO/config/ippo_rnn_mpe.yaml"),
    ("MAPPO/mappo_rnn_mpe.py", "MAPPO/config/mappo_homogenous_rnn_mpe.yaml"),
    ("IPPO/ippo_rnn_smax.py", "IPPO/config/ippo_rnn_smax.yaml"),
    ("MAPPO/mappo_rnn_smax.py", "MAPPO/config/mappo_homogenous_rnn_smax.yaml"),
    ("IPPO/ippo_ff_overcooked.py", "IPPO/config/ippo_ff_overcooked.yaml"),
    ("IPPO/ippo_cnn_overcooked.py", "IPPO/config/ippo_cnn_overcooked.yaml"),
    ("IPPO/ippo_rnn_overcooked_v2.py", "IPPO/config/ippo_rnn_overcooked_v2.yaml"),
    ("IPPO/ippo_ff_hanabi.py", "IPPO/config/ippo_ff_hanabi.yaml"),
    ("IPPO/ippo_rnn_hanabi.py", "IPPO/config/ippo_rnn_hanabi.yaml"),
    ("MAPPO/mappo_ff_hanabi.py", "MAPPO/config/mappo_homogenous_ff_hanabi.yaml"),
    ("MAPPO/mappo_rnn_hanabi.py", "MAPPO/config/mappo_homogenous_rnn_hanabi.yaml"),
    ("IPPO/ippo_ff_switch_riddle.py", "IPPO/config/ippo_ff_switch_riddle.yaml"),
    ("IPPO/ippo_ff_mabrax.py", "IPPO/config/ippo_ff_mabrax.yaml"),
]
# JaxMARL's Q-learning scripts: make_train(config, env) with the env their env_from_config
# builds from the algorithm's YAML (config/alg/<name>.yaml).
Q_SCRIPTS = [
    ("QLearning/pqn_vdn_rnn.py", "QLearning/config/alg/pqn_vdn_rnn_mpe.yaml"),
    ("QLearning/pqn_vdn_rnn.py", "QLearning/config/alg/pqn_vdn_rnn_smax.yaml"),
    ("QLearning/pqn_vdn_ff.py", "QLearning/config/alg/pqn_vdn_ff_hanabi.yaml"),
    ("QLearning/pqn_vdn_cnn_overcooked.py", "QLearning/config/alg/pqn_vdn_cnn_overcooked.yaml"),
    ("QLearning/pqn_vdn_ff.py", "QLearning/config/alg/pqn_vdn_ff_mpe.yaml"),
    ("QLearning/iql_rnn.py", "QLearning/config/alg/ql_rnn_mpe.yaml"),
    ("QLearning/iql_rnn.py", "QLearning/config/alg/ql_rnn_smax.yaml"),
    ("QLearning/vdn_rnn.py", "QLearning/config/alg/ql_rnn_mpe.yaml"),
    ("QLearning/vdn_rnn.py", "QLearning/config/alg/ql_rnn_smax.yaml"),
    ("QLearning/qmix_rnn.py", "QLearning/config/alg/ql_rnn_mpe.yaml"),
    ("QLearning/qmix_rnn.py", "QLearning/config/alg/ql_rnn_smax.yaml"),
    ("QLearning/vdn_ff.py", "QLearning/config/alg/vdn_ff_mpe.yaml"),
    ("QLearning/iql_cnn_overcooked.py", "QLearning/config/alg/ql_cnn_overcooked.yaml"),
    ("QLearning/vdn_cnn_overcooked.py", "QLearning/config/alg/ql_cnn_overcooked.yaml"),
    ("QLearning/transf_qmix.py", "QLearning/config/alg/transf_qmix_mpe.yaml"),
    ("QLearning/transf_qmix.py", "QLearning/config/alg/transf_qmix_smax.yaml"),
    ("QLearning/shaq.py", "QLearning/config/alg/shaq_mpe.yaml"),
]
# Not run: IPPO/ippo_rnn.py and MAPPO/mappo_rnn.py (their configs are for JaxRobotarium, a
# separate package). shaq.py is the old format: no env_from_config, a flat config whose YAML
# names no env (Q_RUNNER adds MPE simple_spread).
OPTIONS = {"overrides": {"NUM_ENVS": 4, "NUM_STEPS": 16, "NUM_MINIBATCHES": 2}, "seed": 0}
TOTAL_STEPS = 2 * 4 * 16  # two updates of a single-agent count; more agents: fewer updates

# After the prelude: one jitted training run of one seed (MABrax's make_train also takes the
# key its networks are initialised with), or with "main" in the options the script's main().
_TRAIN = r"""
import inspect
key = jax.random.PRNGKey(0)
if options.get("main"):
    # The whole script: main() trains, then plots, animates or saves as the script does. The
    # Overcooked mains look the layout up by name themselves.
    layout = yaml.safe_load(open(config_path)).get("ENV_KWARGS", {}).get("layout")
    if isinstance(layout, str):
        config["ENV_KWARGS"]["layout"] = layout
    peer.main(config)
else:
    takes_key = len(inspect.signature(peer.make_train).parameters) > 1
    train = peer.make_train(config, key) if takes_key else peer.make_train(config)
    jax.block_until_ready(jax.jit(train)(key))
print("TRAINED")
"""
RUNNER = PEER_PRELUDE + _TRAIN

# The Q scripts: the same stubs (SCRIPT_STUBS), the YAML cut to a few small updates without
# their test episodes.
Q_RUNNER = (
    r"""
import copy, importlib.util, sys, types, yaml, jax
script, config_path = sys.argv[1:3]
sys.path.insert(0, str(__import__("pathlib").Path(script).parent))  # as `python script.py` has it
"""
    + SCRIPT_STUBS
    + r"""
if not hasattr(jax, "tree_leaves"):  # transf_qmix.py calls jax.tree_leaves, gone since jax 0.6
    jax.tree_leaves = jax.tree_util.tree_leaves
spec = importlib.util.spec_from_file_location("q_script", script)
q = importlib.util.module_from_spec(spec)
spec.loader.exec_module(q)
config = yaml.safe_load(open(config_path))
for k, v in config.items():
    if isinstance(v, str):
        try:
            config[k] = float(v)
        except ValueError:
            pass
config.update(NUM_ENVS=4, NUM_STEPS=8, TOTAL_TIMESTEPS=96, TEST_DURING_TRAINING=False,
              NUM_MINIBATCHES=2, BUFFER_SIZE=64, BUFFER_BATCH_SIZE=4, LEARNING_STARTS=0,
              NUM_SEEDS=1, SEED=0, WANDB_MODE="disabled")
old_format = not hasattr(q, "env_from_config")  # shaq.py: builds its env in main()
if old_format:
    config.update(ENV_NAME="MPE_simple_spread_v3", ENV_KWARGS={}, TEST_INTERVAL=32,
                  NUM_TEST_EPISODES=4, SAMPLE_SIZE=int(config.get("SAMPLE_SIZE", 1)))
if sys.argv[3:] == ["main"]:  # the whole script: main() trains, then saves its parameters
    base = yaml.safe_load(open(__import__("pathlib").Path(config_path).parents[1] / "config.yaml"))
    base.update(HYP_TUNE=False, SAVE_PATH="models", WANDB_MODE="disabled")
    q.main({**base, **config} if old_format else {**base, "alg": config})
elif old_format:
    env = __import__("jaxmarl").make(config["ENV_NAME"], **config["ENV_KWARGS"])
    jax.block_until_ready(jax.jit(q.make_train(config, env))(jax.random.PRNGKey(0)))
else:
    env, _ = q.env_from_config(copy.deepcopy(config))
    jax.block_until_ready(jax.jit(q.make_train(config, env))(jax.random.PRNGKey(0)))
print("TRAINED")
"""
)


def run_script(
    script: Path,
    config: Path,
    python: str = sys.executable,
    timeout: float = 900,
    q_learning: bool = False,
    whole: bool = False,
):
    """``(trained, detail)``: whether the script trained, else the last line of its error.
    ``q_learning``: a script of JaxMARL's ``QLearning`` folder (``make_train(config, env)``).
    ``whole``: run its ``main()`` (what it does after training too), in a temporary folder."""
    with tempfile.TemporaryDirectory() as tmp:
        runner = Path(tmp) / "runner.py"
        runner.write_text(Q_RUNNER if q_learning else RUNNER)
        argv = [python, "-I", str(runner)]
        if q_learning:
            argv += [str(script), str(config)] + (["main"] if whole else [])
        else:
            options = {**OPTIONS, "main": True} if whole else OPTIONS
            argv += ["ippo", str(script), str(config), str(TOTAL_STEPS), "1", json.dumps(options)]
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, cwd=tmp)
        except subprocess.TimeoutExpired:
            return False, f"did not finish in {timeout:.0f} s"
    if "TRAINED" in done.stdout.splitlines():
        return True, ""
    lines = [line for line in (done.stderr + done.stdout).splitlines() if line.strip()]
    # The exception's own line (JAX prints a note on its traceback filtering after it).
    errors = [line for line in lines if re.match(r"^[\w.]+(Error|Exception)\b", line)]
    if errors or lines:
        return False, (errors or lines)[-1]
    return False, f"exit status {done.returncode}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jaxmarl", type=Path, required=True, help="a JaxMARL checkout")
    parser.add_argument(
        "--peer",
        help="also run each script with this Python (a venv with jaxmarl==0.2.0): whether "
        "it trains with JaxMARL itself",
    )
    parser.add_argument(
        "--main",
        action="store_true",
        help="also run each script's main() (training, then its plots, GIFs or saved "
        "parameters) in a temporary folder",
    )
    parser.add_argument("--jobs", type=int, default=1, help="scripts run at once")
    parser.add_argument("--md", type=Path, help="write the table here too")
    parser.add_argument(
        "--only", help="run only the scripts whose path contains this (the table is theirs)"
    )
    args = parser.parse_args(argv)
    baselines = args.jaxmarl / "baselines"
    if not baselines.is_dir():
        parser.error(f"{args.jaxmarl} has no baselines/ folder; give a JaxMARL checkout")
    if args.jobs < 1:
        parser.error(f"--jobs must be at least 1, got {args.jobs}")
    jobs = [(s, c, False) for s, c in SCRIPTS] + [(s, c, True) for s, c in Q_SCRIPTS]
    if args.only:
        jobs = [job for job in jobs if args.only in job[0]]
    # (python, whole, column title): training alone, then main(), here and under JaxMARL.
    sides = [(sys.executable, "here"), *([(args.peer, "with JaxMARL 0.2.0")] if args.peer else [])]
    modes = [(False, "trains"), *([(True, "main() runs")] if args.main else [])]
    columns = [(python, whole, f"{what} {side}") for python, side in sides for whole, what in modes]

    def run(job):
        script, config, q_learning, (python, whole, title) = job
        start = time.perf_counter()
        result = run_script(
            baselines / script, baselines / config, python, q_learning=q_learning, whole=whole
        )
        outcome = "yes" if result[0] else result[1]
        print(f"{script} ({title}): {outcome} ({time.perf_counter() - start:.0f} s)", flush=True)
        return result

    runs = [(s, c, q, column) for s, c, q in jobs for column in columns]
    with ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(run, runs))
    rows = [
        "| script | config | " + " | ".join(title for *_, title in columns) + " | errors |",
        "|---|---|" + "---|" * len(columns) + "---|",
    ]
    for i, (script, config, _) in enumerate(jobs):
        cells = results[i * len(columns) : (i + 1) * len(columns)]
        errors = "; ".join(
            f"{title}: {detail}" for (*_, title), (ok, detail) in zip(columns, cells) if not ok
        )
        rows.append(
            f"| `{script}` | `{Path(config).stem}` | "
            + " | ".join("yes" if ok else "no" for ok, _ in cells)
            + f" | {errors.replace('|', '/')} |"
        )
    table = "\n".join(rows)
    print(table)
    if args.md:
        peer = " and under JaxMARL 0.2.0 itself" if args.peer else ""
        whole = ", then (`--main`) its whole `main()` in a temporary folder" if args.main else ""
        header = (
            "# JaxMARL's baseline scripts, run against this package\n\n"
            f"`benchmarks/jaxmarl_scripts_here.py` on {time.strftime('%Y-%m-%d')}: ours at "
            f"{_commit(Path(__file__).resolve().parents[1])}, JaxMARL's scripts at "
            f"{_commit(args.jaxmarl)}. Each script trains a few updates of 4 envs "
            f"in its own process under this package{peer}{whole} (hydra, omegaconf and wandb "
            "stubbed); `docs/coming_from_jaxmarl.md` says why the ones that do not train fail.\n\n"
        )
        args.md.write_text(header + table + "\n")
    return 0


def _commit(repo: Path) -> str:
    """The short commit of a git checkout (or a bare mirror), else "an unknown commit"."""
    for git_dir in (repo, repo / ".git"):
        done = subprocess.run(
            ["git", f"--git-dir={git_dir}", "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
        )
        if done.returncode == 0:
            return done.stdout.strip()
    return "an unknown commit"


if __name__ == "__main__":
    sys.exit(main())
