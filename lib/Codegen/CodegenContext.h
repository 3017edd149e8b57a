//===- CodegenContext.h - State shared by the lowerings ---------*- C++ -*-===//
//
// The Executable under construction and what every lowering needs to add to
// it: where each top-level value lives, the constant pool, the per-step
// workspace, and kernels deduplicated by their text (a 12-layer model emits
// each layer's kernels once).
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_LIB_CODEGEN_CODEGENCONTEXT_H
#define FUSE_LIB_CODEGEN_CODEGENCONTEXT_H

#include "ScalarEmitter.h"

#include "fuse/Runtime/Executable.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/DenseMap.h"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace fuse::codegen {

/// Where a top-level value is: a buffer, or a splat constant inlined into
/// the kernels that read it.
struct ValueLocation {
  std::optional<runtime::BufferRef> buffer;
  std::optional<std::string> literal;
  /// The splat constant's op, when `literal` is set (fills and copies need
  /// to know its value is zero).
  mlir::Operation *splat = nullptr;
};

/// A kernel a template produced, before deduplication. `body` names the
/// kernel `@KERNEL@`. Its parameters are the pointers of `args`, then the
/// tensor maps of `tensorMaps` (kernelSignature declares them so).
struct KernelSpec {
  /// Names the kernel: fuse_<kind>_<n>.
  std::string kind;
  std::string body;
  std::vector<std::string> helpers;
  std::array<uint32_t, 3> grid{1, 1, 1};
  std::array<uint32_t, 3> block{1, 1, 1};
  uint32_t sharedBytes = 0;
  std::vector<runtime::KernelArg> args;
  std::vector<runtime::TensorMapArg> tensorMaps;
  /// runtime::KernelLaunch::persistentBlocksPerMultiprocessor.
  uint32_t persistentBlocksPerMultiprocessor = 0;
  /// runtime::KernelLaunch::changesOnlyWhen (addLaunch adds the guard
  /// kernel to the executable with the first such launch).
  std::vector<runtime::LaunchGuardTerm> changesOnlyWhen;
};

/// How a GEMM operand is staged (GemmAlignment.cpp): `matrices` dense
/// row-major matrices of rows x cols copied into matrices of toRows x
/// toCols, zero where the source has nothing.
struct StagedLayout {
  DType dtype;
  int64_t matrices, rows, cols, toRows, toCols;
  bool operator==(const StagedLayout &other) const {
    return dtype == other.dtype && matrices == other.matrices && rows == other.rows &&
           cols == other.cols && toRows == other.toRows && toCols == other.toCols;
  }
};

/// Kernel parameters collected while a template runs: pointers (one
/// declaration per entry of `args`, index for index), then tensor maps (one
/// declaration per entry of `tensorMaps`), the order in which the runtime
/// passes them. A pointer declared const is read, any other written; each
/// argument's extent is filled in by CodegenContext::addLaunch.
struct KernelParams {
  std::vector<std::string> declarations;
  std::vector<runtime::KernelArg> args;
  std::vector<std::string> tensorMapDeclarations;
  std::vector<runtime::TensorMapArg> tensorMaps;
  std::string add(const std::string &prefix, DType dtype, bool isConst,
                  const runtime::BufferRef &ref);
  /// Declares parameter `index` (a const input) without __restrict__: an
  /// output of the same kernel writes its memory.
  void markAliased(int index, DType dtype);
  /// A TMA tensor map parameter, `const __grid_constant__ fuse::TensorMap
  /// <prefix><n>` (kernels/tensor_map.cuh; addLaunch adds the helper);
  /// returns its name.
  std::string addTensorMap(const std::string &prefix,
                           const runtime::TensorMapArg &map);
};

class CodegenContext {
public:
  runtime::Executable &executable() { return executable_; }

  void setLocation(mlir::Value value, ValueLocation location);
  const ValueLocation &location(mlir::Value value) const;
  /// The buffer of a value that must be in memory (fails on splats).
  runtime::BufferRef buffer(mlir::Value value) const;

  /// A dense constant uploaded at load time (deduplicated per op).
  runtime::BufferRef constant(mlir::Operation *constantOp);

  /// Workspace bytes for the current step, 256-byte aligned; the workspace
  /// is reused by every step, so its size is the largest step's need.
  runtime::BufferRef workspace(int64_t bytes);
  /// The most workspace a GEMM's padded result takes at once (the graph's
  /// `fuse.gemm_staging_bytes`, else kDefaultGemmStagingBytes).
  int64_t gemmStagingBytes() const { return gemmStagingBytes_; }
  void setGemmStagingBytes(int64_t bytes) { gemmStagingBytes_ = bytes; }
  /// 256 MiB: a language model's padded logits (GPT-2 B8 T1024: 823 MB)
  /// are made in four blocks of 2048 rows. On an H200 the head's step took
  /// the same time as in one piece (4.11 ms), where blocks of 1024 rows
  /// cost 0.04 ms more (their copies ran at 1.9 TB/s instead of 2.4).
  static constexpr int64_t kDefaultGemmStagingBytes = int64_t{256} << 20;
  /// Starts the step of top-level op `op`: its workspace begins above the
  /// staged copies still kept for later GEMMs, and those whose last GEMM
  /// came before `op` are let go.
  void beginStep(mlir::Operation *op);

