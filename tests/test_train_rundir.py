"""Run directories that cannot be mixed up or stranded: one owner at a time, no metrics
appended across runs, interrupted and damaged runs that resume, finished runs left alone, and
user errors as one message with exit status 2."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from jaxmarl import train
from jaxmarl.config import save_config
from jaxmarl.training.host import logging as host_logging
from jaxmarl.training.host.logging import read_jsonl
from jaxmarl.training.host.rundir import RunDirBusyError, RunDirLock
from tests.test_train_cli import TINY as CLI_TINY

TINY = [*CLI_TINY, "--no-progress"]


def _tiny(tmp_path, name="run", *extra):
    return [*TINY, f"run.out_dir={tmp_path}", f"run.name={name}", *extra]


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """A finished TINY run (3 chunks, checkpoints 1, 2, 3), to copy."""
    out = tmp_path_factory.mktemp("finished")
    assert train.main(_tiny(out)) == 0
    return out / "run"


def _copy(run_dir, tmp_path):
    import shutil

    return shutil.copytree(run_dir, tmp_path / "copy", ignore=shutil.ignore_patterns(".lock"))


# --------------------------------------------------------------------------- case 1: one owner
def test_lock_names_its_owner_and_a_dead_owner_is_taken_over(tmp_path):
    with RunDirLock(tmp_path) as lock:
        assert lock.took_over is None
        with pytest.raises(RunDirBusyError, match=rf"is in use by pid {os.getpid()} on "):
            RunDirLock(tmp_path).acquire()
    assert (tmp_path / ".lock").read_text() == ""  # released: nobody named
    # A process that dies keeps no flock, but its text stays in the file.
    (tmp_path / ".lock").write_text("pid 999999 on elsewhere (since 2024-01-01T00:00:00)\n")
    with RunDirLock(tmp_path) as lock:
        assert lock.took_over.startswith("pid 999999 on elsewhere")


def test_a_second_run_on_a_locked_directory_exits_2_naming_the_owner(tmp_path, capsys):
    (tmp_path / "run").mkdir()
    with RunDirLock(tmp_path / "run"):
        assert train.main(_tiny(tmp_path)) == 2
    assert f"is in use by pid {os.getpid()}" in capsys.readouterr().err
    assert not (tmp_path / "run" / "config.yaml").exists()  # nothing written by the loser


def test_a_stale_lock_is_taken_over_with_a_message(finished, tmp_path, capsys):
    run_dir = _copy(finished, tmp_path)
    (run_dir / ".lock").write_text("pid 999999 on elsewhere (since 2024-01-01T00:00:00)\n")
    assert train.main(["--resume", str(run_dir)]) == 0
    out = capsys.readouterr().out
    assert "took over the lock left by pid 999999 on elsewhere" in out


def test_an_error_set_off_by_ctrl_c_is_an_interruption(tmp_path, monkeypatch, capsys):
    """A Ctrl-C inside a C extension's import surfaces as ``ImportError`` caused by it."""

    def import_interrupted(*args):
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as ctrl_c:
            raise ImportError("initialization failed") from ctrl_c

    monkeypatch.setattr(train, "_execute_locked", import_interrupted)
    assert train.main(_tiny(tmp_path)) == train.INTERRUPTED
    assert "interrupted: " in capsys.readouterr().err
    assert (tmp_path / "run" / ".lock").read_text() == ""

    def failed(*args):
        raise ImportError("a real import error")

    monkeypatch.setattr(train, "_execute_locked", failed)
    with pytest.raises(ImportError, match="a real import error"):
        train.main(_tiny(tmp_path))


