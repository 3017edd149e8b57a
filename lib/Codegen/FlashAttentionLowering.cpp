//===- FlashAttentionLowering.cpp - Attention fusions to flash kernels ----===//
//
// bf16/f16 attention with head dim 64 or 128 (query, key and value alike)
// runs on the kernels of kernels/flash_attention.cuh: the forward is one
// launch; the backward three (row deltas and a zeroed f32 dQ accumulator,
// the key-tile kernel that writes dK and dV and adds into dQ, dQ's
// conversion). Masks (additive, of the query's type) and dropout (Philox,
// as the reference interpreter) are passed through. Anything else is left
// to the GEMM + softmax lowering, with a remark saying why.
//
//===----------------------------------------------------------------------===//

#include "Lowerings.h"

#include "fuse/Codegen/FlashAttentionConfig.h"

using namespace mlir;
using namespace mlir::fuse;
using ::fuse::runtime::BufferRef;

namespace fuse::codegen {

namespace {

/// What the flash kernels need to know about one attention op.
struct FlashCall {
  DType dtype;
  int64_t batch, qHeads, kvHeads, tq, tk, headDim;
  float scale;
  bool causal;
  float dropout;
  std::optional<Value> mask;
  std::optional<Value> seed, offset;
};

/// Why `call` cannot use the flash kernels, or nothing when it can.
std::optional<std::string> ineligible(const FlashCall &call, Value value) {
  if (call.dtype != DType::BF16 && call.dtype != DType::F16)
    return std::string("flash kernels take bf16 or f16, not ") + dtypeName(call.dtype);
  if (call.headDim != 64 && call.headDim != 128)
    return "flash kernels take head dim 64 or 128, not " + std::to_string(call.headDim);
  if (shapeOf(value)[3] != call.headDim)
    return std::string("flash kernels need the value's head dim equal to the query's");
  if (call.mask && dtypeOf(*call.mask) != call.dtype)
    return std::string("flash kernels take an additive mask of the query's type, not ") +
           dtypeName(dtypeOf(*call.mask));
  return std::nullopt;
}

/// `fuse::FlashParams p{...};` for the kernel body.
std::string paramsLiteral(const FlashCall &call) {
  int64_t strideB = 0, strideH = 0, strideQ = 0;
  if (call.mask) {
    std::vector<int64_t> m = shapeOf(*call.mask);
    strideQ = m[2] == 1 ? 0 : m[3];
    strideH = m[1] == 1 ? 0 : m[2] * m[3];
    strideB = m[0] == 1 ? 0 : m[1] * m[2] * m[3];
  }
  return "  fuse::FlashParams p{" + std::to_string(call.batch) + ", " +
         std::to_string(call.qHeads) + ", " + std::to_string(call.kvHeads) + ", " +
         std::to_string(call.tq) + ", " + std::to_string(call.tk) + ", " +
         floatLiteral(call.scale) + ", " + (call.causal ? "true" : "false") + ", " +
         std::to_string(strideB) + "LL, " + std::to_string(strideH) + "LL, " +
         std::to_string(strideQ) + "LL, " + floatLiteral(call.dropout) + "};\n";
}

std::string templateArgs(const FlashCall &call) {
  return "<" + storageType(call.dtype) + ", " + std::to_string(call.headDim) + ">";
}

/// One launch of a flash device function with the given parameters.
void addFlashLaunch(CodegenContext &context, const std::string &kind,
                    KernelParams &params, const std::string &call,
                    const FlashCall &flash, std::array<uint32_t, 3> grid,
                    int threads, int64_t sharedBytes, const std::string &label,
                    double flops, double bytes) {
  KernelSpec spec;
  spec.kind = kind;
  spec.body = kernelSignature(params, threads) + paramsLiteral(flash) + "  " +
              call + ";\n}\n";
  spec.helpers = {"flash_attention.cuh"};
  spec.grid = grid;
  spec.block = {static_cast<uint32_t>(threads), 1, 1};
  spec.sharedBytes = static_cast<uint32_t>(sharedBytes);
  spec.args = params.args;
  context.addLaunch(spec, label, label, flops, bytes);
}

uint32_t tiles(int64_t length, int block) {
  return static_cast<uint32_t>((length + block - 1) / block);
}

} // namespace

FailureOr<bool> lowerFlashAttention(FusionOp fusion, CodegenContext &context) {
  Operation *attention = &fusion.getBody().front().front();
  auto outer = [&](Value v) -> std::optional<BufferRef> {
    return context.location(
        fusion.getOperand(cast<BlockArgument>(v).getArgNumber())).buffer;
  };
  auto forward = dyn_cast<AttentionOp>(attention);
  auto backward = dyn_cast<AttentionBackwardOp>(attention);
  Value query = forward ? forward.getQuery() : backward.getQuery();
  Value key = forward ? forward.getKey() : backward.getKey();
  Value value = forward ? forward.getValue() : backward.getValue();
  std::vector<int64_t> q = shapeOf(query), k = shapeOf(key);
  FlashCall call{dtypeOf(query), q[0], q[1], k[1], q[2], k[2], q[3],
                 static_cast<float>((forward ? forward.getScale() : backward.getScale()).convertToDouble()),
                 forward ? forward.getCausal() : backward.getCausal(),
                 static_cast<float>((forward ? forward.getDropoutP() : backward.getDropoutP()).convertToDouble()),
                 std::nullopt, std::nullopt, std::nullopt};
  if (Value mask = forward ? forward.getMask() : backward.getMask())
    call.mask = mask;
  if (Value seed = forward ? forward.getSeed() : backward.getSeed()) {
    call.seed = seed;
    call.offset = forward ? forward.getOffset() : backward.getOffset();
  }
  if (std::optional<std::string> why = ineligible(call, value)) {
    emitRemark(attention->getLoc())
        << "attention runs as GEMMs + softmax kernels: " << *why;
    return false;
  }

  std::string label = describeOp(fusion);
  KernelParams params;
  auto add = [&](const std::string &prefix, Value v, bool isConst) {
    std::optional<BufferRef> ref = outer(v);
    return ref ? params.add(prefix, dtypeOf(v), isConst, *ref) : std::string();
  };
  std::string qp = add("q", query, true), kp = add("k", key, true),
              vp = add("v", value, true);
  if (qp.empty() || kp.empty() || vp.empty())
    return attention->emitError() << "attention operands must be in memory";
  std::string mask = call.mask ? add("mask", *call.mask, true) : "nullptr";
  std::string seed = call.seed ? add("seed", *call.seed, true) : "nullptr";
  std::string offset = call.offset ? add("offset", *call.offset, true) : "nullptr";
  int64_t rows = call.batch * call.qHeads * call.tq;
  double fwdFlops = 4.0 * call.batch * call.qHeads * call.tq * call.tk * call.headDim;

  if (forward) {
    std::string out = params.add("out", call.dtype, false, context.buffer(fusion.getResult(0)));
    BufferRef lseRef = fusion.getNumResults() > 1 ? context.buffer(fusion.getResult(1))
                                                  : context.workspace(rows * 4);
    std::string lse = params.add("lse", DType::F32, false, lseRef);
    addFlashLaunch(context, "flash_forward", params,
                   "fuse::flashAttentionForward" + templateArgs(call) + "(" + qp + ", " +
                       kp + ", " + vp + ", " + mask + ", " + seed + ", " + offset +
                       ", " + out + ", " + lse + ", p)",
                   call, {tiles(call.tq, kFlashBlockM), static_cast<uint32_t>(call.qHeads),
                          static_cast<uint32_t>(call.batch)},
                   kFlashThreads, flashForwardSharedBytes(call.headDim), label,
                   fwdFlops, stepCost(fusion).second);
    return true;
  }

  // Backward: dout and the forward's output and log-sum-exp come first.
  std::string dout = add("dout", backward.getGradOutput(), true);
  std::string lse = add("lse", backward.getLogsumexp(), true);
  if (dout.empty() || lse.empty() || !outer(backward.getOutput()))
    return attention->emitError() << "attention operands must be in memory";
  BufferRef delta = context.workspace(rows * 4);
  BufferRef accumulator = context.workspace(rows * call.headDim * 4);
  std::array<uint32_t, 3> queryGrid{tiles(call.tq, kFlashBlockM),
                                    static_cast<uint32_t>(call.qHeads),
                                    static_cast<uint32_t>(call.batch)};
  {
    KernelParams pre;
    std::string o = pre.add("o", call.dtype, true, *outer(backward.getOutput()));
    std::string d = pre.add("dout", call.dtype, true, *outer(backward.getGradOutput()));
    std::string dl = pre.add("delta", DType::F32, false, delta);
    std::string acc = pre.add("dq_accum", DType::F32, false, accumulator);
    addFlashLaunch(context, "flash_backward_preprocess", pre,
                   "fuse::flashBackwardPreprocess" + templateArgs(call) + "(" + o +
                       ", " + d + ", " + dl + ", " + acc + ", p)",
                   call, queryGrid, kFlashThreads, 0, "delta of " + label, 0.0,
                   static_cast<double>(rows) * (call.headDim * 2 * 2 + 4));
  }
  std::string dl = params.add("delta", DType::F32, true, delta);
  std::string acc = params.add("dq_accum", DType::F32, false, accumulator);
  std::string dk = params.add("dk", call.dtype, false, context.buffer(fusion.getResult(1)));
  std::string dv = params.add("dv", call.dtype, false, context.buffer(fusion.getResult(2)));
  addFlashLaunch(context, "flash_backward", params,
                 "fuse::flashAttentionBackward" + templateArgs(call) + "(" + qp + ", " +
                     kp + ", " + vp + ", " + mask + ", " + seed + ", " + offset + ", " +
                     dout + ", " + lse + ", " + dl + ", " + acc + ", " + dk + ", " + dv +
                     ", p)",
                 call, {tiles(call.tk, kFlashBlockN), static_cast<uint32_t>(call.kvHeads),
                        static_cast<uint32_t>(call.batch)},
                 kFlashBackwardThreads, flashBackwardSharedBytes(call.headDim), label,
                 2.5 * fwdFlops, stepCost(fusion).second);
  KernelParams convert;
  std::string a = convert.add("dq_accum", DType::F32, true, accumulator);
  std::string dq = convert.add("dq", call.dtype, false, context.buffer(fusion.getResult(0)));
  addFlashLaunch(context, "flash_backward_dq", convert,
                 "fuse::flashBackwardConvertDq" + templateArgs(call) + "(" + a + ", " +
                     dq + ", p)",
                 call, queryGrid, kFlashThreads, 0, "dQ of " + label, 0.0,
                 static_cast<double>(rows) * call.headDim * 6);
  return true;
}

} // namespace fuse::codegen
