#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine for Fuse and builds it into build/.
#
#   bash scripts/setup.sh            install what is missing, configure, build
#   FUSE_BUILD_DIR=out bash scripts/setup.sh
#
# Installs (as root, through apt-get) MLIR/LLVM 22, lit/FileCheck, CMake,
# Ninja, GoogleTest, and PyTorch with pytest (the exporter's tests) when they
# are not there yet, then configures a Release
# build with LLVM and MLIR linked statically and builds every target.
set -euo pipefail

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${FUSE_BUILD_DIR:-"$repo_root/build"}

packages=(
  cmake ninja-build g++ python3 python3-numpy
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools
  libgtest-dev libzip-dev
  # The PyTorch exporter's tests (torch 1.13 has make_fx and AOTAutograd).
  python3-torch python3-pytest
)

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done

if ((${#missing[@]})); then
  echo "==> Installing ${missing[*]}"
  if [[ $(id -u) -ne 0 ]]; then
    sudo_cmd=(sudo)
  else
    sudo_cmd=()
  fi
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "==> Debian packages already installed"
fi

echo "==> Configuring $build_dir"
cmake -G Ninja -S "$repo_root" -B "$build_dir" -DCMAKE_BUILD_TYPE=Release >/dev/null

echo "==> Building (this takes a few minutes on 2 cores the first time)"
cmake --build "$build_dir"
echo "==> Built: $build_dir/bin/fuse-opt"
