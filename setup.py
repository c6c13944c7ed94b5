"""Maps the top-level folders into the single ``jaxmarl`` import namespace.

``envs/`` installs as ``jaxmarl.envs`` and ``baselines/`` as ``jaxmarl.baselines``. Metadata lives
in pyproject.toml; only the package list, which needs a walk of the tree, lives here.
"""

from setuptools import find_packages, setup

FOLDERS = {"jaxmarl": "jaxmarl", "jaxmarl.envs": "envs", "jaxmarl.baselines": "baselines"}


def _packages() -> tuple[list[str], dict[str, str]]:
    packages, package_dir = [], {}
    for name, folder in FOLDERS.items():
        package_dir[name] = folder
        packages.append(name)
        packages += [f"{name}.{sub}" for sub in find_packages(where=folder)]
    return packages, package_dir


packages, package_dir = _packages()
setup(packages=packages, package_dir=package_dir)
