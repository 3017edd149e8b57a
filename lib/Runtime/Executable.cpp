//===- Executable.cpp - TensorSpec helpers and the Executable's invariants ===//
//
// validateExecutable is the one place that knows what a well-formed
// Executable is. Both ways in (deserialization and Executor::create for
// executables built in memory by the code generator) go through it, so the
// executor can index and offset without further checks.
//
//===----------------------------------------------------------------------===//

#include "fuse/Runtime/Executable.h"
#include "fuse/Support/ArenaPacking.h"
#include "fuse/Support/CheckedMath.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <optional>
#include <set>

namespace fuse::runtime {

int64_t TensorSpec::numElements() const {
  int64_t count = 1;
  for (int64_t dim : shape)
    count *= dim;
  return count;
}

int64_t TensorSpec::bytes() const {
  return numElements() * static_cast<int64_t>(dtypeSize(dtype));
}

const char *bufferKindName(BufferRef::Kind kind) {
  switch (kind) {
  case BufferRef::Kind::Arena: return "arena";
  case BufferRef::Kind::Workspace: return "workspace";
  case BufferRef::Kind::Input: return "input";
  case BufferRef::Kind::Output: return "output";
  case BufferRef::Kind::Constant: return "constant";
  }
  return "?";
}

const char *stepKindName(Step::Kind kind) {
  switch (kind) {
  case Step::Kind::Launch: return "launch";
  case Step::Kind::Gemm: return "gemm";
  case Step::Kind::Fill: return "fill";
  case Step::Kind::Copy: return "copy";
  }
  return "?";
}

const char *epilogueName(GemmStep::Epilogue epilogue) {
  switch (epilogue) {
  case GemmStep::Epilogue::None: return "none";
  case GemmStep::Epilogue::Bias: return "bias";
  case GemmStep::Epilogue::Relu: return "relu";
  case GemmStep::Epilogue::ReluBias: return "relu_bias";
  case GemmStep::Epilogue::Gelu: return "gelu";
  case GemmStep::Epilogue::GeluBias: return "gelu_bias";
  }
  return "?";
}

const char *swizzleName(TensorMapArg::Swizzle swizzle) {
  switch (swizzle) {
  case TensorMapArg::Swizzle::None: return "none";
  case TensorMapArg::Swizzle::B32: return "32B";
  case TensorMapArg::Swizzle::B64: return "64B";
  case TensorMapArg::Swizzle::B128: return "128B";
  }
  return "?";
}

std::array<uint32_t, 3> launchGrid(const KernelLaunch &launch, int multiprocessors) {
  std::array<uint32_t, 3> grid = launch.grid;
  if (launch.persistentBlocksPerMultiprocessor > 0 && multiprocessors > 0)
    grid[0] = std::min<uint64_t>(
        grid[0], uint64_t(multiprocessors) * launch.persistentBlocksPerMultiprocessor);
  return grid;
}

uint32_t swizzleBytes(TensorMapArg::Swizzle swizzle) {
  switch (swizzle) {
  case TensorMapArg::Swizzle::None: return 0;
  case TensorMapArg::Swizzle::B32: return 32;
  case TensorMapArg::Swizzle::B64: return 64;
  case TensorMapArg::Swizzle::B128: return 128;
  }
  return 0;
}

namespace {

/// Collects the first problem found; every check below returns early once
/// one is recorded, so the message names exactly one thing.
class Validator {
public:
  Validator(const Executable &exe, const std::string &origin)
      : exe(exe), origin(origin) {}

  Status run();

private:
  bool fail(const std::string &what) {
    if (message.empty())
      message = origin + ": " + what;
    return false;
  }

