// The run directory's layout: the names users find in README and their run directories.
#include "store/run_layout.h"

#include <gtest/gtest.h>

namespace kernelpro::store {
namespace store_run_layout_test {

TEST(RunLayoutTest, NamesEveryFileOfARunDirectory) {
  const RunLayout layout("/runs/swish");
  EXPECT_EQ(layout.store(), "/runs/swish/run.db");
  EXPECT_EQ(layout.lock(), "/runs/swish/run.lock");
  EXPECT_EQ(layout.stage1(), "/runs/swish/stage1.json");
  EXPECT_EQ(layout.memory(), "/runs/swish/memory.jsonl");
  EXPECT_EQ(layout.work(), "/runs/swish/work");
  EXPECT_EQ(layout.best_kernel(), "/runs/swish/best.py");
  EXPECT_EQ(layout.markdown_report(), "/runs/swish/report.md");
  EXPECT_EQ(layout.html_report(), "/runs/swish/report.html");
}

TEST(RunLayoutTest, CandidatesAreNumberedByTheirStoreId) {
  EXPECT_EQ(RunLayout::CandidateFile(7), "candidates/0007.py");
  EXPECT_EQ(RunLayout::CandidateFile(12345), "candidates/12345.py");
  EXPECT_EQ(RunLayout("runs/a").Path(RunLayout::CandidateFile(3)), "runs/a/candidates/0003.py");
}

}  // namespace store_run_layout_test
}  // namespace kernelpro::store
