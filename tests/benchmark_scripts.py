"""Loads a script under ``benchmarks/`` as a module, for tests of its pure pieces.

The benchmark scripts are not a package (they run as ``python benchmarks/<name>.py``), so tests
load them by path; nothing under ``if __name__ == "__main__"`` runs.
"""

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def load_benchmark_script(relative: str) -> ModuleType:
    """``benchmarks/<relative>.py`` as a module, e.g. ``"transfer/run_mpe_transfer"``."""
    path = BENCHMARKS / f"{relative}.py"
    module_spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[module_spec.name] = module  # dataclasses look their module up while defined
    module_spec.loader.exec_module(module)
    return module
