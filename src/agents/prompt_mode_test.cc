#include "agents/prompt_mode.h"

#include <gtest/gtest.h>

namespace kernelpro::agents {
namespace agents_prompt_mode_test {

TEST(PromptModeTest, ParsesAsUsersTypeIt) {
  EXPECT_EQ(ParsePromptMode("optimise"), PromptMode::kOptimize);
  EXPECT_EQ(ParsePromptMode("DEBUG"), PromptMode::kDebug);
  EXPECT_FALSE(ParsePromptMode("refine").has_value());
  EXPECT_EQ(ToString(PromptMode::kOptimize), "optimize");
}

}  // namespace agents_prompt_mode_test
}  // namespace kernelpro::agents
