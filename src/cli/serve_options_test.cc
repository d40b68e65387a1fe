// A request's options, read by `kernelpro eval`'s own declarations on top of the server's
// defaults: what a request may set, what stays the server's, and the messages a client sees.
#include "cli/serve_options.h"

#include <gtest/gtest.h>

namespace kernelpro::cli {
namespace cli_serve_options_test {

eval::EvalOptions Defaults() {
  eval::EvalOptions o;
  o.timing_trials = 40;
  o.step_timeout_s = 120;
  o.cache_dir = "/srv/cache";
  return o;
}

std::string ErrorOf(const Json& options) {
  auto resolved = EvalRequestOptions(Defaults()).Resolve(options);
  return resolved.ok() ? "ok" : resolved.status().message();
}

TEST(EvalRequestOptionsTest, AppliesTheRequestsOptionsOnTheServersDefaults) {
  auto o = EvalRequestOptions(Defaults())
               .Resolve({{"timing_trials", 50},
                         {"correctness", "kernelbench"},
                         {"extra-trials", 0},
                         {"allow_torch_op", {"matmul", "add"}},
                         {"build_only", true},
                         {"compile_baseline", false},
                         {"seed", 7}});
  ASSERT_TRUE(o.ok()) << o.status().message();
  EXPECT_EQ(o->timing_trials, 50);
  EXPECT_EQ(o->extra_trials, 0);
  EXPECT_EQ(eval::CorrectnessCriterion(*o), "kernelbench");
  EXPECT_EQ(o->allowed_ops, (std::vector<std::string>{"matmul", "add"}));
  EXPECT_TRUE(o->build_only);
  EXPECT_FALSE(o->compile_baseline);
  EXPECT_EQ(o->seed, 7u);
  EXPECT_EQ(o->cache_dir, "/srv/cache") << "the server's own settings stay";

  auto defaults = EvalRequestOptions(Defaults()).Resolve(Json::object());
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->timing_trials, 40) << "no options: the server's defaults";
}

TEST(EvalRequestOptionsTest, RefusesWhatIsTheServersAndWhatIsNoOption) {
  EXPECT_EQ(ErrorOf({{"cache_dir", "/etc"}}),
            "option 'cache_dir' is the server's to set, not a "
            "request's");
  EXPECT_EQ(ErrorOf({{"sandbox-read", "/home"}}),
            "option 'sandbox_read' is the server's to set, not a request's");
  EXPECT_EQ(ErrorOf({{"unsafe_no_sandbox", true}}),
            "option 'unsafe_no_sandbox' is the server's to set, not a request's");
  EXPECT_EQ(ErrorOf({{"gpus", "1"}}), "option 'gpus' is the server's to set, not a request's");
  EXPECT_EQ(ErrorOf({{"python", "/bin/sh"}}),
            "option 'python' is the server's to set, not a request's");
  EXPECT_EQ(ErrorOf({{"timing_trails", 5}})
                .rfind("unknown option 'timing_trails' (a request may "
                       "set: trials, extra_trials, timing_trials",
                       0),
            0u);
}

TEST(EvalRequestOptionsTest, BadValuesGetTheCommandLinesMessages) {
  EXPECT_EQ(ErrorOf({{"trials", 0}}),
            "options: --trials: '0' is not accepted: give a whole number from 1 to 1000");
  EXPECT_EQ(ErrorOf({{"trials", "many"}}).rfind("options: --trials", 0), 0u);
  EXPECT_EQ(ErrorOf({{"correctness", "loose"}}).rfind("options: --correctness", 0), 0u);
  EXPECT_EQ(ErrorOf({{"build_only", 1}}), "build_only is a flag: true or false");
  EXPECT_EQ(ErrorOf({{"atol", nullptr}}), "atol takes a number or a string");
  EXPECT_EQ(ErrorOf({{"correctness", "kernelbench"}, {"atol", 0.1}}).rfind("options: ", 0), 0u)
      << "a named criterion excludes its tolerances, as on the command line";
  EXPECT_EQ(ErrorOf({{"timeout", 600}}), "timeout is at most 120 s on this server");
  EXPECT_EQ(ErrorOf({{"timeout", 60}}), "ok") << "a request may lower a timeout";
}

}  // namespace cli_serve_options_test
}  // namespace kernelpro::cli
