"""Parity with DeepMind's Hanabi Learning Environment (HLE), move for move and bit for bit.

Games recorded from HLE by ``make_hle_reference.py`` (``data/hle_games.npz``: seeded deals,
random-legal and careful random play, 2-5 players) are replayed here from their decks with
``reset_from_deck``. At every step every player's full observation is compared in both
card-knowledge modes (``hle_bits`` against HLE's encoder directly; ``v0_belief`` against the
V0 belief recomputed below from HLE's bits and the cards seen in the same observation), and so
are the legal moves of every player, the rewards, the end flag, the final score and HLE's text.
Three of those games per player count are also compared with JaxMARL 0.2.0's env, as
``make_jaxmarl_reference.py`` recorded them (``data/jaxmarl_games.npz``).

The nightly test plays thousands of fresh HLE games live when ``hanabi_learning_environment``
is installed (see ``make_hle_reference.py`` for how to build it).
"""

from __future__ import annotations

import functools
import pathlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxmarl

DATA = pathlib.Path(__file__).parent / "data" / "hle_games.npz"
JAXMARL_DATA = DATA.with_name("jaxmarl_games.npz")
PLAYERS = (2, 3, 4, 5)


@functools.cache
def envs(num_players):
    return (
        jaxmarl.make("hanabi", num_agents=num_players, card_knowledge="hle_bits"),
        jaxmarl.make("hanabi", num_agents=num_players),
    )


@functools.cache
def replay_fn(num_players):
    """``(decks [G, D], actions [G, T]) -> per-step outputs`` for G games, jitted."""
    bits_env, v0_env = envs(num_players)

    def replay(deck, actions):
        _, state = bits_env.reset_from_deck(deck)

        def observe(state):
            legal = bits_env.get_avail_actions(state)
            return dict(
                bits=jnp.stack([o for o in bits_env.get_obs(state).values()]),
                v0=jnp.stack([o for o in v0_env.get_obs(state).values()]),
                legal=jnp.stack([legal[a] for a in bits_env.agents]),
                cur_player=state.cur_player,
            )

        def body(state, action):
            moves = {
                agent: jnp.where(i == state.cur_player, action, bits_env.noop).astype(jnp.int32)
                for i, agent in enumerate(bits_env.agents)
            }
            _, state, rewards, dones, infos = bits_env.step_env(jax.random.key(0), state, moves)
            out = observe(state)
            out.update(
                reward=jnp.stack([rewards[a] for a in bits_env.agents]),
                done=dones["__all__"],
                terminated=infos["terminated"],
                illegal=infos["illegal_action"],
                score=state.score,
            )
            return state, out

        first = observe(state)
        final, trajectory = jax.lax.scan(body, state, actions)
        return first, trajectory

    return jax.jit(jax.vmap(replay))


def v0_from_bits(obs_bits, num_players, env):
    """Reference V0 belief observations from HLE's canonical bits [..., obs_size].

    The 25 plausibility bits of every card slot are weighted by the copies of each card not
    yet discarded or played (read from the discard and firework sections of the same
    observation) and normalised per slot; empty slots stay zero.
    """
    obs = obs_bits.astype(np.float64)
    colors, ranks, hand = env.num_colors, env.num_ranks, env.hand_size
    per_rank = env.num_cards_of_rank
    start = env.hands_n_feats + (env.deck_size - num_players * hand)
    top = obs[..., start : start + colors * ranks].reshape(*obs.shape[:-1], colors, ranks)
    played = np.cumsum(top[..., ::-1], axis=-1)[..., ::-1]  # a top rank k means 0..k played
    start = env.hands_n_feats + env.board_n_feats
    discards = obs[..., start : start + env.discards_n_feats]
    counts, offset = [], 0
    for _ in range(colors):
        for r in range(ranks):
            counts.append(discards[..., offset : offset + per_rank[r]].sum(-1))
            offset += per_rank[r]
    discarded = np.stack(counts, axis=-1)
    unseen = np.tile(per_rank, colors) - discarded - played.reshape(*obs.shape[:-1], -1)
    start = obs.shape[-1] - env.knowledge_n_feats
    knowledge = obs[..., start:].reshape(*obs.shape[:-1], num_players * hand, -1)
    bits = knowledge[..., : colors * ranks]
    weights = bits * unseen[..., None, :]
    total = weights.sum(-1, keepdims=True)
    knowledge[..., : colors * ranks] = np.where(
        total > 0, weights / np.where(total > 0, total, 1), 0
    )
    out = obs.copy()
    out[..., start:] = knowledge.reshape(*obs.shape[:-1], -1)
    return out


