//===- InputsTest.cpp - Names of a graph's inputs and outputs -------------===//
//
// Arrays of inputs and outputs are named by the arguments' and results'
// `fuse.name`, else arg<N> and out<N>: the names fuse-run reads --inputs by,
// writes --dump-outputs as and looks --expected arrays up by.
//
//===----------------------------------------------------------------------===//

#include "fuse/Dialect/Fuse/IR/FuseDialect.h"
#include "fuse/Interpreter/Inputs.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::fuse;

namespace {

class InputsTest : public ::testing::Test {
protected:
  InputsTest() { context.loadDialect<FuseDialect, func::FuncDialect>(); }

  func::FuncOp parse(const char *source) {
    module = parseSourceString<ModuleOp>(source, &context);
    EXPECT_TRUE(module);
    return module ? *module->getOps<func::FuncOp>().begin() : func::FuncOp();
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
};

TEST_F(InputsTest, OutputNameIsFuseNameElseOutN) {
  func::FuncOp func = parse(R"(
    func.func @f(%x: tensor<4xf32> {fuse.name = "x"}, %y: tensor<4xf32>)
        -> (tensor<4xf32>, tensor<4xf32> {fuse.name = "loss"}, tensor<4xf32>) {
      return %x, %y, %x : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
    })");
  ASSERT_TRUE(func);
  EXPECT_EQ(outputName(func, 0), "out0");
  EXPECT_EQ(outputName(func, 1), "loss");
  EXPECT_EQ(outputName(func, 2), "out2");

  std::vector<ArgumentInfo> arguments = describeArguments(func, std::nullopt);
  ASSERT_EQ(arguments.size(), 2u);
  EXPECT_EQ(arguments[0].name, "x");
  EXPECT_EQ(arguments[1].name, "arg1");
}

TEST_F(InputsTest, OutputNameFollowsAttributeSetFromCpp) {
  func::FuncOp func = parse(R"(
    func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
      return %x : tensor<4xf32>
    })");
  ASSERT_TRUE(func);
  EXPECT_EQ(outputName(func, 0), "out0");
  func.setResultAttr(0, FuseDialect::kNameAttr,
                     Builder(&context).getStringAttr("logits"));
  EXPECT_EQ(outputName(func, 0), "logits");
}

} // namespace
