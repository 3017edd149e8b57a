//===- CuptiRangeProfiler.cpp - Hardware counters per range ---------------===//
//
// The sequence CUPTI's range profiler needs, in order: profiler initialize;
// chip name and counter availability (the first call that fails without
// permission to read counters); host object, metrics, config image; enable
// on the context; counter data image sized for our ranges; set config (user
// range, user replay); then start / push / pop / stop per pass; decode; and
// evaluate each range. The destructor undoes whatever was done, so a failure
// half-way leaves CUPTI clean for the next attempt (and for other tools).
//
//===----------------------------------------------------------------------===//

#include "CuptiRangeProfiler.h"
#include "CudaError.h"

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_result.h>
#include <cupti_target.h>

namespace fuse::runtime::detail {

namespace {

/// The metrics, in RangeCounters' order.
const char *const kMetrics[] = {
    "sm__cycles_active.avg",
    "sm__cycles_elapsed.avg",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
    "gpu__time_duration.sum",
    "sm__cycles_active.max",
};
constexpr size_t kMetricCount = sizeof(kMetrics) / sizeof(kMetrics[0]);

Status cuptiCheck(CUptiResult result, const char *what) {
  if (result == CUPTI_SUCCESS)
    return Status::success();
  const char *text = nullptr;
  cuptiGetResultString(result, &text);
  std::string message = std::string(what) + ": " + (text ? text : "CUPTI error") +
                        " (" + std::to_string(static_cast<int>(result)) + ")";
  if (result == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES)
    message += "; reading GPU counters needs admin rights or the driver "
               "option NVreg_RestrictProfilingToAdminUsers=0";
  return Status::failure(message);
}

/// The primary context, current on this thread once the runtime API has
/// touched the device, taken through the runtime's driver entry point.
StatusOr<CUcontext> currentContext() {
  using GetCurrent = CUresult (*)(CUcontext *);
  void *function = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  cudaError_t error = cudaGetDriverEntryPointByVersion(
      "cuCtxGetCurrent", &function, 12000, cudaEnableDefault, &found);
  if (error != cudaSuccess || found != cudaDriverEntryPointSuccess || !function)
    return Status::failure("cuCtxGetCurrent is not available from the driver");
  CUcontext context = nullptr;
  if (reinterpret_cast<GetCurrent>(function)(&context) != CUDA_SUCCESS ||
      !context)
    return Status::failure("no current CUDA context");
  return context;
}

} // namespace

struct CuptiRangeProfiler::State {
  bool initialized = false;
  CUpti_Profiler_Host_Object *host = nullptr;
  CUpti_RangeProfiler_Object *ranges = nullptr;
  bool started = false;
  std::vector<uint8_t> config, counterData;

