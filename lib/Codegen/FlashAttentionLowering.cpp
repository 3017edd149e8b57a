//===- FlashAttentionLowering.cpp - Attention fusions to flash kernels ----===//
//
// bf16/f16 attention with head dim 64 or 128 (query, key and value alike)
// runs on the kernels of kernels/flash_attention.cuh: the forward is one
// launch; the backward three (row deltas and a zeroed f32 dQ accumulator,
// the key-tile kernel that writes dK and dV and adds into dQ, dQ's
// conversion), and with dropout on the TMA key-tile kernel a fourth before
// it that draws the keep mask it reads (flash_dropout_bits.cuh). The forward and the key-tile kernel come in two forms: the
// warp-specialised kernels that load q, k, v (and dout) by bulk tensor
// copies through tensor maps, where FlashAttentionConfig.h's policy picks
// them (head dim, dropout) and the copy engine can address every operand
// (FlashTensorMaps.h), else the cp.async kernels that take pointers. Masks
// (additive, of the query's type) and dropout (Philox, as the reference
// interpreter) are passed through. Anything else is left
// to the GEMM + softmax lowering, with a remark saying why.
//
// The kernels read q, k, v (dout, out) and write o (dq, dk, dv) by element
// strides. An attention fusion that holds views of them (fuse-form-fusions
// gives it the reshape + transpose of a projection into heads, and back)
// passes the memory under those views, at their offsets and strides
// (fuse/Analysis/FlashAttention.h), so no copy kernel runs around it.
//
//===----------------------------------------------------------------------===//

#include "Lowerings.h"

#include "fuse/Analysis/FlashAttention.h"
#include "fuse/Codegen/FlashAttentionConfig.h"
#include "fuse/Codegen/FlashStrides.h"
#include "fuse/Codegen/FlashTensorMaps.h"

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
  /// Where q, k, v, o, dout, dq, dk, dv live (FlashParams order).
  FlashOperandStrides strides;
};

/// FlashParams' slot of each strided operand and result, in the orders of
/// flashStridedOperands and flashStridedResults.
constexpr unsigned kForwardOperandSlots[] = {0, 1, 2};       // q, k, v
constexpr unsigned kBackwardOperandSlots[] = {4, 0, 1, 2, 3}; // dout, q, k, v, out
constexpr unsigned kForwardResultSlots[] = {3};              // o
constexpr unsigned kBackwardResultSlots[] = {5, 6, 7};       // dq, dk, dv

FlashStrides stridesOf(const StridedLayout &layout) {
  return {layout.strides[0], layout.strides[1], layout.strides[2]};
}

/// `fuse::FlashParams p{...};` for the kernel body.
std::string paramsLiteral(const FlashCall &call) {
  std::array<int64_t, 3> maskStrides{0, 0, 0};
  if (call.mask)
    maskStrides = attentionMaskStrides(*call.mask);
  auto [strideB, strideH, strideQ] = maskStrides;
  return "  fuse::FlashParams p{" + std::to_string(call.batch) + ", " +
         std::to_string(call.qHeads) + ", " + std::to_string(call.kvHeads) + ", " +
         std::to_string(call.tq) + ", " + std::to_string(call.tk) + ", " +
         floatLiteral(call.scale) + ", " + (call.causal ? "true" : "false") + ", " +
         std::to_string(strideB) + "LL, " + std::to_string(strideH) + "LL, " +
         std::to_string(strideQ) + "LL, " + floatLiteral(call.dropout) + ", " +
         flashStridesLiteral(call.strides) + "};\n";
}

/// <T, D>, or <T, D, blockM> with the backward's query rows a step (the
/// preprocess writes records of that many rows; the TMA kernel steps by it).
std::string templateArgs(const FlashCall &call, int blockM = 0) {
  return "<" + storageType(call.dtype) + ", " + std::to_string(call.headDim) +
         (blockM > 0 ? ", " + std::to_string(blockM) : "") + ">";
}

