"""The host loop: jitted chunks of updates, and everything that happens between them.

Inside a chunk nothing touches the host: ``K`` updates of every seed (``vmap``) run as one
compiled program. Between chunks the host fetches the chunk's metrics, shows progress, writes
metrics, evaluates, and checkpoints the whole training state. Because a chunk is a pure
function of the state, stopping after chunk ``k`` and resuming from its checkpoint gives the
same metrics and parameters as an uninterrupted run.

Run directory::

    RUN_DIR/config.yaml        the resolved config (``--resume`` checks it)
    RUN_DIR/metrics.jsonl      one row per (update, seed); also metrics.csv
    RUN_DIR/eval.jsonl         greedy evaluations
    RUN_DIR/tb/                TensorBoard (optional): a tag per seed plus mean and IQM
    RUN_DIR/wandb_id.txt       the W&B run a resumed run continues (with the wandb logger)
    RUN_DIR/checkpoints/       orbax checkpoints, step = chunks done
    RUN_DIR/learning_curve.png
    RUN_DIR/learning_curve_{own_coin_fraction,episode_welfare}.png   social dilemmas (Coin Game)
    RUN_DIR/episode.gif        one greedy episode of seed 0 (envs that can render)
"""

from __future__ import annotations

import dataclasses
import io
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxmarl.render import can_render, save_episode_gif
from jaxmarl.training.config import RunConfig, chunk_sizes
from jaxmarl.training.data_parallel import DATA_AXIS
from jaxmarl.training.host import distributed
from jaxmarl.training.host.checkpoint import Checkpointer, CheckpointMismatchError
from jaxmarl.training.host.devices import Placement, check_split, fetch, has_replay
from jaxmarl.training.host.interrupts import latch_ctrl_c, raise_if_ctrl_c
from jaxmarl.training.host.logging import (
    JsonlLogger,
    dashboard_row,
    make_run_logger,
    read_jsonl,
    rows_with_episodes,
)
from jaxmarl.training.host.progress import Progress
from jaxmarl.training.learner import Learner, evaluate, record_greedy_episode
from jaxmarl.training.sweep import check_sweepable, with_hyperparameters


@dataclasses.dataclass(frozen=True)
class RunResult:
    """What ``run`` leaves behind.

    Attributes:
        state: final training state (leaves ``[num_points * num_seeds, ...]``).
        history: one dict per (update, seed), as written to ``metrics.jsonl`` (with an
            in-program sweep also ``point``, the index into ``point_labels``).
        evaluations: one dict per evaluation (mean over seeds; per-seed rows in eval.jsonl).
        run_dir: the run directory.
        compile_s: seconds spent compiling the chunk.
        train_s: seconds spent running chunks (excluding compile and host work).
        already_finished: a resumed run whose checkpoint was its last chunk: nothing was
            compiled, trained or written.
    """

    state: Any
    history: list[dict]
    evaluations: list[dict]
    run_dir: Path
    compile_s: float
    train_s: float
    already_finished: bool = False
    point_labels: tuple[str, ...] = ()


def seed_keys(seed: int, num_seeds: int) -> jax.Array:
    """One key per seed (split, never broadcast)."""
    return jax.random.split(jax.random.key(seed), num_seeds)