  /// Size in bytes of the region `ref` points into, or -1 (after failing)
  /// when its index is out of range.
  int64_t regionBytes(const BufferRef &ref, const std::string &where);
  /// `ref` must start inside its region and leave `bytes` bytes after it.
  bool checkRef(const BufferRef &ref, int64_t bytes, const std::string &where);
  /// `ref` is accessed as `dtype`: its offset must be a multiple of the
  /// element size, and an input, output or constant must be of that dtype.
  bool checkElementType(const BufferRef &ref, DType dtype,
                        const std::string &where);
  /// checkRef and checkElementType.
  bool checkAccess(const BufferRef &ref, DType dtype, int64_t bytes,
                   const std::string &where);
  /// Every byte of every output is written by some step.
  bool checkOutputsWritten();
  bool checkSpec(const TensorSpec &spec, const std::string &where);
  bool checkKernels();
  bool checkTensorMap(const TensorMapArg &map, const std::string &where);
  bool checkLaunch(size_t index);
  bool checkGemm(size_t index);
  bool checkSteps();

  const Executable &exe;
  const std::string &origin;
  std::string message;
};

std::string str(int64_t value) { return std::to_string(value); }

bool isIdentifier(const std::string &name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0])))
    return false;
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
      return false;
  return true;
}

int64_t Validator::regionBytes(const BufferRef &ref, const std::string &where) {
  auto outOfRange = [&](const char *what, size_t count) {
    fail(where + " refers to " + what + " " + str(ref.index) + " but there " +
         (count == 1 ? "is " : "are ") + std::to_string(count));
    return int64_t(-1);
  };
  switch (ref.kind) {
  case BufferRef::Kind::Arena:
    return exe.arenaBytes;
  case BufferRef::Kind::Workspace:
    return exe.workspaceBytes;
  case BufferRef::Kind::Input:
    if (ref.index < 0 || ref.index >= (int64_t)exe.inputs.size())
      return outOfRange("input", exe.inputs.size());
    return exe.inputs[ref.index].bytes();
  case BufferRef::Kind::Output:
    if (ref.index < 0 || ref.index >= (int64_t)exe.outputs.size())
      return outOfRange("output", exe.outputs.size());
    return exe.outputs[ref.index].bytes();
  case BufferRef::Kind::Constant:
    if (ref.index < 0 || ref.index >= (int64_t)exe.constants.size())
      return outOfRange("constant", exe.constants.size());
    return exe.constants[ref.index].spec.bytes();
  }
  fail(where + " has an unknown buffer kind");
  return -1;
}

bool Validator::checkRef(const BufferRef &ref, int64_t bytes,
                         const std::string &where) {
  int64_t region = regionBytes(ref, where);
  if (region < 0)
    return false;
  if (ref.offset < 0 || bytes < 0 || ref.offset > region ||
      bytes > region - ref.offset)
    return fail(where + " covers bytes [" + str(ref.offset) + ", " +
                str(ref.offset + bytes) + ") of " + bufferKindName(ref.kind) +
                (ref.kind == BufferRef::Kind::Arena ||
                         ref.kind == BufferRef::Kind::Workspace
                     ? std::string()
                     : " " + str(ref.index)) +
                ", which has " + str(region) + " bytes");
  return true;
}

bool Validator::checkElementType(const BufferRef &ref, DType dtype,
                                 const std::string &where) {
  const int64_t size = static_cast<int64_t>(dtypeSize(dtype));
  if (ref.offset % size != 0)
    return fail(where + " accesses " + dtypeName(dtype) + " at byte offset " +
                str(ref.offset) + ", not a multiple of " + str(size));
  const TensorSpec *spec = nullptr;
  if (ref.kind == BufferRef::Kind::Input)
    spec = &exe.inputs[ref.index];
  else if (ref.kind == BufferRef::Kind::Output)
    spec = &exe.outputs[ref.index];
  else if (ref.kind == BufferRef::Kind::Constant)
    spec = &exe.constants[ref.index].spec;
  if (spec && spec->dtype != dtype)
    return fail(where + " accesses " + bufferKindName(ref.kind) + " " +
                str(ref.index) + " '" + spec->name + "' as " +
                dtypeName(dtype) + ", but it is " +
                typeString(spec->dtype, spec->shape));
  return true;
}