def compare_games(num_players, games, replays=None):
    """Replay ``games`` (dicts as ``make_hle_reference.play_game`` returns) and assert parity
    (``replays``: their replays here, when already done).

    Returns the number of steps compared (moves; observations are compared before the first
    move too).
    """
    bits_env, v0_env = envs(num_players)
    noop_only = np.zeros(bits_env.num_moves, bool)
    noop_only[bits_env.noop] = True
    replays = replay_games(num_players, games) if replays is None else replays
    for i, (g, ours) in enumerate(zip(games, replays, strict=True)):
        steps = len(g["actions"])
        where = f"{num_players} players, game {i}"
        np.testing.assert_array_equal(ours["bits"], g["obs"], err_msg=f"{where}: hle bits")
        np.testing.assert_allclose(
            ours["v0"],
            v0_from_bits(g["obs"], num_players, v0_env),
            rtol=1e-6,
            atol=1e-7,
            err_msg=f"{where}: V0 belief",
        )
        legal, cur = ours["legal"], ours["cur_player"]
        for t in range(steps):  # the mover's legal moves are HLE's; the others may only pass
            np.testing.assert_array_equal(legal[t, cur[t]], g["legal"][t], err_msg=f"{where} t={t}")
            others = np.delete(legal[t], cur[t], axis=0)
            assert (others == noop_only).all(), f"{where} t={t}: off-turn moves besides no-op"
        rewards = ours["reward"]
        np.testing.assert_array_equal(rewards, np.repeat(g["rewards"][:, None], num_players, 1))
        np.testing.assert_array_equal(ours["done"], g["terminal"])
        np.testing.assert_array_equal(ours["terminated"], g["terminal"])
        assert not ours["illegal"].any(), where
        assert int(ours["score"][steps - 1]) == int(g["score"]), where
        assert rewards[:, 0].sum() == g["score"], where
    return sum(len(g["actions"]) for g in games)


def replay_games(num_players, games):
    """Replay ``games`` (dicts with a ``deck`` and ``actions``) here, in one jitted batch.

    Returns one dict per game: ``bits``, ``v0``, ``legal`` and ``cur_player`` after the reset
    and after every move (``[T + 1, ...]``), the rest after every move (``[T, ...]``).
    """
    bits_env = envs(num_players)[0]
    longest = max(len(g["actions"]) for g in games)
    decks = np.stack([g["deck"] for g in games]).astype(np.int32)
    for deck in decks:
        bits_env.deck_to_cards(deck)  # every recorded deck is a permutation of the cards
    actions = np.full((len(games), longest), bits_env.noop, np.int32)
    for i, g in enumerate(games):
        actions[i, : len(g["actions"])] = g["actions"]
    first, trajectory = jax.device_get(replay_fn(num_players)(decks, actions))
    replays = []
    for i, g in enumerate(games):
        steps = len(g["actions"])
        replay = {key: values[i][:steps] for key, values in trajectory.items()}
        for key, values in first.items():
            replay[key] = np.concatenate([values[i][None], replay[key]])
        replays.append(replay)
    return replays


