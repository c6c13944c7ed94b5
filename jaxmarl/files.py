"""Atomic file replacement for what a run writes beside its checkpoints (config, logs, plots).

A reader, or a process killed mid-write, sees the old file or the new one, never a part: the
new contents go to a hidden sibling, are synced to disk, then renamed over the target. Without
the sync a crash just after the rename can leave an empty file where the old one was.
"""

from __future__ import annotations

import os
from pathlib import Path


def replace_bytes(path: Path, data: bytes) -> None:
    """Replaces ``path``'s contents with ``data`` atomically (write a sibling, fsync, rename)."""
    partial = path.with_name(f".{path.name}.partial")
    with partial.open("wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    partial.replace(path)


def replace_text(path: Path, text: str) -> None:
    """``replace_bytes`` for text (UTF-8). Also used by benchmark drivers for files that must
    survive their own kill."""
    replace_bytes(path, text.encode())