bool Validator::checkAccess(const BufferRef &ref, DType dtype, int64_t bytes,
                            const std::string &where) {
  return checkRef(ref, bytes, where) && checkElementType(ref, dtype, where);
}

bool Validator::checkSpec(const TensorSpec &spec, const std::string &where) {
  for (int64_t dim : spec.shape)
    if (dim < 0)
      return fail(where + " '" + spec.name + "' has a negative dimension");
  // bytes() multiplies the dimensions: a file could make it wrap, and every
  // extent check after this one would compare against the wrapped size.
  if (!checkedByteSize(spec.shape, static_cast<int64_t>(dtypeSize(spec.dtype))))
    return fail(where + " '" + spec.name + "' (" +
                typeString(spec.dtype, spec.shape) +
                ") takes more than 2^48 bytes");
  if (spec.arenaOffset < -1 ||
      (spec.arenaOffset >= 0 &&
       (spec.arenaOffset % kArenaAlignment != 0 ||
        spec.arenaOffset > exe.arenaBytes - spec.bytes())))
    return fail(where + " '" + spec.name + "' (" +
                typeString(spec.dtype, spec.shape) + ") is at arena offset " +
                str(spec.arenaOffset) + ", not an aligned offset within the " +
                str(exe.arenaBytes) + "-byte arena");
  return true;
}

bool Validator::checkKernels() {
  std::set<std::string> helpers;
  for (const auto &[name, text] : exe.helperSources)
    if (!helpers.insert(name).second)
      return fail("helper '" + name + "' appears twice in helperSources");
  std::set<std::string> names;
  for (size_t i = 0; i < exe.kernels.size(); ++i) {
    const Kernel &kernel = exe.kernels[i];
    std::string where = "kernel " + std::to_string(i) + " '" + kernel.name + "'";
    if (!isIdentifier(kernel.name))
      return fail(where + ": the name is not a C identifier");
    if (!names.insert(kernel.name).second)
      return fail(where + ": another kernel has the same name");
    for (const std::string &helper : kernel.helpers)
      if (!helpers.count(helper))
        return fail(where + " uses helper '" + helper +
                    "', which is not in helperSources");
  }
  return true;
}

bool Validator::checkLaunch(size_t index) {
  const KernelLaunch &launch = exe.launches[index];
  std::string where = "launch " + std::to_string(index);
  if (launch.kernel < 0 || launch.kernel >= (int64_t)exe.kernels.size())
    return fail(where + " names kernel " + str(launch.kernel) + " but there " +
                (exe.kernels.size() == 1 ? "is " : "are ") +
                std::to_string(exe.kernels.size()));
  where += " (" + exe.kernels[launch.kernel].name + ")";
  uint64_t threads = 1;
  for (int d = 0; d < 3; ++d) {
    if (launch.grid[d] == 0 || launch.block[d] == 0)
      return fail(where + " has an empty grid or block");
    threads *= launch.block[d];
  }
  if (threads > 1024)
    return fail(where + " has " + std::to_string(threads) +
                " threads per block (at most 1024)");
  if (launch.persistentBlocksPerMultiprocessor > 0 &&
      (launch.grid[1] != 1 || launch.grid[2] != 1))
    return fail(where + " is persistent but its grid is not one-dimensional");
  // The extent is what the kernel, compiled for the declared shapes, may
  // touch: an input that shrank under it is refused here.
  for (size_t a = 0; a < launch.args.size(); ++a) {
    const KernelArg &arg = launch.args[a];
    if (!checkAccess(arg.ref, arg.dtype, arg.bytes,
                     where + " argument " + std::to_string(a)))
      return false;
  }
  for (size_t m = 0; m < launch.tensorMaps.size(); ++m)
    if (!checkTensorMap(launch.tensorMaps[m],
                        where + " tensor map " + std::to_string(m)))
      return false;
  // A guarded launch is skipped by a kernel that reads its flags
  // (fuse_graph_guard, which the executable must then have).
  for (size_t t = 0; t < launch.changesOnlyWhen.size(); ++t) {
    const LaunchGuardTerm &term = launch.changesOnlyWhen[t];
    std::string what = where + " guard term " + std::to_string(t);
    if (term.dtype != DType::I1 && term.dtype != DType::I32 &&
        term.dtype != DType::I64 && term.dtype != DType::F32)
      return fail(what + " reads a " + dtypeName(term.dtype) +
                  " flag (i1, i32, i64 or f32)");
    if (!checkAccess(term.flag, term.dtype, (int64_t)dtypeSize(term.dtype), what))
      return false;
    if (std::none_of(exe.kernels.begin(), exe.kernels.end(),
                     [](const Kernel &k) { return k.name == kGraphGuardKernel; }))
      return fail(what + " needs the kernel " + kGraphGuardKernel +
                  ", which the executable lacks");
  }
  return true;
}

