#!/usr/bin/env bash
# Builds build-asan/ with clang 22 under AddressSanitizer and
# UndefinedBehaviorSanitizer, with libFuzzer's coverage instrumentation, and
# runs the unit tests there; scripts/fuzz.sh then runs the fuzz targets it
# built. Without the CUDA backend (sanitizers and NVRTC do not mix), and only
# the unit tests and fuzz targets are built, not the tools: about what one
# Release build of the libraries costs.
#
#   bash scripts/build-asan.sh            install what is missing, build, run the unit tests
#   FUSE_ASAN_DIR=out bash scripts/build-asan.sh
#
# Needs what scripts/setup.sh installs, and clang-22 with libclang-rt-22-dev
# (libFuzzer and the sanitizer runtimes), installed here when missing.
set -euo pipefail

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${FUSE_ASAN_DIR:-"$repo_root/build-asan"}

bash "$repo_root/scripts/install-packages.sh" clang-22 libclang-rt-22-dev

# -O1 with line tables: readable reports at a reasonable speed. Assertions
# stay on (no NDEBUG): an assert a fuzzer reaches is a finding too.
sanitizers="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
echo "==> Configuring $build_dir (clang 22, ASan + UBSan, fuzz targets)"
cmake -G Ninja -S "$repo_root" -B "$build_dir" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
  -DCMAKE_CXX_FLAGS="$sanitizers -fsanitize=fuzzer-no-link -fno-omit-frame-pointer" \
  -DCMAKE_EXE_LINKER_FLAGS="$sanitizers" \
  -DCMAKE_SHARED_LINKER_FLAGS="$sanitizers" \
  -DCMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit=ON \
  -DFUSE_FUZZ=ON >/dev/null

unit_tests=(FuseSupportTests FuseRuntimeTests FusePhiloxTests FuseDeviceLibraryTests FuseUnitTests)
echo "==> Building the unit tests and fuzz targets (2 cores: about 15 minutes the first time)"
cmake --build "$build_dir" --target "${unit_tests[@]}" fuse-fuzzers

# allow_user_poisoning=0: LLVM's BumpPtrAllocator poisons what it has not
# handed out when its header is compiled under ASan (here), while the
# uninstrumented MLIR archives hand memory out without unpoisoning it: every
# MLIRContext would report a use-after-poison that is not there.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1:allow_user_poisoning=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
failed=()
for test in "${unit_tests[@]}"; do
  echo "==> $test under ASan + UBSan"
  if ! "$build_dir/test/unittests/$test" --gtest_brief=1; then
    failed+=("$test")
  fi
done
if ((${#failed[@]})); then
  echo "==> FAILED under sanitizers: ${failed[*]}"
  exit 1
fi
echo "==> Unit tests pass under ASan + UBSan"
