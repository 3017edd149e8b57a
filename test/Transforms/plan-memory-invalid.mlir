// An arena larger than the device (max-arena-bytes) fails the pass with the
// numbers; fuse-opt then exits 1.
// RUN: fuse-opt %s -split-input-file -fuse-plan-memory=max-arena-bytes=1536 -verify-diagnostics -o /dev/null
// RUN: not fuse-opt %s -fuse-plan-memory=max-arena-bytes=1536 -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXIT
// RUN: fuse-opt %s -fuse-plan-memory=max-arena-bytes=2048 -o /dev/null
// EXIT: error: fuse-plan-memory: the arena of @over_the_limit needs 2048 bytes (2.00 KiB), more than max-arena-bytes = 1536 bytes (1.50 KiB); its lower bound is 2048 bytes (2.00 KiB), above the limit too

// When only the strategy's arena is over the limit, the error says so.
// RUN: not fuse-opt %s -fuse-plan-memory='strategy=linear max-arena-bytes=2048' -o /dev/null 2>&1 | FileCheck %s --check-prefix=LINEAR
// LINEAR: error: fuse-plan-memory: the arena of @over_the_limit needs 3072 bytes (3.00 KiB), more than max-arena-bytes = 2048 bytes (2.00 KiB); its lower bound is 2048 bytes (2.00 KiB), within the limit: another strategy or schedule may fit

// A strategy the pass does not know, or a negative limit, is an error when
// the pass is set up; the message lists the strategies.
// RUN: not fuse-opt %s -fuse-plan-memory=strategy=first-fit -o /dev/null 2>&1 | FileCheck %s --check-prefix=STRATEGY
// RUN: not fuse-run %s --entry over_the_limit --check-pipeline='fuse-plan-memory{strategy=greedy}' 2>&1 | FileCheck %s --check-prefix=STRATEGY
// STRATEGY: error: fuse-plan-memory: unknown strategy '{{first-fit|greedy}}'; valid names: best-fit, linear
// RUN: not fuse-opt %s -fuse-plan-memory=max-arena-bytes=-1 -o /dev/null 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// NEGATIVE: error: fuse-plan-memory: max-arena-bytes must be 0 (no limit) or positive, got -1

// %a and %m are live together at 1, %m and %c at 2: a lower bound of 2 KB,
// which best fit reaches (%c takes %a's place) and the linear strategy
// does not (3 KB).
// expected-error @+1 {{fuse-plan-memory: the arena of @over_the_limit needs 2048 bytes (2.00 KiB), more than max-arena-bytes = 1536 bytes (1.50 KiB); its lower bound is 2048 bytes (2.00 KiB), above the limit too: no packing of this schedule fits (rematerialize, reschedule or shrink the batch)}}
func.func @over_the_limit(%x: tensor<16x16xf32>, %w: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %a = fuse.exp %x : tensor<16x16xf32>
  %m = fuse.matmul %a, %w : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  %c = fuse.matmul %m, %w : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  %d = fuse.neg %c : tensor<16x16xf32>
  return %d : tensor<16x16xf32>
}

// -----

// A function within the limit plans as usual beside one over it.
func.func @within_the_limit(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %a = fuse.exp %x : tensor<4x8xf32>
  %b = fuse.neg %a : tensor<4x8xf32>
  return %b : tensor<4x8xf32>
}
