//===- GraphParsing.h - Graph text to a module, guarded ---------*- C++ -*-===//
//
// MLIR's parser recurses once per level of nesting: `dense<[[[...]]]>`
// 30,000 brackets deep, `tuple<tuple<...>>` 50,000 deep or 5,000 nested
// `fuse.fusion` regions overflow the stack and kill the process, and so do
// affine expressions, which chain without brackets (`affine_map<(d0) ->
// (d0 + d0 + ...)>`, `- - - d0`). Every front end (fuse-opt, fuse-run,
// fuse-translate, the C API) scans the text first, in one pass and with no
// recursion, and refuses such input with an error at its line and column
// that states the limit:
//
// - brackets ( [ { < (outside strings and comments; `->`, `<=` and `>=` are
//   not brackets) nested deeper than kMaxGraphNesting. Real graphs nest
//   under 20 (module, function, region, attribute dictionary, dense
//   literal of a rank-8 tensor, type).
// - `affine_map` and `affine_set`, which Fuse graphs never use.
//
// Everything else is then parsed by MLIR as before.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_DIALECT_FUSE_IR_GRAPHPARSING_H
#define FUSE_DIALECT_FUSE_IR_GRAPHPARSING_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>

namespace mlir::fuse {

/// The deepest bracket nesting a graph's text may have: far beyond any real
/// graph, far below what overflows the parser's stack (a nested region
/// costs about 1.6 KB of it, an ASan build's about three times that).
constexpr unsigned kMaxGraphNesting = 256;

/// Where and why a graph's text cannot be handed to the parser.
struct GraphTextProblem {
  size_t offset = 0;
  unsigned line = 1, column = 1;
  std::string message;
};

/// The first problem of `text` (see the file comment), or nullopt.
std::optional<GraphTextProblem> findGraphTextProblem(llvm::StringRef text);

/// Checks buffer `bufferId` of `sourceMgr`; on a problem prints it as an
/// error at its place (file:line:col, the line and a caret) to `os` and
/// fails. For fuse-opt, which hands the buffer to MLIR's driver.
LogicalResult checkGraphText(const llvm::SourceMgr &sourceMgr,
                             unsigned bufferId, llvm::raw_ostream &os);

/// Parses the main buffer of `sourceMgr` as a module after checking its
/// text; a problem is reported as an error diagnostic at its place through
/// `context`'s handlers (as parse errors are). Null on failure.
OwningOpRef<ModuleOp> parseGraph(llvm::SourceMgr &sourceMgr,
                                 MLIRContext *context);

} // namespace mlir::fuse

#endif // FUSE_DIALECT_FUSE_IR_GRAPHPARSING_H
