"""Command line: ``python -m jaxmarl.train alg=mappo env=MPE_simple_spread_v3 [key=value ...]``.

Arguments are ``key=value`` overrides of the learner's config (nested keys with dots:
``run.total_timesteps=2000000 network.trunk.size=64``; choices by kind: ``network.trunk=gru``,
``mixer=qmix``, ``returns=lambda``, ``critic=centralised``), plus three special keys:

* ``alg=ippo|mappo|iql|vdn|qmix|shaq|transf_qmix|pqn_vdn`` (default ``mappo``) picks the
  learner; the multi-task learners ``mtapn_vdn|mtapn_qmix|mt_ippo|mt_mappo`` take
  ``tasks=[ENV_ID:key=value:key=value,ENV_ID:...]`` and, for transfer,
  ``init_decision_from=RUN_DIR freeze_decision=true|false`` (they write the decision layers of
  seed 0 to ``RUN_DIR/decision_layers`` at the end);
* ``env=ID`` is short for ``env.env_id=ID``;
* ``preset=NAME_OR_PATH`` picks a YAML preset; by default ``configs/<alg>/<env>.yaml`` if it
  exists, else the dataclass defaults;
* ``sweep.lr=[1e-3,3e-4]`` is short for ``run.sweep.lr=...``: those learning rates, each with
  ``run.num_seeds`` seeds, in one compiled program (``jaxmarl.training.sweep``).

hydra's override grammar, without hydra (``jaxmarl.config``, ``jaxmarl.multirun``):
``+key=value`` adds an entry to a mapping field (``+env.env_kwargs.max_steps=50``; any other
key exists already in the typed config, so ``+`` on it is an error), ``++key=value`` adds or
sets, ``~key`` deletes a mapping entry or resets a field to its dataclass default
(``~key=value`` only if it holds that value). ``-m`` / ``--multirun`` runs every combination
of comma lists (``lr=1e-3,3e-4 run.seed=0,1``), one run directory per point plus a summary
table; without ``-m`` a comma list is an error.

Options:

* ``--resume RUN_DIR`` continues a run from its latest checkpoint that can be read (a damaged
  newer one is renamed aside, with a one-line warning) and cuts its metric logs, TensorBoard's
  included, back to that point. Overrides must not change the saved config (``run.wandb.*``
  excepted: a resumed run continues the same W&B run), and ``preset=`` cannot apply. A run
  stopped before its first checkpoint completed (Ctrl-C while compiling or in the first
  chunks) is restarted from the beginning by the same ``--resume RUN_DIR``. A finished run is
  left as it is.
* ``--step N`` (with ``--resume``) continues from checkpoint step N (chunks done) instead;
  newer steps are renamed ``N.unused-<time>`` and kept.
* ``--overwrite`` starts a new run in a directory that already holds one, after moving its
  files into ``RUN_DIR/.replaced-<timestamp>/``. Without it a new run refuses such a
  directory (one with a complete checkpoint or metrics).
* ``--no-progress``; ``--list`` prints algorithms and presets.

One process at a time writes a run directory (a lock file, ``RUN_DIR/.lock``, names it); a
second one stops with a message naming the first. A lock left by a process that died is
taken over. Ctrl-C stops a run with exit status 130 and one line saying how to continue it;
a checkpoint being written when it comes is finished first.

Everything is checked before anything compiles or is written: unknown algorithms, envs, keys,
invalid values, paths and missing optional loggers fail with exit status 2 and a one-line
message that names the fix.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import os
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path

from jaxmarl.algorithms import Algorithm, algorithms, preset_config
from jaxmarl.algorithms import algorithm as find_algorithm
from jaxmarl.config import (
    ConfigError,
    available_presets,
    config_from_file,
    config_to_dict,
    diff_configs,
    load_config,
    save_config,
)
from jaxmarl.training.host.distributed import Launch
from jaxmarl.training.host.interrupts import latch_ctrl_c
from jaxmarl.training.host.logging import check_loggers, rows_with_episodes
from jaxmarl.training.host.results import final_results, marl_eval_json, write_json, write_table
from jaxmarl.training.host.rundir import (
    RunDirBusyError,
    RunDirLock,
    check_not_in_use,
    complete_steps,
    holds_run,
    move_aside,
)
from jaxmarl.training.sweep import check_sweepable

DEFAULT_ALG = "mappo"
INTERRUPTED = 130  # the exit status of a Ctrl-C, as shells report it (128 + SIGINT)


class UsageError(ValueError):
    """A command line that cannot be run (message says what to change)."""


@dataclasses.dataclass(frozen=True)
class Command:
    alg: str
    config: object
    run_dir: Path
    resume: bool
    show_progress: bool
    resume_step: int | None = None
    overwrite: bool = False
    launch: Launch | None = None


OPTIONS = (
    "--resume RUN_DIR, --step N, --overwrite, --no-progress, -m/--multirun, "
    "--coordinator HOST:PORT --num-processes N --process-id I, --distributed"
)
LAUNCH_OPTIONS = ("--coordinator", "--num-processes", "--process-id")


def _launch(args: dict[str, str], auto: bool) -> Launch | None:
    """The multi-process launch the options (or ``JAXMARL_*`` variables) describe, if any."""
    if auto:
        if args:
            raise UsageError("--distributed detects the launch; drop --" + ", --".join(args))
        return Launch(auto=True)
    if args:
        try:
            return Launch.checked(
                args.get("coordinator"), args.get("num-processes"), args.get("process-id")
            )
        except ValueError as error:
            raise UsageError(str(error)) from None
    try:
        return Launch.from_environment()
    except ValueError as error:
        raise UsageError(str(error)) from None


def _check_single_value(key: str, value: str) -> None:
    """hydra's rule: ``key=a,b`` is a sweep, which needs ``-m``; a list is ``key=[a,b]``."""
    from jaxmarl.multirun import split_values

    if len(split_values(value)) > 1:
        raise UsageError(
            f"{key}={value} lists several values: add -m (--multirun) to sweep over them, write "
            f"{key}=[{value}] for a list, or quote it ({key}='{value}') for a string"
        )


