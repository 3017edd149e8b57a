//===- MaxFlowTest.cpp --------------------------------------------------===//

#include "fuse/Support/MaxFlow.h"

#include <gtest/gtest.h>
