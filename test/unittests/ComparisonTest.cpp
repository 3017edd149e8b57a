//===- ComparisonTest.cpp - Tolerances of result comparison ---------------===//

#include "fuse/Support/Comparison.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

using namespace fuse;

namespace {

HostTensor vectorOf(const std::vector<double> &values) {
  HostTensor tensor(DType::F32, {static_cast<int64_t>(values.size())});
  for (size_t i = 0; i < values.size(); ++i)
    tensor.set(i, values[i]);
  return tensor;
}

TEST(Comparison, RelativeErrorWithinTolerancePasses) {
  ComparisonResult result =
      compareTensors(vectorOf({1.0, 2.00001}), vectorOf({1.0, 2.0}), 1e-4);
  EXPECT_TRUE(result.passed) << result.reason;
}

TEST(Comparison, RelativeErrorAboveToleranceFails) {
  ComparisonResult result =
      compareTensors(vectorOf({1.0, 2.01}), vectorOf({1.0, 2.0}), 1e-4);
  EXPECT_FALSE(result.passed);
  EXPECT_EQ(result.reason, "relative error above tolerance");
}

TEST(Comparison, RoundingNoiseAroundAZeroReferencePasses) {
  // Both sides are rounding noise of a quantity that is exactly 0 in theory.
  ComparisonResult result =
      compareTensors(vectorOf({8e-13, -2e-12}), vectorOf({-5e-13, 1e-12}), 1e-4);
  EXPECT_GT(result.relativeError, 1.0);
  EXPECT_TRUE(result.passed) << result.reason;
}

TEST(Comparison, AbsoluteFloorIsFarBelowRealValues) {
  EXPECT_DOUBLE_EQ(absoluteFloor(1e-4), 1e-8);
  ComparisonResult result =
      compareTensors(vectorOf({2e-6}), vectorOf({1e-6}), 1e-4);
  EXPECT_FALSE(result.passed);
}

TEST(Comparison, NanNeverPasses) {
  ComparisonResult result =
      compareTensors(vectorOf({NAN}), vectorOf({NAN}), 1.0);
  EXPECT_FALSE(result.passed);
}

} // namespace
