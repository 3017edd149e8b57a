//===- ArenaPacking.cpp ------------------------------------------------------===//

#include "fuse/Support/ArenaPacking.h"
