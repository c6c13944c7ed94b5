"""Command line: ``python -m jaxmarl.train alg=mappo env=MPE_simple_spread_v3 [key=value ...]``.

Arguments are ``key=value`` overrides of the learner's config (nested keys with dots:
``run.total_timesteps=2000000 network.trunk.size=64``; choices by kind: ``network.trunk=gru``,
``mixer=qmix``, ``returns=lambda``, ``critic=centralised``), plus three special keys:

* ``alg=ippo|mappo|iql|vdn|qmix|pqn_vdn`` (default ``mappo``) picks the learner; the multi-task
  learners ``mtapn_vdn|mtapn_qmix|mt_ippo|mt_mappo`` take
  ``tasks=[ENV_ID:key=value:key=value,ENV_ID:...]`` and, for transfer,
  ``init_decision_from=RUN_DIR freeze_decision=true|false`` (they write the decision layers of
  seed 0 to ``RUN_DIR/decision_layers`` at the end);
* ``env=ID`` is short for ``env.env_id=ID``;
* ``preset=NAME_OR_PATH`` picks a YAML preset; by default ``configs/<alg>/<env>.yaml`` if it
  exists, else the dataclass defaults.

Options: ``--resume RUN_DIR`` continues a run from its latest checkpoint (overrides must not
change the saved config); ``--no-progress``; ``--list`` prints algorithms and presets.

Everything is checked before anything compiles: unknown algorithms, envs, keys and invalid
values fail with a message that names the fix.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from jaxmarl.algorithms import Algorithm, algorithms
from jaxmarl.algorithms import algorithm as find_algorithm
from jaxmarl.config import (
    ConfigError,
    available_presets,
    config_from_file,
    config_to_dict,
    diff_configs,
    load_config,
    preset_path,
    save_config,
)
from jaxmarl.training.host.logging import rows_with_episodes

DEFAULT_ALG = "mappo"
DEFAULT_ENV = "MPE_simple_spread_v3"


class UsageError(ValueError):
    """A command line that cannot be run (message says what to change)."""


@dataclasses.dataclass(frozen=True)
class Command:
    alg: str
    config: object
    run_dir: Path
    resume: bool
    show_progress: bool


def parse(argv: Sequence[str]) -> Command:
    """Turn the command line into a validated config and run directory (no JAX work)."""
    overrides: list[str] = []
    special: dict[str, str] = {}
    resume_dir: str | None = None
    show_progress = True
    args = list(argv)
    while args:
        arg = args.pop(0)
        if arg == "--resume":
            if not args:
                raise UsageError("--resume needs a run directory: --resume runs/NAME")
            resume_dir = args.pop(0)
        elif arg.startswith("--resume="):
            resume_dir = arg.split("=", 1)[1]
        elif arg == "--no-progress":
            show_progress = False
        elif arg.startswith("-"):
            raise UsageError(f"unknown option {arg!r}; options: --resume RUN_DIR, --no-progress")
        elif "=" not in arg:
            raise UsageError(f"arguments are key=value, got {arg!r} (e.g. run.seed=1)")
        else:
            key, value = arg.split("=", 1)
            if key in ("alg", "env", "preset"):
                special[key] = value
            else:
                overrides.append(arg)

    if resume_dir is not None:
        return _resume_command(Path(resume_dir), special, overrides, show_progress)

    alg = special.get("alg", DEFAULT_ALG)
    algorithm = _algorithm(alg)
    config_cls = algorithm.config_class
    env_id = special.get("env")
    preset = _preset(alg, special.get("preset"), env_id or DEFAULT_ENV)
    all_overrides = list(algorithm.fixed) + overrides
    if env_id is not None:
        all_overrides.insert(0, f"env.env_id={env_id}")
    config = load_config(config_cls, preset, all_overrides)
    run_config = config.run
    name = run_config.name or (
        f"{alg}_{_env_label(config, '+')}_{dt.datetime.now().strftime('%Y%m%d-%H%M%S')}"
    )
    run_dir = Path(run_config.out_dir) / name
    if (run_dir / "checkpoints").exists():
        raise UsageError(
            f"{run_dir} already holds a run; pick another run.name or continue it with "
            f"--resume {run_dir}"
        )
    return Command(alg, config, run_dir, resume=False, show_progress=show_progress)


def _resume_command(run_dir, special, overrides, show_progress) -> Command:
    info_path = run_dir / "run.json"
    if not info_path.is_file():
        raise UsageError(f"{run_dir} is not a jaxmarl run directory (no run.json)")
    alg = json.loads(info_path.read_text())["alg"]
    if special.get("alg", alg) != alg:
        raise UsageError(f"{run_dir} was trained with alg={alg}, not alg={special['alg']}")
    config_cls = _algorithm(alg).config_class
    saved = config_from_file(config_cls, run_dir / "config.yaml")
    if overrides or "env" in special:
        extra = [f"env.env_id={special['env']}"] if "env" in special else []
        wanted = load_config(config_cls, run_dir / "config.yaml", extra + overrides)
        changed = diff_configs(saved, wanted)
        if changed:
            raise UsageError(
                "resuming with a different config is not supported; these differ from "
                f"{run_dir / 'config.yaml'}: {'; '.join(changed)}. Drop the overrides, or "
                "start a new run"
            )
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


def _preset(alg: str, preset: str | None, env_id: str) -> Path | None:
    if preset is not None:
        path = Path(preset)
        return (
            path if path.suffix in (".yaml", ".yml") and path.exists() else preset_path(alg, preset)
        )
    return preset_path(alg, env_id) if env_id in available_presets(alg) else None


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0
    if argv and argv[0] == "--list":
        print("algorithms:", ", ".join(sorted(algorithms())))
        print("presets:", ", ".join(available_presets()) or "(none)")
        return 0
    try:
        command = parse(argv)
    except (UsageError, ConfigError, ValueError, FileNotFoundError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return execute(command)


def execute(command: Command) -> int:
    from jaxmarl.cpu_rng import use_fast_cpu_rng
    from jaxmarl.training.host.devices import use_devices
    from jaxmarl.training.host.loop import run

    config, run_dir = command.config, command.run_dir
    algorithm = _algorithm(command.alg)
    try:
        use_devices(config.run.devices)  # before anything runs on JAX's backend
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    use_fast_cpu_rng()  # before anything compiles; opt-out and effect in docs/cpu_rng.md
    # Built before anything is written: what only the env can tell (e.g. Q-learning needs
    # discrete actions) fails without leaving a half-made run directory behind.
    try:
        learner = algorithm.make(config)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    run_dir.mkdir(parents=True, exist_ok=True)
    if not command.resume:
        save_config(config, run_dir / "config.yaml")
        info = {"alg": command.alg, "created": dt.datetime.now().isoformat(timespec="seconds")}
        (run_dir / "run.json").write_text(json.dumps(info, indent=2) + "\n")
    settings = config.run
    print(
        f"{command.alg} on {_env_label(config, detailed=True)}: "
        f"{settings.total_timesteps:,} env steps x {settings.num_seeds} seed(s), "
        f"{learner.num_updates} updates -> {run_dir}"
    )
    result = run(
        learner,
        settings,
        run_dir,
        resume=command.resume,
        show_progress=command.show_progress,
        logger_config=config_to_dict(config),
    )
    if algorithm.after_run is not None:
        path = algorithm.after_run(result)
        if path is not None:
            print(f"decision layers (seed 0) -> {path}")
    _summarise(command, result, learner)
    return 0


def _summarise(command, result, learner) -> None:
    steps = len({row["update"] for row in result.history}) * learner.env_steps_per_update
    rate = steps * command.config.run.num_seeds / max(result.train_s, 1e-9)
    lines = [
        f"| run | {result.run_dir} |",
        "|---|---|",
        f"| algorithm | {command.alg} |",
        f"| env | {_env_label(command.config)} |",
        f"| compile (s) | {result.compile_s:.1f} |",
        f"| training env steps/s (all seeds) | {rate:,.0f} |",
    ]
    finished = rows_with_episodes(result.history)
    if finished:
        last = finished[-1]["update"]
        final = [r["episode_return"] for r in finished if r["update"] == last]
        lines.append(f"| final episode return (train, per agent) | {sum(final) / len(final):.2f} |")
    if result.evaluations:
        lines.append(
            f"| greedy evaluation return | {result.evaluations[-1]['eval_episode_return']:.2f} |"
        )
    for name in ("learning_curve.png", "episode.gif", "metrics.csv"):
        if (result.run_dir / name).exists():
            lines.append(f"| {name} | {result.run_dir / name} |")
    table = "\n".join(lines) + "\n"
    (result.run_dir / "summary.md").write_text(table)
    print(table)


if __name__ == "__main__":
    sys.exit(main())
