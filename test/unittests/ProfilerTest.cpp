//===- ProfilerTest.cpp - The profiler's arithmetic and outputs -----------===//
//
// No GPU: hand-made reports with known times and counters. MFU under both
// conventions, the verdict rule at its edges, the JSON schema (every field,
// parsed back), the Chrome trace's shape, the datasheet table and the
// calibration cache.
//
//===----------------------------------------------------------------------===//

#include "fuse/Runtime/Calibration.h"
#include "fuse/Runtime/Profiler.h"

#include "JsonReader.h" // lib/Runtime, internal

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

using namespace fuse;
using namespace fuse::runtime;
using detail::JsonParser;
using detail::JsonValue;
using ::testing::HasSubstr;

namespace {

/// A training step: two parameters with grad outputs, token ids, a GEMM, an
/// attention GEMM, a loop kernel, a fill.
Executable makeTrainingExecutable() {
  Executable exe;
  exe.entry = "train";
  exe.inputs = {{"w", DType::F32, {1000, 100}},     // 100000 parameters
                {"b", DType::F32, {100}},           // 100
                {"input_ids", DType::I64, {4, 64}}, // 256 tokens
                {"labels", DType::I64, {4, 64}}};
  exe.outputs = {{"loss", DType::F32, {}},
                 {"grad.w", DType::F32, {1000, 100}},
                 {"grad.b", DType::F32, {100}}};
  exe.arenaBytes = 1 << 20;
  exe.workspaceBytes = 4096;
  exe.kernels = {{"fuse_loop_0", "", {}}, {"fuse_row_1", "", {}}};
  exe.launches = {{0, {264, 1, 1}, {256, 1, 1}, 0, {}},
                  {1, {1, 1, 1}, {128, 1, 1}, 1024, {}}};
  exe.gemms.resize(2);
  exe.fills = {{BufferRef::arena(0), 64}};
  exe.steps = {{Step::Kind::Gemm, 0, "gemm: matmul (model.py:10)", 4e9, 1e7},
               {Step::Kind::Gemm, 1, "attention scores of attention (model.py:20)", 1e9, 1e6},
               {Step::Kind::Launch, 0, "loop: add, mul (model.py:11)", 0, 4e8},
               {Step::Kind::Launch, 1, "row: softmax (model.py:12)", 1e3, 1e3},
               {Step::Kind::Fill, 0, "zero: g", 0, 64}};
  return exe;
}

DeviceCeilings ceilings(double tflops, double gbps, const char *source) {
  DeviceCeilings result;
  result.peakTflops = tflops;
  result.bandwidthGBps = gbps;
  result.source = source;
  return result;
}

/// The training report with times and measured counters filled in.
ProfileReport makeReport(const Executable &exe) {
  ProfileReport report = describeSteps(exe);
  report.device = "NVIDIA H200";
  report.multiprocessors = 132;
  report.iterations = 20;
  report.warmup = 3;
  report.timing = "test";
  report.counters = CounterSource::Measured;
  report.datasheet = ceilings(1000, 5000, "datasheet: test");
  report.calibrated = ceilings(800, 4000, "calibrated: test");
  const double times[] = {0.01, 0.004, 0.2, 0.003, 0.001};
  for (size_t i = 0; i < report.steps.size(); ++i) {
    StepProfile &step = report.steps[i];
    step.timeMs = times[i];
    step.counters = CounterSource::Measured;
    step.smEfficiency = 0.9;
    step.occupancy = 0.4;
    step.dramBytes = step.bytes;
    step.gpuTimeMs = times[i] * 0.9;
  }
  report.stepMs = 0.25;
  return report;
}

TEST(ProfileDescribe, NamesKindsAndAttention) {
  ProfileReport report = describeSteps(makeTrainingExecutable());
  ASSERT_EQ(report.steps.size(), 5u);
  EXPECT_EQ(report.steps[0].name, "gemm 0");
  EXPECT_EQ(report.steps[0].kind, "gemm");
  EXPECT_FALSE(report.steps[0].attention);
  EXPECT_TRUE(report.steps[1].attention);
  EXPECT_EQ(report.steps[2].name, "fuse_loop_0");
  EXPECT_EQ(report.steps[2].kind, "loop");
  EXPECT_EQ(report.steps[2].grid[0], 264u);
  EXPECT_EQ(report.steps[4].kind, "fill");
  EXPECT_EQ(kindFromKernelName("fuse_flash_fwd_3"), "flash_fwd");
  EXPECT_EQ(kindFromKernelName("fuse_col_reduce_12"), "col_reduce");
  EXPECT_EQ(kindFromKernelName("other"), "other");
}

TEST(ProfileKernels, MatchedToStepsInLaunchOrder) {
  // gemm 0, gemm 1 (attention scores), fuse_loop_0, fuse_row_1, fill 0.
  ProfileReport report = describeSteps(makeTrainingExecutable());
  auto match = [&](std::vector<std::string> names) {
    return matchKernelsToSteps(report.steps, names);
  };
  // One kernel per GEMM: in order.
  StatusOr<std::vector<std::vector<size_t>>> matched =
      match({"nvjet_a", "nvjet_b", "fuse_loop_0", "fuse_row_1"});
  ASSERT_TRUE(matched.ok()) << matched.status().message();
  EXPECT_EQ((*matched)[0], (std::vector<size_t>{0}));
  EXPECT_EQ((*matched)[1], (std::vector<size_t>{1}));
  EXPECT_EQ((*matched)[2], (std::vector<size_t>{2}));
  EXPECT_EQ((*matched)[3], (std::vector<size_t>{3}));
  EXPECT_TRUE((*matched)[4].empty()); // the fill
  // Three kernels for two GEMMs: whose is whose is not known; no guess.
  matched = match({"nvjet_a", "splitk_reduce", "nvjet_b", "fuse_loop_0", "fuse_row_1"});
  ASSERT_TRUE(matched.ok()) << matched.status().message();
  EXPECT_TRUE((*matched)[0].empty());
  EXPECT_TRUE((*matched)[1].empty());
  EXPECT_EQ((*matched)[3], (std::vector<size_t>{4}));

  // A lone GEMM takes every kernel of its gap.
  ProfileReport lone = report;
  lone.steps.erase(lone.steps.begin() + 1);
  matched = matchKernelsToSteps(lone.steps, {"nvjet_a", "splitk_reduce", "fuse_loop_0",
                                             "fuse_row_1"});
  ASSERT_TRUE(matched.ok()) << matched.status().message();
  EXPECT_EQ((*matched)[0], (std::vector<size_t>{0, 1}));

  // A fused kernel out of place, a kernel too many, a GEMM with none.
  StatusOr<std::vector<std::vector<size_t>>> bad =
      match({"nvjet_a", "nvjet_b", "fuse_row_1", "fuse_loop_0"});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), ::testing::HasSubstr("(fuse_loop_0) has no kernel"));
  bad = match({"nvjet_a", "nvjet_b", "fuse_loop_0", "fuse_row_1", "fuse_stray_9"});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), ::testing::HasSubstr("fuse_stray_9"));
  bad = matchKernelsToSteps(lone.steps, {"fuse_loop_0", "fuse_row_1"});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), ::testing::HasSubstr("ran no kernel"));

  // Ranges named by index: one kernel per fused step and per GEMM.
  matched = match({"0", "1", "2", "3"});
  ASSERT_TRUE(matched.ok()) << matched.status().message();
  EXPECT_EQ((*matched)[1], (std::vector<size_t>{1}));
  EXPECT_EQ((*matched)[3], (std::vector<size_t>{3}));
  EXPECT_TRUE((*matched)[4].empty());
  bad = match({"0", "1", "2", "3", "4"});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), ::testing::HasSubstr("ran 5 kernels, the steps launch 4"));
}

