#include "agents/profile_analysis.h"

#include <gtest/gtest.h>

namespace kernelpro::agents {
namespace agents_profile_analysis_test {

TEST(ProfileAnalysisTest, IsReadForgivinglyAndRanked) {
  auto a = ProfileAnalysisFromJson(Json::parse(R"({
    "bottleneck": "memory", "severity": "HIGH",
    "recommendations": [{"priority": 2, "action": "unroll"}, "use float4 loads",
                        {"priority": 1, "action": "fuse the epilogue", "rationale": "one pass"},
                        {"priority": 3}]})"));
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->severity, "high");
  ASSERT_EQ(a->recommendations.size(), 3u) << "an entry with no action is dropped";
  EXPECT_EQ(a->recommendations[0].action, "fuse the epilogue");
  EXPECT_EQ(a->recommendations[1].action, "unroll");
  auto back = ProfileAnalysisFromJson(ToJson(*a));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(ToJson(*back), ToJson(*a));
  EXPECT_FALSE(ProfileAnalysisFromJson(Json{{"severity", "low"}}).ok());
  EXPECT_FALSE(ProfileAnalysisFromJson(Json::array()).ok());
}

}  // namespace agents_profile_analysis_test
}  // namespace kernelpro::agents