/// The requirements cuTensorMapEncodeTiled documents for a tiled map without
/// interleave (cuda.h), checked here so that a bad map is refused when the
/// executable is loaded, naming the launch and the map, rather than failing
/// in the driver at the first run. The base pointer's own alignment is known
/// only at run time; the executor checks it.
bool Validator::checkTensorMap(const TensorMapArg &map,
                               const std::string &where) {
  const uint64_t elementBytes = dtypeSize(map.dtype);
  const std::string dtype = dtypeName(map.dtype);
  if (map.rank < 1 || map.rank > 5)
    return fail(where + " has rank " + std::to_string(map.rank) +
                " (1 to 5)");
  for (uint32_t d = 0; d < map.rank; ++d)
    if (map.dims[d] == 0 || map.dims[d] > (uint64_t(1) << 32))
      return fail(where + ": dims[" + std::to_string(d) + "] is " +
                  std::to_string(map.dims[d]) + " (each must be 1 to 2^32)");
  for (uint32_t d = 0; d + 1 < map.rank; ++d) {
    std::string stride = where + ": strides[" + std::to_string(d) + "] is " +
                         std::to_string(map.strides[d]) + " bytes";
    if (map.strides[d] % 16 != 0)
      return fail(stride + ", not a multiple of 16");
    if (map.strides[d] >= (uint64_t(1) << 40))
      return fail(stride + " (must be below 2^40)");
  }
  // Rows of the innermost dimension must not overlap. Outer strides may come
  // in any order (a [B, T, H, D] tensor read as {D, T, H, B} has a head
  // stride smaller than its row stride), so only the first is compared.
  if (map.rank > 1 && map.strides[0] < map.dims[0] * elementBytes)
    return fail(where + ": strides[0] is " + std::to_string(map.strides[0]) +
                " bytes, less than a row of dims[0] = " +
                std::to_string(map.dims[0]) + " " + dtype + " elements (" +
                std::to_string(map.dims[0] * elementBytes) + " bytes)");
  for (uint32_t d = 0; d < map.rank; ++d)
    if (map.box[d] < 1 || map.box[d] > 256)
      return fail(where + ": box[" + std::to_string(d) + "] is " +
                  std::to_string(map.box[d]) + " (each must be 1 to 256)");
  const uint64_t boxRow = map.box[0] * elementBytes;
  const std::string boxText = where + ": box[0] is " +
                              std::to_string(map.box[0]) + " " + dtype +
                              " elements (" + std::to_string(boxRow) +
                              " bytes)";
  if (boxRow % 16 != 0)
    return fail(boxText + ", not a multiple of 16 bytes");
  if (map.swizzle > TensorMapArg::Swizzle::B128)
    return fail(where + " has an unknown swizzle " +
                std::to_string(static_cast<int>(map.swizzle)));
  if (map.swizzle != TensorMapArg::Swizzle::None &&
      boxRow > swizzleBytes(map.swizzle))
    return fail(boxText + ", more than the " + swizzleName(map.swizzle) +
                " swizzle's span of " +
                std::to_string(swizzleBytes(map.swizzle)) + " bytes");
  if (map.base.offset % 16 != 0)
    return fail(where + ": base offset " + str(map.base.offset) +
                " is not a multiple of 16 bytes");
  // TMA bounds-checks coordinates against `dims` only, never against the
  // buffer: every element inside the dims must be in the buffer. The sum is
  // kept below 2^62 so that it cannot wrap (dims < 2^33, strides < 2^40).
  const uint64_t limit = uint64_t(1) << 62;
  uint64_t extent = elementBytes;
  for (uint32_t d = 0; d < map.rank; ++d) {
    uint64_t stride = d == 0 ? elementBytes : map.strides[d - 1];
    uint64_t last = map.dims[d] - 1;
    if (last != 0 && stride > (limit - extent) / last)
      return fail(where + " spans more than 2^62 bytes");
    extent += last * stride;
  }
  return checkAccess(map.base, map.dtype, static_cast<int64_t>(extent), where);
}

