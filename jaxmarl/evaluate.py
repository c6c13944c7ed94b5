"""Evaluate a finished (or running) training run: ``python -m jaxmarl.evaluate RUN_DIR``.

Loads the run's saved config and a checkpoint (the latest by default, ``--step N`` or
``--best``), runs ``--episodes`` greedy episodes per seed in as many envs at once (vmapped),
prints a Markdown table (return, length and every env metric such as ``won``, per seed and
their mean) and writes it as JSON, with a GIF of one episode, under ``RUN_DIR/evaluation/``.
Checkpoints are only read: evaluating a run that is still training is safe.

A trained policy in a plain Python loop::

    from jaxmarl.evaluate import load_run

    run = load_run("runs/mappo-MPE_simple_spread_v3")       # latest checkpoint
    env, policy = run.env, run.policy(seed=0)
    obs, state = env.reset(key)
    carry = policy.initial_carry()
    for t in range(env.max_steps):
        carry, actions = policy.act(carry, obs, state, first=t == 0)
        obs, state, rewards, dones, infos = env.step(step_key, state, actions)

Cross-play (``--cross-play``, or :func:`cross_play`): every seed's first agent paired with
every seed's other agents, the zero-shot coordination measure of Overcooked and Hanabi papers.
Entry ``[i, j]`` of each metric's matrix is its mean over greedy episodes in which ``agent_0``
(or the ``--row-agents``) acts with seed ``i``'s parameters and every other agent with seed
``j``'s. The diagonal is self-play: it equals the plain evaluation of each seed. Every pair
plays the same episodes (the same evaluation key), so the differences between cells come from
the partners.
It writes ``evaluation/cross_play_step_N.json`` and, with matplotlib, a heatmap beside it::

    python -m jaxmarl.evaluate runs/ippo-overcooked --cross-play --episodes 256

``--partner RUN_DIR`` takes the column seeds from another run on the same env, of any learner
(IPPO's seeds with MAPPO's, or with a Q-learner's): ``evaluation/cross_play_step_N_vs_<partner
directory name>_step_M.json``, every cell cross-play.

Env families add options of their own (``--help`` lists them with the env of the runs they
take), declared in the family's ``__init__`` (``jaxmarl.registry.register_family``'s
``evaluate_flags``): partners for ``--cross-play`` (``PartnerFlag``, such as Hanabi's
``--obl-partner``) or an evaluation of their own (``ReportFlag``, such as JaxNav's
``--jaxnav-levels``). Each family's README describes its options.

User errors (no such run directory, no checkpoint, a bad flag) exit with status 2 and one line.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxmarl import registry
from jaxmarl.algorithms import algorithm as find_algorithm
from jaxmarl.config import ConfigError, config_from_file
from jaxmarl.env import MultiAgentEnv
from jaxmarl.training.learner import Learner, evaluate, greedy_episodes

__all__ = ["CrossPlay", "GreedyPolicy", "Partner", "TrainedRun", "cross_play", "load_run", "main"]


class EvaluateError(ValueError):
    """A problem with the run directory or the flags (exit status 2)."""


class GreedyPolicy:
    """One seed's greedy policy for a plain loop over one (unbatched) env.

    ``act(carry, obs, state, first)`` takes the env's own observation dict and state (as
    ``env.reset`` / ``env.step`` return them) and gives ``(carry, actions)``, the actions a dict
    keyed by agent; ``first`` marks the first step of an episode (it resets recurrent memory).
    ``act`` is jitted.
    """

    def __init__(self, learner: Learner, params: Any):
        self.learner, self.params = learner, params
        # The env the user steps has no episode statistics (the unwrapped env, or its entity
        # view for entity-based networks: ``TrainedRun.env``).
        training_env = dataclasses.replace(learner.env, env=learner.env.policy_env)
        add_batch = lambda tree: jax.tree.map(lambda x: x[None], tree)

        def act(params, carry, obs, state, first):
            inputs = training_env.inputs(add_batch(obs), add_batch(state), first)
            carry, action = learner.greedy_policy(params, carry, inputs)
            actions = training_env.batch.env_actions(action)
            return carry, jax.tree.map(lambda x: x[0], actions)

        self._act = jax.jit(act)

    def initial_carry(self) -> Any:
        return self.learner.initial_carry(1)

    def act(self, carry: Any, obs: dict, state: Any, first: bool = False) -> tuple[Any, dict]:
        return self._act(self.params, carry, obs, state, jnp.asarray([first]))


@dataclasses.dataclass(frozen=True)
class TrainedRun:
    """A run directory's learner and the parameters of every seed at one checkpoint step.

    Attributes:
        run_dir: the run directory.
        alg: the algorithm name it was trained with.
        config: its saved config.
        learner: the learner rebuilt from that config.
        step: the checkpoint step (chunks done) the parameters come from.
        params: parameters with a leading ``[num_seeds]`` axis.
    """

    run_dir: Path
    alg: str
    config: Any
    learner: Learner
    step: int
    params: Any

    @property
    def num_seeds(self) -> int:
        return int(jax.tree.leaves(self.params)[0].shape[0])

    @property
    def env(self) -> MultiAgentEnv:
        """The env the run trained on, without episode statistics: the unwrapped env, or for
        entity-based networks (``alg=transf_qmix``) its entity view
        (``jaxmarl.wrappers.entities.EntityObservations``), whose observations the policy
        reads."""
        return self.learner.env.policy_env

    def seed_params(self, seed: int = 0) -> Any:
        if not 0 <= seed < self.num_seeds:
            raise EvaluateError(f"seed {seed} is out of range: the run has {self.num_seeds}")
        return jax.tree.map(lambda x: x[seed], self.params)

    def policy(self, seed: int = 0) -> GreedyPolicy:
        return GreedyPolicy(self.learner, self.seed_params(seed))

    @property
    def evaluation_dir(self) -> Path:
        """``RUN_DIR/evaluation/``, where evaluations write their files (made if missing)."""
        path = self.run_dir / "evaluation"
        path.mkdir(exist_ok=True)
        return path

    def write_evaluation(self, name: str, record: dict[str, Any]) -> Path:
        """Writes ``record``, after the run's ``alg`` and checkpoint ``step``, as
        ``RUN_DIR/evaluation/<name>.json``; returns its path."""
        path = self.evaluation_dir / f"{name}.json"
        path.write_text(json.dumps({"alg": self.alg, "step": self.step, **record}, indent=2) + "\n")
        return path

    def as_partner(self) -> Partner:
        """This run's seeds as the columns of another run's :func:`cross_play`."""
        if self.learner.evaluate_tasks is not None:
            raise EvaluateError(
                f"cross-play needs single-task runs; {self.run_dir} trains several tasks"
            )
        return Partner(
            name=f"{self.run_dir} ({self.alg}, step {self.step})",
            label=self.alg,
            env=_env_of(self),
            batch=self.learner.env.batch,
            greedy_policy=self.learner.greedy_policy,
            initial_carry=self.learner.initial_carry,
            params=self.params,
            members=tuple(f"seed {i}" for i in range(self.num_seeds)),
            file_tag=f"{self.run_dir.name}_step_{self.step}",
            record={"run_dir": str(self.run_dir), "alg": self.alg, "step": self.step},
        )


@dataclasses.dataclass(frozen=True)
class Partner:
    """Fixed greedy policies a run cross-plays with, other than its own seeds: another run's
    seeds (:meth:`TrainedRun.as_partner`) or pretrained agents (Hanabi's OBL agents,
    ``jaxmarl.envs.hanabi.pretrained.obl_partner``).

    Attributes:
        name: what the policies are, for messages and tables.
        label: a short name for figure axes (an algorithm's name).
        env: ``(env_id, sorted env_kwargs)`` of the env they play.
        batch: how they stack the agents (``AgentBatch``: with or without agent ids).
        greedy_policy: ``(params, carry, StepInput) -> (carry, action [B, A])``.
        initial_carry: ``num_envs -> carry`` for ``greedy_policy``.
        params: parameters with a leading ``[members]`` axis.
        members: one name per member (the matrix's columns).
        file_tag: names the result files (``cross_play_step_N_vs_<file_tag>``).
        record: what the result JSON keeps of them.
        member_kind: what a member is, for labels (``"seed"``, ``"agent"``).
    """

    name: str
    label: str
    env: tuple[str, tuple]
    batch: Any
    greedy_policy: Any
    initial_carry: Any
    params: Any
    members: tuple[str, ...]
    file_tag: str
    record: dict
    member_kind: str = "seed"


def load_run(run_dir: str | Path, *, step: int | None = None, best: bool = False) -> TrainedRun:
    """Rebuild a run's learner from its config and read one checkpoint (read-only).

    Args:
        run_dir: a directory written by ``python -m jaxmarl.train``.
        step: the checkpoint step to read (default: the latest).
        best: read the best step by the run's ``run.keep_best`` metric instead.

    Raises:
        EvaluateError: not a run directory, no checkpoint (or not that step), ``best`` without
            ``run.keep_best``; checkpoint errors (damaged, not matching) pass through.
    """
    from jaxmarl.training.host.checkpoint import Checkpointer
    from jaxmarl.training.host.loop import init_member, member_inputs

    run_dir = Path(run_dir)
    info_path, config_path = run_dir / "run.json", run_dir / "config.yaml"
    if not info_path.is_file() or not config_path.is_file():
        raise EvaluateError(
            f"{run_dir} is not a jaxmarl run directory (it needs run.json and config.yaml, as "
            f"python -m jaxmarl.train writes them)"
        )
    try:
        alg = json.loads(info_path.read_text())["alg"]
        algorithm = find_algorithm(alg)
    except (json.JSONDecodeError, KeyError, TypeError) as error:
        raise EvaluateError(
            f"{info_path} is damaged or names no known algorithm ({error})"
        ) from None
    try:
        config = config_from_file(algorithm.config_class, config_path)
    except ConfigError as error:
        raise EvaluateError(str(error)) from None
    if step is not None and best:
        raise EvaluateError("give --step or --best, not both")
    learner = algorithm.make(config)
    settings = config.run
    checkpointer = Checkpointer(
        run_dir / "checkpoints",
        max_to_keep=settings.max_to_keep,
        keep_period=settings.keep_period,
        best_metric=settings.keep_best,
        best_mode=settings.keep_best_mode,
        read_only=True,
    )
    try:
        steps = checkpointer.all_steps()
        if not steps:
            raise EvaluateError(f"{run_dir} has no checkpoint yet (nothing to evaluate)")
        if best:
            if not settings.keep_best:
                raise EvaluateError(
                    f"--best needs a run trained with run.keep_best=<metric>; {run_dir} was not. "
                    f"Use --step N (saved steps: {steps}) or the latest"
                )
            step = checkpointer.best_step()
            if step is None:
                raise EvaluateError(f"no step of {run_dir} has the metric {settings.keep_best}")
        elif step is not None and step not in steps:
            raise EvaluateError(f"{run_dir} has no checkpoint step {step}; saved steps: {steps}")
        step = steps[-1] if step is None else step
        keys, swept = member_inputs(settings)  # an in-program sweep: points x seeds
        target = jax.eval_shape(jax.vmap(init_member(learner)), keys, swept)
        state = checkpointer.restore(step, target=target)
    finally:
        checkpointer.close()
    return TrainedRun(run_dir, alg, config, learner, step, state.params)


def evaluate_run(run: TrainedRun, episodes: int, seed: int = 0) -> list[dict[str, float]]:
    """Metrics of ``episodes`` greedy episodes (one per env, all at once) for every seed."""
    keys = jax.random.split(jax.random.key(seed), run.num_seeds)
    metrics = jax.jit(jax.vmap(lambda p, k: evaluate(run.learner, p, k, episodes)))(
        run.params, keys
    )
    metrics = jax.device_get(metrics)
    return [
        {name: float(np.asarray(value)[i]) for name, value in metrics.items()}
        for i in range(run.num_seeds)
    ]


@dataclasses.dataclass(frozen=True)
class CrossPlay:
    """Cross-play of a run's seeds, or of two runs' seeds (:func:`cross_play`).

    Attributes:
        row_agents: the agents that act with the row seed's parameters.
        col_agents: the agents that act with the column seed's parameters.
        episodes: greedy episodes per pair of seeds.
        metrics: metric name -> ``[row seeds, column seeds]`` array; ``[i, j]`` is the mean
            over the pair's episodes with the row agents on seed ``i`` and the others on
            seed ``j`` (of the partner run, if there is one).
        partner: the partner run's directory, or the partner's name (``Partner.name``) when
            it is not a run; ``None`` when the columns are the run's own seeds (then the
            diagonal is self-play).
    """

    row_agents: tuple[str, ...]
    col_agents: tuple[str, ...]
    episodes: int
    metrics: dict[str, np.ndarray]
    partner: Path | str | None = None

    @property
    def returns(self) -> np.ndarray:
        """The ``episode_return`` matrix."""
        return self.metrics["episode_return"]

    def summary(self, metric: str = "episode_return") -> dict[str, float]:
        """Mean self-play (diagonal), mean cross-play (off the diagonal) and their gap; with a
        partner run every cell is cross-play, and only its mean is given."""
        matrix = self.metrics[metric]
        if self.partner is not None:
            return {"cross_play": float(np.mean(matrix))}
        off = ~np.eye(matrix.shape[0], dtype=bool)
        self_play, crossed = float(np.mean(np.diag(matrix))), float(np.mean(matrix[off]))
        return {"self_play": self_play, "cross_play": crossed, "gap": self_play - crossed}


def cross_play(
    run: TrainedRun,
    episodes: int,
    seed: int = 0,
    row_agents: Sequence[str] | None = None,
    partner: TrainedRun | Partner | None = None,
) -> CrossPlay:
    """Every seed's ``row_agents`` (default: the env's first agent) with every seed's others.

    Both seeds' policies see every agent's inputs and keep their own recurrent state; each
    agent takes the action of the seed it is assigned to. All pairs play the same episodes
    (the same evaluation key), so the diagonal equals :func:`evaluate_run`'s result for one
    seed evaluated with that key.

    With ``partner`` the other agents take the partner's policies instead: another run on the
    same env, of any learner (IPPO against MAPPO, a Q-learner, other hyperparameters), or
    pretrained agents (a :class:`Partner`, e.g. Hanabi's OBL agents). The matrix is ``[run's
    seeds, partner's members]``, and each policy gets its inputs as it was built to read them
    (with or without agent ids).

    Raises:
        EvaluateError: fewer than two seeds (without a partner) or agents, unknown
            ``row_agents`` or all of them, a multi-task run, a partner for another env, or
            ``episodes < 1``; raised before anything compiles.
    """
    mine = run.as_partner()
    cols = mine if partner is None else partner
    if isinstance(cols, TrainedRun):
        cols = cols.as_partner()
    agents = tuple(run.learner.env.batch.agents)
    if partner is None and run.num_seeds < 2:
        raise EvaluateError(
            f"cross-play pairs seeds, but {run.run_dir} has {run.num_seeds}; train with "
            f"run.num_seeds=2 or more, or give a partner run"
        )
    if cols.env != mine.env:
        theirs = cols.env
        raise EvaluateError(
            f"the partner {cols.name} plays {theirs[0]} {dict(theirs[1])}, this run trained on "
            f"{mine.env[0]} {dict(mine.env[1])}; cross-play needs the same env"
        )
    if len(agents) < 2:
        raise EvaluateError(f"cross-play needs two or more agents; {run.env.name} has one")
    if episodes < 1:
        raise EvaluateError(f"episodes must be at least 1, got {episodes}")
    rows = tuple(agents[:1] if row_agents is None else row_agents)
    unknown = [a for a in rows if a not in agents]
    if unknown or not rows or set(rows) == set(agents):
        problem = f"unknown agents {unknown}" if unknown else "they must be some, not all"
        raise EvaluateError(
            f"row agents {list(rows)}: {problem}; pick from {list(agents)} and leave at least "
            f"one for the column seed"
        )
    row_learner = run.learner
    row_batch, col_batch = row_learner.env.batch, cols.batch
    in_row = jnp.asarray([a in rows for a in agents])
    # Actions are [B, A] (discrete) or [B, A, d] (continuous): put the agent mask on axis A.
    mask = in_row if row_batch.discrete else in_row[:, None]

    def col_inputs(inputs):
        """The row learner's inputs as the column policies read them (their agent ids)."""
        if row_batch.agent_id == col_batch.agent_id:
            return inputs
        obs = col_batch.append_agent_ids(row_batch.strip_agent_ids(inputs.obs))
        return inputs.replace(obs=obs)

    def pair_policy(params, carry, inputs):
        carry_row, action_row = row_learner.greedy_policy(params[0], carry[0], inputs)
        carry_col, action_col = cols.greedy_policy(params[1], carry[1], col_inputs(inputs))
        return (carry_row, carry_col), jnp.where(mask, action_row, action_col)

    def pair_carry(num_envs):
        return row_learner.initial_carry(num_envs), cols.initial_carry(num_envs)

    key = jax.random.key(seed)

    def pair_metrics(row_params, col_params):
        return greedy_episodes(
            row_learner.env, pair_policy, pair_carry, (row_params, col_params), key, episodes
        )

    def row_of(row_seeds, col_seeds, i):
        row_params = jax.tree.map(lambda x: x[i], row_seeds)
        return jax.vmap(lambda col: pair_metrics(row_params, col))(col_seeds)

    matrix = jax.jit(lambda r, c: jax.lax.map(lambda i: row_of(r, c, i), jnp.arange(run.num_seeds)))
    metrics = jax.device_get(matrix(run.params, cols.params))
    if partner is None:
        source = None
    elif isinstance(partner, TrainedRun):
        source = partner.run_dir
    else:
        source = partner.name
    return CrossPlay(
        rows,
        tuple(a for a in agents if a not in rows),
        episodes,
        {name: np.asarray(v, np.float64) for name, v in metrics.items()},
        source,
    )


def _env_of(run: TrainedRun) -> tuple[str, tuple]:
    """``(env_id, env_kwargs)`` a single-task run trained on."""
    env = run.config.env
    return env.env_id, tuple(sorted(dict(env.env_kwargs).items()))


def _matrix_table(matrix: np.ndarray) -> str:
    n = matrix.shape[1]
    lines = ["| row seed \\ column seed | " + " | ".join(map(str, range(n))) + " |"]
    lines.append("|---" * (n + 1) + "|")
    for i, row in enumerate(matrix):
        lines.append(f"| {i} | " + " | ".join(f"{v:.4g}" for v in row) + " |")
    return "\n".join(lines)


def _table(rows: list[dict[str, float]]) -> str:
    first = [n for n in ("episode_return", "episode_length") if n in rows[0]]
    names = first + sorted(n for n in rows[0] if n not in first)
    mean = {name: float(np.mean([row[name] for row in rows])) for name in names}
    lines = ["| seed | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]
    for label, row in [*((str(i), r) for i, r in enumerate(rows)), ("mean", mean)]:
        lines.append(f"| {label} | " + " | ".join(f"{row[n]:.4g}" for n in names) + " |")
    return "\n".join(lines)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m jaxmarl.evaluate",
        description="Greedy evaluation of a training run's checkpoint (read-only).",
    )
    parser.add_argument("run_dir", type=Path, help="a run directory written by jaxmarl.train")
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--step", type=int, help="checkpoint step (default: the latest)")
    which.add_argument("--best", action="store_true", help="the best step by run.keep_best")
    parser.add_argument("--episodes", type=int, default=64, help="episodes (envs) per seed")
    parser.add_argument("--seed", type=int, default=0, help="evaluation seed")
    parser.add_argument("--no-gif", action="store_true", help="skip the episode GIF")
    parser.add_argument(
        "--cross-play",
        action="store_true",
        help="pair every seed's first agent with every seed's others (zero-shot coordination)",
    )
    parser.add_argument(
        "--row-agents",
        nargs="+",
        metavar="AGENT",
        help="with --cross-play: the agents that take the row seed (default: the first agent)",
    )
    partners = parser.add_mutually_exclusive_group()
    partners.add_argument(
        "--partner",
        type=Path,
        metavar="RUN_DIR",
        help="with --cross-play: the column seeds come from this run (same env, any learner; "
        "its latest checkpoint) instead of this run's own",
    )
    reports = parser.add_mutually_exclusive_group()
    for family_flag in registry.evaluate_flags():
        group = partners if isinstance(family_flag, registry.PartnerFlag) else reports
        group.add_argument(
            family_flag.flag,
            dest=_dest(family_flag.flag),
            nargs="+",
            metavar=family_flag.metavar,
            help=f"{family_flag.help} (runs on {family_flag.env_id})",
        )
    return parser


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line and status 2, no usage block
        raise EvaluateError(message)


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    parser.__class__ = _Parser
    try:
        args = parser.parse_args(sys.argv[1:] if argv is None else list(argv))
        if args.episodes < 1:
            raise EvaluateError(f"--episodes must be at least 1, got {args.episodes}")
        if args.step is not None and args.step < 0:
            raise EvaluateError(f"--step takes a checkpoint step >= 0, got {args.step}")
        family_flags = [
            (flag, values)
            for flag in registry.evaluate_flags()
            if (values := getattr(args, _dest(flag.flag))) is not None
        ]
        for name in ("row_agents", "partner"):
            if getattr(args, name) and not args.cross_play:
                raise EvaluateError(f"--{name.replace('_', '-')} goes with --cross-play")
        for flag, _ in family_flags:
            if isinstance(flag, registry.PartnerFlag) != args.cross_play:
                way = "with" if isinstance(flag, registry.PartnerFlag) else "without"
                raise EvaluateError(f"{flag.flag} goes {way} --cross-play")
        run = load_run(args.run_dir, step=args.step, best=args.best)
        partner = None if args.partner is None else load_run(args.partner).as_partner()
        report = None
        for flag, values in family_flags:
            env_id = run.config.env.env_id
            if env_id != flag.env_id:
                raise EvaluateError(
                    f"{flag.flag} takes a run on {flag.env_id}; {run.run_dir} trained on {env_id}"
                )
            try:  # the family checks the values before anything compiles
                made = flag.load()(run, values)
            except ValueError as error:
                raise EvaluateError(f"{flag.flag}: {error}") from None
            if isinstance(flag, registry.PartnerFlag):
                partner = made
            else:
                report = made
        if args.cross_play:
            # Checks its arguments before it compiles, so bad ones end here with status 2.
            crossed = cross_play(run, args.episodes, args.seed, args.row_agents, partner)
    except (EvaluateError, FileNotFoundError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if args.cross_play:
        return _write_cross_play(run, crossed, args.seed, partner)
    if report is not None:
        report(args.seed)
        return 0
    from jaxmarl.render import can_render
    from jaxmarl.training.host.loop import write_greedy_gif

    rows = evaluate_run(run, args.episodes, args.seed)
    table = _table(rows)
    result = {"episodes_per_seed": args.episodes, "evaluation_seed": args.seed, "seeds": rows}
    json_path = run.write_evaluation(f"step_{run.step}", result)
    print(f"{run.alg}, checkpoint step {run.step}, {args.episodes} greedy episodes per seed")
    print(table)
    print(f"-> {json_path}")
    if not args.no_gif and can_render(run.env):
        gif_path = run.evaluation_dir / f"step_{run.step}.gif"
        write_greedy_gif(run.learner, run.seed_params(0), jax.random.key(args.seed), gif_path)
        print(f"-> {gif_path}")
    return 0


def _dest(flag: str) -> str:
    """argparse's attribute name for ``flag``."""
    return flag.lstrip("-").replace("-", "_")


def _write_cross_play(
    run: TrainedRun, crossed: CrossPlay, seed: int, partner: Partner | None = None
) -> int:
    summary = crossed.summary()
    result = {
        "episodes_per_pair": crossed.episodes,
        "evaluation_seed": seed,
        "row_agents": list(crossed.row_agents),
        "col_agents": list(crossed.col_agents),
        "summary": summary,
        "metrics": {name: matrix.tolist() for name, matrix in crossed.metrics.items()},
    }
    name = f"cross_play_step_{run.step}"
    rows, cols = ", ".join(crossed.row_agents), ", ".join(crossed.col_agents)
    row_label, col_label = f"seed of {rows}", f"{{kind}} of {cols}"
    if partner is None:
        seeds = f"cross-play of {run.num_seeds} seeds"
        col_label = col_label.format(kind="seed")
        title = f"{run.alg} on {run.env.name}: greedy episode return"
    else:
        result["partner"] = {**partner.record, "members": list(partner.members)}
        name += f"_vs_{partner.file_tag}"
        seeds = (
            f"cross-play of its {run.num_seeds} seeds with the {len(partner.members)} "
            f"{partner.member_kind}s of {partner.name}"
        )
        row_label = f"{run.alg} {row_label}"
        col_label = f"{partner.label} {col_label.format(kind=partner.member_kind)}"
        title = f"{run.alg} with {partner.label} on {run.env.name}: greedy episode return"
    json_path = run.write_evaluation(name, result)
    print(
        f"{run.alg}, checkpoint step {run.step}: {seeds}, {crossed.episodes} greedy episodes "
        f"per pair; rows: {rows}, columns: {cols}"
    )
    print(_matrix_table(crossed.returns))
    if partner is not None and partner.member_kind != "seed":
        print("columns: " + ", ".join(f"{j} = {m}" for j, m in enumerate(partner.members)))
    if partner is None:
        print(
            f"episode return: self-play {summary['self_play']:.4g}, cross-play "
            f"{summary['cross_play']:.4g}, gap {summary['gap']:.4g}"
        )
    else:
        print(f"episode return: cross-play {summary['cross_play']:.4g}")
    print(f"-> {json_path}")
    try:
        from jaxmarl.training.host.plotting import plot_matrix

        png_path = plot_matrix(
            crossed.returns,
            run.evaluation_dir / f"{name}.png",
            row_label=row_label,
            col_label=col_label,
            title=title,
        )
        print(f"-> {png_path}")
    except ImportError:  # matplotlib is an optional extra
        print("(no heatmap: matplotlib is not installed; pip install 'jaxmarl[viz]')")
    return 0


if __name__ == "__main__":
    sys.exit(main())
