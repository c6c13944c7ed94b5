"""PPO on MPE simple_spread: our ``jaxmarl.train`` against JaxMARL 0.2.0's own baseline scripts.

Two comparisons, each run back to back on the same machine (ours, then theirs, per algorithm):

* ``ippo``: ``python -m jaxmarl.train alg=ippo env=MPE_simple_spread_v3`` (preset
  ``configs/ippo/MPE_simple_spread_v3.yaml``) against JaxMARL's ``baselines/IPPO/ippo_ff_mpe.py``
  with ``baselines/IPPO/config/ippo_ff_mpe.yaml``;
* ``mappo``: ``python -m jaxmarl.train alg=mappo preset=MPE_simple_spread_v3_rnn`` against
  JaxMARL's ``baselines/MAPPO/mappo_rnn_mpe.py`` with
  ``baselines/MAPPO/config/mappo_homogenous_rnn_mpe.yaml``.

Same env steps (both sides floor the total to whole updates of num_envs x num_steps), same
number of seeds. Our side vmaps the seeds in one program (``run.num_seeds``); JaxMARL's IPPO
script vmaps its seeds too (``NUM_SEEDS``), its MAPPO script trains one seed per call, so the
driver compiles it once and runs the seeds back to back.

Fetching the peer scripts (this file embeds none of JaxMARL's code)
-------------------------------------------------------------------
The PyPI package ``jaxmarl==0.2.0`` ships no baseline scripts. Copy these four files of the
public repository ``FLAIROx/JaxMARL`` (e.g. ``git clone https://github.com/FLAIROx/JaxMARL``, or
download them from GitHub) into a folder *outside this repository*, keeping this layout::

    PEER_SCRIPTS/IPPO/ippo_ff_mpe.py
    PEER_SCRIPTS/IPPO/config/ippo_ff_mpe.yaml
    PEER_SCRIPTS/MAPPO/mappo_rnn_mpe.py
    PEER_SCRIPTS/MAPPO/config/mappo_homogenous_rnn_mpe.yaml

and give the folder as ``--peer-scripts`` (default ``/tmp/peer_scripts``). The peer
interpreter (``--peer-python``, default ``/tmp/peer/bin/python``) needs ``jaxmarl==0.2.0`` and
``distrax``; ``hydra``, ``omegaconf``, ``wandb`` and ``matplotlib`` are replaced by stubs (the
scripts only use them in ``main``, and for ``wandb.log`` inside an ``io_callback``, which the stub
records, so the scripts' per-update host callback still runs and is timed).

How the peer side is run
------------------------
The driver writes a small runner (this file's ``PEER_RUNNER``) to a temp dir and runs it under
the peer interpreter with ``-I``. It imports the script, reads the published YAML config,
overrides only ``TOTAL_TIMESTEPS`` and ``NUM_SEEDS``, and calls the script's ``make_train``
exactly as its ``main`` does: IPPO ``jax.jit(jax.vmap(train))`` over
``split(PRNGKey(SEED), NUM_SEEDS)``; MAPPO ``jax.jit(train)`` on each of
``split(PRNGKey(SEED), seeds)``. Compile is timed with ``.lower(...).compile()``, training
separately (``block_until_ready``).

Returns
-------
JaxMARL's ``MPELogWrapper`` multiplies every reward by ``num_agents`` (3 on simple_spread)
before accumulating its episode-return log ("as per on-policy codebase"), so its logged returns
are 3x the per-agent raw returns; the table shows both (raw = logged / num_agents). What is
logged per update differs a little: IPPO's script logs the mean, over every step of the
rollout and every agent, of the most recently finished episode's return (a lagging value); its
MAPPO script logs that value at the rollout's last step, averaged over agents. Ours logs the
mean over agents of the raw returns of the episodes that finished during the update. "Final"
is the last update's value per seed, then mean +- std over seeds.

Fixed problem: on 2026-11-22 (jax 0.10.2, 2-core CPU) our side's MAPPO-RNN with
``run.num_seeds=3`` hung after compiling (``benchmarks/FINDINGS.md``, "Our own orthogonal
initialiser"):
batched LAPACK QRs (flax's ``orthogonal`` initialiser under ``vmap``) deadlocked jaxlib's CPU
thread pool. Our networks now use their own initialiser (``jaxmarl/networks/init.py``), and
3-seed runs complete.

Usage::

    python benchmarks/ppo_vs_jaxmarl.py                        # both algs, published steps
    python benchmarks/ppo_vs_jaxmarl.py --algs ippo --ippo-steps 2998272
    python benchmarks/ppo_vs_jaxmarl.py --report-only          # rebuild table from saved JSON
    python benchmarks/ppo_vs_jaxmarl.py --report-only --plot runs/curves  # + curves-<alg>.png
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
NUM_AGENTS = 3  # MPE_simple_spread_v3

ALGS = {
    "ippo": {
        "ours": ["alg=ippo", "env=MPE_simple_spread_v3"],
        "script": "IPPO/ippo_ff_mpe.py",
        "config": "IPPO/config/ippo_ff_mpe.yaml",
        "default_steps": 9_998_336,
        "per_update": 16 * 128,
        "updates_per_chunk": 61,
        "label": "IPPO-FF (16 envs x 128 steps, 64-64 tanh)",
    },
    "mappo": {
        "ours": ["alg=mappo", "preset=MPE_simple_spread_v3_rnn"],
        "script": "MAPPO/mappo_rnn_mpe.py",
        "config": "MAPPO/config/mappo_homogenous_rnn_mpe.yaml",
        "default_steps": 1_998_848,
        "per_update": 128 * 128,
        "updates_per_chunk": 8,
        "label": "MAPPO-RNN (128 envs x 128 steps, 128 dense + GRU 128)",
    },
}

# Stand-ins for the packages JaxMARL's scripts import but a run does not need (wandb, hydra,
# OmegaConf), installed into sys.modules before a script is loaded. Needs ``sys`` and ``types``;
# wandb.log's metrics collect in ``logged``. Shared with jaxmarl_scripts_here.py's Q runner.
SCRIPT_STUBS = r"""
logged = []
def _stub(name, **attrs):
    module = types.ModuleType(name)
    module.__dict__.update(attrs)
    sys.modules[name] = module
    return module

