//===- ProfileTable.cpp - The profile for a terminal ----------------------===//
//
// Four parts: the steps in launch order, the slowest steps, time per kind,
// and the step's totals (wall time against the sum of kernel times, MFU,
// memory). Estimated counters are printed with a leading '~' so they can
// never be read as measured; unknown figures are '-'. Roofline columns use
// the calibrated ceilings when there are any, else the datasheet's (the
// header says which).
//
//===----------------------------------------------------------------------===//

#include "fuse/Runtime/Profiler.h"

#include "fuse/Support/HumanSize.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <map>

namespace fuse::runtime {

namespace {

std::string format(const char *pattern, ...) {
  char text[1024];
  va_list args;
  va_start(args, pattern);
  std::vsnprintf(text, sizeof text, pattern, args);
  va_end(args);
  return text;
}

/// "83%", "~41%" (estimated), "-" (unknown).
std::string percentCell(double fraction, CounterSource source) {
  if (!isKnown(fraction))
    return "-";
  return format("%s%.0f%%", source == CounterSource::Estimated ? "~" : "",
                100 * fraction);
}

std::string fractionCell(double fraction) {
  return isKnown(fraction) ? format("%.0f%%", 100 * fraction) : "-";
}

std::string megabytes(double bytes) {
  return isKnown(bytes) ? format("%.1f", bytes / 1e6) : "-";
}

std::string shortVerdict(Verdict verdict) {
  switch (verdict) {
  case Verdict::MemoryBound: return "memory";
  case Verdict::ComputeBound: return "compute";
  case Verdict::LatencyBound: return "latency";
  case Verdict::Unknown: return "?";
  }
  return "?";
}

std::string stepRow(const ProfileReport &report, const StepProfile &step) {
  bool calibrated = report.calibrated.known();
  double compute = calibrated ? step.computeFractionCalibrated
                              : step.computeFractionDatasheet;
  double memory = calibrated ? step.memoryFractionCalibrated
                             : step.memoryFractionDatasheet;
  std::string label = step.label.size() > 70 ? step.label.substr(0, 67) + "..."
                                             : step.label;
  return format("%5lld %-22s %-10s %9.4f %5.1f%% %8.1f %7.0f %5s %5s %6s %6s "
                "%9s %9s %-8s %s\n",
                static_cast<long long>(step.index), step.name.c_str(),
                step.kind.c_str(), step.timeMs, 100 * step.shareOfStep,
                step.achievedTflops, step.achievedGBps,
                fractionCell(compute).c_str(), fractionCell(memory).c_str(),
                percentCell(step.smEfficiency, step.counters).c_str(),
                percentCell(step.occupancy, step.counters).c_str(),
                megabytes(step.dramBytes).c_str(),
                megabytes(step.bytes).c_str(),
                shortVerdict(step.verdict).c_str(), label.c_str());
}

std::string header(const ProfileReport &report) {
  const char *against = report.calibrated.known() ? "cal" : "data";
  return format("%5s %-22s %-10s %9s %6s %8s %7s %5s %5s %6s %6s %9s %9s "
                "%-8s %s\n",
                "step", "name", "kind", "time ms", "share", "TFLOP/s", "GB/s",
                (std::string("%pk.") + against).c_str(),
                (std::string("%bw.") + against).c_str(), "SMeff", "occ",
                "DRAM MB", "model MB", "verdict", "label");
}

std::string ceilingsLine(const char *what, const DeviceCeilings &ceilings) {
  if (!ceilings.known())
    return format("%s: none", what);
  return format("%s %.0f TFLOP/s, %.0f GB/s (%s)", what, ceilings.peakTflops,
                ceilings.bandwidthGBps, ceilings.source.c_str());
}

} // namespace

std::string formatProfile(const ProfileReport &report, int top) {
  std::string out;
  out += format("profile of @%s on %s (%d SMs): median of %d iterations "
                "after %d warm-up; %s\n",
                report.entry.c_str(), report.device.c_str(),
                report.multiprocessors, report.iterations, report.warmup,
                report.timing.c_str());
  out += format("counters: %s%s\n", counterSourceName(report.counters),
                report.counters == CounterSource::Measured
                    ? " (CUPTI range profiler, one range per kernel)"
                    : report.counters == CounterSource::Estimated
                          ? " ('~': from launch shapes and the occupancy "
                            "API; no DRAM bytes)"
                          : "");
  out += "ceilings: " + ceilingsLine("datasheet", report.datasheet) + "; " +
         ceilingsLine("calibrated", report.calibrated) + "\n";
  if (!report.ceilingsNote.empty())
    out += "note: " + report.ceilingsNote + "\n";

  out += "\nsteps in launch order:\n" + header(report);
  for (const StepProfile &step : report.steps)
    out += stepRow(report, step);

  std::vector<const StepProfile *> ranked;
  for (const StepProfile &step : report.steps)
    ranked.push_back(&step);
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const StepProfile *a, const StepProfile *b) {
                     return a->timeMs > b->timeMs;
                   });
  size_t shown = top > 0 ? std::min<size_t>(top, ranked.size()) : ranked.size();
  out += format("\nslowest %zu steps:\n", shown) + header(report);
  for (size_t i = 0; i < shown; ++i)
    out += stepRow(report, *ranked[i]);

  struct KindTotal {
    double ms = 0;
    int count = 0;
    std::map<Verdict, int> verdicts;
  };
  std::map<std::string, KindTotal> kinds;
  for (const StepProfile &step : report.steps) {
    KindTotal &total = kinds[step.attention ? "attention:" + step.kind : step.kind];
    total.ms += step.timeMs;
    total.count += 1;
    total.verdicts[step.verdict] += 1;
  }
  std::vector<std::pair<std::string, KindTotal>> byTime(kinds.begin(), kinds.end());
  std::stable_sort(byTime.begin(), byTime.end(), [](auto &a, auto &b) {
    return a.second.ms > b.second.ms;
  });
  out += "\ntime by kind:\n";
  for (auto &[kind, total] : byTime) {
    std::string verdicts;
    for (auto &[verdict, count] : total.verdicts)
      verdicts += (verdicts.empty() ? "" : ", ") + std::to_string(count) + " " +
                  shortVerdict(verdict);
    out += format("  %-24s %9.3f ms %5.1f%% %5d steps  (%s)\n", kind.c_str(),
                  total.ms,
                  report.sumStepMs > 0 ? 100 * total.ms / report.sumStepMs : 0.0,
                  total.count, verdicts.c_str());
  }

  out += "\ntotals:\n";
  out += format("  step %.3f ms (CUDA graph replay, median); sum of the "
                "steps' own times %.3f ms\n",
                report.stepMs, report.sumKernelMs);
  out += format("  launch/host overhead %.3f ms (%.1f%% of the step; "
                "negative: the timing's event nodes cost more than the "
                "graph's gaps)\n",
                report.overheadMs,
                report.stepMs > 0 ? 100 * report.overheadMs / report.stepMs
                                  : 0.0);
  out += format("  %lld kernels, %lld cuBLASLt GEMMs, %zu steps\n",
                static_cast<long long>(report.kernelCount),
                static_cast<long long>(report.gemmCount), report.steps.size());
  out += format("  model FLOPs %.4g (%s: %s)\n", report.model.flops,
                report.model.convention.c_str(),
                report.model.description.c_str());
  auto mfu = [&](double value, const DeviceCeilings &ceilings) {
    return isKnown(value) ? format("%.1f%% of %.0f TFLOP/s", 100 * value,
                                   ceilings.peakTflops)
                          : std::string("-");
  };
  out += "  MFU " + mfu(report.mfuDatasheet, report.datasheet) +
         " (datasheet), " + mfu(report.mfuCalibrated, report.calibrated) +
         " (calibrated)\n";
  out += "  memory: arena " + humanBytes(report.arenaBytes) +
         ", workspace " + humanBytes(report.workspaceBytes) +
         ", inputs + outputs " + humanBytes(report.ioBytes) + "\n";
  if (report.peakBytes >= 0)
    out += "  peak memory of the step " + humanBytes(report.peakBytes) +
           " (executor " + humanBytes(report.executorBytes) +
           " + inputs + outputs); device in use " +
           (report.deviceUsedBytes >= 0 ? humanBytes(report.deviceUsedBytes)
                                        : std::string("unknown")) +
           " (context and other processes included)\n";
  if (!report.countersWarning.empty())
    out += "  counters: " + report.countersWarning + "\n";
  return out;
}

} // namespace fuse::runtime
