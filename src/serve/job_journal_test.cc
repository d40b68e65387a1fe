// The journal read back after the server died: finished jobs as they ended, unfinished ones
// interrupted, a torn last line skipped, and a long journal cut to the jobs it keeps.
#include "serve/job_journal.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/json_io.h"

namespace kernelpro::serve {
namespace serve_job_journal_test {

class JobJournalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/job_journal_" + std::to_string(::getpid());
    std::filesystem::remove_all(dir_);
    path_ = dir_ + "/state/journal.jsonl";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::size_t Lines() const {
    std::ifstream in(path_);
    std::size_t n = 0;
    for (std::string line; std::getline(in, line);) ++n;
    return n;
  }

  std::string dir_, path_;
};

TEST_F(JobJournalTest, AJobAcceptedAndNeverFinishedComesBackInterrupted) {
  {
    auto journal = JobJournal::Open(path_, 100, nullptr);
    ASSERT_TRUE(journal.ok()) << journal.status().message();
    ASSERT_TRUE((*journal)->Accepted("a1").ok());
    ASSERT_TRUE((*journal)->Accepted("b2").ok());
    JobRecord done{"a1", JobState::kDone, Json{{"status", "incorrect"}}, "", 0};
    ASSERT_TRUE((*journal)->Finished(done).ok());
    // b2 was running when the server died.
  }
  {
    std::ofstream torn(path_, std::ios::app);
    torn << R"({"event": "finished", "job": "c3", "sta)";  // killed mid-write
  }
  std::vector<JobRecord> recovered;
  auto journal = JobJournal::Open(path_, 100, &recovered);
  ASSERT_TRUE(journal.ok()) << journal.status().message();
  ASSERT_EQ(recovered.size(), 2u);
  EXPECT_EQ(recovered[0].id, "a1");
  EXPECT_EQ(recovered[0].state, JobState::kDone);
  EXPECT_EQ(recovered[0].result["status"], "incorrect");
  EXPECT_EQ(recovered[1].id, "b2");
  EXPECT_EQ(recovered[1].state, JobState::kInterrupted);
  EXPECT_NE(recovered[1].error.find("submit it again"), std::string::npos);

  // Journaled as interrupted now: a second restart says the same without guessing again.
  journal->reset();
  std::vector<JobRecord> again;
  ASSERT_TRUE(JobJournal::Open(path_, 100, &again).ok());
  ASSERT_EQ(again.size(), 2u);
  EXPECT_EQ(again[1].state, JobState::kInterrupted);
}

TEST_F(JobJournalTest, ALongJournalIsCutToTheJobsItKeeps) {
  {
    auto journal = JobJournal::Open(path_, 3, nullptr);
    ASSERT_TRUE(journal.ok());
    for (int i = 0; i < 10; ++i) {
      const std::string id = "j" + std::to_string(i);
      ASSERT_TRUE((*journal)->Accepted(id).ok());
      ASSERT_TRUE((*journal)->Finished({id, JobState::kDone, Json{{"n", i}}, "", 0}).ok());
    }
  }
  EXPECT_EQ(Lines(), 20u);
  std::vector<JobRecord> recovered;
  ASSERT_TRUE(JobJournal::Open(path_, 3, &recovered).ok());
  ASSERT_EQ(recovered.size(), 3u);
  EXPECT_EQ(recovered.front().id, "j7");
  EXPECT_EQ(recovered.back().result["n"], 9);
  EXPECT_EQ(Lines(), 3u) << "rewritten with the jobs kept, one line each";
}

TEST_F(JobJournalTest, AJournalThatCannotBeOpenedIsAnError) {
  std::filesystem::create_directories(path_);  // a folder where the file should be
  auto journal = JobJournal::Open(path_, 10, nullptr);
  ASSERT_FALSE(journal.ok());
  EXPECT_NE(journal.status().message().find("journal"), std::string::npos);
}

}  // namespace serve_job_journal_test
}  // namespace kernelpro::serve
