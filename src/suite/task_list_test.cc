// Task lists for `suite ... --tasks`: the paper's 42-task subset as shipped, a user's file, and
// what a checkout lacking some of them is told.
#include "suite/task_list.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace kernelpro::suite {
namespace suite_task_list_test {

namespace fs = std::filesystem;

TEST(TaskListTest, ThePapersSubsetIsFortyTwoTasksOverThreeLevels) {
  auto tasks = ReadTaskList("paper-42");
  ASSERT_TRUE(tasks.ok()) << tasks.status().message();
  ASSERT_EQ(tasks->size(), 42u);
  int per_level[4] = {0, 0, 0, 0};
  for (const TaskId& t : *tasks) ++per_level[t.level];
  EXPECT_EQ(per_level[1], 19);
  EXPECT_EQ(per_level[2], 16);
  EXPECT_EQ(per_level[3], 7);
  EXPECT_EQ(tasks->front(), (TaskId{1, 1}));
  EXPECT_EQ((*tasks)[18], (TaskId{1, 97}));
  EXPECT_EQ(tasks->back(), (TaskId{3, 50}));
}

TEST(TaskListTest, AFileOfOneLevelALineAndItsMistakes) {
  const fs::path dir = fs::temp_directory_path() / ("kp_tasks_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "mine.txt") << "# mine\nlevel2: 3 9  # two\n\nL3: 28\n";
  auto tasks = ReadTaskList((dir / "mine.txt").string());
  ASSERT_TRUE(tasks.ok()) << tasks.status().message();
  EXPECT_EQ(*tasks, (std::vector<TaskId>{{2, 3}, {2, 9}, {3, 28}}));
  std::ofstream(dir / "bad.txt") << "level1: 1 two\n";
  auto bad = ReadTaskList((dir / "bad.txt").string());
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("bad.txt:1: 'two' is not a task number"), std::string::npos)
      << bad.status().message();
  std::ofstream(dir / "nolevel.txt") << "1 2 3\n";
  EXPECT_NE(ReadTaskList((dir / "nolevel.txt").string())
                .status()
                .message()
                .find("expected 'levelN: task task ...'"),
            std::string::npos);
  EXPECT_EQ(ReadTaskList("paper-43").status().code(), Status::Code::kNotFound);
  fs::remove_all(dir);
}

TEST(TaskListTest, SelectingKeepsTheListsOrderAndNamesWhatIsMissing) {
  std::vector<SuiteProblem> problems = {{"level1/1_Square", "1_Square", 1, 1, "/p/1.py"},
                                        {"level1/6_Matmul", "6_Matmul", 1, 6, "/p/6.py"},
                                        {"level2/3_Conv", "3_Conv", 2, 3, "/p/3.py"}};
  auto kept = SelectTasks(problems, {{2, 3}, {1, 1}}, "mine");
  ASSERT_TRUE(kept.ok()) << kept.status().message();
  ASSERT_EQ(kept->size(), 2u);
  EXPECT_EQ((*kept)[0].key, "level2/3_Conv");
  EXPECT_EQ((*kept)[1].key, "level1/1_Square");
  auto holes = SelectTasks(problems, {{1, 1}, {1, 7}, {3, 50}}, "mine");
  ASSERT_FALSE(holes.ok());
  EXPECT_NE(holes.status().message().find("--tasks mine: the problems lack 2 of its 3 tasks "
                                          "(level1 task 7, level3 task 50)"),
            std::string::npos)
      << holes.status().message();
}

}  // namespace suite_task_list_test
}  // namespace kernelpro::suite
