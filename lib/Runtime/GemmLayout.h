//===- GemmLayout.h - Row-major GemmStep as a column-major GEMM -*- C++ -*-===//
//
// GemmStep is row-major; cuBLASLt is column-major. A row-major R x C matrix
// with leading dimension ld is, read column-major, the C x R matrix of its
// transpose. So D = op(A) op(B) (row-major, m x n) is computed as
// D^T = op(B)^T op(A)^T (column-major, n x m): cuBLASLt's A is our B and its
// B our A, m and n swap, and each operand keeps its own transpose flag. The
// bias, one value per column of the row-major D, is one per row of D^T,
// which is what cuBLASLt's bias epilogues broadcast.
//
// Plain C++ (no CUDA), so the mapping is unit-tested on a machine without a
// GPU against a host emulation of the column-major contract. Internal to
// lib/Runtime.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_LIB_RUNTIME_GEMMLAYOUT_H
#define FUSE_LIB_RUNTIME_GEMMLAYOUT_H

#include "fuse/Runtime/Executable.h"

namespace fuse::runtime::detail {

/// A column-major matrix: `rows` x `cols`, leading dimension `ld` (>= rows),
/// `stride` elements between batch entries.
struct ColumnMajorLayout {
  int64_t rows = 0, cols = 0, ld = 0, stride = 0;
};

/// The column-major problem D = op(A) op(B) (+ beta C), op(A) m x k.
struct ColumnMajorGemm {
  bool transA = false, transB = false;
  int64_t m = 0, n = 0, k = 0, batch = 1;
  /// A holds our B's storage and B our A's; C and D are our C and D.
  ColumnMajorLayout a, b, c, d;
};

inline ColumnMajorGemm toColumnMajor(const GemmStep &g) {
  ColumnMajorGemm cm;
  cm.transA = g.transB;
  cm.transB = g.transA;
  cm.m = g.n;
  cm.n = g.m;
  cm.k = g.k;
  cm.batch = g.batch;
  // Our B is stored k x n (n x k under transB), row-major: column-major it
  // is n x k (k x n).
  cm.a = {g.transB ? g.k : g.n, g.transB ? g.n : g.k, g.ldb, g.strideB};
  // Our A is stored m x k (k x m under transA): column-major k x m (m x k).
  cm.b = {g.transA ? g.m : g.k, g.transA ? g.k : g.m, g.lda, g.strideA};
  cm.c = {g.n, g.m, g.ldc, g.strideC};
  cm.d = {g.n, g.m, g.ldd, g.strideD};
  return cm;
}

} // namespace fuse::runtime::detail

#endif // FUSE_LIB_RUNTIME_GEMMLAYOUT_H
