"""benchmarks/seed_ablation.py on two small hand-made run directories with known numbers."""

import json

import pytest

from jaxmarl import stats as rl_stats
from tests.benchmark_scripts import load_benchmark_script


@pytest.fixture(scope="module")
def ablation():
    return load_benchmark_script("seed_ablation")


def write_run(directory, finals, curves, base_seed=0):
    """A run directory as ``jaxmarl.train`` writes it: per-seed metrics, evaluations, config."""
    directory.mkdir()
    rows = [
        {"update": u + 1, "env_steps": 10 * (u + 1), "seed": s, "episode_return": curve[u]}
        for u in range(len(curves[0]))
        for s, curve in enumerate(curves)
    ]
    evals = [
        {"update": update, "seed": s, "eval_episode_return": value - (update < 4)}
        for update in (2, 4)
        for s, value in enumerate(finals)
    ]
    for name, records in (("metrics.jsonl", rows), ("eval.jsonl", evals)):
        (directory / name).write_text("".join(json.dumps(r) + "\n" for r in records))
    (directory / "config.yaml").write_text(f"run:\n  seed: {base_seed}\n  num_seeds: 3\n")
    return directory


def test_table_and_statistics_from_run_directories(ablation, tmp_path, capsys):
    a = write_run(tmp_path / "a", [-10.0, -20.0, -30.0], [[-50, -50, -10, -10]] * 3)
    b = write_run(tmp_path / "b", [-12.0, -15.0, -25.0], [[-10, -10, -50, -10]] * 3)
    out = tmp_path / "ablation.json"
    runs = ["--run", f"A={a}", "--run", f"B={b}", "--values", "peer=-11,-12,-13,-14"]
    outputs = ["--json", str(out), "--plot", str(tmp_path / "c.png"), "--reps", "300"]
    assert ablation.main([*runs, "--stride", "1", "--below", "-40", *outputs]) == 0
    stats = json.loads(out.read_text())["stats"]
    assert stats["A"]["iqm"] == pytest.approx(-20.0)  # 3 seeds: the IQM is the mean
    assert stats["A"]["iqm_low"] <= -20.0 <= stats["A"]["iqm_high"]
    assert stats["peer"]["iqm"] == pytest.approx(-12.5)  # the middle two of four
    assert stats["B"]["paired_wins"] == 2  # seeds 1 and 2; seed 0 is behind
    # P(B > A): of the 9 pairs of seeds, B's -12 and -15 beat A's -20 and -30, -25 beats -30.
    assert stats["B"]["p_improvement"] == pytest.approx(5 / 9)
    assert stats["B"]["p_improvement_low"] < 0.5 < stats["B"]["p_improvement_high"]
    assert stats["B"]["verdict"] == "not separated"
    assert stats["peer"]["p_improvement"] == pytest.approx(8 / 12)  # all beat -20 and -30
    assert stats["peer"]["verdict"] == "not separated"
    assert "paired_wins" not in stats["peer"]  # external values have no seed indices
    assert stats["A"]["frac_below"] == pytest.approx(0.5)
    assert stats["A"]["frac_below_second_half"] == 0.0
    assert stats["B"]["frac_below_second_half"] == pytest.approx(0.5)
    table = capsys.readouterr().out
    assert "| A | -10.00 | -20.00 | -30.00 |  | -20 [" in table  # 4 seed columns
    assert "| B | -12.00 | -15.00 | -25.00 |  | " in table and "| not separated |" in table
    assert "ahead on 2/3 seeds" in table and (tmp_path / "c.png").stat().st_size > 5_000


def test_runs_from_several_base_seeds_join_and_pair_up(ablation, tmp_path):
    """3 seeds from base seed 0 plus 2 from base seed 1 are one run of 5; a second arm joined
    the same way pairs seed by seed; curves are cut to the shorter part's."""
    a0 = write_run(tmp_path / "a0", [-10.0, -20.0, -30.0], [[-50, -50, -50]] * 3)
    a1 = write_run(tmp_path / "a1", [-40.0, -50.0], [[-50, -10]] * 2, base_seed=1)
    b0 = write_run(tmp_path / "b0", [-11.0, -19.0, -29.0], [[-10, -10, -10]] * 3)
    b1 = write_run(tmp_path / "b1", [-39.0, -51.0], [[-10, -10]] * 2, base_seed=1)
    out = tmp_path / "joined.json"
    argv = ["--run", f"A={a0},{a1}", "--run", f"B={b0},{b1}", "--stride", "1", "--below", "-40"]
    argv += ["--reps", "200"]
    assert ablation.main([*argv, "--json", str(out)]) == 0
    result = json.loads(out.read_text())
    a, stats = result["runs"]["A"], result["stats"]
    assert a["final"] == [-10.0, -20.0, -30.0, -40.0, -50.0]
    assert a["seeds"] == [[0, 0], [0, 1], [0, 2], [1, 0], [1, 1]]
    assert len(a["curve"]) == 5 and {len(c) for c in a["curve"]} == {2}
    assert stats["A"]["n"] == 5 and stats["A"]["iqm"] == pytest.approx(rl_stats.iqm(a["final"]))
    assert stats["A"]["frac_below_second_half"] == pytest.approx(0.6)  # 3 of 5 at -50
    assert stats["B"]["paired_wins"] == 3  # ahead on seeds (0, 1), (0, 2) and (1, 0)
