//===- GemmLayoutTest.cpp - Row-major GemmStep as column-major GEMM -------===//
//
// The GPU tests check cuBLASLt's results; this checks, without a GPU, that
// the mapping handed to it is right: the column-major problem toColumnMajor
// builds is evaluated exactly as cuBLASLt defines it, and must give the
// row-major product GemmStep promises, for every transpose combination,
// padded leading dimensions and batch strides (a shared operand included).
//
//===----------------------------------------------------------------------===//

#include "GemmLayout.h" // lib/Runtime, internal

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace fuse;
using namespace fuse::runtime;
using namespace fuse::runtime::detail;

namespace {

/// Element (i, j) of op(X) for a column-major X: X[i + j * ld], transposed
/// under `trans`.
double columnMajorOp(const std::vector<double> &x, const ColumnMajorLayout &l,
                     bool trans, int64_t batch, int64_t i, int64_t j) {
  int64_t base = batch * l.stride;
  return trans ? x[base + j + i * l.ld] : x[base + i + j * l.ld];
}

/// cuBLASLt's contract: D = op(A) op(B), op(A) m x k, op(B) k x n,
/// column-major, per batch entry. The stored shapes must agree with op().
std::vector<double> evaluateColumnMajor(const ColumnMajorGemm &cm,
                                        const std::vector<double> &a,
                                        const std::vector<double> &b,
                                        size_t dSize) {
  EXPECT_EQ(cm.transA ? cm.a.cols : cm.a.rows, cm.m);
  EXPECT_EQ(cm.transA ? cm.a.rows : cm.a.cols, cm.k);
  EXPECT_EQ(cm.transB ? cm.b.cols : cm.b.rows, cm.k);
  EXPECT_EQ(cm.transB ? cm.b.rows : cm.b.cols, cm.n);
  EXPECT_EQ(cm.d.rows, cm.m);
  EXPECT_EQ(cm.d.cols, cm.n);
  EXPECT_GE(cm.a.ld, cm.a.rows);
  EXPECT_GE(cm.b.ld, cm.b.rows);
  EXPECT_GE(cm.d.ld, cm.d.rows);
  std::vector<double> d(dSize, NAN);
  for (int64_t e = 0; e < cm.batch; ++e)
    for (int64_t i = 0; i < cm.m; ++i)
      for (int64_t j = 0; j < cm.n; ++j) {
        double sum = 0;
        for (int64_t p = 0; p < cm.k; ++p)
          sum += columnMajorOp(a, cm.a, cm.transA, e, i, p) *
                 columnMajorOp(b, cm.b, cm.transB, e, p, j);
        d[e * cm.d.stride + i + j * cm.d.ld] = sum;
      }
  return d;
}

struct Shape {
  int64_t m, n, k, batch, pad;
  bool sharedB;
};

TEST(GemmLayout, ColumnMajorProblemComputesTheRowMajorProduct) {
  std::mt19937 random(7);
  std::uniform_real_distribution<double> uniform(-1, 1);
  for (Shape shape : {Shape{3, 5, 4, 1, 0, false}, Shape{7, 2, 9, 3, 2, false},
                      Shape{4, 6, 5, 2, 1, true}, Shape{1, 1, 1, 1, 0, false}})
    for (int t = 0; t < 4; ++t) {
      GemmStep g;
      g.transA = t & 1;
      g.transB = t & 2;
      g.m = shape.m, g.n = shape.n, g.k = shape.k, g.batch = shape.batch;
      g.lda = (g.transA ? g.m : g.k) + shape.pad;
      g.ldb = (g.transB ? g.k : g.n) + shape.pad;
      g.ldd = g.ldc = g.n + shape.pad;
      g.strideA = (g.transA ? g.k : g.m) * g.lda;
      g.strideB = shape.sharedB ? 0 : (g.transB ? g.n : g.k) * g.ldb;
      g.strideD = g.strideC = g.m * g.ldd;
      SCOPED_TRACE("m=" + std::to_string(g.m) + " n=" + std::to_string(g.n) +
                   " k=" + std::to_string(g.k) + " batch=" +
                   std::to_string(g.batch) + (g.transA ? " transA" : "") +
                   (g.transB ? " transB" : ""));

      int64_t bRows = g.transB ? g.n : g.k;
      std::vector<double> a(g.batch * g.strideA), b(g.batch * bRows * g.ldb);
      for (double &v : a)
        v = uniform(random);
      for (double &v : b)
        v = uniform(random);

      // GemmStep's row-major definition.
      std::vector<double> want(g.batch * g.strideD, NAN);
      for (int64_t e = 0; e < g.batch; ++e)
        for (int64_t i = 0; i < g.m; ++i)
          for (int64_t j = 0; j < g.n; ++j) {
            double sum = 0;
            for (int64_t p = 0; p < g.k; ++p) {
              double av = g.transA ? a[e * g.strideA + p * g.lda + i]
                                   : a[e * g.strideA + i * g.lda + p];
              double bv = g.transB ? b[e * g.strideB + j * g.ldb + p]
                                   : b[e * g.strideB + p * g.ldb + j];
              sum += av * bv;
            }
            want[e * g.strideD + i * g.ldd + j] = sum;
          }

      ColumnMajorGemm cm = toColumnMajor(g);
      EXPECT_EQ(cm.batch, g.batch);
      EXPECT_EQ(cm.c.ld, g.ldc);
      // cuBLASLt's A is our B, its B our A.
      std::vector<double> got = evaluateColumnMajor(cm, b, a, want.size());
      for (size_t i = 0; i < want.size(); ++i) {
        if (std::isnan(want[i])) {
          ASSERT_TRUE(std::isnan(got[i])) << "padding written at " << i;
          continue;
        }
        ASSERT_NEAR(got[i], want[i], 1e-12) << "element " << i;
      }
    }
}

TEST(GemmLayout, BiasRunsAlongTheColumnMajorRows) {
  // cuBLASLt broadcasts a bias of length rows(D) along D's columns; our bias
  // has one value per row-major column, n of them.
  GemmStep g;
  g.m = 3, g.n = 8, g.k = 2, g.lda = 2, g.ldb = 8, g.ldd = 8;
  EXPECT_EQ(toColumnMajor(g).d.rows, g.n);
}

} // namespace
