"""Metric loggers: file formats, scalar conversion, resume truncation, optional backends."""

from __future__ import annotations

import builtins
import csv
import math

import jax.numpy as jnp
import numpy as np
import pytest

from jaxmarl.training.host.logging import (
    CsvLogger,
    JsonlLogger,
    Logger,
    MultiLogger,
    TensorBoardLogger,
    WandbLogger,
    make_logger,
    read_jsonl,
    rows_with_episodes,
    to_python_scalars,
)


def test_scalars_from_jax_and_numpy_become_python_numbers():
    converted = to_python_scalars(
        {
            "ret": jnp.float32(1.5),
            "len": np.int64(7),
            "done": np.bool_(True),
            "one": jnp.array([2.0]),
            "py": 3,
        }
    )
    assert converted == {"ret": 1.5, "len": 7, "done": True, "one": 2.0, "py": 3}
    assert [type(v) for v in converted.values()] == [float, int, bool, float, int]
    with pytest.raises(ValueError, match=r"metric 'loss' has shape \(3,\); log a scalar"):
        to_python_scalars({"loss": jnp.zeros(3)})
    with pytest.raises(TypeError, match="metric 'name' has dtype"):
        to_python_scalars({"name": "abc"})


def test_jsonl_appends_flushes_and_reads_back(tmp_path):
    path = tmp_path / "run" / "metrics.jsonl"
    logger = JsonlLogger(path)
    assert isinstance(logger, Logger)
    logger.log(1, {"episode_return": jnp.float32(0.25), "env_steps": np.int32(64)})
    # Flushed at every call: readable before close.
    assert read_jsonl(path) == [{"step": 1, "episode_return": 0.25, "env_steps": 64}]
    logger.log(2, {"episode_return": float("nan")})
    logger.close()
    with JsonlLogger(path) as again:  # appends
        again.log(3, {"loss": 1.0})
    records = read_jsonl(path)
    assert [r["step"] for r in records] == [1, 2, 3]
    assert math.isnan(records[1]["episode_return"])
    with pytest.raises(ValueError, match="'step' is reserved"):
        JsonlLogger(path).log(4, {"step": 1})


def test_jsonl_survives_a_truncated_last_line_and_resume_truncation(tmp_path):
    path = tmp_path / "metrics.jsonl"
    with JsonlLogger(path) as logger:
        for step in range(1, 6):
            logger.log(step, {"x": step})
    with path.open("a") as handle:
        handle.write('{"step": 6, "x"')  # killed mid-write
    with pytest.warns(RuntimeWarning, match="truncated last line"):
        assert len(read_jsonl(path)) == 5
    # Resuming from a checkpoint at step 3 drops what was logged after it (and the partial line).
    with pytest.warns(RuntimeWarning):
        logger = JsonlLogger(path, resume_step=3)
    logger.log(4, {"x": 40})
    logger.close()
    assert read_jsonl(path) == [{"step": s, "x": x} for s, x in ((1, 1), (2, 2), (3, 3), (4, 40))]

    # Without resume_step, a partial last line gets a newline so new records stay parseable.
    path.write_text('{"step": 1}\n{"step": 2, "x"')
    with JsonlLogger(path) as logger:
        logger.log(3, {"x": 3})
    with pytest.raises(ValueError, match=r"metrics.jsonl:2 is not valid JSON"):
        read_jsonl(path)


def test_csv_widens_header_for_new_keys_and_keeps_rows_aligned(tmp_path):
    path = tmp_path / "metrics.csv"
    with CsvLogger(path) as logger:
        logger.log(1, {"loss": 0.5})
        logger.log(2, {"loss": 0.25, "episode_return": jnp.float32(3.0)})  # new key: rewrite
        logger.log(3, {"episode_return": 4.0})  # missing key: empty cell
    with path.open(newline="") as handle:
        rows = list(csv.reader(handle))
    assert rows == [
        ["step", "loss", "episode_return"],
        ["1", "0.5", ""],
        ["2", "0.25", "3.0"],
        ["3", "", "4.0"],
    ]
    # Exact floats, and reopening appends under the existing header.
    with CsvLogger(path) as logger:
        logger.log(4, {"loss": 0.1 + 0.2})
    with path.open(newline="") as handle:
        last = list(csv.DictReader(handle))[-1]
    assert float(last["loss"]) == 0.1 + 0.2 and last["episode_return"] == ""
    assert not list(tmp_path.glob(".*partial"))


def test_csv_resume_drops_rows_after_the_checkpoint(tmp_path):
    path = tmp_path / "metrics.csv"
    with CsvLogger(path) as logger:
        for step in range(1, 5):
            logger.log(step, {"x": step})
    with CsvLogger(path, resume_step=2) as logger:
        logger.log(3, {"x": 30})
    with path.open(newline="") as handle:
        assert [(r["step"], r["x"]) for r in csv.DictReader(handle)] == [
            ("1", "1"),
            ("2", "2"),
            ("3", "30"),
        ]


def _fail_import(monkeypatch, module_name):
    real_import = builtins.__import__

    def fake_import(name, *args, **kwargs):
        if name == module_name or name.startswith(module_name + "."):
            raise ImportError(f"No module named {module_name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)


def test_optional_backends_say_how_to_install(tmp_path, monkeypatch):
    _fail_import(monkeypatch, "tensorboardX")
    _fail_import(monkeypatch, "wandb")
    with pytest.raises(ImportError, match="pip install tensorboardX"):
        TensorBoardLogger(tmp_path / "tb")
    with pytest.raises(ImportError, match="pip install wandb"):
        WandbLogger(project="p")
    # make_logger closes what it opened before re-raising.
    with pytest.raises(ImportError, match="pip install wandb"):
        make_logger(("jsonl", "wandb"), tmp_path)


class _Recorder:
    def __init__(self, fail_close=False):
        self.calls, self.closed, self.fail_close = [], False, fail_close

    def log(self, step, metrics):
        self.calls.append((step, dict(metrics)))

    def close(self):
        self.closed = True
        if self.fail_close:
            raise OSError("disk gone")


def test_multi_logger_fans_out_and_closes_everything():
    first, second = _Recorder(fail_close=True), _Recorder()
    logger = MultiLogger([first, second])
    logger.log(5, {"x": 1.0})
    assert first.calls == second.calls == [(5, {"x": 1.0})]
    with pytest.raises(OSError, match="disk gone"):
        logger.close()
    assert first.closed and second.closed


def test_make_logger_builds_run_dir_files(tmp_path):
    with make_logger(("jsonl", "csv"), tmp_path / "run") as logger:
        logger.log(1, {"x": 1})
    assert read_jsonl(tmp_path / "run" / "metrics.jsonl") == [{"step": 1, "x": 1}]
    assert (tmp_path / "run" / "metrics.csv").read_text().splitlines() == ["step,x", "1,1"]
    with pytest.raises(ValueError, match="unknown logger"):
        make_logger(("jsonll",), tmp_path)


def test_rows_with_episodes_drops_updates_where_no_episode_ended():
    rows = [
        {"update": 1, "episodes": 4.0, "episode_return": -30.0},
        {"update": 2, "episodes": 0.0, "episode_return": 0.0},  # placeholder, not a return
        {"update": 3, "episode_return": -20.0},  # a learner that does not count episodes
    ]
    assert [r["update"] for r in rows_with_episodes(rows)] == [1, 3]
