"""Lazy public names for a package ``__init__`` (PEP 562 module ``__getattr__``).

An env family's ``__init__`` runs whenever the registry is first consulted, so it must not
import its env modules (JAX programs, flax, scenario tables). It lists its public names and
the submodule each lives in instead; ``from jaxmarl.envs.mpe import SimpleSpreadMPE`` then
imports ``simple_spread`` at that moment, and only it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(
    package: str, exports: Mapping[str, str], namespace: dict[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of a package whose public names load on first use.

    Args:
        package: the package's ``__name__``.
        exports: public name -> the submodule of ``package`` that defines it.
        namespace: the package's ``globals()``; a loaded name is cached there, so the
            submodule is looked up once.

    Returns:
        ``(__getattr__, __dir__)`` to bind at the package's top level. A submodule's own name
        (``jaxmarl.envs.mpe.simple_spread``) also resolves, as after an eager import.
    """

    def __getattr__(name: str) -> Any:
        if name in exports:
            value = getattr(importlib.import_module(f"{package}.{exports[name]}"), name)
            namespace[name] = value
            return value
        if not name.startswith("__"):
            try:
                return importlib.import_module(f"{package}.{name}")
            except ModuleNotFoundError as error:
                if error.name != f"{package}.{name}":
                    raise  # the submodule exists but something it imports does not
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted({*namespace, *exports})

    return __getattr__, __dir__
