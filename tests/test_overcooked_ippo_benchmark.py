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