TEST(ProfileMfu, PalmConventionForATrainingStep) {
  Executable exe = makeTrainingExecutable();
  ProfileReport report = makeReport(exe);
  analyzeProfile(report, exe);
  EXPECT_EQ(report.model.convention, "palm");
  EXPECT_DOUBLE_EQ(report.model.parameters, 100100);
  EXPECT_DOUBLE_EQ(report.model.tokens, 256);
  EXPECT_DOUBLE_EQ(report.model.attentionFlops, 1e9);
  double flops = 6.0 * 100100 * 256 + 1e9;
  EXPECT_DOUBLE_EQ(report.model.flops, flops);
  // 0.25 ms step: FLOPs / 2.5e-4 s / (1000e12 and 800e12).
  EXPECT_NEAR(report.mfuDatasheet, flops / 2.5e-4 / 1e15, 1e-12);
  EXPECT_NEAR(report.mfuCalibrated, flops / 2.5e-4 / 8e14, 1e-12);
  EXPECT_THAT(report.model.description, HasSubstr("input_ids"));
}

TEST(ProfileMfu, TokensFromTheFirstIntegerInputWithoutInputIds) {
  Executable exe = makeTrainingExecutable();
  exe.inputs[2].name = "tokens";
  exe.inputs[2].shape = {2, 8};
  ProfileReport report = makeReport(exe);
  analyzeProfile(report, exe);
  EXPECT_EQ(report.model.convention, "palm");
  EXPECT_DOUBLE_EQ(report.model.tokens, 16);
}

