"""Ctrl-C that a training run can rely on: held across a save, and not lost when Python drops
it inside a garbage-collection callback."""

from __future__ import annotations

import gc
import os
import signal
import sys

import pytest

from jaxmarl.training.host.interrupts import ctrl_c_held, latch_ctrl_c, raise_if_ctrl_c


@pytest.fixture
def python_sigint():
    """Python's own SIGINT handler for the test (a pytest-xdist worker may ignore SIGINT)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def _ctrl_c() -> None:
    os.kill(os.getpid(), signal.SIGINT)


def _collect_with(callback) -> None:
    """A garbage collection that runs ``callback`` (the way JAX's runs on every collection)."""
    gc.callbacks.append(callback)
    try:
        gc.collect()
    finally:
        gc.callbacks.remove(callback)


def test_a_held_ctrl_c_lets_the_block_finish_then_raises(python_sigint):
    finished = []
    with pytest.raises(KeyboardInterrupt):
        with ctrl_c_held():
            _ctrl_c()
            finished.append(True)  # runs: the interrupt waits for the end of the block
    assert finished == [True]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_held_ctrl_c_is_passed_to_an_ignoring_handler_as_ignored():
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with ctrl_c_held():
            _ctrl_c()
    finally:
        signal.signal(signal.SIGINT, previous)


def test_a_ctrl_c_dropped_after_the_last_check_is_raised_when_the_function_returns(
    python_sigint, monkeypatch
):
    # The run's last chunk, final save or plots: no raise_if_ctrl_c comes after them. The
    # process must still stop (status 130), not exit 0 as if no Ctrl-C had come.
    monkeypatch.setattr(sys, "unraisablehook", lambda unraisable: None)

    def interrupted_during_collection(phase, info):
        if phase == "start":
            _ctrl_c()
            sum(range(100))

    finished = []

    @latch_ctrl_c
    def last_chunk_and_plots():
        raise_if_ctrl_c()
        _collect_with(interrupted_during_collection)
        finished.append(True)
        return "result"

    with pytest.raises(KeyboardInterrupt):
        last_chunk_and_plots()
    assert finished == [True]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler

    @latch_ctrl_c
    def quiet():
        return "result"

    assert quiet() == "result"  # nothing left latched from before


def test_the_latch_raises_a_ctrl_c_that_a_gc_callback_dropped(python_sigint, monkeypatch):
    reported, raised_in_callback = [], []
    monkeypatch.setattr(sys, "unraisablehook", lambda unraisable: reported.append(unraisable))

    def interrupted_during_collection(phase, info):
        if phase == "start":
            try:
                _ctrl_c()
                sum(range(100))  # the handler runs by here; gc drops its exception
            except KeyboardInterrupt:
                raised_in_callback.append(True)
                raise

    @latch_ctrl_c
    def chunk_loop():
        _collect_with(interrupted_during_collection)
        reached = True  # without the latch the run would go on from here
        raise_if_ctrl_c()
        return reached

    with pytest.raises(KeyboardInterrupt):
        chunk_loop()
    assert raised_in_callback == [True]  # where Python drops it
    assert reported == []  # and its "Exception ignored" report was left out
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    raise_if_ctrl_c()  # the latch was cleared on the way out


def test_other_unraisable_reports_still_reach_the_hook(python_sigint, monkeypatch):
    reported = []
    monkeypatch.setattr(sys, "unraisablehook", lambda unraisable: reported.append(unraisable))

    def failing_callback(phase, info):
        if phase == "start":
            raise ValueError("not a Ctrl-C")

    latch_ctrl_c(_collect_with)(failing_callback)
    assert [type(u.exc_value) for u in reported] == [ValueError]


def test_the_latch_raises_at_once_and_keeps_the_return_value(python_sigint):
    @latch_ctrl_c
    def interrupted():
        _ctrl_c()
        return "not reached"

    with pytest.raises(KeyboardInterrupt):
        interrupted()
    raise_if_ctrl_c()  # nothing left latched
    assert latch_ctrl_c(lambda: 3)() == 3


def test_the_latch_leaves_an_ignored_ctrl_c_ignored():
    # A shell starts its background jobs with SIGINT ignored; the run keeps that.
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:

        @latch_ctrl_c
        def chunk_loop():
            assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
            _ctrl_c()
            raise_if_ctrl_c()
            return "finished"

        assert chunk_loop() == "finished"
    finally:
        signal.signal(signal.SIGINT, previous)
