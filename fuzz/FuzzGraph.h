//===- FuzzGraph.h - What the graph fuzz targets share ----------*- C++ -*-===//
//
// A fresh MLIRContext per input (so that no input's types and attributes
// pile up in the next one's), Fuse's dialects registered, and every
// diagnostic swallowed: a fuzz target is judged by crashes,
// sanitizer reports and hangs, never by what it prints.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_FUZZ_FUZZGRAPH_H
#define FUSE_FUZZ_FUZZGRAPH_H

#include "fuse/Dialect/Fuse/IR/FuseDialect.h"
#include "fuse/Dialect/Fuse/IR/GraphParsing.h"
#include "fuse/Dialect/Fuse/IR/GraphVerification.h"
#include "fuse/Dialect/Fuse/Transforms/GraphDriver.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include <cstdint>
#include <memory>

namespace fuse::fuzz {

/// A context with the Fuse and func dialects, single-threaded, silent.
class FuzzContext {
public:
  FuzzContext() : context(registry(), mlir::MLIRContext::Threading::DISABLED) {
    context.loadAllAvailableDialects();
    context.getDiagEngine().registerHandler(
        [](mlir::Diagnostic &) { return mlir::success(); });
  }

  /// `data` as the main buffer of `sourceMgr`, named fuzz.mlir.
  void addInput(const uint8_t *data, size_t size) {
    sourceMgr.AddNewSourceBuffer(
        llvm::MemoryBuffer::getMemBufferCopy(
            llvm::StringRef(reinterpret_cast<const char *>(data), size),
            "fuzz.mlir"),
        llvm::SMLoc());
  }

  /// `data` as graph text through the front ends' parse path (GraphParsing.h)
  /// and the whole-graph type check; null when either refuses it.
  mlir::OwningOpRef<mlir::ModuleOp> parse(const uint8_t *data, size_t size) {
    addInput(data, size);
    mlir::OwningOpRef<mlir::ModuleOp> module =
        mlir::fuse::parseGraph(sourceMgr, &context);
    if (!module || failed(mlir::fuse::verifyGraphTypes(*module)))
      return nullptr;
    return module;
  }

  mlir::MLIRContext context;
  llvm::SourceMgr sourceMgr;

private:
  static mlir::DialectRegistry registry() {
    mlir::DialectRegistry registry;
    registry.insert<mlir::fuse::FuseDialect, mlir::func::FuncDialect>();
    return registry;
  }
};

} // namespace fuse::fuzz

#endif // FUSE_FUZZ_FUZZGRAPH_H