TEST(ProfileMfu, CostModelConventionWithoutGradients) {
  Executable exe = makeTrainingExecutable();
  exe.outputs = {{"logits", DType::F32, {4, 64, 10}}};
  ProfileReport report = makeReport(exe);
  analyzeProfile(report, exe);
  EXPECT_EQ(report.model.convention, "cost-model");
  // GEMM and attention steps only: 4e9 + 1e9 (the row kernel's 1e3 is not).
  EXPECT_DOUBLE_EQ(report.model.flops, 5e9);
  EXPECT_NEAR(report.mfuDatasheet, 5e9 / 2.5e-4 / 1e15, 1e-12);
}

TEST(ProfileMfu, UnknownPeakLeavesMfuUnknown) {
  Executable exe = makeTrainingExecutable();
  ProfileReport report = makeReport(exe);
  report.datasheet = DeviceCeilings();
  report.calibrated = DeviceCeilings();
  analyzeProfile(report, exe);
  EXPECT_FALSE(isKnown(report.mfuDatasheet));
  EXPECT_FALSE(isKnown(report.mfuCalibrated));
  EXPECT_EQ(report.steps[0].verdict, Verdict::Unknown);
}

TEST(ProfileTotals, SumsShareAndOverhead) {
  Executable exe = makeTrainingExecutable();
  ProfileReport report = makeReport(exe);
  analyzeProfile(report, exe);
  EXPECT_NEAR(report.sumStepMs, 0.218, 1e-12);
  EXPECT_NEAR(report.sumKernelMs, 0.218, 1e-12);
  EXPECT_NEAR(report.overheadMs, 0.25 - 0.218, 1e-12);
  EXPECT_EQ(report.kernelCount, 2);
  EXPECT_EQ(report.gemmCount, 2);
  EXPECT_NEAR(report.steps[2].shareOfStep, 0.2 / 0.218, 1e-12);
  // 4e9 FLOPs in 10 us = 400 TFLOP/s: 40% of datasheet, 50% of calibrated.
  EXPECT_NEAR(report.steps[0].achievedTflops, 400, 1e-9);
  EXPECT_NEAR(report.steps[0].computeFractionDatasheet, 0.4, 1e-12);
  EXPECT_NEAR(report.steps[0].computeFractionCalibrated, 0.5, 1e-12);
}

StepProfile stepWith(double ms, double flops, double bytes, double smEff) {
  StepProfile step;
  step.timeMs = ms;
  step.flops = flops;
  step.bytes = bytes;
  step.smEfficiency = smEff;
  step.counters = CounterSource::Measured;
  return step;
}

