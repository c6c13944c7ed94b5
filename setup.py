"""Maps the top-level folders into the single ``jaxmarl`` import namespace.

``envs/`` installs as ``jaxmarl.envs``, ``baselines/`` as ``jaxmarl.baselines`` and the YAML
presets in ``configs/`` as ``jaxmarl/configs/``. Metadata (package data included) lives in
pyproject.toml; only the package list, which needs a walk of the tree, lives here.
"""

from setuptools import find_namespace_packages, find_packages, setup

FOLDERS = {"jaxmarl": "jaxmarl", "jaxmarl.envs": "envs", "jaxmarl.baselines": "baselines"}
# Data-only folders (no __init__.py): configs/<alg>/<env>.yaml ships as jaxmarl/configs/ (files
# selected by pyproject's package-data), where jaxmarl.config.preset_path finds them; an editable
# install reads the repository's configs/ directly.
DATA_FOLDERS = {"jaxmarl.configs": "configs"}


def _packages() -> tuple[list[str], dict[str, str]]:
    packages, package_dir = [], {}
    for name, folder in FOLDERS.items():
        package_dir[name] = folder
        packages.append(name)
        packages += [f"{name}.{sub}" for sub in find_packages(where=folder)]
    for name, folder in DATA_FOLDERS.items():
        package_dir[name] = folder
        packages.append(name)
        # Subfolders (configs/ippo/) are listed too, or setuptools warns that they are ignored.
        packages += [f"{name}.{sub}" for sub in find_namespace_packages(where=folder)]
    return packages, package_dir


packages, package_dir = _packages()
setup(packages=packages, package_dir=package_dir)
