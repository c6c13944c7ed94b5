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
    """The preset is the 3-seed run of 2026-11-26 that chose tanh: ``--preset ant_4x2_mava``
    as it was then (the overrides above on ``ant_4x2``) plus ``action_bounds=tanh``."""
    import dataclasses

    from jaxmarl.train import parse

    preset = parse(["alg=ippo", "preset=ant_4x2_mava", "--no-progress"]).config
    measured = parse(
        [
            "alg=ippo",
            "preset=ant_4x2",
            "run.total_timesteps=9994240",
            *MEASURED_MAVA_SETTINGS,
            "action_bounds=tanh",
        ]
    ).config
    # learning settings equal (the run's chunking, checkpoints and logging were the driver's)
    assert dataclasses.replace(preset, run=measured.run) == measured
    assert preset.num_updates == 2440 and preset.run.total_timesteps == 9_994_240


# --- checkpoints and --resume -------------------------------------------------------------


def _args(out, **kw):
    base = dict(
        out_dir=str(out),
        preset="ant_4x2_mava",
        steps=4096,
        seeds=3,
        seed=0,
        checkpoint_every=100,
        deadline_min=0.0,
        overrides=[],
        resume=False,
    )
    return bench.argparse.Namespace(**{**base, **kw})


def test_a_new_run_checkpoints_and_a_resume_reads_the_saved_run(tmp_path):
    new = bench.train_command(_args(tmp_path, overrides=["action_bounds=tanh"]))
    assert "run.checkpoint_every=100" in new and new[-1] == "action_bounds=tanh"
    resumed = bench.train_command(_args(tmp_path, resume=True))
    assert resumed[-3:] == ["--resume", str(tmp_path / bench.NAME), "--no-progress"]
    assert not any(arg.startswith(("preset=", "run.")) for arg in resumed)


def test_timing_counts_no_restart_as_training():
    info = {
        "segments": [
            {"update_times_s": {"1": 60.0, "2": 62.0, "3": 64.0}},
            # the resumed stretch compiles again for 50 s before its first update
            {"update_times_s": {"4": 52.0, "5": 54.0}},
        ]
    }
    compile_s, per_update = bench.timing_summary(info)
    assert per_update == pytest.approx(2.0) and compile_s == pytest.approx(58.0)
    # a timing file written before --resume existed is one stretch
    old = {"update_times_s": {"1": 30.0, "2": 33.0}}
    assert bench.timing_summary(old) == pytest.approx((27.0, 3.0))


def _rows(updates) -> str:
    return "".join(
        json.dumps({"seed": 0, "update": u, "env_steps": 10 * u, "episode_return": u}) + "\n"
        for u in updates
    )


def _stopped_run(tmp_path, last_update: int):
    """A run folder as a stopped run left it: metrics up to ``last_update``, each timed."""
    run = tmp_path / bench.NAME
    run.mkdir()
    (run / "metrics.jsonl").write_text(_rows(range(1, last_update + 1)))
    times = {str(u): 39.0 + u for u in range(1, last_update + 1)}
    stretch = {"cmd": "first", "update_times_s": times, "returncode": 130}
    timing = {"seeds": 1, "configured_steps": 60, "segments": [stretch]}
    (tmp_path / "timing.json").write_text(json.dumps(timing))
    return run


def test_resume_drops_the_updates_it_redoes_and_times_only_new_ones(tmp_path, monkeypatch):
    """A stand-in for the train command: the resumed run cuts the metrics back to its
    checkpoint (update 3) and writes updates 4 and 5 again."""
    import sys

    run = _stopped_run(tmp_path, 5)
    script = (
        "import pathlib, time\n"
        f"p = pathlib.Path({str(run / 'metrics.jsonl')!r})\n"
        "time.sleep(0.3)\n"
        f"p.write_text({_rows(range(1, 4))!r})\n"
        f"for row in {_rows(range(4, 7)).splitlines(keepends=True)!r}:\n"
        "    time.sleep(0.2)\n"
        "    p.write_text(p.read_text() + row)\n"
    )
    monkeypatch.setattr(bench, "train_command", lambda args: [sys.executable, "-c", script])
    monkeypatch.setattr(bench, "POLL_S", 0.05)
    import jaxmarl.training.host.rundir as rundir

    monkeypatch.setattr(rundir, "complete_steps", lambda run_dir: [2, 3])
    bench.train(_args(tmp_path, resume=True))
    segments = json.loads((tmp_path / "timing.json").read_text())["segments"]
    assert [sorted(map(int, s["update_times_s"])) for s in segments] == [[1, 2, 3], [4, 5, 6]]
    assert segments[0]["update_times_s"]["3"] == 42.0
    # the redone updates are timed when the resumed run wrote them, not from the stale rows
    assert min(segments[1]["update_times_s"].values()) >= 0.3


