//===- GemmRunner.h - GemmSteps on cuBLASLt ---------------------*- C++ -*-===//
//
// The row-major to column-major mapping is GemmLayout.h's.
//
// Descriptors and layouts are built once at create time. Algorithms come
// from cublasLtMatmulAlgoGetHeuristic, cached by everything that can change
// the answer (types, shape, leading dimensions, strides, epilogue, and the
// pointers' alignment), so identical GEMMs share one query and a run with
// less aligned caller pointers gets an algorithm that accepts them. Internal
// to lib/Runtime.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_LIB_RUNTIME_GEMMRUNNER_H
#define FUSE_LIB_RUNTIME_GEMMRUNNER_H

#include "fuse/Runtime/Executable.h"
#include "fuse/Runtime/Status.h"

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace fuse::runtime::detail {

/// Device pointers of one GEMM's operands (c and bias may be null when the
/// step has none).
struct GemmPointers {
  const void *a = nullptr, *b = nullptr, *c = nullptr;
  void *d = nullptr;
  const void *bias = nullptr;
};

class GemmRunner {
public:
  /// `workspace` (of `workspaceBytes`) is cuBLASLt's scratch space, owned by
  /// the caller. `assumed` gives each GEMM's pointers as far as they are
  /// known at create time (arena, workspace, constants; a 256-byte aligned
  /// stand-in for caller memory): the heuristic is queried for them now, so
  /// that a GEMM cuBLASLt cannot run is reported before anything runs.
  static StatusOr<std::unique_ptr<GemmRunner>>
  create(const Executable &exe, void *workspace, size_t workspaceBytes,
         const std::vector<GemmPointers> &assumed);
  ~GemmRunner();
  GemmRunner(const GemmRunner &) = delete;
  GemmRunner &operator=(const GemmRunner &) = delete;

  /// Enqueues gemm `index` on `stream`; `what` names the step in errors.
  Status run(int64_t index, const GemmPointers &pointers, cudaStream_t stream,
             const std::string &what);

  /// Distinct heuristic queries so far (tests check that identical GEMMs
  /// share one).
  size_t heuristicQueries() const { return algorithms_.size(); }

private:
  /// Descriptors of one distinct GEMM shape; steps with equal shapes share.
  struct Descriptor {
    std::string key;
    cublasLtMatmulDesc_t matmul = nullptr;
    cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr, d = nullptr;
  };

  GemmRunner() = default;
  Status buildDescriptor(const GemmStep &gemm, Descriptor &descriptor);
  StatusOr<const cublasLtMatmulAlgo_t *> algorithm(int64_t index,
                                                   const GemmPointers &ptrs);

  const Executable *exe_ = nullptr;
  cublasLtHandle_t handle_ = nullptr;
  void *workspace_ = nullptr;
  size_t workspaceBytes_ = 0;
  std::vector<std::unique_ptr<Descriptor>> descriptors_;
  /// GemmStep index -> its descriptor.
  std::vector<Descriptor *> descriptorOf_;
  std::map<std::string, cublasLtMatmulAlgo_t> algorithms_;
};

/// "bf16 x bf16 -> f32 m=64 n=192 k=64 batch=1 epilogue=bias": a GEMM's
/// shape for messages.
std::string describeGemm(const GemmStep &gemm);
/// "gemm 2 (step 7: gemm: linear (model.py:40); bf16 x bf16 -> f32 m=..)":
/// which GEMM, where it runs and its shape.
std::string describeGemmStep(const Executable &exe, int64_t index);

} // namespace fuse::runtime::detail

#endif // FUSE_LIB_RUNTIME_GEMMRUNNER_H
