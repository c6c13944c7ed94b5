"""Pure pieces of benchmarks/q_learning_vs_jaxmarl.py: the learner pairings, the conversion of
JaxMARL's logged training returns and the throughput of seeds run as concurrent processes. The
runs themselves need the peer venv and scripts."""

import pytest

from jaxmarl.algorithms import algorithm
from jaxmarl.config import load_config, preset_path
from tests.benchmark_scripts import BENCHMARKS, load_benchmark_script


@pytest.fixture
def bench(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))  # it imports ppo_vs_jaxmarl as a sibling
    return load_benchmark_script("q_learning_vs_jaxmarl")


@pytest.mark.parametrize("alg", ["qmix", "vdn", "iql", "pqn_vdn"])
def test_steps_per_update_match_our_presets(bench, alg):
    # The driver floors --steps to whole updates of this size and passes the product as
    # run.total_timesteps; a preset that drifted from it would train a different budget.
    config_cls = algorithm(alg).config_class
    config = load_config(config_cls, preset_path(alg, "MPE_simple_spread_v3"))
    assert config.env.num_envs * config.num_steps == bench.PAIRINGS[alg].our_steps_per_update


def test_peer_train_raw_undoes_each_scripts_logging(bench):
    # qmix_rnn.py: a 3-agent episode of per-agent return -10 logs as 3 * -10 / 26 (the mean over
    # a 26-step rollout that holds the return at its last step only).
    assert bench.peer_train_raw("qmix", [3 * -10.0 / 26]) == pytest.approx([-10.0])
    # pqn_vdn_rnn.py: every step holds the last finished episode's 3x return.
    assert bench.peer_train_raw("pqn_vdn", [-30.0, -45.0]) == pytest.approx([-10.0, -15.0])


def test_merge_of_concurrent_processes_counts_overlapping_training_once(bench):
    # Seeds 0 and 1 ran at once (100 and 200 training seconds for 1000 steps each: 10 + 5 steps
    # per second together), then seed 2 alone (100 s). 2000 steps at 15/s plus 100 s.
    runs = [
        dict(
            env_steps_per_seed=1000, train_s=t, train_cpu_s=c, wall_s=t + 10,
            process_cpu_s=c + 5, compile_s=1.0, compile_cpu_s=2.0, greedy_raw=[float(i)],
            load_before="", load_after="",
        )
        for i, (t, c) in enumerate([(100.0, 90.0), (200.0, 180.0), (100.0, 95.0)])
    ]  # fmt: skip
    merged = bench._rates(bench._merge_separate(runs, 3, concurrent=2))

    assert merged["train_s"] == pytest.approx(2000 / 15 + 100)
    assert merged["steps_per_s"] == pytest.approx(3000 / (2000 / 15 + 100))
    assert bench._merge_separate(runs, 3)["train_s"] == pytest.approx(400.0)  # one at a time


def test_unknown_algorithm_is_refused_before_anything_runs(bench, tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        bench.main(["--algs", "qmix,pqn", "--out-dir", str(tmp_path)])
    assert exit_info.value.code == 2
    assert "unknown ['pqn']" in capsys.readouterr().err
    assert not (tmp_path / "results.json").exists()
