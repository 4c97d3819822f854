#!/usr/bin/env bash
# Installs what pase needs to build and test on Debian 12, from Debian's packages.
# Run as root (or with sudo available). Safe to run more than once.
set -euo pipefail
packages=(
  build-essential cmake ninja-build
  libboost-graph-dev nlohmann-json3-dev libcli11-dev libtbb-dev doctest-dev
  libonnx-dev libprotobuf-dev protobuf-compiler
)
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
