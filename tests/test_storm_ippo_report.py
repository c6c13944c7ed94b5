"""``benchmarks/storm_ippo.py`` reports the coin infos of runs that log them and leaves a dash
for runs made before they existed."""

import json

from tests.benchmark_scripts import BENCHMARKS, load_benchmark_script


def _write_run(run_dir, seeds, updates, coins):
    run_dir.mkdir(parents=True)
    rows = []
    for seed in range(seeds):
        for update in range(updates):
            row = {
                "seed": seed,
                "update": update,
                "env_steps": 100 * (update + 1),
                "episodes": 0 if update == 0 else 4,  # no episode ended in the first update
                "episode_return": float(update + seed),
                "episode_welfare": 2.0 * (update + seed),
            }
            if coins:
                row |= {"coop_coin_fraction": 0.25 * seed, "coins_collected": 10.0 + update}
            rows.append(json.dumps(row))
    (run_dir / "metrics.jsonl").write_text("\n".join(rows) + "\n")
    return run_dir


def test_coin_columns_for_runs_that_log_them(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))  # it imports a sibling script
    storm = load_benchmark_script("storm_ippo")
    runs = {
        "new": storm.read_run(_write_run(tmp_path / "new", seeds=2, updates=7, coins=True)),
        "old": storm.read_run(_write_run(tmp_path / "old", seeds=2, updates=7, coins=False)),
    }
    assert runs["new"]["env_steps"] == [200, 300, 400, 500, 600, 700]  # update 0 skipped
    lines = storm.table(runs).splitlines()
    assert "share of cooperation coins picked up, per seed (last 5 updates)" in lines[0]
    new, old = (dict(zip(lines[0].split(" | "), line.split(" | "))) for line in lines[2:])
    assert new["share of cooperation coins picked up, per seed (last 5 updates)"] == "0.00, 0.25"
    assert new["coins picked up, per seed (last 5 updates)"] == "14.00, 14.00"  # updates 2..6
    assert old["share of cooperation coins picked up, per seed (last 5 updates)"] == "—"
    assert old["episode return (per player), mean ± std"] == "4.500 ± 0.707"
    storm.plot(runs, tmp_path / "curves.png")
    assert (tmp_path / "curves.png").stat().st_size > 0
