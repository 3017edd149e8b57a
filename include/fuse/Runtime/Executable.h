//===- Executable.h - A compiled step as plain data -------------*- C++ -*-===//
//
// What the code generator hands the runtime: kernels' CUDA source, the order
// of launches and cuBLASLt GEMMs, and where every buffer lives. Plain C++ (no
// MLIR, no CUDA types), so an Executable compiled on one machine can be
// written to a file (ExecutableIO.h) and run on another.
//
// Memory. Every intermediate lives at a byte offset in one arena (the
// offsets fuse-plan-memory chose); a second region, the workspace, holds
// temporaries the code generator adds after planning (a GEMM's result before
// its epilogue kernel, attention scores). Inputs and outputs are the
// caller's memory, bound by pointer at run time; constants are uploaded once
// when the executable is loaded.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_RUNTIME_EXECUTABLE_H
#define FUSE_RUNTIME_EXECUTABLE_H

#include "fuse/Runtime/Status.h"
#include "fuse/Support/HostTensor.h"

#include <array>
#include <cstdint>
#include <utility>
#include <string>
#include <vector>

namespace fuse::runtime {

/// A named tensor of the step's signature.
struct TensorSpec {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  /// For an input or output the caller leaves or finds in the arena
  /// (`fuse.arena_offset`): its byte offset there, and the run's pointer
  /// for it is not used; -1 for one in memory of its own.
  int64_t arenaOffset = -1;

  int64_t numElements() const;
  int64_t bytes() const;
};

/// Where a buffer's first byte is at run time.
struct BufferRef {
  enum class Kind : uint8_t { Arena, Workspace, Input, Output, Constant };
  Kind kind = Kind::Arena;
  /// Input, output or constant number (unused for Arena and Workspace).
  int64_t index = 0;
  /// Bytes from the start of the arena, the workspace, or the bound tensor.
  int64_t offset = 0;

  static BufferRef arena(int64_t offset) { return {Kind::Arena, 0, offset}; }
  static BufferRef workspace(int64_t offset) {
    return {Kind::Workspace, 0, offset};
  }
  static BufferRef input(int64_t index) { return {Kind::Input, index, 0}; }
  static BufferRef output(int64_t index) { return {Kind::Output, index, 0}; }
  static BufferRef constant(int64_t index) {
    return {Kind::Constant, index, 0};
  }
  bool operator==(const BufferRef &other) const {
    return kind == other.kind && index == other.index &&
           offset == other.offset;
  }
};

/// One `extern "C" __global__` kernel. `body` is its CUDA C++ text alone; the
/// device helpers it calls are the files of kernels/ named in `helpers`,
/// whose text is in Executable::helperSources (translationUnit() in
/// TranslationUnit.h puts the two together).
struct Kernel {
  std::string name;
  std::string body;
  std::vector<std::string> helpers;
};

/// A TMA tensor map (Hopper's bulk tensor copy, `cp.async.bulk.tensor`)
/// passed to a kernel by value. Its global address is known only at run time
/// (inputs and outputs are the caller's memory), so the executor encodes the
/// 128-byte CUtensorMap with cuTensorMapEncodeTiled at every launch from
/// this description: a tiled map, no interleave, element strides 1, 128-byte
/// L2 promotion, out-of-range elements read as zero.
///
/// Dimensions run innermost first, as cuTensorMapEncodeTiled takes them;
/// entries past `rank` are ignored. The innermost dimension is contiguous.
struct TensorMapArg {
  /// The shared-memory layout TMA writes (CU_TENSOR_MAP_SWIZZLE_*): 16-byte
  /// chunks permuted within 32-, 64- or 128-byte spans.
  enum class Swizzle : uint8_t { None, B32, B64, B128 };
  /// Element (0, .., 0); its offset must be a multiple of 16 bytes.
  BufferRef base;
  /// Element type: f32, f16, bf16, i32, i64 or i1 (one byte a value).
  DType dtype = DType::BF16;
  /// Number of dimensions, 1 to 5.
  uint32_t rank = 1;
  /// Elements per dimension (the tensor's extent, what TMA bounds-checks).
  std::array<uint64_t, 5> dims{1, 1, 1, 1, 1};
  /// Bytes between consecutive indices of dimensions 1 .. rank-1
  /// (cuTensorMapEncodeTiled's globalStrides): multiples of 16, below 2^40.
  std::array<uint64_t, 4> strides{0, 0, 0, 0};
  /// Elements per dimension of the tile one copy moves, 1 to 256 each; the
  /// innermost row of a box is a multiple of 16 bytes.
  std::array<uint32_t, 5> box{1, 1, 1, 1, 1};
  Swizzle swizzle = Swizzle::None;