def load_games(num_players):
    data = np.load(DATA)
    key = f"p{num_players}_"
    steps = data[key + "steps"]
    size = int(data[key + "obs_size"])
    num_moves = int(data[key + "num_moves"])
    obs = np.unpackbits(data[key + "obs"], axis=-1, count=size)
    legal = np.unpackbits(data[key + "legal"], axis=-1, count=num_moves).astype(bool)
    games, move_at, obs_at = [], 0, 0
    for i, t in enumerate(steps):
        games.append(
            dict(
                deck=data[key + "deck"][i],
                actions=data[key + "actions"][move_at : move_at + t],
                rewards=data[key + "rewards"][move_at : move_at + t],
                terminal=data[key + "terminal"][move_at : move_at + t],
                obs=obs[obs_at : obs_at + t + 1],
                legal=legal[obs_at : obs_at + t + 1],
                score=int(data[key + "score"][i]),
            )
        )
        move_at += t
        obs_at += t + 1
    text = [s.split("\x00") for s in data[key + "text"]]
    return games, text


@functools.cache
def recorded(num_players):
    """The recorded HLE games, their text and their replays here (shared by the tests)."""
    games, text = load_games(num_players)
    return games, text, replay_games(num_players, games)


@pytest.mark.parametrize("num_players", PLAYERS)
def test_recorded_hle_games_match(num_players):
    games, text, replays = recorded(num_players)
    steps = compare_games(num_players, games, replays)
    assert steps > 250  # long games, not only early misplays
    assert any(g["score"] == 25 for g in games) and any(g["score"] == 0 for g in games)
    # HLE's text of every player's observation, every step of the first game.
    env = envs(num_players)[0]
    _, state = env.reset_from_deck(games[0]["deck"].astype(np.int32))
    step = jax.jit(env.step_env)
    for t, per_player in enumerate(text):
        for p, agent in enumerate(env.agents):
            assert env.render_text(state, agent) == per_player[p], (num_players, t, p)
        if t < len(games[0]["actions"]):
            moves = {
                a: jnp.int32(games[0]["actions"][t] if p == int(state.cur_player) else env.noop)
                for p, a in enumerate(env.agents)
            }
            state = step(jax.random.key(0), state, moves)[1]


@pytest.mark.parametrize("num_players", PLAYERS)
def test_recorded_games_match_jaxmarl(num_players):
    """JaxMARL 0.2.0's observations (V0 belief), legal moves of every agent, rewards, end flags
    and final scores on three recorded HLE games (``make_jaxmarl_reference.py``)."""
    reference = np.load(JAXMARL_DATA)
    key = f"p{num_players}_"
    picked = reference[key + "games"]
    games, _, replays = recorded(num_players)
    games, replays = [games[i] for i in picked], [replays[i] for i in picked]
    env = envs(num_players)[1]
    obs_at = np.cumsum([0] + [len(g["actions"]) + 1 for g in games])
    move_at = np.cumsum([0] + [len(g["actions"]) for g in games])
    legal = np.unpackbits(reference[key + "legal"], axis=-1, count=env.num_moves).astype(bool)
    for i, ours in enumerate(replays):
        where = f"{num_players} players, JaxMARL game {i}"
        theirs = slice(obs_at[i], obs_at[i + 1])
        np.testing.assert_allclose(
            ours["v0"], reference[key + "obs"][theirs], rtol=1e-6, atol=1e-7, err_msg=where
        )
        np.testing.assert_array_equal(ours["legal"], legal[theirs], err_msg=where)
        moves = slice(move_at[i], move_at[i + 1])
        np.testing.assert_array_equal(ours["reward"][:, 0], reference[key + "rewards"][moves])
        np.testing.assert_array_equal(ours["done"], reference[key + "dones"][moves], err_msg=where)
        assert int(ours["score"][-1]) == int(reference[key + "score"][i]), where
    assert sorted(reference[key + "score"])[::2] == [0, 25]  # a lost game and a perfect one


@pytest.mark.nightly
@pytest.mark.parametrize("num_players", PLAYERS)
def test_live_hle_games_match(num_players):
    pytest.importorskip("hanabi_learning_environment")
    from tests.envs.hanabi.make_hle_reference import play_game

    games, steps = 0, 0
    for chunk in range(4):
        batch = [
            play_game(
                num_players, seed=10_000 + 1000 * chunk + i, careful=i % 2 == 1, with_text=False
            )
            for i in range(250)
        ]
        steps += compare_games(num_players, batch)
        games += len(batch)
    print(f"HLE parity, {num_players} players: {games} games, {steps} steps, 0 mismatches")
