//===- GemmLowering.cpp - Matmuls and their epilogues to cuBLASLt ---------===//
//
// A gemm_epilogue fusion whose ops after the matmul are what cuBLASLt's
// epilogue computes (casts of the result, a bias broadcast along rows, a
// residual of the result's shape, then tanh-GELU or ReLU) becomes one
// cuBLASLt call. Anything else runs the GEMM into the workspace (f32) and
// the rest of the fusion as a loop kernel that reads it there.
//
// cuBLASLt's bias-gradient epilogues (BGRADA/BGRADB) are not used: the
// pipeline already fuses each bias gradient (a column sum of the f32
// gradient) into the column kernel that casts that gradient to bf16 for the
// GEMMs, so the sum costs no extra read, and it is taken in f32 rather than
// from the bf16 operand the GEMM would see.
//
//===----------------------------------------------------------------------===//

#include "Lowerings.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::fuse;
using ::fuse::runtime::BufferRef;
using ::fuse::runtime::GemmStep;

namespace fuse::codegen {

namespace {

/// The GEMM of `matmul` in row-major terms (Executable.h), operands and
/// result not yet placed.
GemmStep gemmGeometry(MatmulOp matmul) {
  std::vector<int64_t> lhs = shapeOf(matmul.getLhs());
  std::vector<int64_t> rhs = shapeOf(matmul.getRhs());
  bool transA = matmul.getTransposeLhs(), transB = matmul.getTransposeRhs();
  size_t lr = lhs.size(), rr = rhs.size();
  int64_t m = transA ? lhs[lr - 1] : lhs[lr - 2];
  int64_t k = transA ? lhs[lr - 2] : lhs[lr - 1];
  int64_t n = transB ? rhs[rr - 2] : rhs[rr - 1];
  int64_t batch = 1;
  for (size_t d = 0; d + 2 < lr; ++d)
    batch *= lhs[d];
  GemmStep gemm;
  gemm.abType = dtypeOf(matmul.getLhs());
  gemm.transA = transA;
  gemm.transB = transB;
  gemm.k = k;
  gemm.n = n;
  gemm.lda = transA ? m : k;
  gemm.ldb = transB ? k : n;
  gemm.ldc = gemm.ldd = n;
  if (rr == 2 && !transA) {
    // A weight shared by every batch entry: one GEMM over all rows.
    gemm.m = m * batch;
    gemm.batch = 1;
  } else {
    gemm.m = m;
    gemm.batch = batch;
    gemm.strideA = m * k;
    gemm.strideB = rr == 2 ? 0 : k * n;
    gemm.strideC = gemm.strideD = m * n;
  }
  return gemm;
}

/// Folds the ops after the matmul into `gemm` when cuBLASLt's epilogue can
/// compute them; the fusion's only result must be the chain's end. A
/// residual read as C is recorded in `sources`.
bool foldEpilogue(FusionOp fusion, MatmulOp matmul, CodegenContext &context,
                  GemmStep &gemm, GemmSources &sources) {
  Block &body = fusion.getBody().front();
  auto yield = cast<YieldOp>(body.getTerminator());
  if (yield.getNumOperands() != 1)
    return false;
  auto outer = [&](Value blockArgument) {
    return fusion.getOperand(cast<BlockArgument>(blockArgument).getArgNumber());
  };
  Value current = matmul.getResult();
  DType dtype = dtypeOf(current);
  std::optional<DType> residualType;
  bool activated = false;
  for (Operation &op : body) {
    if (&op == matmul.getOperation() || isa<YieldOp>(op))
      continue;
    if (isa<BroadcastInDimOp>(op))
      continue; // checked where the add uses it
    if (!current.hasOneUse() || *current.getUsers().begin() != &op)
      return false;
    if (auto castOp = dyn_cast<CastOp>(op)) {
      if (!isFloat(dtypeOf(castOp.getResult())))
        return false;
      dtype = dtypeOf(castOp.getResult());
    } else if (auto reshape = dyn_cast<ReshapeOp>(op)) {
      if (shapeOf(reshape.getResult()).back() != gemm.n)
        return false;
    } else if (auto add = dyn_cast<AddOp>(op)) {
      if (activated)
        return false;
      Value other = add.getLhs() == current ? add.getRhs() : add.getLhs();
      if (dtypeOf(other) != dtype)
        return false;
      auto broadcast = other.getDefiningOp<BroadcastInDimOp>();
      if (broadcast && isa<BlockArgument>(broadcast.getOperand()) &&
          shapeOf(broadcast.getOperand()) == std::vector<int64_t>{gemm.n} &&
          broadcast.getDims().back() ==
              static_cast<int64_t>(shapeOf(broadcast.getResult()).size()) - 1 &&
          !gemm.hasBias()) {
        const ValueLocation &where = context.location(outer(broadcast.getOperand()));
        if (!where.buffer)
          return false;
        gemm.epilogue = GemmStep::Epilogue::Bias;
        gemm.bias = *where.buffer;
        gemm.biasType = dtype;
      } else if (isa<BlockArgument>(other) && !gemm.hasC() &&
                 numElements(shapeOf(other)) == gemm.m * gemm.n * gemm.batch) {
        const ValueLocation &where = context.location(outer(other));
        if (!where.buffer)
          return false;
        gemm.beta = 1.0f;
        gemm.c = *where.buffer;
        sources.c = outer(other);
        residualType = dtype;
      } else {
        return false;
      }
    } else if (auto gelu = dyn_cast<GeluOp>(op)) {
      if (activated || gelu.getApproximate() != GeluApproximation::Tanh)
        return false;
      activated = true;
      gemm.epilogue = gemm.hasBias() ? GemmStep::Epilogue::GeluBias
                                     : GemmStep::Epilogue::Gelu;
    } else if (auto relu = dyn_cast<ReluOp>(op)) {
      if (activated)
        return false;
      activated = true;
      gemm.epilogue = gemm.hasBias() ? GemmStep::Epilogue::ReluBias
                                     : GemmStep::Epilogue::Relu;
    } else {
      return false;
    }
    current = op.getResult(0);
  }
  if (yield.getOperand(0) != current)
    return false;
  // cuBLASLt's C and D share a type: an f32 residual whose sum is cast to
  // bf16 afterwards is added by the loop kernel instead.
  if (residualType && *residualType != dtype)
    return false;
  // The bias and D share a type here too.
  gemm.cdType = dtype;
  return true;
}

/// Places A and B; `sources` gets the values they are.
LogicalResult placeOperands(MatmulOp matmul, CodegenContext &context,
                            llvm::function_ref<Value(Value)> outer,
                            GemmStep &gemm, GemmSources &sources) {
  sources.a = outer(matmul.getLhs());
  sources.b = outer(matmul.getRhs());
  const ValueLocation &a = context.location(sources.a);
  const ValueLocation &b = context.location(sources.b);
  if (!a.buffer || !b.buffer)
    return matmul.emitError() << "a matmul operand is a splat constant; "
                                 "fold it before code generation";
  gemm.a = *a.buffer;
  gemm.b = *b.buffer;
  return success();
}

/// A kernel that converts `count` elements at `source` from `from` to `to`
/// into a new workspace buffer, which it returns.
BufferRef addCastKernel(CodegenContext &context, const BufferRef &source,
                        DType from, DType to, int64_t count,
                        const std::string &label) {
  BufferRef target =
      context.workspace(count * static_cast<int64_t>(dtypeSize(to)));
  KernelParams params;
  std::string in = params.add("in", from, true, source);
  std::string out = params.add("out", to, false, target);
  CodeBuffer code;
  code.line("for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < " +
            std::to_string(count) + "; i += (long long)gridDim.x * blockDim.x)");
  code.indent();
  code.line(storeStatement(out, to, "i",
                           ScalarEmitter::convert(from, to, ScalarEmitter::fromStorage(from, in + "[i]"))));
  KernelSpec spec = plainKernel("cast", params, code, std::min<int64_t>((count + 255) / 256, 1024));
  context.addLaunch(spec, label, label, 0.0,
                    static_cast<double>(count) * (dtypeSize(from) + dtypeSize(to)));
  return target;
}

} // namespace

double gemmFlops(const GemmStep &gemm) {
  return 2.0 * static_cast<double>(gemm.m) * gemm.n * gemm.k * gemm.batch;
}

LogicalResult lowerMatmul(MatmulOp matmul, CodegenContext &context) {
  GemmStep gemm = gemmGeometry(matmul);
  gemm.cdType = dtypeOf(matmul.getResult());
  GemmSources sources;
  if (failed(placeOperands(matmul, context, [](Value v) { return v; }, gemm, sources)))
    return failure();
  auto [flops, bytes] = stepCost(matmul);
  addPaddedGemm(gemm, sources, context.buffer(matmul.getResult()), context, describeOp(matmul),
                flops, bytes);
  return success();
}

LogicalResult lowerGemmEpilogueFusion(FusionOp fusion, CodegenContext &context) {
  Block &body = fusion.getBody().front();
  SmallVector<MatmulOp> matmuls;
  body.walk([&](MatmulOp matmul) { matmuls.push_back(matmul); });
  if (matmuls.size() != 1)
    return fusion.emitError() << "gemm_epilogue fusion with "
                              << matmuls.size() << " matmuls (one expected)";
  MatmulOp matmul = matmuls.front();
  for (Value operand : matmul->getOperands())
    if (!isa<BlockArgument>(operand))
      return matmul.emitError() << "the CUDA code generator needs a "
                                   "gemm_epilogue's matmul operands to be fusion inputs";
  auto outer = [&](Value v) {
    return fusion.getOperand(cast<BlockArgument>(v).getArgNumber());
  };
  GemmStep gemm = gemmGeometry(matmul);
  GemmSources sources;
  if (failed(placeOperands(matmul, context, outer, gemm, sources)))
    return failure();
  auto [flops, bytes] = stepCost(fusion);

  GemmStep folded = gemm;
  GemmSources foldedSources = sources;
  if (foldEpilogue(fusion, matmul, context, folded, foldedSources)) {
    // cuBLASLt wants a bf16/f16 bias for a bf16/f16 result. A step input's
    // is rounded once, at the start of the step, for every GEMM that reads
    // it (HoistedCasts.cpp); another is rounded into the workspace (n
    // elements) before this GEMM.
    std::optional<size_t> hoisted;
    if (folded.hasBias() && folded.biasType != folded.cdType) {
      if (folded.bias.kind == BufferRef::Kind::Input &&
          !planGemmPadding(folded).changes(folded))
        hoisted = context.hoistCast(folded.bias, folded.biasType, folded.cdType, folded.n);
      else
        folded.bias = addCastKernel(context, folded.bias, folded.biasType,
                                    folded.cdType, folded.n,
                                    "bias cast of " + describeOp(fusion));
      folded.biasType = folded.cdType; // a hoisted copy's, once it is placed
    }
    addPaddedGemm(folded, foldedSources, context.buffer(fusion.getResult(0)), context,
                  describeOp(fusion), flops, bytes);
    if (hoisted)
      context.readHoistedCastAsBias(context.executable().gemms.size() - 1, *hoisted);
    return success();
  }

  // The GEMM into the workspace in f32, the rest as a loop kernel. A GEMM
  // staged for alignment leaves its result padded there, and the loop
  // kernel reads it with the padded row length.
  gemm.cdType = DType::F32;
  double gemmFlopCount = gemmFlops(gemm);
  GemmPadding padding = planGemmPadding(gemm);
  if (padding.changes(gemm))
    stageGemmInputs(gemm, padding, sources, context, "gemm of " + describeOp(fusion));
  int64_t elements = gemm.m * gemm.n * gemm.batch;
  gemm.d = context.workspace(elements * 4);
  context.addGemm(gemm, "gemm of " + describeOp(fusion), gemmFlopCount, bytes);
  Value product = matmul.getResult();
  BufferRef workspace = gemm.d;
  // The result's rows as the GEMM stored them: N padded, and M where A was
  // transposed (then the GEMM is batched per matrix, never row-folded).
  std::vector<int64_t> stored = shapeOf(product);
  if (gemm.transA)
    stored[stored.size() - 2] = padding.m;
  stored.back() = padding.n;
  return lowerLoopFusion(
      fusion, context, [&](ScalarEmitter &emitter, KernelParams &params) {
        std::string name = params.add("gemm", DType::F32, true, workspace);
        DType dtype = dtypeOf(product);
        emitter.setOverride(
            [&emitter, name, stored, dtype, product](
                Value value, const Index &index) -> std::optional<std::string> {
              if (value != product)
                return std::nullopt;
              // The matmul's result rounded to its type, as the graph has it.
              std::string linear = emitter.linearize(stored, index);
              return "(" + ScalarEmitter::roundTo(dtype, name + "[" + linear + "]") + ")";
            });
      });
}

} // namespace fuse::codegen
