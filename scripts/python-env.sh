#!/usr/bin/env bash
# A Python virtual environment for the Python package (python/, docs/python.md)
# and its checks against JAX and PyTorch: the pinned versions of
# python/requirements-jax.txt, python/requirements-torch.txt,
# python/requirements-deepspeed.txt and python/requirements-megatron.txt (the checks
# run on the CPU) and the package itself, installed as a user would
# (`pip install ./python`). Prints the environment's python; configure with it
# so that ctest runs the JAX and PyTorch checks too:
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
requirements=("$source_dir/python/requirements-jax.txt" "$source_dir/python/requirements-torch.txt"
              "$source_dir/python/requirements-deepspeed.txt")
stamp="$dir/requirements.stamp"
if [ ! -x "$dir/bin/python" ] || ! cat "${requirements[@]}" | cmp -s - "$stamp"; then
  rm -rf "$dir" && mkdir -p "$dir"
  python3 -m venv "$dir" >&2
  "$dir/bin/pip" install --quiet --disable-pip-version-check -r "${requirements[0]}" -r "${requirements[1]}" >&2
  # DeepSpeed's setup imports torch and needs wheel, both installed first.
  "$dir/bin/pip" install --quiet --disable-pip-version-check "$(grep '^wheel==' "${requirements[2]}")" >&2
  DS_BUILD_OPS=0 "$dir/bin/pip" install --quiet --disable-pip-version-check --no-build-isolation \
    -r "${requirements[2]}" >&2
  cat "${requirements[@]}" > "$stamp"
fi
# megatron-core needs nothing the pins above lack; kept out of the stamp, so
# that adding it does not rebuild an environment.
"$dir/bin/pip" install --quiet --disable-pip-version-check --no-deps -r "$source_dir/python/requirements-megatron.txt" >&2
"$dir/bin/pip" install --quiet --disable-pip-version-check "$source_dir/python" >&2
echo "$dir/bin/python"