def parse(argv: Sequence[str]) -> Command:
    """Turn the command line into a validated config and run directory (no JAX work)."""
    overrides: list[str] = []
    special: dict[str, str] = {}
    resume_dir: str | None = None
    step: str | None = None
    show_progress, overwrite = True, False
    launch_args: dict[str, str] = {}
    auto_launch = False
    args = list(argv)
    while args:
        arg = args.pop(0)
        if arg in LAUNCH_OPTIONS or arg.startswith(tuple(f"{o}=" for o in LAUNCH_OPTIONS)):
            name, value = arg.split("=", 1) if "=" in arg else (arg, args.pop(0) if args else "")
            launch_args[name[2:]] = value
        elif arg == "--distributed":
            auto_launch = True
        elif arg in ("--resume", "--step"):
            if not args:
                example = "--resume runs/NAME" if arg == "--resume" else "--step 3"
                raise UsageError(f"{arg} needs a value: {example}")
            value = args.pop(0)
            resume_dir, step = (value, step) if arg == "--resume" else (resume_dir, value)
        elif arg.startswith(("--resume=", "--step=")):
            name, value = arg.split("=", 1)
            resume_dir, step = (value, step) if name == "--resume" else (resume_dir, value)
        elif arg == "--no-progress":
            show_progress = False
        elif arg == "--overwrite":
            overwrite = True
        elif arg.startswith("-"):
            raise UsageError(f"unknown option {arg!r}; options: {OPTIONS}")
        elif arg.startswith("~"):
            overrides.append(arg)  # remove / reset to the default (jaxmarl.config)
        elif "=" not in arg:
            raise UsageError(f"arguments are key=value, got {arg!r} (e.g. run.seed=1)")
        else:
            key, value = arg.split("=", 1)
            _check_single_value(key, value)
            if key in ("alg", "env", "preset"):
                special[key] = value
            elif key.startswith("sweep."):
                overrides.append(f"run.{arg}")
            else:
                overrides.append(arg)

    launch = _launch(launch_args, auto_launch)
    if resume_dir is not None:
        if overwrite:
            raise UsageError("--overwrite starts a new run; it cannot go with --resume")
        command = _resume_command(Path(resume_dir), special, overrides, show_progress)
        return dataclasses.replace(command, resume_step=_step(step), launch=launch)
    if step is not None:
        raise UsageError(f"--step picks the step to resume from: --resume RUN_DIR --step {step}")

    alg = special.get("alg", DEFAULT_ALG)
    _algorithm(alg)  # an unknown name is a usage error
    config = preset_config(alg, special.get("preset"), overrides, env=special.get("env"))
    run_config = config.run
    name = run_config.name or (
        f"{alg}_{_env_label(config, '+')}_{dt.datetime.now().strftime('%Y%m%d-%H%M%S')}"
    )
    run_dir = Path(run_config.out_dir) / name
    _check_run_dir_path(run_dir)
    check_loggers(run_config.loggers)
    if not overwrite and (launch is None or launch.process_id == 0):
        check_fresh(run_dir)  # process 0 of several checks it (again under the lock)
    return Command(
        alg,
        config,
        run_dir,
        resume=False,
        show_progress=show_progress,
        overwrite=overwrite,
        launch=launch,
    )


