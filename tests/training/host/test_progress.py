"""Progress: plain lines off a terminal (steps, rate, ETA, metrics), tqdm on one, fallbacks."""

from __future__ import annotations

import builtins
import io

import jax.numpy as jnp
import numpy as np
import pytest

from jaxmarl.training.host.progress import Progress


class FakeClock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


class FakeTerminal(io.StringIO):
    def isatty(self):
        return True


def test_plain_lines_show_steps_rate_eta_and_chosen_metrics():
    clock, stream = FakeClock(), io.StringIO()  # StringIO is not a TTY: plain mode
    with Progress(
        1000, desc="IPPO", keys=("episode_return", "absent"), file=stream, clock=clock
    ) as p:
        clock.now += 10.0  # first chunk: compile + run
        p.update(np.int64(100), {"episode_return": jnp.float32(-12.5), "loss": 0.3})
        clock.now += 2.0  # steady state: 200 steps in 2 s
        p.update(300, {"episode_return": -10.0, "per_env": jnp.zeros(4)})
    lines = stream.getvalue().splitlines()
    assert lines[0] == (
        "IPPO: 100/1,000 env steps (10.0%) | 10 env steps/s | ETA 0:01:30 | episode_return=-12.5"
    )
    # The rate after the first update excludes compilation: (300 - 100) / 2 s = 100/s.
    assert lines[1] == (
        "IPPO: 300/1,000 env steps (30.0%) | 100 env steps/s | ETA 0:00:07 | episode_return=-10"
    )
    assert lines[2].startswith("IPPO: done: 300 env steps in 0:00:12")
    assert len(lines) == 3


def test_all_scalar_metrics_when_keys_is_none():
    stream = io.StringIO()
    progress = Progress(10, unit="updates", keys=None, file=stream, clock=FakeClock())
    progress.update(5, {"a": 1, "b": np.float64(0.25), "vec": np.ones(3)})
    assert stream.getvalue().rstrip().endswith("| a=1 b=0.25")
    assert "updates/s" in stream.getvalue()


def test_tqdm_bar_on_a_terminal_and_plain_under_ci(monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    terminal = FakeTerminal()
    with Progress(1000, desc="MAPPO", file=terminal) as progress:
        assert progress._bar is not None
        progress.update(500, {"episode_return": 3.25})
        assert progress._bar.n == 500
    assert "episode_return=3.25" in terminal.getvalue() and "MAPPO" in terminal.getvalue()

    monkeypatch.setenv("CI", "true")
    terminal = FakeTerminal()
    with Progress(1000, file=terminal) as progress:
        assert progress._bar is None
        progress.update(10)
    assert "10/1,000 env steps" in terminal.getvalue()


def test_falls_back_to_plain_lines_without_tqdm(monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    real_import = builtins.__import__

    def fake_import(name, *args, **kwargs):
        if name.startswith("tqdm"):
            raise ImportError("No module named 'tqdm'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)
    terminal = FakeTerminal()
    progress = Progress(100, file=terminal)
    progress.update(50)
    assert "50/100 env steps (50.0%)" in terminal.getvalue()
    with pytest.raises(ImportError, match="pip install tqdm"):
        Progress(100, mode="tqdm", file=terminal)


def test_resumed_run_starts_at_initial_steps():
    clock, stream = FakeClock(), io.StringIO()
    progress = Progress(1000, initial=600, file=stream, clock=clock)
    clock.now += 4.0
    progress.update(800)
    assert "800/1,000 env steps (80.0%) | 50 env steps/s | ETA 0:00:04" in stream.getvalue()
