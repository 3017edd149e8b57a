#!/usr/bin/env bash
# GPU tests (ctest label `gpu`): `fuse-run --device=cuda --check` on every tiny
# fixture (in bf16, the default pipeline, f32, f16 for inference, and bf16
# under remat-fraction=0.5 for training) and on
# the edge sizes of test/Codegen/Inputs/edge-sizes.mlir (tails of every kernel
# template; flash attention reading and writing through the strided views of
# packed and separate projections) in bf16 and f32, and on
# test/Codegen/Inputs/flash-dropout.mlir (mask and dropout at head dim 128;
# flash-dropout-d64.mlir at 64, bf16 only) and attention-fallback.mlir (mask and dropout where the flash kernels do
# not run) in bf16 and f32, on test/Codegen/Inputs/unaligned-gemms.mlir
# (GEMMs run on copies padded to aligned rows) in bf16 and f32, and on test/Codegen/Inputs/constant-results.mlir
# (splat, dense and iota-computed results of every dtype, written by fill
# and loop kernels) and test/Codegen/Inputs/cumsum.mlir (warp and column
# scans of fuse.cumsum in every dtype) and kernels.mlir (a graph per kernel
# template) in bf16 and f32. Where there is no GPU it prints why and exits 77,
# which ctest reports as skipped.
#
#   test/gpu/run-gpu-checks.sh [BIN_DIR]      (default: build/bin)
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
bin=${1:-${FUSE_BIN_DIR:-$root/build/bin}}
graphs=$root/test/graphs
edge=$root/test/Codegen/Inputs/edge-sizes.mlir
cache=$(mktemp -d)
trap 'rm -rf "$cache"' EXIT

probe=$("$bin/fuse-run" "$edge" --entry loop_tail --device=cuda --iters 0 --cache-dir "$cache" 2>&1)
if grep -q "no CUDA device" <<<"$probe"; then
  echo "SKIPPED (no GPU here): $probe"
  exit 77
fi

failures=0
total=0
check() { # name, fuse-run arguments...
  local name=$1
  shift
  total=$((total + 1))
  local log
  log=$("$bin/fuse-run" "$@" --device=cuda --check --iters 0 --cache-dir "$cache" 2>&1)
  if [[ $? -eq 0 ]] && grep -q "check: PASS" <<<"$log"; then
    printf '%-48s PASS  %s\n' "$name" "$(grep -m1 '^check: ' <<<"$log")"
  else
    failures=$((failures + 1))
    printf '%-48s FAIL\n%s\n' "$name" "$log" | head -60
  fi
}

for graph in "$graphs"/*-tiny-*.mlir; do
  name=$(basename "$graph" .mlir)
  # Training fixtures in bf16 need their recorded inputs: random N(0,1)
  # inputs make the loss ill-conditioned.
  inputs=()
  [[ -f $graphs/$name.inputs.npz ]] && inputs=(--inputs "$graphs/$name.inputs.npz")
  check "$name (bf16)" "$graph" "${inputs[@]}"
  check "$name (f32)" "$graph" "${inputs[@]}" --pipeline='fuse-pipeline{amp=none}'
  # Under half the peak: recomputation kernels in the backward, the
  # tied embedding's gradient accumulated in place in its output.
  [[ $name == *-train* ]] &&
    check "$name (bf16, remat-fraction=0.5)" "$graph" "${inputs[@]}" --pipeline='fuse-pipeline{remat-fraction=0.5}'
  # f16 training steps gain loss-scaling arguments, which fuse-run's
  # comparison with the original graph cannot bind: inference only.
  [[ $name == *-infer ]] &&
    check "$name (f16)" "$graph" "${inputs[@]}" --pipeline='fuse-pipeline{amp=f16}'
done
# Mask and dropout at head dim 128: the flash kernels in bf16, the GEMM +
# softmax path in f32; and that path's in both where flash does not apply.
check "flash-dropout (bf16)" "$root/test/Codegen/Inputs/flash-dropout.mlir"
check "flash-dropout (f32)" "$root/test/Codegen/Inputs/flash-dropout.mlir" --pipeline='fuse-pipeline{amp=none}'
# A padding mask and dropout at head dim 64, keys a multiple of four (the
# kernels share Philox blocks between lanes there).
check "flash-dropout-d64 (bf16)" "$root/test/Codegen/Inputs/flash-dropout-d64.mlir"
fallback=$root/test/Codegen/Inputs/attention-fallback.mlir
for entry in head_dim_80 boolean_padding_mask; do
  check "attention-fallback $entry (bf16)" "$fallback" --entry "$entry"
  check "attention-fallback $entry (f32)" "$fallback" --entry "$entry" --pipeline='fuse-pipeline{amp=none}'
done
# Results that do not depend on the inputs (fill kernels, memsets, copies
# from the constant pool, loop kernels without inputs), fuse.cumsum's scan
# kernels, the GEMMs padded to aligned rows, and one of each kernel
# template.
for graph in constant-results cumsum unaligned-gemms kernels; do
  file=$root/test/Codegen/Inputs/$graph.mlir
  for entry in $(grep -oE '^func.func @[a-z_0-9]+' "$file" | cut -d@ -f2); do
    check "$graph $entry (bf16)" "$file" --entry "$entry"
    check "$graph $entry (f32)" "$file" --entry "$entry" --pipeline='fuse-pipeline{amp=none}'
  done
done
for entry in $(grep -oE '^func.func @[a-z_0-9]+' "$edge" | cut -d@ -f2); do
  check "edge-sizes $entry (bf16)" "$edge" --entry "$entry"
  check "edge-sizes $entry (f32)" "$edge" --entry "$entry" --pipeline='fuse-pipeline{amp=none}'
done
echo "gpu checks: $((total - failures)) of $total passed"
[[ $failures -eq 0 ]]
