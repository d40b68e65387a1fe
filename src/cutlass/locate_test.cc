// Finding a CUTLASS tree the ways a user gives one: a checkout, the wheel's folders, the include
// folder itself; --cutlass-dir before the variable before scripts/setup's copy.
#include "cutlass/locate.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

namespace kernelpro::cutlass {
namespace cutlass_locate_test {

namespace fs = std::filesystem;

const std::string kFixture = std::string(KERNELPRO_SOURCE_DIR) + "/tests/fixtures/cutlass_tree";

// A temporary folder with the fixture's include/ copied to `include_at` below it.
class TempTree {
 public:
  explicit TempTree(const std::string& include_at) {
    dir_ = fs::temp_directory_path() /
           ("kp_locate_" + std::to_string(::getpid()) + "_" + std::to_string(counter_++));
    fs::remove_all(dir_);
    if (!include_at.empty()) {
      fs::create_directories(dir_ / include_at);
      fs::copy(kFixture + "/include", dir_ / include_at, fs::copy_options::recursive);
    } else {
      fs::create_directories(dir_);
    }
  }
  ~TempTree() { fs::remove_all(dir_); }
  std::string path(const std::string& below = "") const {
    return below.empty() ? dir_.string() : (dir_ / below).string();
  }

 private:
  static inline int counter_ = 0;
  fs::path dir_;
};

TEST(LocateTest, ACheckoutRootGivesItsIncludeFolderAndVersion) {
  Result<CutlassTree> tree = CutlassTreeAt(kFixture, "--cutlass-dir");
  ASSERT_TRUE(tree.ok()) << tree.status().ToString();
  EXPECT_EQ(tree->root, kFixture);
  EXPECT_EQ(tree->include_dir, kFixture + "/include");
  EXPECT_EQ(tree->version, "9.8.7");
  EXPECT_EQ(tree->origin, "--cutlass-dir");
  // A trailing slash or a relative path gives the same root.
  EXPECT_EQ(CutlassTreeAt(kFixture + "/")->root, kFixture);
}

TEST(LocateTest, EveryFolderOfTheWheelLayoutLeadsToItsSourceRoot) {
  TempTree wheel("cutlass_library/source/include");
  const std::string root = wheel.path("cutlass_library/source");
  for (const std::string& given :
       {wheel.path(), wheel.path("cutlass_library"), root, root + "/include"}) {
    Result<CutlassTree> tree = CutlassTreeAt(given);
    ASSERT_TRUE(tree.ok()) << given << ": " << tree.status().ToString();
    EXPECT_EQ(tree->root, root) << given;
    EXPECT_EQ(tree->include_dir, root + "/include") << given;
    EXPECT_EQ(tree->version, "9.8.7") << given;
  }
}

TEST(LocateTest, AFolderWithoutCutlassIsRefusedNamingTheLayouts) {
  TempTree empty("");
  Result<CutlassTree> tree = CutlassTreeAt(empty.path());
  ASSERT_FALSE(tree.ok());
  EXPECT_EQ(tree.status().message(),
            empty.path() +
                ": no include/cutlass/cutlass.h below it (give a CUTLASS checkout's root or the "
                "folder the nvidia-cutlass wheel was installed into, with "
                "cutlass_library/source/include)");
}

TEST(LocateTest, AVersionlessTreeHasAnEmptyVersion) {
  TempTree tree("include");
  fs::remove(tree.path("include/cutlass/version.h"));
  EXPECT_EQ(CutlassTreeAt(tree.path())->version, "");
}

TEST(LocateTest, TheFlagWinsOverTheVariableWhichWinsOverTheSetupCopy) {
  TempTree setup("cutlass_library/source/include");
  TempTree env("include");
  Result<CutlassTree> from_flag = LocateCutlass(kFixture, env.path(), setup.path());
  ASSERT_TRUE(from_flag.ok());
  EXPECT_EQ(from_flag->root, kFixture);
  EXPECT_EQ(from_flag->origin, "--cutlass-dir");
  Result<CutlassTree> from_env = LocateCutlass("", env.path(), setup.path());
  ASSERT_TRUE(from_env.ok());
  EXPECT_EQ(from_env->root, env.path());
  EXPECT_EQ(from_env->origin, "KERNELPRO_CUTLASS_DIR");
  // CLI11 copies the variable into the flag: it is still named as the variable.
  EXPECT_EQ(LocateCutlass(env.path(), env.path(), setup.path())->origin, "KERNELPRO_CUTLASS_DIR");
  Result<CutlassTree> from_setup = LocateCutlass("", "", setup.path());
  ASSERT_TRUE(from_setup.ok());
  EXPECT_EQ(from_setup->root, setup.path("cutlass_library/source"));
  EXPECT_EQ(from_setup->origin, "scripts/setup's copy");
}

TEST(LocateTest, AWrongDirectoryIsAnErrorNotAFallback) {
  TempTree setup("include");
  TempTree empty("");
  Result<CutlassTree> flag = LocateCutlass(empty.path(), "", setup.path());
  ASSERT_FALSE(flag.ok());
  EXPECT_EQ(flag.status().message().rfind("--cutlass-dir " + empty.path() + ": no include/", 0), 0u)
      << flag.status().message();
  Result<CutlassTree> env = LocateCutlass("", empty.path(), setup.path());
  ASSERT_FALSE(env.ok());
  EXPECT_EQ(env.status().message().rfind("KERNELPRO_CUTLASS_DIR=" + empty.path() + ": no", 0), 0u)
      << env.status().message();
}

TEST(LocateTest, NoTreeAnywhereNamesTheThreeWaysToGiveOne) {
  Result<CutlassTree> none = LocateCutlass("", "", "/nonexistent/.tools/cutlass");
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), Status::Code::kNotFound);
  EXPECT_EQ(none.status().message(),
            "no CUTLASS found: give --cutlass-dir DIR, set KERNELPRO_CUTLASS_DIR=DIR, or run "
            "scripts/setup (it installs the nvidia-cutlass wheel into "
            "/nonexistent/.tools/cutlass)");
}

TEST(LocateTest, TheSetupCopyLivesInTheSourceTreesToolsFolder) {
  EXPECT_EQ(SetupCutlassDir(), std::string(KERNELPRO_SOURCE_ROOT) + "/.tools/cutlass");
}

}  // namespace cutlass_locate_test
}  // namespace kernelpro::cutlass