TEST(ProfileVerdict, Rule) {
  DeviceCeilings datasheet = ceilings(1000, 4000, "d");
  DeviceCeilings none;
  std::string why;
  // Under 5 us: latency/launch-bound whatever the rest says.
  EXPECT_EQ(classifyStep(stepWith(0.004, 4e9, 0, 1), datasheet, none, &why),
            Verdict::LatencyBound);
  EXPECT_THAT(why, HasSubstr("5 us"));
  // Half the SMs idle.
  EXPECT_EQ(classifyStep(stepWith(1, 1e12, 0, 0.3), datasheet, none, &why),
            Verdict::LatencyBound);
  EXPECT_THAT(why, HasSubstr("SM efficiency 30%"));
  // 1 ms, 8e11 FLOPs = 800 TFLOP/s = 80% of peak: compute-bound.
  EXPECT_EQ(classifyStep(stepWith(1, 8e11, 1e6, 0.95), datasheet, none, &why),
            Verdict::ComputeBound);
  EXPECT_THAT(why, HasSubstr("80% of datasheet FLOP/s"));
  // 3 GB in 1 ms = 3000 GB/s = 75% of bandwidth: memory-bound.
  EXPECT_EQ(classifyStep(stepWith(1, 1e9, 3e9, 0.95), datasheet, none, &why),
            Verdict::MemoryBound);
  EXPECT_THAT(why, HasSubstr("75% of datasheet bandwidth (model bytes)"));
  // Measured DRAM bytes win over the model's.
  StepProfile measured = stepWith(1, 1e9, 3e9, 0.95);
  measured.dramBytes = 0.4e9;
  EXPECT_EQ(classifyStep(measured, datasheet, none, &why), Verdict::LatencyBound);
  // Neither fraction reaches 30%: 20% and 25%.
  EXPECT_EQ(classifyStep(stepWith(1, 2e11, 1e9, 0.95), datasheet, none, &why),
            Verdict::LatencyBound);
  EXPECT_THAT(why, HasSubstr("neither ceiling"));
  // The calibrated ceilings are preferred: 600 of 700 TFLOP/s.
  EXPECT_EQ(classifyStep(stepWith(1, 6e11, 0, 0.95), datasheet,
                         ceilings(700, 3000, "c"), &why),
            Verdict::ComputeBound);
  EXPECT_THAT(why, HasSubstr("86% of calibrated"));
  // No ceilings: unknown (the time and SM rules still apply first).
  EXPECT_EQ(classifyStep(stepWith(1, 6e11, 0, 0.95), none, none, &why),
            Verdict::Unknown);
  // A custom rule moves the thresholds.
  VerdictRule loose;
  loose.minRooflineFraction = 0.1;
  EXPECT_EQ(classifyStep(stepWith(1, 2e11, 1e9, 0.95), datasheet, none, &why,
                         loose),
            Verdict::MemoryBound);
}

TEST(ProfileVerdict, EstimatedSmEfficiencyIsSaidSo) {
  StepProfile step = stepWith(1, 0, 0, 1.0 / 132);
  step.counters = CounterSource::Estimated;
  std::string why;
  EXPECT_EQ(classifyStep(step, ceilings(1, 1, "x"), DeviceCeilings(), &why),
            Verdict::LatencyBound);
  EXPECT_THAT(why, HasSubstr("(estimated)"));
}

/// Every key of `object`, in order.
std::vector<std::string> keys(const JsonValue &object) {
  std::vector<std::string> names;
  for (const auto &[name, value] : object.members)
    names.push_back(name);
  return names;
}

TEST(ProfileJson, EveryFieldPresentAndParsesBack) {
  Executable exe = makeTrainingExecutable();
  ProfileReport report = makeReport(exe);
  report.steps[4].smEfficiency = kUnknown; // written as null
  analyzeProfile(report, exe);
  std::string text = profileJson(report);
  std::string error;
  std::optional<JsonValue> json = JsonParser::parse(text, &error);
  ASSERT_TRUE(json) << error << "\n" << text;
  EXPECT_THAT(keys(*json),
              ::testing::ElementsAre("schema", "entry", "device",
                                     "multiprocessors", "warmup", "iterations",
                                     "timing", "counters", "counters_warning",
                                     "ceilings", "totals", "steps"));
  EXPECT_EQ(json->find("schema")->string, "fuse-profile/1");
  EXPECT_EQ(json->find("counters")->string, "measured");
  const JsonValue *ceilingsJson = json->find("ceilings");
  EXPECT_THAT(keys(*ceilingsJson),
              ::testing::ElementsAre("datasheet", "calibrated", "note"));
  EXPECT_THAT(keys(*ceilingsJson->find("calibrated")),
              ::testing::ElementsAre("peak_tflops", "bandwidth_gbps", "source"));
  EXPECT_DOUBLE_EQ(ceilingsJson->find("calibrated")->find("peak_tflops")->number, 800);
  const JsonValue *totals = json->find("totals");
  EXPECT_THAT(keys(*totals),
              ::testing::ElementsAre(
                  "step_ms", "sum_step_ms", "sum_kernel_ms", "overhead_ms",
                  "steps", "kernels", "gemms", "arena_bytes", "workspace_bytes",
                  "io_bytes", "executor_bytes", "peak_bytes",
                  "device_used_bytes", "model_flops", "mfu_datasheet", "mfu_calibrated",
                  "mfu_convention", "mfu_description", "parameters", "tokens",
                  "attention_flops"));
  EXPECT_DOUBLE_EQ(totals->find("model_flops")->number, report.model.flops);
  EXPECT_EQ(totals->find("mfu_convention")->string, "palm");
  EXPECT_DOUBLE_EQ(totals->find("arena_bytes")->number, 1 << 20);
  const JsonValue *steps = json->find("steps");
  ASSERT_EQ(steps->items.size(), 5u);
  const std::vector<std::string> stepKeys = {
      "index", "name", "kind", "label", "attention", "grid", "block",
      "shared_bytes", "time_ms", "share", "flops", "bytes", "achieved_tflops",
      "achieved_gbps", "compute_fraction_datasheet",
      "memory_fraction_datasheet", "compute_fraction_calibrated",
      "memory_fraction_calibrated", "counters", "sm_efficiency", "sm_efficiency_busiest_sm", "occupancy",
      "dram_bytes", "gpu_time_ms", "verdict", "verdict_reason"};
  for (const JsonValue &step : steps->items)
    EXPECT_EQ(keys(step), stepKeys);
  const JsonValue &loop = steps->items[2];
  EXPECT_EQ(loop.find("name")->string, "fuse_loop_0");
  EXPECT_EQ(loop.find("grid")->items.size(), 3u);
  EXPECT_DOUBLE_EQ(loop.find("grid")->items[0].number, 264);
  EXPECT_DOUBLE_EQ(loop.find("time_ms")->number, 0.2);
  EXPECT_EQ(loop.find("verdict")->string, "memory-bound"); // 2000 GB/s of 4000
  EXPECT_EQ(steps->items[1].find("attention")->kind, JsonValue::Kind::Bool);
  EXPECT_EQ(steps->items[4].find("sm_efficiency")->kind, JsonValue::Kind::Null);
  EXPECT_EQ(steps->items[0].find("label")->string, "gemm: matmul (model.py:10)");
}