class _Null:  # whatever else a script's main calls on wandb (run, Table, plot.line, Artifact)
    project, name, id = "project", "run", "run"  # its save folders are named by the run
    def __call__(self, *a, **k): return self
    def __getattr__(self, name): return self
_stub("wandb", log=lambda metric, *a, **k: logged.append(metric), __getattr__=lambda n: _Null())
_stub("hydra", main=lambda *a, **k: (lambda f: f))
_stub("omegaconf", OmegaConf=types.SimpleNamespace(
    to_container=lambda c, **k: c, to_yaml=lambda c: str(c),
    save=lambda c, path: open(path, "w").write(str(c))))
"""

# Runs under the peer interpreter; imports JaxMARL's script from the fetched folder and reads
# its YAML with TOTAL_TIMESTEPS and NUM_SEEDS overridden (shared with jaxnav_ippo_vs_jaxmarl.py).
PEER_PRELUDE = (
    r"""
import importlib.util, json, sys, time, types

alg, script, config_path, total_steps, num_seeds = sys.argv[1:6]
total_steps, num_seeds = int(total_steps), int(num_seeds)
# Optional 7th argument, JSON: {"overrides": {KEY: value} applied over the YAML,
# "vmap_seeds": bool (default: alg == "ippo"), "extra_path": a folder put first on sys.path,
# "seed": replaces the YAML's SEED}.
options = json.loads(sys.argv[6]) if len(sys.argv) > 6 else {}
if options.get("extra_path"):
    sys.path.insert(0, options["extra_path"])
seed = options.get("seed")  # for a YAML without SEED
"""
    + SCRIPT_STUBS
    + r"""
try:
    import matplotlib.pyplot  # noqa: F401
except ImportError:
    _stub("matplotlib"); _stub("matplotlib.pyplot")

import jax, numpy as np, yaml

spec = importlib.util.spec_from_file_location("peer_script", script)
peer = importlib.util.module_from_spec(spec)
spec.loader.exec_module(peer)

config = yaml.safe_load(open(config_path))
for k, v in config.items():  # hydra/OmegaConf read "2e-3" as a float; PyYAML leaves a string
    if isinstance(v, str):
        try:
            config[k] = float(v)
        except ValueError:
            pass
