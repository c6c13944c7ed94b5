"""One run over several devices and processes: the results of one device, and resume.

The device count is fixed when JAX's backend starts, so these run in fresh interpreters:
``MESH_SCRIPT`` on 4 host devices in one process (``run.devices x run.data_devices`` meshes),
and the command line as 2 processes joined by ``jax.distributed`` over localhost (gloo).
"""

import json
import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

MESH_SCRIPT = textwrap.dedent(
    """
    import dataclasses, tempfile
    from pathlib import Path
    from jaxmarl.training.host.devices import use_devices
    use_devices(4)
    import chex, jax
    from jaxmarl.baselines.ppo import CentralisedCritic, PPOConfig, make_ppo
    from jaxmarl.baselines.q_learning import QLearningConfig, make_q_learning
    from jaxmarl.networks.mixers import VDNMixerConfig
    from jaxmarl.training.config import EnvConfig, GRUTrunkConfig, NetworkConfig, RunConfig
    from jaxmarl.training.host.checkpoint import CheckpointMismatchError
    from jaxmarl.training.host.logging import read_jsonl
    from jaxmarl.training.host.loop import run

    env = EnvConfig(env_id="MPE_simple_spread_v3", num_envs=8, env_kwargs={"max_steps": 6})
    net = NetworkConfig(trunk=GRUTrunkConfig(size=16), embed_dim=16, agent_id=True)
    common = dict(seed=5, num_seeds=2, updates_per_chunk=1, checkpoint_every=1, max_to_keep=0,
                  eval_episodes=4, gif=False)
    def ppo(devices, data):
        return make_ppo(PPOConfig(
            env=env, network=net, critic=CentralisedCritic(), num_steps=8, num_minibatches=2,
            update_epochs=1,
            run=RunConfig(total_timesteps=8 * 8 * 3, devices=devices, data_devices=data,
                          **common)))
    def close(a, b):
        chex.assert_trees_all_close(a.state.params, b.state.params, rtol=2e-5, atol=2e-6)
    def same_rows(dir_a, dir_b, name):
        a, b = read_jsonl(dir_a / name), read_jsonl(dir_b / name)
        assert len(a) == len(b) > 0, (name, len(a), len(b))
        for x, y in zip(a, b):
            for k in x:
                assert abs(x[k] - y[k]) <= 2e-4 * (1 + abs(x[k])), (name, k, x[k], y[k])

    out = Path(tempfile.mkdtemp())
    one = run(ppo(1, 1), ppo(1, 1).config.run, out / "one", show_progress=False)
    # 2 seeds x 2 data devices: stop after 2 chunks, resume on 1 x 4 (a different mesh).
    learner = ppo(2, 2)
    run(learner, learner.config.run, out / "mesh", stop_after_chunks=2, show_progress=False)
    learner = ppo(1, 4)
    mesh = run(learner, learner.config.run, out / "mesh", resume=True, show_progress=False)
    assert len(jax.tree.leaves(mesh.state.runner.obs)[0].sharding.device_set) == 4
    close(one, mesh)
    same_rows(out / "one", out / "mesh", "metrics.jsonl")
    same_rows(out / "one", out / "mesh", "eval.jsonl")

    # A replay learner: equal on a 2-device split; its buffer cannot move to another split.
    def vdn(data):
        return make_q_learning(QLearningConfig(
            env=env, network=net, num_steps=6, buffer_size=24, batch_size=4,
            learning_starts=0, target_update_interval=2, mixer=VDNMixerConfig(),
            run=RunConfig(total_timesteps=8 * 6 * 3, data_devices=data, **common)))
    q_one = run(vdn(1), vdn(1).config.run, out / "q_one", show_progress=False)
    run(vdn(2), vdn(2).config.run, out / "q_two", stop_after_chunks=2, show_progress=False)
    try:
        run(vdn(1), vdn(1).config.run, out / "q_two", resume=True, show_progress=False)
        raise AssertionError("a split replay buffer was resharded")
    except CheckpointMismatchError as error:
        assert "cannot be resharded to run.data_devices=1" in str(error), error
        assert "Resume with run.data_devices=2" in str(error), error
    q_two = run(vdn(2), vdn(2).config.run, out / "q_two", resume=True, show_progress=False)
    close(q_one, q_two)
    same_rows(out / "q_one", out / "q_two", "metrics.jsonl")
    print("MESH-OK")
    """
)


