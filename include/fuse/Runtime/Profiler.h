//===- Profiler.h - What the GPU did with a step ----------------*- C++ -*-===//
//
// "100% GPU utilization" only says a kernel was running. The profile says,
// for every step of an Executable (kernel, cuBLASLt GEMM, fill, copy), how
// long it took, how much of the chip it used (SM efficiency, achieved
// occupancy), how close it came to the roofline (TFLOP/s and GB/s against
// the device's ceilings), and what bounds it; and for the whole step, the
// MFU. Executor::profile (Executor.h) measures; everything here is plain C++
// (no CUDA, no MLIR), so the arithmetic is unit-tested without a GPU.
//
// Sources of the figures, never mixed silently:
//   time          median of N warm iterations, CUDA events between steps
//                 (a CUDA graph replay with event nodes when graphs are on)
//   counters      CUPTI range profiler, one range per kernel (auto range,
//                 as ncu measures a kernel), user replay; a step's figures
//                 come from its kernels (matchKernelsToSteps), summed over
//                 the kernels of a GEMM that ran several:
//                   sm_efficiency = sm__cycles_active.avg / sm__cycles_elapsed.avg
//                     (a range per step would also span CUPTI's own start
//                     and stop, ~15 us, and a cuBLASLt call's host work,
//                     ~150 us: idle cycles that read as low efficiency)
//                   sm_efficiency_busiest_sm = sm__cycles_active.avg /
//                     sm__cycles_active.max: the same against the busiest
//                     SM, which is active for 92-98% of a kernel's elapsed
//                     cycles (launch ramp and drain), a check on the first
//                   occupancy     = sm__warps_active.avg.pct_of_peak_sustained_active / 100
//                   dram_bytes    = dram__bytes_read.sum + dram__bytes_write.sum
//                   gpu_time      = gpu__time_duration.sum
//                 or, where counters cannot be read, `estimated` from the
//                 launch shape and the occupancy API (SM efficiency =
//                 min(1, blocks / SMs); occupancy = resident warps of a busy
//                 SM / its maximum); no DRAM estimate. CounterSource says
//                 which, per step and for the report, with one warning.
//   flops, bytes  the cost model's (Step::flops, Step::bytes)
//
// Verdict (classifyStep):
//   latency/launch-bound  time < 5 us (fixed launch and ramp costs dominate),
//                         or SM efficiency < 50% (most SMs idle), or neither
//                         roofline fraction reaches 30%;
//   compute-bound         else when TFLOP/s / peak >= GB/s / bandwidth;
//   memory-bound          else.
// Fractions use the calibrated ceilings when there are any, else the
// datasheet's; bytes are the measured DRAM bytes when there are any, else the
// cost model's. With no ceilings at all, the verdict is `unknown` unless the
// time or SM efficiency rule already decided.
//
// MFU (computeModelFlops):
//   palm        a training step whose parameters are known: N = sum of the
//               element counts of inputs X for which an output `grad.X`
//               exists (the exporter's convention); tokens = element count
//               of the integer input `input_ids` (else the first integer
//               input); model FLOPs = 6 N tokens + the attention steps'
//               cost-model FLOPs (labels starting with "attention"; forward
//               and backward as the cost model counts them).
//   cost-model  otherwise (inference, unknown parameters): the cost model's
//               FLOPs of GEMM steps and attention steps.
//   MFU = model FLOPs / step time / peak, against the datasheet peak and the
//   calibrated GEMM peak.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_RUNTIME_PROFILER_H
#define FUSE_RUNTIME_PROFILER_H

#include "fuse/Runtime/Executable.h"
#include "fuse/Runtime/Status.h"

#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace fuse::runtime {

/// A device's two ceilings: dense bf16 tensor-core FLOP/s and DRAM bandwidth
/// (bytes read + written per second).
struct DeviceCeilings {
  double peakTflops = 0;
  double bandwidthGBps = 0;
  /// "datasheet: NVIDIA H100 SXM", "calibrated (bf16 GEMM 8192^3, 1 GiB
  /// copy)", "--peak-tflops"; empty when unknown.
  std::string source;
  bool known() const { return peakTflops > 0 && bandwidthGBps > 0; }
};

/// The datasheet table, looked up by the CUDA device name ("NVIDIA H100 80GB
/// HBM3", "NVIDIA H200", "NVIDIA A100-SXM4-80GB", ...). An unknown name fails
/// with a message that asks for --peak-tflops or --calibrate.
StatusOr<DeviceCeilings> datasheetCeilings(const std::string &deviceName);