bool isGemmFloat(DType dtype) {
  return dtype == DType::F32 || dtype == DType::F16 || dtype == DType::BF16;
}

bool Validator::checkGemm(size_t index) {
  const GemmStep &g = exe.gemms[index];
  std::string where = "gemm " + std::to_string(index);
  if (g.m < 1 || g.n < 1 || g.k < 1 || g.batch < 1 ||
      g.batch > std::numeric_limits<int32_t>::max())
    return fail(where + " has shape m=" + str(g.m) + " n=" + str(g.n) +
                " k=" + str(g.k) + " batch=" + str(g.batch) +
                " (each must be at least 1)");
  // The combinations cuBLASLt runs with f32 accumulation.
  bool typesOk = (g.abType == DType::F32 && g.cdType == DType::F32) ||
                 ((g.abType == DType::BF16 || g.abType == DType::F16) &&
                  (g.cdType == g.abType || g.cdType == DType::F32));
  if (!typesOk)
    return fail(where + " multiplies " + dtypeName(g.abType) + " into " +
                dtypeName(g.cdType) +
                ", which cuBLASLt does not support (f32 -> f32, bf16/f16 -> "
                "same or f32)");
  if (g.hasBias() && !isGemmFloat(g.biasType))
    return fail(where + " has a " + dtypeName(g.biasType) + " bias");

  auto checkMatrix = [&](const char *name, const BufferRef &ref, DType dtype,
                         int64_t rows, int64_t cols, int64_t ld,
                         int64_t stride) {
    std::string w = where + " " + name;
    if (ld < cols)
      return fail(w + ": leading dimension " + str(ld) + " < " + str(cols) +
                  " columns (row-major " + str(rows) + "x" + str(cols) + ")");
    if (stride < 0)
      return fail(w + ": negative batch stride");
    // Shapes and strides may come from a file: no step may wrap.
    std::optional<int64_t> batches = checkedMul(g.batch - 1, stride);
    std::optional<int64_t> rowsSpan = checkedMul(rows - 1, ld);
    std::optional<int64_t> elements =
        batches && rowsSpan ? checkedAdd(*batches, *rowsSpan) : std::nullopt;
    if (elements)
      elements = checkedAdd(*elements, cols);
    std::optional<int64_t> bytes =
        elements ? checkedMul(*elements, static_cast<int64_t>(dtypeSize(dtype)))
                 : std::nullopt;
    if (!bytes)
      return fail(w + " spans more than 2^63 bytes");
    return checkAccess(ref, dtype, *bytes, w);
  };
  if (!checkMatrix("A", g.a, g.abType, g.transA ? g.k : g.m,
                   g.transA ? g.m : g.k, g.lda, g.strideA) ||
      !checkMatrix("B", g.b, g.abType, g.transB ? g.n : g.k,
                   g.transB ? g.k : g.n, g.ldb, g.strideB) ||
      !checkMatrix("D", g.d, g.cdType, g.m, g.n, g.ldd, g.strideD))
    return false;
  if (g.batch > 1 && g.strideD == 0)
    return fail(where + " D: batch " + str(g.batch) +
                " with stride 0 would write every entry to the same matrix");
  if (g.hasC() &&
      !checkMatrix("C", g.c, g.cdType, g.m, g.n, g.ldc, g.strideC))
    return false;
  if (g.hasBias() && !checkAccess(g.bias, g.biasType,
                                  g.n * (int64_t)dtypeSize(g.biasType),
                                  where + " bias"))
    return false;
  return true;
}

