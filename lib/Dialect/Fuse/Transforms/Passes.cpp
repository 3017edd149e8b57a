//===- Passes.cpp - Registration of the Fuse passes -----------------------===//
//
// Pass implementations live in one file each beside this one; this file only
// instantiates the generated registration code.
//
//===----------------------------------------------------------------------===//

#include "fuse/Dialect/Fuse/Transforms/Passes.h"