def member_inputs(run_config: RunConfig) -> tuple[jax.Array, dict[str, np.ndarray]]:
    """What ``init_member`` takes for every vmapped member: ``num_points * num_seeds`` keys
    (each point reuses the seed keys of a run of its own) and each swept value (float32)."""
    points, num_seeds = run_config.sweep.points(), run_config.num_seeds
    members = np.arange(len(points) * num_seeds)
    keys = seed_keys(run_config.seed, num_seeds)[members % num_seeds]
    swept = {
        name: np.array([points[i // num_seeds][name] for i in members], np.float32)
        for name in run_config.sweep.names
    }
    return keys, swept


def member_state_shapes(learner: Learner, keys: jax.Array, swept: dict) -> Any:
    """The abstract training state of every member as one device of its data split holds it
    (the structure the mesh specs are read from; the devices are emulated by ``vmap``)."""
    data_devices = learner.config.run.data_devices
    one = init_member(learner)

    def member(key, values):
        if data_devices == 1:
            return one(key, values)
        shares = jax.vmap(lambda _: one(key, values), axis_name=DATA_AXIS)(jnp.arange(data_devices))
        return jax.tree.map(lambda x: x[0], shares)

    return jax.eval_shape(jax.vmap(member), keys, swept)


def _check_same_data_split(checkpointer, step: int, state: Any, data_devices: int) -> None:
    """A replay buffer split over data devices holds each device's envs' items in its own
    slots, so it cannot move to another split; everything else can."""
    saved = checkpointer.metadata(step).get("data_devices", 1)
    if saved != data_devices and has_replay(state):
        raise CheckpointMismatchError(
            f"the checkpoint at step {step} in {checkpointer.directory} was written with "
            f"run.data_devices={saved}; its replay buffer is split by env over that many "
            f"devices and cannot be resharded to run.data_devices={data_devices}. Resume with "
            f"run.data_devices={saved} (run.devices may change), or start a new run"
        )


def init_member(learner: Learner):
    """``(key, swept values) -> state``: the learner's ``init`` with the member's swept
    hyperparameters written into its optimiser state."""
    return lambda key, values: with_hyperparameters(learner.init(key), values)


@latch_ctrl_c
def run(
    learner: Learner,
    run_config: RunConfig,
    run_dir: str | Path,
    *,
    resume: bool = False,
    resume_step: int | None = None,
    show_progress: bool = True,
    stop_after_chunks: int | None = None,
    logger_config: dict | None = None,
) -> RunResult:
    """Train ``run_config.num_seeds`` seeds of ``learner`` in chunks, writing the run directory.

    Args:
        learner: built by a learner package's ``make_*`` function.
        run_config: seeds, devices, chunking, checkpoint / evaluation cadence, loggers, GIF
            (``RunConfig``; usually ``learner.config.run``). Seeds are
            ``split(key(seed), num_seeds)``, trained in parallel and split evenly over
            ``devices`` with the same results as one device.
        run_dir: where config, metrics, checkpoints and plots go.
        resume: continue from the latest checkpoint in ``run_dir`` that can be read (newer
            unreadable ones are set aside with a warning), and cut the metric logs back to it.
            A directory without any checkpoint (a run stopped before its first one completed)
            starts from the beginning, its metric logs emptied. A run that had finished
            returns at once with ``already_finished`` and changes nothing.
        resume_step: with ``resume``, continue from this checkpoint step (chunks done)
            instead; newer steps are renamed ``<step>.unused-<time>`` and kept.
        show_progress: progress bar (plain lines when not a terminal).
        stop_after_chunks: stop early after this many chunks in total (to test resuming).
        logger_config: the config as a dict, for loggers that record it (W&B).

    Ctrl-C raises KeyboardInterrupt, at the latest between two chunks; a checkpoint being
    written when it comes is completed and kept first (``jaxmarl.training.host.interrupts``).

    With ``run_config.sweep`` (``jaxmarl.training.sweep``) every point of the sweep trains
    ``num_seeds`` seeds in the same program: member ``i`` is point ``i // num_seeds``, seed
    ``i % num_seeds``, with the same seed keys for every point.
    """
    num_seeds, devices = run_config.num_seeds, run_config.devices
    updates_per_chunk, checkpoint_every = run_config.updates_per_chunk, run_config.checkpoint_every
    eval_every, eval_episodes = run_config.eval_every, run_config.eval_episodes
    loggers, gif = run_config.loggers, run_config.gif
    max_to_keep, keep_period = run_config.max_to_keep, run_config.keep_period
    keep_best, keep_best_mode = run_config.keep_best, run_config.keep_best_mode
    check_split(num_seeds, devices)
    built_for = learner.config.run.data_devices
    if run_config.data_devices != built_for:
        raise ValueError(
            f"run.data_devices={run_config.data_devices} but the learner was built for "
            f"run.data_devices={built_for} (its programs split each seed's envs that way); "
            f"build it from a config with run.data_devices={run_config.data_devices}"
        )
    check_sweepable(run_config.sweep, learner.sweepable)
    labels = run_config.sweep.labels()
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    num_updates = learner.num_updates
    per_chunk, last_length = chunk_sizes(num_updates, updates_per_chunk)
    num_chunks = -(-num_updates // per_chunk)
    last_chunk = num_chunks if stop_after_chunks is None else min(num_chunks, stop_after_chunks)
    checkpointer = Checkpointer(
        run_dir / "checkpoints",
        max_to_keep=max_to_keep,
        keep_period=keep_period,
        best_metric=keep_best,
        best_mode=keep_best_mode,
    )
    placement = Placement.of(run_config)
    keys, swept = member_inputs(run_config)
    keys, swept = placement.place(keys), placement.place(swept)
    shapes = member_state_shapes(learner, keys, swept)  # the state's structure and local shapes
    init = jax.jit(placement.over_members(init_member(learner), (keys, swept), shapes))

    def make_chunk(length: int):
        def chunk_fn(state):
            return jax.lax.scan(lambda s, _: learner.update(s), state, None, length)

        # Metrics (None: any tree) are per member, never split by env.
        return jax.jit(
            placement.over_members(chunk_fn, (shapes,), (shapes, None)), donate_argnums=0
        )

    start_chunk = 0
    if resume and (resume_step is not None or checkpointer.all_steps()):
        target = placement.abstract(jax.eval_shape(init, keys, swept))
        if resume_step is None:
            start_chunk, state = checkpointer.restore_latest(target=target)
        else:
            state = checkpointer.restore(resume_step, target=target)
            start_chunk = resume_step
        _check_same_data_split(checkpointer, start_chunk, state, run_config.data_devices)
        if start_chunk >= num_chunks:
            checkpointer.close()
            return RunResult(
                state=state,
                history=[],
                evaluations=[],
                run_dir=run_dir,
                compile_s=0.0,
                train_s=0.0,
                already_finished=True,
                point_labels=labels,
            )
        if resume_step is not None:
            checkpointer.set_aside_after(resume_step)
        state = placement.place(state)
    else:
        state = init(keys, swept)

    compile_start = time.perf_counter()
    # A shorter last chunk (updates_per_chunk not dividing the run) is a second program,
    # compiled up front so that compile time is reported as such, not as training time.
    lengths = {per_chunk} | ({last_length} if last_chunk == num_chunks else set())
    compiled = {length: make_chunk(length).lower(state).compile() for length in lengths}
    compile_s = time.perf_counter() - compile_start
    # Every device of a seed's data split evaluates the same episodes (parameters are equal).
    evaluate_one = lambda params, key: evaluate(learner, params, key, eval_episodes)
    evaluate_seeds = jax.jit(placement.over_members(evaluate_one, (None, None), None))
    if keep_best:
        _check_metric(keep_best, compiled[per_chunk], evaluate_seeds, state, keys, eval_episodes)
    logged_until = start_chunk * per_chunk if resume else None  # updates: the loggers' step
    primary = distributed.is_primary()  # of several processes, only process 0 writes logs
    logger = make_run_logger(
        loggers if primary else (),
        run_dir,
        resume_step=logged_until,
        point_labels=labels,
        wandb=run_config.wandb,
        config=logger_config,
    )
    eval_log = JsonlLogger(run_dir / "eval.jsonl", resume_step=logged_until) if primary else None
    history: list[dict] = []
    evaluations: list[dict] = []
    steps_per_update = learner.env_steps_per_update
    total_steps = num_updates * steps_per_update
    train_s = 0.0
    progress = Progress(
        total_steps,
        desc=run_dir.name,
        initial=start_chunk * per_chunk * steps_per_update,
        file=None if show_progress and primary else io.StringIO(),
    )
    try:
        for chunk_index in range(start_chunk, last_chunk):
            raise_if_ctrl_c()  # one Python dropped (raised inside a garbage-collection callback)
            length = last_length if chunk_index == num_chunks - 1 else per_chunk
            tick = time.perf_counter()
            state, metrics = compiled[length](state)
            metrics = fetch(metrics)  # leaves [num_seeds, per_chunk]
            train_s += time.perf_counter() - tick
            rows = _metric_rows(metrics, chunk_index * per_chunk, steps_per_update, num_seeds)
            for update in dict.fromkeys(row["update"] for row in rows):
                logger.log_rows(update, [row for row in rows if row["update"] == update])
            history.extend(rows)
            done_chunks = chunk_index + 1
            updates_done = chunk_index * per_chunk + length
            progress.update(updates_done * steps_per_update, _latest(rows))
            final = done_chunks == num_chunks
            last = _last_update(rows)
            chunk_metrics = _mean_row(last) if last else {}  # what keep_best can rank by
            if eval_episodes and (final or (eval_every and done_chunks % eval_every == 0)):
                eval_keys = jax.vmap(lambda k: jax.random.fold_in(k, done_chunks))(keys)
                result = fetch(evaluate_seeds(state.params, eval_keys))
                rows = _eval_rows(
                    result, updates_done, updates_done * steps_per_update, num_seeds, labels
                )
                for row in rows if eval_log else ():
                    eval_log.log(updates_done, row)
                if logger.dashboards.loggers:
                    evaluation = dashboard_row(rows, labels)
                    evaluation.pop("env_steps", None)  # logged with the training metrics
                    logger.dashboards.log(updates_done, evaluation)
                evaluations.append(_mean_row(rows))
                chunk_metrics.update(evaluations[-1])
            if final or (checkpoint_every and done_chunks % checkpoint_every == 0):
                checkpointer.save(
                    done_chunks,
                    state,
                    metadata={"updates": updates_done, "data_devices": run_config.data_devices},
                    metrics=chunk_metrics,
                )
    finally:
        checkpointer.close()  # waits for the last writes
        progress.close()
        logger.close()
        if eval_log:
            eval_log.close()
    if history and primary:
        _plot(run_dir, history, loggers, labels)
    if gif and primary and last_chunk == num_chunks and can_render(learner.env.unwrapped):
        seed0 = jax.tree.map(lambda x: x[0], fetch(state.params))
        write_greedy_gif(learner, seed0, keys[0], run_dir / "episode.gif")
    return RunResult(
        state=state,
        history=history,
        evaluations=evaluations,
        run_dir=run_dir,
        compile_s=compile_s,
        train_s=train_s,
        point_labels=labels,
    )


def _member(index: int, num_seeds: int, swept: bool) -> dict[str, int]:
    """``seed`` (and with a sweep ``point``) of vmapped member ``index``."""
    if not swept:
        return {"seed": index}
    return {"seed": index % num_seeds, "point": index // num_seeds}


def _metric_rows(
    metrics: dict, first_update: int, steps_per_update: int, num_seeds: int
) -> list[dict]:
    num_members, per_chunk = next(iter(metrics.values())).shape[:2]
    swept = num_members != num_seeds
    rows = []
    for offset in range(per_chunk):
        update = first_update + offset + 1
        for index in range(num_members):
            row = {"update": update, "env_steps": update * steps_per_update}
            row.update(_member(index, num_seeds, swept))
            row.update({k: float(v[index, offset]) for k, v in metrics.items()})
            rows.append(row)
    return rows


def _last_update(rows: list[dict]) -> list[dict]:
    """The rows of the chunk's last update that saw an episode end (none if no episode did)."""
    rows = rows_with_episodes(rows)
    return [r for r in rows if r["update"] == rows[-1]["update"]] if rows else []


def _latest(rows: list[dict]) -> dict:
    """The chunk's last mean training return, for the progress bar (nothing if no episode
    ended in the chunk)."""
    last = _last_update(rows)
    if not last:
        return {}
    return {"episode_return": float(np.mean([r["episode_return"] for r in last]))}


def _check_metric(name, compiled_chunk, evaluate_seeds, state, keys, eval_episodes) -> None:
    """``keep_best`` must name a training metric or an ``eval_`` metric (checked before the
    first chunk, since a misspelt name would silently rank nothing)."""
    names = set(compiled_chunk.out_info[1])
    if eval_episodes:
        names |= {f"eval_{k}" for k in jax.eval_shape(evaluate_seeds, state.params, keys)}
    if name not in names:
        raise ValueError(
            f"run.keep_best={name!r} is not a metric of this learner; choose one of {sorted(names)}"
        )


def _eval_rows(
    result: dict,
    update: int,
    env_steps: int,
    num_seeds: int,
    labels: Sequence[str],
) -> list[dict]:
    """One row per member of a greedy evaluation (``eval_`` + each ``episode_metrics`` key)."""
    num_members = len(next(iter(result.values())))
    return [
        {
            "update": update,
            "env_steps": env_steps,
            **_member(index, num_seeds, bool(labels)),
            **{f"eval_{name}": float(values[index]) for name, values in result.items()},
        }
        for index in range(num_members)
    ]


def _mean_row(rows: list[dict]) -> dict:
    """Mean over members of per-member rows (``seed`` and ``point`` dropped)."""
    keys = [k for k in rows[0] if k not in ("seed", "point")]
    return {k: float(np.mean([row[k] for row in rows])) for k in keys}


# An env info that marks a social dilemma (Coin Game): its runs also plot it and the welfare.
SOCIAL_DILEMMA_METRIC = "own_coin_fraction"


def _plot(
    run_dir: Path, history: list[dict], loggers: Sequence[str], labels: Sequence[str] = ()
) -> None:
    try:
        from jaxmarl.training.host.plotting import plot_curves, plot_learning_curve
    except ImportError:  # matplotlib is an optional extra
        return
    # The whole run's records (a resumed run's history holds only the resumed part).
    records = read_jsonl(run_dir / "metrics.jsonl") if "jsonl" in loggers else history
    records = rows_with_episodes(records)
    if not records:  # no episode has ended yet: there is no return to plot
        return
    if labels:  # an in-program sweep: one curve (over its seeds) per point
        series = _point_curves(records, labels)
        if series:
            plot_curves(
                series,
                run_dir / "learning_curve.png",
                xlabel="env_steps",
                ylabel="mean episode return (per agent)",
            )
        return
    plot_learning_curve(
        records,
        x="env_steps",
        y="episode_return",
        path=run_dir / "learning_curve.png",
        ylabel="mean episode return (per agent)",
    )
    # Social dilemmas: the share of own coins and the total welfare, beside the return.
    if any(SOCIAL_DILEMMA_METRIC in record for record in records):
        for name in (SOCIAL_DILEMMA_METRIC, "episode_welfare"):
            plot_learning_curve(
                records, x="env_steps", y=name, path=run_dir / f"learning_curve_{name}.png"
            )


def _point_curves(records: list[dict], labels: Sequence[str]) -> dict[str, tuple]:
    """``label -> (env_steps [T], returns [num_seeds, T])`` at the steps every seed logged."""
    series = {}
    for point, label in enumerate(labels):
        by_seed: dict[int, dict[float, float]] = {}
        for row in records:
            if row.get("point", 0) == point:
                by_seed.setdefault(row["seed"], {})[row["env_steps"]] = row["episode_return"]
        if not by_seed:
            continue
        steps = sorted(set.intersection(*(set(curve) for curve in by_seed.values())))
        if steps:
            returns = np.array([[curve[x] for x in steps] for curve in by_seed.values()])
            series[label] = (np.array(steps), returns)
    return series


def write_greedy_gif(learner: Learner, params: Any, key: jax.Array, path: Path) -> None:
    """A GIF of one greedy episode of ``learner`` with one seed's ``params``."""
    states, num_frames = jax.jit(lambda p, k: record_greedy_episode(learner, p, k))(params, key)
    frames = int(num_frames)
    states = jax.tree.map(lambda x: x[:frames], states)
    save_episode_gif(learner.env.unwrapped, states, path)
