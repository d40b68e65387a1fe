#include "core/text.h"

#include <gtest/gtest.h>

namespace kernelpro {
namespace {

TEST(CollapseWhitespaceTest, RunsBecomeOneSpaceAndTheEndsAreTrimmed) {
  EXPECT_EQ(CollapseWhitespace("  a \n\t b  "), "a b");
  EXPECT_EQ(CollapseWhitespace("line one\r\n  continued"), "line one continued");
  EXPECT_EQ(CollapseWhitespace("\f\v"), "");
  EXPECT_EQ(CollapseWhitespace(""), "");
  EXPECT_EQ(CollapseWhitespace("unchanged"), "unchanged");
}

}  // namespace
}  // namespace kernelpro
