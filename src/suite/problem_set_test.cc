#include "suite/problem_set.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace kernelpro::suite {
namespace suite_problem_set_test {
namespace fs = std::filesystem;

class ProblemSetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("kp_problem_set_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
             "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  void Touch(const std::string& relative) {
    fs::create_directories((root_ / relative).parent_path());
    std::ofstream(root_ / relative) << "# test\n";
  }
  std::string Path(const std::string& relative) const { return (root_ / relative).string(); }
  std::vector<std::string> Keys(const std::vector<SuiteProblem>& problems) {
    std::vector<std::string> keys;
    for (const auto& p : problems) keys.push_back(p.key);
    return keys;
  }
  fs::path root_;
};

TEST_F(ProblemSetTest, LevelFoldersGiveLevelsAndKernelBenchTaskNumbers) {
  Touch("problems/level2/3_Fused.py");
  Touch("problems/level1/10_Softmax.py");
  Touch("problems/level1/2_ReLU.py");
  Touch("problems/level1/__init__.py");
  Touch("problems/level1/notes.txt");
  Touch("problems/L3/1_Mlp.py");
  auto problems = DiscoverProblems(Path("problems"));
  ASSERT_TRUE(problems.ok()) << problems.status().message();
  // By level, then task number (2 before 10, not as text).
  EXPECT_EQ(Keys(*problems), (std::vector<std::string>{"level1/2_ReLU", "level1/10_Softmax",
                                                       "level2/3_Fused", "L3/1_Mlp"}));
  EXPECT_EQ((*problems)[1].level, 1);
  EXPECT_EQ((*problems)[1].task, 10);
  EXPECT_EQ((*problems)[3].level, 3);
  EXPECT_EQ((*problems)[1].name, "10_Softmax");
  EXPECT_TRUE(fs::path((*problems)[0].path).is_absolute());
}

TEST_F(ProblemSetTest, CudaProgramsAreProblemsToo) {
  Touch("programs/row_softmax/problem.cu");
  Touch("programs/row_softmax/reference.py");
  Touch("programs/layer_norm/problem.py");
  Touch("programs/scan.cu");
  auto problems = DiscoverProblems(Path("programs"));
  ASSERT_TRUE(problems.ok()) << problems.status().message();
  EXPECT_EQ(Keys(*problems), (std::vector<std::string>{"layer_norm", "row_softmax", "scan"}));
  EXPECT_EQ(fs::path((*problems)[1].path).filename(), "problem.cu");
}

TEST_F(ProblemSetTest, FlatFoldersAndFolderPerProblem) {
  Touch("flat/swish.py");
  Touch("flat/rms_norm/problem.py");
  Touch("flat/rms_norm/candidates/cpu.py");
  auto problems = DiscoverProblems(Path("flat"));
  ASSERT_TRUE(problems.ok()) << problems.status().message();
  EXPECT_EQ(Keys(*problems), (std::vector<std::string>{"rms_norm", "swish"}));
  EXPECT_EQ((*problems)[0].level, 0);
  EXPECT_FALSE((*problems)[0].task.has_value());
  EXPECT_EQ(fs::path((*problems)[0].path).filename(), "problem.py");
}

TEST_F(ProblemSetTest, FiltersByPatternAndLevel) {
  Touch("p/level1/1_A.py");
  Touch("p/level1/2_B.py");
  Touch("p/level2/1_C.py");
  auto by_level = DiscoverProblems(Path("p"), {"", {2}});
  ASSERT_TRUE(by_level.ok());
  EXPECT_EQ(Keys(*by_level), (std::vector<std::string>{"level2/1_C"}));
  auto by_pattern = DiscoverProblems(Path("p"), {"^level1/(1|2)_", {}});
  ASSERT_TRUE(by_pattern.ok());
  EXPECT_EQ(by_pattern->size(), 2u);
}

TEST_F(ProblemSetTest, ClearErrorsForWhatCannotBeASuite) {
  auto missing = DiscoverProblems(Path("nothing"));
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("not a folder"), std::string::npos);
  fs::create_directories(root_ / "empty");
  auto empty = DiscoverProblems(Path("empty"));
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.status().message().find("no problem files"), std::string::npos);
  Touch("one/1_A.py");
  auto bad = DiscoverProblems(Path("one"), {"(unclosed", {}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("not a regular expression"), std::string::npos);
  auto none = DiscoverProblems(Path("one"), {"zzz", {}});
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("matches the filter (1 problems there)"),
            std::string::npos);
}

TEST_F(ProblemSetTest, CandidatesByStemFolderLevelAndKernelBenchGenerations) {
  Touch("problems/level1/19_ReLU.py");
  Touch("problems/level1/20_Gelu.py");
  Touch("problems/level2/19_Other.py");
  Touch("cands/19_ReLU.py");
  Touch("cands/20_Gelu/b.py");
  Touch("cands/20_Gelu/a.py");
  Touch("cands/20_Gelu/_helper.py");
  Touch("kb/level_1_problem_19_sample_1_kernel.py");
  Touch("kb/level_1_problem_19_sample_0_kernel.py");
  Touch("kb/level_2_problem_19_sample_0_kernel.py");
  Touch("mirrored/level2/19_Other.py");
  auto problems = DiscoverProblems(Path("problems"));
  ASSERT_TRUE(problems.ok());
  const SuiteProblem& relu = (*problems)[0];
  const SuiteProblem& gelu = (*problems)[1];
  const SuiteProblem& other = (*problems)[2];
  auto names = [](const std::vector<std::string>& files) {
    std::vector<std::string> out;
    for (const auto& f : files) out.push_back(fs::path(f).filename().string());
    return out;
  };
  EXPECT_EQ(names(FindCandidates(Path("cands"), relu)), (std::vector<std::string>{"19_ReLU.py"}));
  EXPECT_EQ(names(FindCandidates(Path("cands"), gelu)), (std::vector<std::string>{"a.py", "b.py"}));
  EXPECT_TRUE(FindCandidates(Path("cands"), other).empty());
  // KernelBench's generations: the level and task number decide, samples in order.
  EXPECT_EQ(names(FindCandidates(Path("kb"), relu)),
            (std::vector<std::string>{"level_1_problem_19_sample_0_kernel.py",
                                      "level_1_problem_19_sample_1_kernel.py"}));
  EXPECT_EQ(names(FindCandidates(Path("kb"), other)),
            (std::vector<std::string>{"level_2_problem_19_sample_0_kernel.py"}));
  EXPECT_EQ(names(FindCandidates(Path("mirrored"), other)),
            (std::vector<std::string>{"19_Other.py"}));
}

TEST(LevelOfFolderTest, SpellingsPeopleUse) {
  EXPECT_EQ(LevelOfFolder("level1"), 1);
  EXPECT_EQ(LevelOfFolder("level_2"), 2);
  EXPECT_EQ(LevelOfFolder("Level-3"), 3);
  EXPECT_EQ(LevelOfFolder("L4"), 4);
  EXPECT_FALSE(LevelOfFolder("levels").has_value());
  EXPECT_FALSE(LevelOfFolder("swish").has_value());
}

}  // namespace suite_problem_set_test
}  // namespace kernelpro::suite
