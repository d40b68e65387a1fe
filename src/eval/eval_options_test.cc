// What an evaluation's own options may change and what stays its executor's (KeepProcessWorld:
// Executor::WithOptions and the server's requests).
#include "eval/eval_options.h"

#include <gtest/gtest.h>

namespace kernelpro::eval {
namespace eval_eval_options_test {

TEST(KeepProcessWorldTest, KeepsTheExecutorsWorldAndTheEvaluationsOwnOptions) {
  EvalOptions world;
  world.device = "cuda";
  world.gpus = {"3"};
  world.cache_dir = "/srv/cache";
  world.work_dir = "/srv/work/slot-0";
  world.sandbox_read_only = {"/opt/cutlass"};
  world.jobs = 8;
  EvalOptions request;
  request.device = "cpu";
  request.gpus = {"0", "1"};
  request.cache_dir = "/tmp/evil";
  request.unsafe_no_sandbox = true;
  request.sandbox_read_only = {"/home"};
  request.timing_trials = 50;
  request.atol = 0.1;
  request.seed = 9;
  KeepProcessWorld(world, request);
  EXPECT_EQ(request.device, "cuda");
  EXPECT_EQ(request.gpus, std::vector<std::string>{"3"});
  EXPECT_EQ(request.cache_dir, "/srv/cache");
  EXPECT_EQ(request.work_dir, "/srv/work/slot-0");
  EXPECT_FALSE(request.unsafe_no_sandbox);
  EXPECT_EQ(request.sandbox_read_only, std::vector<std::string>{"/opt/cutlass"});
  EXPECT_EQ(request.jobs, 8);
  EXPECT_EQ(request.timing_trials, 50);
  EXPECT_DOUBLE_EQ(request.atol, 0.1);
  EXPECT_EQ(request.seed, 9u);
}

}  // namespace eval_eval_options_test
}  // namespace kernelpro::eval
