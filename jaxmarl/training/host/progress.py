"""Progress display for the host loop: a tqdm bar on a terminal, else one plain line per update.

Called between jitted chunks with the cumulative step count and the chunk's metrics. On an
interactive terminal it draws a tqdm bar (tqdm is optional and imported lazily); when tqdm is
missing, the stream is not a TTY, or ``CI`` is set (CI logs keep every carriage return), it
prints one line per update instead::

    IPPO: 409,600/1,000,000 env steps (41.0%) | 51,230 env steps/s | ETA 0:00:11 | return=-23

Rates: the first update includes compilation, so after it the rate is measured from the first
update on (steady state) and the ETA uses that rate.

Example::

    with Progress(cfg.total_timesteps, desc="IPPO", keys=("episode_return",)) as progress:
        for chunk in range(num_chunks):
            state, metrics = train_chunk(state)
            progress.update(env_steps_done, metrics)
"""

from __future__ import annotations

import datetime
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, TextIO

from jaxmarl.training.host.logging import to_python_scalars

Mode = Literal["auto", "tqdm", "plain"]


class Progress:
    """Shows training progress in steps, steps/s, ETA and the latest values of some metrics.

    Args:
        total_steps: the step count at the end of training (e.g. ``total_timesteps``).
        unit: what a step is, for display.
        desc: a short label in front of the bar or line.
        keys: metric names whose latest values are shown (missing ones are skipped); ``None``
            shows every scalar metric given to ``update``.
        initial: steps already done (a resumed run).
        mode: ``"auto"`` (tqdm on an interactive terminal outside CI, plain lines otherwise),
            ``"tqdm"`` or ``"plain"``.
        file: the stream written to (default ``sys.stderr``, like tqdm).
        clock: seconds as a float (injectable for tests).

    Raises:
        ImportError: ``mode="tqdm"`` and tqdm is not installed.
    """

    def __init__(
        self,
        total_steps: int,
        unit: str = "env steps",
        desc: str | None = None,
        *,
        keys: Sequence[str] | None = ("episode_return",),
        initial: int = 0,
        mode: Mode = "auto",
        file: TextIO | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if mode not in ("auto", "tqdm", "plain"):
            raise ValueError(f"mode={mode!r}; choose 'auto', 'tqdm' or 'plain'")
        self.total_steps = int(total_steps)
        self.unit = unit
        self.desc = desc
        self.keys = None if keys is None else tuple(keys)
        self.file = file if file is not None else sys.stderr
        self._clock = clock
        self._start = (clock(), int(initial))
        self._first: tuple[float, int] | None = None  # after the first (compiling) update
        self.steps = int(initial)
        self._bar = self._make_bar(mode, int(initial))

    # ----------------------------------------------------------------- public
    def update(self, steps_done: int, metrics: Mapping[str, Any] | None = None) -> None:
        """Records ``steps_done`` (cumulative) steps done and shows ``metrics``' latest values.

        Non-scalar metrics are ignored here (they may be logged elsewhere).
        """
        now, steps_done = self._clock(), int(steps_done)
        shown = self._shown(metrics or {})
        if self._bar is not None:
            self._bar.update(steps_done - self._bar.n)
            if shown:
                self._bar.set_postfix({name: _format(v) for name, v in shown.items()}, refresh=True)
        else:
            print(self._line(now, steps_done, shown), file=self.file, flush=True)
        if self._first is None:
            self._first = (now, steps_done)
        self.steps = steps_done

    def rate(self, now: float | None = None, steps_done: int | None = None) -> float:
        """Steps per second: since the first update when there is one, else since the start."""
        now = self._clock() if now is None else now
        steps_done = self.steps if steps_done is None else steps_done
        since_time, since_steps = self._first if self._first is not None else self._start
        if self._first is not None and steps_done == since_steps:
            since_time, since_steps = self._start  # only one update so far
        elapsed = now - since_time
        return (steps_done - since_steps) / elapsed if elapsed > 0 else 0.0

    def close(self) -> None:
        """Ends the bar, or prints a summary line."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None
            return
        elapsed = self._clock() - self._start[0]
        print(
            f"{self._prefix()}done: {self.steps:,} {self.unit} in "
            f"{_duration(elapsed)} ({(self.steps - self._start[1]) / max(elapsed, 1e-9):,.0f} "
            f"{self.unit}/s overall)",
            file=self.file,
            flush=True,
        )

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # ----------------------------------------------------------------- helpers
    def _make_bar(self, mode: Mode, initial: int):
        if mode == "plain" or (mode == "auto" and not _interactive(self.file)):
            return None
        try:
            from tqdm.auto import tqdm
        except ImportError as error:
            if mode == "tqdm":
                raise ImportError(
                    "Progress(mode='tqdm') needs tqdm, which is not installed: pip install tqdm "
                    "(or use mode='plain')"
                ) from error
            return None
        return tqdm(
            total=self.total_steps,
            initial=initial,
            unit=f" {self.unit}",
            unit_scale=True,
            desc=self.desc,
            file=self.file,
            dynamic_ncols=True,
        )

    def _shown(self, metrics: Mapping[str, Any]) -> dict[str, float | int | bool]:
        names = list(metrics) if self.keys is None else [k for k in self.keys if k in metrics]
        shown = {}
        for name in names:
            try:
                shown.update(to_python_scalars({name: metrics[name]}))
            except (TypeError, ValueError):
                continue  # an array or a string: not for a one-line display
        return shown

    def _prefix(self) -> str:
        return f"{self.desc}: " if self.desc else ""

    def _line(self, now: float, steps_done: int, shown: Mapping[str, Any]) -> str:
        fraction = steps_done / self.total_steps if self.total_steps > 0 else 1.0
        rate = self.rate(now, steps_done)
        remaining = max(self.total_steps - steps_done, 0)
        eta = _duration(remaining / rate) if rate > 0 else "?"
        parts = [
            f"{self._prefix()}{steps_done:,}/{self.total_steps:,} {self.unit} ({fraction:.1%})",
            f"{rate:,.0f} {self.unit}/s",
            f"ETA {eta}",
        ]
        if shown:
            parts.append(" ".join(f"{name}={_format(value)}" for name, value in shown.items()))
        return " | ".join(parts)


def _interactive(stream: TextIO) -> bool:
    if os.environ.get("CI", "").lower() not in ("", "0", "false", "no"):
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def _format(value: float | int | bool) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def _duration(seconds: float) -> str:
    return str(datetime.timedelta(seconds=round(seconds)))