/// One launch of a flash device function with the given parameters.
/// `minBlocks` is __launch_bounds__' minimum blocks a multiprocessor (0:
/// none); the TMA kernels need 1, which caps registers at entry so that
/// setmaxnreg can move them between warpgroups. `persistent`: the kernel
/// strides over grid.x items and runs that many CTAs a multiprocessor.
void addFlashLaunch(CodegenContext &context, const std::string &kind,
                    KernelParams &params, const std::string &call,
                    const FlashCall &flash, std::array<uint32_t, 3> grid,
                    int threads, int minBlocks, int64_t sharedBytes,
                    const std::string &label, double flops, double bytes,
                    uint32_t persistent = 0) {
  KernelSpec spec;
  spec.persistentBlocksPerMultiprocessor = persistent;
  spec.kind = kind;
  spec.body = kernelSignature(params, threads, minBlocks) + paramsLiteral(flash) + "  " +
              call + ";\n}\n";
  spec.helpers = {"flash_attention.cuh"};
  spec.grid = grid;
  spec.block = {static_cast<uint32_t>(threads), 1, 1};
  spec.sharedBytes = static_cast<uint32_t>(sharedBytes);
  spec.args = params.args;
  spec.tensorMaps = params.tensorMaps;
  context.addLaunch(spec, label, label, flops, bytes);
}

uint32_t tiles(int64_t length, int block) {
  return static_cast<uint32_t>((length + block - 1) / block);
}

} // namespace

