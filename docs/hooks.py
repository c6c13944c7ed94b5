"""mkdocs hooks: the package tree for mkdocstrings, and one page per env family and learner.

* ``envs/`` and ``baselines/`` install as ``jaxmarl.envs`` and ``jaxmarl.baselines`` (setup.py),
  which a static reader of the source tree cannot see. ``on_startup`` builds ``.docs-src/``, a
  tree of symlinks shaped like the installed package, for mkdocstrings to read.
* ``on_files`` adds a page per env family (its README, its GIF from ``docs/assets/gifs/`` and
  its public API) and per learner package (its API), so a new family or learner gets its page
  without editing the site's configuration.
* ``on_page_markdown`` expands the pages' ``--8<--`` includes of repository files (the README,
  the families' READMEs) itself, so that their links, written relative to the file in the
  repository, still lead somewhere on the site: to the site's page of that file where it has
  one (a family's README, a guide, a notebook), else to the file in the repository on GitHub.
"""

from __future__ import annotations

import os
import posixpath
import re
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


INCLUDE = re.compile(r'^--8<-- "([^"]+)"[ \t]*$', re.MULTILINE)
LINK = re.compile(r"(!?\[[^\]]*\]\()([^)\s]+)(\))")
FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.MULTILINE | re.DOTALL)


def site_page(repo_path: str, pages: set[str]) -> str | None:
    """The site page (its path under ``docs/``) that shows the repository file ``repo_path``."""
    parts = repo_path.split("/")
    candidates = [repo_path.removeprefix("docs/")]
    if repo_path == "README.md":
        candidates = ["index.md"]
    elif parts[0] == "envs" and parts[-1] == "README.md" and len(parts) >= 3:
        candidates = [f"envs/{parts[1]}.md"]  # a subpackage's README is on its family's page
    return next((c for c in candidates if c in pages), None)


def rewrite_links(text: str, source: str, page: str, pages: set[str], repo_url: str) -> str:
    """``text`` of the repository file ``source`` with its relative links made to work from the
    site page ``page``: to the site page of the linked file where there is one, else to the
    file on GitHub (``repo_url``). Code blocks, absolute URLs and anchors are left alone, and so
    is a link to nothing in the repository (the strict build then reports it)."""
    base = posixpath.dirname(source)

    def target(match: re.Match) -> str:
        link = match.group(2)
        if re.match(r"^([a-z][a-z0-9+.-]*:|#|/)", link):
            return match.group(0)
        path, hash_, anchor = link.partition("#")
        repo_path = posixpath.normpath(posixpath.join(base, path))
        on_site = site_page(repo_path, pages)
        if on_site is not None:
            new = posixpath.relpath(on_site, posixpath.dirname(page) or ".")
        elif (ROOT / repo_path).exists():
            kind = "tree" if (ROOT / repo_path).is_dir() else "blob"
            kind = "raw" if match.group(1).startswith("!") else kind
            new = f"{repo_url.rstrip('/')}/{kind}/main/{repo_path}"
        else:
            return match.group(0)
        return f"{match.group(1)}{new}{hash_}{anchor}{match.group(3)}"

    out, last = [], 0
    for fence in FENCE.finditer(text):
        out += [LINK.sub(target, text[last : fence.start()]), fence.group(0)]
        last = fence.end()
    return "".join([*out, LINK.sub(target, text[last:])])


def on_page_markdown(markdown, page, config, files):  # noqa: ARG001 - mkdocs' hook signature
    pages = {f.src_uri for f in files.documentation_pages()}

    def include(match: re.Match) -> str:
        source = match.group(1)
        text = (ROOT / source).read_text(encoding="utf-8")
        return rewrite_links(text, source, page.file.src_uri, pages, config.repo_url)

    return INCLUDE.sub(include, markdown)
