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

TEST(Utf8PrefixTest, NeverSplitsACharacter) {
  const std::string quoted = "a \xE2\x80\x98" "b\xE2\x80\x99";  // a ‘b’
  EXPECT_EQ(Utf8Prefix(quoted, 100), quoted.size());
  EXPECT_EQ(Utf8Prefix(quoted, 2), 2u);
  EXPECT_EQ(Utf8Prefix(quoted, 3), 2u);  // inside ‘: back to its first byte
  EXPECT_EQ(Utf8Prefix(quoted, 4), 2u);
  EXPECT_EQ(Utf8Prefix(quoted, 5), 5u);
  EXPECT_EQ(Utf8Prefix("", 0), 0u);
}

TEST(FormatFixedTest, RoundsToTheGivenDecimals) {
  EXPECT_EQ(FormatFixed(1.8449), "1.84");
  EXPECT_EQ(FormatFixed(1.845, 1), "1.8");
  EXPECT_EQ(FormatFixed(95.0, 0), "95");
  EXPECT_EQ(FormatFixed(0.00004, 4), "0.0000");
}

}  // namespace
}  // namespace kernelpro