/// Where a step's counters came from.
enum class CounterSource : uint8_t { Measured, Estimated, None };
/// "measured", "estimated", "none".
const char *counterSourceName(CounterSource source);

enum class Verdict : uint8_t { MemoryBound, ComputeBound, LatencyBound, Unknown };
/// "memory-bound", "compute-bound", "latency-or-launch-bound", "unknown".
const char *verdictName(Verdict verdict);

/// Thresholds of the verdict rule (see the file comment).
struct VerdictRule {
  double minKernelMs = 0.005;
  double minSmEfficiency = 0.5;
  double minRooflineFraction = 0.3;
};

/// NaN: not known (printed as "-", written as null).
constexpr double kUnknown = NAN;
inline bool isKnown(double value) { return !std::isnan(value); }

struct StepProfile {
  int64_t index = 0;
  /// Kernel name (fuse_row_3), "gemm 12", "fill 0", "copy 1".
  std::string name;
  /// Fusion kind from the kernel name (fuse_<kind>_<n>), or "gemm", "fill",
  /// "copy".
  std::string kind;
  std::string label;
  /// Labelled "attention ...": counted in the attention term of the MFU.
  bool attention = false;
  /// Launch shape (kernels only; zero otherwise).
  std::array<uint32_t, 3> grid{0, 0, 0}, block{0, 0, 0};
  uint32_t sharedBytes = 0;

  double timeMs = 0;
  /// timeMs / the sum of all steps' timeMs.
  double shareOfStep = 0;
  double flops = 0, bytes = 0;

  CounterSource counters = CounterSource::None;
  double smEfficiency = kUnknown; // 0..1
  double smEfficiencyBusiestSm = kUnknown; // active / the busiest SM's active
  double occupancy = kUnknown;    // 0..1
  double dramBytes = kUnknown;    // measured only
  double gpuTimeMs = kUnknown;    // measured only

  // Filled by analyzeProfile. achievedGBps counts the measured DRAM bytes
  // when there are any, else the cost model's bytes (as the verdict does).
  double achievedTflops = 0, achievedGBps = 0;
  double computeFractionDatasheet = kUnknown, memoryFractionDatasheet = kUnknown;
  double computeFractionCalibrated = kUnknown, memoryFractionCalibrated = kUnknown;
  Verdict verdict = Verdict::Unknown;
  std::string verdictReason;
};

struct ModelFlops {
  /// "palm" or "cost-model".
  std::string convention;
  /// One line saying how the figure was made.
  std::string description;
  double parameters = 0, tokens = 0;
  double attentionFlops = 0;
  double flops = 0;
};

struct ProfileReport {
  std::string entry;
  std::string device;
  int multiprocessors = 0;
  int warmup = 0, iterations = 0;
  /// How step times were taken ("graph replay, CUDA events between steps").
  std::string timing;
  /// Measured, or Estimated with `countersWarning` saying why.
  CounterSource counters = CounterSource::None;
  std::string countersWarning;
  DeviceCeilings datasheet, calibrated;
  /// Notes on the ceilings ("unknown device ...: pass --peak-tflops ...").
  std::string ceilingsNote;
  std::vector<StepProfile> steps;

  /// Whole-step wall time: median CUDA-graph replay (plain launches with
  /// graphs off).
  double stepMs = 0;
  // Filled by analyzeProfile.
  double sumStepMs = 0;
  /// Sum of the steps' event times. (CUPTI's per-range durations are not
  /// used: each carries the range profiler's own ~15 us.)
  double sumKernelMs = 0;
  /// stepMs - sumKernelMs: launch and host overhead (negative means the
  /// replay overlapped or the per-step figures carry event overhead).
  double overheadMs = 0;
  int64_t kernelCount = 0, gemmCount = 0;
  ModelFlops model;
  double mfuDatasheet = kUnknown, mfuCalibrated = kUnknown;
  int64_t arenaBytes = 0, workspaceBytes = 0, ioBytes = 0;
  /// Device memory of the step, measured by the executor: its own
  /// allocations (arena, workspace, constants, cuBLASLt workspace) and, for
  /// the peak, the bound inputs and outputs too: every byte live during the
  /// step, what torch.cuda.max_memory_allocated counts for eager. -1: not
  /// measured (no executor).
  int64_t executorBytes = -1, peakBytes = -1;
  /// cudaMemGetInfo's used bytes after the runs: the whole device, the CUDA
  /// context, loaded modules and other processes included.
  int64_t deviceUsedBytes = -1;
};

/// fuse_row_3 -> "row"; fuse_flash_fwd_0 -> "flash_fwd"; else the name.
std::string kindFromKernelName(const std::string &name);

