//===- ChromeTrace.cpp - The profile on a timeline ------------------------===//
//
// Chrome's trace event format (the JSON object form with "traceEvents"),
// which chrome://tracing and Perfetto open. Steps are complete events ("ph":
// "X") on one track, laid end to end in launch order with their median times
// (the profile times steps separately, so this is the step's shape, not one
// recorded run); timestamps are microseconds. Each event's args carry the
// step's figures; a counter track shows the achieved TFLOP/s. A metadata
// event names the process after the entry and device.
//
//===----------------------------------------------------------------------===//

#include "fuse/Runtime/Profiler.h"

#include "JsonWriter.h"

namespace fuse::runtime {

using detail::JsonWriter;

std::string chromeTrace(const ProfileReport &report) {
  JsonWriter json;
  json.beginObject();
  json.value("displayTimeUnit", "ns");
  json.beginArray("traceEvents");
  json.beginObject();
  json.value("name", "process_name");
  json.value("ph", "M");
  json.value("pid", 1);
  json.value("tid", 1);
  json.beginObject("args");
  json.value("name", "@" + report.entry + " on " + report.device);
  json.endObject();
  json.endObject();
  json.beginObject();
  json.value("name", "thread_name");
  json.value("ph", "M");
  json.value("pid", 1);
  json.value("tid", 1);
  json.beginObject("args");
  json.value("name", std::string("steps (median times, counters ") +
                         counterSourceName(report.counters) + ")");
  json.endObject();
  json.endObject();

  double startUs = 0;
  for (const StepProfile &step : report.steps) {
    double durationUs = step.timeMs * 1000;
    json.beginObject();
    json.value("name", step.name);
    json.value("cat", step.kind);
    json.value("ph", "X");
    json.value("pid", 1);
    json.value("tid", 1);
    json.value("ts", startUs);
    json.value("dur", durationUs);
    json.beginObject("args");
    json.value("index", step.index);
    json.value("label", step.label);
    json.value("time_ms", step.timeMs);
    json.value("share", step.shareOfStep);
    json.value("flops", step.flops);
    json.value("bytes", step.bytes);
    json.value("achieved_tflops", step.achievedTflops);
    json.value("achieved_gbps", step.achievedGBps);
    json.value("compute_fraction", isKnown(step.computeFractionCalibrated)
                                       ? step.computeFractionCalibrated
                                       : step.computeFractionDatasheet);
    json.value("memory_fraction", isKnown(step.memoryFractionCalibrated)
                                      ? step.memoryFractionCalibrated
                                      : step.memoryFractionDatasheet);
    json.value("counters", counterSourceName(step.counters));
    json.value("sm_efficiency", step.smEfficiency);
    json.value("occupancy", step.occupancy);
    json.value("dram_bytes", step.dramBytes);
    json.value("verdict", verdictName(step.verdict));
    json.value("verdict_reason", step.verdictReason);
    json.endObject();
    json.endObject();

    json.beginObject();
    json.value("name", "TFLOP/s");
    json.value("ph", "C");
    json.value("pid", 1);
    json.value("ts", startUs);
    json.beginObject("args");
    json.value("achieved", step.achievedTflops);
    json.endObject();
    json.endObject();
    startUs += durationUs;
  }
  json.endArray();
  json.endObject();
  return json.str() + "\n";
}

} // namespace fuse::runtime