def _start(argv, tmp_path):
    """``python -m jaxmarl.train`` in a process of its own, its stderr to a file (a pipe that
    nobody reads blocks the writer once full)."""
    stderr = tmp_path / "first.stderr"
    with stderr.open("w") as handle:
        process = subprocess.Popen(
            [sys.executable, "-m", "jaxmarl.train", *argv],
            env={**os.environ, "JAX_PLATFORMS": "cpu"},
            stdout=subprocess.DEVNULL,
            stderr=handle,
            # Ctrl-C as at a terminal: a suite run as a shell's background job would otherwise
            # pass on its ignored SIGINT, and the run would rightly ignore it.
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
    return process, stderr


def _ctrl_c(process) -> None:
    process.send_signal(signal.SIGINT)
    # Python sees the Ctrl-C only once XLA returns: the process may still be compiling its
    # chunk, which on a loaded 2-core CI machine once took over 60 s.
    process.wait(timeout=180)


def test_two_processes_on_one_run_name(tmp_path, capsys):
    """A real second process: the one that comes second is refused and names the first."""
    argv = _tiny(tmp_path, "run", "run.total_timesteps=16000000", "run.updates_per_chunk=50")
    first, stderr = _start(argv, tmp_path)
    lock_file, run_info = tmp_path / "run" / ".lock", tmp_path / "run" / "run.json"
    try:
        # Ctrl-C only once the run is written: one sent between taking the lock and writing
        # run.json leaves nothing to resume (that case is the test below).
        deadline = time.monotonic() + 60
        while not (lock_file.exists() and lock_file.read_text() and run_info.exists()):
            assert first.poll() is None, stderr.read_text()
            assert time.monotonic() < deadline, "the first process never wrote its run"
            time.sleep(0.05)
        assert train.main(_tiny(tmp_path)) == 2
        assert f"is in use by pid {first.pid} on " in capsys.readouterr().err
    finally:
        _ctrl_c(first)
    assert first.returncode == train.INTERRUPTED, stderr.read_text()
    assert f"interrupted: {tmp_path / 'run'} keeps its complete checkpoints" in stderr.read_text()
    assert lock_file.read_text() == ""  # Ctrl-C releases the lock
    assert json.loads(run_info.read_text())["alg"] == "ippo"


def test_a_ctrl_c_before_the_run_is_written_says_nothing_was_saved(tmp_path, monkeypatch, capsys):
    """Between taking the lock and writing run.json there is nothing --resume could continue;
    the message says so, and the same command then starts afresh."""

    def interrupted(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(train, "save_config", interrupted)
    assert train.main(_tiny(tmp_path)) == train.INTERRUPTED
    err = capsys.readouterr().err
    assert f"interrupted: before {tmp_path / 'run'} held a run; nothing was saved" in err
    assert "--resume" not in err
    assert (tmp_path / "run" / ".lock").read_text() == ""
    train.check_fresh(tmp_path / "run")  # a fresh start is not refused


# --------------------------------------------------------------------------- case 2: no appending
def test_a_fresh_start_over_old_metrics_is_refused_unless_overwrite(finished, tmp_path, capsys):
    run_dir = _copy(finished, tmp_path)
    old_rows = read_jsonl(run_dir / "metrics.jsonl")
    import shutil

    shutil.rmtree(run_dir / "checkpoints")  # the user deleted the checkpoints only
    argv = _tiny(tmp_path, "copy", "run.seed=5")
    assert train.main(argv) == 2
    assert "already holds a run" in capsys.readouterr().err
    assert train.main([*argv, "--overwrite"]) == 0
    assert "moved the previous run's files into" in capsys.readouterr().out
    (aside,) = run_dir.glob(".replaced-*")
    assert read_jsonl(aside / "metrics.jsonl") == old_rows
    rows = read_jsonl(run_dir / "metrics.jsonl")
    assert [r["update"] for r in rows] == [1, 2, 3]  # not appended to the old rows
    assert "seed: 5" in (run_dir / "config.yaml").read_text()


# --------------------------------------------------------------------------- case 3: stranded start
def _interrupted_before_first_checkpoint(tmp_path, with_metrics):
    """The directory a Ctrl-C during the first checkpoint leaves: config, run.json, an
    orbax temporary folder, and (with_metrics) the first chunk's metrics."""
    command = train.parse(_tiny(tmp_path))
    run_dir = command.run_dir
    (run_dir / "checkpoints" / "1.orbax-checkpoint-tmp-1700000000").mkdir(parents=True)
    save_config(command.config, run_dir / "config.yaml")
    (run_dir / "run.json").write_text('{"alg": "ippo"}\n')
    if with_metrics:
        row = {"step": 1, "update": 1, "env_steps": 16, "seed": 0, "episode_return": 1.0}
        (run_dir / "metrics.jsonl").write_text(json.dumps(row) + "\n")
    return run_dir


def test_a_run_stopped_before_its_first_checkpoint_restarts_with_resume(tmp_path, capsys):
    run_dir = _interrupted_before_first_checkpoint(tmp_path, with_metrics=True)
    assert train.main(_tiny(tmp_path)) == 2
    assert f"restart it with --resume {run_dir}" in capsys.readouterr().err
    assert train.main(["--resume", str(run_dir)]) == 0
    assert "starting it from the beginning" in capsys.readouterr().out
    rows = read_jsonl(run_dir / "metrics.jsonl")
    assert [r["update"] for r in rows] == [1, 2, 3]
    assert rows[0]["episode_return"] != 1.0  # the interrupted row is gone


def test_a_start_stopped_before_any_metrics_runs_again_with_the_same_command(tmp_path):
    run_dir = _interrupted_before_first_checkpoint(tmp_path, with_metrics=False)
    assert train.main(_tiny(tmp_path)) == 0
    assert [r["update"] for r in read_jsonl(run_dir / "metrics.jsonl")] == [1, 2, 3]


def test_a_ctrl_c_dropped_between_writing_the_run_and_training_stops_the_run(
    tmp_path, monkeypatch, capsys
):
    """Python drops a Ctrl-C that lands in a garbage-collection callback (XLA has one). One that
    came after run.json, among the imports before the training loop, was lost and the run went
    on to exit 0 (seen in a fresh-clone suite run); the command now latches it from the start."""
    import gc

    monkeypatch.setattr(sys, "unraisablehook", lambda unraisable: None)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)  # a worker may ignore it

    def dropped_ctrl_c(phase, info):
        if phase == "start":
            os.kill(os.getpid(), signal.SIGINT)
            sum(range(100))  # the handler runs by here; gc drops its KeyboardInterrupt

    def save_config_then_ctrl_c(*args):
        save_config(*args)
        gc.callbacks.append(dropped_ctrl_c)
        try:
            gc.collect()
        finally:
            gc.callbacks.remove(dropped_ctrl_c)

    monkeypatch.setattr(train, "save_config", save_config_then_ctrl_c)
    try:
        assert train.main(_tiny(tmp_path)) == train.INTERRUPTED
    finally:
        signal.signal(signal.SIGINT, previous)
    assert "interrupted:" in capsys.readouterr().err
    assert not (tmp_path / "run" / "metrics.jsonl").exists() or not read_jsonl(
        tmp_path / "run" / "metrics.jsonl"
    )


def test_a_real_ctrl_c_before_the_first_checkpoint_then_the_documented_restart(tmp_path, capsys):
    """SIGINT while the first process compiles (run.json is written just before), then
    ``--resume RUN_DIR`` trains the run from the beginning."""
    first, stderr = _start(_tiny(tmp_path), tmp_path)
    run_dir = tmp_path / "run"
    try:
        deadline = time.monotonic() + 60
        while not (run_dir / "run.json").exists():
            assert first.poll() is None, stderr.read_text()
            assert time.monotonic() < deadline, "the first process never wrote run.json"
            time.sleep(0.02)
    finally:
        _ctrl_c(first)
    assert first.returncode == train.INTERRUPTED, stderr.read_text()  # interrupted, not finished
    from jaxmarl.training.host.rundir import complete_steps

    assert not complete_steps(run_dir)  # stranded: no complete checkpoint
    assert train.main(["--resume", str(run_dir), "--no-progress"]) == 0
    assert "starting it from the beginning" in capsys.readouterr().out
    assert [r["update"] for r in read_jsonl(run_dir / "metrics.jsonl")] == [1, 2, 3]


# --------------------------------------------------------------------------- cases 4, 5: damage
def _damage(step_dir, drop_metadata):
    for folder in ("state/d", "state/ocdbt.process_0/d"):
        for path in (step_dir / folder).iterdir():
            os.truncate(path, 10)
    if drop_metadata:
        (step_dir / "_CHECKPOINT_METADATA").unlink()


@pytest.mark.parametrize("drop_metadata", [False, True], ids=["truncated", "metadata-gone"])
def test_a_damaged_latest_checkpoint_falls_back_in_one_line(
    finished, tmp_path, capfd, monkeypatch, drop_metadata
):
    run_dir = _copy(finished, tmp_path)
    rows = read_jsonl(run_dir / "metrics.jsonl")
    _damage(run_dir / "checkpoints" / "3", drop_metadata)
    # Python prints unraisable errors through this hook (pytest's own would hide them): the
    # failed read's late asyncio callbacks ("Event loop is closed") must not reach it.
    unraisable = []
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)
    assert train.main(["--resume", str(run_dir)]) == 0
    time.sleep(0.2)
    assert unraisable == []
    err = capfd.readouterr().err
    warning = [line for line in err.splitlines() if line.startswith("warning:")]
    assert len(warning) == 1 and "checkpoint step 3" in warning[0]
    assert "resuming from step 2" in warning[0]
    assert "Traceback" not in err and "Event loop is closed" not in err
    assert read_jsonl(run_dir / "metrics.jsonl") == rows  # chunk 3 trained again, same rows


