//===- PlanFormat.cpp - The human-readable launch plan --------------------===//
//
// What `fuse-translate --emit-plan` prints and lit tests check: one line per
// step, buffers named by region and offset. It must not crash on an
// executable that validateExecutable would refuse (the plan is how one finds
// out what is wrong), so every index is checked and a bad one printed as such.
//
//===----------------------------------------------------------------------===//

#include "fuse/Runtime/ExecutableIO.h"

#include "fuse/Support/HumanSize.h"

#include <cstdio>
#include <sstream>

namespace fuse::runtime {

namespace {

template <typename T>
const T *at(const std::vector<T> &items, int64_t index) {
  return index >= 0 && index < (int64_t)items.size() ? &items[index] : nullptr;
}

std::string formatNumber(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

std::string formatDim3(const std::array<uint32_t, 3> &dims) {
  return "(" + std::to_string(dims[0]) + "," + std::to_string(dims[1]) + "," +
         std::to_string(dims[2]) + ")";
}

std::string formatSpec(const TensorSpec &spec) {
  std::string text = spec.name + ": " + typeString(spec.dtype, spec.shape);
  if (spec.arenaOffset >= 0)
    text += " (in the arena at byte " + std::to_string(spec.arenaOffset) + ")";
  return text;
}

std::string formatSpecs(const std::vector<TensorSpec> &specs) {
  if (specs.empty())
    return "none";
  std::string text;
  for (size_t i = 0; i < specs.size(); ++i)
    text += (i ? ", " : "") + std::to_string(i) + " " + formatSpec(specs[i]);
  return text;
}

/// "(64,100)": the first `count` entries.
template <typename T, size_t N>
std::string formatTuple(const std::array<T, N> &values, size_t count) {
  std::string text = "(";
  for (size_t i = 0; i < count && i < N; ++i)
    text += (i ? "," : "") + std::to_string(values[i]);
  return text + ")";
}

/// "input 0 (x) bf16 dims=(64,100) strides=(128) box=(64,32) swizzle=128B",
/// dimensions innermost first as in TensorMapArg. A rank out of range prints
/// as is, with the entries the arrays have.
std::string formatTensorMap(const Executable &exe, const TensorMapArg &map) {
  size_t rank = map.rank;
  std::string text = formatBufferRef(exe, map.base) + " " +
                     dtypeName(map.dtype) +
                     (rank < 1 || rank > 5 ? " rank=" + std::to_string(rank)
                                           : std::string()) +
                     " dims=" + formatTuple(map.dims, rank);
  if (rank > 1)
    text += " strides=" + formatTuple(map.strides, rank - 1);
  text += " box=" + formatTuple(map.box, rank);
  if (map.swizzle != TensorMapArg::Swizzle::None)
    text += std::string(" swizzle=") + swizzleName(map.swizzle);
  return text;
}

std::string formatLaunch(const Executable &exe, int64_t index) {
  const KernelLaunch *launch = at(exe.launches, index);
  if (!launch)
    return "launch <no launch " + std::to_string(index) + ">";
  const Kernel *kernel = at(exe.kernels, launch->kernel);
  std::string text = "launch " + (kernel ? kernel->name
                                         : "<no kernel " +
                                               std::to_string(launch->kernel) +
                                               ">");
  text += " grid=" + formatDim3(launch->grid);
  // A persistent launch runs at most this many CTAs a multiprocessor.
  if (launch->persistentBlocksPerMultiprocessor > 0)
    text += " persistent=" + std::to_string(launch->persistentBlocksPerMultiprocessor) +
            "/SM";
  text += " block=" + formatDim3(launch->block) +
          " smem=" + std::to_string(launch->sharedBytes) + " args=[";
  for (size_t a = 0; a < launch->args.size(); ++a)
    text += (a ? ", " : "") + formatBufferRef(exe, launch->args[a].ref);
  text += "]";
  // A guarded launch: "changes-when=[input 20 (apply) > 0.5, arena+2048 != 0]".
  if (!launch->changesOnlyWhen.empty()) {
    static const char *const kCompare[] = {"==", "!=", "<", "<=", ">", ">="};
    text += " changes-when=[";
    for (size_t t = 0; t < launch->changesOnlyWhen.size(); ++t) {
      const LaunchGuardTerm &term = launch->changesOnlyWhen[t];
      size_t compare = static_cast<size_t>(term.compare);
      std::ostringstream constant;
      constant << term.constant;
      text += (t ? ", " : "") + std::string(term.negate ? "!(" : "") +
              formatBufferRef(exe, term.flag) + " " +
              (compare < 6 ? kCompare[compare] : "?") + " " + constant.str() +
              (term.negate ? ")" : "");
    }
    text += "]";
  }
  // Only where there are maps: plans of launches without them read as before.
  if (!launch->tensorMaps.empty()) {
    text += " maps=[";
    for (size_t m = 0; m < launch->tensorMaps.size(); ++m)
      text += (m ? ", " : "") + formatTensorMap(exe, launch->tensorMaps[m]);
    text += "]";
  }
  return text;
}

std::string formatGemm(const Executable &exe, int64_t index) {
  const GemmStep *g = at(exe.gemms, index);
  if (!g)
    return "gemm <no gemm " + std::to_string(index) + ">";
  std::ostringstream os;
  os << "gemm " << dtypeName(g->abType) << " x " << dtypeName(g->abType)
     << " -> " << dtypeName(g->cdType) << " m=" << g->m << " n=" << g->n
     << " k=" << g->k << " batch=" << g->batch;
  if (g->transA)
    os << " transA";
  if (g->transB)
    os << " transB";
  os << " lda=" << g->lda << " ldb=" << g->ldb;
  if (g->hasC())
    os << " ldc=" << g->ldc;
  os << " ldd=" << g->ldd;
  if (g->batch > 1) {
    os << " strideA=" << g->strideA << " strideB=" << g->strideB;
    if (g->hasC())
      os << " strideC=" << g->strideC;
    os << " strideD=" << g->strideD;
  }
  os << " alpha=" << formatNumber(g->alpha)
     << " beta=" << formatNumber(g->beta)
     << " epilogue=" << epilogueName(g->epilogue)
     << " A=" << formatBufferRef(exe, g->a)
     << " B=" << formatBufferRef(exe, g->b);
  if (g->hasC())
    os << " C=" << formatBufferRef(exe, g->c);
  os << " D=" << formatBufferRef(exe, g->d);
  if (g->hasBias())
    os << " bias=" << formatBufferRef(exe, g->bias) << " ("
       << dtypeName(g->biasType) << ")";
  return os.str();
}

std::string formatStep(const Executable &exe, const Step &step) {
  switch (step.kind) {
  case Step::Kind::Launch:
    return formatLaunch(exe, step.index);
  case Step::Kind::Gemm:
    return formatGemm(exe, step.index);
  case Step::Kind::Fill:
    if (const FillStep *fill = at(exe.fills, step.index))
      return "fill " + formatBufferRef(exe, fill->dst) +
             " bytes=" + std::to_string(fill->bytes);
    return "fill <no fill " + std::to_string(step.index) + ">";
  case Step::Kind::Copy:
    if (const CopyStep *copy = at(exe.copies, step.index))
      return "copy " + formatBufferRef(exe, copy->src) + " -> " +
             formatBufferRef(exe, copy->dst) +
             " bytes=" + std::to_string(copy->bytes);
    return "copy <no copy " + std::to_string(step.index) + ">";
  }
  return "<unknown step kind>";
}

} // namespace

std::string formatBufferRef(const Executable &exe, const BufferRef &ref) {
  std::string offset = std::to_string(ref.offset);
  auto named = [&](const char *kind, const std::string *name) {
    std::string text = std::string(kind) + " " + std::to_string(ref.index) +
                       " (" + (name ? *name : std::string("?")) + ")";
    return ref.offset ? text + "+" + offset : text;
  };
  switch (ref.kind) {
  case BufferRef::Kind::Arena:
    return "arena+" + offset;
  case BufferRef::Kind::Workspace:
    return "workspace+" + offset;
  case BufferRef::Kind::Input: {
    const TensorSpec *spec = at(exe.inputs, ref.index);
    return named("input", spec ? &spec->name : nullptr);
  }
  case BufferRef::Kind::Output: {
    const TensorSpec *spec = at(exe.outputs, ref.index);
    return named("output", spec ? &spec->name : nullptr);
  }
  case BufferRef::Kind::Constant: {
    const ConstantData *constant = at(exe.constants, ref.index);
    return named("constant", constant ? &constant->spec.name : nullptr);
  }
  }
  return "<unknown buffer kind>";
}

std::string formatPlan(const Executable &exe) {
  using ::fuse::humanBytes;
  std::ostringstream os;
  os << "executable @" << exe.entry << " for " << exe.arch << "\n";
  os << "  inputs: " << formatSpecs(exe.inputs) << "\n";
  os << "  outputs: " << formatSpecs(exe.outputs) << "\n";
  os << "  arena: " << exe.arenaBytes << " bytes (" << humanBytes(exe.arenaBytes)
     << "), workspace: " << exe.workspaceBytes << " bytes ("
     << humanBytes(exe.workspaceBytes) << ")\n";
  os << "  constants:";
  if (exe.constants.empty())
    os << " none";
  for (size_t i = 0; i < exe.constants.size(); ++i)
    os << (i ? ", " : " ") << i << " " << formatSpec(exe.constants[i].spec)
       << " (" << exe.constants[i].bytes.size() << " bytes)";
  os << "\n";
  os << "  kernels: " << exe.kernels.size() << ", helpers:";
  if (exe.helperSources.empty())
    os << " none";
  for (const auto &helper : exe.helperSources)
    os << " " << helper.first;
  os << "\n";
  os << "steps: " << exe.steps.size() << "\n";
  for (size_t i = 0; i < exe.steps.size(); ++i) {
    const Step &step = exe.steps[i];
    os << "  " << i << " " << formatStep(exe, step);
    if (!step.label.empty())
      os << "  # " << step.label;
    os << "\n";
  }
  return os.str();
}

} // namespace fuse::runtime
