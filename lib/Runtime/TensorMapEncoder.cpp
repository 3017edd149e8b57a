//===- TensorMapEncoder.cpp - TensorMapArg -> CUtensorMap -----------------===//
//
// The driver's functions come from cudaGetDriverEntryPoint, pinned to the
// ABI of CUDA 12.0 (the version cuTensorMapEncodeTiled first had, whose
// typedef cudaTypedefs.h names PFN_cuTensorMapEncodeTiled_v12000), so a
// newer driver keeps giving this signature. Looked up once per process.
//
//===----------------------------------------------------------------------===//

#include "TensorMapEncoder.h"

#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdio>
#include <string>

namespace fuse::runtime::detail {

namespace {

struct DriverFunctions {
  PFN_cuTensorMapEncodeTiled_v12000 encodeTiled = nullptr;
  PFN_cuGetErrorName_v6000 errorName = nullptr;
  /// Why encodeTiled is null.
  std::string missing;
};

/// `symbol` at driver ABI `version`, or null with `why` set.
void *lookUp(const char *symbol, unsigned version, std::string &why) {
  void *function = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
#if CUDART_VERSION >= 12050
  cudaError_t error = cudaGetDriverEntryPointByVersion(
      symbol, &function, version, cudaEnableDefault, &found);
#else
  (void)version;
  cudaError_t error =
      cudaGetDriverEntryPoint(symbol, &function, cudaEnableDefault, &found);
#endif
  if (error != cudaSuccess) {
    why = std::string("cudaGetDriverEntryPoint(\"") + symbol +
          "\") failed: " + cudaGetErrorName(error) + ": " +
          cudaGetErrorString(error);
    (void)cudaGetLastError();
    return nullptr;
  }
  if (found != cudaDriverEntryPointSuccess || !function) {
    why = std::string("the CUDA driver has no ") + symbol +
          (found == cudaDriverEntryPointVersionNotSufficent
               ? " of the CUDA " + std::to_string(version / 1000) + "." +
                     std::to_string(version % 1000 / 10) + " ABI"
               : std::string()) +
          " (TMA tensor maps need a driver for CUDA 12.0 or newer)";
    return nullptr;
  }
  return function;
}

const DriverFunctions &driver() {
  static const DriverFunctions functions = [] {
    DriverFunctions f;
    f.encodeTiled = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(
        lookUp("cuTensorMapEncodeTiled", 12000, f.missing));
    std::string ignored; // error names are a nicety
    f.errorName = reinterpret_cast<PFN_cuGetErrorName_v6000>(
        lookUp("cuGetErrorName", 6000, ignored));
    return f;
  }();
  return functions;
}

CUtensorMapDataType dataType(DType dtype) {
  switch (dtype) {
  case DType::F32: return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  case DType::F16: return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  case DType::BF16: return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  case DType::I64: return CU_TENSOR_MAP_DATA_TYPE_INT64;
  case DType::I32: return CU_TENSOR_MAP_DATA_TYPE_INT32;
  case DType::I1: return CU_TENSOR_MAP_DATA_TYPE_UINT8; // one byte a value
  }
  return CU_TENSOR_MAP_DATA_TYPE_UINT8;
}

CUtensorMapSwizzle swizzleMode(TensorMapArg::Swizzle swizzle) {
  switch (swizzle) {
  case TensorMapArg::Swizzle::None: return CU_TENSOR_MAP_SWIZZLE_NONE;
  case TensorMapArg::Swizzle::B32: return CU_TENSOR_MAP_SWIZZLE_32B;
  case TensorMapArg::Swizzle::B64: return CU_TENSOR_MAP_SWIZZLE_64B;
  case TensorMapArg::Swizzle::B128: return CU_TENSOR_MAP_SWIZZLE_128B;
  }
  return CU_TENSOR_MAP_SWIZZLE_NONE;
}

std::string tuple(const uint64_t *values, uint32_t count) {
  std::string text = "(";
  for (uint32_t i = 0; i < count; ++i)
    text += (i ? "," : "") + std::to_string(values[i]);
  return text + ")";
}

/// "bf16 rank 2 dims=(64,100) strides=(128) box=(64,32) swizzle=128B at
/// 0x7f..." for the driver's errors.
std::string describe(const TensorMapArg &map, const void *base) {
  uint64_t box[5];
  for (int i = 0; i < 5; ++i)
    box[i] = map.box[i];
  char address[32];
  std::snprintf(address, sizeof address, "%p", base);
  return std::string(dtypeName(map.dtype)) + " rank " +
         std::to_string(map.rank) +
         " dims=" + tuple(map.dims.data(), map.rank) + " strides=" + tuple(map.strides.data(), map.rank - 1) +
         " box=" + tuple(box, map.rank) + " swizzle=" +
         swizzleName(map.swizzle) + " at " + address;
}

} // namespace

Status encodeTensorMap(const TensorMapArg &map, void *base, CUtensorMap *out) {
  if (reinterpret_cast<uintptr_t>(base) % 16 != 0) {
    char address[32];
    std::snprintf(address, sizeof address, "%p", base);
    return Status::failure(std::string("base address ") + address +
                           " is not 16-byte aligned (TMA reads and writes "
                           "global memory in 16-byte units)");
  }
  const DriverFunctions &functions = driver();
  if (!functions.encodeTiled)
    return Status::failure(functions.missing);
  cuuint64_t dims[5], strides[4];
  cuuint32_t box[5], elementStrides[5];
  for (int i = 0; i < 5; ++i) {
    dims[i] = map.dims[i];
    box[i] = map.box[i];
    elementStrides[i] = 1;
  }
  for (int i = 0; i < 4; ++i)
    strides[i] = map.strides[i];
  CUresult result = functions.encodeTiled(
      out, dataType(map.dtype), map.rank, base, dims, strides, box,
      elementStrides, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzleMode(map.swizzle),
      CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (result == CUDA_SUCCESS)
    return Status::success();
  const char *name = nullptr;
  if (!functions.errorName ||
      functions.errorName(result, &name) != CUDA_SUCCESS)
    name = nullptr;
  return Status::failure("cuTensorMapEncodeTiled failed with " +
                         (name ? std::string(name)
                               : "CUresult " + std::to_string(result)) +
                         " for " + describe(map, base));
}

} // namespace fuse::runtime::detail
