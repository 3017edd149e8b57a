//===- HoistedCasts.cpp - Casts of input vectors made once, first ---------===//
//
// cuBLASLt's bias epilogue wants the bias in the result's type: a linear
// layer's f32 bias feeding a bf16 GEMM is rounded first. Made before each
// GEMM, that is a one-block kernel per linear layer and call (144 a
// BERT-large micro-batch), each costing a launch for a few kilobytes. The
// bias is a step input, which the memory plan changes in place only after
// its last reader, so its copy can be made at the start of the step: one
// kernel (per pair of types) makes all of them, a row of blocks per input,
// into workspace placed after the part the steps reuse.
//
//===----------------------------------------------------------------------===//

#include "CodegenContext.h"
#include "Lowerings.h"
#include "ScalarEmitter.h"

#include <algorithm>
#include <map>

using namespace fuse::runtime;

namespace fuse::codegen {

size_t CodegenContext::hoistCast(const BufferRef &source, DType from, DType to,
                                 int64_t count) {
  for (size_t i = 0; i < hoistedCasts_.size(); ++i) {
    const HoistedCast &cast = hoistedCasts_[i];
    if (cast.source == source && cast.from == from && cast.to == to && cast.count == count)
      return i;
  }
  hoistedCasts_.push_back({source, from, to, count});
  return hoistedCasts_.size() - 1;
}

void CodegenContext::readHoistedCastAsBias(size_t gemm, size_t index) {
  hoistedBiasReaders_.emplace_back(gemm, index);
}

void CodegenContext::finishHoistedCasts() {
  if (hoistedCasts_.empty())
    return;
  // After the workspace the steps reuse, 256-byte aligned each.
  int64_t at = (executable_.workspaceBytes + 255) / 256 * 256;
  std::vector<BufferRef> copies;
  for (const HoistedCast &cast : hoistedCasts_) {
    copies.push_back(BufferRef::workspace(at));
    at += (cast.count * static_cast<int64_t>(dtypeSize(cast.to)) + 255) / 256 * 256;
  }
  executable_.workspaceBytes = at;
  for (auto [gemm, index] : hoistedBiasReaders_) {
    executable_.gemms[gemm].bias = copies[index];
    executable_.gemms[gemm].biasType = hoistedCasts_[index].to;
  }

  // One kernel per pair of types: block row y casts input y.
  std::map<std::pair<DType, DType>, std::vector<size_t>> byTypes;
  for (size_t i = 0; i < hoistedCasts_.size(); ++i)
    byTypes[{hoistedCasts_[i].from, hoistedCasts_[i].to}].push_back(i);
  size_t before = executable_.steps.size();
  for (const auto &[types, members] : byTypes) {
    auto [from, to] = types;
    KernelParams params;
    CodeBuffer code;
    code.line("const " + std::string(storageType(from)) + " *in;");
    code.line("long long count;");
    int64_t widest = 0;
    double bytes = 0;
    std::vector<std::string> cases;
    for (size_t y = 0; y < members.size(); ++y) {
      const HoistedCast &cast = hoistedCasts_[members[y]];
      std::string in = params.add("in", from, true, cast.source);
      std::string out = params.add("out", to, false, copies[members[y]]);
      cases.push_back("case " + std::to_string(y) + ": in = " + in + "; out = " + out +
                      "; count = " + std::to_string(cast.count) + "; break;");
      widest = std::max(widest, cast.count);
      bytes += static_cast<double>(cast.count) * (dtypeSize(from) + dtypeSize(to));
    }
    code.line(std::string(storageType(to)) + " *out;");
    code.line("switch (blockIdx.y) {");
    for (const std::string &line : cases)
      code.line(line);
    code.line("default: return;");
    code.line("}");
    code.line("for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < count; "
              "i += (long long)gridDim.x * blockDim.x)");
    code.indent();
    code.line(storeStatement("out", to, "i",
                             ScalarEmitter::convert(from, to, ScalarEmitter::fromStorage(from, "in[i]"))));
    code.dedent();
    KernelSpec spec = plainKernel("cast", params, code, std::min<int64_t>((widest + 255) / 256, 64));
    spec.grid[1] = static_cast<uint32_t>(members.size());
    std::string label = "casts of " + std::to_string(members.size()) +
                        " inputs GEMM epilogues read, made once at the start";
    addLaunch(spec, label, label, 0.0, bytes);
  }
  // The launches just added go first.
  std::rotate(executable_.steps.begin(), executable_.steps.begin() + before,
              executable_.steps.end());
}

} // namespace fuse::codegen
