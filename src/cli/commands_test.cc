// Usage errors as a user meets them: every bad invocation of every subcommand exits 2 with one
// line on stderr that names the command, and --help still exits 0.
#include "cli/commands.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "cli/cli_testing.h"

namespace kernelpro::cli {
namespace cli_commands_test {

using testing::CliRun;
using testing::RunKernelpro;

const std::string kProblem = std::string(KERNELPRO_SOURCE_DIR) + "/tests/problems/tiny_swish.py";

struct BadInvocation {
  std::vector<std::string> args;
  std::string err;  // the whole of stderr
};

// "eval, profile, ..., report": every registered command, in order.
std::string CommandList() {
  std::string list;
  for (const Subcommand& s : Subcommands())
    list += (list.empty() ? "" : ", ") + std::string(s.name);
  return list;
}

TEST(UsageErrorTest, EveryBadInvocationExitsTwoWithOneLine) {
  const std::vector<BadInvocation> table = {
      {{},
       "kernelpro: a command is required: one of " + CommandList() +
           " (kernelpro --help lists the options)\n"},
      {{"evl"},
       "kernelpro: unknown command 'evl': one of " + CommandList() +
           " (kernelpro --help lists the options)\n"},
      {{"--bogus"},
       "kernelpro: unknown option '--bogus' before a command; give a command first: one of " +
           CommandList() + " (kernelpro --help lists the options)\n"},
      {{"eval", "--problem", kProblem},
       "kernelpro eval: --candidate is required (kernelpro eval --help lists the options)\n"},
      {{"eval", "--problem", kProblem, "--candidate", "typo.py"},
       "kernelpro eval: --candidate: typo.py: no such file\n"},
      {{"eval", "--problem", "missing.py", "--candidate", kProblem},
       "kernelpro eval: --problem: missing.py: no such file\n"},
      {{"eval", "--problem", kProblem, "--candidate", kProblem, "--trials", "x"},
       "kernelpro eval: --trials: 'x' is not accepted: give a whole number from 1 to 1000\n"},
      {{"profile", "--bogus"},
       "kernelpro profile: The following argument was not expected: "
       "--bogus (kernelpro profile --help lists the options)\n"},
      {{"llm", "ping", "--bogus"},
       "kernelpro llm ping: The following argument was not expected: "
       "--bogus (kernelpro llm ping --help lists the options)\n"},
      {{"optimize", "--search", "beam"},
       "kernelpro optimize: --search: beam not in {mcts,greedy}\n"},
      {{"optimize", "--llm-config", "nowhere.toml"},
       "kernelpro optimize: --llm-config: nowhere.toml: no such file\n"},
      {{"resume"},
       "kernelpro resume: run_dir is required (kernelpro resume --help lists the "
       "options)\n"},
      {{"prompt", "--problem", "missing.py"},
       "kernelpro prompt: --problem: missing.py: no such file\n"},
      {{"advise", "--candidate", "typo.py"},
       "kernelpro advise: --candidate: typo.py: no such file\n"},
  };
  for (const BadInvocation& bad : table) {
    CliRun r = RunKernelpro(bad.args, 1, {}, {"KERNELPRO_LLM", "KERNELPRO_LLM_CONFIG"});
    std::string command;
    for (const std::string& a : bad.args) command += " " + a;
    EXPECT_EQ(r.exit_code, 2) << command;
    EXPECT_EQ(r.err, bad.err) << command;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << command;
    EXPECT_EQ(r.out, "") << command;
  }
}

TEST(UsageErrorTest, HelpAndVersionExitZero) {
  const std::vector<std::vector<std::string>> invocations = {
      {"--help"}, {"eval", "--help"}, {"resume", "--help"}, {"--version"}};
  for (const std::vector<std::string>& args : invocations) {
    CliRun r = RunKernelpro(args, 1);
    EXPECT_EQ(r.exit_code, 0) << args.front();
    EXPECT_FALSE(r.out.empty()) << args.front();
  }
}

}  // namespace cli_commands_test
}  // namespace kernelpro::cli