def check_fresh(run_dir: Path, *, locked: bool = False) -> None:
    """``UsageError`` if a new run in ``run_dir`` would lose a run (checked again under the
    run directory's lock, ``locked``, since another process may start one in between)."""
    if not locked:  # "in use" says more than "holds a run" while another process writes it
        check_not_in_use(run_dir)
    if not holds_run(run_dir):
        return
    if complete_steps(run_dir):
        how = f"continue it with --resume {run_dir}"
    else:
        how = f"it stopped before its first checkpoint; restart it with --resume {run_dir}"
    raise UsageError(
        f"{run_dir} already holds a run; {how}, start it over with --overwrite (the old files "
        f"are moved into {run_dir}/.replaced-<timestamp>/), or pick another run.name"
    )


def _check_run_dir_path(run_dir: Path) -> None:
    for folder in (*reversed(run_dir.parents), run_dir):
        if folder.exists() and not folder.is_dir():
            raise UsageError(
                f"{folder} is a file, not a folder; the run directory {run_dir} cannot go "
                f"there (pick another run.out_dir or run.name)"
            )


def _step(step: str | None) -> int | None:
    if step is None:
        return None
    if not step.isdigit():
        raise UsageError(f"--step takes a checkpoint step (a whole number >= 0), got {step!r}")
    return int(step)


def _resume_command(run_dir, special, overrides, show_progress) -> Command:
    info_path = run_dir / "run.json"
    if not info_path.is_file():
        raise UsageError(f"{run_dir} is not a jaxmarl run directory (no run.json)")
    try:
        alg = json.loads(info_path.read_text())["alg"]
    except (json.JSONDecodeError, KeyError, TypeError) as error:
        problem = f"not JSON ({error})" if isinstance(error, json.JSONDecodeError) else "no alg"
        raise UsageError(
            f'{info_path} is damaged: {problem}; it should hold {{"alg": "<alg>", ...}}'
        ) from None
    if special.get("alg", alg) != alg:
        raise UsageError(f"{run_dir} was trained with alg={alg}, not alg={special['alg']}")
    if "preset" in special:
        raise UsageError(
            f"preset={special['preset']} cannot apply when resuming: {run_dir} continues with "
            f"its saved config.yaml. Drop it, or start a new run with it"
        )
    config_cls = _algorithm(alg).config_class
    if not (run_dir / "config.yaml").is_file():
        raise UsageError(
            f"{run_dir} has run.json but no config.yaml, so it cannot be resumed; start a new "
            f"run (with --overwrite to reuse the directory)"
        )
    saved = config_from_file(config_cls, run_dir / "config.yaml")
    check_loggers(saved.run.loggers)
    if overrides or "env" in special:
        extra = [f"env.env_id={special['env']}"] if "env" in special else []
        wanted = load_config(config_cls, run_dir / "config.yaml", extra + overrides)
        # W&B settings only say where logs go (e.g. mode=offline now, online later).
        changed = diff_configs(saved, wanted, ignore=("run.wandb",))
        if changed:
            raise UsageError(
                "resuming with a different config is not supported; these differ from "
                f"{run_dir / 'config.yaml'}: {'; '.join(changed)}. Drop the overrides, or "
                "start a new run"
            )
        check_loggers(wanted.run.loggers)
        saved = wanted
    return Command(alg, saved, run_dir, resume=True, show_progress=show_progress)


