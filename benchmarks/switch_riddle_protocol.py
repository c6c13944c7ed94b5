"""The best protocol we can find for the 3-agent switch riddle, by joint equilibrium search.

The riddle's value with memory: each agent may use everything it has seen (the days it was in
the room and the light each time; it counts days, as a recurrent agent can) and its own id.
No tractable method gives the exact optimum of this decentralised problem, so this script
brackets it:

* **upper bound:** an oracle that knows who has been in the room tells exactly when all have,
  and never wrongly: ``P(every agent in the room within 4N - 6 days)`` (540/729 for N = 3);
* **lower bound:** the best deterministic joint policy found by JESP (Nair et al., 2003):
  starting from a policy, replace one agent's policy by its exact best response to the others'
  (by backward induction over its own histories, every room sequence enumerated), until no
  agent improves; restarted from the "the agent in the room on the last day tells" policy and
  from ``--restarts`` random policies.

For N = 3 the search reaches the upper bound (a protocol that tells, correctly, in exactly
the episodes in which every agent gets into the room: 540/729), so that is the optimum. A
much simpler symmetric protocol reaches it too (``first_visit_parity``, printed at the end):
every agent toggles the light on its first visit, and tells instead if on a first visit after
the first day the light is off.

Everything is exact: returns are averages over all ``N^(4N-6)`` equally likely room sequences.
``--out FILE`` writes the best policy's decisions that are ever used (every history not listed
acts *nothing*) as JSON, which ``tests/envs/switch_riddle`` replays in the NumPy reference::

    python benchmarks/switch_riddle_protocol.py --restarts 30 \\
        --out tests/envs/switch_riddle/data/protocol_n3.json

Pure Python, no JAX; about a second per restart.
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
from fractions import Fraction

NOTHING, SWITCH_LIGHT, TELL = 0, 1, 2
NUM_AGENTS = 3
DAYS = 4 * NUM_AGENTS - 6
ALL = (1 << NUM_AGENTS) - 1
ROOMS = list(itertools.product(range(NUM_AGENTS), repeat=DAYS))

# An agent's history when it is in the room on day ``d`` (0-based): ``(d, visits, lights,
# light)``, with ``visits`` a bit mask of its earlier days in the room, ``lights`` the light it
# saw on those days (bit mask) and ``light`` the light now. A policy is one dict per agent from
# histories to actions; a history not in it acts nothing.


def _seen(history: tuple[int, int], day: int, light: int) -> tuple[int, int]:
    visits, lights = history
    return visits | 1 << day, lights | light << day


def episode(policy, rooms) -> tuple[int, int]:
    """``(return, days)`` of one episode with the given room of each day."""
    light, been, histories = 0, 0, [(0, 0)] * NUM_AGENTS
    for day, agent in enumerate(rooms):
        action = policy[agent].get((day, *histories[agent], light), NOTHING)
        been |= 1 << agent
        histories[agent] = _seen(histories[agent], day, light)
        if action == SWITCH_LIGHT:
            light ^= 1
        elif action == TELL:
            return (1 if been == ALL else -1), day + 1
    return 0, DAYS


def evaluate(policy) -> dict:
    """Exact expected return, success and failure rates and episode length."""
    outcomes = [episode(policy, rooms) for rooms in ROOMS]
    n = len(ROOMS)
    return {
        "return": Fraction(sum(r for r, _ in outcomes), n),
        "success": Fraction(sum(r > 0 for r, _ in outcomes), n),
        "failure": Fraction(sum(r < 0 for r, _ in outcomes), n),
        "length": Fraction(sum(d for _, d in outcomes), n),
    }


def best_response(policy, agent: int):
    """``(policy with agent's part replaced by its exact best response, summed return)``."""
    others = list(policy)

    def run_until_agent(worlds):
        """Advance worlds ``(rooms, day, light, been, histories)`` until ``agent`` is in the
        room or the episode ends; returns the others' summed reward and the worlds grouped by
        ``agent``'s history."""
        reward, groups = 0, {}
        for rooms, day, light, been, histories in worlds:
            while day < DAYS:
                j = rooms[day]
                if j == agent:
                    key = (day, *histories[agent], light)
                    groups.setdefault(key, []).append((rooms, day, light, been, histories))
                    break
                action = others[j].get((day, *histories[j], light), NOTHING)
                been |= 1 << j
                histories = (*histories[:j], _seen(histories[j], day, light), *histories[j + 1 :])
                if action == SWITCH_LIGHT:
                    light ^= 1
                elif action == TELL:
                    reward += 1 if been == ALL else -1
                    break
                day += 1
        return reward, groups

    def solve(key, worlds):
        """Best summed return from history ``key`` on, and the decisions that achieve it."""
        day = key[0]
        best = None
        for action in (NOTHING, SWITCH_LIGHT, TELL):
            reward, following = 0, []
            for rooms, _, light, been, histories in worlds:
                been |= 1 << agent
                histories = (
                    *histories[:agent],
                    _seen(histories[agent], day, light),
                    *histories[agent + 1 :],
                )
                if action == TELL:
                    reward += 1 if been == ALL else -1
                elif day + 1 < DAYS:
                    light ^= action == SWITCH_LIGHT
                    following.append((rooms, day + 1, light, been, histories))
            more, groups = run_until_agent(following)
            total, decisions = reward + more, {key: action}
            for child, child_worlds in groups.items():
                value, child_decisions = solve(child, child_worlds)
                total += value
                decisions.update(child_decisions)
            if best is None or total > best[0]:
                best = (total, decisions)
        return best

    start = [(rooms, 0, 0, 0, ((0, 0),) * NUM_AGENTS) for rooms in ROOMS]
    total, groups = run_until_agent(start)
    mine = {}
    for key, worlds in groups.items():
        value, decisions = solve(key, worlds)
        total += value
        mine.update(decisions)
    others[agent] = mine
    return others, total


def jesp(policy, rng: random.Random, max_rounds: int = 50):
    value = evaluate(policy)["return"] * len(ROOMS)
    for _ in range(max_rounds):
        improved = False
        for agent in rng.sample(range(NUM_AGENTS), NUM_AGENTS):
            candidate, candidate_value = best_response(policy, agent)
            if candidate_value > value:
                policy, value, improved = candidate, candidate_value, True
        if not improved:
            break
    return policy


def random_policy(rng: random.Random):
    """Each history acts nothing with probability 1/2, else a uniformly random action."""
    policy = []
    for _ in range(NUM_AGENTS):
        table = {}
        for day in range(DAYS):
            for visits in range(1 << day):
                for lights in range(1 << day):
                    if lights & ~visits:
                        continue
                    for light in (0, 1):
                        if rng.random() < 0.5:
                            table[(day, visits, lights, light)] = rng.randrange(3)
        policy.append(table)
    return policy


def last_day_tells():
    return [
        {
            (DAYS - 1, v, lt, light): TELL
            for v in range(1 << 5)
            for lt in range(1 << 5)
            for light in (0, 1)
        }
        for _ in range(NUM_AGENTS)
    ]


def first_visit_parity():
    """A symmetric protocol as good as the one JESP finds: on its first visit an agent tells if
    the light is off on any day but the first (two others have each toggled it once), and
    otherwise toggles it; later visits do nothing."""
    table = {
        (day, 0, 0, light): TELL if day and not light else SWITCH_LIGHT
        for day in range(DAYS)
        for light in (0, 1)
    }
    return [dict(table) for _ in range(NUM_AGENTS)]


def used_decisions(policy) -> list[dict]:
    """The policy's non-nothing decisions on histories that occur, in readable form."""
    used = set()
    for rooms in ROOMS:
        light, histories = 0, [(0, 0)] * NUM_AGENTS
        for day, agent in enumerate(rooms):
            key = (day, *histories[agent], light)
            action = policy[agent].get(key, NOTHING)
            if action != NOTHING:
                used.add((agent, key, action))
            histories[agent] = _seen(histories[agent], day, light)
            if action == SWITCH_LIGHT:
                light ^= 1
            elif action == TELL:
                break
    rows = []
    for agent, (day, visits, lights, light), action in sorted(used):
        earlier = [d for d in range(day) if visits >> d & 1]
        rows.append(
            {
                "agent": agent,
                "day": day,
                "earlier_days": earlier,
                "earlier_lights": [lights >> d & 1 for d in earlier],
                "light": light,
                "action": action,
            }
        )
    return rows


def oracle_success() -> Fraction:
    return Fraction(sum(len(set(rooms)) == NUM_AGENTS for rooms in ROOMS), len(ROOMS))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--restarts", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", help="JSON file for the best policy's decisions")
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    best = jesp(last_day_tells(), rng)
    found = [evaluate(best)["return"]]
    for _ in range(args.restarts):
        policy = jesp(random_policy(rng), rng)
        found.append(evaluate(policy)["return"])
        if found[-1] > max(found[:-1]):
            best = policy
    stats = evaluate(best)
    hits = sum(v == stats["return"] for v in found)
    summary = {
        "num_agents": NUM_AGENTS,
        "days": DAYS,
        "oracle_success": str(oracle_success()),
        "best_return": str(stats["return"]),
        "best_success": str(stats["success"]),
        "best_failure": str(stats["failure"]),
        "best_length": str(stats["length"]),
        "searches": len(found),
        "searches_reaching_best": hits,
        "last_day_tells_return": str(evaluate(last_day_tells())["return"]),
    }
    print(json.dumps(summary, indent=1))
    for key in ("oracle_success", "best_return", "best_success", "best_failure", "best_length"):
        print(f"{key}: {float(Fraction(summary[key])):.4f}")
    parity = evaluate(first_visit_parity())
    print(f"first_visit_parity: return {parity['return']}, success {parity['success']}")
    if args.out:
        rows = ",\n".join("  " + json.dumps(row) for row in used_decisions(best))
        head = json.dumps(summary, indent=1)[:-2]
        with open(args.out, "w") as f:
            f.write(f'{head},\n "decisions": [\n{rows}\n ]\n}}\n')


if __name__ == "__main__":
    main()
