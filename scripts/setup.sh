#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine for Fuse and builds it into build/.
#
#   bash scripts/setup.sh            install what is missing, configure, build
#   FUSE_BUILD_DIR=out bash scripts/setup.sh
#
# Installs (as root, through apt-get) MLIR/LLVM 22, lit/FileCheck, CMake,
# Ninja, GoogleTest, and PyTorch with pytest (the exporter's tests) when they
# are not there yet, checks for NVIDIA's CUDA toolkit (not a Debian package;
# CUDAToolkit_ROOT, default /usr/local/cuda), then configures a Release
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

bash "$repo_root/scripts/install-packages.sh" "${packages[@]}"

# The CUDA backend (libFuseC.so, the GPU runtime, NVRTC's checks) needs
# NVIDIA's CUDA toolkit 12+, which Debian does not package: say up front
# what is missing and what will not be built, rather than let CMake's
# warning scroll by.
cuda_root=${CUDAToolkit_ROOT:-/usr/local/cuda}
cuda_missing=()
for header in cuda_runtime.h nvrtc.h cublasLt.h; do
  [[ -e "$cuda_root/include/$header" ]] || cuda_missing+=("include/$header")
done
[[ -e "$cuda_root/include/cupti.h" || -e "$cuda_root/extras/CUPTI/include/cupti.h" ]] ||
  cuda_missing+=("include/cupti.h")
for library in libnvrtc libcublasLt libcupti; do
  compgen -G "$cuda_root/lib64/$library.so*" >/dev/null ||
    compgen -G "$cuda_root/extras/CUPTI/lib64/$library.so*" >/dev/null ||
    cuda_missing+=("lib64/$library.so")
done
if ((${#cuda_missing[@]})); then
  echo "==> No complete CUDA toolkit under $cuda_root (missing: ${cuda_missing[*]})."
  echo "    Fuse builds without its CUDA backend: no libFuseC.so (fuse.compile, compile_step and the"
  echo "    torch.compile backend), no GPU runtime, no NVRTC checks; the CPU tools and their lit tests"
  echo "    still build and pass, the Python tests stop with a message. Install NVIDIA's CUDA toolkit"
  echo "    12 or newer there, or set CUDAToolkit_ROOT to where it is."
else
  echo "==> CUDA toolkit: $cuda_root"
fi
cmake_args=()
[[ -n "${CUDAToolkit_ROOT:-}" ]] && cmake_args+=("-DCUDAToolkit_ROOT=$CUDAToolkit_ROOT")

echo "==> Configuring $build_dir"
cmake -G Ninja -S "$repo_root" -B "$build_dir" -DCMAKE_BUILD_TYPE=Release "${cmake_args[@]}" >/dev/null

echo "==> Building (this takes a few minutes on 2 cores the first time)"
cmake --build "$build_dir"
echo "==> Built: $build_dir/bin/fuse-opt"
