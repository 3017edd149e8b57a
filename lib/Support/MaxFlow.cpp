//===- MaxFlow.cpp ------------------------------------------------------===//

#include "fuse/Support/MaxFlow.h"