def _env_label(config, sep: str = ", ", detailed: bool = False) -> str:
    """The env id, or for a multi-task config its tasks (``tasks`` wins over ``env``): their
    env ids joined by ``sep``, or with ``detailed`` ``K tasks (label, label, ...)``."""
    specs = config.task_specs if getattr(config, "tasks", ()) else ()
    if not specs:
        return config.env.env_id
    if detailed:
        return f"{len(specs)} tasks ({', '.join(spec.label for spec in specs)})"
    return sep.join(dict.fromkeys(spec.env_id for spec in specs))


def _algorithm(alg: str) -> Algorithm:
    try:
        return find_algorithm(alg)
    except KeyError as error:
        raise UsageError(error.args[0]) from None


# What a command line that cannot run raises while it is parsed (exit status 2). OSError:
# unreadable paths; RunDirBusyError: another process writes the run directory.
CLI_ERRORS = (
    UsageError,
    ConfigError,
    ValueError,
    TypeError,
    OSError,
    ImportError,
    RunDirBusyError,
)


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0
    if argv and argv[0] == "--list":
        print("algorithms:", ", ".join(sorted(algorithms())))
        print("presets:", ", ".join(available_presets()) or "(none)")
        return 0
    if "-m" in argv or "--multirun" in argv:
        from jaxmarl.multirun import multirun

        return multirun([arg for arg in argv if arg not in ("-m", "--multirun")])
    try:
        command = parse(argv)
    except CLI_ERRORS as error:
        return _fail(error)
    return execute(command)


def _fail(error: BaseException | str) -> int:
    """Prints the one-line message of a user error; the exit status 2."""
    print(f"error: {error}", file=sys.stderr)
    return 2


def _one_line_warning(message, category, filename, lineno, file=None, line=None) -> None:
    print(f"warning: {' '.join(str(message).split())}", file=sys.stderr)


def check_buildable(command: Command) -> None:
    """Builds the learner of ``command`` (envs and networks, nothing compiled) and checks its
    in-program sweep, so a multirun finds what only the env can tell before any point runs.

    Raises:
        ValueError, TypeError: as ``execute`` reports them.
    """
    learner = _algorithm(command.alg).make(command.config)
    check_sweepable(command.config.run.sweep, learner.sweepable, f"alg={command.alg}")


def execute(command: Command) -> int:
    from jaxmarl.cpu_rng import use_fast_cpu_rng
    from jaxmarl.training.host import distributed
    from jaxmarl.training.host.devices import use_run_devices

    config, run_dir = command.config, command.run_dir
    algorithm = _algorithm(command.alg)
    try:  # before anything runs on JAX's backend
        if command.launch is not None:
            distributed.initialize(command.launch, _local_devices(config, command.launch))
        use_run_devices(config.run)
    except ValueError as error:
        return _fail(error)
    use_fast_cpu_rng()  # before anything compiles; opt-out and effect in docs/cpu_rng.md
    # Built before anything is written: what only the env can tell (e.g. Q-learning needs
    # discrete actions) fails without leaving a half-made run directory behind.
    try:
        learner = algorithm.make(config)
        check_sweepable(config.run.sweep, learner.sweepable, f"alg={command.alg}")
    except (ValueError, TypeError) as error:  # TypeError: e.g. an unknown env argument
        return _fail(error)
    if not distributed.is_primary():  # process 0 of a multi-process run owns the run directory
        return _execute_follower(command, learner)
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
        lock = RunDirLock(run_dir).acquire()
    except (OSError, RunDirBusyError) as error:
        return _fail(error)
    try:
        return _execute_locked(command, algorithm, learner, lock)
    except Exception as error:
        if not _caused_by_ctrl_c(error):
            raise
        return _interrupted(run_dir)
    except KeyboardInterrupt:
        return _interrupted(run_dir)
    finally:
        lock.release()


