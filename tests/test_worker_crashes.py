"""tests/worker_crashes.py: a test that crashes its worker runs once more; nothing else does."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

SUITE = """
import ctypes
from pathlib import Path

def test_crashes_once():
    flag = Path(__file__).with_name("crashed_once")
    if not flag.exists():
        flag.write_text("")
        ctypes.string_at(0)

def test_crashes_always():
    ctypes.string_at(0)

def test_fails_an_assertion():
    Path(__file__).with_name("assertion_runs").open("a").write("x")
    assert 1 == 2

def test_passes():
    pass
"""


def test_only_a_crash_is_rerun_and_each_crash_is_reported_with_its_stack(tmp_path):
    (tmp_path / "conftest.py").write_text('pytest_plugins = ["tests.worker_crashes"]\n')
    (tmp_path / "test_suite.py").write_text(SUITE)
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-n", "2", "-p", "no:cacheprovider", "-q"],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    out = result.stdout
    assert result.returncode == 1, out
    assert "2 failed, 2 passed, 2 rerun" in out, out
    assert "FAILED test_suite.py::test_crashes_always - worker" in out
    assert "FAILED test_suite.py::test_fails_an_assertion - assert 1 == 2" in out
    assert (tmp_path / "assertion_runs").read_text() == "x"  # a failed assertion runs once
    # (CI=true keeps pytest from shortening the short summary's lines, which then repeat the
    # dumps: read the section alone.)
    summary = out.split("= worker crashes =")[1].split("= short test summary info =")[0]
    assert "test_suite.py::test_crashes_once: worker" in summary
    assert "(runs again on a fresh worker)" in summary
    assert "test_suite.py::test_crashes_always: worker" in summary
    assert "(not rerun: it fails)" in summary
    # The crashed thread's stack leads, down to the test's own line.
    assert summary.count("Fatal Python error: Segmentation fault\n\nCurrent thread") == 3
    assert 'test_suite.py", line 9 in test_crashes_once' in summary
    assert 'test_suite.py", line 12 in test_crashes_always' in summary