using ByteRange = std::pair<int64_t, int64_t>; // [begin, end)

/// The most separate runs of bytes (rows, or batch entries) of GEMM outputs
/// with gaps in them (ldd past n, or entries strideD apart) that
/// checkOutputsWritten follows one by one, over the whole executable. They
/// are followed only where the output's other writers leave bytes to account
/// for; more than this is refused rather than checked for minutes (an
/// executable read from a file may declare billions).
constexpr int64_t kMaxFollowedGemmRows = int64_t(1) << 20;

/// Elements of one batch entry of D, from its first element to its last.
/// Validated: checkGemm has bounded every such span.
int64_t gemmEntryElements(const GemmStep &g) {
  return (g.m - 1) * g.ldd + g.n;
}

/// Whether each batch entry of D is one run of elements: a GEMM writes the
/// n elements of every row, never the padding up to the leading dimension.
bool gemmEntryContiguous(const GemmStep &g) { return g.m == 1 || g.ldd == g.n; }

/// Bytes from D's first element that a GEMM writes every one of, when it
/// writes one run: its entries are contiguous and each starts at or before
/// the end of the one before. nullopt when D has gaps.
std::optional<int64_t> gemmContiguousBytes(const GemmStep &g) {
  const int64_t entry = gemmEntryElements(g);
  if (!gemmEntryContiguous(g) || (g.batch > 1 && g.strideD > entry))
    return std::nullopt;
  return ((g.batch - 1) * g.strideD + entry) *
         static_cast<int64_t>(dtypeSize(g.cdType));
}

/// Appends the byte ranges of D that a GEMM with gaps writes (one per batch
/// entry where entries are contiguous, else one per row), taking them from
/// `budget`; false, appending nothing, when there are more than it has left.
bool appendGemmWrites(const GemmStep &g, std::vector<ByteRange> &ranges,
                      int64_t &budget) {
  const bool contiguous = gemmEntryContiguous(g);
  const int64_t rowsPerEntry = contiguous ? 1 : g.m;
  std::optional<int64_t> count = checkedMul(g.batch, rowsPerEntry);
  if (!count || *count > budget)
    return false;
  budget -= *count;
  const int64_t size = static_cast<int64_t>(dtypeSize(g.cdType));
  const int64_t run = (contiguous ? gemmEntryElements(g) : g.n) * size;
  for (int64_t e = 0; e < g.batch; ++e)
    for (int64_t i = 0; i < rowsPerEntry; ++i) {
      int64_t begin = g.d.offset + (e * g.strideD + i * g.ldd) * size;
      ranges.push_back({begin, begin + run});
    }
  return true;
}

/// Sorts `ranges` and returns the end of the written prefix: every byte
/// below it is in some range.
int64_t writtenPrefix(std::vector<ByteRange> &ranges) {
  std::sort(ranges.begin(), ranges.end());
  int64_t covered = 0;
  for (const auto &[begin, end] : ranges) {
    if (begin > covered)
      break;
    covered = std::max(covered, end);
  }
  return covered;
}

