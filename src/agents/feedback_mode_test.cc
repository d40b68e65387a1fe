#include "agents/feedback_mode.h"

#include <gtest/gtest.h>

namespace kernelpro::agents {
namespace {

TEST(FeedbackModeTest, ParsesAsUsersTypeIt) {
  EXPECT_EQ(ParseFeedbackMode("proactive"), FeedbackMode::kTools);
  EXPECT_EQ(ParseFeedbackMode("raw"), FeedbackMode::kRaw);
  EXPECT_EQ(ParseFeedbackMode("None"), FeedbackMode::kNone);
  EXPECT_FALSE(ParseFeedbackMode("verbose").has_value());
  EXPECT_EQ(ToString(FeedbackMode::kReactive), "reactive");
}

}  // namespace
}  // namespace kernelpro::agents
