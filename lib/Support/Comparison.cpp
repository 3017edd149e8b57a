//===- Comparison.cpp - Comparing tensors against a reference -------------===//

#include "fuse/Support/Comparison.h"

#include <algorithm>
#include <cmath>

namespace fuse {

double toleranceFor(DType dtype) {
  switch (dtype) {
  case DType::F32: return 1e-4;
  case DType::BF16: return 2e-2;
  case DType::F16: return 1e-2;
  default: return 0.0;
  }
}

double toleranceFor(const std::vector<DType> &dtypes) {
  double tolerance = 0.0;
  for (DType dtype : dtypes)
    tolerance = std::max(tolerance, toleranceFor(dtype));
  return tolerance;
}

double absoluteFloor(double tolerance) { return tolerance * 1e-4; }

ComparisonResult compareTensors(const HostTensor &actual,
                                const HostTensor &expected, double tolerance) {
  ComparisonResult result;
  result.tolerance = tolerance;
  if (actual.dtype() != expected.dtype() || actual.shape() != expected.shape()) {
    result.reason = "type " + actual.typeString() + " differs from the reference's " +
                    expected.typeString();
    return result;
  }
  double differenceNorm = 0.0, expectedNorm = 0.0;
  int64_t nanCount = 0;
  for (int64_t i = 0, e = actual.numElements(); i < e; ++i) {
    double a = actual.get(i), b = expected.get(i);
    if (std::isnan(a) || std::isnan(b)) {
      ++nanCount;
      continue;
    }
    // Equal infinities agree; anything else involving infinity does not.
    double difference = a == b ? 0.0 : std::fabs(a - b);
    result.maxAbsError = std::max(result.maxAbsError, difference);
    differenceNorm += difference * difference;
    expectedNorm += b * b;
  }
  differenceNorm = std::sqrt(differenceNorm);
  expectedNorm = std::sqrt(expectedNorm);
  result.relativeError =
      expectedNorm > 0.0 ? differenceNorm / expectedNorm : differenceNorm;
  if (nanCount > 0) {
    result.reason = std::to_string(nanCount) + " NaN element(s)";
    return result;
  }
  // A reference that is zero up to rounding (the gradient of a bias that a
  // softmax cancels, say) makes the relative error meaningless: both sides
  // are noise. Differences below absoluteFloor(tolerance) pass.
  if (!(result.relativeError <= tolerance) &&
      !(result.maxAbsError <= absoluteFloor(tolerance))) {
    result.reason = "relative error above tolerance";
    return result;
  }
  result.passed = true;
  return result;
}

} // namespace fuse