# Nightly: five runs on 4 host devices; CI keeps the two-process run and the emulated splits
# (tests/training/test_data_parallel.py) within its budget.
@pytest.mark.nightly
def test_meshes_of_seeds_and_data_give_one_device_results_and_resume_across_meshes():
    done = subprocess.run(
        [sys.executable, "-c", MESH_SCRIPT], capture_output=True, text=True, timeout=1200
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "MESH-OK" in done.stdout


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


TRAIN = [
    "alg=ippo",
    "env=MPE_simple_spread_v3",
    "env.num_envs=8",
    "+env.env_kwargs.max_steps=6",
    "num_steps=8",
    "num_minibatches=2",
    "update_epochs=1",
    "run.total_timesteps=192",
    "run.updates_per_chunk=1",
    "run.checkpoint_every=1",
    "run.max_to_keep=0",
    "run.eval_episodes=4",
    "run.gif=false",
    "--no-progress",
]


def _train(tmp_path: Path, *args: str, processes: int = 1) -> list[subprocess.CompletedProcess]:
    command = [sys.executable, "-m", "jaxmarl.train", *args]
    if processes == 1:
        return [subprocess.run(command, capture_output=True, text=True, timeout=900)]
    port = _free_port()
    return _processes(
        [
            [
                *command,
                f"--coordinator=localhost:{port}",
                f"--num-processes={processes}",
                f"--process-id={index}",
            ]
            for index in range(processes)
        ]
    )


def _processes(commands: list[list[str]], envs: list[dict] | None = None) -> list:
    """Runs the commands side by side; their completed processes, in order."""
    envs = envs or [{}] * len(commands)
    started = [
        subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, **env},
        )
        for command, env in zip(commands, envs)
    ]
    results = []
    for process in started:
        out, err = process.communicate(timeout=900)
        results.append(subprocess.CompletedProcess(process.args, process.returncode, out, err))
    return results


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _assert_same_rows(a: Path, b: Path) -> None:
    rows_a, rows_b = _rows(a), _rows(b)
    assert len(rows_a) == len(rows_b) > 0
    for x, y in zip(rows_a, rows_b):
        assert x.keys() == y.keys()
        for k in x:
            assert abs(x[k] - y[k]) <= 2e-4 * (1 + abs(x[k])), (a.name, k, x[k], y[k])


@pytest.mark.slow
def test_two_processes_give_one_device_results_and_resume_on_one(tmp_path):
    new = [*TRAIN, f"run.out_dir={tmp_path}"]
    for done in _train(tmp_path, *new, "run.data_devices=2", "run.name=two", processes=2):
        assert done.returncode == 0, done.stderr[-3000:]
    two = tmp_path / "two"
    # Process 0 alone wrote the run directory, and both took part in the checkpoints.
    assert sorted(p.name for p in (two / "checkpoints").iterdir()) == ["1", "2", "3"]
    (done,) = _train(tmp_path, *new, "run.name=one")
    assert done.returncode == 0, done.stderr[-3000:]
    one = tmp_path / "one"
    _assert_same_rows(one / "metrics.jsonl", two / "metrics.jsonl")
    _assert_same_rows(one / "eval.jsonl", two / "eval.jsonl")
    # Lose the last checkpoint, then resume the two-process run in one process (2 devices).
    import shutil

    shutil.rmtree(two / "checkpoints" / "3")
    (done,) = _train(tmp_path, f"--resume={two}", "--no-progress")
    assert done.returncode == 0, done.stderr[-3000:]
    _assert_same_rows(one / "metrics.jsonl", two / "metrics.jsonl")


# Nightly (CI budget): the launch path differs from the test above only in where the three
# values come from.
@pytest.mark.nightly
def test_slurm_variables_launch_the_same_two_process_run(tmp_path):
    new = [*TRAIN, f"run.out_dir={tmp_path}"]
    (done,) = _train(tmp_path, *new, "run.name=one")
    assert done.returncode == 0, done.stderr[-3000:]
    one = tmp_path / "one"
    # srun's variables for a 2-task step on one node, and --distributed: JAX's detection finds
    # the coordinator, the count and the ids; the results are the one-process run's.
    # JAX derives the coordinator's port from the job id (61440 + id % 4096): give it a free one.
    job_id = _free_port_in(61440, 65535) - 61440
    command = [sys.executable, "-m", "jaxmarl.train", *new, "run.data_devices=2", "run.name=slurm"]
    slurm = [
        {
            "SLURM_JOB_ID": str(job_id),
            "SLURM_STEP_NODELIST": "localhost",
            "SLURM_NTASKS": "2",
            "SLURM_PROCID": str(index),
            "SLURM_LOCALID": str(index),
        }
        for index in range(2)
    ]
    for done in _processes([[*command, "--distributed"]] * 2, slurm):
        assert done.returncode == 0, done.stderr[-3000:]
    _assert_same_rows(one / "metrics.jsonl", tmp_path / "slurm" / "metrics.jsonl")


