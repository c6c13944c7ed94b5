"""Record Hanabi games from DeepMind's Hanabi Learning Environment (HLE) for the parity tests.

Needs ``hanabi-learning-environment==0.0.4`` (and numpy) only, not jaxmarl, so it runs in any
venv that has HLE (its sdist builds with ``CMAKE_POLICY_VERSION_MINIMUM=3.5 pip install
hanabi-learning-environment==0.0.4``)::

    python tests/envs/hanabi/make_hle_reference.py            # writes data/hle_games.npz

Each game is played from a seeded HLE deal by one of two policies: uniformly random legal
moves, or a careful random policy that looks at the true cards and mostly avoids misplays and
discarding a card's last copy, so that games run through the deck, play the last round,
complete colours (returning a hint token) and sometimes reach 25. The deck is read from the
game's deal moves (then padded with the undealt cards, which no observation shows). At every
decision point the record holds every player's canonical observation (HLE's 0/1 card
knowledge bits), the legal moves of the player to move and HLE's text for every player; after
every move, the reward (change in HLE's score) and whether the game ended.

``parity_games`` is also what the nightly test calls to compare thousands of live games.
"""

from __future__ import annotations

import argparse
import pathlib

import numpy as np

CARD_KNOWLEDGE = "hle_bits"
DATA = pathlib.Path(__file__).parent / "data" / "hle_games.npz"
# Games recorded for CI per player count: (random legal, careful).
CI_GAMES = {2: (4, 12), 3: (2, 6), 4: (2, 6), 5: (2, 6)}


def _pyhanabi():
    from hanabi_learning_environment import pyhanabi

    return pyhanabi


def _careful_move(state, game, rng, legal):
    """A legal move uid: mostly a playable card, else a safe hint or discard."""
    pyhanabi = _pyhanabi()
    player = state.cur_player()
    hand = state.player_hands()[player]
    fireworks = state.fireworks()
    uids = {game.get_move_uid(m): m for m in legal}

    def playable(card):
        return fireworks[card.color()] == card.rank()

    def critical(card):
        """The last copy of a card still needed on its firework."""
        if card.rank() < fireworks[card.color()]:
            return False
        gone = sum(
            1 for d in state.discard_pile() if d.color() == card.color() and d.rank() == card.rank()
        )
        return game.num_cards(card.color(), card.rank()) - gone <= 1

    plays, safe_discards, hints, other = [], [], [], []
    for uid, move in uids.items():
        kind = move.type()
        if kind == pyhanabi.HanabiMoveType.PLAY:
            (plays if playable(hand[move.card_index()]) else other).append(uid)
        elif kind == pyhanabi.HanabiMoveType.DISCARD:
            card = hand[move.card_index()]
            useless = card.rank() < fireworks[card.color()]
            (safe_discards if useless or not critical(card) else other).append(uid)
        else:
            hints.append(uid)
    if rng.random() < 0.03:  # now and then any legal move, misplays included
        return int(rng.choice(list(uids)))
    if plays and rng.random() < 0.85:
        return int(rng.choice(plays))
    pools = [p for p in (safe_discards, hints) if p]
    if pools:
        return int(rng.choice(pools[int(rng.integers(len(pools)))]))
    return int(rng.choice(list(uids)))


