//===- VectorAccess.h - 16-byte loads and stores in kernel templates -*- C++ -*-===//
//
// Memory-bound templates (loop, column reduction) have each thread compute
// `width` consecutive elements, so that the inputs read at those elements'
// own positions and the outputs written there move with one 16-byte access
// (kernels/vector_io.cuh) instead of `width` scalar ones: at 2 bytes an
// element, scalar accesses cost eight times the load/store instructions and
// leave too few bytes in flight to reach the bandwidth.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_LIB_CODEGEN_VECTORACCESS_H
#define FUSE_LIB_CODEGEN_VECTORACCESS_H

#include "ScalarEmitter.h"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace fuse::codegen {

/// The inputs of a fusion body read at a thread's own elements, loaded as
/// vectors once; the emitter's load hook hands it their elements.
class VectorInputs {
public:
  /// `elements[e]` names the linear position base + e of the thread's e-th
  /// element (declared by the template); an input qualifies when it has
  /// `total` elements and is read at exactly those positions.
  /// `coherent` lists the inputs planned in place under an output: their
  /// loads take the coherent path (an nc load may see stale data there).
  VectorInputs(mlir::Block &body, const std::vector<InputBinding> &inputs,
               int64_t total, std::vector<std::string> elements,
               std::set<unsigned> coherent = {});
  /// Routes the emitter's loads of qualifying inputs to the vectors.
  void install(ScalarEmitter &emitter);
  /// The vector loads of every input the emitted elements used, from linear
  /// position `base` (aligned to the width). Call after emitting them.
  void emitLoads(CodeBuffer &code, const std::string &base) const;
  int64_t width() const { return static_cast<int64_t>(elements_.size()); }

private:
  /// Elements of `dtype` one 16-byte load brings (at most the width).
  int64_t perChunk(DType dtype) const;

  mlir::Block &body_;
  std::vector<InputBinding> inputs_;
  int64_t total_;
  std::vector<std::string> elements_;
  std::set<unsigned> coherent_;
  std::map<unsigned, bool> used_;
};

/// Stores `values` (register values of `dtype`, one per element) at
/// `pointer + base`: one vector store, or a scalar one for a single value.
void emitVectorStore(CodeBuffer &code, const std::string &pointer, DType dtype,
                     const std::string &base,
                     const std::vector<std::string> &values,
                     const std::string &variable);

} // namespace fuse::codegen

#endif // FUSE_LIB_CODEGEN_VECTORACCESS_H
