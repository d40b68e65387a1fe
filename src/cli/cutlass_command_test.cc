// `kernelpro cutlass search|read|ls|version` as a user runs them: over the fixture tree
// (tests/fixtures/cutlass_tree) and, where it is installed, the real CUTLASS tree.
#include <gtest/gtest.h>

#include <algorithm>

#include "cli/cli_testing.h"
#include "cutlass/locate.h"

namespace kernelpro::cli {
namespace cli_cutlass_command_test {

using testing::CliRun;
using testing::RunKernelpro;
using testing::RunKernelproWithHooks;

const std::string kFixture = std::string(KERNELPRO_SOURCE_DIR) + "/tests/fixtures/cutlass_tree";

// The fixture through --cutlass-dir, with no variable inherited from the test's environment.
CliRun Cutlass(std::vector<std::string> args) {
  args.insert(args.begin(), "cutlass");
  args.push_back("--cutlass-dir");
  args.push_back(kFixture);
  return RunKernelpro(args, 1, {}, {"KERNELPRO_CUTLASS_DIR"});
}

TEST(CutlassCommandTest, SearchPrintsGrepStyleLinesWithContext) {
  CliRun r = Cutlass({"search", "SM90_64x256", "-C", "1"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "1 matching line in 1 file for /SM90_64x256/ (7 files searched):\n"
            "cute/atom/mma_atom.hpp-11-\n"
            "cute/atom/mma_atom.hpp:12:struct SM90_64x256x16_F32BF16BF16_SS {\n"
            "cute/atom/mma_atom.hpp-13-  static constexpr int M = 64;\n");
  EXPECT_EQ(r.err, "");
}

TEST(CutlassCommandTest, SearchJsonIsAListOfFileLineText) {
  CliRun r = Cutlass({"search", "CUTLASS_M", "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.json, Json::parse(R"([
      {"file": "cutlass/version.h", "line": 4, "text": "#define CUTLASS_MAJOR 9"},
      {"file": "cutlass/version.h", "line": 5, "text": "#define CUTLASS_MINOR 8"}])"))
      << r.out;
  CliRun limited =
      Cutlass({"search", "namespace", "--json", "--max-results", "1", "--path", "cute/"});
  EXPECT_EQ(limited.exit_code, 0);
  EXPECT_EQ(limited.json.size(), 1u);
  EXPECT_EQ(limited.err,
            "kernelpro cutlass search: 1 of 8 matching lines printed (raise --max-results)\n");
}

TEST(CutlassCommandTest, NoMatchExitsOneAsGrep) {
  CliRun r = Cutlass({"search", "no_such_symbol", "--json"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.json, Json::array());
}

TEST(CutlassCommandTest, ReadPrintsNumberedLines) {
  CliRun r = Cutlass({"read", "cutlass/version.h", "--lines", "4:5"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "cutlass/version.h lines 4-5 of 6:\n"
            "4  #define CUTLASS_MAJOR 9\n"
            "5  #define CUTLASS_MINOR 8\n");
}

TEST(CutlassCommandTest, LsAndVersionDescribeTheTree) {
  CliRun ls = Cutlass({"ls", "cute/atom"});
  EXPECT_EQ(ls.exit_code, 0) << ls.err;
  EXPECT_NE(ls.out.find("cute/atom/ (2 entries):\n  copy_atom.hpp  12 lines"), std::string::npos)
      << ls.out;
  CliRun version = Cutlass({"version"});
  EXPECT_EQ(version.exit_code, 0) << version.err;
  EXPECT_EQ(version.out, "CUTLASS 9.8.7 at " + kFixture +
                             " (from --cutlass-dir)\ninclude folder: " + kFixture + "/include\n");
  CliRun from_env =
      RunKernelpro({"cutlass", "version", "--json"}, 1, {{"KERNELPRO_CUTLASS_DIR", kFixture}});
  EXPECT_EQ(from_env.exit_code, 0) << from_env.err;
  EXPECT_EQ(from_env.json["version"], "9.8.7");
  EXPECT_EQ(from_env.json["origin"], "KERNELPRO_CUTLASS_DIR");
}

TEST(CutlassCommandTest, UsageErrorsAreOneLineAndExitTwo) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> table = {
      {{"search", "("},
       "kernelpro cutlass search: bad regex '(': missing ): ( (RE2 syntax: no backreferences or "
       "lookaround)\n"},
      {{"read", "../README.md"},
       "kernelpro cutlass read: file '../README.md' leaves the CUTLASS include folder ('..' is "
       "not allowed)\n"},
      {{"read", "cute/tensor.hpp", "--lines", "x:3"},
       "kernelpro cutlass read: --lines 'x:3': give A:B (1-based, inclusive), e.g. 100:180\n"},
      {{"read", "cute/none.hpp"},
       "kernelpro cutlass read: no file cute/none.hpp in the CUTLASS tree (paths are relative to "
       "its include folder; `kernelpro cutlass ls cute` shows what is there)\n"},
      {{"ls", "cute/none"},
       "kernelpro cutlass ls: no directory cute/none in the CUTLASS tree (the top holds cute/ and "
       "cutlass/)\n"},
  };
  for (const auto& [args, err] : table) {
    CliRun r = Cutlass(args);
    EXPECT_EQ(r.exit_code, 2) << args[0];
    EXPECT_EQ(r.err, err);
    EXPECT_EQ(r.out, "");
  }
  CliRun wrong = RunKernelpro({"cutlass", "version", "--cutlass-dir", "/nonexistent"}, 1, {},
                              {"KERNELPRO_CUTLASS_DIR"});
  EXPECT_EQ(wrong.exit_code, 2);
  EXPECT_EQ(
      wrong.err.rfind("kernelpro cutlass version: --cutlass-dir /nonexistent: no include/", 0), 0u)
      << wrong.err;
  EXPECT_EQ(std::count(wrong.err.begin(), wrong.err.end(), '\n'), 1);
  CliRun no_sub = RunKernelpro({"cutlass"}, 1);
  EXPECT_EQ(no_sub.exit_code, 2);
  EXPECT_EQ(std::count(no_sub.err.begin(), no_sub.err.end(), '\n'), 1) << no_sub.err;
}

TEST(CutlassCommandTest, WithoutAnyTreeTheErrorNamesTheThreeWays) {
  // As if scripts/setup had not run (its copy is looked for in a folder that does not exist).
  CliRun r =
      RunKernelproWithHooks({"cutlass", "search", "x"}, 1,
                            {{"KERNELPRO_TEST_SETUP_CUTLASS_DIR", "/nonexistent/kp-no-cutlass"}},
                            {"KERNELPRO_CUTLASS_DIR"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("kernelpro cutlass search: no CUTLASS found: give --cutlass-dir DIR, set "
                        "KERNELPRO_CUTLASS_DIR=DIR, or run scripts/setup",
                        0),
            0u)
      << r.err;
}

TEST(CutlassCommandTest, TheInstalledTreeIsSearchedByDefault) {
  Result<cutlass::CutlassTree> tree = cutlass::LocateCutlass("");
  if (!tree.ok()) GTEST_SKIP() << "no CUTLASS installed (scripts/setup installs it)";
  CliRun version = RunKernelpro({"cutlass", "version", "--json"});
  EXPECT_EQ(version.exit_code, 0) << version.err;
  EXPECT_EQ(version.json["version"].get<std::string>().substr(0, 2), "4.") << version.out;
  CliRun search = RunKernelpro({"cutlass", "search", "struct MMA_64x128x16_F32BF16BF16_SS\\b",
                                "--path", "cute/arch/", "--json"});
  EXPECT_EQ(search.exit_code, 0) << search.err;
  ASSERT_FALSE(search.json.empty()) << search.out;
  EXPECT_EQ(search.json[0]["file"].get<std::string>().rfind("cute/arch/", 0), 0u);
}

}  // namespace cli_cutlass_command_test
}  // namespace kernelpro::cli
