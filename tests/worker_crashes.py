"""What the suite does when a pytest-xdist worker process dies mid-test (a segmentation fault
in native code, not a failed assertion; the one seen in CI was XLA:CPU running out of memory
mappings, now prevented in ``tests/conftest.py``).

- Each worker writes Python's fault handler dump (the stack of every thread at the crash) to a
  file of its own; the controller prints the dump in the terminal summary, under
  "worker crashes". Without this the dump goes to the worker's stderr, far above the summary,
  and a CI log's excerpt loses it.
- The test that crashed its worker runs once more, on a fresh worker. If it passes there, the
  suite passes and the summary still lists the crash and its stack; a second crash of the same
  test, a failed assertion, or a third crash in the session fails as always.

Rerunning only on crashes is why this is written here rather than taken from
pytest-rerunfailures: its reruns also repeat failed assertions, which must fail at once.
"""

from __future__ import annotations

import faulthandler
import os
import tempfile
from pathlib import Path

import pytest

_MAX_CRASH_RERUNS = 2  # in a session; more crashes than that is not bad luck but a bug
_DUMP_LINES = 80


def _log_path(worker_id: str) -> Path:
    return Path(tempfile.gettempdir()) / f"jaxmarl-pytest-{os.getpid()}-{worker_id}.faults"


@pytest.hookimpl(trylast=True)  # after pytest's faulthandler plugin points it at stderr
def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config, "workerinput"):  # in a worker: dump faults to the controller's file
        path = config.workerinput.get("jaxmarl_fault_log")
        if path:
            config._jaxmarl_fault_file = open(path, "wb", buffering=0)  # noqa: SIM115  # kept open until exit
            faulthandler.enable(file=config._jaxmarl_fault_file, all_threads=True)
        return
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(_Controller(), "jaxmarl_worker_crashes")


def _faulting_thread_first(dump: str) -> str:
    """The dump with the crashed thread's stack moved up to just after the error line (Python
    writes the other threads first, which would push it out of the printed lines)."""
    blocks = dump.split("\n\n")
    current = [b for b in blocks if b.startswith("Current thread")]
    others = [b for b in blocks if not b.startswith("Current thread")]
    return "\n\n".join([*others[:1], *current, *others[1:]])


class _Controller:
    """The controller's side: hands each worker a dump file, reruns crashed tests once."""

    def __init__(self) -> None:
        self.rerun: set[str] = set()
        self.crashes: list[tuple[str, str, bool, str]] = []  # (test id, worker, rerun, dump)
        self.paths: list[Path] = []

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node) -> None:
        # A replacement worker gets the crashed one's id, so the controller's pid and a
        # counter keep their files apart.
        path = _log_path(f"{node.gateway.id}-{len(self.paths)}")
        self.paths.append(path)
        node.workerinput["jaxmarl_fault_log"] = str(path)

    @pytest.hookimpl(optionalhook=True)
    def pytest_handlecrashitem(self, crashitem: str, report, sched):
        worker = report.node
        path = Path(worker.workerinput.get("jaxmarl_fault_log", ""))
        dump = path.read_text(errors="replace").strip() if path.is_file() else ""
        lines = _faulting_thread_first(dump).splitlines()
        if len(lines) > _DUMP_LINES:
            lines = [*lines[:_DUMP_LINES], f"... ({len(lines) - _DUMP_LINES} more lines)"]
        dump = "\n".join(lines) or "(the worker wrote no fault dump: killed, not crashed?)"
        report.longrepr = f"{report.longrepr}\n{dump}"
        rerun = crashitem not in self.rerun and len(self.rerun) < _MAX_CRASH_RERUNS
        self.crashes.append((crashitem, worker.gateway.id, rerun, dump))
        if not rerun:
            return None
        self.rerun.add(crashitem)
        sched.mark_test_pending(crashitem)
        report.outcome = "rerun"
        return True

    def pytest_report_teststatus(self, report):
        if report.outcome == "rerun":
            return "rerun", "R", ("RERUN", {"yellow": True})
        return None

    def pytest_terminal_summary(self, terminalreporter) -> None:
        if not self.crashes:
            return
        terminalreporter.section("worker crashes", sep="=", red=True, bold=True)
        for test_id, worker, rerun, dump in self.crashes:
            again = "runs again on a fresh worker" if rerun else "not rerun: it fails"
            terminalreporter.line(f"{test_id}: worker {worker} crashed ({again})")
            terminalreporter.line(dump)

    def pytest_unconfigure(self) -> None:
        for path in self.paths:
            path.unlink(missing_ok=True)
