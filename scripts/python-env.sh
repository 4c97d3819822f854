#!/usr/bin/env bash
# A Python virtual environment for the Python package (python/, docs/python.md)
# and its checks against JAX: the pinned versions of python/requirements-jax.txt
# (CPU only) and the package itself, installed as a user would
# (`pip install ./python`). Prints the environment's python; configure with it
# so that ctest runs the JAX checks too:
#
#   py=$(scripts/python-env.sh build-python)
#   cmake -S . -B build -DPASE_PYTHON="$py"
#
# Needs python3 with venv (Debian: python3-venv; scripts/install-deps.sh
# --python installs it) and the package index. Safe to run again: an
# environment with the same pins is kept, and the package reinstalled.
set -euo pipefail
if [ $# -ne 1 ]; then
  echo "usage: scripts/python-env.sh DIR" >&2
  exit 2
fi
source_dir=$(cd "$(dirname "$0")/.." && pwd)
dir=$(mkdir -p "$1" && cd "$1" && pwd)
requirements="$source_dir/python/requirements-jax.txt"
stamp="$dir/requirements-jax.txt"
if [ ! -x "$dir/bin/python" ] || ! cmp -s "$requirements" "$stamp"; then
  rm -rf "$dir" && mkdir -p "$dir"
  python3 -m venv "$dir" >&2
  "$dir/bin/pip" install --quiet --disable-pip-version-check -r "$requirements" >&2
  cp "$requirements" "$stamp"
fi
"$dir/bin/pip" install --quiet --disable-pip-version-check "$source_dir/python" >&2
echo "$dir/bin/python"