TEST(ProfileJson, EstimatedReportCarriesItsWarning) {
  Executable exe = makeTrainingExecutable();
  ProfileReport report = makeReport(exe);
  report.counters = CounterSource::Estimated;
  report.countersWarning = "GPU counters unavailable (\"x\"): ESTIMATED";
  for (StepProfile &step : report.steps)
    step.counters = CounterSource::Estimated;
  analyzeProfile(report, exe);
  std::optional<JsonValue> json = JsonParser::parse(profileJson(report));
  ASSERT_TRUE(json);
  EXPECT_EQ(json->find("counters")->string, "estimated");
  EXPECT_EQ(json->find("counters_warning")->string, report.countersWarning);
  EXPECT_EQ(json->find("steps")->items[0].find("counters")->string, "estimated");
  std::string table = formatProfile(report);
  EXPECT_THAT(table, HasSubstr("~90%"));
  EXPECT_THAT(table, HasSubstr("counters: estimated"));
}

TEST(ChromeTrace, OneCompleteEventPerStepEndToEnd) {
  Executable exe = makeTrainingExecutable();
  ProfileReport report = makeReport(exe);
  analyzeProfile(report, exe);
  std::optional<JsonValue> json = JsonParser::parse(chromeTrace(report));
  ASSERT_TRUE(json);
  const JsonValue *events = json->find("traceEvents");
  ASSERT_TRUE(events && events->kind == JsonValue::Kind::Array);
  std::vector<const JsonValue *> complete;
  int metadata = 0;
  for (const JsonValue &event : events->items) {
    const std::string &phase = event.find("ph")->string;
    if (phase == "X")
      complete.push_back(&event);
    metadata += phase == "M";
    EXPECT_TRUE(event.find("name") && event.find("pid"));
  }
  EXPECT_EQ(metadata, 2);
  ASSERT_EQ(complete.size(), report.steps.size());
  double end = 0;
  for (size_t i = 0; i < complete.size(); ++i) {
    const JsonValue &event = *complete[i];
    EXPECT_EQ(event.find("name")->string, report.steps[i].name);
    EXPECT_NEAR(event.find("ts")->number, end, 1e-9);
    EXPECT_NEAR(event.find("dur")->number, report.steps[i].timeMs * 1000, 1e-9);
    end += event.find("dur")->number;
    const JsonValue *args = event.find("args");
    ASSERT_TRUE(args);
    for (const char *key : {"label", "time_ms", "achieved_tflops",
                            "achieved_gbps", "sm_efficiency", "occupancy",
                            "dram_bytes", "verdict"})
      EXPECT_TRUE(args->find(key)) << key;
  }
}