  bool operator==(const TensorMapArg &other) const {
    return base == other.base && dtype == other.dtype && rank == other.rank &&
           dims == other.dims && strides == other.strides &&
           box == other.box && swizzle == other.swizzle;
  }
};

/// A pointer parameter of a kernel, with what the kernel does through it,
/// recorded by the code generator so that a loaded executable can be checked
/// against the buffers it declares: the kernel's body has its shapes compiled
/// in, so a file whose input shrank, or whose output moved onto another
/// buffer, under unchanged kernels would read or write out of bounds.
struct KernelArg {
  BufferRef ref;
  /// The element type the kernel reads or writes there.
  DType dtype = DType::F32;
  /// Bytes from `ref` on that the kernel may touch.
  int64_t bytes = 0;
  /// Whether the kernel writes through it (else it only reads).
  bool written = false;

  static KernelArg read(BufferRef ref, DType dtype, int64_t bytes) {
    return {ref, dtype, bytes, false};
  }
  static KernelArg write(BufferRef ref, DType dtype, int64_t bytes) {
    return {ref, dtype, bytes, true};
  }
  bool operator==(const KernelArg &other) const {
    return ref == other.ref && dtype == other.dtype && bytes == other.bytes &&
           written == other.written;
  }
};

/// One condition under which a launch may change something: it holds when
/// `negate` XOR `compare(flag[0], constant)`, `flag` being one element of
/// `dtype` (i1, i32, i64 or f32). A launch with such terms writes every
/// output back unchanged unless one of them holds (UnchangedUnless.cpp: an
/// optimizer's update on a micro-batch that only accumulates), so the
/// executor may leave it out when none holds: a run of such launches goes
/// into a CUDA graph conditional node behind one `fuse_graph_guard` kernel
/// that evaluates their terms.
struct LaunchGuardTerm {
  enum class Compare : uint8_t { Eq, Ne, Lt, Le, Gt, Ge };
  BufferRef flag;
  DType dtype = DType::I1;
  Compare compare = Compare::Ne;
  bool negate = false;
  double constant = 0.0;

