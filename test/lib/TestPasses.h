//===- TestPasses.h - Passes that exist only to test tools ------*- C++ -*-===//

#ifndef FUSE_TEST_LIB_TESTPASSES_H
#define FUSE_TEST_LIB_TESTPASSES_H

namespace mlir::fuse::test {

/// Registers the test-only passes (`fuse-test-*`) with the global registry.
void registerTestPasses();

} // namespace mlir::fuse::test

#endif // FUSE_TEST_LIB_TESTPASSES_H
