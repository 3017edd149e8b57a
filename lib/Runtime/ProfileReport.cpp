//===- ProfileReport.cpp - Figures, verdicts and MFU of a profile ---------===//
//
// The arithmetic between what was measured and what the report says: the
// steps described from the Executable, achieved rates and roofline
// fractions, the bound verdict, the totals, and the MFU under the PaLM or
// the cost-model convention (rules in Profiler.h). No CUDA.
//
//===----------------------------------------------------------------------===//

#include "fuse/Runtime/Profiler.h"

#include <algorithm>
#include <cstdio>

namespace fuse::runtime {

const char *counterSourceName(CounterSource source) {
  switch (source) {
  case CounterSource::Measured: return "measured";
  case CounterSource::Estimated: return "estimated";
  case CounterSource::None: return "none";
  }
  return "none";
}

const char *verdictName(Verdict verdict) {
  switch (verdict) {
  case Verdict::MemoryBound: return "memory-bound";
  case Verdict::ComputeBound: return "compute-bound";
  case Verdict::LatencyBound: return "latency-or-launch-bound";
  case Verdict::Unknown: return "unknown";
  }
  return "unknown";
}

std::string kindFromKernelName(const std::string &name) {
  if (name.rfind("fuse_", 0) != 0)
    return name;
  std::string rest = name.substr(5);
  size_t last = rest.rfind('_');
  // fuse_<kind>_<n>: drop the counter when it is all digits.
  if (last != std::string::npos && last + 1 < rest.size() &&
      rest.find_first_not_of("0123456789", last + 1) == std::string::npos)
    return rest.substr(0, last);
  return rest;
}

ProfileReport describeSteps(const Executable &exe) {
  ProfileReport report;
  report.entry = exe.entry;
  report.arenaBytes = exe.arenaBytes;
  report.workspaceBytes = exe.workspaceBytes;
  for (const TensorSpec &spec : exe.inputs)
    report.ioBytes += spec.bytes();
  for (const TensorSpec &spec : exe.outputs)
    report.ioBytes += spec.bytes();
  for (size_t i = 0; i < exe.steps.size(); ++i) {
    const Step &step = exe.steps[i];
    StepProfile profile;
    profile.index = static_cast<int64_t>(i);
    profile.label = step.label;
    profile.attention = step.label.rfind("attention", 0) == 0;
    profile.flops = step.flops;
    profile.bytes = step.bytes;
    switch (step.kind) {
    case Step::Kind::Launch: {
      const KernelLaunch &launch = exe.launches[step.index];
      profile.name = exe.kernels[launch.kernel].name;
      profile.kind = kindFromKernelName(profile.name);
      profile.grid = launch.grid;
      profile.block = launch.block;
      profile.sharedBytes = launch.sharedBytes;
      break;
    }
    case Step::Kind::Gemm:
    case Step::Kind::Fill:
    case Step::Kind::Copy:
      profile.kind = stepKindName(step.kind);
      profile.name = profile.kind + " " + std::to_string(step.index);
      break;
    }
    report.steps.push_back(std::move(profile));
  }
  return report;
}

StatusOr<std::vector<std::vector<size_t>>>
matchKernelsToSteps(const std::vector<StepProfile> &steps,
                    const std::vector<std::string> &kernelNames) {
  auto fused = [](const std::string &name) { return name.rfind("fuse_", 0) == 0; };
  std::vector<std::vector<size_t>> kernelsOf(steps.size());
  // CUPTI's auto ranges may be named by their index, not their kernel:
  // then each fused step and each GEMM is one kernel, in order, and the
  // count must agree.
  if (std::none_of(kernelNames.begin(), kernelNames.end(), fused)) {
    size_t expected = 0;
    for (const StepProfile &step : steps)
      expected += fused(step.name) || step.kind == "gemm";
    if (expected != kernelNames.size())
      return Status::failure(
          "the GPU ran " + std::to_string(kernelNames.size()) +
          " kernels, the steps launch " + std::to_string(expected) +
          " (one per fused kernel and per GEMM); without kernel names the "
          "kernels of a GEMM that ran several cannot be told apart");
    size_t next = 0;
    for (size_t i = 0; i < steps.size(); ++i)
      if (fused(steps[i].name) || steps[i].kind == "gemm")
        kernelsOf[i].push_back(next++);
    return kernelsOf;
  }
  size_t next = 0;
  size_t i = 0;
  while (i < steps.size()) {
    const StepProfile &step = steps[i];
    if (fused(step.name)) {
      if (next >= kernelNames.size() || kernelNames[next] != step.name)
        return Status::failure(
            "step " + std::to_string(step.index) + " (" + step.name +
            ") has no kernel of its name next in the GPU's launch order (" +
            (next < kernelNames.size() ? "found " + kernelNames[next]
                                       : std::string("no kernel left")) +
            ")");
      kernelsOf[i++].push_back(next++);
      continue;
    }
    // A gap between fused kernels: GEMMs, fills and copies, and the
    // library's (or the driver's) kernels that ran there.
    std::vector<size_t> gemms;
    for (; i < steps.size() && !fused(steps[i].name); ++i)
      if (steps[i].kind == "gemm")
        gemms.push_back(i);
    std::vector<size_t> kernels;
    while (next < kernelNames.size() && !fused(kernelNames[next]))
      kernels.push_back(next++);
    if (gemms.size() == 1) {
      kernelsOf[gemms[0]] = kernels;
      if (kernels.empty())
        return Status::failure("step " + std::to_string(steps[gemms[0]].index) +
                               " (" + steps[gemms[0]].name + ") ran no kernel");
    } else if (kernels.size() == gemms.size()) {
      for (size_t g = 0; g < gemms.size(); ++g)
        kernelsOf[gemms[g]] = {kernels[g]};
    }
    // Otherwise some call ran several kernels and which is whose is not
    // known: those GEMMs keep no counters.
  }
  if (next != kernelNames.size())
    return Status::failure("the GPU ran " + std::to_string(kernelNames.size()) +
                           " kernels, " + std::to_string(kernelNames.size() - next) +
                           " more than the steps account for (first: " +
                           kernelNames[next] + ")");
  return kernelsOf;
}

namespace {

std::string percent(double fraction) {
  char text[32];
  std::snprintf(text, sizeof text, "%.0f%%", 100 * fraction);
  return text;
}

/// Bytes for the memory roofline: measured DRAM traffic when there is some,
/// else the cost model's count.
double rooflineBytes(const StepProfile &step) {
  return isKnown(step.dramBytes) ? step.dramBytes : step.bytes;
}

} // namespace

Verdict classifyStep(const StepProfile &step, const DeviceCeilings &datasheet,
                     const DeviceCeilings &calibrated, std::string *reason,
                     const VerdictRule &rule) {
  auto say = [&](Verdict verdict, std::string why) {
    if (reason)
      *reason = std::move(why);
    return verdict;
  };
  if (step.timeMs < rule.minKernelMs)
    return say(Verdict::LatencyBound,
               "under " + std::to_string(int(rule.minKernelMs * 1000 + 0.5)) +
                   " us: launch and ramp-up dominate");
  if (isKnown(step.smEfficiency) && step.smEfficiency < rule.minSmEfficiency)
    return say(Verdict::LatencyBound,
               "SM efficiency " + percent(step.smEfficiency) +
                   (step.counters == CounterSource::Estimated ? " (estimated)"
                                                              : "") +
                   ": most SMs idle");
  const DeviceCeilings &ceilings = calibrated.known() ? calibrated : datasheet;
  if (!ceilings.known())
    return say(Verdict::Unknown, "no ceilings for this device");
  double seconds = step.timeMs * 1e-3;
  double compute = step.flops / seconds / (ceilings.peakTflops * 1e12);
  double memory = rooflineBytes(step) / seconds / (ceilings.bandwidthGBps * 1e9);
  std::string against =
      calibrated.known() ? " of calibrated " : " of datasheet ";
  if (std::max(compute, memory) < rule.minRooflineFraction)
    return say(Verdict::LatencyBound,
               "neither ceiling approached (" + percent(compute) + against +
                   "FLOP/s, " + percent(memory) + " of bandwidth)");
  if (compute >= memory)
    return say(Verdict::ComputeBound,
               percent(compute) + against + "FLOP/s");
  return say(Verdict::MemoryBound,
             percent(memory) + against + "bandwidth" +
                 (isKnown(step.dramBytes) ? " (measured bytes)"
                                          : " (model bytes)"));
}

ModelFlops computeModelFlops(const Executable &exe,
                             const std::vector<StepProfile> &steps) {
  ModelFlops model;
  for (const StepProfile &step : steps)
    if (step.attention)
      model.attentionFlops += step.flops;

  // Parameters: inputs X with an output named grad.X.
  for (const TensorSpec &input : exe.inputs)
    for (const TensorSpec &output : exe.outputs)
      if (output.name == "grad." + input.name) {
        model.parameters += static_cast<double>(input.numElements());
        break;
      }
  const TensorSpec *tokens = nullptr;
  for (const TensorSpec &input : exe.inputs) {
    bool integer = input.dtype == DType::I64 || input.dtype == DType::I32;
    if (integer && (input.name == "input_ids" || !tokens))
      tokens = &input;
    if (tokens && tokens->name == "input_ids")
      break;
  }
  if (model.parameters > 0 && tokens) {
    model.convention = "palm";
    model.tokens = static_cast<double>(tokens->numElements());
    model.flops = 6 * model.parameters * model.tokens + model.attentionFlops;
    char text[256];
    std::snprintf(text, sizeof text,
                  "PaLM: 6 x %.4g parameters x %.0f tokens (%s) + %.4g "
                  "attention FLOPs (cost model)",
                  model.parameters, model.tokens, tokens->name.c_str(),
                  model.attentionFlops);
    model.description = text;
    return model;
  }
  model.convention = "cost-model";
  for (const StepProfile &step : steps)
    if (step.kind == "gemm" || step.attention)
      model.flops += step.flops;
  model.description =
      model.parameters > 0
          ? "cost model's GEMM and attention FLOPs (parameters known but no "
            "integer token input)"
          : "cost model's GEMM and attention FLOPs (no grad.X outputs: not a "
            "training step with known parameters)";
  return model;
}

void analyzeProfile(ProfileReport &report, const Executable &exe,
                    const VerdictRule &rule) {
  report.sumStepMs = 0;
  report.kernelCount = report.gemmCount = 0;
  for (const StepProfile &step : report.steps) {
    report.sumStepMs += step.timeMs;
    if (step.kind == "gemm")
      ++report.gemmCount;
    else if (step.grid[0] > 0) // a kernel launch (fills and copies have none)
      ++report.kernelCount;
  }
  report.sumKernelMs = report.sumStepMs;
  report.overheadMs = report.stepMs - report.sumKernelMs;

  auto fraction = [](double achieved, double ceiling) {
    return ceiling > 0 ? achieved / ceiling : kUnknown;
  };
  for (StepProfile &step : report.steps) {
    step.shareOfStep =
        report.sumStepMs > 0 ? step.timeMs / report.sumStepMs : 0;
    double seconds = step.timeMs * 1e-3;
    step.achievedTflops = seconds > 0 ? step.flops / seconds / 1e12 : 0;
    step.achievedGBps = seconds > 0 ? rooflineBytes(step) / seconds / 1e9 : 0;
    step.computeFractionDatasheet =
        fraction(step.achievedTflops, report.datasheet.peakTflops);
    step.memoryFractionDatasheet =
        fraction(step.achievedGBps, report.datasheet.bandwidthGBps);
    step.computeFractionCalibrated =
        fraction(step.achievedTflops, report.calibrated.peakTflops);
    step.memoryFractionCalibrated =
        fraction(step.achievedGBps, report.calibrated.bandwidthGBps);
    step.verdict = classifyStep(step, report.datasheet, report.calibrated,
                                &step.verdictReason, rule);
  }

  report.model = computeModelFlops(exe, report.steps);
  double seconds = report.stepMs * 1e-3;
  report.mfuDatasheet =
      seconds > 0 && report.datasheet.peakTflops > 0
          ? report.model.flops / seconds / (report.datasheet.peakTflops * 1e12)
          : kUnknown;
  report.mfuCalibrated =
      seconds > 0 && report.calibrated.peakTflops > 0
          ? report.model.flops / seconds / (report.calibrated.peakTflops * 1e12)
          : kUnknown;
}

} // namespace fuse::runtime