def _caused_by_ctrl_c(error: BaseException) -> bool:
    """An error a Ctrl-C set off (e.g. the ImportError of a C extension interrupted while it
    initialised)."""
    seen = set()
    while error is not None and id(error) not in seen:
        if isinstance(error, KeyboardInterrupt):
            return True
        seen.add(id(error))
        error = error.__cause__ or error.__context__
    return False


def _interrupted(run_dir: Path) -> int:
    # One line, not a traceback: one raised while JAX traces can run to megabytes.
    if (run_dir / "run.json").is_file():
        told = f"{run_dir} keeps its complete checkpoints; continue it with --resume {run_dir}"
    else:  # stopped before the run was written: --resume would refuse the directory
        told = f"before {run_dir} held a run; nothing was saved, so start it again as before"
    print(f"interrupted: {told}", file=sys.stderr)
    return INTERRUPTED


def _local_devices(config, launch) -> int:
    """Devices each process of a CPU launch contributes: its share of the run's mesh."""
    from jaxmarl.training.host.distributed import cluster_process_count

    needed = config.run.devices * config.run.data_devices
    processes = cluster_process_count() if launch.auto else launch.num_processes
    if processes is None:  # auto-detected by a cluster JAX knows and we do not: one each
        return 1
    if needed % processes:
        flag = "the cluster's process count" if launch.auto else "--num-processes"
        raise ValueError(
            f"run.devices x run.data_devices = {needed} devices do not split over "
            f"{flag}={processes}; use a device count that is a multiple of the process count"
        )
    return needed // processes


def _execute_follower(command: Command, learner) -> int:
    """A process other than 0: trains its share and takes part in checkpoints, writes nothing
    else (no lock, config, logs or summary)."""
    from jaxmarl.training.host.checkpoint import (
        CheckpointCorruptError,
        CheckpointMismatchError,
        CheckpointNotFoundError,
    )
    from jaxmarl.training.host.loop import run

    try:
        run(
            learner,
            command.config.run,
            command.run_dir,
            resume=command.resume,
            resume_step=command.resume_step,
            show_progress=False,
        )
    except (CheckpointCorruptError, CheckpointNotFoundError, CheckpointMismatchError) as error:
        return _fail(error)
    return 0


# Latched from before run.json is written, not only in the training loop: a Ctrl-C that Python
# drops in a garbage-collection callback (XLA's) during the imports or summary around the loop
# would otherwise be lost, and the run would go on and exit 0.
@latch_ctrl_c
def _execute_locked(command: Command, algorithm: Algorithm, learner, lock: RunDirLock) -> int:
    config, run_dir = command.config, command.run_dir
    if lock.took_over:
        print(f"{run_dir}: took over the lock left by {lock.took_over}, which is no longer running")
    if not command.resume:
        if command.overwrite:
            aside = move_aside(run_dir)
            if aside is not None:
                print(f"--overwrite: moved the previous run's files into {aside}")
        else:
            try:
                check_fresh(run_dir, locked=True)  # again, now that no other process can start one
            except UsageError as error:
                return _fail(error)
        save_config(config, run_dir / "config.yaml")
        info = {"alg": command.alg, "created": dt.datetime.now().isoformat(timespec="seconds")}
        (run_dir / "run.json").write_text(json.dumps(info, indent=2) + "\n")
    elif command.resume_step is None and not complete_steps(run_dir):
        print(
            f"{run_dir} has no complete checkpoint (it stopped before the first one); "
            f"starting it from the beginning"
        )
    # Imported only once config.yaml and run.json are written: these imports take seconds on a
    # busy machine, and a Ctrl-C among them should leave a run that --resume can continue.
    from jaxmarl.training.host.checkpoint import (
        CheckpointCorruptError,
        CheckpointMismatchError,
        CheckpointNotFoundError,
    )
    from jaxmarl.training.host.loop import run

    settings = config.run
    labels = settings.sweep.labels()
    points = f" x {len(labels)} points ({'; '.join(labels)})" if labels else ""
    print(
        f"{command.alg} on {_env_label(config, detailed=True)}: "
        f"{settings.total_timesteps:,} env steps x {settings.num_seeds} seed(s){points}, "
        f"{learner.num_updates} updates -> {run_dir}"
    )
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _one_line_warning  # restored on leaving the block
            result = run(
                learner,
                settings,
                run_dir,
                resume=command.resume,
                resume_step=command.resume_step,
                show_progress=command.show_progress,
                logger_config=config_to_dict(config),
            )
    except (CheckpointCorruptError, CheckpointNotFoundError, CheckpointMismatchError) as error:
        return _fail(error)
    if result.already_finished:
        print(f"{run_dir} has finished ({learner.num_updates} updates); nothing to do")
        return 0
    if algorithm.after_run is not None:
        path = algorithm.after_run(result)
        if path is not None:
            print(f"decision layers (seed 0) -> {path}")
    _summarise(command, result, learner)
    return 0


