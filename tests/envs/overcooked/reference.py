"""overcooked-ai (PyPI ``overcooked`` 0.2.1) as the reference for the v1 parity tests.

``reference_episode`` starts overcooked-ai's game (old dynamics: cooking starts by itself)
from one of our states, plays a policy on overcooked-ai's state and records, at every step,
the joint action, the state in our encoding, the rewards and the lossless observation.
``scripted_cook`` is a greedy two-agent cook (fetch onions, fill pots, plate, serve) that
takes a uniformly random action with probability ``eps``: uniform random play almost never
serves a soup.
"""

from __future__ import annotations

import collections

import numpy as np

overcooked = __import__("pytest").importorskip("overcooked")
from overcooked.mdp.actions import Action, Direction  # noqa: E402
from overcooked.mdp.overcooked_mdp import (  # noqa: E402
    ObjectState,
    OvercookedGridworld,
    PlayerState,
    SoupState,
)

from jaxmarl.envs.overcooked.layouts import POT  # noqa: E402
from jaxmarl.envs.overcooked.overcooked import DISH, EMPTY, ONION, SOUP  # noqa: E402

_NAME_TO_ITEM = {"onion": ONION, "dish": DISH, "soup": SOUP}
_ITEM_TO_NAME = {v: k for k, v in _NAME_TO_ITEM.items()}


def make_mdp(env):
    """overcooked-ai's gridworld for our env's layout, old dynamics, onion soups only."""
    rows = env.layout.to_text().split("\n")
    return OvercookedGridworld.from_grid(
        rows,
        params_to_overwrite={
            "old_dynamics": True,
            "start_all_orders": [{"ingredients": ["onion", "onion", "onion"]}],
        },
    )


def _object(item, pos):
    if item == SOUP:
        return SoupState.get_soup(pos, num_onions=3, finished=True)
    return ObjectState(_ITEM_TO_NAME[item], pos)


def to_reference(env, mdp, state):
    """overcooked-ai's ``OvercookedState`` equal to one of our (host, unbatched) states."""
    ref = mdp.get_standard_start_state()
    players = []
    for i in range(2):
        pos = tuple(int(v) for v in state.agent_pos[i])
        held = int(state.agent_inv[i])
        direction = Direction.INDEX_TO_DIRECTION[int(state.agent_dir_idx[i])]
        players.append(PlayerState(pos, direction, None if held == EMPTY else _object(held, pos)))
    ref.players = tuple(players)
    objects = {}
    for y, x in zip(*np.nonzero(np.asarray(state.counter_items))):
        objects[(int(x), int(y))] = _object(int(state.counter_items[y, x]), (int(x), int(y)))
    for (x, y), onions, tick in zip(env.layout.cells(POT), state.pot_onions, state.pot_tick):
        if onions > 0:
            pos = (int(x), int(y))
            objects[pos] = SoupState.get_soup(pos, num_onions=int(onions), cooking_tick=int(tick))
    ref.objects = objects
    ref.timestep = int(state.step)
    return ref


def from_reference(env, ref):
    """overcooked-ai's state in our encoding (a dict of NumPy arrays)."""
    counter = np.zeros((env.height, env.width), np.int32)
    pot_cells = [tuple(int(v) for v in cell) for cell in env.layout.cells(POT)]
    onions = np.zeros(len(pot_cells), np.int32)
    ticks = np.full(len(pot_cells), -1, np.int32)
    for pos, obj in ref.objects.items():
        if pos in pot_cells:
            k = pot_cells.index(pos)
            onions[k] = len(obj.ingredients)
            ticks[k] = obj._cooking_tick
        else:
            counter[pos[1], pos[0]] = _NAME_TO_ITEM[obj.name]
    return {
        "agent_pos": np.array([p.position for p in ref.players], np.int32),
        "agent_dir_idx": np.array(
            [Direction.DIRECTION_TO_INDEX[p.orientation] for p in ref.players], np.int32
        ),
        "agent_inv": np.array(
            [_NAME_TO_ITEM[p.held_object.name] if p.held_object else EMPTY for p in ref.players],
            np.int32,
        ),
        "counter_items": counter,
        "pot_onions": onions,
        "pot_tick": ticks,
        "step": np.int32(ref.timestep),
    }