bool Validator::checkOutputsWritten() {
  // [begin, end) byte ranges written, per output, by the steps that run.
  std::vector<std::vector<ByteRange>> written(exe.outputs.size());
  // Per output, the GEMMs (indices into exe.gemms) that write rows of it
  // with gaps between them: followed row by row only where the ranges above
  // leave bytes unaccounted for.
  std::vector<std::vector<int64_t>> gappedGemms(exe.outputs.size());
  auto note = [&](const BufferRef &ref, int64_t bytes) {
    if (ref.kind == BufferRef::Kind::Output && bytes > 0)
      written[ref.index].push_back({ref.offset, ref.offset + bytes});
  };
  for (const Step &step : exe.steps) {
    switch (step.kind) {
    case Step::Kind::Launch:
      for (const KernelArg &arg : exe.launches[step.index].args)
        if (arg.written)
          note(arg.ref, arg.bytes);
      break;
    case Step::Kind::Gemm: {
      const GemmStep &g = exe.gemms[step.index];
      if (std::optional<int64_t> bytes = gemmContiguousBytes(g))
        note(g.d, *bytes);
      else if (g.d.kind == BufferRef::Kind::Output)
        gappedGemms[g.d.index].push_back(step.index);
      break;
    }
    case Step::Kind::Fill:
      note(exe.fills[step.index].dst, exe.fills[step.index].bytes);
      break;
    case Step::Kind::Copy:
      note(exe.copies[step.index].dst, exe.copies[step.index].bytes);
      break;
    }
  }
  int64_t budget = kMaxFollowedGemmRows;
  for (size_t i = 0; i < exe.outputs.size(); ++i) {
    const TensorSpec &spec = exe.outputs[i];
    const std::string what = "output " + std::to_string(i) + " '" +
                             spec.name + "' (" +
                             typeString(spec.dtype, spec.shape) + ")";
    std::vector<ByteRange> &ranges = written[i];
    int64_t covered = writtenPrefix(ranges);
    std::vector<int64_t> &gemms = gappedGemms[i];
    if (covered < spec.bytes() && !gemms.empty()) {
      std::sort(gemms.begin(), gemms.end());
      gemms.erase(std::unique(gemms.begin(), gemms.end()), gemms.end());
      for (int64_t index : gemms)
        if (!appendGemmWrites(exe.gemms[index], ranges, budget)) {
          const GemmStep &g = exe.gemms[index];
          return fail(
              what + ": gemm " + str(index) + " writes it in " +
              (gemmEntryContiguous(g)
                   ? str(g.batch) + " batch entries " + str(g.strideD) +
                         " elements apart"
                   : str(g.batch) + " x " + str(g.m) + " rows of " +
                         str(g.n) + " elements, " + str(g.ldd) + " apart") +
              ", more separate runs than the " + str(kMaxFollowedGemmRows) +
              " the validator follows: write the whole output in a step of "
              "its own first (a fill), or lay D out without gaps");
        }
      covered = writtenPrefix(ranges);
    }
    // Left in the arena: the plan wrote it there, not in caller memory.
    if (covered >= spec.bytes() || spec.arenaOffset >= 0)
      continue;
    int64_t gapEnd = spec.bytes();
    for (const auto &range : ranges)
      if (range.first > covered) {
        gapEnd = std::min(gapEnd, range.first);
        break;
      }
    return fail(what + ": bytes [" + str(covered) + ", " + str(gapEnd) +
                ") are written by no step");
  }
  return true;
}

bool Validator::checkSteps() {
  for (size_t i = 0; i < exe.steps.size(); ++i) {
    const Step &step = exe.steps[i];
    size_t count = 0;
    switch (step.kind) {
    case Step::Kind::Launch: count = exe.launches.size(); break;
    case Step::Kind::Gemm: count = exe.gemms.size(); break;
    case Step::Kind::Fill: count = exe.fills.size(); break;
    case Step::Kind::Copy: count = exe.copies.size(); break;
    }
    if (step.index < 0 || step.index >= (int64_t)count)
      return fail("step " + std::to_string(i) + " (" + stepKindName(step.kind) +
                  ") refers to " + stepKindName(step.kind) + " " +
                  str(step.index) + " but there " +
                  (count == 1 ? "is " : "are ") + std::to_string(count));
  }
  return true;
}