def test_late_asyncio_callbacks_of_a_failed_read_are_not_printed(monkeypatch):
    """Orbax closes its event loop when a read fails while TensorStore reads are in flight;
    each late callback used to print a traceback ("Event loop is closed"), dozens of them."""
    import asyncio
    import types

    from jaxmarl.training.host import checkpoint

    shown = []
    monkeypatch.setattr(sys, "unraisablehook", shown.append)
    checkpoint._quiet_closed_loop_callbacks()
    loop = asyncio.new_event_loop()
    loop.close()
    try:
        loop.call_soon_threadsafe(print)
    except RuntimeError as error:
        late = types.SimpleNamespace(exc_value=error, exc_traceback=error.__traceback__)
    other = types.SimpleNamespace(exc_value=RuntimeError("other"), exc_traceback=None)
    sys.unraisablehook(late)
    sys.unraisablehook(other)
    assert shown == [other]


def test_resume_from_a_chosen_step(finished, tmp_path, capsys):
    run_dir = _copy(finished, tmp_path)
    rows = read_jsonl(run_dir / "metrics.jsonl")
    assert train.main(["--resume", str(run_dir), "--step", "1"]) == 0
    assert len(list((run_dir / "checkpoints").glob("[23].unused-*"))) == 2
    assert read_jsonl(run_dir / "metrics.jsonl") == rows
    assert train.main(["--resume", str(run_dir), "--step", "7"]) == 2
    assert "no checkpoint for step 7" in capsys.readouterr().err