def reference_episode(env, mdp, start_state, policy, steps, rng):
    """Play ``steps`` joint actions in overcooked-ai from our ``start_state``; record all."""
    ref = to_reference(env, mdp, start_state)
    record = collections.defaultdict(list)
    for _ in range(steps):
        joint = policy(mdp, ref, rng)
        ref, info = mdp.get_state_transition(ref, [Action.INDEX_TO_ACTION[a] for a in joint])
        record["actions"].append(joint)
        for key, value in from_reference(env, ref).items():
            record[key].append(value)
        record["sparse"].append(sum(info["sparse_reward_by_agent"]))
        record["shaped"].append(info["shaped_reward_by_agent"])
        encoded = mdp.lossless_state_encoding(ref, horizon=env.max_steps)
        record["obs"].append(np.stack([np.transpose(o, (1, 0, 2)) for o in encoded]))
    return {key: np.asarray(value) for key, value in record.items()}


def uniform_random(mdp, ref, rng):
    return [int(a) for a in rng.integers(0, 6, 2)]


def scripted_cook(eps):
    """A greedy cook for both agents that acts uniformly at random with probability ``eps``."""

    def policy(mdp, ref, rng):
        return [
            int(rng.integers(0, 6)) if rng.random() < eps else _cook_action(mdp, ref, i)
            for i in range(2)
        ]

    return policy


def _cook_action(mdp, ref, i):
    player, other = ref.players[i], ref.players[1 - i]
    pots = mdp.get_pot_states(ref)
    held = player.held_object.name if player.held_object else None
    mine, theirs = _reach(mdp, player.position), _reach(mdp, other.position)
    counters = mdp.get_counter_objects_dict(ref)
    if held is None:
        plating = other.held_object is not None and other.held_object.name == "dish"
        want = "dish" if pots["ready"] or (pots["cooking"] and not plating) else "onion"
        piles = (
            mdp.get_dish_dispenser_locations()
            if want == "dish"
            else (mdp.get_onion_dispenser_locations())
        )
        # Piles first; items a partner left on a counter when the piles are out of reach.
        targets = (piles if _reachable(piles, mine) else counters[want]) + counters["soup"]
    elif held == "onion":
        targets = pots["empty"] + pots["1_items"] + pots["2_items"]
    elif held == "dish":
        targets = pots["ready"] or pots["cooking"]
    else:
        targets = mdp.get_serving_locations()
    if not _reachable(targets, mine):
        # Hand over: an empty counter both agents can reach (or any empty one).
        empty = mdp.get_empty_counter_locations(ref)
        shared = [c for c in empty if _reachable([c], mine) and _reachable([c], theirs)]
        targets = shared if held is not None and shared else empty
    return _toward(mdp, player, set(targets))


def _neighbours(cell):
    return [(cell[0] + d[0], cell[1] + d[1]) for d in Direction.ALL_DIRECTIONS]


def _reach(mdp, start):
    """Floor cells reachable from ``start``."""
    floor = set(mdp.get_valid_player_positions())
    seen, queue = {start}, collections.deque([start])
    while queue:
        for nxt in _neighbours(queue.popleft()):
            if nxt in floor and nxt not in seen:
                seen.add(nxt)
                queue.append(nxt)
    return seen


def _reachable(targets, region):
    return any(n in region for t in targets for n in _neighbours(t))


def _toward(mdp, player, targets):
    """Interact if facing a target, turn to an adjacent target, else step along a BFS path."""
    pos = player.position
    directions = Direction.ALL_DIRECTIONS
    for k, d in enumerate(directions):
        if (pos[0] + d[0], pos[1] + d[1]) in targets:
            return 5 if player.orientation == d else k
    floor = set(mdp.get_valid_player_positions())
    first = {pos: None}
    queue = collections.deque([pos])
    while queue:
        cell = queue.popleft()
        for k, d in enumerate(directions):
            nxt = (cell[0] + d[0], cell[1] + d[1])
            if nxt in targets and first[cell] is not None:
                return first[cell]
            if nxt in floor and nxt not in first:
                first[nxt] = k if first[cell] is None else first[cell]
                queue.append(nxt)
    return 4
