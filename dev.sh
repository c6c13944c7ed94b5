#!/usr/bin/env bash
# One entry point for people and CI. Every command sets up .venv first (only when needed).
#   bash dev.sh run    set up, then run the main job (see README)
#   bash dev.sh test   set up, then run the test suite (extra args go to pytest)
#   bash dev.sh lint   set up, then ruff
#   bash dev.sh docs   set up, then build the docs site into site/ (mkdocs --strict)
#   bash dev.sh setup  set up only
set -euo pipefail
cd "$(dirname "$0")"
PYTHON=${PYTHON:-python3}
VENV=.venv

setup() {
  if [ ! -x "$VENV/bin/python" ]; then
    "$PYTHON" -m venv "$VENV"
  fi
  # Reinstall only when the package metadata changed since the last install.
  local stamp="$VENV/.jaxmarl-install-stamp"
  local want
  want=$(cat pyproject.toml setup.py | sha256sum | cut -d' ' -f1)
  if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    "$VENV/bin/python" -m pip install -q --upgrade pip
    "$VENV/bin/python" -m pip install -q -e '.[dev]'
    echo "$want" > "$stamp"
  fi
}

cmd=${1:-help}
shift || true
case "$cmd" in
  setup) setup ;;
  run)
    setup
    "$VENV/bin/python" -m jaxmarl.train alg=mappo env=MPE_simple_spread_v3 "$@"
    ;;
  test)
    setup
    if [ "$#" -eq 0 ]; then
      # The default suite: everything but 'nightly', on two worker processes (the tests are
      # bound by XLA compiles, which use one core each); the 25 slowest are listed, to keep
      # CI's time budget in view.
      set -- -n 2 -m "not nightly" -p no:cacheprovider --durations=25
    fi
    "$VENV/bin/python" -m pytest "$@"
    ;;
  docs)
    setup
    NO_MKDOCS_2_WARNING=1 "$VENV/bin/mkdocs" build --strict "$@"
    ;;
  lint)
    setup
    "$VENV/bin/ruff" check .
    "$VENV/bin/ruff" format --check .
    ;;
  *)
    sed -n 2,8p "$0"
    exit 2
    ;;
esac
