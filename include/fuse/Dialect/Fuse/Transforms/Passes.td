//===- Passes.td - Fuse pass declarations ---------------------*- tablegen -*-===//
//
// Every Fuse pass is declared here, named `fuse-<verb>-<noun>`, with its
// options; DEBUG_TYPE in its implementation equals that name.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_TRANSFORMS_PASSES_TD
#define FUSE_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

#endif // FUSE_TRANSFORMS_PASSES_TD
