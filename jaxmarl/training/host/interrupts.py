"""Ctrl-C (SIGINT) handling that a training run can rely on.

Python turns Ctrl-C into a KeyboardInterrupt at the next bytecode, wherever that is, and two
places make that unreliable for a run:

* inside a garbage-collection callback (JAX registers one) the exception is printed as
  "Exception ignored" and dropped, and the run goes on as if nothing happened;
* inside orbax's asynchronous save it leaves one of orbax's threads (not a daemon) waiting for
  another for ever, and the process hangs at exit instead of stopping.

``latch_ctrl_c`` makes the first place harmless (a run checks ``raise_if_ctrl_c`` between chunks,
the latch raises one dropped after the last check when the function returns, and Python's
"Exception ignored" report of it is left out) and ``ctrl_c_held`` the second (the
save completes, then the interrupt is raised). Only the main thread can set a signal handler; in
any other thread both leave Ctrl-C as it is, and so does ``latch_ctrl_c`` in a process that
ignores it (a shell's background job starts so).
"""

from __future__ import annotations

import contextlib
import functools
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

_latched: list[int] = []  # SIGINTs received under latch_ctrl_c, not yet raised by a check


def _in_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def latch_ctrl_c(function: F) -> F:
    """Runs ``function`` with a Ctrl-C that raises KeyboardInterrupt at once, as usual, and is
    also remembered, so that ``raise_if_ctrl_c`` raises it again if Python dropped it."""

    @functools.wraps(function)
    def latched(*args: Any, **kwargs: Any) -> Any:
        if not _in_main_thread() or signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
            # Ctrl-C ignored (a background job of a shell): keep ignoring it, as before.
            return function(*args, **kwargs)

        def remember(signum: int, frame: Any) -> None:
            _latched.append(signum)
            raise KeyboardInterrupt

        report = sys.unraisablehook

        def unless_latched(unraisable: Any) -> None:
            # Python's "Exception ignored" report of a dropped Ctrl-C: it is raised again
            # between chunks, so the report would only alarm.
            if not (_latched and isinstance(unraisable.exc_value, KeyboardInterrupt)):
                report(unraisable)

        previous = signal.signal(signal.SIGINT, remember)
        sys.unraisablehook = unless_latched
        try:
            result = function(*args, **kwargs)
        finally:
            signal.signal(signal.SIGINT, previous)
            sys.unraisablehook = report
            dropped = bool(_latched)
            _latched.clear()
        if dropped:
            # Dropped after the function's last ``raise_if_ctrl_c`` (its last chunk, the final
            # save or plots): the function finished, but Ctrl-C still stops the process.
            raise KeyboardInterrupt
        return result

    return latched  # type: ignore[return-value]


def raise_if_ctrl_c() -> None:
    """Raises KeyboardInterrupt if a Ctrl-C came under ``latch_ctrl_c`` and was dropped."""
    if _latched:
        _latched.clear()
        raise KeyboardInterrupt


@contextlib.contextmanager
def ctrl_c_held() -> Iterator[None]:
    """Holds a Ctrl-C that arrives inside the block and passes it on when the block ends (to
    the handler that was there before, which raises KeyboardInterrupt by default)."""
    if not _in_main_thread():
        yield
        return
    received: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: received.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if received:
        if callable(previous):
            previous(signal.SIGINT, None)
        elif previous != signal.SIG_IGN:  # SIG_DFL, or a handler set outside Python
            raise KeyboardInterrupt
