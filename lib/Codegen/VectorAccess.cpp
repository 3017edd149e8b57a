//===- VectorAccess.cpp - 16-byte loads and stores in kernel templates ----===//

#include "VectorAccess.h"

#include "llvm/ADT/STLExtras.h"

namespace fuse::codegen {

VectorInputs::VectorInputs(mlir::Block &body,
                           const std::vector<InputBinding> &inputs,
                           int64_t total, std::vector<std::string> elements,
                           std::set<unsigned> coherent)
    : body_(body), inputs_(inputs), total_(total),
      elements_(std::move(elements)), coherent_(std::move(coherent)) {}

int64_t VectorInputs::perChunk(DType dtype) const {
  return std::min<int64_t>(width(), 16 / static_cast<int64_t>(dtypeSize(dtype)));
}

void VectorInputs::install(ScalarEmitter &emitter) {
  if (width() == 1)
    return;
  emitter.setLoadHook([this](unsigned argument, const std::string &linear)
                          -> std::optional<std::string> {
    auto element = llvm::find(elements_, linear);
    if (element == elements_.end() || inputs_[argument].param.empty())
      return std::nullopt;
    mlir::Value input = body_.getArgument(argument);
    if (numElements(shapeOf(input)) != total_)
      return std::nullopt;
    int64_t e = element - elements_.begin();
    int64_t chunk = perChunk(dtypeOf(input));
    used_[argument] = true;
    return "vin" + std::to_string(argument) + "_" + std::to_string(e / chunk) +
           ".v[" + std::to_string(e % chunk) + "]";
  });
}

void VectorInputs::emitLoads(CodeBuffer &code, const std::string &base) const {
  for (const auto &entry : used_) {
    unsigned argument = entry.first;
    DType dtype = dtypeOf(body_.getArgument(argument));
    int64_t chunk = perChunk(dtype);
    std::string vec = "fuse::Vec<" + storageType(dtype) + ", " +
                      std::to_string(chunk) + ">";
    std::string load =
        coherent_.count(argument) ? "fuse::loadVecCoherent" : "fuse::loadVec";
    for (int64_t c = 0; c < width() / chunk; ++c)
      code.line("const " + vec + " vin" + std::to_string(argument) + "_" +
                std::to_string(c) + " = " + load + "<" + storageType(dtype) +
                ", " + std::to_string(chunk) + ">(" + inputs_[argument].param +
                " + " + base + " + " + std::to_string(c * chunk) + ");");
  }
}

void emitVectorStore(CodeBuffer &code, const std::string &pointer, DType dtype,
                     const std::string &base,
                     const std::vector<std::string> &values,
                     const std::string &variable) {
  if (values.size() == 1) {
    code.line(pointer + "[" + base + "] = " +
              ScalarEmitter::toStorage(dtype, values[0]) + ";");
    return;
  }
  std::string width = std::to_string(values.size());
  code.line("fuse::Vec<" + storageType(dtype) + ", " + width + "> " + variable + ";");
  for (auto [e, value] : llvm::enumerate(values))
    code.line(variable + ".v[" + std::to_string(e) + "] = " +
              ScalarEmitter::toStorage(dtype, value) + ";");
  code.line("fuse::storeVec<" + storageType(dtype) + ", " + width + ">(" +
            pointer + " + " + base + ", " + variable + ");");
}

} // namespace fuse::codegen
