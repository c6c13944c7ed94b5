"""Hanabi, move for move and observation bit for observation bit as DeepMind's Hanabi Learning
Environment (HLE), with JaxMARL 0.2.0's id, action layout and observation size."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from jaxmarl import spaces
from jaxmarl.env import MultiAgentEnv, jit_method
from jaxmarl.typing import Actions, AvailActions, Observations

DEFAULT_COLOR_MAP = ("R", "Y", "G", "W", "B", "M")  # HLE's letters; "M": a sixth colour
CARD_KNOWLEDGE_MODES = ("v0_belief", "hle_bits")
NO_CARD = -1  # an empty hand slot (hands shrink in the last round) or no card at all


@struct.dataclass
class HanabiState:
    """Everything that changes in a game of Hanabi.

    Cards are integers ``colour * num_ranks + rank`` (``NO_CARD = -1`` for none); players are
    seats ``0 .. num_players - 1`` in turn order (``seat_order[s]`` is the agent index playing
    seat ``s``). Shapes use ``N`` players, ``H`` hand size, ``C`` colours, ``R`` ranks and
    ``D`` cards in the deck.

    Attributes:
        deck: ``[D]`` int32, every card in the order it is dealt (hands first, seat by seat).
        num_dealt: ``[]`` int32, cards dealt so far (``D`` once the deck is empty).
        hands: ``[N, H]`` int32, each seat's cards, oldest first; empty slots (``NO_CARD``)
            only at the end.
        color_plausible / rank_plausible: ``[N, H, C]`` / ``[N, H, R]`` bool, the colours and
            ranks each card can still be from the hints its holder got (HLE's card knowledge;
            all false for an empty slot).
        color_hinted / rank_hinted: ``[N, H, C]`` / ``[N, H, R]`` bool, one-hot of the colour
            and rank revealed for each card (all false when not revealed).
        fireworks: ``[C]`` int32, cards played per colour.
        info_tokens / life_tokens: ``[]`` int32, tokens left.
        discard_counts: ``[C * R]`` int32, copies of each card discarded (misplays included).
        discard_pile: ``[D]`` int32, discarded cards in order, then ``NO_CARD``.
        cur_player: ``[]`` int32, the seat to move.
        seat_order: ``[N]`` int32, the agent playing each seat (``arange(N)`` unless
            ``shuffle_player_order``).
        turns_to_play: ``[]`` int32, HLE's counter: moves left once the deck is empty.
        score: ``[]`` int32, HLE's score: cards played, or 0 once the lives run out.
        last_move: ``[]`` int32, the last move (an action index), ``-1`` before any.
        last_player: ``[]`` int32, the seat that made it.
        last_card: ``[]`` int32, the card it played or discarded, ``NO_CARD`` for a hint.
        last_reveal: ``[H]`` bool, the cards a hint touched.
        last_scored: ``[]`` bool, the play succeeded.
        last_token: ``[]`` bool, the play completed a colour and returned a hint token.
        terminal: ``[]`` bool, the game is over.
        done: ``[]`` bool, the episode is over (the game, or the time limit).
        step: ``[]`` int32, steps taken in the episode.
    """

    deck: jax.Array
    num_dealt: jax.Array
    hands: jax.Array
    color_plausible: jax.Array
    rank_plausible: jax.Array
    color_hinted: jax.Array
    rank_hinted: jax.Array
    fireworks: jax.Array
    info_tokens: jax.Array
    life_tokens: jax.Array
    discard_counts: jax.Array
    discard_pile: jax.Array
    cur_player: jax.Array
    seat_order: jax.Array
    turns_to_play: jax.Array
    score: jax.Array
    last_move: jax.Array
    last_player: jax.Array
    last_card: jax.Array
    last_reveal: jax.Array
    last_scored: jax.Array
    last_token: jax.Array
    terminal: jax.Array
    done: jax.Array
    step: jax.Array


_I32 = jnp.int32


class HanabiEnv(MultiAgentEnv):
    """The cooperative card game Hanabi for 2 to 5 players (JaxMARL's ``hanabi``).

    Rules are HLE's (``hanabi_learning_environment`` 0.0.4, which follows the published game):
    5 colours x ranks 1-5 (three 1s, two each of 2-4, one 5 per colour: 50 cards), 8 hint
    tokens, 3 lives, hands of 5 cards for 2-3 players and 4 for 4-5. On its turn a player
    plays a card (onto its colour's firework if it is the next rank, otherwise it is discarded
    and a life is lost), discards a card (legal when a hint token is missing; returns one) or
    spends a token to tell another player every card of one colour or one rank in their hand
    (legal when that hand holds one). Playing a 5 returns a token when one is missing. A
    played or discarded card is replaced from the deck while it lasts; once the last card is
    drawn every player, the drawer last, has one more turn. The game ends then, when all
    fireworks are complete (score 25) or when the last life is lost.

    Score and reward: HLE's score, the number of cards played, or 0 once the lives have run
    out ("bomb-0", as HLE and JaxMARL score). Every agent gets the same reward, the change in
    score on that step, so an episode's return is the final score.

    Turns: every agent acts every step, as in JaxMARL. The player to move chooses among its
    legal moves; every other agent must pass the no-op (the last action).

    Actions (``Discrete(num_moves)``, JaxMARL's layout, which is HLE's move order plus the
    no-op): ``0 .. H-1`` discard the card in that slot; ``H .. 2H-1`` play it; then colour
    hints, ``num_colors`` per other player in seat order after the mover; then rank hints,
    ``num_ranks`` per other player; the no-op last. 21 actions for 2 players, 31/39/49 for
    3/4/5.

    Illegal actions: an illegal move by the player to move changes nothing (no card, token or
    turn changes; the step counter advances) and any other agent's action other than the
    no-op is ignored; both raise ``infos["illegal_action"]`` (``[num_agents]`` bool, agent
    order). Masks from ``get_avail_actions`` never allow one.

    Observation (``Box(0, 1, (obs_size,), float32)``, 658/956/1041/1280 features for 2-5
    players): HLE's canonical encoding from the agent's seat, players ordered from the agent
    onwards: the other hands (25 card bits per slot) and a bit per player whose hand is short;
    the board (deck size thermometer, the top card of each firework, hint and life token
    thermometers); the discards (a thermometer per card over its copies); the last move
    (mover, move type, hint target, colour, rank, cards touched, slot played or discarded,
    that card, scored, token returned); and the card knowledge of every hand (per slot 25
    values, then the revealed colour and rank). ``card_knowledge`` chooses the 25 values:
    ``"v0_belief"`` (default, JaxMARL's and OBL's V0 belief): HLE's plausibility bits times
    the copies of each card neither discarded nor played, normalised per slot; ``"hle_bits"``:
    HLE's 0/1 plausibility bits. ``render_text(state, agent)`` prints what HLE prints.

    State: ``HanabiState``. Termination: the game ends (``infos["terminated"]``).
    Truncation: ``max_steps`` (default: one more than the longest possible legal game, so only
    illegal moves can reach it).

    Example:
        >>> env = jaxmarl.make("hanabi")
        >>> obs, state = env.reset(jax.random.key(0))
        >>> legal = env.get_avail_actions(state)
        >>> actions = random_actions(env, jax.random.key(1), state)
        >>> obs, state, rewards, dones, infos = env.step(jax.random.key(2), state, actions)
    """

    observations_from_state = True

    def __init__(
        self,
        num_agents: int = 2,
        num_colors: int = 5,
        num_ranks: int = 5,
        hand_size: int | None = None,
        max_info_tokens: int = 8,
        max_life_tokens: int = 3,
        num_cards_of_rank: Any = (3, 2, 2, 2, 1),
        color_map: Any = None,
        agents: Any = None,
        action_spaces: Any = None,
        observation_spaces: Any = None,
        num_moves: Any = None,
        shuffle_player_order: bool = False,
        card_knowledge: str = "v0_belief",
        max_steps: int | None = None,
    ) -> None:
        _check_config(
            num_agents, num_colors, num_ranks, hand_size, max_info_tokens, max_life_tokens
        )
        if action_spaces is not None or observation_spaces is not None or num_moves is not None:
            raise ValueError(
                "Hanabi: action_spaces, observation_spaces and num_moves are derived from the "
                "game (JaxMARL accepts but cannot honour them); leave them None"
            )
        if card_knowledge not in CARD_KNOWLEDGE_MODES:
            raise ValueError(
                f"Hanabi: card_knowledge={card_knowledge!r}; choose one of {CARD_KNOWLEDGE_MODES}"
            )
        super().__init__(num_agents)
        counts = np.asarray(num_cards_of_rank, dtype=np.int64).reshape(-1)
        if counts.shape != (num_ranks,) or (counts < 1).any():
            raise ValueError(
                f"Hanabi: num_cards_of_rank={list(counts)} needs one positive count per rank "
                f"(num_ranks={num_ranks})"
            )
        if color_map is None:
            color_map = DEFAULT_COLOR_MAP[:num_colors]
        if len(color_map) != num_colors:
            raise ValueError(
                f"Hanabi: color_map has {len(color_map)} labels for num_colors={num_colors}"
            )
        if hand_size is None:
            hand_size = 5 if num_agents < 4 else 4
        self.num_colors = num_colors
        self.num_ranks = num_ranks
        self.hand_size = hand_size
        self.max_info_tokens = max_info_tokens
        self.max_life_tokens = max_life_tokens
        self.num_cards_of_rank = counts
        self.color_map = list(color_map)
        self.shuffle_player_order = shuffle_player_order
        self.card_knowledge = card_knowledge
        self.num_card_types = num_colors * num_ranks
        self.deck_size = int(counts.sum()) * num_colors
        if self.deck_size < num_agents * hand_size:
            raise ValueError(
                f"Hanabi: a deck of {self.deck_size} cards cannot deal {num_agents} hands of "
                f"{hand_size}; lower hand_size or raise num_cards_of_rank"
            )
        if agents is not None:
            if len(agents) != num_agents:
                raise ValueError(f"Hanabi: {len(agents)} agent names for num_agents={num_agents}")
            self.agents = list(agents)
        self.agent_range = jnp.arange(num_agents)

        # Action layout (JaxMARL's = HLE's move uids, then the no-op).
        num_hints = num_agents - 1
        self.color_hint_start = 2 * hand_size
        self.rank_hint_start = self.color_hint_start + num_hints * num_colors
        self.noop = self.rank_hint_start + num_hints * num_ranks
        self.num_moves = self.noop + 1
        self.action_encoding = {a: self._move_name(a) for a in range(self.num_moves)}

        # Observation sections (HLE's canonical encoder).
        card_bits = self.num_card_types
        self.hands_n_feats = num_hints * hand_size * card_bits + num_agents
        self.board_n_feats = (
            self.deck_size - num_agents * hand_size + card_bits + max_info_tokens + max_life_tokens
        )
        self.discards_n_feats = self.deck_size
        self.last_action_n_feats = (
            num_agents + 4 + num_agents + num_colors + num_ranks + 2 * hand_size + card_bits + 2
        )
        self.knowledge_n_feats = num_agents * hand_size * (card_bits + num_colors + num_ranks)
        self.v0_belief_n_feats = self.knowledge_n_feats  # JaxMARL's name
        self.obs_size = (
            self.hands_n_feats
            + self.board_n_feats
            + self.discards_n_feats
            + self.last_action_n_feats
            + self.knowledge_n_feats
        )
        self.max_steps = self.longest_game + 1 if max_steps is None else int(max_steps)
        if self.max_steps < 1:
            raise ValueError(f"Hanabi: max_steps={max_steps} must be positive")

        # Static tables.
        ranks_of_deck = np.repeat(np.arange(num_ranks), counts)
        self.full_deck = np.array(
            [c * num_ranks + r for c in range(num_colors) for r in ranks_of_deck], np.int32
        )
        self.copies = np.tile(counts, num_colors).astype(np.float32)  # [C * R]
        # Discard section: the bit at each position is "copy j of card t was discarded".
        self._discard_type = np.repeat(np.arange(card_bits), self.copies.astype(np.int64))
        self._discard_copy = np.concatenate(
            [np.arange(int(n)) for n in self.copies.astype(np.int64)]
        )
        # relative[o, k]: the seat k places after seat o.
        self._relative = (np.arange(num_agents)[:, None] + np.arange(num_agents)) % num_agents

        self.observation_spaces = {
            a: spaces.Box(0.0, 1.0, (self.obs_size,), jnp.float32) for a in self.agents
        }
        self.action_spaces = {a: spaces.Discrete(self.num_moves) for a in self.agents}

    # ------------------------------------------------------------------ properties
    @property
    def name(self) -> str:
        return "Hanabi"

    @property
    def num_actions(self) -> int:
        return self.num_moves

    @property
    def longest_game(self) -> int:
        """Most moves a legal game can take: every card leaves a hand at most once, and every
        hint spends a token (the initial ones, one per discard, one per completed colour)."""
        plays_and_discards = self.deck_size
        hints = self.max_info_tokens + self.deck_size + self.num_colors
        return plays_and_discards + hints

    def _move_name(self, action: int) -> str:
        hand, colors, ranks = self.hand_size, self.num_colors, self.num_ranks
        if action < hand:
            return f"D{action}"
        if action < 2 * hand:
            return f"P{action - hand}"
        if action < self.rank_hint_start:
            offset, color = divmod(action - self.color_hint_start, colors)
            return f"H{self.color_map[color]} to P{offset + 1} relative"
        if action < self.noop:
            offset, rank = divmod(action - self.rank_hint_start, ranks)
            return f"H{rank + 1} to P{offset + 1} relative"
        return "N"

    # ------------------------------------------------------------------ reset
    @jit_method
    def reset(self, key: jax.Array) -> tuple[Observations, HanabiState]:
        """A random deck (and a random seat order with ``shuffle_player_order``)."""
        deck_key, seat_key = jax.random.split(key)
        deck = self._shuffled_deck(deck_key)
        if self.shuffle_player_order:
            seat_order = jax.random.permutation(seat_key, self.num_agents).astype(_I32)
        else:
            seat_order = jnp.arange(self.num_agents, dtype=_I32)
        state = self._first_state(deck, seat_order)
        return self.get_obs(state), state

    def _shuffled_deck(self, key: jax.Array) -> jax.Array:
        """The cards in a uniformly random order (``[D]`` int32).

        Each card gets random bits with its own index in the low bits, and one sort of these
        packed keys orders the deck: a single-operand sort, several times faster under vmap on
        CPU than ``jax.random.permutation``'s key-value sort. Ties in the random high bits
        (32 - 5 = 27 bits for 25 card kinds: probability under 1e-5 per deck) order two
        different cards by kind instead of at random; copies of one card are interchangeable.
        """
        index_bits = max(1, int(np.ceil(np.log2(self.num_card_types))))
        low = jnp.uint32((1 << index_bits) - 1)
        bits = jax.random.bits(key, (self.deck_size,), jnp.uint32)
        packed = (bits & ~low) | jnp.asarray(self.full_deck, jnp.uint32)
        return (jnp.sort(packed) & low).astype(_I32)

    def reset_from_deck(self, deck: Any) -> tuple[Observations, HanabiState]:
        """Start a game from a given deck (seats in agent order), e.g. to replay a game.

        Args:
            deck: the cards in the order they are dealt (hands first, seat 0's first), as
                JaxMARL takes it: one-hot ``[D, C, R]``; or card indices ``[D]`` int
                (``colour * num_ranks + rank``); or ``(colour, rank)`` pairs ``[D, 2]``.

        Raises:
            ValueError: the deck (when concrete) has an entry out of range or not a whole
                number (the message names its position, value and the valid range), or is not
                a permutation of the game's cards. Under ``jit`` a traced deck cannot be
                checked here; validate it first with ``deck_to_cards``.
            TypeError: the deck (when concrete) is not numeric.
        """
        cards = self.deck_to_cards(deck)
        state = self._first_state(cards, jnp.arange(self.num_agents, dtype=_I32))
        return self.get_obs(state), state

    def reset_from_deck_of_pairs(self, deck: Any) -> tuple[Observations, HanabiState]:
        """JaxMARL's name for ``reset_from_deck`` with ``(colour, rank)`` pairs ``[D, 2]``."""
        return self.reset_from_deck(deck)

    def deck_to_cards(self, deck: Any) -> jax.Array:
        """A deck in any of ``reset_from_deck``'s formats as card indices ``[D]`` int32.

        A concrete deck is checked: every entry a whole number in its range (card indices in
        ``[0, C * R)``, colours in ``[0, C)``, ranks in ``[0, R)``, one-hot entries 0 or 1,
        one 1 per card), and the cards a permutation of the game's. A traced deck (under
        ``jit``) cannot be checked.

        Raises:
            TypeError: a concrete deck that is not numeric.
            ValueError: a deck of the wrong shape; a concrete deck with an entry out of range
                or not a whole number (the message names its position and value), or that is
                not a permutation of the game's cards (the message names the wrong counts).
        """
        shape = tuple(np.shape(deck))
        size, colors, ranks = self.deck_size, self.num_colors, self.num_ranks
        if shape not in ((size, colors, ranks), (size, 2), (size,)):
            raise ValueError(
                f"Hanabi.reset_from_deck: deck of shape {shape}; expected one-hot "
                f"({size}, {colors}, {ranks}), card indices ({size},) or (colour, rank) pairs "
                f"({size}, 2)"
            )
        concrete = not isinstance(deck, jax.core.Tracer)
        if concrete:
            self._check_deck_entries(np.asarray(deck))
        deck = jnp.asarray(deck)
        if len(shape) == 3:
            flat = deck.reshape(size, colors * ranks)
            cards = jnp.where(flat.any(axis=1), jnp.argmax(flat, axis=1), NO_CARD)
        elif len(shape) == 2:
            deck = deck.astype(_I32)
            cards = deck[:, 0] * ranks + deck[:, 1]
        else:
            cards = deck
        cards = cards.astype(_I32)
        if concrete:
            self._check_permutation(np.asarray(cards))
        return cards

    def _check_deck_entries(self, deck: np.ndarray) -> None:
        """Every entry of a concrete deck is a whole number in its format's range."""
        if deck.dtype.kind not in "biuf":
            raise TypeError(
                f"Hanabi.reset_from_deck: a deck of dtype {deck.dtype}; pass integers (card "
                "indices, (colour, rank) pairs or a 0/1 one-hot array)"
            )
        if deck.ndim == 3:
            _check_whole_in_range(deck, 2, "one-hot entries")
            ones = deck.reshape(self.deck_size, -1).sum(axis=1)
            if (ones != 1).any():
                i = int(np.argmax(ones != 1))
                raise ValueError(
                    f"Hanabi.reset_from_deck: deck[{i}] holds {int(ones[i])} ones; every "
                    "one-hot card needs exactly one 1"
                )
        elif deck.ndim == 2:
            _check_whole_in_range(deck[:, :1], self.num_colors, "colours")
            _check_whole_in_range(deck[:, 1:], self.num_ranks, "ranks", column=1)
        else:
            formula = f" (colour * {self.num_ranks} + rank)"
            _check_whole_in_range(deck, self.num_card_types, "card indices", formula)

    def _check_permutation(self, cards: np.ndarray) -> None:
        """The cards (all in range) are the game's cards in some order."""
        if np.array_equal(np.sort(cards), np.sort(self.full_deck)):
            return
        have = np.bincount(cards, minlength=self.num_card_types)
        want = np.bincount(self.full_deck, minlength=self.num_card_types)
        wrong = [
            f"{self._card_name(t)}: {have[t]} (needs {want[t]})"
            for t in range(self.num_card_types)
            if have[t] != want[t]
        ]
        raise ValueError(
            "Hanabi.reset_from_deck: the deck is not a permutation of the game's "
            f"{self.deck_size} cards; wrong counts: {', '.join(wrong[:6])}"
            + (" ..." if len(wrong) > 6 else "")
        )

    def _card_name(self, card: int) -> str:
        if card < 0:
            return "XX"
        return f"{self.color_map[card // self.num_ranks]}{card % self.num_ranks + 1}"

    def _first_state(self, deck: jax.Array, seat_order: jax.Array) -> HanabiState:
        n, h, c, r = self.num_agents, self.hand_size, self.num_colors, self.num_ranks
        hands = deck[: n * h].reshape(n, h)
        return HanabiState(
            deck=deck,
            num_dealt=jnp.asarray(n * h, _I32),
            hands=hands,
            color_plausible=jnp.ones((n, h, c), jnp.bool_),
            rank_plausible=jnp.ones((n, h, r), jnp.bool_),
            color_hinted=jnp.zeros((n, h, c), jnp.bool_),
            rank_hinted=jnp.zeros((n, h, r), jnp.bool_),
            fireworks=jnp.zeros((c,), _I32),
            info_tokens=jnp.asarray(self.max_info_tokens, _I32),
            life_tokens=jnp.asarray(self.max_life_tokens, _I32),
            discard_counts=jnp.zeros((self.num_card_types,), _I32),
            discard_pile=jnp.full((self.deck_size,), NO_CARD, _I32),
            cur_player=jnp.asarray(0, _I32),
            seat_order=seat_order,
            turns_to_play=jnp.asarray(n, _I32),
            score=jnp.asarray(0, _I32),
            last_move=jnp.asarray(-1, _I32),
            last_player=jnp.asarray(0, _I32),
            last_card=jnp.asarray(NO_CARD, _I32),
            last_reveal=jnp.zeros((h,), jnp.bool_),
            last_scored=jnp.asarray(False),
            last_token=jnp.asarray(False),
            terminal=jnp.asarray(False),
            done=jnp.asarray(False),
            step=jnp.asarray(0, _I32),
        )

    # ------------------------------------------------------------------ legal moves
    def _seat_legal_moves(self, state: HanabiState) -> jax.Array:
        """``[N, num_moves]`` bool: the legal moves of each seat (the no-op off turn only)."""
        n = self.num_agents
        holding = state.hands >= 0  # [N, H]
        can_discard = state.info_tokens < self.max_info_tokens
        can_hint = state.info_tokens > 0
        held_colors, held_ranks = self._held_colors_and_ranks(state.hands)  # [N, C], [N, R]
        others = jnp.asarray(self._relative[:, 1:])  # [N, N-1]
        color_hints = held_colors[others].reshape(n, -1) & can_hint
        rank_hints = held_ranks[others].reshape(n, -1) & can_hint
        moves = jnp.concatenate(
            [holding & can_discard, holding, color_hints, rank_hints, jnp.zeros((n, 1), bool)],
            axis=1,
        )
        on_turn = (jnp.arange(n) == state.cur_player)[:, None]
        noop = jnp.zeros((self.num_moves,), bool).at[self.noop].set(True)
        return jnp.where(on_turn, moves, noop[None, :])

    def _held_colors_and_ranks(self, hands: jax.Array) -> tuple[jax.Array, jax.Array]:
        holding = (hands >= 0)[..., None]
        colors = (hands // self.num_ranks)[..., None] == jnp.arange(self.num_colors)
        ranks = (hands % self.num_ranks)[..., None] == jnp.arange(self.num_ranks)
        return (colors & holding).any(axis=-2), (ranks & holding).any(axis=-2)

    def _seats_to_agents(self, state: HanabiState, per_seat: jax.Array) -> dict[str, jax.Array]:
        if not self.shuffle_player_order:
            return {a: per_seat[i] for i, a in enumerate(self.agents)}
        seat_of_agent = jnp.argsort(state.seat_order)
        return {a: per_seat[seat_of_agent[i]] for i, a in enumerate(self.agents)}

    @jit_method
    def get_avail_actions(self, state: HanabiState) -> AvailActions:
        """Legal actions per agent, ``[num_moves]`` bool: the mover's legal moves, the no-op
        alone for everyone else."""
        return self._seats_to_agents(state, self._seat_legal_moves(state))

    def get_legal_moves(self, state: HanabiState) -> AvailActions:
        """JaxMARL's name for ``get_avail_actions``."""
        return self.get_avail_actions(state)

    # ------------------------------------------------------------------ step
    @jit_method
    def step_env(self, key: jax.Array, state: HanabiState, actions: Actions):
        """Apply the mover's action (see the class docstring for illegal actions)."""
        del key
        by_agent = jnp.stack([jnp.asarray(actions[a], _I32) for a in self.agents])
        by_seat = by_agent[state.seat_order]
        legal = self._seat_legal_moves(state)
        chosen_legal = (
            jnp.take_along_axis(legal, jnp.clip(by_seat, 0, self.num_moves - 1)[:, None], axis=1)[
                :, 0
            ]
            & (by_seat >= 0)
            & (by_seat < self.num_moves)
        )
        action = by_seat[state.cur_player]
        move_ok = chosen_legal[state.cur_player]

        moved = self._apply_move(state, jnp.clip(action, 0, self.num_moves - 1))
        next_state = jax.tree.map(lambda new, old: jnp.where(move_ok, new, old), moved, state)
        time_up = state.step + 1 >= self.max_steps
        next_state = next_state.replace(step=state.step + 1, done=next_state.terminal | time_up)
        reward = (next_state.score - state.score).astype(jnp.float32)
        rewards = {a: reward for a in self.agents}
        dones = {a: next_state.done for a in self.agents}
        dones["__all__"] = next_state.done
        illegal_by_seat = ~chosen_legal
        seat_of_agent = (
            jnp.argsort(state.seat_order) if self.shuffle_player_order else self.agent_range
        )
        infos = {
            "terminated": next_state.terminal,
            "illegal_action": illegal_by_seat[seat_of_agent],
        }
        return self.get_obs(next_state), next_state, rewards, dones, infos

    def _apply_move(self, state: HanabiState, action: jax.Array) -> HanabiState:
        """The state after the mover makes ``action`` (assumed legal and not the no-op)."""
        is_hint = action >= self.color_hint_start
        after = jax.lax.cond(is_hint, self._apply_hint, self._apply_play_or_discard, state, action)
        # HLE counts down the last round on every move made with the deck already empty.
        deck_was_empty = state.num_dealt >= self.deck_size
        turns_to_play = state.turns_to_play - deck_was_empty.astype(_I32)
        played = after.fireworks.sum()
        out_of_lives = after.life_tokens <= 0
        won = played >= self.num_card_types
        terminal = out_of_lives | won | (turns_to_play <= 0)
        return after.replace(
            turns_to_play=turns_to_play,
            score=jnp.where(out_of_lives, 0, played).astype(_I32),
            terminal=terminal,
            cur_player=(state.cur_player + 1) % self.num_agents,
            last_move=action,
            last_player=state.cur_player,
        )

    def _apply_play_or_discard(self, state: HanabiState, action: jax.Array) -> HanabiState:
        h, r = self.hand_size, self.num_ranks
        seat = state.cur_player
        is_play = action >= h
        slot = jnp.where(is_play, action - h, action)
        card = state.hands[seat, slot]
        color, rank = card // r, card % r
        success = is_play & (state.fireworks[color] == rank)
        fireworks = state.fireworks.at[color].add(success.astype(_I32))
        completes = success & (rank == r - 1) & (state.info_tokens < self.max_info_tokens)
        info_tokens = state.info_tokens + (~is_play | completes).astype(_I32)
        life_tokens = state.life_tokens - (is_play & ~success).astype(_I32)
        to_discard = ~success
        discard_counts = state.discard_counts.at[card].add(to_discard.astype(_I32))
        num_discarded = state.discard_counts.sum()
        discard_pile = state.discard_pile.at[num_discarded].set(
            jnp.where(to_discard, card, state.discard_pile[num_discarded])
        )

        # Remove the slot (later cards move up one) and draw into the last slot.
        has_card = state.num_dealt < self.deck_size
        top_of_deck = state.deck[jnp.minimum(state.num_dealt, self.deck_size - 1)]
        new_card = jnp.where(has_card, top_of_deck, NO_CARD)
        source = jnp.arange(h) + (jnp.arange(h) >= slot)  # index h: the drawn card

        def refill(row: jax.Array, drawn: jax.Array) -> jax.Array:
            return jnp.concatenate([row, drawn[None]], axis=0)[source]

        all_c = jnp.full((self.num_colors,), has_card)
        all_r = jnp.full((self.num_ranks,), has_card)
        no_c = jnp.zeros((self.num_colors,), bool)
        no_r = jnp.zeros((self.num_ranks,), bool)
        return state.replace(
            num_dealt=state.num_dealt + has_card.astype(_I32),
            hands=state.hands.at[seat].set(refill(state.hands[seat], new_card)),
            color_plausible=state.color_plausible.at[seat].set(
                refill(state.color_plausible[seat], all_c)
            ),
            rank_plausible=state.rank_plausible.at[seat].set(
                refill(state.rank_plausible[seat], all_r)
            ),
            color_hinted=state.color_hinted.at[seat].set(refill(state.color_hinted[seat], no_c)),
            rank_hinted=state.rank_hinted.at[seat].set(refill(state.rank_hinted[seat], no_r)),
            fireworks=fireworks,
            info_tokens=info_tokens,
            life_tokens=life_tokens,
            discard_counts=discard_counts,
            discard_pile=discard_pile,
            last_card=card,
            last_reveal=jnp.zeros((h,), bool),
            last_scored=success,
            last_token=completes,
        )

    def _apply_hint(self, state: HanabiState, action: jax.Array) -> HanabiState:
        c, r = self.num_colors, self.num_ranks
        is_color = action < self.rank_hint_start
        color_offset, color = jnp.divmod(action - self.color_hint_start, c)
        rank_offset, rank = jnp.divmod(action - self.rank_hint_start, r)
        offset = jnp.where(is_color, color_offset, rank_offset) + 1
        target = (state.cur_player + offset) % self.num_agents
        hand = state.hands[target]
        holding = hand >= 0
        hinted_color = (jnp.arange(c) == color) & is_color  # [C]
        hinted_rank = (jnp.arange(r) == rank) & ~is_color  # [R]
        touched = holding & jnp.where(is_color, hand // r == color, hand % r == rank)  # [H]
        # A touched card is of the hinted colour (rank); the others are not.
        color_plausible = state.color_plausible[target]
        color_plausible = jnp.where(
            is_color,
            jnp.where(touched[:, None], hinted_color, color_plausible & ~hinted_color),
            color_plausible,
        )
        rank_plausible = state.rank_plausible[target]
        rank_plausible = jnp.where(
            ~is_color,
            jnp.where(touched[:, None], hinted_rank, rank_plausible & ~hinted_rank),
            rank_plausible,
        )
        color_hinted = state.color_hinted[target]
        color_hinted = jnp.where(is_color & touched[:, None], hinted_color, color_hinted)
        rank_hinted = state.rank_hinted[target]
        rank_hinted = jnp.where(~is_color & touched[:, None], hinted_rank, rank_hinted)
        return state.replace(
            color_plausible=state.color_plausible.at[target].set(color_plausible),
            rank_plausible=state.rank_plausible.at[target].set(rank_plausible),
            color_hinted=state.color_hinted.at[target].set(color_hinted),
            rank_hinted=state.rank_hinted.at[target].set(rank_hinted),
            info_tokens=state.info_tokens - 1,
            last_card=jnp.asarray(NO_CARD, _I32),
            last_reveal=touched,
            last_scored=jnp.asarray(False),
            last_token=jnp.asarray(False),
        )

    # ------------------------------------------------------------------ observations
    @jit_method
    def get_obs(self, state: HanabiState) -> Observations:
        return self._seats_to_agents(state, self.seat_observations(state))

    def seat_observations(self, state: HanabiState) -> jax.Array:
        """``[N, obs_size]`` float32: each seat's canonical observation (seat order)."""
        n = self.num_agents
        cards = _one_hot_cards(state.hands, self.num_card_types).reshape(n, -1)  # [N, H * 25]
        short = (state.hands[:, -1] < 0).astype(jnp.float32)  # [N]
        board = self._board_feats(state)
        discards = (
            state.discard_counts[self._discard_type] > jnp.asarray(self._discard_copy)
        ).astype(jnp.float32)
        last = self._last_action_feats(state)  # [N, len]
        knowledge = self._knowledge_feats(state)  # [N, H * 35]

        def observe(seat: int) -> jax.Array:
            # Rows in the order seen from ``seat``: static slices (a gather by a relative-seat
            # table costs far more under vmap on CPU).
            order = [int(p) for p in self._relative[seat]]
            return jnp.concatenate(
                [cards[p] for p in order[1:]]
                + [short[np.array(order)], board, discards, last[seat]]
                + [knowledge[p] for p in order]
            )

        return jnp.stack([observe(seat) for seat in range(n)])

    def _board_feats(self, state: HanabiState) -> jax.Array:
        n, h, r = self.num_agents, self.hand_size, self.num_ranks
        deck_left = self.deck_size - state.num_dealt
        deck = jnp.arange(self.deck_size - n * h) < deck_left
        top = (state.fireworks[:, None] - 1) == jnp.arange(r)  # [C, R], none when 0
        info = jnp.arange(self.max_info_tokens) < state.info_tokens
        lives = jnp.arange(self.max_life_tokens) < state.life_tokens
        return jnp.concatenate([deck, top.reshape(-1), info, lives]).astype(jnp.float32)

    def _last_action_feats(self, state: HanabiState) -> jax.Array:
        """``[N, last_action_n_feats]``: the last move as each seat sees it."""
        n, h, c, r = self.num_agents, self.hand_size, self.num_colors, self.num_ranks
        move = state.last_move
        any_move = move >= 0
        is_discard = any_move & (move < h)
        is_play = (move >= h) & (move < 2 * h)
        is_color = (move >= self.color_hint_start) & (move < self.rank_hint_start)
        is_rank = (move >= self.rank_hint_start) & (move < self.noop)
        is_hint = is_color | is_rank
        color_offset, color = jnp.divmod(move - self.color_hint_start, c)
        rank_offset, rank = jnp.divmod(move - self.rank_hint_start, r)
        offset = jnp.where(is_color, color_offset, rank_offset) + 1
        target = (state.last_player + offset) % n
        seats = jnp.arange(n)
        # Seat of the mover / target relative to each observer o: (x - o) mod N.
        mover_rel = (state.last_player - seats) % n
        target_rel = (target - seats) % n
        slot = jnp.where(is_play, move - h, move)
        shared = jnp.concatenate(
            [
                jnp.stack([is_play, is_discard, is_color, is_rank]),
                # target (relative) goes here per observer
                (jnp.arange(c) == color) & is_color,
                (jnp.arange(r) == rank) & is_rank,
                state.last_reveal & is_hint,
                (jnp.arange(h) == slot) & (is_play | is_discard),
                (jnp.arange(self.num_card_types) == state.last_card) & (is_play | is_discard),
                jnp.stack([state.last_scored & is_play, state.last_token & is_play]),
            ]
        )
        mover = (mover_rel[:, None] == seats) & any_move
        target_bits = (target_rel[:, None] == seats) & is_hint
        move_type = jnp.broadcast_to(shared[:4], (n, 4))
        rest = jnp.broadcast_to(shared[4:], (n, shared.shape[0] - 4))
        return jnp.concatenate([mover, move_type, target_bits, rest], axis=1).astype(jnp.float32)

    def _knowledge_feats(self, state: HanabiState) -> jax.Array:
        """``[N, H * (25 + C + R)]`` per seat: card knowledge of that seat's hand."""
        n = self.num_agents
        plausible = state.color_plausible[..., :, None] & state.rank_plausible[..., None, :]
        plausible = plausible.reshape(n, self.hand_size, -1).astype(jnp.float32)  # [N, H, 25]
        if self.card_knowledge == "v0_belief":
            played = (jnp.arange(self.num_ranks) < state.fireworks[:, None]).reshape(-1)
            unseen = jnp.asarray(self.copies) - state.discard_counts - played  # [25]
            weights = plausible * unseen
            total = weights.sum(axis=-1, keepdims=True)
            plausible = weights / jnp.where(total > 0, total, 1.0)
        return jnp.concatenate(
            [plausible, state.color_hinted, state.rank_hinted], axis=-1, dtype=jnp.float32
        ).reshape(n, -1)

    @jit_method
    def get_world_state(self, state: HanabiState) -> jax.Array:
        """Centralised-critic input, every hand visible: per agent, its observation followed by
        its own hand (25 card bits per slot), all agents concatenated;
        ``[num_agents * (obs_size + H * 25)]`` float32 (what JaxMARL's
        ``HanabiWorldStateWrapper`` documents; its code returns the observations alone)."""
        obs = self.seat_observations(state)
        own = _one_hot_cards(state.hands, self.num_card_types).reshape(self.num_agents, -1)
        per_agent = self._seats_to_agents(state, jnp.concatenate([obs, own], axis=1))
        return jnp.concatenate([per_agent[a] for a in self.agents])

    # ------------------------------------------------------------------ text
    def render_text(self, state: HanabiState, agent: str | None = None) -> str:
        """What HLE prints for the observation of ``agent`` (``str(state.observation(p))``),
        or for the whole game when ``agent`` is None (every hand shown)."""
        s = jax.tree.map(np.asarray, state)
        n = self.num_agents
        if agent is None:
            seat, hidden = 0, False
        else:
            agent_index = self.agents.index(agent)
            seat, hidden = int(np.argsort(s.seat_order)[agent_index]), True
        lines = [f"Life tokens: {int(s.life_tokens)}", f"Info tokens: {int(s.info_tokens)}"]
        lines.append(
            "Fireworks: "
            + "".join(f"{self.color_map[i]}{int(f)} " for i, f in enumerate(s.fireworks))
        )
        lines.append("Hands:")
        for k in range(n):
            p = (seat + k) % n
            if k > 0:
                lines.append("-----")
            if p == int(s.cur_player):
                lines.append("Cur player")
            for slot in range(self.hand_size):
                card = int(s.hands[p, slot])
                if card < 0:
                    continue
                shown = "XX" if (hidden and k == 0) else self._card_name(card)
                lines.append(f"{shown} || {self._knowledge_text(s, p, slot)}")
        lines.append(f"Deck size: {self.deck_size - int(s.num_dealt)}")
        pile = [self._card_name(int(card)) for card in s.discard_pile if card >= 0]
        lines.append("Discards:" + "".join(f" {card}" for card in pile))
        return "\n".join(lines)

    def _knowledge_text(self, s: HanabiState, seat: int, slot: int) -> str:
        colors = s.color_hinted[seat, slot]
        ranks = s.rank_hinted[seat, slot]
        color = self.color_map[int(np.argmax(colors))] if colors.any() else "X"
        rank = str(int(np.argmax(ranks)) + 1) if ranks.any() else "X"
        plausible_colors = "".join(
            self.color_map[i] for i in range(self.num_colors) if s.color_plausible[seat, slot, i]
        )
        plausible_ranks = "".join(
            str(i + 1) for i in range(self.num_ranks) if s.rank_plausible[seat, slot, i]
        )
        return f"{color}{rank}|{plausible_colors}{plausible_ranks}"

    def render(self, state: HanabiState) -> None:
        """Print the whole game (JaxMARL's ``render``); ``render_text`` returns the text."""
        print(self.render_text(state))


def _check_whole_in_range(
    values: np.ndarray, high: int, what: str, note: str = "", column: int | None = None
) -> None:
    """Raise a ``ValueError`` naming the first entry of ``values`` (part of a deck) that is
    not a whole number in ``[0, high)``; ``column`` (of a ``[D, 2]`` deck) fixes its position."""
    numbers = values.astype(np.float64)
    whole = np.isfinite(numbers) & (numbers == np.round(numbers))
    bad = ~whole | (numbers < 0) | (numbers >= high)
    if not bad.any():
        return
    first = tuple(int(i) for i in np.argwhere(bad)[0])
    value = values[first].item()
    problem = "is out of range" if whole[first] else "is not a whole number"
    index = first if column is None else first[:-1] + (column,)
    raise ValueError(
        f"Hanabi.reset_from_deck: deck[{', '.join(map(str, index))}] = {value!r} {problem}; "
        f"{what} must be integers in [0, {high}){note} (bad entries: {int(bad.sum())})"
    )


def _one_hot_cards(cards: jax.Array, num_card_types: int) -> jax.Array:
    """One-hot ``[..., num_card_types]`` float32 of card indices; ``NO_CARD`` gives zeros."""
    return (cards[..., None] == jnp.arange(num_card_types)).astype(jnp.float32)


def _check_config(
    num_agents: Any,
    num_colors: Any,
    num_ranks: Any,
    hand_size: Any,
    max_info_tokens: Any,
    max_life_tokens: Any,
) -> None:
    if not isinstance(num_agents, (int, np.integer)) or not 2 <= num_agents <= 5:
        raise ValueError(
            f"Hanabi: num_agents={num_agents!r}; Hanabi is for 2 to 5 players "
            "(pass num_agents=2, 3, 4 or 5)"
        )
    for name, value, low, high in (
        ("num_colors", num_colors, 1, 5),
        ("num_ranks", num_ranks, 1, 5),
        ("max_info_tokens", max_info_tokens, 1, 8),
        ("max_life_tokens", max_life_tokens, 1, 3),
    ):
        if not isinstance(value, (int, np.integer)) or not low <= value <= high:
            raise ValueError(
                f"Hanabi: {name}={value!r} must be an integer in [{low}, {high}] (HLE's limits)"
            )
    if hand_size is not None and (
        not isinstance(hand_size, (int, np.integer)) or not 1 <= hand_size <= 5
    ):
        raise ValueError(f"Hanabi: hand_size={hand_size!r} must be an integer in [1, 5]")


# JaxMARL 0.2.0 exports this class as ``Hanabi`` (jaxmarl.environments.Hanabi).
Hanabi = HanabiEnv