def play_game(num_players: int, seed: int, careful: bool, with_text: bool = True) -> dict:
    """One HLE game; see the module docstring for what is recorded."""
    pyhanabi = _pyhanabi()
    game = pyhanabi.HanabiGame({"players": num_players, "seed": seed})
    encoder = pyhanabi.ObservationEncoder(game, pyhanabi.ObservationEncoderType.CANONICAL)
    rng = np.random.default_rng(seed)
    num_moves = game.max_moves() + 1  # HLE's moves, then JaxMARL's no-op
    state = game.new_initial_state()
    obs, legal, text, actions, rewards, terminal = [], [], [], [], [], []

    def deal():
        while state.cur_player() == pyhanabi.CHANCE_PLAYER_ID:
            state.deal_random_card()

    def record():
        obs.append([encoder.encode(state.observation(p)) for p in range(num_players)])
        mask = np.zeros(num_moves, bool)
        if not state.is_terminal():
            mask[[game.get_move_uid(m) for m in state.legal_moves()]] = True
        legal.append(mask)
        if with_text:
            text.append([str(state.observation(p)) for p in range(num_players)])

    deal()
    record()
    while not state.is_terminal():
        moves = state.legal_moves()
        if careful:
            uid = _careful_move(state, game, rng, moves)
        else:
            uid = game.get_move_uid(moves[int(rng.integers(len(moves)))])
        score = state.score()
        state.apply_move(game.get_move(uid))
        deal()
        actions.append(uid)
        rewards.append(state.score() - score)
        terminal.append(state.is_terminal())
        record()

    deck = [
        item.move().color() * game.num_ranks() + item.move().rank()
        for item in state.move_history()
        if item.move().type() == pyhanabi.HanabiMoveType.DEAL
    ]
    counts = {
        c * game.num_ranks() + r: game.num_cards(c, r)
        for c in range(game.num_colors())
        for r in range(game.num_ranks())
    }
    for card in deck:
        counts[card] -= 1
    deck += [card for card, n in sorted(counts.items()) for _ in range(n)]
    return dict(
        num_players=num_players,
        deck=np.asarray(deck, np.int8),
        actions=np.asarray(actions, np.int16),
        obs=np.asarray(obs, np.uint8),  # [T + 1, N, obs_size]
        legal=np.asarray(legal, bool),  # [T + 1, num_moves], the player to move
        rewards=np.asarray(rewards, np.int8),
        terminal=np.asarray(terminal, bool),
        score=state.score(),
        text=text,
    )


def parity_games(num_players: int, num_random: int, num_careful: int, seed0: int = 0):
    """``num_random`` random-legal and ``num_careful`` careful games, seeds from ``seed0``."""
    for i in range(num_random + num_careful):
        seed = seed0 + 1000 * num_players + i
        yield play_game(num_players, seed, careful=i >= num_random, with_text=True)


def save(games: list[dict], path: pathlib.Path) -> None:
    """One compressed npz; observations bit-packed, games concatenated with offsets."""
    arrays = {}
    for n in sorted({g["num_players"] for g in games}):
        group = [g for g in games if g["num_players"] == n]
        steps = np.array([len(g["actions"]) for g in group])
        arrays[f"p{n}_steps"] = steps
        arrays[f"p{n}_deck"] = np.stack([g["deck"] for g in group])
        arrays[f"p{n}_score"] = np.array([g["score"] for g in group], np.int8)
        arrays[f"p{n}_actions"] = np.concatenate([g["actions"] for g in group])
        arrays[f"p{n}_rewards"] = np.concatenate([g["rewards"] for g in group])
        arrays[f"p{n}_terminal"] = np.concatenate([g["terminal"] for g in group])
        obs = np.concatenate([g["obs"] for g in group])  # [sum(T + 1), N, obs_size]
        arrays[f"p{n}_obs_size"] = np.array(obs.shape[-1])
        arrays[f"p{n}_obs"] = np.packbits(obs, axis=-1)
        arrays[f"p{n}_legal"] = np.packbits(np.concatenate([g["legal"] for g in group]), axis=-1)
        arrays[f"p{n}_num_moves"] = np.array(group[0]["legal"].shape[-1])
        # HLE's text for the first game only (it is long).
        arrays[f"p{n}_text"] = np.array(["\x00".join(t) for t in group[0]["text"]])
    np.savez_compressed(path, **arrays)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=pathlib.Path, default=DATA)
    args = parser.parse_args()
    games = [
        game
        for n, (num_random, num_careful) in CI_GAMES.items()
        for game in parity_games(n, num_random, num_careful)
    ]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    save(games, args.out)
    for n in CI_GAMES:
        group = [g for g in games if g["num_players"] == n]
        print(
            f"{n} players: {len(group)} games, {sum(len(g['actions']) for g in group)} steps, "
            f"scores {sorted(int(g['score']) for g in group)}"
        )
    print(f"wrote {args.out} ({args.out.stat().st_size / 1024:.0f} KiB)")


if __name__ == "__main__":
    main()
