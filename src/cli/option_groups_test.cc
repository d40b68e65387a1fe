// Every option of every subcommand is declared once (as llama.cpp's test-arg-parser checks its
// argument table): a flag has one help text and one environment variable in every command that
// takes it, and a variable is read by one flag. The app is built from the same table main() uses.
#include "cli/option_groups.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "cli/cli_testing.h"
#include "cli/commands.h"

namespace kernelpro::cli {
namespace cli_option_groups_test {

using kernelpro::testing::CliRun;
using kernelpro::testing::RunKernelpro;

const std::string kRoot = KERNELPRO_SOURCE_DIR;

std::string Lines(const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& line : lines) text += line + "\n";
  return text;
}

bool Contains(const std::vector<std::string>& lines, const std::string& line) {
  return std::find(lines.begin(), lines.end(), line) != lines.end();
}

CLI::App* Subcommand(CLI::App& app, const std::string& path) {
  CLI::App* at = &app;
  std::size_t start = 0;
  while (start < path.size()) {
    std::size_t space = path.find(' ', start);
    if (space == std::string::npos) space = path.size();
    at = at->get_subcommand(path.substr(start, space - start));
    start = space + 1;
  }
  return at;
}

TEST(OptionTableTest, NoFlagOrVariableIsDeclaredTwiceWithDifferentMeanings) {
  CLI::App app;
  RegisterSubcommands(app);
  EXPECT_EQ(Lines(FindOptionConflicts(app)), "");
}

TEST(OptionTableTest, EveryEntryRegistersTheSubcommandItNames) {
  CLI::App app;
  const auto registered = RegisterSubcommands(app);
  ASSERT_EQ(registered.size(), Subcommands().size());
  for (std::size_t i = 0; i < registered.size(); ++i) {
    const std::string name = Subcommands()[i].name;
    ASSERT_NE(registered[i].first, nullptr) << name;
    EXPECT_EQ(registered[i].first->get_name(), name);
    EXPECT_TRUE(registered[i].second) << name;
  }
  // Nothing registers a subcommand the table does not name (main would never run it).
  EXPECT_EQ(app.get_subcommands([](CLI::App*) { return true; }).size(), Subcommands().size());
}

// The groups every command shares read the same variables everywhere.
TEST(OptionTableTest, SharedOptionsReadOneVariableInEveryCommand) {
  CLI::App app;
  RegisterSubcommands(app);
  for (const char* command :
       {"optimize", "prompt", "cutlass", "cutlass search", "cutlass read", "cutlass ls",
        "cutlass version", "eval", "suite eval", "suite run", "suite resume"}) {
    EXPECT_EQ(Subcommand(app, command)->get_option("--cutlass-dir")->get_envname(),
              "KERNELPRO_CUTLASS_DIR")
        << command;
  }
  for (const char* command : {"eval", "profile", "advise", "analyze", "optimize"}) {
    EXPECT_EQ(Subcommand(app, command)->get_option("--python")->get_envname(), "KERNELPRO_PYTHON")
        << command;
    EXPECT_EQ(Subcommand(app, command)->get_option("--cache-dir")->get_envname(),
              "KERNELPRO_CACHE_DIR")
        << command;
  }
  for (const char* command : {"llm ping", "optimize", "resume"}) {
    EXPECT_EQ(Subcommand(app, command)->get_option("--llm")->get_envname(), "KERNELPRO_LLM")
        << command;
  }
  for (const char* command : {"advise", "tools list", "optimize"}) {
    EXPECT_NE(Subcommand(app, command)->get_option("--tool-rules"), nullptr) << command;
  }
}

// The shape options belong to the executor group: every command that evaluates takes them, with
// one help text, and --shapes refuses modes it does not know.
TEST(OptionTableTest, TheShapeOptionsAreExecutorOptionsOfEveryEvaluatingCommand) {
  CLI::App app;
  RegisterSubcommands(app);
  const std::string help = Subcommand(app, "eval")->get_option("--shapes")->get_description();
  for (const char* command : {"eval", "optimize", "suite eval"}) {
    for (const char* flag : {"--shapes", "--require-shape-generality"}) {
      const CLI::Option* option = Subcommand(app, command)->get_option_no_throw(flag);
      ASSERT_NE(option, nullptr) << command << " " << flag;
      EXPECT_EQ(option->get_group(), Subcommand(app, "eval")->get_option(flag)->get_group());
    }
    EXPECT_EQ(Subcommand(app, command)->get_option("--shapes")->get_description(), help);
  }
  CliRun run =
      RunKernelpro({"eval", "--problem", kRoot + "/tests/problems/tiny_swish.py", "--candidate",
                    kRoot + "/tests/candidates/good/cpu_tiny_swish.py", "--shapes", "sometimes"});
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_NE(run.err.find("--shapes"), std::string::npos) << run.err;
}

// A check that cannot fail proves nothing: each kind of conflict, planted in the real app at two
// depths, is found and named.
TEST(OptionTableTest, EveryKindOfPlantedConflictIsFound) {
  CLI::App app;
  RegisterSubcommands(app);
  const std::string cache_help =
      Subcommand(app, "eval")->get_option("--cache-dir")->get_description();
  std::string python, cache, interpreter;
  CLI::App* extra = app.add_subcommand("extra");
  extra->add_option("--python", python, "Some other interpreter")->envname("KERNELPRO_PYTHON");
  CLI::App* deep = extra->add_subcommand("deep");
  deep->add_option("--cache-dir", cache, cache_help)->envname("XDG_CACHE_HOME");
  deep->add_option("--interpreter", interpreter, "An interpreter")->envname("KERNELPRO_PYTHON");
  const std::vector<std::string> conflicts = FindOptionConflicts(app);
  EXPECT_EQ(conflicts.size(), 3u) << Lines(conflicts);
  EXPECT_TRUE(Contains(conflicts,
                       "--python: help \"Interpreter with torch\" in eval but \"Some "
                       "other interpreter\" in extra"))
      << Lines(conflicts);
  EXPECT_TRUE(Contains(conflicts,
                       "--cache-dir: environment variable 'KERNELPRO_CACHE_DIR' in eval "
                       "but 'XDG_CACHE_HOME' in extra deep"))
      << Lines(conflicts);
  EXPECT_TRUE(Contains(conflicts,
                       "KERNELPRO_PYTHON: read by --python in eval and by --interpreter in extra "
                       "deep"))
      << Lines(conflicts);
}

TEST(OptionTableTest, TheSameOptionInTwoCommandsIsNoConflict) {
  CLI::App app;
  std::string a, b;
  AddOption(*app.add_subcommand("one"), kProblemOption, a);
  AddOption(*app.add_subcommand("two"), kProblemOption, b);
  EXPECT_EQ(Lines(FindOptionConflicts(app)), "");
  // A short name counts as a flag of its own.
  int jobs = 0, threads = 0;
  app.get_subcommand("one")->add_option("--jobs,-j", jobs, "Parallel builds");
  app.get_subcommand("two")->add_option("--threads,-j", threads, "Threads");
  EXPECT_EQ(FindOptionConflicts(app).size(), 1u) << Lines(FindOptionConflicts(app));
}

// The CUTLASS directory is KERNELPRO_CUTLASS_DIR in every command; a wrong one is refused before
// anything runs.
TEST(OptionTableTest, TheCutlassVariableIsCheckedInEveryCommand) {
  const std::map<std::string, std::string> env = {{"KERNELPRO_CUTLASS_DIR", kRoot}};
  CliRun prompt = RunKernelpro(
      {"prompt", "--mode", "initial", "--problem", kRoot + "/problems/swish/problem.py"}, 1, env);
  EXPECT_EQ(prompt.exit_code, 2) << prompt.err;
  EXPECT_NE(prompt.err.find("--cutlass-dir " + kRoot + ": no include/cutlass/cutlass.h"),
            std::string::npos)
      << prompt.err;
  CliRun optimize = RunKernelpro(
      {"optimize", "--device", "cpu", "--problem", kRoot + "/problems/swish/problem.py", "--llm",
       "replay:x.jsonl", "--run-dir", "/nonexistent/never"},
      1, env);
  EXPECT_EQ(optimize.exit_code, 2) << optimize.err;
  EXPECT_NE(optimize.err.find("kernelpro optimize: --cutlass-dir " + kRoot +
                              ": no include/cutlass/cutlass.h"),
            std::string::npos)
      << optimize.err;
}

// eval needs no CUTLASS tree (most candidates use none), but one given and wrong is refused in one
// line before anything runs.
TEST(OptionTableTest, AWrongCutlassDirForEvalIsAUsageError) {
  const std::string swish = kRoot + "/problems/swish/problem.py";
  CliRun eval = RunKernelpro({"eval", "--device", "cpu", "--problem", swish, "--candidate", swish,
                              "--cutlass-dir", kRoot, "--cache-dir", "/nonexistent/never"});
  EXPECT_EQ(eval.exit_code, 2) << eval.err;
  EXPECT_EQ(eval.err, "kernelpro eval: --cutlass-dir " + kRoot +
                          ": no include/cutlass/cutlass.h below it (give a CUTLASS checkout's "
                          "root or the folder the nvidia-cutlass wheel was installed into, with "
                          "cutlass_library/source/include)\n");
  CliRun suite =
      RunKernelpro({"suite", "eval", "--device", "cpu", "--problems", kRoot + "/problems",
                    "--candidates", kRoot, "--dir", "/nonexistent/never"},
                   1, {{"KERNELPRO_CUTLASS_DIR", kRoot}});
  EXPECT_EQ(suite.exit_code, 2) << suite.err;
  EXPECT_NE(suite.err.find("KERNELPRO_CUTLASS_DIR=" + kRoot + ": no include/cutlass/cutlass.h"),
            std::string::npos)
      << suite.err;
}

}  // namespace cli_option_groups_test
}  // namespace kernelpro::cli
