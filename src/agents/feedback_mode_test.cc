#include "agents/feedback_mode.h"

#include <gtest/gtest.h>

namespace kernelpro::agents {
namespace agents_feedback_mode_test {

TEST(FeedbackModeTest, ParsesAsUsersTypeIt) {
  EXPECT_EQ(ParseFeedbackMode("proactive"), FeedbackMode::kTools);
  EXPECT_EQ(ParseFeedbackMode("raw"), FeedbackMode::kRaw);
  EXPECT_EQ(ParseFeedbackMode("None"), FeedbackMode::kNone);
  EXPECT_FALSE(ParseFeedbackMode("verbose").has_value());
  EXPECT_EQ(ToString(FeedbackMode::kReactive), "reactive");
}

}  // namespace agents_feedback_mode_test
}  // namespace kernelpro::agents
