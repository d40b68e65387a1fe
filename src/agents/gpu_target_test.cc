#include "agents/gpu_target.h"

#include <gtest/gtest.h>

namespace kernelpro::agents {
namespace agents_gpu_target_test {

TEST(GpuTargetTest, FromArchitecturesAndNames) {
  EXPECT_EQ(ParseGpuTarget("sm_90")->arch, "sm_90");
  EXPECT_EQ(ParseGpuTarget("sm90a")->arch, "sm_90a");
  EXPECT_EQ(ParseGpuTarget("80")->arch, "sm_80");
  EXPECT_EQ(ParseGpuTarget("8.9")->arch, "sm_89");
  EXPECT_EQ(ParseGpuTarget("NVIDIA H200")->arch, "sm_90");
  EXPECT_EQ(ParseGpuTarget("A100-SXM4-80GB")->arch, "sm_80");
  EXPECT_EQ(ParseGpuTarget("L40S")->arch, "sm_89");
  EXPECT_EQ(ParseGpuTarget("L4")->arch, "sm_89");
  EXPECT_EQ(ParseGpuTarget("B200")->arch, "sm_100");
  GpuTarget h = *ParseGpuTarget("sm_90a");
  EXPECT_EQ(h.major(), 9);
  EXPECT_EQ(h.minor(), 0);
  EXPECT_EQ(ParseGpuTarget("sm_100")->major(), 10);
  auto bad = ParseGpuTarget("voodoo 5");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("unknown GPU 'voodoo 5'"), std::string::npos);
}

}  // namespace agents_gpu_target_test
}  // namespace kernelpro::agents