config.update(options.get("overrides", {}))
config["TOTAL_TIMESTEPS"] = total_steps
config["NUM_SEEDS"] = num_seeds
config["WANDB_MODE"] = "disabled"
env_kwargs = config.get("ENV_KWARGS", {})
if config.get("ENV_NAME") == "overcooked" and isinstance(env_kwargs.get("layout"), str):
    # as the Overcooked scripts' main: JaxMARL's env takes the layout dict, not its name
    from jaxmarl.environments.overcooked import overcooked_layouts
    env_kwargs["layout"] = overcooked_layouts[env_kwargs["layout"]]
"""
)

_PEER_TRAIN = r"""
train = peer.make_train(config)
num_updates = config["NUM_UPDATES"]
rngs = jax.random.split(jax.random.PRNGKey(config["SEED"] if seed is None else seed), num_seeds)

result = {"alg": alg, "num_updates": num_updates, "seeds": num_seeds,
          "env_steps_per_seed": num_updates * config["NUM_ENVS"] * config["NUM_STEPS"],
          "jax": jax.__version__, "backend": jax.default_backend()}
if options.get("vmap_seeds", alg == "ippo"):  # main: jax.vmap(jax.jit(train))(rngs)
    fn = jax.jit(jax.vmap(train))
    t0 = time.perf_counter(); compiled = fn.lower(rngs).compile()
    result["compile_s"] = time.perf_counter() - t0
    t0 = time.perf_counter(); out = jax.block_until_ready(compiled(rngs))
    result["train_s"] = time.perf_counter() - t0
    curve = np.asarray(out["metrics"]["returned_episode_returns"])  # [seeds, updates]
    result["logged_curve"] = curve.tolist()
else:  # the script's main: jax.jit(train)(rng), one seed per call
    fn = jax.jit(train)
    t0 = time.perf_counter(); compiled = fn.lower(rngs[0]).compile()
    result["compile_s"] = time.perf_counter() - t0
    result["train_s"] = 0.0
    curves = []
    for key in rngs:
        logged.clear()
        t0 = time.perf_counter(); jax.block_until_ready(compiled(key))
        jax.effects_barrier()
        result["train_s"] += time.perf_counter() - t0
        ordered = sorted(logged, key=lambda m: int(m["env_step"]))
        curves.append([float(m["returns"]) for m in ordered])
        print(f"SEED {len(curves)}/{num_seeds} {result['train_s']:.0f} s: {curves[-1]}", flush=True)
    result["logged_curve"] = curves
