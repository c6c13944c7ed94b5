"""Play Hanabi in the terminal: yourself, OBL's pretrained agents, trained runs, random play.

    python -m jaxmarl.envs.hanabi.manual_game --player0 manual --player1 obl \\
        --weight1 obl-r2d2-flax/icml_OBL1/OFF_BELIEF1_SHUFFLE_COLOR0_BZA0_BELIEF_a.safetensors
    python -m jaxmarl.envs.hanabi.manual_game --player0 obl --weight0 A.safetensors \\
        --player1 run --weight1 runs/ippo-hanabi --seed 3

JaxMARL's ``manual_game.py`` flags (``--player0/1 manual|obl``, ``--weight0/1``, ``--seed``),
for 2-player Hanabi. Here a player can also be ``run`` (seed 0 of a run directory written by
``python -m jaxmarl.train``, given as its ``--weight``) or ``random`` (a uniform legal move).
Every player is asked every step, as in training, so recurrent players keep their memory; only
the player to move is prompted. A ``manual`` player sees its own view of the game (HLE's text:
its own cards hidden) and types the number of a legal move; anything else asks again.
End of input or Ctrl-C leaves the game. Bad flags exit with status 2 and one line.
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

import jaxmarl

PLAYER_KINDS = ("manual", "obl", "run", "random")


class LeftGame(Exception):
    """The human left (end of input or Ctrl-C)."""


class ManualPlayer:
    """Asks for a move number on the player's turn."""

    def __init__(self, agent: str, read: Callable[[str], str], write: Callable[[str], None]):
        self.agent, self.read, self.write = agent, read, write

    def act(self, env, obs, state, first: bool) -> int:
        mover = _mover(env, state)
        if mover != self.agent:
            return env.noop
        legal = np.flatnonzero(np.asarray(env.get_avail_actions(state)[self.agent]))
        self.write(f"\n{self.agent}, your view:\n{env.render_text(state, self.agent)}")
        self.write("legal moves: " + ", ".join(f"{m} {env.action_encoding[m]}" for m in legal))
        while True:
            try:
                answer = self.read(f"{self.agent}, your move: ").strip()
            except (EOFError, KeyboardInterrupt):
                raise LeftGame from None
            if answer.isdigit() and int(answer) in legal:
                return int(answer)
            self.write(f"{answer!r} is not a legal move; type one of {legal.tolist()}")


class OBLPlayer:
    """One of OBL's pretrained agents (a JaxMARL obl-r2d2-flax weight file)."""

    def __init__(self, agent: str, weights: Path):
        from jaxmarl.envs.hanabi.pretrained.partner import obl_network_of
        from jaxmarl.wrappers.baselines import load_params

        params = load_params(weights)
        self.agent, self.params = agent, params
        self.network = obl_network_of(str(weights), params)
        self.carry = self.network.initialize_carry(None, (1,))

    def act(self, env, obs, state, first: bool) -> int:
        legal = env.get_avail_actions(state)[self.agent][None].astype(jnp.float32)
        self.carry, move = self.network.greedy_act(
            self.params, self.carry, (obs[self.agent][None], legal)
        )
        return int(move[0])


class RunPlayer:
    """Seed 0 of a trained run, playing its own agent."""

    def __init__(self, agent: str, run_dir: Path):
        from jaxmarl.evaluate import load_run

        self.agent, self.policy = agent, load_run(run_dir).policy(0)
        self.carry = self.policy.initial_carry()

    def act(self, env, obs, state, first: bool) -> int:
        self.carry, actions = self.policy.act(self.carry, obs, state, first)
        return int(actions[self.agent])


class RandomPlayer:
    """A uniform legal move (the no-op off turn)."""

    def __init__(self, agent: str, seed: int):
        self.agent, self.rng = agent, np.random.default_rng(seed)

    def act(self, env, obs, state, first: bool) -> int:
        if _mover(env, state) != self.agent:
            return env.noop
        legal = np.flatnonzero(np.asarray(env.get_avail_actions(state)[self.agent]))
        return int(self.rng.choice(legal))


def _mover(env, state) -> str:
    return env.agents[int(np.asarray(state.seat_order)[int(state.cur_player)])]


def play(env, players: Sequence, key: jax.Array, write: Callable[[str], None] = print) -> int:
    """One game to its end; every move and the final score go to ``write``. Returns the score."""
    step = jax.jit(env.step_env)
    obs, state = env.reset(key)
    score, t = 0.0, 0
    while True:
        mover = _mover(env, state)
        moves = [player.act(env, obs, state, t == 0) for player in players]
        actions = {a: jnp.int32(m) for a, m in zip(env.agents, moves)}
        move = moves[env.agents.index(mover)]
        write(f"turn {t}: {mover} plays {move} {env.action_encoding[move]}")
        key, step_key = jax.random.split(key)
        obs, state, rewards, dones, _ = step(step_key, state, actions)
        score, t = score + float(rewards[mover]), t + 1
        if bool(dones["__all__"]):
            break
    write(f"\n{env.render_text(state)}\ngame over after {t} turns: score {int(score)}")
    return int(score)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m jaxmarl.envs.hanabi.manual_game",
        description="Play 2-player Hanabi in the terminal.",
    )
    for i in (0, 1):
        parser.add_argument(f"--player{i}", choices=PLAYER_KINDS, default="manual")
        parser.add_argument(
            f"--weight{i}",
            type=Path,
            help=f"player {i}'s OBL weight file (obl) or run directory (run)",
        )
    parser.add_argument("--seed", type=int, help="the deal (default: a random one)")
    return parser


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line and status 2, no usage block
        print(f"error: {message}", file=sys.stderr)
        raise SystemExit(2)


def main(
    argv: Sequence[str] | None = None,
    read: Callable[[str], str] = input,
    write: Callable[[str], None] = print,
) -> int:
    parser = _parser()
    parser.__class__ = _Parser
    args = parser.parse_args(sys.argv[1:] if argv is None else list(argv))
    env = jaxmarl.make("hanabi")
    seed = random.randint(0, 10_000) if args.seed is None else args.seed
    players = []
    for i, agent in enumerate(env.agents):
        kind, weight = getattr(args, f"player{i}"), getattr(args, f"weight{i}")
        if kind in ("obl", "run") and weight is None:
            parser.error(f"--player{i} {kind} needs --weight{i} (a weight file or run directory)")
        if kind in ("obl", "run") and not weight.exists():
            parser.error(f"--weight{i}: no such file or directory: {weight}")
        try:
            if kind == "manual":
                players.append(ManualPlayer(agent, read, write))
            elif kind == "obl":
                players.append(OBLPlayer(agent, weight))
            elif kind == "run":
                players.append(RunPlayer(agent, weight))
            else:
                players.append(RandomPlayer(agent, seed + i))
        except ValueError as error:  # EvaluateError: not an OBL file, not a run
            parser.error(f"--weight{i}: {error}")
    write(
        f"Hanabi, 2 players, deal {seed}: "
        + ", ".join(f"{a} {getattr(args, f'player{i}')}" for i, a in enumerate(env.agents))
    )
    try:
        play(env, players, jax.random.key(seed), write)
    except LeftGame:
        write("\nleft the game")
    return 0


if __name__ == "__main__":
    sys.exit(main())