  bool operator==(const LaunchGuardTerm &other) const {
    return flag == other.flag && dtype == other.dtype &&
           compare == other.compare && negate == other.negate &&
           constant == other.constant;
  }
};

/// The kernel the code generator adds to an executable whose launches have
/// guard terms: `fuse_graph_guard(cudaGraphConditionalHandle, GuardTerms)`
/// sets the handle to whether any of up to kGraphGuardMaxTerms terms holds
/// (GraphGuard.cpp has its source and the parameter layout).
inline constexpr const char *kGraphGuardKernel = "fuse_graph_guard";
inline constexpr int kGraphGuardMaxTerms = 32;

/// A launch of a kernel. The kernel's parameters are one pointer per entry
/// of `args` (the buffers they point at, in parameter order), then one
/// `const __grid_constant__ fuse::TensorMap` (kernels/tensor_map.cuh) per
/// entry of `tensorMaps`, in order.
struct KernelLaunch {
  int64_t kernel = 0;
  std::array<uint32_t, 3> grid{1, 1, 1};
  std::array<uint32_t, 3> block{1, 1, 1};
  uint32_t sharedBytes = 0;
  std::vector<KernelArg> args;
  std::vector<TensorMapArg> tensorMaps;
  /// 0: the grid is launched as it is. Else the kernel is persistent: its
  /// CTAs stride over the grid.x work items by gridDim.x, and the runtime
  /// launches at most this many CTAs a multiprocessor (launchGrid), so that
  /// one wave works through them all. grid.y and grid.z are then 1.
  uint32_t persistentBlocksPerMultiprocessor = 0;
  /// Empty: the launch may change its outputs on any run. Else it changes
  /// nothing unless one of these holds (LaunchGuardTerm).
  std::vector<LaunchGuardTerm> changesOnlyWhen;
};

/// The grid `launch` runs with on a device of `multiprocessors`.
std::array<uint32_t, 3> launchGrid(const KernelLaunch &launch, int multiprocessors);

/// D = epilogue(alpha * op(A) op(B) + beta * C), batched, in ROW-MAJOR terms:
/// op(A) is m x k, op(B) is k x n, C and D are m x n. A is stored m x k (lda
/// >= k), or k x m (lda >= m) under transA; B is k x n (ldb >= n), or n x k
/// (ldb >= k) under transB. Strides between batch entries are in elements;
/// 0 shares one matrix across the batch. Accumulation is f32 (TF32 off for
/// f32 inputs). The runtime maps this onto cuBLASLt's column-major layout.
struct GemmStep {
  enum class Epilogue : uint8_t { None, Bias, Relu, ReluBias, Gelu, GeluBias };
  DType abType = DType::BF16;
  DType cdType = DType::F32;
  bool transA = false, transB = false;
  int64_t m = 0, n = 0, k = 0, batch = 1;
  int64_t lda = 0, ldb = 0, ldc = 0, ldd = 0;
  int64_t strideA = 0, strideB = 0, strideC = 0, strideD = 0;
  float alpha = 1.0f, beta = 0.0f;
  Epilogue epilogue = Epilogue::None;
  DType biasType = DType::F32;
  BufferRef a, b, c, d, bias;
  bool hasC() const { return beta != 0.0f; }
  bool hasBias() const {
    return epilogue == Epilogue::Bias || epilogue == Epilogue::ReluBias ||
           epilogue == Epilogue::GeluBias;
  }
};

/// Zero `bytes` bytes at `dst` (a scatter-add's starting value).
struct FillStep {
  BufferRef dst;
  int64_t bytes = 0;
};

/// Copy `bytes` bytes (an output that is an input, or a scatter-add's start).
struct CopyStep {
  BufferRef src, dst;
  int64_t bytes = 0;
};

/// One entry of the step, in execution order.
struct Step {
  enum class Kind : uint8_t { Launch, Gemm, Fill, Copy };
  Kind kind = Kind::Launch;
  /// Index into Executable::launches, gemms, fills or copies.
  int64_t index = 0;
  /// What this step computes, for plans and profiles: the fusion (kind and
  /// ops) and its model source lines.
  std::string label;
  /// The cost model's useful FLOPs and DRAM bytes for this step.
  double flops = 0;
  double bytes = 0;
};

/// A constant tensor the step reads, in the dtype's binary format.
struct ConstantData {
  TensorSpec spec;
  std::vector<uint8_t> bytes;
};

struct Executable {
  /// The function it was compiled from, and the architecture its kernels
  /// target ("sm_90a").
  std::string entry;
  std::string arch = "sm_90a";
  std::vector<TensorSpec> inputs;
  std::vector<TensorSpec> outputs;
  std::vector<ConstantData> constants;
  int64_t arenaBytes = 0;
  int64_t workspaceBytes = 0;
  std::vector<Kernel> kernels;
  std::vector<KernelLaunch> launches;
  std::vector<GemmStep> gemms;
  std::vector<FillStep> fills;
  std::vector<CopyStep> copies;
  std::vector<Step> steps;
  /// (kernels/ file name such as "reductions.cuh", its text) for every
  /// helper a kernel names, in dependency order (a file only uses those
  /// before it), so the executable compiles without the source tree.
  std::vector<std::pair<std::string, std::string>> helperSources;
};

/// "arena", "workspace", "input", "output", "constant".
const char *bufferKindName(BufferRef::Kind kind);
/// "launch", "gemm", "fill", "copy".
const char *stepKindName(Step::Kind kind);
/// "none", "bias", "relu", "relu_bias", "gelu", "gelu_bias".
const char *epilogueName(GemmStep::Epilogue epilogue);
/// "none", "32B", "64B", "128B".
const char *swizzleName(TensorMapArg::Swizzle swizzle);
/// The span in bytes a swizzle permutes chunks within (0 for None).
uint32_t swizzleBytes(TensorMapArg::Swizzle swizzle);

/// For each output, the index of the last step that reads or writes it, or
/// -1 where no step touches it. After that step the output holds its final
/// value and no later step of the run reads it, so work on another stream
/// may read or overwrite it from then on (a data-parallel step all-reduces a
/// gradient while the rest of the backward runs).
/// `executable` must be valid (validateExecutable).
std::vector<int64_t> outputLastUse(const Executable &executable);

/// Checks every invariant the runtime relies on: indices in range (a step's
/// index, a launch's kernel, a BufferRef's input/output/constant), buffers
/// inside their region (fills, copies, GEMM operands, tensor maps and launch
/// arguments by their extent), GEMM shapes, leading dimensions and dtype
/// combinations cuBLASLt supports, tensor maps that cuTensorMapEncodeTiled
/// accepts (rank, dims, strides, box, swizzle, a 16-byte aligned offset),
/// unique kernel names, helpers present in helperSources, constants of the
/// right size. And that the steps agree with the signature: an input, output
/// or constant is read and written as its own dtype, at offsets aligned to
/// it, and every byte of every output is written by some step (a GEMM writes
/// the n elements of each row of D, not the padding up to ldd nor what lies
/// between batch entries; an output with such gaps needs another writer,
/// such as a fill, for them). The message starts with `origin` (a file path,
/// or "executable @entry") and names the offending entry.
/// deserializeExecutable and Executor::create call it, so a bad executable
/// is refused before anything runs.
Status validateExecutable(const Executable &executable,
                          const std::string &origin);

} // namespace fuse::runtime

#endif // FUSE_RUNTIME_EXECUTABLE_H
