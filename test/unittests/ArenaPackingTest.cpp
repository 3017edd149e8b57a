//===- ArenaPackingTest.cpp --------------------------------------------------===//

#include "fuse/Support/ArenaPacking.h"

#include <gtest/gtest.h>
