//===- TestMiscompile.cpp - A deliberately wrong pass ---------------------===//
//
// `fuse-test-miscompile` rewrites every fuse.add into fuse.sub. The IR stays
// valid, so only running the graph can tell: tests use it to show that
// `fuse-run --check-pipeline` catches a pass that changes a graph's meaning.
//
//===----------------------------------------------------------------------===//

#include "TestPasses.h"

#include "fuse/Dialect/Fuse/IR/FuseOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/Pass/Pass.h"

using namespace mlir;
using namespace mlir::fuse;

namespace {

struct TestMiscompilePass
    : public PassWrapper<TestMiscompilePass, OperationPass<>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestMiscompilePass)

  StringRef getArgument() const final { return "fuse-test-miscompile"; }
  StringRef getDescription() const final {
    return "Test only: deliberately rewrites fuse.add into fuse.sub";
  }

  void runOnOperation() override {
    getOperation()->walk([](AddOp add) {
      OpBuilder builder(add);
      auto sub = SubOp::create(builder, add.getLoc(), add.getLhs(), add.getRhs());
      add.replaceAllUsesWith(sub.getResult());
      add.erase();
    });
  }
};

} // namespace

void mlir::fuse::test::registerTestPasses() {
  PassRegistration<TestMiscompilePass>();
}
