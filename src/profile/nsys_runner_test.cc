// How kernelpro invokes Nsight Systems: only the run step's NVTX range, exported as SQLite.
#include "profile/nsys_runner.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace kernelpro::profile {
namespace profile_nsys_runner_test {

bool Has(const std::vector<std::string>& argv, const std::string& arg) {
  return std::find(argv.begin(), argv.end(), arg) != argv.end();
}

TEST(NsysRunnerTest, CapturesOnlyTheProfiledRangeAndExportsSqliteWhereTheReaderLooks) {
  const std::vector<std::string> argv = NsysArgv("/opt/nsys/bin/nsys", "/tmp/x/timeline");
  ASSERT_GE(argv.size(), 2u);
  EXPECT_EQ(argv[0], "/opt/nsys/bin/nsys");
  EXPECT_EQ(argv[1], "profile");
  for (const char* arg :
       {"--trace=cuda,nvtx", "--capture-range=nvtx", "--nvtx-capture=kernelpro",
        "--capture-range-end=stop", "--export=sqlite", "--output=/tmp/x/timeline"}) {
    EXPECT_TRUE(Has(argv, arg)) << arg;
  }
  EXPECT_EQ(NsysSqlitePath("/tmp/x/timeline"), "/tmp/x/timeline.sqlite");
  EXPECT_EQ(NsysEnvironment().at("NSYS_NVTX_PROFILER_REGISTER_ONLY"), "0")
      << "the range's name is a plain string, not a registered one";
}

}  // namespace profile_nsys_runner_test
}  // namespace kernelpro::profile
