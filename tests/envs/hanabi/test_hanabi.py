"""Hanabi's rules, one by one, on decks arranged by hand, plus its bad-input errors.

Cards are ``colour * 5 + rank`` (colour R Y G W B = 0..4, rank 1..5 = 0..4). One jitted
``step_env`` per player count is shared by the tests.
"""

from __future__ import annotations

import functools
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxmarl
from jaxmarl.env import random_actions

R, Y, G, W, B = range(5)
FULL_DECK = np.array([c * 5 + r for c in range(5) for r in (0, 0, 0, 1, 1, 2, 2, 3, 3, 4)])


def card(color, rank):
    """The card of ``color`` and rank ``rank`` (1-5)."""
    return color * 5 + rank - 1


def deck_starting(*cards):
    """A full deck whose first cards are ``cards`` (in deal order), the rest in any order."""
    rest = list(FULL_DECK)
    for c in cards:
        rest.remove(c)
    return np.array(list(cards) + rest, np.int32)


def firework_order_deck():
    """A deck on which two players playing their first card every turn score 25 (see
    ``test_perfect_score_ends_the_game``)."""
    order = [card(c, r) for c in (R, Y, G, W, B) for r in range(1, 6)]
    return deck_starting(*order)


@functools.cache
def make(num_agents=2, **kwargs):
    return jaxmarl.make("hanabi", num_agents=num_agents, **kwargs)


@functools.cache
def stepper(num_agents=2, **kwargs):
    return jax.jit(make(num_agents, **kwargs).step_env)


def move(env, state, action, **kwargs):
    """The player to move makes ``action``; everyone else passes."""
    actions = {
        a: jnp.int32(action if i == int(state.cur_player) else env.noop)
        for i, a in enumerate(env.agents)
    }
    return stepper(env.num_agents, **kwargs)(jax.random.key(0), state, actions)


def test_sizes_and_action_layout_match_jaxmarl():
    for n, obs_size, num_moves in ((2, 658, 21), (3, 956, 31), (4, 1041, 39), (5, 1280, 49)):
        env = make(n)
        assert env.observation_space("agent_0").shape == (obs_size,)
        assert env.action_space("agent_0").n == num_moves == env.num_actions
        assert env.hand_size == (5 if n < 4 else 4)
    env = make(2)
    assert [env.action_encoding[a] for a in (0, 4, 5, 9, 10, 14, 15, 19, 20)] == [
        "D0", "D4", "P0", "P4", "HR to P1 relative", "HB to P1 relative",
        "H1 to P1 relative", "H5 to P1 relative", "N",
    ]  # fmt: skip
    env3 = make(3)
    assert env3.action_encoding[15] == "HR to P2 relative"
    assert env3.action_encoding[25] == "H1 to P2 relative"


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(num_agents=1), "2 to 5 players"),
        (dict(num_agents=6), "2 to 5 players"),
        (dict(card_knowledge="beliefs"), "card_knowledge"),
        (dict(num_moves=30), "leave them None"),
        (dict(num_cards_of_rank=(3, 2, 2)), "one positive count per rank"),
        (dict(agents=["a"]), "agent names"),
    ],
)
def test_bad_configuration_is_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        jaxmarl.make("hanabi", **kwargs)


