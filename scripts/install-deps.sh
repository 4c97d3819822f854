#!/usr/bin/env bash
# Installs what pase needs to build and test on Debian 12, from Debian's packages.
# Run as root (or with sudo available). Safe to run more than once.
#
#   scripts/install-deps.sh           what the build and the tests need
#   scripts/install-deps.sh --fuzz    also clang and libFuzzer, for the fuzz
#                                     harnesses (docs/fuzzing.md); CI uses it
#   scripts/install-deps.sh --cuda    also Python's venv, with which
#                                     scripts/cuda-from-wheels.sh makes a CUDA
#                                     Toolkit for pase-calibrate; CI uses it
#   scripts/install-deps.sh --python  also Python's venv, with which
#                                     scripts/python-env.sh makes the Python
#                                     of the package's JAX checks
set -euo pipefail
packages=(
  build-essential cmake ninja-build
  libboost-graph-dev nlohmann-json3-dev libcli11-dev libtbb-dev doctest-dev
  libonnx-dev libprotobuf-dev protobuf-compiler
  python3
)
for option in "$@"; do
  case "$option" in
    --fuzz) packages+=(clang libclang-rt-14-dev) ;;
    --cuda | --python) packages+=(python3-venv) ;;
    *) echo "usage: scripts/install-deps.sh [--fuzz] [--cuda] [--python]" >&2; exit 2 ;;
  esac
done
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
