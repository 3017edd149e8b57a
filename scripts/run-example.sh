#!/usr/bin/env bash
# The main job: compile the example GPT-2 block and run it.
#
#   bash scripts/run-example.sh [GRAPH.mlir]      (default examples/gpt2_block.mlir)
#
# 1. fuse-pipeline with the kernel table (--fuse-print-cost); the fused graph
#    goes to build/<name>.fused.mlir.
# 2. The launch plan the CUDA code generator makes (fuse-translate --emit-plan).
# 3. On a machine with a GPU: compiled with NVRTC, run, and every output checked
#    against the CPU reference interpreter (fuse-run --device=cuda --check).
#    Without one: the graph before and after fuse-pipeline on the CPU reference
#    interpreter, checked against each other.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=${FUSE_BIN_DIR:-$root/build/bin}
graph=${1:-$root/examples/gpt2_block.mlir}
name=$(basename "$graph" .mlir)

mkdir -p "$root/build"
echo "==> fuse-pipeline: the kernel plan of $graph"
"$bin/fuse-opt" "$graph" --fuse-pipeline --fuse-print-cost -o "$root/build/$name.fused.mlir"
echo
echo "==> fuse-translate --emit-plan: kernels, cuBLASLt GEMMs and arena offsets"
"$bin/fuse-translate" "$graph" --emit-plan
echo
echo "==> fuse-run --device=cuda --check"
if gpu_log=$("$bin/fuse-run" "$graph" --device=cuda --check 2>&1); then
  echo "$gpu_log"
  exit 0
fi
if grep -qE "no CUDA device|--device=cuda is not available" <<<"$gpu_log"; then
  echo "$gpu_log"
  echo "No GPU here: running the CPU reference interpreter instead (f32, before and after fuse-pipeline)."
  "$bin/fuse-run" "$graph" --device=cpu --check-pipeline='fuse-pipeline{amp=none}'
else
  echo "$gpu_log"
  exit 1
fi
