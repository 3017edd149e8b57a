//===- GemmRunner.cpp - GemmSteps on cuBLASLt -----------------------------===//
//
// Precision: CUBLAS_COMPUTE_32F with CUDA_R_32F scale. For f32 inputs this
// is full fp32 (TF32 only with CUBLAS_COMPUTE_32F_FAST_TF32; cuBLASLt has no
// math mode that would turn it on behind our back); the heuristic preference
// additionally masks out any implementation that rounds inputs to TF32, so a
// future default cannot change our numerics. bf16/f16 inputs accumulate in
// f32 on tensor cores.
//
//===----------------------------------------------------------------------===//

#include "GemmRunner.h"

#include "CudaError.h"
#include "GemmLayout.h"

#include <cstdint>
#include <sstream>

namespace fuse::runtime::detail {

namespace {

cudaDataType_t cudaType(DType dtype) {
  switch (dtype) {
  case DType::F16: return CUDA_R_16F;
  case DType::BF16: return CUDA_R_16BF;
  default: return CUDA_R_32F; // validateExecutable admits only float types
  }
}

cublasLtEpilogue_t cublasEpilogue(GemmStep::Epilogue epilogue) {
  switch (epilogue) {
  case GemmStep::Epilogue::None: return CUBLASLT_EPILOGUE_DEFAULT;
  case GemmStep::Epilogue::Bias: return CUBLASLT_EPILOGUE_BIAS;
  case GemmStep::Epilogue::Relu: return CUBLASLT_EPILOGUE_RELU;
  case GemmStep::Epilogue::ReluBias: return CUBLASLT_EPILOGUE_RELU_BIAS;
  case GemmStep::Epilogue::Gelu: return CUBLASLT_EPILOGUE_GELU;
  case GemmStep::Epilogue::GeluBias: return CUBLASLT_EPILOGUE_GELU_BIAS;
  }
  return CUBLASLT_EPILOGUE_DEFAULT;
}

/// Everything that shapes the descriptors (not alpha, beta or pointers).
std::string shapeKey(const GemmStep &g) {
  std::ostringstream os;
  os << (int)g.abType << ',' << (int)g.cdType << ',' << g.transA << g.transB
     << ',' << g.m << ',' << g.n << ',' << g.k << ',' << g.batch << ','
     << g.lda << ',' << g.ldb << ',' << g.ldd << ',' << g.strideA << ','
     << g.strideB << ',' << g.strideD << ",e" << (int)g.epilogue;
  if (g.hasC())
    os << ",c" << g.ldc << ',' << g.strideC;
  if (g.hasBias())
    os << ",b" << (int)g.biasType;
  return os.str();
}

/// The largest power of two (at most 256, cuBLASLt's largest requirement)
/// dividing the address of every batch entry.
uint32_t alignment(const void *pointer, int64_t batch, int64_t stride,
                   DType dtype) {
  uint64_t bits = reinterpret_cast<uintptr_t>(pointer) | 256;
  if (batch > 1 && stride != 0)
    bits |= static_cast<uint64_t>(stride) * dtypeSize(dtype);
  return static_cast<uint32_t>(bits & (~bits + 1));
}

template <typename T>
Status setDesc(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr,
               const T &value, const char *name) {
  return cublasCheck(
      cublasLtMatmulDescSetAttribute(desc, attr, &value, sizeof value),
      std::string("cublasLtMatmulDescSetAttribute(") + name + ")");
}

template <typename T>
Status setPref(cublasLtMatmulPreference_t pref,
               cublasLtMatmulPreferenceAttributes_t attr, const T &value,
               const char *name) {
  return cublasCheck(
      cublasLtMatmulPreferenceSetAttribute(pref, attr, &value, sizeof value),
      std::string("cublasLtMatmulPreferenceSetAttribute(") + name + ")");
}

/// A column-major layout of `rows` x `cols` (leading dimension `ld`),
/// batched with `stride` elements between entries.
StatusOr<cublasLtMatrixLayout_t> makeLayout(DType dtype, int64_t rows,
                                            int64_t cols, int64_t ld,
                                            int64_t batch, int64_t stride) {
  cublasLtMatrixLayout_t layout = nullptr;
  FUSE_RETURN_IF_ERROR(cublasCheck(
      cublasLtMatrixLayoutCreate(&layout, cudaType(dtype), (uint64_t)rows,
                                 (uint64_t)cols, ld),
      "cublasLtMatrixLayoutCreate"));
  int32_t count = static_cast<int32_t>(batch);
  Status status = cublasCheck(
      cublasLtMatrixLayoutSetAttribute(
          layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count),
      "setting a layout's batch count");
  if (status.ok())
    status = cublasCheck(cublasLtMatrixLayoutSetAttribute(
                             layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                             &stride, sizeof stride),
                         "setting a layout's batch stride");
  if (!status.ok()) {
    cublasLtMatrixLayoutDestroy(layout);
    return status;
  }
  return layout;
}

/// Owns a heuristic preference for the length of one query.
struct PreferenceGuard {
  cublasLtMatmulPreference_t pref = nullptr;
  ~PreferenceGuard() {
    if (pref)
      cublasLtMatmulPreferenceDestroy(pref);
  }
};

} // namespace

std::string describeGemmStep(const Executable &exe, int64_t index) {
  std::string text = "gemm " + std::to_string(index) + " (";
  for (size_t i = 0; i < exe.steps.size(); ++i) {
    const Step &step = exe.steps[i];
    if (step.kind == Step::Kind::Gemm && step.index == index) {
      text += "step " + std::to_string(i);
      if (!step.label.empty())
        text += ": " + step.label;
      text += "; ";
      break;
    }
  }
  return text + describeGemm(exe.gemms[index]) + ")";
}

std::string describeGemm(const GemmStep &g) {
  std::ostringstream os;
  os << dtypeName(g.abType) << " x " << dtypeName(g.abType) << " -> "
     << dtypeName(g.cdType) << " m=" << g.m << " n=" << g.n << " k=" << g.k
     << " batch=" << g.batch << (g.transA ? " transA" : "")
     << (g.transB ? " transB" : "") << " epilogue=" << epilogueName(g.epilogue);
  return os.str();
}

StatusOr<std::unique_ptr<GemmRunner>>
GemmRunner::create(const Executable &exe, void *workspace,
                   size_t workspaceBytes,
                   const std::vector<GemmPointers> &assumed) {
  std::unique_ptr<GemmRunner> runner(new GemmRunner());
  runner->exe_ = &exe;
  runner->workspace_ = workspace;
  runner->workspaceBytes_ = workspaceBytes;
  FUSE_RETURN_IF_ERROR(
      cublasCheck(cublasLtCreate(&runner->handle_), "cublasLtCreate"));

  std::map<std::string, Descriptor *> byKey;
  for (size_t i = 0; i < exe.gemms.size(); ++i) {
    const GemmStep &gemm = exe.gemms[i];
    std::string key = shapeKey(gemm);
    Descriptor *&descriptor = byKey[key];
    if (!descriptor) {
      runner->descriptors_.push_back(std::make_unique<Descriptor>());
      descriptor = runner->descriptors_.back().get();
      descriptor->key = key;
      Status status = runner->buildDescriptor(gemm, *descriptor);
      if (!status.ok())
        return Status::failure(describeGemmStep(exe, (int64_t)i) + ": " +
                               status.message());
    }
    runner->descriptorOf_.push_back(descriptor);
  }
  for (size_t i = 0; i < exe.gemms.size(); ++i) {
    StatusOr<const cublasLtMatmulAlgo_t *> algo =
        runner->algorithm(static_cast<int64_t>(i), assumed[i]);
    if (!algo.ok())
      return algo.status();
  }
  return runner;
}

Status GemmRunner::buildDescriptor(const GemmStep &g, Descriptor &desc) {
  FUSE_RETURN_IF_ERROR(cublasCheck(
      cublasLtMatmulDescCreate(&desc.matmul, CUBLAS_COMPUTE_32F, CUDA_R_32F),
      "cublasLtMatmulDescCreate"));
  ColumnMajorGemm cm = toColumnMajor(g);
  cublasOperation_t transa = cm.transA ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t transb = cm.transB ? CUBLAS_OP_T : CUBLAS_OP_N;
  FUSE_RETURN_IF_ERROR(
      setDesc(desc.matmul, CUBLASLT_MATMUL_DESC_TRANSA, transa, "TRANSA"));
  FUSE_RETURN_IF_ERROR(
      setDesc(desc.matmul, CUBLASLT_MATMUL_DESC_TRANSB, transb, "TRANSB"));
  cublasLtEpilogue_t epilogue = cublasEpilogue(g.epilogue);
  FUSE_RETURN_IF_ERROR(
      setDesc(desc.matmul, CUBLASLT_MATMUL_DESC_EPILOGUE, epilogue, "EPILOGUE"));
  if (g.hasBias()) {
    int32_t biasType = cudaType(g.biasType);
    FUSE_RETURN_IF_ERROR(setDesc(desc.matmul,
                                 CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, biasType,
                                 "BIAS_DATA_TYPE"));
  }

  // cuBLASLt's A holds our B and its B our A (GemmLayout.h).
  auto layout = [&](DType dtype, const ColumnMajorLayout &l,
                    cublasLtMatrixLayout_t &out) -> Status {
    StatusOr<cublasLtMatrixLayout_t> made =
        makeLayout(dtype, l.rows, l.cols, l.ld, cm.batch, l.stride);
    if (!made.ok())
      return made.status();
    out = *made;
    return Status::success();
  };
  FUSE_RETURN_IF_ERROR(layout(g.abType, cm.a, desc.a));
  FUSE_RETURN_IF_ERROR(layout(g.abType, cm.b, desc.b));
  FUSE_RETURN_IF_ERROR(layout(g.cdType, cm.d, desc.d));
  if (g.hasC())
    FUSE_RETURN_IF_ERROR(layout(g.cdType, cm.c, desc.c));
  return Status::success();
}

StatusOr<const cublasLtMatmulAlgo_t *>
GemmRunner::algorithm(int64_t index, const GemmPointers &ptrs) {
  const GemmStep &g = exe_->gemms[index];
  Descriptor &desc = *descriptorOf_[index];
  uint32_t alignA = alignment(ptrs.a, g.batch, g.strideA, g.abType);
  uint32_t alignB = alignment(ptrs.b, g.batch, g.strideB, g.abType);
  uint32_t alignD = alignment(ptrs.d, g.batch, g.strideD, g.cdType);
  uint32_t alignC =
      g.hasC() ? alignment(ptrs.c, g.batch, g.strideC, g.cdType) : alignD;
  uint32_t alignBias = g.hasBias() ? alignment(ptrs.bias, 1, 0, g.biasType) : 0;
  std::string key = desc.key + "|" + std::to_string(alignA) + "," +
                    std::to_string(alignB) + "," + std::to_string(alignC) +
                    "," + std::to_string(alignD) + "," +
                    std::to_string(alignBias);
  if (auto found = algorithms_.find(key); found != algorithms_.end())
    return &found->second;

  std::string what = describeGemmStep(*exe_, index);
  PreferenceGuard guard;
  FUSE_RETURN_IF_ERROR(cublasCheck(cublasLtMatmulPreferenceCreate(&guard.pref),
                                   what + ": cublasLtMatmulPreferenceCreate"));
  uint64_t maxWorkspace = workspaceBytes_;
  FUSE_RETURN_IF_ERROR(setPref(guard.pref,
                               CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                               maxWorkspace, "MAX_WORKSPACE_BYTES"));
  // cuBLASLt's A and B are our B and A.
  FUSE_RETURN_IF_ERROR(setPref(guard.pref,
                               CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES,
                               alignB, "MIN_ALIGNMENT_A_BYTES"));
  FUSE_RETURN_IF_ERROR(setPref(guard.pref,
                               CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                               alignA, "MIN_ALIGNMENT_B_BYTES"));
  FUSE_RETURN_IF_ERROR(setPref(guard.pref,
                               CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES,
                               alignC, "MIN_ALIGNMENT_C_BYTES"));
  FUSE_RETURN_IF_ERROR(setPref(guard.pref,
                               CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES,
                               alignD, "MIN_ALIGNMENT_D_BYTES"));
  if (g.abType == DType::F32) {
    uint64_t mask = ~uint64_t(CUBLASLT_NUMERICAL_IMPL_FLAGS_INPUT_TF32);
    FUSE_RETURN_IF_ERROR(
        setPref(guard.pref, CUBLASLT_MATMUL_PREF_IMPL_MASK, mask, "IMPL_MASK"));
  }
  // The heuristic reads the bias pointer's alignment (not its data).
  if (g.hasBias())
    FUSE_RETURN_IF_ERROR(setDesc(desc.matmul, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                 ptrs.bias, "BIAS_POINTER"));

  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(
      handle_, desc.matmul, desc.a, desc.b, g.hasC() ? desc.c : desc.d, desc.d,
      guard.pref, 1, &result, &found);
  if (status != CUBLAS_STATUS_SUCCESS || found == 0 ||
      result.state != CUBLAS_STATUS_SUCCESS) {
    std::string why =
        status != CUBLAS_STATUS_SUCCESS
            ? std::string(cublasLtGetStatusName(status)) + " (" +
                  cublasLtGetStatusString(status) + ")"
            : std::string("the heuristic returned none");
    return Status::failure(
        "no cuBLASLt algorithm for " + what + " with lda=" +
        std::to_string(g.lda) + " ldb=" + std::to_string(g.ldb) +
        " ldd=" + std::to_string(g.ldd) + ", operand alignment A=" +
        std::to_string(alignA) + " B=" + std::to_string(alignB) +
        " D=" + std::to_string(alignD) + " bytes: " + why);
  }
  return &algorithms_.emplace(key, result.algo).first->second;
}

Status GemmRunner::run(int64_t index, const GemmPointers &ptrs,
                       cudaStream_t stream, const std::string &what) {
  const GemmStep &g = exe_->gemms[index];
  StatusOr<const cublasLtMatmulAlgo_t *> algo = algorithm(index, ptrs);
  if (!algo.ok())
    return Status::failure(what + ": " + algo.status().message());
  Descriptor &desc = *descriptorOf_[index];
  // Set per call: descriptors are shared between steps of the same shape.
  // The value is read when the call is enqueued (and baked into a captured
  // graph), so the steps do not interfere.
  if (g.hasBias())
    FUSE_RETURN_IF_ERROR(setDesc(desc.matmul, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                 ptrs.bias, "BIAS_POINTER"));
  float alpha = g.alpha;
  float beta = g.hasC() ? g.beta : 0.0f;
  // Without C, D's pointer and layout stand in (beta = 0: never read).
  const void *c = g.hasC() ? ptrs.c : ptrs.d;
  cublasLtMatrixLayout_t cLayout = g.hasC() ? desc.c : desc.d;
  return cublasCheck(cublasLtMatmul(handle_, desc.matmul, &alpha, ptrs.b,
                                    desc.a, ptrs.a, desc.b, &beta, c, cLayout,
                                    ptrs.d, desc.d, *algo, workspace_,
                                    workspaceBytes_, stream),
                     what + ": cublasLtMatmul (" + describeGemm(g) + ")");
}

GemmRunner::~GemmRunner() {
  for (const std::unique_ptr<Descriptor> &desc : descriptors_) {
    for (cublasLtMatrixLayout_t layout : {desc->a, desc->b, desc->c, desc->d})
      if (layout)
        cublasLtMatrixLayoutDestroy(layout);
    if (desc->matmul)
      cublasLtMatmulDescDestroy(desc->matmul);
  }
  if (handle_)
    cublasLtDestroy(handle_);
}

} // namespace fuse::runtime::detail