  ~State() {
    if (started) {
      CUpti_RangeProfiler_Stop_Params stop{CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE};
      stop.pRangeProfilerObject = ranges;
      cuptiRangeProfilerStop(&stop);
    }
    if (ranges) {
      CUpti_RangeProfiler_Disable_Params disable{
          CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE};
      disable.pRangeProfilerObject = ranges;
      cuptiRangeProfilerDisable(&disable);
    }
    if (host) {
      CUpti_Profiler_Host_Deinitialize_Params deinit{
          CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE};
      deinit.pHostObject = host;
      cuptiProfilerHostDeinitialize(&deinit);
    }
    if (initialized) {
      CUpti_Profiler_DeInitialize_Params deinit{
          CUpti_Profiler_DeInitialize_Params_STRUCT_SIZE};
      cuptiProfilerDeInitialize(&deinit);
    }
  }
};

CuptiRangeProfiler::CuptiRangeProfiler(std::unique_ptr<State> state)
    : state_(std::move(state)) {}
CuptiRangeProfiler::~CuptiRangeProfiler() = default;

StatusOr<std::unique_ptr<CuptiRangeProfiler>>
CuptiRangeProfiler::create(int ordinal, size_t maxRanges) {
  StatusOr<CUcontext> context = currentContext();
  if (!context.ok())
    return context.status();
  auto state = std::make_unique<State>();

  CUpti_Profiler_Initialize_Params init{CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
  FUSE_RETURN_IF_ERROR(cuptiCheck(cuptiProfilerInitialize(&init),
                                  "cuptiProfilerInitialize"));
  state->initialized = true;

  CUpti_Device_GetChipName_Params chip{CUpti_Device_GetChipName_Params_STRUCT_SIZE};
  chip.deviceIndex = static_cast<size_t>(ordinal);
  FUSE_RETURN_IF_ERROR(
      cuptiCheck(cuptiDeviceGetChipName(&chip), "cuptiDeviceGetChipName"));

  CUpti_Profiler_GetCounterAvailability_Params availability{
      CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE};
  availability.ctx = *context;
  FUSE_RETURN_IF_ERROR(cuptiCheck(
      cuptiProfilerGetCounterAvailability(&availability),
      "cuptiProfilerGetCounterAvailability"));
  std::vector<uint8_t> availabilityImage(availability.counterAvailabilityImageSize);
  availability.pCounterAvailabilityImage = availabilityImage.data();
  FUSE_RETURN_IF_ERROR(cuptiCheck(
      cuptiProfilerGetCounterAvailability(&availability),
      "cuptiProfilerGetCounterAvailability"));

  CUpti_Profiler_Host_Initialize_Params host{
      CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE};
  host.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
  host.pChipName = chip.pChipName;
  host.pCounterAvailabilityImage = availabilityImage.data();
  FUSE_RETURN_IF_ERROR(cuptiCheck(cuptiProfilerHostInitialize(&host),
                                  "cuptiProfilerHostInitialize"));
  state->host = host.pHostObject;

  std::vector<const char *> metrics(kMetrics, kMetrics + kMetricCount);
  CUpti_Profiler_Host_ConfigAddMetrics_Params add{
      CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE};
  add.pHostObject = state->host;
  add.ppMetricNames = metrics.data();
  add.numMetrics = metrics.size();
  FUSE_RETURN_IF_ERROR(cuptiCheck(cuptiProfilerHostConfigAddMetrics(&add),
                                  "cuptiProfilerHostConfigAddMetrics"));
  CUpti_Profiler_Host_GetConfigImageSize_Params configSize{
      CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE};
  configSize.pHostObject = state->host;
  FUSE_RETURN_IF_ERROR(cuptiCheck(cuptiProfilerHostGetConfigImageSize(&configSize),
                                  "cuptiProfilerHostGetConfigImageSize"));
  state->config.resize(configSize.configImageSize);
  CUpti_Profiler_Host_GetConfigImage_Params config{
      CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE};
  config.pHostObject = state->host;
  config.configImageSize = state->config.size();
  config.pConfigImage = state->config.data();
  FUSE_RETURN_IF_ERROR(cuptiCheck(cuptiProfilerHostGetConfigImage(&config),
                                  "cuptiProfilerHostGetConfigImage"));
  CUpti_Profiler_Host_GetNumOfPasses_Params passes{
      CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE};
  passes.configImageSize = state->config.size();
  passes.pConfigImage = state->config.data();
  FUSE_RETURN_IF_ERROR(cuptiCheck(cuptiProfilerHostGetNumOfPasses(&passes),
                                  "cuptiProfilerHostGetNumOfPasses"));

  CUpti_RangeProfiler_Enable_Params enable{
      CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE};
  enable.ctx = *context;
  FUSE_RETURN_IF_ERROR(cuptiCheck(cuptiRangeProfilerEnable(&enable),
                                  "cuptiRangeProfilerEnable"));
  state->ranges = enable.pRangeProfilerObject;

  CUpti_RangeProfiler_GetCounterDataSize_Params dataSize{
      CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE};
  dataSize.pRangeProfilerObject = state->ranges;
  dataSize.pMetricNames = metrics.data();
  dataSize.numMetrics = metrics.size();
  dataSize.maxNumOfRanges = maxRanges;
  dataSize.maxNumRangeTreeNodes = static_cast<uint32_t>(maxRanges);
  FUSE_RETURN_IF_ERROR(cuptiCheck(cuptiRangeProfilerGetCounterDataSize(&dataSize),
                                  "cuptiRangeProfilerGetCounterDataSize"));
  state->counterData.resize(dataSize.counterDataSize);
  CUpti_RangeProfiler_CounterDataImage_Initialize_Params data{
      CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE};
  data.pRangeProfilerObject = state->ranges;
  data.counterDataSize = state->counterData.size();
  data.pCounterData = state->counterData.data();
  FUSE_RETURN_IF_ERROR(
      cuptiCheck(cuptiRangeProfilerCounterDataImageInitialize(&data),
                 "cuptiRangeProfilerCounterDataImageInitialize"));

  CUpti_RangeProfiler_SetConfig_Params set{
      CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE};
  set.pRangeProfilerObject = state->ranges;
  set.configSize = state->config.size();
  set.pConfig = state->config.data();
  set.counterDataImageSize = state->counterData.size();
  set.pCounterDataImage = state->counterData.data();
  set.range = CUPTI_AutoRange;
  set.replayMode = CUPTI_UserReplay;
  set.maxRangesPerPass = maxRanges;
  set.numNestingLevels = 1;
  set.minNestingLevel = 1;
  set.passIndex = 0;
  set.targetNestingLevel = 1;
  FUSE_RETURN_IF_ERROR(cuptiCheck(cuptiRangeProfilerSetConfig(&set),
                                  "cuptiRangeProfilerSetConfig"));

  std::unique_ptr<CuptiRangeProfiler> profiler(
      new CuptiRangeProfiler(std::move(state)));
  profiler->passes_ = passes.numOfPasses;
  return profiler;
}

Status CuptiRangeProfiler::beginPass() {
  CUpti_RangeProfiler_Start_Params start{CUpti_RangeProfiler_Start_Params_STRUCT_SIZE};
  start.pRangeProfilerObject = state_->ranges;
  FUSE_RETURN_IF_ERROR(
      cuptiCheck(cuptiRangeProfilerStart(&start), "cuptiRangeProfilerStart"));
  state_->started = true;
  return Status::success();
}

StatusOr<bool> CuptiRangeProfiler::endPass() {
  CUpti_RangeProfiler_Stop_Params stop{CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE};
  stop.pRangeProfilerObject = state_->ranges;
  state_->started = false;
  FUSE_RETURN_IF_ERROR(
      cuptiCheck(cuptiRangeProfilerStop(&stop), "cuptiRangeProfilerStop"));
  return stop.isAllPassSubmitted != 0;
}

StatusOr<std::vector<RangeCounters>> CuptiRangeProfiler::results() {
  CUpti_RangeProfiler_DecodeData_Params decode{
      CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE};
  decode.pRangeProfilerObject = state_->ranges;
  FUSE_RETURN_IF_ERROR(cuptiCheck(cuptiRangeProfilerDecodeData(&decode),
                                  "cuptiRangeProfilerDecodeData"));
  if (decode.numOfRangeDropped > 0)
    return Status::failure("CUPTI dropped " +
                           std::to_string(decode.numOfRangeDropped) +
                           " ranges");
  CUpti_RangeProfiler_GetCounterDataInfo_Params info{
      CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE};
  info.pCounterDataImage = state_->counterData.data();
  info.counterDataImageSize = state_->counterData.size();
  FUSE_RETURN_IF_ERROR(cuptiCheck(cuptiRangeProfilerGetCounterDataInfo(&info),
                                  "cuptiRangeProfilerGetCounterDataInfo"));
  std::vector<const char *> metrics(kMetrics, kMetrics + kMetricCount);
  std::vector<RangeCounters> ranges;
  for (size_t r = 0; r < info.numTotalRanges; ++r) {
    double values[kMetricCount] = {};
    CUpti_Profiler_Host_EvaluateToGpuValues_Params evaluate{
        CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE};
    evaluate.pHostObject = state_->host;
    evaluate.pCounterDataImage = state_->counterData.data();
    evaluate.counterDataImageSize = state_->counterData.size();
    evaluate.rangeIndex = r;
    evaluate.ppMetricNames = metrics.data();
    evaluate.numMetrics = metrics.size();
    evaluate.pMetricValues = values;
    FUSE_RETURN_IF_ERROR(
        cuptiCheck(cuptiProfilerHostEvaluateToGpuValues(&evaluate),
                   "cuptiProfilerHostEvaluateToGpuValues"));
    RangeCounters counters;
    CUpti_RangeProfiler_CounterData_GetRangeInfo_Params name{
        CUpti_RangeProfiler_CounterData_GetRangeInfo_Params_STRUCT_SIZE};
    name.pCounterDataImage = state_->counterData.data();
    name.counterDataImageSize = state_->counterData.size();
    name.rangeIndex = r;
    name.rangeDelimiter = "/";
    if (cuptiRangeProfilerCounterDataGetRangeInfo(&name) == CUPTI_SUCCESS &&
        name.rangeName)
      counters.name = name.rangeName;
    counters.smCyclesActive = values[0];
    counters.smCyclesElapsed = values[1];
    counters.warpsActivePct = values[2];
    counters.dramBytesRead = values[3];
    counters.dramBytesWritten = values[4];
    counters.gpuTimeNs = values[5];
    counters.smCyclesActiveMax = values[6];
    ranges.push_back(std::move(counters));
  }
  return ranges;
}

} // namespace fuse::runtime::detail