/// The kernels each step ran, from the names of the kernels the GPU ran in
/// launch order (CUPTI's per-kernel ranges): a fused kernel step is the
/// next kernel, which must carry its name. Between two fused kernels, the
/// other kernels (cuBLASLt's; names not starting with "fuse_") belong to
/// the GEMM steps there: all of them to a lone GEMM, one each to several
/// GEMMs when the counts agree; when they do not (a call that split K into
/// two kernels among several GEMMs), those GEMMs get none rather than a
/// guess. Fills and copies get none. Where the names are not kernel names
/// (CUDA 13's CUPTI names auto ranges by index), each fused step and each
/// GEMM is one kernel, in order, and the counts must agree. Fails, naming
/// the step or the counts, when the kernels do not line up with the steps.
StatusOr<std::vector<std::vector<size_t>>>
matchKernelsToSteps(const std::vector<StepProfile> &steps,
                    const std::vector<std::string> &kernelNames);

/// A report's steps from an Executable (names, kinds, labels, shapes, model
/// figures, arena sizes), times and counters left for the profiler.
ProfileReport describeSteps(const Executable &executable);

/// The verdict and its reason for one step whose figures are filled.
Verdict classifyStep(const StepProfile &step, const DeviceCeilings &datasheet,
                     const DeviceCeilings &calibrated, std::string *reason,
                     const VerdictRule &rule = {});

/// What Executor::profile measures and against what.
struct ProfileOptions {
  int warmup = 3;
  /// Iterations of the whole step and of the per-step timing.
  int iterations = 20;
  /// Read CUPTI counters; off (or unavailable): estimates, said so.
  bool counters = true;
  /// > 0: the dense bf16 peak to use instead of the datasheet's (needed for
  /// MFU on a device the table does not know).
  double peakTflops = 0;
  /// Ceilings measured by calibrateDevice (Calibration.h), if any.
  DeviceCeilings calibrated;
  VerdictRule rule;
};

/// PaLM or cost-model FLOPs of the step (see the file comment).
ModelFlops computeModelFlops(const Executable &executable,
                             const std::vector<StepProfile> &steps);

/// Achieved rates, fractions, verdicts, totals and MFU from the measured
/// figures already in `report`. `executable` gives the MFU its parameters.
void analyzeProfile(ProfileReport &report, const Executable &executable,
                    const VerdictRule &rule = {});

/// The report as JSON, every figure; unknown figures are null, fractions
/// are 0..1, times in ms. Schema "fuse-profile/1":
///   { "schema": "fuse-profile/1", "entry", "device", "multiprocessors",
///     "warmup", "iterations", "timing",
///     "counters": "measured"|"estimated"|"none", "counters_warning",
///     "ceilings": { "datasheet":  {"peak_tflops", "bandwidth_gbps", "source"},
///                   "calibrated": {...same...}, "note" },
///     "totals": { "step_ms", "sum_step_ms", "sum_kernel_ms", "overhead_ms",
///                 "steps", "kernels", "gemms", "arena_bytes",
///                 "workspace_bytes", "io_bytes", "executor_bytes",
///                 "peak_bytes", "device_used_bytes" (-1: not measured),
///                 "model_flops",
///                 "mfu_datasheet", "mfu_calibrated",
///                 "mfu_convention": "palm"|"cost-model", "mfu_description",
///                 "parameters", "tokens", "attention_flops" },
///     "steps": [ { "index", "name", "kind", "label", "attention",
///                  "grid": [x,y,z], "block": [x,y,z], "shared_bytes",
///                  "time_ms", "share", "flops", "bytes",
///                  "achieved_tflops", "achieved_gbps",
///                  "compute_fraction_datasheet", "memory_fraction_datasheet",
///                  "compute_fraction_calibrated", "memory_fraction_calibrated",
///                  "counters", "sm_efficiency", "sm_efficiency_busiest_sm",
///                  "occupancy", "dram_bytes",
///                  "gpu_time_ms", "verdict", "verdict_reason" } ... ] }
std::string profileJson(const ProfileReport &report);
/// Chrome trace JSON (chrome://tracing, Perfetto): one complete event per
/// step on one track, laid end to end in launch order, figures as args.
std::string chromeTrace(const ProfileReport &report);
/// Terminal tables: steps in launch order, a ranking by time (the `top`
/// slowest; 0 = all), time per kind, the step totals.
std::string formatProfile(const ProfileReport &report, int top = 25);

} // namespace fuse::runtime

#endif // FUSE_RUNTIME_PROFILER_H
