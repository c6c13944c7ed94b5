"""``benchmarks/mabrax_ippo.py --compare``: runs compared at equal env steps."""

import json

import pytest

from tests.benchmark_scripts import load_benchmark_script

bench = load_benchmark_script("mabrax_ippo")


def test_windows_weight_updates_by_their_episodes_and_keep_seeds_apart():
    rows = [
        # seed 0: two updates in the first window (1 and 3 episodes), one in the second
        {"seed": 0, "env_steps": 400, "episode_return": 10.0, "episodes": 1.0},
        {"seed": 0, "env_steps": 1000, "episode_return": 30.0, "episodes": 3.0},
        {"seed": 0, "env_steps": 1400, "episode_return": 5.0, "episodes": 2.0},
        # an update in which no episode ended does not count
        {"seed": 1, "env_steps": 400, "episode_return": 99.0, "episodes": 0.0},
        {"seed": 1, "env_steps": 800, "episode_return": -4.0, "episodes": 2.0},
    ]
    table = bench.windowed(rows, 1000.0)
    assert table == {0: {0: pytest.approx(25.0), 1: pytest.approx(-4.0)}, 1: {0: 5.0}}


def test_compare_writes_the_table_with_seed_means(tmp_path):
    for name, returns in (("a", [1.0, 3.0]), ("b", [10.0])):
        run = tmp_path / name / bench.NAME
        run.mkdir(parents=True)
        lines = [
            json.dumps({"seed": s, "env_steps": 500, "episode_return": r, "episodes": 1.0})
            for s, r in enumerate(returns)
        ]
        (run / "metrics.jsonl").write_text("\n".join(lines) + "\n")
    md = tmp_path / "table.md"
    args = bench.argparse.Namespace(
        compare=[f"first={tmp_path / 'a'}", f"second={tmp_path / 'b'}"],
        window=1e3,
        md=str(md),
        png=None,
        title="",
    )
    bench.compare(args)
    assert md.read_text().splitlines()[2] == "| 0-0.001e6 | 2 (1, 3) | 10 |"


# The overrides of the measured run of Mava's settings (benchmarks/results/mabrax_ippo.md).
MEASURED_MAVA_SETTINGS = [
    "env.num_envs=32",
    "num_steps=128",
    "num_minibatches=2",
    "lr=2.5e-4",
    "anneal_lr=false",
    "ent_coef=0.01",
    "vf_coef=0.5",
    "separate_grad_clip=true",
    "network.activation=relu",
    "network.embed_dim=128",
    "network.trunk.sizes=[128]",
    "network.agent_id=true",
    "init_log_std=-0.365",
]


def test_the_mava_preset_is_the_measured_run_of_mavas_settings():
    import dataclasses

    from jaxmarl.train import parse

    preset = parse(["alg=ippo", "preset=ant_4x2_mava", "--no-progress"]).config
    measured = parse(
        ["alg=ippo", "preset=ant_4x2", "run.total_timesteps=9998336", *MEASURED_MAVA_SETTINGS]
    ).config
    # Learning settings equal; the run measured 2,441 updates, the preset 2,440 (40 chunks of
    # 61; the learning rate is constant, so the shorter run is the same run one update short).
    assert dataclasses.replace(preset, run=measured.run) == measured
    assert preset.num_updates == 2440 and preset.run.total_timesteps == 9_994_240