def _summarise(command, result, learner) -> None:
    steps = len({row["update"] for row in result.history}) * learner.env_steps_per_update
    members = command.config.run.num_seeds * max(len(result.point_labels), 1)
    rate = steps * members / max(result.train_s, 1e-9)
    lines = [
        f"| run | {result.run_dir} |",
        "|---|---|",
        f"| algorithm | {command.alg} |",
        f"| env | {_env_label(command.config)} |",
        f"| compile (s) | {result.compile_s:.1f} |",
        f"| training env steps/s (all seeds and points) | {rate:,.0f} |",
    ]
    over = " (all points; per point below)" if result.point_labels else ""
    finished = rows_with_episodes(result.history)
    if finished:
        last = finished[-1]["update"]
        final = [r["episode_return"] for r in finished if r["update"] == last]
        lines.append(
            f"| final episode return (train, per agent){over} | {sum(final) / len(final):.2f} |"
        )
    if result.evaluations:
        value = result.evaluations[-1]["eval_episode_return"]
        lines.append(f"| greedy evaluation return{over} | {value:.2f} |")
    labels = result.point_labels
    write_json(marl_eval_of(command, result.run_dir), result.run_dir / "marl_eval.json")
    if labels:
        write_table(final_results(result.run_dir, labels), result.run_dir / "sweep")
    for name in ("learning_curve.png", "episode.gif", "metrics.csv", "sweep.md", "marl_eval.json"):
        if (result.run_dir / name).exists():
            lines.append(f"| {name} | {result.run_dir / name} |")
    table = "\n".join(lines) + "\n"
    if labels:
        table += "\n" + (result.run_dir / "sweep.md").read_text()
    (result.run_dir / "summary.md").write_text(table)
    print(table)


def marl_eval_of(command: Command, run_dir: Path, algorithm: str | None = None) -> dict:
    """``run_dir``'s evaluations in marl-eval's format: env = the env family, task = the env
    id (with its ``map_name``/``scenario`` if set), algorithm = ``alg`` (or ``algorithm``)."""
    import jaxmarl

    config = command.config
    env_id = _env_label(config, sep="+")
    try:
        entry = jaxmarl.spec(config.env.env_id).entry_point
        family = entry.split(".envs.")[1].split(".")[0].split(":")[0]
    except (AttributeError, IndexError, KeyError):  # a callable or user-registered entry point
        family = env_id
    kwargs = config.env.env_kwargs
    task = next((f"{env_id}:{kwargs[k]}" for k in ("map_name", "scenario") if k in kwargs), env_id)
    return marl_eval_json(
        run_dir,
        env_name=family,
        task_name=task,
        algorithm=algorithm or command.alg,
        point_labels=config.run.sweep.labels(),
    )


if __name__ == "__main__":
    status = main()
    if status == INTERRUPTED:
        # Everything of the run is closed by now. Skip the interpreter's teardown, which after
        # an interrupt sometimes crashes inside jaxlib (a segmentation fault instead of 130).
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)
    sys.exit(status)