FailureOr<bool> lowerFlashAttention(FusionOp fusion, CodegenContext &context) {
  FailureOr<FlashFusionLayout> layout = analyzeFlashFusion(fusion);
  if (failed(layout))
    return failure();
  Operation *attention = layout->attention;
  auto outer = [&](Value v) -> std::optional<BufferRef> {
    return context.location(
        fusion.getOperand(cast<BlockArgument>(v).getArgNumber())).buffer;
  };
  auto forward = dyn_cast<AttentionOp>(attention);
  auto backward = dyn_cast<AttentionBackwardOp>(attention);
  Value query = forward ? forward.getQuery() : backward.getQuery();
  Value key = forward ? forward.getKey() : backward.getKey();
  std::vector<int64_t> q = shapeOf(query), k = shapeOf(key);
  FlashCall call{dtypeOf(query), q[0], q[1], k[1], q[2], k[2], q[3],
                 static_cast<float>((forward ? forward.getScale() : backward.getScale()).convertToDouble()),
                 forward ? forward.getCausal() : backward.getCausal(),
                 static_cast<float>((forward ? forward.getDropoutP() : backward.getDropoutP()).convertToDouble()),
                 std::nullopt, std::nullopt, std::nullopt,
                 contiguousFlashOperandStrides(q[1], k[1], q[2], k[2], q[3])};
  if (Value mask = forward ? forward.getMask() : backward.getMask())
    call.mask = mask;
  if (Value seed = forward ? forward.getSeed() : backward.getSeed()) {
    call.seed = seed;
    call.offset = forward ? forward.getOffset() : backward.getOffset();
  }
  if (std::optional<std::string> why = flashIneligibility(attention)) {
    if (layout->hasViews)
      return attention->emitError()
             << "this attention fusion reads or writes through views, which "
                "only the flash kernels address, but " << *why;
    emitRemark(attention->getLoc())
        << "attention runs as GEMMs + softmax kernels: " << *why;
    return false;
  }

  // Strided operands and results: the memory under their views, from the
  // element the view starts at.
  const int64_t elementBytes = static_cast<int64_t>(dtypeSize(call.dtype));
  ArrayRef<unsigned> operandSlots = forward ? ArrayRef<unsigned>(kForwardOperandSlots)
                                            : ArrayRef<unsigned>(kBackwardOperandSlots);
  ArrayRef<unsigned> resultSlots = forward ? ArrayRef<unsigned>(kForwardResultSlots)
                                           : ArrayRef<unsigned>(kBackwardResultSlots);
  std::vector<BufferRef> operands, results;
  for (auto [access, slot] : llvm::zip(layout->operands, operandSlots)) {
    std::optional<BufferRef> ref =
        context.location(fusion.getOperand(*access.index)).buffer;
    if (!ref)
      return attention->emitError() << "attention operands must be in memory";
    ref->offset += access.layout.offset * elementBytes;
    operands.push_back(*ref);
    call.strides[slot] = stridesOf(access.layout);
  }
  SmallVector<Value> resultValues = flashStridedResults(attention);
  for (auto [access, slot, value] :
       llvm::zip(layout->results, resultSlots, resultValues)) {
    // A result nothing reads still has to go somewhere.
    BufferRef ref = access.index
                        ? context.buffer(fusion.getResult(*access.index))
                        : context.workspace(numElements(shapeOf(value)) * elementBytes);
    ref.offset += access.layout.offset * elementBytes;
    results.push_back(ref);
    call.strides[slot] = stridesOf(access.layout);
  }

  // The tensor maps of the TMA kernels, over the same memory as the
  // pointers (operands in FlashParams order: q, k, v, then dout).
  auto operandShape = [&](bool query) {
    return FlashOperandShape{call.batch, query ? call.qHeads : call.kvHeads,
                             query ? call.tq : call.tk, call.headDim};
  };
  // Operand i of `operands` and its FlashParams slot.
  auto addressable = [&](ArrayRef<size_t> indices) {
    return llvm::all_of(indices, [&](size_t i) {
      return flashTmaAddressable(call.strides[operandSlots[i]], operands[i].offset);
    });
  };
  auto operandMap = [&](size_t i, int boxRows) {
    const unsigned slot = operandSlots[i];
    const bool query = slot == 0 || slot == 4;
    return flashTensorMap(operands[i], call.dtype, operandShape(query), call.strides[slot],
                          boxRows);
  };
  // Forward operands: q, k, v; backward: dout, q, k, v, out.
  const bool dropout = call.dropout > 0.0f;
  const bool tma = forward ? flashForwardUsesTma(call.headDim, call.mask.has_value(), dropout) &&
                                 addressable({0, 1, 2})
                           : addressable({0, 1, 2, 3});

  std::string label = describeOp(fusion);
  KernelParams params;
  auto add = [&](const std::string &prefix, Value v, bool isConst) {
    std::optional<BufferRef> ref = outer(v);
    return ref ? params.add(prefix, dtypeOf(v), isConst, *ref) : std::string();
  };
  // The forward's operands are q, k, v; the backward's dout, q, k, v, out.
  size_t first = forward ? 0 : 1;
  std::string qp, kp, vp;
  if (!tma) {
    qp = params.add("q", call.dtype, true, operands[first]);
    kp = params.add("k", call.dtype, true, operands[first + 1]);
    vp = params.add("v", call.dtype, true, operands[first + 2]);
  }
  std::string mask = call.mask ? add("mask", *call.mask, true) : "nullptr";
  std::string seed = call.seed ? add("seed", *call.seed, true) : "nullptr";
  std::string offset = call.offset ? add("offset", *call.offset, true) : "nullptr";
  if (mask.empty() || seed.empty() || offset.empty())
    return attention->emitError() << "attention operands must be in memory";
  int64_t rows = call.batch * call.qHeads * call.tq;
  double fwdFlops = 4.0 * call.batch * call.qHeads * call.tq * call.tk * call.headDim;

  if (forward) {
    std::string out = params.add("out", call.dtype, false, results[0]);
    BufferRef lseRef = layout->logsumexp
                           ? context.buffer(fusion.getResult(*layout->logsumexp))
                           : context.workspace(rows * 4);
    std::string lse = params.add("lse", DType::F32, false, lseRef);
    const std::array<uint32_t, 3> grid{tiles(call.tq, kFlashBlockM),
                                       static_cast<uint32_t>(call.qHeads),
                                       static_cast<uint32_t>(call.batch)};
    const std::string tail =
        mask + ", " + seed + ", " + offset + ", " + out + ", " + lse + ", p)";
    if (tma) {
      std::string qm = params.addTensorMap("q_map", operandMap(0, kFlashBlockM));
      std::string km = params.addTensorMap("k_map", operandMap(1, kFlashTmaBlockN));
      std::string vm = params.addTensorMap("v_map", operandMap(2, kFlashTmaBlockN));
      // Persistent: one item per query tile, head and batch, one CTA a
      // multiprocessor working through them.
      addFlashLaunch(context, "flash_forward", params,
                     "fuse::flashAttentionForwardTma" + templateArgs(call) + "(" + qm +
                         ", " + km + ", " + vm + ", " + tail,
                     call, {grid[0] * grid[1] * grid[2], 1, 1}, kFlashTmaThreads, 1,
                     flashForwardTmaSharedBytes(call.headDim), label, fwdFlops,
                     stepCost(fusion).second, kFlashForwardTmaPersistentBlocks);
    } else {
      addFlashLaunch(context, "flash_forward", params,
                     "fuse::flashAttentionForward" + templateArgs(call) + "(" + qp + ", " +
                         kp + ", " + vp + ", " + tail,
                     call, grid, kFlashThreads, flashForwardMinBlocks(call.headDim),
                     flashForwardSharedBytes(call.headDim),
                     label, fwdFlops, stepCost(fusion).second);
    }
    return true;
  }

  // Backward: the preprocess turns the forward's log-sum-exp and dO . O into
  // the row statistics the key-tile kernel reads (flash::rowStatsOffset).
  BufferRef lseRef;
  if (std::optional<BufferRef> ref = outer(backward.getLogsumexp()))
    lseRef = *ref;
  else
    return attention->emitError() << "attention operands must be in memory";
  std::string dout = tma ? std::string() : params.add("dout", call.dtype, true, operands[0]);
  const int blockM =
      tma ? flashBackwardTmaBlockM(call.headDim, call.causal, dropout) : kFlashBackwardBlockM;
  BufferRef rowStats =
      context.workspace(flashRowStatsBytes(call.batch * call.qHeads, call.tq, blockM));
  BufferRef accumulator = context.workspace(rows * call.headDim * 4);
  std::array<uint32_t, 3> queryGrid{tiles(call.tq, kFlashBlockM),
                                    static_cast<uint32_t>(call.qHeads),
                                    static_cast<uint32_t>(call.batch)};
  {
    KernelParams pre;
    std::string o = pre.add("o", call.dtype, true, operands[4]);
    std::string d = pre.add("dout", call.dtype, true, operands[0]);
    std::string l = pre.add("lse", DType::F32, true, lseRef);
    std::string rs = pre.add("row_stats", DType::F32, false, rowStats);
    std::string acc = pre.add("dq_accum", DType::F32, false, accumulator);
    // Every row of every record, the padding of the last one included.
    const std::array<uint32_t, 3> recordGrid{
        tiles(static_cast<int64_t>(tiles(call.tq, blockM)) * blockM, kFlashBlockM),
        queryGrid[1], queryGrid[2]};
    addFlashLaunch(context, "flash_backward_preprocess", pre,
                   "fuse::flashBackwardPreprocess" + templateArgs(call, blockM) + "(" + o +
                       ", " + d + ", " + l + ", " + rs + ", " + acc + ", p)",
                   call, recordGrid, kFlashThreads, 0, 0, "delta of " + label, 0.0,
                   static_cast<double>(rows) * (call.headDim * 2 * 2 + 4 + 8));
  }
  // Dropout in the TMA backward: its decisions drawn first, by a kernel of
  // their own, into a keep mask it reads (kernels/flash_dropout_bits.cuh).
  std::string keepBits = "nullptr";
  const int64_t heads = call.batch * call.qHeads;
  if (tma && dropout && flashBackwardUsesKeepBits(heads, call.tq, call.tk)) {
    BufferRef mask = context.workspace(flashKeepBitsBytes(heads, call.tq, call.tk));
    KernelParams draw;
    std::string s = draw.add("seed", DType::I64, true, *outer(*call.seed));
    std::string o = draw.add("offset", DType::I64, true, *outer(*call.offset));
    std::string bits = draw.add("keep_bits", DType::I64, false, mask);
    addFlashLaunch(context, "flash_dropout_bits", draw,
                   "fuse::flashDropoutKeepBits(" + s + ", " + o +
                       ", reinterpret_cast<unsigned long long *>(" + bits + "), p)",
                   call, {flashKeepBitsBlocks(call.tq, call.tk), static_cast<uint32_t>(call.qHeads),
                          static_cast<uint32_t>(call.batch)},
                   kFlashKeepBitsThreads, 0, 0, "dropout of " + label, 0.0,
                   static_cast<double>(flashKeepBitsBytes(heads, call.tq, call.tk)));
    keepBits = "reinterpret_cast<const unsigned long long *>(" +
               params.add("keep_bits", DType::I64, true, mask) + ")";
  }
  std::string rs = params.add("row_stats", DType::F32, true, rowStats);
  // The TMA kernel adds to the dQ accumulator through a tensor map.
  std::string acc =
      tma ? std::string() : params.add("dq_accum", DType::F32, false, accumulator);
  std::string dk = params.add("dk", call.dtype, false, results[1]);
  std::string dv = params.add("dv", call.dtype, false, results[2]);
  const std::string tail = mask + ", " + seed + ", " + offset + ", " +
                           (tma ? keepBits + ", " : dout + ", ") + rs + ", " +
                           (tma ? "" : acc + ", ") + dk + ", " + dv + ", p)";
  if (tma) {
    std::string qm = params.addTensorMap("q_map", operandMap(1, blockM));
    std::string km = params.addTensorMap("k_map", operandMap(2, kFlashBackwardTmaBlockN));
    std::string vm = params.addTensorMap("v_map", operandMap(3, kFlashBackwardTmaBlockN));
    std::string dm = params.addTensorMap("dout_map", operandMap(0, blockM));
    std::string am = params.addTensorMap(
        "dq_accum_map", flashDqAccumulatorMap(accumulator, call.batch, call.qHeads, call.tq,
                                              call.headDim, blockM));
    addFlashLaunch(context, "flash_backward", params,
                   "fuse::flashAttentionBackwardTma" + templateArgs(call, blockM) + "(" + qm +
                       ", " + km + ", " + vm + ", " + dm + ", " + am + ", " + tail,
                   call, {tiles(call.tk, kFlashBackwardTmaBlockN),
                          static_cast<uint32_t>(call.kvHeads),
                          static_cast<uint32_t>(call.batch)},
                   kFlashTmaThreads, 1, flashBackwardTmaSharedBytes(call.headDim, blockM), label,
                   2.5 * fwdFlops, stepCost(fusion).second);
  } else {
    addFlashLaunch(context, "flash_backward", params,
                   "fuse::flashAttentionBackward" + templateArgs(call) + "(" + qp + ", " +
                       kp + ", " + vp + ", " + tail,
                   call, {tiles(call.tk, kFlashBlockN), static_cast<uint32_t>(call.kvHeads),
                          static_cast<uint32_t>(call.batch)},
                   kFlashBackwardThreads, 0, flashBackwardSharedBytes(call.headDim), label,
                   2.5 * fwdFlops, stepCost(fusion).second);
  }
  KernelParams convert;
  std::string a = convert.add("dq_accum", DType::F32, true, accumulator);
  std::string dq = convert.add("dq", call.dtype, false, results[0]);
  addFlashLaunch(context, "flash_backward_dq", convert,
                 "fuse::flashBackwardConvertDq" + templateArgs(call) + "(" + a + ", " +
                     dq + ", p)",
                 call, queryGrid, kFlashThreads, 0, 0, "dQ of " + label, 0.0,
                 static_cast<double>(rows) * call.headDim * 6);
  return true;
}

} // namespace fuse::codegen
