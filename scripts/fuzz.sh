#!/usr/bin/env bash
# Runs the libFuzzer targets of fuzz/ (built by scripts/build-asan.sh) for a
# bounded time each, from seed corpora made out of test/, and reports per
# target the inputs executed, the corpus size and the crashes found.
#
#   bash scripts/fuzz.sh [SECONDS] [TARGET...]     default: 60 s, every target
#   bash scripts/fuzz.sh 3600 fuzz_npz             an hour-long campaign on one
#
# Exits 1 if any target found a crash (the reproducer is under
# build-asan/fuzz-work/artifacts/TARGET/; fuzz/README.md says what to do with it).
# The working corpus build-asan/fuzz-work/corpus/TARGET grows from run to run.
set -uo pipefail

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${FUSE_ASAN_DIR:-"$repo_root/build-asan"}
seconds=${1:-60}
shift || true
targets=("$@")
((${#targets[@]})) || targets=(fuzz_graph fuzz_interpreter fuzz_npz fuzz_executable)
work=$build_dir/fuzz-work
python=/usr/bin/python3
[[ -x $python ]] || python=python3

# Seeds, made again each run from what the repository has.
make_seeds() {
  local target=$1 dir=$work/seeds/$1
  rm -rf "$dir" && mkdir -p "$dir"
  case $target in
    fuzz_graph | fuzz_interpreter)
      # Every small graph of the tests and examples, split where lit splits
      # them (// -----).
      "$python" - "$repo_root" "$dir" <<'PY'
import hashlib, os, pathlib, sys
root, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
for path in sorted(list(root.glob("test/**/*.mlir")) + list(root.glob("examples/*.mlir"))):
    if path.stat().st_size > 64 * 1024:
        continue
    for piece in path.read_text(errors="replace").split("// -----"):
        if piece.strip() and len(piece) <= 16384:
            data = piece.encode()
            (out / hashlib.sha1(data).hexdigest()).write_bytes(data)
PY
      ;;
    fuzz_npz)
      find "$repo_root/test" -name '*.np[yz]' -size -64k -exec cp {} "$dir/" \;
      for kind in duplicate alias short long-header inf nan-and-inf fine; do
        "$python" "$repo_root/test/tools/fuse-run/Inputs/hostile_npz.py" "$kind" "$dir/hostile-$kind.npz"
      done
      ;;
    fuzz_executable)
      # Executables of the code generator's test graphs, written by the
      # normal build's fuse-translate (scripts/setup.sh builds it).
      local translate=$repo_root/build/bin/fuse-translate
      if [[ ! -x $translate ]]; then
        echo "note: no $translate: $target starts from an empty corpus"
        return
      fi
      local graph entries entry
      for graph in "$repo_root"/test/Codegen/Inputs/*.mlir; do
        entries=$(grep -o 'func.func @[A-Za-z0-9_]*' "$graph" | sed 's/func.func @//')
        for entry in $entries; do
          "$translate" "$graph" --entry "$entry" --emit-plan -o /dev/null \
            --save-executable "$dir/$(basename "$graph" .mlir)-$entry.fuseexe" >/dev/null 2>&1 || true
        done
      done
      find "$dir" -size +256k -delete
      ;;
  esac
}

max_len() {
  case $1 in
    fuzz_executable) echo 262144 ;;
    fuzz_npz) echo 65536 ;;
    *) echo 16384 ;;
  esac
}

# allow_user_poisoning=0: see scripts/build-asan.sh (LLVM's allocator
# poisons under ASan, the uninstrumented MLIR archives do not unpoison).
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:strict_string_checks=1:allow_user_poisoning=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
status=0
summary=()
mkdir -p "$work/logs"
for target in "${targets[@]}"; do
  binary=$build_dir/fuzz/$target
  if [[ ! -x $binary ]]; then
    echo "error: $binary is missing: run scripts/build-asan.sh first" >&2
    exit 2
  fi
  # Every input that once crashed a target (fuzz/regressions/TARGET) runs
  # first, once each: a fix that comes undone fails here.
  regressions=("$repo_root/fuzz/regressions/$target"/*)
  if [[ -e ${regressions[0]} ]]; then
    echo "==> $target: ${#regressions[@]} regression inputs"
    if ! "$binary" "${regressions[@]}" >"$work/logs/$target.regressions.log" 2>&1; then
      echo "error: $target crashes on a regression input (log: $work/logs/$target.regressions.log)" >&2
      grep -m3 -E 'ERROR: |runtime error|Running: ' "$work/logs/$target.regressions.log" >&2
      status=1
    fi
  fi
  make_seeds "$target"
  mkdir -p "$work/corpus/$target" "$work/artifacts/$target"
  log=$work/logs/$target.log
  echo "==> $target for $seconds s (log: $log)"
  "$binary" "$work/corpus/$target" "$work/seeds/$target" \
    -max_total_time="$seconds" -max_len="$(max_len "$target")" -timeout=30 \
    -rss_limit_mb=4096 -print_final_stats=1 \
    -artifact_prefix="$work/artifacts/$target/" >"$log" 2>&1
  rc=$?
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
  corpus=$(find "$work/corpus/$target" -type f | wc -l)
  crashes=$(find "$work/artifacts/$target" -type f \( -name 'crash-*' -o -name 'timeout-*' -o -name 'oom-*' -o -name 'leak-*' \) | wc -l)
  summary+=("$(printf '%-18s %6ss %12s inputs %6s in corpus %3s crashes (exit %s)' \
    "$target" "$seconds" "${runs:-?}" "$corpus" "$crashes" "$rc")")
  if [[ $rc -ne 0 || $crashes -ne 0 ]]; then
    status=1
    grep -m3 -E 'ERROR: |runtime error|==ERROR' "$log" || tail -5 "$log"
  fi
done
printf '%s\n' "${summary[@]}"
exit $status