# --------------------------------------------------------------------------- cases 6, 7: resume
def test_resuming_a_finished_run_changes_nothing(finished, tmp_path, capsys):
    run_dir = _copy(finished, tmp_path)
    summary = (run_dir / "summary.md").read_text()
    assert "greedy evaluation return" in summary
    mtimes = {p: p.stat().st_mtime_ns for p in run_dir.rglob("*")}
    assert train.main(["--resume", str(run_dir)]) == 0
    assert "has finished (3 updates); nothing to do" in capsys.readouterr().out
    assert {p: p.stat().st_mtime_ns for p in run_dir.rglob("*") if p.name != ".lock"} == {
        p: t for p, t in mtimes.items()
    }


def test_preset_on_resume_is_refused(finished, capsys):
    argv = ["--resume", str(finished), "preset=MPE_simple_spread_v3"]
    assert train.main(argv) == 2
    assert "preset=MPE_simple_spread_v3 cannot apply when resuming" in capsys.readouterr().err


# --------------------------------------------------------------------------- cases 8, 9: rc 2
def test_user_errors_exit_2_with_one_message(tmp_path, capsys):
    (tmp_path / "afile").write_text("")
    cases = [
        (["env.env_kwargs={num_agnts: 3}"], "unknown argument 'num_agnts'; did you mean"),
        ([f"run.out_dir={tmp_path / 'afile'}"], "is a file, not a folder"),
    ]
    for extra, message in cases:
        assert train.main(_tiny(tmp_path, "bad", *extra)) == 2
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1 and "Traceback" not in err
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "run.json").write_text("{not json")
    assert train.main(["--resume", str(broken)]) == 2
    assert f"{broken / 'run.json'} is damaged: not JSON" in capsys.readouterr().err
    (broken / "run.json").write_text('{"alg": "ippo"}')
    assert train.main(["--resume", str(broken)]) == 2
    assert "has run.json but no config.yaml" in capsys.readouterr().err


def test_a_missing_optional_logger_fails_before_anything_is_written(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(host_logging._MODULES, "tensorboard", "no_such_module_for_jaxmarl")
    assert train.main(_tiny(tmp_path, "tb", "run.loggers=[jsonl,tensorboard]")) == 2
    assert "needs tensorboardX, which is not installed" in capsys.readouterr().err
    assert not (tmp_path / "tb").exists()
