//===- ProfileJson.cpp - The profile as JSON ------------------------------===//
//
// Every figure of a ProfileReport, under the schema documented beside
// profileJson in Profiler.h ("fuse-profile/1"). Unknown figures are null,
// never 0, so a reader cannot mistake "not measured" for "idle".
//
//===----------------------------------------------------------------------===//

#include "fuse/Runtime/Profiler.h"

#include "JsonWriter.h"

namespace fuse::runtime {

using detail::JsonWriter;

namespace {

void writeCeilings(JsonWriter &json, const char *key,
                   const DeviceCeilings &ceilings) {
  json.beginObject(key);
  json.value("peak_tflops", ceilings.known() ? ceilings.peakTflops : kUnknown);
  json.value("bandwidth_gbps",
             ceilings.known() ? ceilings.bandwidthGBps : kUnknown);
  json.value("source", ceilings.source);
  json.endObject();
}

void writeShape(JsonWriter &json, const char *key,
                const std::array<uint32_t, 3> &shape) {
  json.raw(key, "[" + std::to_string(shape[0]) + ", " +
                    std::to_string(shape[1]) + ", " +
                    std::to_string(shape[2]) + "]");
}

} // namespace

std::string profileJson(const ProfileReport &report) {
  JsonWriter json;
  json.beginObject();
  json.value("schema", "fuse-profile/1");
  json.value("entry", report.entry);
  json.value("device", report.device);
  json.value("multiprocessors", report.multiprocessors);
  json.value("warmup", report.warmup);
  json.value("iterations", report.iterations);
  json.value("timing", report.timing);
  json.value("counters", counterSourceName(report.counters));
  json.value("counters_warning", report.countersWarning);

  json.beginObject("ceilings");
  writeCeilings(json, "datasheet", report.datasheet);
  writeCeilings(json, "calibrated", report.calibrated);
  json.value("note", report.ceilingsNote);
  json.endObject();

  json.beginObject("totals");
  json.value("step_ms", report.stepMs);
  json.value("sum_step_ms", report.sumStepMs);
  json.value("sum_kernel_ms", report.sumKernelMs);
  json.value("overhead_ms", report.overheadMs);
  json.value("steps", static_cast<int64_t>(report.steps.size()));
  json.value("kernels", report.kernelCount);
  json.value("gemms", report.gemmCount);
  json.value("arena_bytes", report.arenaBytes);
  json.value("workspace_bytes", report.workspaceBytes);
  json.value("io_bytes", report.ioBytes);
  json.value("executor_bytes", report.executorBytes);
  json.value("peak_bytes", report.peakBytes);
  json.value("device_used_bytes", report.deviceUsedBytes);
  json.value("model_flops", report.model.flops);
  json.value("mfu_datasheet", report.mfuDatasheet);
  json.value("mfu_calibrated", report.mfuCalibrated);
  json.value("mfu_convention", report.model.convention);
  json.value("mfu_description", report.model.description);
  json.value("parameters", report.model.parameters);
  json.value("tokens", report.model.tokens);
  json.value("attention_flops", report.model.attentionFlops);
  json.endObject();

  json.beginArray("steps");
  for (const StepProfile &step : report.steps) {
    json.beginObject();
    json.value("index", step.index);
    json.value("name", step.name);
    json.value("kind", step.kind);
    json.value("label", step.label);
    json.value("attention", step.attention);
    writeShape(json, "grid", step.grid);
    writeShape(json, "block", step.block);
    json.value("shared_bytes", static_cast<int64_t>(step.sharedBytes));
    json.value("time_ms", step.timeMs);
    json.value("share", step.shareOfStep);
    json.value("flops", step.flops);
    json.value("bytes", step.bytes);
    json.value("achieved_tflops", step.achievedTflops);
    json.value("achieved_gbps", step.achievedGBps);
    json.value("compute_fraction_datasheet", step.computeFractionDatasheet);
    json.value("memory_fraction_datasheet", step.memoryFractionDatasheet);
    json.value("compute_fraction_calibrated", step.computeFractionCalibrated);
    json.value("memory_fraction_calibrated", step.memoryFractionCalibrated);
    json.value("counters", counterSourceName(step.counters));
    json.value("sm_efficiency", step.smEfficiency);
    json.value("sm_efficiency_busiest_sm", step.smEfficiencyBusiestSm);
    json.value("occupancy", step.occupancy);
    json.value("dram_bytes", step.dramBytes);
    json.value("gpu_time_ms", step.gpuTimeMs);
    json.value("verdict", verdictName(step.verdict));
    json.value("verdict_reason", step.verdictReason);
    json.endObject();
  }
  json.endArray();
  json.endObject();
  return json.str() + "\n";
}

} // namespace fuse::runtime
