//===- StridedLayoutTest.cpp - Strides of views and flash addressing ------===//
//
// The layouts fuse/Analysis/StridedLayout.h gives views, read forward (an
// operand's view) and backward (a result written through views), on the
// shapes the models produce and on the reshapes strides cannot express; and
// the flash kernels' addressing rule (fuse/Analysis/FlashAttention.h). The
// passes and the code generator that use them are covered by lit tests.
//
//===----------------------------------------------------------------------===//

#include "fuse/Analysis/FlashAttention.h"
#include "fuse/Analysis/StridedLayout.h"
#include "fuse/Dialect/Fuse/IR/FuseDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

#include <optional>
#include <string>
#include <vector>

using namespace mlir;
using namespace mlir::fuse;

namespace {

class StridedLayoutTest : public ::testing::Test {
protected:
  /// The ops of the one function of `source`, in order.
  std::vector<Operation *> parse(const std::string &source) {
    context.loadDialect<FuseDialect, func::FuncDialect>();
    module = parseSourceString<ModuleOp>(source, &context);
    EXPECT_TRUE(module);
    std::vector<Operation *> ops;
    if (module)
      for (Operation &op : (*module->getOps<func::FuncOp>().begin()).getOps())
        ops.push_back(&op);
    return ops;
  }

  /// The layout at the end of `ops` (views applied in order) read from a
  /// row-major `shape`.
  static std::optional<StridedLayout> read(ArrayRef<int64_t> shape,
                                           ArrayRef<Operation *> views) {
    std::optional<StridedLayout> layout = rowMajorLayout(shape);
    for (Operation *view : views)
      if (layout)
        layout = layoutOfViewResult(view, *layout);
    return layout;
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
};

std::vector<int64_t> strides(const StridedLayout &layout) {
  return {layout.strides.begin(), layout.strides.end()};
}

TEST(StridedLayout, RowMajor) {
  EXPECT_EQ(strides(rowMajorLayout({2, 3, 4})), (std::vector<int64_t>{12, 4, 1}));
  EXPECT_EQ(rowMajorLayout({2, 3, 4}).offset, 0);
  EXPECT_TRUE(rowMajorLayout({}).strides.empty());
}

// GPT-2: k is the second third of a [B, T, 3C] projection, split into heads
// and transposed: it starts C elements in, rows 3C apart, heads D apart.
TEST_F(StridedLayoutTest, SliceReshapeTransposeOfAProjection) {
  std::vector<Operation *> ops = parse(R"mlir(
    func.func @f(%qkv: tensor<2x16x384xbf16>) -> tensor<2x2x16x64xbf16> {
      %k = fuse.slice %qkv, start = [0, 0, 128], limit = [2, 16, 256], stride = [1, 1, 1] : (tensor<2x16x384xbf16>) -> tensor<2x16x128xbf16>
      %k4 = fuse.reshape %k : (tensor<2x16x128xbf16>) -> tensor<2x16x2x64xbf16>
      %kt = fuse.transpose %k4, permutation = [0, 2, 1, 3] : (tensor<2x16x2x64xbf16>) -> tensor<2x2x16x64xbf16>
      return %kt : tensor<2x2x16x64xbf16>
    })mlir");
  std::optional<StridedLayout> layout = read({2, 16, 384}, {ops[0], ops[1], ops[2]});
  ASSERT_TRUE(layout);
  EXPECT_EQ(layout->offset, 128);
  EXPECT_EQ(strides(*layout), (std::vector<int64_t>{16 * 384, 64, 384, 1}));
  EXPECT_TRUE(flashAddressable({2, 2, 16, 64}, *layout));
  // A slice's result is only part of its operand: nothing is written
  // through one.
  EXPECT_FALSE(layoutOfViewOperand(ops[0], 0, rowMajorLayout({2, 16, 128})));
}

// Written the other way: the key gradient, transposed back and reshaped,
// is the second part of a concat into [B, T, 3C].
TEST_F(StridedLayoutTest, ConcatPartOfAResult) {
  std::vector<Operation *> ops = parse(R"mlir(
    func.func @f(%dq: tensor<2x16x128xbf16>, %dk: tensor<2x2x16x64xbf16>) -> tensor<2x16x256xbf16> {
      %t = fuse.transpose %dk, permutation = [0, 2, 1, 3] : (tensor<2x2x16x64xbf16>) -> tensor<2x16x2x64xbf16>
      %r = fuse.reshape %t : (tensor<2x16x2x64xbf16>) -> tensor<2x16x128xbf16>
      %c = fuse.concat dim(2) %dq, %r : (tensor<2x16x128xbf16>, tensor<2x16x128xbf16>) -> tensor<2x16x256xbf16>
      return %c : tensor<2x16x256xbf16>
    })mlir");
  std::optional<StridedLayout> layout = rowMajorLayout({2, 16, 256});
  layout = layoutOfViewOperand(ops[2], 1, *layout);
  ASSERT_TRUE(layout);
  EXPECT_EQ(layout->offset, 128);
  layout = layoutOfViewOperand(ops[1], 0, *layout);
  ASSERT_TRUE(layout);
  layout = layoutOfViewOperand(ops[0], 0, *layout);
  ASSERT_TRUE(layout);
  EXPECT_EQ(layout->offset, 128);
  EXPECT_EQ(strides(*layout), (std::vector<int64_t>{16 * 256, 64, 256, 1}));
}

// Merging dimensions that a transpose made non-adjacent in memory has no
// strides; splitting one, or merging ones still adjacent, has.
TEST_F(StridedLayoutTest, ReshapeNeedsContiguousGroups) {
  std::vector<Operation *> ops = parse(R"mlir(
    func.func @f(%x: tensor<4x6x8xbf16>) -> (tensor<6x32xbf16>, tensor<6x4x2x4xbf16>, tensor<2x3x32xbf16>) {
      %t = fuse.transpose %x, permutation = [1, 0, 2] : (tensor<4x6x8xbf16>) -> tensor<6x4x8xbf16>
      %merged = fuse.reshape %t : (tensor<6x4x8xbf16>) -> tensor<6x32xbf16>
      %split = fuse.reshape %t : (tensor<6x4x8xbf16>) -> tensor<6x4x2x4xbf16>
      %apart = fuse.reshape %t : (tensor<6x4x8xbf16>) -> tensor<2x3x32xbf16>
      return %merged, %split, %apart : tensor<6x32xbf16>, tensor<6x4x2x4xbf16>, tensor<2x3x32xbf16>
    })mlir");
  // The transpose leaves [6, 4, 8] with strides [8, 48, 1]: the 4 and the
  // 8 are no longer adjacent in memory, and neither are the 2 x 3 of the 6.
  EXPECT_FALSE(read({4, 6, 8}, {ops[0], ops[1]}));
  EXPECT_FALSE(read({4, 6, 8}, {ops[0], ops[3]}));
  std::optional<StridedLayout> split = read({4, 6, 8}, {ops[0], ops[2]});
  ASSERT_TRUE(split);
  EXPECT_EQ(strides(*split), (std::vector<int64_t>{8, 48, 4, 1}));
  // Without the transpose, the same merge is a plain view.
  std::optional<StridedLayout> plain =
      layoutOfViewResult(ops[1], rowMajorLayout({6, 4, 8}));
  ASSERT_TRUE(plain);
  EXPECT_EQ(strides(*plain), (std::vector<int64_t>{32, 1}));
}

// The flash kernels want the head dim contiguous and every row on 16 bytes
// (8 elements); a dimension of size 1 is never stepped along.
TEST(FlashAddressing, HeadDimContiguousRowsAligned) {
  StridedLayout ok{128, {16 * 384, 64, 384, 1}};
  EXPECT_TRUE(flashAddressable({2, 2, 16, 64}, ok));
  StridedLayout offset{4, {16 * 384, 64, 384, 1}};
  EXPECT_FALSE(flashAddressable({2, 2, 16, 64}, offset));
  StridedLayout rows{0, {16 * 388, 64, 388, 1}};
  EXPECT_FALSE(flashAddressable({2, 2, 16, 64}, rows));
  StridedLayout headDim{0, {4096, 16, 1, 32}};
  EXPECT_FALSE(flashAddressable({2, 2, 16, 64}, headDim));
  StridedLayout oneBatch{0, {3, 64, 384, 1}};
  EXPECT_TRUE(flashAddressable({1, 2, 16, 64}, oneBatch));
}

} // namespace
