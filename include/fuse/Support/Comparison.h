//===- Comparison.h - Comparing tensors against a reference -----*- C++ -*-===//
//
// The one place that says how close a result must be to its reference:
// relative error ||actual - expected|| / ||expected|| (2-norms) against a
// tolerance chosen from the dtypes involved, with an absolute floor for
// references that are zero up to rounding; NaN never passes.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_SUPPORT_COMPARISON_H
#define FUSE_SUPPORT_COMPARISON_H

#include "fuse/Support/HostTensor.h"

#include <string>
#include <vector>

namespace fuse {

/// The relative-error tolerance for results computed in `dtype`: f32 1e-4
/// (TF32 off), bf16 2e-2, f16 1e-2, integers and i1 exact (0).
double toleranceFor(DType dtype);

/// The loosest tolerance among `dtypes` (the least precise dtype a
/// computation went through decides how close its result can be).
double toleranceFor(const std::vector<DType> &dtypes);

struct ComparisonResult {
  bool passed = false;
  double maxAbsError = 0;
  double relativeError = 0;
  double tolerance = 0;
  /// Why it failed, empty if it passed.
  std::string reason;
};

/// The absolute difference below which two results agree whatever their
/// relative error: 1e-4 of the relative tolerance (1e-8 for f32). It only
/// matters where the reference is zero up to rounding, e.g. the gradient of
/// an attention key bias, which the softmax cancels exactly in theory.
double absoluteFloor(double tolerance);

/// Compares `actual` with `expected` (same dtype and shape, else it fails
/// with the reason): passes when the relative error is within `tolerance` or
/// every element is within absoluteFloor(tolerance). When ||expected|| is 0
/// the relative error is the 2-norm of the difference.
ComparisonResult compareTensors(const HostTensor &actual,
                                const HostTensor &expected, double tolerance);

} // namespace fuse

#endif // FUSE_SUPPORT_COMPARISON_H
