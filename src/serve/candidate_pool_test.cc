// What a blank worker may be handed: only a candidate whose own sandbox would mount nothing the
// blank worker did not (UncoveredMount), writable only where it was writable.
#include "serve/candidate_pool.h"

#include <gtest/gtest.h>

namespace kernelpro::serve {
namespace serve_candidate_pool_test {

TEST(UncoveredMountTest, EveryPathMustBeOneTheBlankWorkerMountedOrBelowOne) {
  eval::SandboxMounts have{{"/slot/blank-0/src/problem.py", "/slot/blank-0/src/candidate.py",
                            "/slot/blank-0/build", "/cache/inputs", "/cache/pch"},
                           {"/work/slot-0/candidates"}};
  eval::SandboxMounts fits{
      {"/slot/blank-0/src/candidate.py", "/slot/blank-0/build", "/cache/inputs/k9", "/cache/pch"},
      {"/work/slot-0/candidates/123-0-0-candidate"}};
  EXPECT_EQ(UncoveredMount(fits, have), "");

  eval::SandboxMounts sibling = fits;
  sibling.read_only.push_back("/slot/blank-0/src/helper.py");  // a sibling it never had
  EXPECT_EQ(UncoveredMount(sibling, have), "/slot/blank-0/src/helper.py");

  eval::SandboxMounts prefix = fits;
  prefix.read_only.push_back("/cache/inputs-other");  // a name that only starts the same
  EXPECT_EQ(UncoveredMount(prefix, have), "/cache/inputs-other");

  eval::SandboxMounts writes = fits;
  writes.writable.push_back("/cache/pch");  // read-only in the blank worker
  EXPECT_EQ(UncoveredMount(writes, have), "/cache/pch (writable)");

  eval::SandboxMounts cutlass = fits;
  cutlass.read_only.push_back("/opt/cutlass/include");
  EXPECT_EQ(UncoveredMount(cutlass, have), "/opt/cutlass/include");
}

}  // namespace serve_candidate_pool_test
}  // namespace kernelpro::serve