result["final_logged"] = [float(c[-1]) for c in result["logged_curve"]]
print("RESULT " + json.dumps(result))
"""
PEER_RUNNER = PEER_PRELUDE + _PEER_TRAIN


def _mean_std(values):
    values = [float(v) for v in values]
    std = statistics.stdev(values) if len(values) > 1 else 0.0
    return statistics.fmean(values), std


def seed_iqm(values) -> float | None:
    """The IQM over seeds (``jaxmarl.stats``), or ``None`` for a single seed (no interquartile
    mean) or without the stats extra, so that the drivers' tables show '—' instead of failing
    after both sides have trained."""
    from jaxmarl import stats

    if len(values) < 2:
        return None
    try:
        return stats.iqm([float(v) for v in values])
    except ModuleNotFoundError:  # rliable, which jaxmarl.stats imports when called
        return None


def machine_load() -> str:
    return Path("/proc/loadavg").read_text().split(" ")[0:3].__str__()


def load_results(out_dir: Path, name: str = "results.json") -> dict:
    """``out_dir/name`` (``{}`` if there is none), with every recorded ``run_dir`` that
    no longer exists moved to the folder of that name in ``out_dir``: a run made elsewhere (a
    GPU machine's /tmp) and unpacked here reports from where it now is."""

    def rebase(node):
        if isinstance(node, dict):
            recorded = node.get("run_dir")
            if isinstance(recorded, str) and not Path(recorded).exists():
                here = out_dir / Path(recorded).name
                if here.exists():
                    node["run_dir"] = str(here)
            for value in node.values():
                rebase(value)
        return node

    store = out_dir / name
    return rebase(json.loads(store.read_text())) if store.exists() else {}


def machine() -> str:
    """This machine in one line (platform, CPUs, GPUs where nvidia-smi answers), recorded with
    each side's run so that a later ``--report-only`` elsewhere names where it ran."""
    try:
        gpus = subprocess.run(
            ["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=30,
        ).stdout.split("\n")
    except (OSError, subprocess.SubprocessError):
        gpus = []
    gpus = [g.strip() for g in gpus if g.strip()]
    return f"{platform.platform()}, {os.cpu_count()} CPUs" + (
        f", GPU: {', '.join(gpus)}" if gpus else ""
    )


def machines_line(records: dict) -> str:
    """Where each side of ``records`` (side -> record) ran, as recorded at run time."""
    return "; ".join(
        f"{side}: {r.get('machine', 'machine not recorded')}" for side, r in records.items()
    )


def other_benchmarks() -> list[str]:
    ps = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True).stdout
    return [
        line.strip()[:160]
        for line in ps.splitlines()
        if any(tag in line for tag in ("env_throughput", "_workload", "bench.py"))
        and "grep" not in line
        and str(os.getpid()) not in line.split()[:1]
    ]


def wait_for_quiet(poll_s: float = 60.0, max_wait_s: float = 1800.0) -> list[str]:
    """Wait (up to max_wait_s) while another throughput benchmark runs on this machine.

    Returns what was still running when we started (empty if the machine was quiet)."""
    start = time.time()
    while True:
        busy = other_benchmarks()
        if not busy or time.time() - start >= max_wait_s:
            return busy
        print(
            f"[wait] other benchmark running ({len(busy)} procs); load {machine_load()}", flush=True
        )
        time.sleep(poll_s)


def run_train_command(cmd: list[str], run_dir: Path) -> tuple[float, dict[str, str]]:
    """Run a ``jaxmarl.train`` command; ``(wall seconds, run_dir/summary.md as a dict)``."""
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode:
        raise RuntimeError(f"ours failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return wall, read_summary(run_dir)


def read_summary(run_dir: Path) -> dict[str, str]:
    """A finished run's ``summary.md`` table as ``{row: value}``."""
    summary = {}
    for line in (run_dir / "summary.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) == 2:
            summary[cells[0]] = cells[1]
    return summary


def run_ours(alg: str, steps: int, seeds: int, out_dir: Path, extra: list[str]) -> dict:
    name = f"ours_{alg}" + ("_" + "_".join(e.replace("=", "-") for e in extra) if extra else "")
    run_dir = out_dir / name
    cmd = [
        sys.executable,
        "-P",  # an installed jaxmarl, not the source folder of the working directory
        "-m",
        "jaxmarl.train",
        *ALGS[alg]["ours"],
        f"run.num_seeds={seeds}",
        f"run.total_timesteps={steps}",
        f"run.out_dir={out_dir}",
        f"run.name={name}",
        chunk_override(alg, steps),
        *extra,
        "--no-progress",
    ]
    load_before = machine_load()
    wall, _ = run_train_command(cmd, run_dir)
    result = read_ours(alg, run_dir, steps, seeds)
    result.update(
        cmd=" ".join(cmd[1:]),
        wall_s=wall,
        load_before=load_before,
        load_after=machine_load(),
        extra=extra,
        machine=machine(),
    )
    return result


def read_ours(alg: str, run_dir: Path, steps: int, seeds: int) -> dict:
    """One finished ``jaxmarl.train`` run's numbers (``summary.md``, ``metrics``, ``eval``)."""
    summary = read_summary(run_dir)
    rows = [json.loads(x) for x in (run_dir / "metrics.jsonl").read_text().splitlines() if x]
    last = max(r["update"] for r in rows)
    final = [r["episode_return"] for r in rows if r["update"] == last]
    evals = [json.loads(x) for x in (run_dir / "eval.jsonl").read_text().splitlines() if x]
    last_eval = max(r["update"] for r in evals) if evals else None
    greedy = [r["eval_episode_return"] for r in evals if r["update"] == last_eval]
    return {
        "side": "ours",
        "alg": alg,
        "run_dir": str(run_dir),
        "env_steps_per_seed": steps_floor(alg, steps),
        "seeds": seeds,
        "compile_s": float(summary["compile (s)"]),
        "steps_per_s": float(  # "(all seeds)", since sweeps "(all seeds and points)"
            next(v for k, v in summary.items() if k.startswith("training env steps/s")).replace(
                ",", ""
            )
        ),
        "final_raw": final,
        "greedy_raw": greedy,
    }


def steps_floor(alg: str, steps: int) -> int:
    per_update = ALGS[alg]["per_update"]
    return steps // per_update * per_update


def chunk_override(alg: str, steps: int) -> str:
    """The preset's updates_per_chunk (a run that it does not divide ends with a shorter chunk)."""
    return f"run.updates_per_chunk={ALGS[alg]['updates_per_chunk']}"


def run_runner(
    runner_text: str, peer_python: str, args: list[str], log: Path | None = None
) -> dict:
    """Run ``runner_text`` under ``peer_python -I`` with ``args``; its ``RESULT {json}`` line
    plus ``cmd``, ``wall_s`` and ``load_before``. ``log`` receives the runner's output as it
    runs (else it is captured)."""
    with tempfile.TemporaryDirectory() as tmp:
        runner = Path(tmp) / "peer_runner.py"
        runner.write_text(runner_text)
        cmd = [peer_python, "-I", str(runner), *args]
        load_before = machine_load()
        t0 = time.perf_counter()
        if log is None:
            proc = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True)
            output = proc.stdout + proc.stderr
        else:
            with log.open("w") as out:
                proc = subprocess.run(cmd, cwd=tmp, stdout=out, stderr=subprocess.STDOUT)
            output = log.read_text()
        wall = time.perf_counter() - t0
    if proc.returncode:
        raise RuntimeError(f"peer failed:\n{output[-6000:]}")
    line = next(x for x in output.splitlines() if x.startswith("RESULT "))
    result = json.loads(line[len("RESULT ") :])
    result.update(
        cmd=" ".join(["<peer python> -I peer_runner.py", *args]),
        wall_s=wall,
        load_before=load_before,
    )
    return result


def run_peer(
    alg: str,
    steps: int,
    seeds: int,
    peer_python: str,
    scripts: Path,
    options: dict | None = None,
    *,
    seed: int | None = None,
    num_agents: int | None = None,
    log: Path | None = None,
) -> dict:
    """JaxMARL's script for ``ALGS[alg]`` under the peer interpreter (``options``: see
    ``PEER_PRELUDE``; ``seed`` replaces the YAML's ``SEED``). Logged returns are divided by
    ``num_agents``, else ``ALGS[alg]["log_scale"]`` (default ``NUM_AGENTS``, MPELogWrapper's
    factor) into per-agent raw returns; ``log``: see ``run_runner``."""
    scale = num_agents or ALGS[alg].get("log_scale", NUM_AGENTS)
    options = {**(options or {}), **({} if seed is None else {"seed": seed})}
    args = [
        alg,
        str(scripts / ALGS[alg]["script"]),
        str(scripts / ALGS[alg]["config"]),
        str(steps),
        str(seeds),
        *([json.dumps(options)] if options else []),
    ]
    result = run_runner(PEER_RUNNER, peer_python, args, log)
    total = result["env_steps_per_seed"] * result["seeds"]
    result.update(
        side="jaxmarl",
        steps_per_s=total / result["train_s"],
        final_raw=[v / scale for v in result["final_logged"]],
        log_scale=scale,
        load_after=machine_load(),
        machine=machine(),
    )
    return result


SIDES = ("ours", "ours_devices", "ours_nobootstrap", "ours_devices_nobootstrap", "jaxmarl")


def side_label(key: str, r: dict) -> str:
    return {
        "ours": "ours",
        "ours_devices": f"ours, run.devices={r['seeds']} (one host device per seed)",
        "ours_nobootstrap": "ours, bootstrap_truncation=false",
        "ours_devices_nobootstrap": f"ours, run.devices={r['seeds']}, no bootstrap",
        "jaxmarl": "JaxMARL 0.2.0",
    }[key]


def pooled(records: list[dict]) -> dict:
    """One side's runs from several root seeds (``--seed``) as one record of all their seeds:
    per-seed values concatenated, env steps/s and compile the mean, wall time the sum, the
    machines named together. Runs of one length only, each root seed and each run once."""
    steps = {r["env_steps_per_seed"] for r in records}
    if len(steps) != 1:
        raise ValueError(
            f"--pool: runs of different lengths ({sorted(steps)} env steps per seed); pool only "
            "runs of one --steps"
        )
    roots = [r.get("root_seed") for r in records if r.get("root_seed") is not None]
    if len(roots) != len(set(roots)):
        raise ValueError(
            f"--pool: two runs of the same root seed ({sorted(roots)}) would count their seeds "
            "twice; pool runs of different --seed"
        )
    # A run without a recorded root (made before --seed existed) is known by its numbers.
    runs = [(r.get("finished_utc"), tuple(r.get("final_raw") or [])) for r in records]
    if len(runs) != len(set(runs)):
        raise ValueError("--pool: the same run twice would count its seeds twice; pool each once")
    # Seeds of two machines pool (a later GPU of the same kind may report another kernel);
    # the record names every machine, so the mixed throughput mean is not read as one's.
    machines = sorted({r["machine"] for r in records if r.get("machine")})
    join = lambda key: [v for r in records for v in r.get(key) or []]  # noqa: E731
    return {
        "side": records[0]["side"],
        "parts": records,
        "env_steps_per_seed": steps.pop(),
        "seeds": sum(r["seeds"] for r in records),
        "root_seeds": [r.get("root_seed") for r in records],
        "final_raw": join("final_raw"),
        "greedy_raw": join("greedy_raw"),
        "steps_per_s": sum(r["steps_per_s"] for r in records) / len(records),
        "compile_s": sum(r["compile_s"] for r in records) / len(records),
        "wall_s": sum(r["wall_s"] for r in records),
        "load_before": records[0].get("load_before"),
        "load_after": records[-1].get("load_after"),
        **({"machine": " + ".join(machines)} if machines else {}),
    }


def pool_sides(mine: dict, other: dict) -> None:
    """Pools, in place, each side of ``other`` (``{side: record}`` of another ``--seed`` run)
    into the same side of ``mine``."""
    for side, r in other.items():
        parts = mine[side].get("parts", [mine[side]]) if side in mine else []
        mine[side] = pooled([*parts, r]) if parts else r


def pooled_curve(r: dict, curve) -> tuple[list[float], list[list[float]]]:
    """``curve(r)`` of a record, a pooled one included: its seeds are its parts' seeds in order
    (one ``--steps``, so the same update grid)."""
    if "parts" not in r:
        return curve(r)
    parts = [pooled_curve(part, curve) for part in r["parts"]]
    return parts[0][0], [ys for _, part_ys in parts for ys in part_ys]


def training_curves(r: dict) -> tuple[list[float], list[list[float]]]:
    """``(env steps per seed [U], train return per agent raw [seeds, U])`` of one side."""
    if r["side"] == "jaxmarl":
        curves = [[v / NUM_AGENTS for v in c] for c in r["logged_curve"]]
        every = r["env_steps_per_seed"] / len(curves[0])
        return [every * (u + 1) for u in range(len(curves[0]))], curves
    rows = [
        json.loads(x) for x in (Path(r["run_dir"]) / "metrics.jsonl").read_text().splitlines() if x
    ]
    seeds = sorted({row["seed"] for row in rows})
    updates = sorted({row["update"] for row in rows})
    value = {(row["seed"], row["update"]): row["episode_return"] for row in rows}
    steps = {row["update"]: row["env_steps"] for row in rows}
    return [steps[u] for u in updates], [[value[s, u] for u in updates] for s in seeds]


def plot(results: dict, prefix: Path) -> list[Path]:
    """One PNG per algorithm, ``PREFIX-<alg>.png``: every side's training return per agent
    (mean over seeds, min-max band) against env steps."""
    from jaxmarl.training.host.plotting import plot_curves

    written = []
    for alg, sides in results.items():
        series = {side_label(k, sides[k]): training_curves(sides[k]) for k in SIDES if k in sides}
        written.append(
            plot_curves(
                series,
                f"{prefix}-{alg}.png",
                xlabel="env steps per seed",
                ylabel="train episode return per agent (raw)",
                title=f"{alg.upper()} on MPE simple_spread: mean of seeds, min-max band",
            )
        )
    return written


def table(results: dict) -> str:
    """Markdown table(s) from {alg: {"ours": {...}, "jaxmarl": {...}, ...}}."""
    out = []
    for alg, sides in results.items():
        ours, peer = sides.get("ours"), sides.get("jaxmarl")
        out.append(f"### {ALGS[alg]['label']}\n")
        out.append(
            "| | env steps / seed | seeds | final return, per agent raw (mean ± std) "
            "| same, x3 (JaxMARL's logged scale) | greedy eval (per agent raw) "
            "| training env steps/s (all seeds) | compile s | wall s |"
        )
        out.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        for key in SIDES:
            r = sides.get(key)
            if not r:
                continue
            m, s = _mean_std(r["final_raw"])
            greedy = "—"
            if r.get("greedy_raw"):
                greedy = "{:.2f} ± {:.2f}".format(*_mean_std(r["greedy_raw"]))
            label = side_label(key, r)
            out.append(
                f"| {label} | {r['env_steps_per_seed']:,} | {r['seeds']} | {m:.2f} ± {s:.2f} "
                f"| {m * NUM_AGENTS:.1f} ± {s * NUM_AGENTS:.1f} | {greedy} "
                f"| {r['steps_per_s']:,.0f} | {r['compile_s']:.1f} | {r['wall_s']:.0f} |"
            )
        if ours and peer:
            out.append(
                "\nRatio ours/JaxMARL: throughput "
                f"**{ours['steps_per_s'] / peer['steps_per_s']:.2f}x**, "
                f"compile {ours['compile_s'] / peer['compile_s']:.2f}x; final return difference "
                f"(ours − JaxMARL, per agent raw) "
                f"{_mean_std(ours['final_raw'])[0] - _mean_std(peer['final_raw'])[0]:+.2f}.\n"
            )
        if sides.get("ours_devices") and peer:
            out.append(
                f"Ratio ours with run.devices={sides['ours_devices']['seeds']} / JaxMARL: "
                f"throughput **{sides['ours_devices']['steps_per_s'] / peer['steps_per_s']:.2f}x**."
                "\n"
            )
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--algs", default="ippo,mappo")
    parser.add_argument("--ippo-steps", type=int, default=ALGS["ippo"]["default_steps"])
    parser.add_argument("--mappo-steps", type=int, default=ALGS["mappo"]["default_steps"])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--peer-python", default="/tmp/peer/bin/python")
    parser.add_argument("--peer-scripts", type=Path, default=Path("/tmp/peer_scripts"))
    parser.add_argument("--out-dir", type=Path, default=REPO / "runs" / "ppo_vs_jaxmarl")
    parser.add_argument(
        "--sides",
        default="ours,jaxmarl",
        help="which to run: ours, jaxmarl, ours_nobootstrap, ours_devices, "
        "ours_devices_nobootstrap (comma list)",
    )
    parser.add_argument("--md", type=Path, default=None, help="write the table here too")
    parser.add_argument("--report-only", action="store_true")
    parser.add_argument(
        "--plot", type=Path, default=None, help="write PREFIX-<alg>.png training curves"
    )
    parser.add_argument(
        "--max-wait-s",
        type=float,
        default=1800.0,
        help="longest wait for another benchmark to finish before running anyway",
    )
    args = parser.parse_args(argv)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    store = args.out_dir / "results.json"
    results = load_results(args.out_dir)
    if not args.report_only:
        for alg in args.algs.split(","):
            steps = args.ippo_steps if alg == "ippo" else args.mappo_steps
            for side in args.sides.split(","):
                concurrent = wait_for_quiet(max_wait_s=args.max_wait_s)
                print(
                    f"[{dt.datetime.now(dt.timezone.utc):%H:%M:%S}] {alg} {side}: "
                    f"{steps:,} steps x {args.seeds} seeds, load {machine_load()}",
                    flush=True,
                )
                if side == "jaxmarl":
                    r = run_peer(alg, steps, args.seeds, args.peer_python, args.peer_scripts)
                else:
                    extra = ["run.gif=true" if alg == "ippo" else "run.gif=false"]
                    if "nobootstrap" in side:
                        extra.append("bootstrap_truncation=false")
                    if "devices" in side:  # one host device per seed (run.devices)
                        extra.append(f"run.devices={args.seeds}")
                    r = run_ours(alg, steps, args.seeds, args.out_dir, extra)
                r["concurrent_at_start"] = concurrent
                r["concurrent_at_end"] = other_benchmarks()
                r["finished_utc"] = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
                results.setdefault(alg, {})[side] = r
                store.write_text(json.dumps(results, indent=1))
                print(
                    f"  -> {r['steps_per_s']:,.0f} env steps/s, compile {r['compile_s']:.1f}s, "
                    f"final raw {_mean_std(r['final_raw'])[0]:.2f}",
                    flush=True,
                )
    text = table(results)
    text += "".join(f"\n{alg}: {machines_line(sides)}\n" for alg, sides in results.items())
    print(text)
    if args.md:
        args.md.write_text(text)
    if args.plot:
        print("curves:", ", ".join(str(path) for path in plot(results, args.plot)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