  /// The workspace copy of `source` staged as `layout`: an earlier GEMM's,
  /// where one is kept (`made`), else new workspace the caller fills. Where
  /// a GEMM after the current step reads `source` too, a new copy is kept
  /// for it (below every later step's workspace, until the last such GEMM).
  struct StagedCopy {
    runtime::BufferRef buffer;
    bool made;
  };
  StagedCopy stagedCopy(mlir::Value source, const StagedLayout &layout);

  /// Adds a launch of `spec` (deduplicated kernel) as the next step. Kernels
  /// are shared by body; the tensor maps, like the args, belong to the
  /// launch. Each argument's extent is the rest of its buffer from where it
  /// points (extentFrom).
  void addLaunch(const KernelSpec &spec, const std::string &label,
                 const std::string &kernelComment, double flops, double bytes);
  void addGemm(const runtime::GemmStep &gemm, const std::string &label,
               double flops, double bytes);
  void addFill(const runtime::FillStep &fill, const std::string &label);
  void addCopy(const runtime::CopyStep &copy, const std::string &label);

  /// Bindings of a fusion's block arguments: literals for splat constants,
  /// kernel parameters (`in0`, `in1`, ...) for the rest.
  std::vector<InputBinding> bindInputs(mlir::Operation *fusion,
                                       KernelParams &params);
  /// Parameters for the dense constants the emitter met.
  void bindDenseConstants(const ScalarEmitter &emitter, KernelParams &params);
  /// The fusion's operands planned in the memory of one of its results (in
  /// place), declared without __restrict__ in `params`: the kernel must read
  /// them through the coherent path and before it stores that result.
  std::set<unsigned> markInPlaceInputs(mlir::Operation *fusion,
                                       const std::vector<InputBinding> &inputs,
                                       KernelParams &params) const;

  /// The `to` copy of input vector `source` (`count` elements of `from`)
  /// that a GEMM epilogue reads as its bias: one kernel at the start of the
  /// step makes every such copy (finishHoistedCasts), each source once
  /// however many GEMMs read it, instead of a one-block kernel before each
  /// GEMM. An input changes in place only after its last reader (the memory
  /// plan's rule), so the copy made first is what every GEMM would read.
  /// Returns the copy's index for readHoistedCastAsBias.
  size_t hoistCast(const runtime::BufferRef &source, DType from, DType to,
                   int64_t count);
  /// GEMM `gemm` (an index into the executable's gemms) reads copy `index`
  /// as its bias, once the copies are placed.
  void readHoistedCastAsBias(size_t gemm, size_t index);
  /// Places the copies in workspace no step reuses, points their GEMMs at
  /// them and adds the kernels that make them as the first steps
  /// (HoistedCasts.cpp).
  void finishHoistedCasts();

  /// Kernel name prefix per fusion kind, for readable plans.
  std::string kernelName(const std::string &kind);

  /// Bytes from `ref` to the end of its region as the kernels are compiled
  /// for it: the rest of the input, output or constant tensor, of the
  /// arena, or of the workspace used so far. Recorded with every launch
  /// argument, so that a loaded executable whose signature no longer matches
  /// its kernels is refused (validateExecutable).
  int64_t extentFrom(const runtime::BufferRef &ref) const;

private:
  runtime::Executable executable_;
  llvm::DenseMap<mlir::Value, ValueLocation> locations_;
  llvm::DenseMap<mlir::Operation *, int64_t> constants_;
  std::map<std::string, int64_t> kernelByBody_;
  std::map<std::string, int> kindCounts_;
  int64_t workspaceUsed_ = 0;
  int64_t gemmStagingBytes_ = kDefaultGemmStagingBytes;
  mlir::Operation *currentStep_ = nullptr;
  struct KeptCopy {
    mlir::Value source;
    StagedLayout layout;
    runtime::BufferRef copy;
    int64_t end; // workspace bytes below the copy's end
    mlir::Operation *lastReader;
  };
  std::vector<KeptCopy> keptCopies_;
  struct HoistedCast {
    runtime::BufferRef source;
    DType from, to;
    int64_t count;
  };
  std::vector<HoistedCast> hoistedCasts_;
  std::vector<std::pair<size_t, size_t>> hoistedBiasReaders_; // (gemm, cast)
};

/// `extern "C" __global__ void @KERNEL@(params) {` with launch bounds:
/// `__launch_bounds__(threadsPerBlock)`, or with `minBlocksPerMultiprocessor`
/// > 0 `__launch_bounds__(threadsPerBlock, minBlocksPerMultiprocessor)`.
/// Pointer parameters come first, then tensor maps.
std::string kernelSignature(const KernelParams &params, int threadsPerBlock,
                            int minBlocksPerMultiprocessor = 0);

/// "loop: cast, add, mul (model.py:34, model.py:35)": what a fusion or op
/// computes and where it comes from, for plans and kernel comments.
std::string describeOp(mlir::Operation *op);
/// The ops inside a fusion body that `value` is computed from (its own
/// defining op included; none for a block argument), and the body's block
/// arguments among their operands (and `value` itself, if it is one).
struct BodySlice {
  llvm::SetVector<mlir::Operation *> ops;
  llvm::SmallVector<mlir::BlockArgument> arguments;
};
BodySlice bodySlice(mlir::Value value);

/// The cost model's FLOPs and bytes of a top-level op (0 where it has none).
std::pair<double, double> stepCost(mlir::Operation *op);

/// The C++ integer type for indices of a fusion: int when every tensor it
/// touches has fewer than 2^31 elements.
std::string indexTypeFor(mlir::Operation *op);

} // namespace fuse::codegen

#endif // FUSE_LIB_CODEGEN_CODEGENCONTEXT_H
