//===- AttentionLowering.cpp - Attention as GEMMs and softmax kernels -----===//
//
// What the flash kernels do not take (f32, f16 / bf16 at other head dims, a
// boolean mask) runs as batched cuBLASLt GEMMs around the row kernels of
// kernels/attention_softmax.cuh, with the scores in the workspace:
//
//   forward:  S = scale Q K^T (f32) [+ mask];  P, lse = softmax(S);
//             [P *= Z];  O = P V
//   backward: S = scale Q K^T [+ mask];  P = exp(S - lse) [* Z];
//             dV = P^T dO;  dP = dO V^T [* Z];
//             dS = exp(S - lse) (dP - rowsum(dO O)) scale;
//             dQ = dS K;  dK = dS^T Q
//
// Z is dropout's keep factor per score (0 or 1 / (1 - p), Philox as the
// reference draws it); the bracketed steps are in-place passes launched
// only when the op has a mask or dropout.
//
// Grouped-query attention needs no copies: the G query heads that share a
// key/value head are consecutive in memory, so they are one GEMM batch entry
// of G * Tq rows, and dK, dV sum over them inside the GEMM.
//
//===----------------------------------------------------------------------===//

#include "Lowerings.h"

using namespace mlir;
using namespace mlir::fuse;
using ::fuse::runtime::BufferRef;
using ::fuse::runtime::GemmStep;