def test_bad_decks_are_refused_and_deck_formats_agree():
    env = make(2)
    deck = firework_order_deck()
    duplicated = deck.copy()
    duplicated[-1] = duplicated[0]
    with pytest.raises(ValueError, match="not a permutation.*R1: 4 \\(needs 3\\)"):
        env.reset_from_deck(duplicated)
    with pytest.raises(ValueError, match="deck of shape"):
        env.reset_from_deck(deck[:40])
    with pytest.raises(ValueError, match="colours must be integers in \\[0, 5\\)"):
        env.reset_from_deck(np.stack([deck // 5 + 5, deck % 5], axis=1))
    one_hot = np.eye(25, dtype=np.float32)[deck].reshape(50, 5, 5)
    two_ones = one_hot.copy()
    two_ones[0, 4, 4] = 1
    with pytest.raises(ValueError, match="exactly one 1"):
        env.reset_from_deck(two_ones)
    by_index = env.reset_from_deck(deck)
    for other in (one_hot, np.stack([deck // 5, deck % 5], axis=1)):
        jax.tree.map(np.testing.assert_array_equal, env.reset_from_deck(other), by_index)
    jax.tree.map(
        np.testing.assert_array_equal,
        env.reset_from_deck_of_pairs(np.stack([deck // 5, deck % 5], axis=1)),
        by_index,
    )


def with_entry(deck, index, value):
    """A copy of ``deck`` with ``deck[index] = value`` (float only when ``value`` is)."""
    changed = np.array(deck, dtype=np.result_type(deck, value))
    changed[index] = value
    return changed


PAIRS = np.stack([FULL_DECK // 5, FULL_DECK % 5], axis=1)
ONE_HOT = np.eye(25, dtype=np.int32)[FULL_DECK].reshape(50, 5, 5)
INDICES = "card indices must be integers in [0, 25) (colour * 5 + rank)"
COLOURS, RANKS = "colours must be integers in [0, 5)", "ranks must be integers in [0, 5)"
ONE_HOT_BITS = "one-hot entries must be integers in [0, 2)"


@pytest.mark.parametrize(
    ("deck", "message"),
    [
        (with_entry(FULL_DECK, 0, -1), f"deck[0] = -1 is out of range; {INDICES}"),
        (with_entry(FULL_DECK, 3, 25), f"deck[3] = 25 is out of range; {INDICES}"),
        (with_entry(FULL_DECK, 7, 0.3), f"deck[7] = 0.3 is not a whole number; {INDICES}"),
        (with_entry(FULL_DECK, 7, np.nan), f"deck[7] = nan is not a whole number; {INDICES}"),
        (FULL_DECK + 0.3, f"deck[0] = 0.3 is not a whole number; {INDICES} (bad entries: 50)"),
        (with_entry(PAIRS, (4, 0), -1), f"deck[4, 0] = -1 is out of range; {COLOURS}"),
        (with_entry(PAIRS, (4, 1), 5), f"deck[4, 1] = 5 is out of range; {RANKS}"),
        (with_entry(PAIRS, (9, 1), 1.5), f"deck[9, 1] = 1.5 is not a whole number; {RANKS}"),
        (PAIRS + 0.3, f"deck[0, 0] = 0.3 is not a whole number; {COLOURS}"),
        (with_entry(ONE_HOT, (2, 0, 0), 0.5), "deck[2, 0, 0] = 0.5 is not a whole number"),
        (with_entry(ONE_HOT, (2, 0, 0), 2), f"deck[2, 0, 0] = 2 is out of range; {ONE_HOT_BITS}"),
        (with_entry(ONE_HOT, (2, 0, 0), 0), "deck[2] holds 0 ones; every one-hot card needs"),
    ],
)
def test_deck_entries_out_of_range_or_fractional_are_named(deck, message):
    """Each bad entry is refused with its position, its value and the valid range, through
    both of JaxMARL's names."""
    env = make(2)
    for reset in (env.reset_from_deck, env.reset_from_deck_of_pairs):
        with pytest.raises(ValueError, match=re.escape(message)):
            reset(deck)


def test_non_numeric_deck_is_a_type_error():
    with pytest.raises(TypeError, match="dtype <U.*; pass integers"):
        make(2).reset_from_deck(FULL_DECK.astype(str))


def test_successful_play_and_misplay():
    env = make(2)
    # Seat 0 holds R1 R3 ..., seat 1 holds Y1 ...
    _, state = env.reset_from_deck(deck_starting(card(R, 1), card(R, 3), *range(10, 13),
                                                 card(Y, 1)))  # fmt: skip
    _, state, rewards, _, infos = move(env, state, 5)  # P0 plays R1
    assert int(state.fireworks[R]) == 1 and float(rewards["agent_0"]) == 1.0
    assert int(state.score) == 1 and int(state.life_tokens) == 3
    assert bool(state.last_scored) and not infos["illegal_action"].any()
    _, state, rewards, _, _ = move(env, state, 6)  # P1 plays its 2nd card (a misplay)
    assert int(state.life_tokens) == 2 and float(rewards["agent_1"]) == 0.0
    assert int(state.discard_counts.sum()) == 1 and int(state.discard_pile[0]) >= 0
    _, state, *_ = move(env, state, 5)  # P0 plays R3 on R1: a misplay
    assert int(state.life_tokens) == 1 and int(state.fireworks[R]) == 1
    assert int(state.discard_pile[1]) == card(R, 3)


def test_token_arithmetic():
    env = make(2)
    _, state = env.reset_from_deck(firework_order_deck())
    legal = env.get_avail_actions(state)
    assert not legal["agent_0"][:5].any(), "no discard with all 8 tokens"
    _, state, *_ = move(env, state, 10)  # P0 hints red to P1: P1 holds no red
    assert int(state.info_tokens) == 8, "an impossible hint is illegal and changes nothing"
    _, state, *_ = move(env, state, 11)  # P0 hints yellow (P1 holds Y1-Y5)
    assert int(state.info_tokens) == 7
    assert bool(state.last_reveal.all()) and bool(state.color_hinted[1, :, Y].all())
    _, state, *_ = move(env, state, 0)  # P1 discards Y1
    assert int(state.info_tokens) == 8
    # Playing a 5 returns a token only when one is missing.
    full = state.replace(
        fireworks=state.fireworks.at[Y].set(4), hands=state.hands.at[0, 0].set(card(Y, 5))
    )
    _, after, *_ = move(env, full, 5)
    assert int(after.info_tokens) == 8 and not bool(after.last_token)
    _, after, *_ = move(env, full.replace(info_tokens=jnp.int32(3)), 5)
    assert int(after.info_tokens) == 4 and bool(after.last_token)
    # No hint without a token.
    empty = full.replace(info_tokens=jnp.int32(0))
    assert not env.get_avail_actions(empty)["agent_0"][10:20].any()


def test_noop_is_legal_only_off_turn_and_illegal_actions_change_nothing():
    env = make(3)
    _, state = env.reset_from_deck(np.random.default_rng(0).permutation(FULL_DECK))
    legal = env.get_legal_moves(state)
    jax.tree.map(np.testing.assert_array_equal, legal, env.get_avail_actions(state))
    assert not legal["agent_0"][env.noop] and legal["agent_0"][:10].any()
    for agent in ("agent_1", "agent_2"):
        assert legal[agent][env.noop] and legal[agent].sum() == 1
    # The mover passing, or an off-turn agent playing: flagged, nothing else happens.
    actions = {"agent_0": jnp.int32(env.noop), "agent_1": jnp.int32(5), "agent_2": jnp.int32(-3)}
    _, after, rewards, dones, infos = stepper(3)(jax.random.key(0), state, actions)
    np.testing.assert_array_equal(infos["illegal_action"], [True, True, True])
    kept = jax.tree.map(np.testing.assert_array_equal, after.replace(step=state.step), state)
    assert kept is not None and int(after.step) == 1 and not bool(dones["__all__"])
    assert float(rewards["agent_0"]) == 0.0
    # A legal move with the others passing raises no flag and passes the turn.
    _, after, _, _, infos = move(env, state, 5)
    assert not infos["illegal_action"].any() and int(after.cur_player) == 1


def test_last_round_after_the_deck_runs_out():
    env = make(2)
    _, state = env.reset_from_deck(np.random.default_rng(1).permutation(FULL_DECK))
    moves_after_last_draw = None
    for _ in range(200):
        legal = np.asarray(env.get_avail_actions(state)[env.agents[int(state.cur_player)]])
        action = 0 if legal[0] else int(np.flatnonzero(legal[10:20])[0]) + 10
        _, state, _, dones, _ = move(env, state, action)
        if moves_after_last_draw is not None:
            moves_after_last_draw += 1
        elif int(state.num_dealt) == 50:
            moves_after_last_draw = 0
            assert not bool(dones["__all__"])
        if bool(dones["__all__"]):
            break
    # Every player has one more turn after the last card is drawn.
    assert moves_after_last_draw == 2 and bool(state.terminal)
    assert int(state.life_tokens) == 3
    assert (np.asarray(state.hands)[:, -1] < 0).sum() >= 1  # hands shrink in the last round
    obs = env.get_obs(state)["agent_0"]
    assert obs[env.hands_n_feats - 2 : env.hands_n_feats].sum() >= 1  # the short-hand bits


def test_perfect_score_ends_the_game():
    # Seat 0 holds R1-R5 and seat 1 Y1-Y5; the draws then alternate G1 G2 ... B5, so each
    # playing its first card every turn plays every firework in order.
    env = make(2)
    obs, state = env.reset_from_deck(firework_order_deck())
    total = 0.0
    for _ in range(25):
        assert not bool(state.terminal)
        _, state, rewards, dones, infos = move(env, state, 5)
        total += float(rewards["agent_0"])
        assert not infos["illegal_action"].any()
    assert bool(dones["__all__"]) and bool(infos["terminated"])
    assert int(state.score) == 25 and total == 25.0 and int(state.num_dealt) < 50


def test_single_life_termination():
    # JaxMARL #179: with one life the first misplay ends the game and the score drops to 0.
    env = make(2, max_life_tokens=1)
    _, state = env.reset_from_deck(deck_starting(card(R, 1), card(R, 5)))
    _, state, rewards, dones, _ = move(env, state, 5, max_life_tokens=1)  # R1
    assert float(rewards["agent_0"]) == 1.0 and not bool(dones["__all__"])
    _, state, *_ = move(env, state, 15, max_life_tokens=1)  # P1 hints rank 1
    _, state, rewards, dones, infos = move(env, state, 5, max_life_tokens=1)  # R5: misplay
    assert bool(dones["__all__"]) and bool(infos["terminated"])
    assert int(state.life_tokens) == 0 and int(state.score) == 0
    assert float(rewards["agent_0"]) == -1.0  # the return is the final score, 0


def test_jit_vmap_rollouts_with_auto_reset():
    # 5 players here; the parity replays run 2-5 players under jit and vmap too, and the
    # contract suite runs the default id.
    env = make(5)

    def rollout(key):
        _, state = env.reset(key)

        def body(state, key):
            action_key, step_key = jax.random.split(key)
            actions = random_actions(env, action_key, state)
            obs, state, rewards, dones, infos = env.step(step_key, state, actions)
            return state, (obs["agent_0"], dones["__all__"], infos["illegal_action"], rewards)

        return jax.lax.scan(body, state, jax.random.split(key, 60))[1]

    obs, dones, illegal, rewards = jax.jit(jax.vmap(rollout))(
        jax.random.split(jax.random.key(0), 4)
    )
    assert obs.shape == (4, 60, env.obs_size) and obs.dtype == jnp.float32
    assert dones.any() and not illegal.any()
    assert float(obs.min()) >= 0.0 and float(obs.max()) <= 1.0
    for agent in env.agents[1:]:
        np.testing.assert_array_equal(rewards[agent], rewards["agent_0"])


def test_world_state_shows_every_hand_and_shuffled_seats_map_agents():
    env = make(2)
    obs, state = env.reset_from_deck(firework_order_deck())
    world = np.asarray(env.get_world_state(state))
    assert world.shape == (2 * (658 + 125),)
    own_hand = world[658 : 658 + 125].reshape(5, 25)  # agent_0's own cards: R1-R5
    np.testing.assert_array_equal(own_hand.argmax(axis=1), [0, 1, 2, 3, 4])
    np.testing.assert_array_equal(world[:658], obs["agent_0"])
    shuffled = make(3, shuffle_player_order=True)
    seen = set()
    for seed in range(6):
        _, state = shuffled.reset(jax.random.key(seed))
        first = int(state.seat_order[0])
        legal = shuffled.get_avail_actions(state)
        assert not legal[f"agent_{first}"][shuffled.noop]
        seen.add(first)
    assert len(seen) > 1