TEST(ProfileTable, LaunchOrderRankingKindsAndTotals) {
  Executable exe = makeTrainingExecutable();
  ProfileReport report = makeReport(exe);
  analyzeProfile(report, exe);
  std::string table = formatProfile(report, 2);
  EXPECT_THAT(table, HasSubstr("steps in launch order:"));
  EXPECT_THAT(table, HasSubstr("slowest 2 steps:"));
  EXPECT_THAT(table, HasSubstr("time by kind:"));
  EXPECT_THAT(table, HasSubstr("attention:gemm"));
  EXPECT_THAT(table, HasSubstr("MFU"));
  EXPECT_THAT(table, HasSubstr("palm"));
  // The ranking puts the 0.2 ms loop first.
  size_t ranking = table.find("slowest 2 steps:");
  EXPECT_LT(table.find("fuse_loop_0", ranking), table.find("gemm 0", ranking));
}

TEST(DeviceCeilingsTable, KnownDevices) {
  StatusOr<DeviceCeilings> h100 = datasheetCeilings("NVIDIA H100 80GB HBM3");
  ASSERT_TRUE(h100.ok());
  EXPECT_DOUBLE_EQ(h100->peakTflops, 989);
  EXPECT_DOUBLE_EQ(h100->bandwidthGBps, 3350);
  EXPECT_THAT(h100->source, HasSubstr("H100 SXM"));
  StatusOr<DeviceCeilings> h200 = datasheetCeilings("NVIDIA H200");
  ASSERT_TRUE(h200.ok());
  EXPECT_DOUBLE_EQ(h200->peakTflops, 989);
  EXPECT_DOUBLE_EQ(h200->bandwidthGBps, 4800);
  StatusOr<DeviceCeilings> pcie = datasheetCeilings("NVIDIA H100 PCIe");
  ASSERT_TRUE(pcie.ok());
  EXPECT_DOUBLE_EQ(pcie->peakTflops, 756);
  StatusOr<DeviceCeilings> a100 = datasheetCeilings("NVIDIA A100-SXM4-80GB");
  ASSERT_TRUE(a100.ok());
  EXPECT_DOUBLE_EQ(a100->peakTflops, 312);
  EXPECT_DOUBLE_EQ(a100->bandwidthGBps, 2039);
}

TEST(DeviceCeilingsTable, UnknownDeviceAsksForPeakOrCalibration) {
  StatusOr<DeviceCeilings> unknown = datasheetCeilings("NVIDIA GeForce GT 710");
  ASSERT_FALSE(unknown.ok());
  EXPECT_THAT(unknown.status().message(), HasSubstr("GeForce GT 710"));
  EXPECT_THAT(unknown.status().message(), HasSubstr("--peak-tflops"));
  EXPECT_THAT(unknown.status().message(), HasSubstr("--calibrate"));
}

TEST(Calibration, CacheRoundTripsPerDevice) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / "fuse-profiler-test-calibration";
  fs::remove_all(dir);
  fs::create_directories(dir);
  DeviceCeilings measured = ceilings(758.5, 4180.25, "calibrated: test");
  std::string path = calibrationPath(dir.string(), "NVIDIA H200");
  EXPECT_EQ(fs::path(path).filename(), "calibration-NVIDIAH200.json");
  std::ofstream(path) << calibrationJson("NVIDIA H200", measured);
  std::optional<DeviceCeilings> loaded = loadCalibration(dir.string(), "NVIDIA H200");
  ASSERT_TRUE(loaded);
  EXPECT_DOUBLE_EQ(loaded->peakTflops, 758.5);
  EXPECT_DOUBLE_EQ(loaded->bandwidthGBps, 4180.25);
  EXPECT_EQ(loaded->source, "calibrated: test");
  EXPECT_FALSE(loadCalibration(dir.string(), "NVIDIA H100 80GB HBM3"));
  StatusOr<DeviceCeilings> other = parseCalibrationJson(
      calibrationJson("NVIDIA H200", measured), "NVIDIA A100");
  EXPECT_FALSE(other.ok());
  EXPECT_FALSE(parseCalibrationJson("{\"device\": ", "x").ok());
  fs::remove_all(dir);
}

} // namespace
