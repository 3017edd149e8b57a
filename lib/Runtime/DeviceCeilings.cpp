//===- DeviceCeilings.cpp - Datasheet table and calibration cache ---------===//
//
// The ceilings a profile compares against. The datasheet figures are dense
// bf16 tensor-core FLOP/s (no sparsity) and HBM bandwidth, matched by
// substrings of the CUDA device name, most specific first (an "H100 PCIe" is
// not an SXM part). The calibration cache (Calibration.h) is read and written
// here too: plain C++, so the tests need no GPU.
//
//===----------------------------------------------------------------------===//

#include "fuse/Runtime/Calibration.h"
#include "fuse/Runtime/KernelCache.h"
#include "fuse/Runtime/Profiler.h"

#include "JsonReader.h"
#include "JsonWriter.h"

#include <filesystem>
#include <fstream>
#include <sstream>

namespace fuse::runtime {

namespace {

struct DatasheetEntry {
  /// Every one of these substrings is in the device name.
  std::vector<const char *> match;
  const char *part;
  double tflops, bandwidthGBps;
};

/// Vendor datasheets, dense bf16 (the sparse figures are twice these).
const std::vector<DatasheetEntry> &datasheetTable() {
  static const std::vector<DatasheetEntry> table = {
      {{"H100", "PCIe"}, "H100 PCIe", 756, 2000},
      {{"H100", "NVL"}, "H100 NVL", 835, 3900},
      {{"GH200"}, "GH200", 989, 4000},
      {{"H200"}, "H200 SXM", 989, 4800},
      {{"H100"}, "H100 SXM", 989, 3350},
      {{"H800"}, "H800 SXM", 989, 3350},
      {{"A100", "PCIE", "80GB"}, "A100 PCIe 80GB", 312, 1935},
      {{"A100", "80GB"}, "A100 SXM 80GB", 312, 2039},
      {{"A100"}, "A100 40GB", 312, 1555},
      {{"L40S"}, "L40S", 362, 864},
      {{"B200"}, "B200", 2250, 8000},
  };
  return table;
}

std::string upper(std::string text) {
  for (char &c : text)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return text;
}

} // namespace

StatusOr<DeviceCeilings> datasheetCeilings(const std::string &deviceName) {
  std::string name = upper(deviceName);
  for (const DatasheetEntry &entry : datasheetTable()) {
    bool all = true;
    for (const char *part : entry.match)
      all = all && name.find(upper(part)) != std::string::npos;
    if (!all)
      continue;
    DeviceCeilings ceilings;
    ceilings.peakTflops = entry.tflops;
    ceilings.bandwidthGBps = entry.bandwidthGBps;
    ceilings.source = std::string("datasheet: ") + entry.part;
    return ceilings;
  }
  return Status::failure(
      "no datasheet ceilings for device '" + deviceName +
      "': pass --peak-tflops (dense bf16 TFLOP/s) or run fuse-run "
      "--calibrate to measure them; MFU and roofline fractions are left out "
      "until then");
}

std::string calibrationPath(const std::string &cacheDir,
                            const std::string &deviceName) {
  std::string dir = cacheDir.empty() ? KernelCache().directory() : cacheDir;
  std::string file = "calibration-";
  for (char c : deviceName)
    if (std::isalnum(static_cast<unsigned char>(c)))
      file += c;
  return (std::filesystem::path(dir) / (file + ".json")).string();
}

std::string calibrationJson(const std::string &deviceName,
                            const DeviceCeilings &ceilings) {
  detail::JsonWriter json;
  json.beginObject();
  json.value("schema", "fuse-calibration/1");
  json.value("device", deviceName);
  json.value("peak_tflops", ceilings.peakTflops);
  json.value("bandwidth_gbps", ceilings.bandwidthGBps);
  json.value("source", ceilings.source);
  json.endObject();
  return json.str() + "\n";
}

StatusOr<DeviceCeilings> parseCalibrationJson(const std::string &text,
                                              const std::string &deviceName) {
  std::string error;
  std::optional<detail::JsonValue> value = detail::JsonParser::parse(text, &error);
  if (!value)
    return Status::failure("calibration file: " + error);
  const detail::JsonValue *device = value->find("device");
  const detail::JsonValue *tflops = value->find("peak_tflops");
  const detail::JsonValue *bandwidth = value->find("bandwidth_gbps");
  const detail::JsonValue *source = value->find("source");
  using Kind = detail::JsonValue::Kind;
  if (!device || device->kind != Kind::String || !tflops ||
      tflops->kind != Kind::Number || !bandwidth ||
      bandwidth->kind != Kind::Number)
    return Status::failure("calibration file: expected device, peak_tflops "
                           "and bandwidth_gbps");
  if (device->string != deviceName)
    return Status::failure("calibration file is for '" + device->string +
                           "', not '" + deviceName + "'");
  DeviceCeilings ceilings;
  ceilings.peakTflops = tflops->number;
  ceilings.bandwidthGBps = bandwidth->number;
  ceilings.source = source && source->kind == Kind::String ? source->string
                                                           : "calibrated";
  return ceilings;
}

std::optional<DeviceCeilings> loadCalibration(const std::string &cacheDir,
                                              const std::string &deviceName) {
  std::ifstream file(calibrationPath(cacheDir, deviceName));
  if (!file)
    return std::nullopt;
  std::stringstream text;
  text << file.rdbuf();
  StatusOr<DeviceCeilings> ceilings = parseCalibrationJson(text.str(), deviceName);
  if (!ceilings.ok() || !ceilings->known())
    return std::nullopt;
  return *ceilings;
}

} // namespace fuse::runtime