namespace fuse::codegen {

namespace {

struct AttentionShape {
  int64_t batch, queryHeads, kvHeads, queryLength, keyLength, headDim, valueDim;
  int64_t groups() const { return queryHeads / kvHeads; }
  /// GEMM batch entries: one per (batch, key/value head).
  int64_t entries() const { return batch * kvHeads; }
  /// Score rows per entry.
  int64_t rowsPerEntry() const { return groups() * queryLength; }
  int64_t rows() const { return batch * queryHeads * queryLength; }
};

AttentionShape attentionShape(Value query, Value key, Value value) {
  std::vector<int64_t> q = shapeOf(query), k = shapeOf(key), v = shapeOf(value);
  return {q[0], q[1], k[1], q[2], k[2], q[3], v[3]};
}

/// C = alpha * op(A) op(B) per batch entry; strides in elements.
GemmStep batchedGemm(DType abType, DType cdType, int64_t batch, int64_t m,
                     int64_t n, int64_t k, bool transA, bool transB,
                     BufferRef a, int64_t strideA, BufferRef b, int64_t strideB,
                     BufferRef d, int64_t strideD, float alpha) {
  GemmStep gemm;
  gemm.abType = abType;
  gemm.cdType = cdType;
  gemm.batch = batch;
  gemm.m = m;
  gemm.n = n;
  gemm.k = k;
  gemm.transA = transA;
  gemm.transB = transB;
  gemm.lda = transA ? m : k;
  gemm.ldb = transB ? k : n;
  gemm.ldc = gemm.ldd = n;
  gemm.a = a;
  gemm.b = b;
  gemm.d = d;
  gemm.strideA = strideA;
  gemm.strideB = strideB;
  gemm.strideC = gemm.strideD = strideD;
  gemm.alpha = alpha;
  return gemm;
}

/// A one-block-per-row launch of a kernels/attention_softmax.cuh function.
void addSoftmaxLaunch(CodegenContext &context, const std::string &call,
                      const std::vector<std::pair<std::string, DType>> &params,
                      const std::vector<bool> &isConst,
                      const std::vector<BufferRef> &refs, int64_t rows,
                      const std::string &label, double bytes) {
  KernelParams kernelParams;
  std::vector<std::string> names;
  for (size_t i = 0; i < params.size(); ++i)
    names.push_back(kernelParams.add(params[i].first, params[i].second,
                                     isConst[i], refs[i]));
  std::string text = call;
  for (size_t i = 0; i < names.size(); ++i) {
    std::string placeholder = "$" + std::to_string(i);
    size_t at = text.find(placeholder);
    text.replace(at, placeholder.size(), names[i]);
  }
  KernelSpec spec;
  spec.kind = "attention_softmax";
  spec.body = kernelSignature(kernelParams, 256) + "  " + text + ";\n}\n";
  spec.helpers = {"common.cuh", "reductions.cuh", "attention_softmax.cuh"};
  spec.grid = {static_cast<uint32_t>(rows), 1, 1};
  spec.block = {256, 1, 1};
  spec.args = kernelParams.args;
  context.addLaunch(spec, label, label, 0.0, bytes);
}

std::string typeArgument(DType dtype) { return storageType(dtype); }

/// The optional parts of an attention op: its mask and its dropout with the
/// Philox seed and offset (the verifier gives every op with dropout both),
/// and the buffers of those that it has.
struct Regularisation {
  Value mask;
  float dropout = 0.0f;
  BufferRef maskRef, seedRef, offsetRef;
};

/// `op`'s regularisation, its buffers found by `outer` (fusion input values
/// to their buffers).
template <typename OpTy, typename Outer>
FailureOr<Regularisation> regularisationOf(OpTy op, Outer outer) {
  Regularisation parts;
  parts.mask = op.getMask();
  parts.dropout = static_cast<float>(op.getDropoutP().convertToDouble());
  for (auto [value, ref] : {std::pair<Value, BufferRef *>{op.getMask(), &parts.maskRef},
                            {op.getSeed(), &parts.seedRef},
                            {op.getOffset(), &parts.offsetRef}}) {
    if (!value)
      continue;
    FailureOr<BufferRef> where = outer(value);
    if (failed(where))
      return op.emitError() << "attention operands must be in memory";
    *ref = *where;
  }
  return parts;
}

/// S += mask in place (attentionMaskScores), when there is a mask.
void addMaskPass(CodegenContext &context, const Regularisation &parts, const BufferRef &s,
                 const AttentionShape &shape, const std::string &label) {
  std::array<int64_t, 3> strides = attentionMaskStrides(parts.mask);
  DType maskType = dtypeOf(parts.mask);
  std::string call = "fuse::attentionMaskScores<" + typeArgument(maskType) + ">($0, $1, " +
                     std::to_string(shape.queryHeads) + ", " +
                     std::to_string(shape.queryLength) + ", " +
                     std::to_string(shape.keyLength) + ", " + std::to_string(strides[0]) +
                     "LL, " + std::to_string(strides[1]) + "LL, " +
                     std::to_string(strides[2]) + "LL)";
  int64_t scores = shape.rows() * shape.keyLength;
  addSoftmaxLaunch(context, call, {{"s", DType::F32}, {"mask", maskType}}, {false, true},
                   {s, parts.maskRef}, shape.rows(), "attention mask of " + label,
                   static_cast<double>(scores) * (8 + dtypeSize(maskType)));
}

/// values *= dropout's keep factors in place (attentionDropout); `values`
/// holds one row of keyLength scores per query row.
void addDropoutPass(CodegenContext &context, const Regularisation &parts, DType valueType,
                    const BufferRef &values, const AttentionShape &shape,
                    const std::string &what) {
  std::string call = "fuse::attentionDropout<" + typeArgument(valueType) + ">($0, $1, $2, " +
                     std::to_string(shape.keyLength) + ", " + floatLiteral(parts.dropout) + ")";
  addSoftmaxLaunch(context, call,
                   {{"values", valueType}, {"seed", DType::I64}, {"offset", DType::I64}},
                   {false, true, true}, {values, parts.seedRef, parts.offsetRef}, shape.rows(),
                   what,
                   static_cast<double>(shape.rows() * shape.keyLength) * 2 *
                       dtypeSize(valueType));
}

/// The memory of result `index` of the fusion's attention op: that of the
/// fusion result that yields it, or, when the fusion does not return it
/// (nothing reads it; the pipeline dropped it), workspace of its size, since
/// the kernels write it anyway. Results are found by value, never by
/// position: a backward whose dK and dV are unused yields dQ alone.
BufferRef attentionResultBuffer(FusionOp fusion, Operation *attention,
                                unsigned index, CodegenContext &context) {
  Value value = attention->getResult(index);
  Operation *terminator = fusion.getBody().front().getTerminator();
  for (auto [i, yielded] : llvm::enumerate(terminator->getOperands()))
    if (yielded == value)
      return context.buffer(fusion.getResult(i));
  return context.workspace(numElements(shapeOf(value)) *
                           static_cast<int64_t>(dtypeSize(dtypeOf(value))));
}

} // namespace

std::array<int64_t, 3> attentionMaskStrides(Value mask) {
  std::vector<int64_t> m = shapeOf(mask);
  return {m[0] == 1 ? 0 : m[1] * m[2] * m[3], m[1] == 1 ? 0 : m[2] * m[3],
          m[2] == 1 ? 0 : m[3]};
}

LogicalResult lowerAttentionFusion(FusionOp fusion, CodegenContext &context) {
  FailureOr<bool> flash = lowerFlashAttention(fusion, context);
  if (failed(flash))
    return failure();
  if (*flash)
    return success();
  Block &body = fusion.getBody().front();
  Operation *attention = &body.front();
  auto outer = [&](Value v) -> FailureOr<BufferRef> {
    const ValueLocation &where =
        context.location(fusion.getOperand(cast<BlockArgument>(v).getArgNumber()));
    if (!where.buffer)
      return failure();
    return *where.buffer;
  };
  std::string label = describeOp(fusion);

  if (auto forward = dyn_cast<AttentionOp>(attention)) {
    FailureOr<Regularisation> regularisation = regularisationOf(forward, outer);
    if (failed(regularisation))
      return failure();
    const Regularisation &parts = *regularisation;
    AttentionShape shape = attentionShape(forward.getQuery(), forward.getKey(),
                                          forward.getValue());
    DType dtype = dtypeOf(forward.getQuery());
    FailureOr<BufferRef> q = outer(forward.getQuery()), k = outer(forward.getKey()),
                         v = outer(forward.getValue());
    if (failed(q) || failed(k) || failed(v))
      return forward.emitError() << "attention operands must be in memory";
    // Inference drops the log-sum-exp; the kernel still writes it.
    BufferRef out = attentionResultBuffer(fusion, forward, 0, context);
    BufferRef lse = attentionResultBuffer(fusion, forward, 1, context);
    int64_t scores = shape.rows() * shape.keyLength;
    BufferRef s = context.workspace(scores * 4);
    BufferRef p = context.workspace(scores * static_cast<int64_t>(dtypeSize(dtype)));
    int64_t rpe = shape.rowsPerEntry(), tk = shape.keyLength;
    float scale = static_cast<float>(forward.getScale().convertToDouble());

    GemmStep qk = batchedGemm(dtype, DType::F32, shape.entries(), rpe, tk,
                              shape.headDim, false, true, *q, rpe * shape.headDim,
                              *k, tk * shape.headDim, s, rpe * tk, scale);
    context.addGemm(qk, "attention scores of " + label, gemmFlops(qk), 0);
    if (parts.mask)
      addMaskPass(context, parts, s, shape, label);
    std::string call = "fuse::attentionSoftmaxForward<" + typeArgument(dtype) +
                       ">($0, $1, $2, " + std::to_string(shape.queryLength) +
                       ", " + std::to_string(tk) + ", " +
                       (forward.getCausal() ? "true" : "false") + ")";
    addSoftmaxLaunch(context, call, {{"s", DType::F32}, {"p", dtype}, {"lse", DType::F32}},
                     {true, false, false}, {s, p, lse}, shape.rows(),
                     "attention softmax of " + label,
                     static_cast<double>(scores) * (4 + dtypeSize(dtype)));
    if (parts.dropout != 0.0f)
      addDropoutPass(context, parts, dtype, p, shape,
                     "attention dropout of " + label);
    GemmStep pv = batchedGemm(dtype, dtype, shape.entries(), rpe, shape.valueDim,
                              tk, false, false, p, rpe * tk, *v,
                              tk * shape.valueDim, out, rpe * shape.valueDim, 1.0f);
    context.addGemm(pv, "attention output of " + label, gemmFlops(pv), 0);
    return success();
  }

  auto backward = dyn_cast<AttentionBackwardOp>(attention);
  if (!backward)
    return fusion.emitError() << "attention fusion without an attention op first";
  FailureOr<Regularisation> regularisation = regularisationOf(backward, outer);
  if (failed(regularisation))
    return failure();
  const Regularisation &parts = *regularisation;
  AttentionShape shape = attentionShape(backward.getQuery(), backward.getKey(),
                                        backward.getValue());
  DType dtype = dtypeOf(backward.getQuery());
  FailureOr<BufferRef> dout = outer(backward.getGradOutput()),
                       q = outer(backward.getQuery()), k = outer(backward.getKey()),
                       v = outer(backward.getValue()), o = outer(backward.getOutput()),
                       lse = outer(backward.getLogsumexp());
  if (failed(dout) || failed(q) || failed(k) || failed(v) || failed(o) || failed(lse))
    return backward.emitError() << "attention operands must be in memory";
  BufferRef dq = attentionResultBuffer(fusion, backward, 0, context);
  BufferRef dk = attentionResultBuffer(fusion, backward, 1, context);
  BufferRef dv = attentionResultBuffer(fusion, backward, 2, context);
  int64_t scores = shape.rows() * shape.keyLength;
  BufferRef s = context.workspace(scores * 4);
  BufferRef dp = context.workspace(scores * 4);
  // P, then dS once dV has used P.
  BufferRef p = context.workspace(scores * static_cast<int64_t>(dtypeSize(dtype)));
  int64_t rpe = shape.rowsPerEntry(), tk = shape.keyLength;
  int64_t d = shape.headDim, dvDim = shape.valueDim;
  float scale = static_cast<float>(backward.getScale().convertToDouble());
  std::string causal = backward.getCausal() ? "true" : "false";
  std::string tq = std::to_string(shape.queryLength), tkText = std::to_string(tk);

  GemmStep qk = batchedGemm(dtype, DType::F32, shape.entries(), rpe, tk, d, false,
                            true, *q, rpe * d, *k, tk * d, s, rpe * tk, scale);
  context.addGemm(qk, "attention scores of " + label, gemmFlops(qk), 0);
  if (parts.mask)
    addMaskPass(context, parts, s, shape, label);
  addSoftmaxLaunch(context,
                   "fuse::attentionProbabilities<" + typeArgument(dtype) +
                       ">($0, $1, $2, " + tq + ", " + tkText + ", " + causal + ")",
                   {{"s", DType::F32}, {"lse", DType::F32}, {"p", dtype}},
                   {true, true, false}, {s, *lse, p}, shape.rows(),
                   "attention probabilities of " + label,
                   static_cast<double>(scores) * (4 + dtypeSize(dtype)));
  if (parts.dropout != 0.0f)
    addDropoutPass(context, parts, dtype, p, shape,
                   "attention dropout of " + label);
  GemmStep gradV = batchedGemm(dtype, dtype, shape.entries(), tk, dvDim, rpe, true,
                               false, p, rpe * tk, *dout, rpe * dvDim, dv,
                               tk * dvDim, 1.0f);
  context.addGemm(gradV, "attention dV of " + label, gemmFlops(gradV), 0);
  GemmStep gradP = batchedGemm(dtype, DType::F32, shape.entries(), rpe, tk, dvDim,
                               false, true, *dout, rpe * dvDim, *v, tk * dvDim, dp,
                               rpe * tk, 1.0f);
  context.addGemm(gradP, "attention dP of " + label, gemmFlops(gradP), 0);
  if (parts.dropout != 0.0f)
    addDropoutPass(context, parts, DType::F32, dp, shape,
                   "attention dP dropout of " + label);
  addSoftmaxLaunch(context,
                   "fuse::attentionSoftmaxBackward<" + typeArgument(dtype) +
                       ">($0, $1, $2, $3, $4, $5, " + tq + ", " + tkText + ", " +
                       std::to_string(dvDim) + ", " + floatLiteral(scale) + ", " +
                       causal + ")",
                   {{"s", DType::F32}, {"lse", DType::F32}, {"dp", DType::F32},
                    {"dout", dtype}, {"out", dtype}, {"ds", dtype}},
                   {true, true, true, true, true, false},
                   {s, *lse, dp, *dout, *o, p}, shape.rows(),
                   "attention softmax backward of " + label,
                   static_cast<double>(scores) * (8 + dtypeSize(dtype)));
  GemmStep gradQ = batchedGemm(dtype, dtype, shape.entries(), rpe, d, tk, false,
                               false, p, rpe * tk, *k, tk * d, dq, rpe * d, 1.0f);
  context.addGemm(gradQ, "attention dQ of " + label, gemmFlops(gradQ), 0);
  GemmStep gradK = batchedGemm(dtype, dtype, shape.entries(), tk, d, rpe, true,
                               false, p, rpe * tk, *q, rpe * d, dk, tk * d, 1.0f);
  context.addGemm(gradK, "attention dK of " + label, gemmFlops(gradK), 0);
  return success();
}

} // namespace fuse::codegen
