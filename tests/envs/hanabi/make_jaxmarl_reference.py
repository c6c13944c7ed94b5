"""Record JaxMARL 0.2.0's Hanabi on recorded HLE games, for ``test_hanabi_parity.py``.

JaxMARL has the same import name as this package, so this runs in its own virtual environment
and is never imported by the tests::

    cd /tmp && /tmp/peer/bin/python -I /path/to/tests/envs/hanabi/make_jaxmarl_reference.py

It replays some of the HLE games in ``data/hle_games.npz`` (``make_hle_reference.py``) in
JaxMARL's ``HanabiEnv`` (default keywords): ``reset_from_deck`` with the game's deck one-hot,
then the recorded moves, the player to move playing the move and every other agent the no-op.
Per player count ``n`` it picks three games: the first scoring 0 (random legal play, ended by
misplays), the first scoring 25 and the first scoring between (both careful play, through the
deck and the last round). It writes ``data/jaxmarl_games.npz`` with, for each ``n``:

* ``p<n>_games`` [3] int: the picked games' indices among ``hle_games.npz``'s ``n``-player
  games;
* ``p<n>_obs`` [sum(T + 1), n, obs_size] float32: every agent's observation (JaxMARL's V0
  belief) after the reset and after every move, games concatenated;
* ``p<n>_legal`` [sum(T + 1), n, ceil(num_moves / 8)] uint8: ``get_legal_moves`` of every
  agent at the same points, bit-packed;
* ``p<n>_rewards`` [sum(T)] float32 (every agent's is the same) and ``p<n>_dones`` [sum(T)]
  bool (``dones["__all__"]``) after every move; ``p<n>_score`` [3] int: the final
  ``state.score``.
"""

from __future__ import annotations

import pathlib
import sys

import jax
import jax.numpy as jnp
import numpy as np

import jaxmarl

if not hasattr(jaxmarl, "environments"):
    sys.exit("run this with JaxMARL 0.2.0's interpreter (/tmp/peer/bin/python -I), not ours")

from jaxmarl.environments.hanabi.hanabi import HanabiEnv  # noqa: E402

DATA = pathlib.Path(__file__).resolve().parent / "data"
PLAYERS = (2, 3, 4, 5)


def hle_games(data, n):
    """``(deck, actions, score)`` of every recorded ``n``-player HLE game."""
    ends = np.cumsum(data[f"p{n}_steps"])
    actions = np.split(data[f"p{n}_actions"].astype(np.int32), ends[:-1])
    return list(zip(data[f"p{n}_deck"].astype(np.int32), actions, data[f"p{n}_score"]))


def pick(games):
    """The first game scoring 0, the first scoring 25 and the first in between."""
    scores = [int(score) for _, _, score in games]
    return [
        scores.index(0),
        scores.index(25),
        next(i for i, s in enumerate(scores) if 0 < s < 25),
    ]


def replay(env, step, deck, actions):
    one_hot = np.eye(env.num_colors * env.num_ranks, dtype=np.float32)[deck]
    obs, state = env.reset_from_deck(jnp.asarray(one_hot.reshape(len(deck), env.num_colors, -1)))

    def snapshot(obs, state):
        legal = env.get_legal_moves(state)
        return (
            np.stack([np.asarray(obs[a], np.float32) for a in env.agents]),
            np.stack([np.asarray(legal[a]) > 0 for a in env.agents]),
        )

    seen, rewards, dones = [snapshot(obs, state)], [], []
    for action in actions:
        seat = int(np.argmax(np.asarray(state.cur_player_idx)))
        mover = int(np.asarray(state.seat_order)[seat])
        moves = {
            a: jnp.int32(action if i == mover else env.num_moves - 1)
            for i, a in enumerate(env.agents)
        }
        obs, state, reward, done, _ = step(jax.random.PRNGKey(0), state, moves)
        seen.append(snapshot(obs, state))
        rewards.append(float(reward[env.agents[0]]))
        dones.append(bool(done["__all__"]))
    obs, legal = (np.stack(x) for x in zip(*seen))
    return obs, legal, rewards, dones, int(state.score)


def main():
    data = np.load(DATA / "hle_games.npz")
    arrays = {}
    for n in PLAYERS:
        env = HanabiEnv(num_agents=n)
        step = jax.jit(env.step_env)
        games = hle_games(data, n)
        picked = pick(games)
        runs = [replay(env, step, *games[i][:2]) for i in picked]
        arrays[f"p{n}_games"] = np.array(picked)
        arrays[f"p{n}_obs"] = np.concatenate([r[0] for r in runs])
        arrays[f"p{n}_legal"] = np.packbits(np.concatenate([r[1] for r in runs]), axis=-1)
        arrays[f"p{n}_rewards"] = np.concatenate([r[2] for r in runs]).astype(np.float32)
        arrays[f"p{n}_dones"] = np.concatenate([r[3] for r in runs]).astype(bool)
        arrays[f"p{n}_score"] = np.array([r[4] for r in runs])
        moves = sum(len(r[2]) for r in runs)
        print(f"{n} players: games {picked}, {moves} moves, scores {[r[4] for r in runs]}")
    path = DATA / "jaxmarl_games.npz"
    np.savez_compressed(path, **arrays)
    print(f"wrote {path} ({path.stat().st_size / 1024:.0f} KiB)")


if __name__ == "__main__":
    main()
