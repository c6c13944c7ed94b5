"""``smax_vs_jaxmarl.py compare`` joins JaxMARL runs whose seeds were split over processes.

A GPU session runs JaxMARL's seeds as separate processes (``--first-seed``); the table must
count them as one run of all the seeds, in seed order, with throughput from each seed's own
training time. Pure bookkeeping on result dicts: no peer venv, and no training.
"""

import pytest

from tests.benchmark_scripts import load_benchmark_script


@pytest.fixture(scope="module")
def driver():
    return load_benchmark_script("smax_vs_jaxmarl")


def _peer_part(first_seed: int, seeds: int, wall_per_seed: float) -> dict:
    ids = range(first_seed, first_seed + seeds)
    return {
        "side": "jaxmarl",
        "scenario": "3m",
        "alg": "qmix",
        "env_steps_per_seed": 4096,
        "first_seed": first_seed,
        "seeds": seeds,
        "seed_keys": f"PRNGKey({ids[0]}..{ids[-1]}), one after another",
        "win_rate": [[0.1 * s, 0.2 * s] for s in ids],
        "episode_return": [[float(s)] * 2 for s in ids],
        "final_win_rate": [0.2 * s for s in ids],
        "final_eval_win_rate": [0.3 * s for s in ids],
        "eval": [{"seed": s, "update": 2, "eval_won": 0.3 * s} for s in ids],
        "train_wall_s_per_seed": [wall_per_seed] * seeds,
        "train_cpu_s_per_seed": [2 * wall_per_seed] * seeds,
        "train_wall_s": wall_per_seed * seeds,
        "train_cpu_s": 2 * wall_per_seed * seeds,
        "compile_s": 10.0 + first_seed,
        "compile_cpu_s": 20.0 + first_seed,
        "env_steps_per_s_wall": 4096 / wall_per_seed,
        "env_steps_per_cpu_s": 4096 / (2 * wall_per_seed),
    }


def test_join_puts_split_seeds_in_order_and_recounts_throughput(driver):
    parts = [_peer_part(2, 1, 4.0), _peer_part(0, 2, 1.0)]  # given out of seed order

    (joined,) = driver._join_seed_parts(parts)

    assert joined["seeds"] == 3
    assert joined["final_win_rate"] == pytest.approx([0.0, 0.2, 0.4])
    assert [e["seed"] for e in joined["eval"]] == [0, 1, 2]
    assert joined["train_wall_s"] == pytest.approx(6.0)
    assert joined["env_steps_per_s_wall"] == pytest.approx(3 * 4096 / 6.0)
    assert parts[1]["final_win_rate"] == pytest.approx([0.0, 0.2])  # inputs left as they were


def test_join_refuses_parts_that_share_a_seed(driver):
    with pytest.raises(SystemExit, match=r"share seeds \[1\]"):
        driver._join_seed_parts([_peer_part(0, 2, 1.0), _peer_part(1, 1, 1.0)])


def test_compare_names_the_override_that_sets_a_run_apart(driver, tmp_path):
    """The truncation ablation compares two runs of ours that differ by one override; the
    table (and the plot legend, from the same label) must say which row is which."""
    import argparse
    import json

    paths = []
    for bootstrap in ("true", "false"):
        overrides = ["run.total_timesteps=4096", f"bootstrap_truncation={bootstrap}"]
        run = {
            **_peer_part(0, 1, 1.0),
            "side": "ours",
            "config_overrides": overrides,
            "env_steps": [2048, 4096],
        }
        paths.append(tmp_path / f"{bootstrap}.json")
        paths[-1].write_text(json.dumps(run))
    md = tmp_path / "table.md"
    args = argparse.Namespace(jsons=[str(p) for p in paths], md=str(md), png_prefix=None)

    driver.compare(args)

    rows = [line for line in md.read_text().splitlines() if "| ours" in line]
    named = lambda value: [r for r in rows if f"bootstrap_truncation={value}" in r]
    assert len(rows) == 2 and len(named("true")) == 1 and len(named("false")) == 1
    assert not any("total_timesteps" in r for r in rows)  # shared by both: not a difference


def test_episode_ends_adds_per_episode_infos_and_leaves_the_rest(driver):
    """``_EpisodeEnds`` (wrapped around the env JaxMARL's Q scripts build) marks every agent at an
    episode end and copies that episode's won flag and return there, so the script's rollout
    means give per-episode values; everything else passes through."""
    import jax.numpy as jnp

    class FakeLoggedEnv:
        num_agents = 2
        name = "fake"

        def step(self, key, state, actions):
            done = {"__all__": jnp.asarray(state == 1)}
            info = {
                "returned_won_episode": jnp.asarray([1.0, 1.0]),
                "returned_episode_returns": jnp.asarray([0.5, 0.5]),
            }
            return "obs", state + 1, {"a": 0.0}, done, info

    env = driver._EpisodeEnds(FakeLoggedEnv())
    assert env.num_agents == 2 and env.name == "fake"  # attribute lookups fall through

    _, state, _, _, running = env.step(None, 0, None)
    _, _, _, _, ended = env.step(None, state, None)

    assert running["episode_end"].tolist() == [0.0, 0.0]
    assert ended["episode_end_won"].tolist() == [1.0, 1.0]
    assert ended["episode_end_return"].tolist() == [0.5, 0.5]
    assert ended["returned_won_episode"].tolist() == [1.0, 1.0]  # the script's own info kept
    rows = [
        {"episode_end": 0.5, "episode_end_won": 0.25},  # 2 of 4 steps ended, 1 of them won
        {"episode_end": 0.0, "episode_end_won": 0.0},  # none ended: 0, as ours logs it
    ]
    assert driver._per_episode(rows, "episode_end_won") == [0.5, 0.0]