Status Validator::run() {
  if (exe.arenaBytes < 0 || exe.workspaceBytes < 0)
    fail("negative arena or workspace size");
  for (size_t i = 0; message.empty() && i < exe.inputs.size(); ++i)
    checkSpec(exe.inputs[i], "input " + std::to_string(i));
  for (size_t i = 0; message.empty() && i < exe.outputs.size(); ++i)
    checkSpec(exe.outputs[i], "output " + std::to_string(i));
  for (size_t i = 0; message.empty() && i < exe.constants.size(); ++i) {
    const ConstantData &constant = exe.constants[i];
    std::string where = "constant " + std::to_string(i);
    if (checkSpec(constant.spec, where) &&
        (int64_t)constant.bytes.size() != constant.spec.bytes())
      fail(where + " '" + constant.spec.name + "' (" +
           typeString(constant.spec.dtype, constant.spec.shape) + ") has " +
           std::to_string(constant.bytes.size()) + " bytes of data, expected " +
           str(constant.spec.bytes()));
  }
  if (message.empty())
    checkKernels();
  for (size_t i = 0; message.empty() && i < exe.launches.size(); ++i)
    checkLaunch(i);
  for (size_t i = 0; message.empty() && i < exe.gemms.size(); ++i)
    checkGemm(i);
  for (size_t i = 0; message.empty() && i < exe.fills.size(); ++i)
    checkRef(exe.fills[i].dst, exe.fills[i].bytes,
             "fill " + std::to_string(i));
  for (size_t i = 0; message.empty() && i < exe.copies.size(); ++i) {
    const CopyStep &copy = exe.copies[i];
    std::string where = "copy " + std::to_string(i);
    if (checkRef(copy.src, copy.bytes, where + " source"))
      checkRef(copy.dst, copy.bytes, where + " destination");
  }
  if (message.empty())
    checkSteps();
  if (message.empty())
    checkOutputsWritten();
  return message.empty() ? Status::success() : Status::failure(message);
}

} // namespace

std::vector<int64_t> outputLastUse(const Executable &executable) {
  std::vector<int64_t> lastUse(executable.outputs.size(), -1);
  auto use = [&](const BufferRef &ref, size_t step) {
    if (ref.kind == BufferRef::Kind::Output && ref.index >= 0 &&
        ref.index < (int64_t)lastUse.size())
      lastUse[ref.index] = (int64_t)step;
  };
  for (size_t i = 0; i < executable.steps.size(); ++i) {
    const Step &step = executable.steps[i];
    switch (step.kind) {
    case Step::Kind::Launch:
      for (const KernelArg &arg : executable.launches[step.index].args)
        use(arg.ref, i);
      for (const TensorMapArg &map : executable.launches[step.index].tensorMaps)
        use(map.base, i);
      break;
    case Step::Kind::Gemm: {
      const GemmStep &gemm = executable.gemms[step.index];
      use(gemm.a, i);
      use(gemm.b, i);
      use(gemm.d, i);
      if (gemm.hasC())
        use(gemm.c, i);
      if (gemm.hasBias())
        use(gemm.bias, i);
      break;
    }
    case Step::Kind::Fill:
      use(executable.fills[step.index].dst, i);
      break;
    case Step::Kind::Copy:
      use(executable.copies[step.index].src, i);
      use(executable.copies[step.index].dst, i);
      break;
    }
  }
  return lastUse;
}

Status validateExecutable(const Executable &executable,
                          const std::string &origin) {
  return Validator(executable, origin).run();
}

} // namespace fuse::runtime
