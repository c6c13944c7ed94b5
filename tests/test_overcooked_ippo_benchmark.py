"""Pure pieces of benchmarks/overcooked_ippo_vs_jaxmarl.py: each workload's update size is its
preset's, and the peer's layout override keeps the rest of the published env kwargs. The runs
themselves need the peer venv and scripts."""

import pytest

from jaxmarl.algorithms import algorithm
from jaxmarl.config import load_config, preset_path
from tests.benchmark_scripts import BENCHMARKS, load_benchmark_script


@pytest.fixture
def bench(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))  # it imports ppo_vs_jaxmarl as a sibling
    return load_benchmark_script("overcooked_ippo_vs_jaxmarl")


@pytest.mark.parametrize("workload", ["v1", "v2"])
def test_update_sizes_and_defaults_match_the_presets(bench, workload):
    spec = bench.WORKLOADS[workload]
    config = load_config(algorithm("ippo").config_class, preset_path("ippo", spec["preset"]))
    assert config.env.num_envs * config.num_steps == spec["per_update"]
    assert config.run.total_timesteps == spec["default_steps"]
    key = bench.register(workload, "cramped_room")
    assert bench.ALGS[key]["ours"][-1] == "env.env_kwargs.layout=cramped_room"


def test_peer_override_replaces_only_the_layout(bench, tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text(
        '"ENV_KWARGS":\n  "layout": "grounded_coord_simple"\n  "agent_view_size": 2\n'
    )
    got = bench.peer_layout_overrides(config, "cramped_room_v2")
    assert got == {"ENV_KWARGS": {"layout": "cramped_room_v2", "agent_view_size": 2}}


def test_load_column_reads_the_one_minute_figure(bench):
    assert bench._load("['11.48', '11.26', '7.73']") == "11.48"
    assert bench._load(None) == "—"  # rows recorded without a load


@pytest.mark.parametrize("seed", [None, 5])
def test_seed_roots_both_sides_and_is_recorded(bench, tmp_path, monkeypatch, seed):
    """``--seed S`` gives more seeds to pool with a finished run: ours ``run.seed=S``,
    JaxMARL's ``SEED`` replaced by S; left out, each side keeps its default."""
    seen = {}
    result = {"steps_per_s": 1.0, "compile_s": 1.0, "wall_s": 1.0, "final_raw": [0.0]}

    def peer(key, steps, seeds, python, scripts, options):
        seen["peer"] = options
        return dict(result)

    def ours(key, steps, seeds, out_dir, extra):
        seen["ours"] = extra
        return {**result, "run_dir": str(tmp_path)}

    monkeypatch.setattr(bench, "run_peer", peer)
    monkeypatch.setattr(bench, "run_ours", ours)
    monkeypatch.setattr(bench, "ours_curve", lambda run_dir: ([1], [[0.0]]))
    monkeypatch.setattr(bench, "peer_layout_overrides", lambda config, layout: {})
    args = bench.argparse.Namespace(
        sides="ours,jaxmarl",
        steps=10,
        seeds=3,
        seed=seed,
        extra_path="",
        gif=False,
        peer_pool_threads=1,
        peer_python="",
        peer_scripts=tmp_path,
        out_dir=tmp_path,
    )
    results = {}
    bench.run_layout(args, "v1", "cramped_room", results, tmp_path / "results.json")
    assert [a for a in seen["ours"] if a.startswith("run.seed")] == (
        [] if seed is None else ["run.seed=5"]
    )
    assert ("seed" in seen["peer"]) == (seed is not None) and seen["peer"].get("seed") == seed
    sides = results["v1"]["cramped_room"]
    assert sides["ours"]["root_seed"] == sides["jaxmarl"]["root_seed"] == seed


def test_pool_reports_the_seeds_of_every_root_together(bench, tmp_path):
    """``--pool``: two roots of 2 seeds each read as one side of 4 seeds, in the table and the
    curves; a run of another length is refused."""
    import json

    def ours(root, finals):
        run = tmp_path / f"ours{root}"
        run.mkdir()
        rows = [
            {"seed": s, "update": u, "env_steps": 100 * u, "episode_return": f * u / 10}
            for s, f in enumerate(finals)
            for u in range(1, 11)
        ]
        (run / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        return {
            "side": "ours",
            "run_dir": str(run),
            "env_steps_per_seed": 1000,
            "seeds": 2,
            "final_raw": finals,
            "greedy_raw": finals,
            "steps_per_s": 10.0 * (root + 1),
            "compile_s": 1.0,
            "wall_s": 5.0,
            "root_seed": root,
        }

    def peer(root, finals):
        return {
            "side": "jaxmarl",
            "env_steps_per_seed": 1000,
            "seeds": 2,
            "final_raw": finals,
            "log_scale": 1,
            "logged_curve": [[f * u / 10 for u in range(1, 11)] for f in finals],
            "steps_per_s": 7.0,
            "compile_s": 2.0,
            "wall_s": 6.0,
            "root_seed": root,
        }

    first = {
        "v1": {
            "forced_coord": {"ours": ours(0, [100.0, 200.0]), "jaxmarl": peer(0, [150.0, 150.0])}
        }
    }
    second = {
        "v1": {"forced_coord": {"ours": ours(1, [300.0, 400.0]), "jaxmarl": peer(1, [50.0, 250.0])}}
    }
    report = bench.pool_results(first, [second])
    r = report["v1"]["forced_coord"]["ours"]
    assert r["seeds"] == 4 and r["final_raw"] == [100.0, 200.0, 300.0, 400.0]
    assert r["root_seeds"] == [0, 1] and r["steps_per_s"] == 15.0 and r["wall_s"] == 10.0
    x, ys = bench.curve(r)
    assert x == [100 * u for u in range(1, 11)] and [y[-1] for y in ys] == r["final_raw"]
    assert bench.last_tenth(report["v1"]["forced_coord"]["jaxmarl"]) == [150.0, 150.0, 50.0, 250.0]
    rows = [line for line in bench.table(report).splitlines() if line.startswith("| forced")]
    assert "| 4 | 100.0, 200.0, 300.0, 400.0 | 250.0 ± 129.1 |" in rows[0]
    assert first["v1"]["forced_coord"]["ours"]["seeds"] == 2  # the loaded results are not changed
    second["v1"]["forced_coord"]["ours"]["env_steps_per_seed"] = 2000
    with pytest.raises(ValueError, match="different lengths"):
        bench.pool_results(first, [second])


def test_pool_of_a_folder_without_results_is_a_usage_error(bench, tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        bench.main(["--report-only", "--out-dir", str(tmp_path), "--pool", str(tmp_path / "no")])
    assert exit_info.value.code == 2
    assert "--pool: no results.json in" in capsys.readouterr().err
