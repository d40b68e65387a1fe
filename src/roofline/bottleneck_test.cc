#include "roofline/bottleneck.h"

#include <gtest/gtest.h>

namespace kernelpro::roofline {
namespace roofline_bottleneck_test {

TEST(BottleneckTest, ParsesWhatItPrints) {
  for (Bottleneck b : kAllBottlenecks) EXPECT_EQ(ParseBottleneck(BottleneckName(b)).value(), b);
  EXPECT_EQ(BottleneckName(Bottleneck::kMixed), "mixed");
}

TEST(BottleneckTest, AnUnknownClassListsTheKnownOnes) {
  auto bad = ParseBottleneck("io");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("compute, memory, latency, mixed"), std::string::npos);
}

}  // namespace roofline_bottleneck_test
}  // namespace kernelpro::roofline