def test_resume_sees_the_cut_even_when_a_new_update_lands_before_the_first_poll(
    tmp_path, monkeypatch
):
    """The trainer cuts the metrics by an atomic rename; a resumed run that cuts and writes
    its next update before the driver first looks is still timed (the file's inode changed)."""
    import sys

    run = _stopped_run(tmp_path, 4)
    script = (
        "import pathlib\n"
        f"p = pathlib.Path({str(run / 'metrics.jsonl')!r})\n"
        f"p.with_name('cut').write_text({_rows(range(1, 5))!r})\n"
        "p.with_name('cut').replace(p)\n"
    )
    monkeypatch.setattr(bench, "train_command", lambda args: [sys.executable, "-c", script])
    monkeypatch.setattr(bench, "POLL_S", 0.5)
    import jaxmarl.training.host.rundir as rundir

    monkeypatch.setattr(rundir, "complete_steps", lambda run_dir: [3])
    bench.train(_args(tmp_path, resume=True))
    segments = json.loads((tmp_path / "timing.json").read_text())["segments"]
    assert [sorted(map(int, s["update_times_s"])) for s in segments] == [[1, 2, 3], [4]]


def test_resume_refuses_overrides_and_a_folder_without_a_run(tmp_path):
    with pytest.raises(SystemExit, match="no run to continue"):
        bench.train(_args(tmp_path, resume=True))
    (tmp_path / "timing.json").write_text("{}")
    with pytest.raises(SystemExit, match="takes no overrides"):
        bench.train(_args(tmp_path, resume=True, overrides=["lr=1e-3"]))


def test_the_timing_is_on_disk_while_the_run_goes_so_a_killed_driver_can_resume(
    tmp_path, monkeypatch
):
    """A stand-in train command writes two updates and then waits, up to 10 s, for the
    driver's timing file to list them as a stretch still going (``returncode`` None): what a
    ``--resume`` finds after the driver is killed mid-run."""
    import sys

    run = tmp_path / bench.NAME
    run.mkdir()
    rows = _rows((1, 2))
    script = (
        "import json, pathlib, time\n"
        f"pathlib.Path({str(run / 'metrics.jsonl')!r}).write_text({rows!r})\n"
        f"timing = pathlib.Path({str(tmp_path / 'timing.json')!r})\n"
        "for _ in range(200):\n"
        "    time.sleep(0.05)\n"
        "    try:\n"
        "        stretch = json.loads(timing.read_text())['segments'][-1]\n"
        "    except (OSError, ValueError):\n"
        "        continue\n"
        "    seen = sorted(stretch['update_times_s'])\n"
        "    if seen == ['1', '2'] and stretch['returncode'] is None:\n"
        "        raise SystemExit(7)\n"
        "raise SystemExit(1)\n"
    )
    monkeypatch.setattr(bench, "train_command", lambda args: [sys.executable, "-c", script])
    monkeypatch.setattr(bench, "POLL_S", 0.05)
    bench.train(_args(tmp_path, seeds=1))
    (stretch,) = json.loads((tmp_path / "timing.json").read_text())["segments"]
    assert stretch["returncode"] == 7  # the stand-in saw its updates on disk while it ran
    assert sorted(p.name for p in tmp_path.iterdir()) == [bench.NAME, "timing.json", "train.log"]
