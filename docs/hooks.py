"""mkdocs hooks: the package tree for mkdocstrings, and one page per env family and learner.

* ``envs/`` and ``baselines/`` install as ``jaxmarl.envs`` and ``jaxmarl.baselines`` (setup.py),
  which a static reader of the source tree cannot see. ``on_startup`` builds ``.docs-src/``, a
  tree of symlinks shaped like the installed package, for mkdocstrings to read.
* ``on_files`` adds a page per env family (its README, its GIF from ``docs/assets/gifs/`` and
  its public API) and per learner package (its API), so a new family or learner gets its page
  without editing the site's configuration.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / ".docs-src"


def _packages(folder: str) -> list[str]:
    return sorted(
        path.parent.name
        for path in (ROOT / folder).glob("*/__init__.py")
        if not path.parent.name.startswith("_")
    )


def on_startup(command, dirty):  # noqa: ARG001 - mkdocs' hook signature
    shutil.rmtree(SOURCE, ignore_errors=True)
    package = SOURCE / "jaxmarl"
    package.mkdir(parents=True)
    for entry in (ROOT / "jaxmarl").iterdir():
        if entry.name != "__pycache__":
            os.symlink(entry, package / entry.name)
    os.symlink(ROOT / "envs", package / "envs")
    os.symlink(ROOT / "baselines", package / "baselines")


def _env_classes(family: str) -> list[str]:
    """The registered env classes of a family, as dotted paths (from the registry)."""
    import jaxmarl
    from jaxmarl.registry import spec

    prefix = f"jaxmarl.envs.{family}."
    paths = []
    for env_id in jaxmarl.registered_envs:
        entry_point = spec(env_id).entry_point
        if isinstance(entry_point, str) and entry_point.startswith(prefix):
            paths.append(entry_point.replace(":", "."))
    return list(dict.fromkeys(paths))


def _family_page(family: str) -> str:
    gif = ROOT / "docs" / "assets" / "gifs" / f"{family}.gif"
    parts = [f'--8<-- "envs/{family}/README.md"\n']
    # Subpackages with a README of their own (OvercookedV2 in envs/overcooked/v2/).
    for readme in sorted((ROOT / "envs" / family).glob("*/README.md")):
        if (readme.parent / "__init__.py").exists():
            parts.append(f'\n--8<-- "envs/{family}/{readme.parent.name}/README.md"\n')
    if gif.exists():
        parts.append(f"\n## An episode\n\n![{family}](../assets/gifs/{family}.gif)\n")
    parts.append("\n## API\n")
    for path in _env_classes(family):
        parts.append(f"\n::: {path}\n    options:\n      heading_level: 3\n")
    return "".join(parts)


def _learner_page(learner: str) -> str:
    return f"::: jaxmarl.baselines.{learner}\n    options:\n      show_submodules: true\n"


def on_config(config):
    families = [{f: f"envs/{f}.md"} for f in _packages("envs")]
    learners = [{name: f"learners/{name}.md"} for name in _packages("baselines")]
    nav = []
    for entry in config.nav:
        ((title, value),) = entry.items()
        if title == "Environments":
            value = families
        elif title == "Learners":
            value = learners
        nav.append({title: value})
    config.nav = nav
    return config


def on_files(files, config):
    for family in _packages("envs"):
        files.append(File.generated(config, f"envs/{family}.md", content=_family_page(family)))
    for learner in _packages("baselines"):
        files.append(
            File.generated(config, f"learners/{learner}.md", content=_learner_page(learner))
        )
    return files