def _free_port_in(low: int, high: int) -> int:
    import random

    for port in random.Random(os.getpid()).sample(range(low, high + 1), 200):
        with socket.socket() as s:
            try:
                s.bind(("localhost", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free port in [{low}, {high}]")


LAUNCH = ["--coordinator=localhost:{port}", "--num-processes={count}", "--process-id={index}"]


def _launched(tmp_path: Path, counts: list[int], env: dict | None = None, data: int = 4) -> list:
    """Processes 0..len(counts)-1 of one run, process i told that the run has counts[i]."""
    port = _free_port()
    command = [sys.executable, "-m", "jaxmarl.train", *TRAIN, f"run.out_dir={tmp_path}"]
    return _processes(
        [
            [
                *command,
                f"run.data_devices={data}",
                *(a.format(port=port, count=count, index=i) for a in LAUNCH),
            ]
            for i, count in enumerate(counts)
        ],
        [env or {}] * len(counts),
    )


def _one_error_line(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 2, done.stderr[-3000:]
    assert "Traceback" not in done.stderr and "Check failure" not in done.stderr, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1, done.stderr
    return errors[0]


def test_processes_launched_with_different_counts_all_stop_with_one_line(tmp_path):
    # Process 0 expects 2 and process 1 was told 4: both join (process 0's count decides), then
    # compare before anything compiles, and both stop; nothing is written.
    for done in _launched(tmp_path, [2, 4]):
        line = _one_error_line(done)
        assert "disagree on their number" in line and "process 1: 4" in line, line
    assert not any(tmp_path.iterdir())


def test_a_run_that_does_not_form_stops_after_the_join_timeout_with_one_line(tmp_path):
    # Process 0 waits for 4 processes, and only 2 were started: JAX's runtime would abort both
    # from C++ at its deadline; the join watchdog ends them first with exit status 2.
    env = {"JAXMARL_JOIN_TIMEOUT_S": "3"}
    first, second = _launched(tmp_path, [4, 4], env)
    assert "all 4 processes (--num-processes) to join" in _one_error_line(first)
    assert "process 0's coordinator" in _one_error_line(second)
    assert "JAXMARL_JOIN_TIMEOUT_S gives them longer" in _one_error_line(second)
    assert not any(tmp_path.iterdir())


def test_launch_values_from_the_environment():
    from jaxmarl.training.host.distributed import (
        Launch,
        cluster_process_count,
        join_timeout_s,
    )

    assert Launch.from_environment({}) is None
    assert Launch.from_environment(
        {"JAXMARL_COORDINATOR": "h:1", "JAXMARL_NUM_PROCESSES": "4", "JAXMARL_PROCESS_ID": "3"}
    ) == Launch("h:1", 4, 3)
    with pytest.raises(ValueError, match="missing process-id"):
        Launch.from_environment({"JAXMARL_COORDINATOR": "h:1", "JAXMARL_NUM_PROCESSES": "4"})
    assert cluster_process_count({}) is None
    assert cluster_process_count({"SLURM_NTASKS": "8"}) == 8
    assert cluster_process_count({"OMPI_COMM_WORLD_SIZE": "2"}) == 2
    assert join_timeout_s({}) == 120 and join_timeout_s({"JAXMARL_JOIN_TIMEOUT_S": "600"}) == 600
    with pytest.raises(ValueError, match="JAXMARL_JOIN_TIMEOUT_S must be >= 1"):
        join_timeout_s({"JAXMARL_JOIN_TIMEOUT_S": "0"})
    with pytest.raises(ValueError, match="JAXMARL_JOIN_TIMEOUT_S must be an integer"):
        join_timeout_s({"JAXMARL_JOIN_TIMEOUT_S": "soon"})


@pytest.mark.parametrize(
    "args, message",
    [
        (["--num-processes=2", "--process-id=0"], "missing coordinator"),
        (["--coordinator=localhost:1", "--num-processes=2", "--process-id=2"], "outside [0, 2)"),
        (["--coordinator=localhost", "--num-processes=2", "--process-id=0"], "needs a port"),
        (["--distributed", "--process-id=0"], "--distributed detects the launch"),
        (
            ["--coordinator=localhost:1", "--num-processes=3", "--process-id=0"],
            "1 devices do not split over --num-processes=3",
        ),
    ],
)
def test_a_bad_launch_is_one_line_and_exit_status_2(tmp_path, capsys, args, message):
    from jaxmarl.train import main

    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        assert main([*TRAIN, *args]) == 2
    finally:
        os.chdir(cwd)
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and message in err, err
