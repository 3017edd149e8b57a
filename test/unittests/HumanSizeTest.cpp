//===- HumanSizeTest.cpp - The one byte formatter -------------------------===//
//
// fuse::humanBytes (fuse/Support/HumanSize.h) is what the runtime and the
// passes print sizes with: binary units, three significant digits at most.
//
//===----------------------------------------------------------------------===//

#include "fuse/Support/HumanSize.h"

#include <gtest/gtest.h>

#include <cstdint>

using fuse::humanBytes;

TEST(HumanSize, BytesBelowOneKiBAreExact) {
  EXPECT_EQ(humanBytes(0), "0 B");
  EXPECT_EQ(humanBytes(1000), "1000 B");
  EXPECT_EQ(humanBytes(1023), "1023 B");
}

TEST(HumanSize, UnitsArePowersOf1024) {
  EXPECT_EQ(humanBytes(1024), "1.00 KiB");
  EXPECT_EQ(humanBytes(2048), "2.00 KiB");
  EXPECT_EQ(humanBytes(98304), "96.0 KiB");
  EXPECT_EQ(humanBytes(int64_t(3) << 20), "3.00 MiB");
  EXPECT_EQ(humanBytes(int64_t(3) << 29), "1.50 GiB");
  EXPECT_EQ(humanBytes(int64_t(1) << 40), "1.00 TiB");
  EXPECT_EQ(humanBytes(int64_t(1) << 62), "4.00 EiB");
}

TEST(HumanSize, NegativeDifferencesKeepTheirSign) {
  EXPECT_EQ(humanBytes(-512), "-512 B");
  EXPECT_EQ(humanBytes(-2048), "-2.00 KiB");
  EXPECT_EQ(humanBytes(-(int64_t(50) << 10)), "-50.0 KiB");
}

// fuse-run --max-memory=SIZE reads sizes back in the same units.
TEST(HumanSize, ParsesCommandLineSizes) {
  using fuse::parseHumanBytes;
  EXPECT_EQ(parseHumanBytes("4096"), 4096);
  EXPECT_EQ(parseHumanBytes("1K"), 1024);
  EXPECT_EQ(parseHumanBytes("512M"), int64_t(512) << 20);
  EXPECT_EQ(parseHumanBytes("16G"), int64_t(16) << 30);
  EXPECT_EQ(parseHumanBytes("16GiB"), int64_t(16) << 30);
  EXPECT_EQ(parseHumanBytes("16gb"), int64_t(16) << 30);
  EXPECT_EQ(parseHumanBytes("2T"), int64_t(2) << 40);
  for (const char *bad : {"", "0", "G", "-1", "1.5G", "12X", "3 G", "5GiBs",
                          "99999999999999999999", "9000000T"})
    EXPECT_FALSE(parseHumanBytes(bad).has_value()) << bad;
}
