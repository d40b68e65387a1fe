#include "cutlass/locate.h"

#include <re2/re2.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/json_io.h"

namespace kernelpro::cutlass {
namespace {

namespace fs = std::filesystem;

bool HasCutlassHeaders(const fs::path& include_dir) {
  std::error_code ec;
  return fs::is_regular_file(include_dir / "cutlass" / "cutlass.h", ec);
}

// An absolute path without "." or ".." parts or a trailing separator; symlinks are kept as the
// user wrote them (the prompts and error messages show this path).
std::string Clean(const fs::path& path) {
  std::error_code ec;
  fs::path absolute = fs::absolute(path, ec);
  if (ec) absolute = path;
  std::string text = absolute.lexically_normal().string();
  while (text.size() > 1 && text.back() == '/') text.pop_back();
  return text;
}

}  // namespace

std::string ReadCutlassVersion(const std::string& include_dir) {
  auto text = ReadFileText(include_dir + "/cutlass/version.h");
  if (!text.ok()) return "";
  std::string parts[3];
  const char* names[3] = {"MAJOR", "MINOR", "PATCH"};
  for (int i = 0; i < 3; ++i) {
    const RE2 define(std::string("(?m)^\\s*#\\s*define\\s+CUTLASS_") + names[i] + "\\s+(\\d+)");
    if (!RE2::PartialMatch(*text, define, &parts[i])) return "";
  }
  return parts[0] + "." + parts[1] + "." + parts[2];
}

Result<CutlassTree> CutlassTreeAt(const std::string& dir, const std::string& origin) {
  const fs::path given(Clean(dir));
  // Each layout as the root it implies (a folder with include/ below it).
  std::vector<fs::path> roots = {
      given,                                 // a checkout, or the wheel's cutlass_library/source
      given / "cutlass_library" / "source",  // the folder the wheel was installed into
      given / "source",                      // the wheel's cutlass_library/
  };
  if (given.filename() == "include") roots.push_back(given.parent_path());  // include/ itself
  for (const fs::path& root : roots) {
    if (!HasCutlassHeaders(root / "include")) continue;
    CutlassTree tree;
    tree.root = root.string();
    tree.include_dir = tree.root + "/include";
    tree.version = ReadCutlassVersion(tree.include_dir);
    tree.origin = origin;
    return tree;
  }
  return Status::InvalidArgument(
      dir +
      ": no include/cutlass/cutlass.h below it (give a CUTLASS checkout's root or the folder "
      "the nvidia-cutlass wheel was installed into, with cutlass_library/source/include)");
}

namespace {

// OverrideSetupCutlassDir's folder; unset in production.
std::optional<std::string>& SetupDirOverride() {
  static std::optional<std::string> dir;
  return dir;
}

}  // namespace

std::string SetupCutlassDir() {
  if (const std::optional<std::string>& dir = SetupDirOverride()) return *dir;
  return std::string(KERNELPRO_SOURCE_ROOT) + "/.tools/cutlass";
}

void OverrideSetupCutlassDir(const std::string& dir) { SetupDirOverride() = dir; }

Result<CutlassTree> LocateCutlass(const std::string& flag_dir, const std::string& env_dir,
                                  const std::string& setup_dir) {
  if (!flag_dir.empty()) {
    // CLI11 fills --cutlass-dir from the variable too: name the source the user actually used.
    const bool from_env = flag_dir == env_dir;
    Result<CutlassTree> tree =
        CutlassTreeAt(flag_dir, from_env ? kCutlassDirVariable : "--cutlass-dir");
    if (!tree.ok()) {
      return Status::InvalidArgument(
          (from_env ? std::string(kCutlassDirVariable) + "=" : std::string("--cutlass-dir ")) +
          tree.status().message());
    }
    return tree;
  }
  if (!env_dir.empty()) {
    Result<CutlassTree> tree = CutlassTreeAt(env_dir, kCutlassDirVariable);
    if (!tree.ok()) {
      return Status::InvalidArgument(std::string(kCutlassDirVariable) + "=" +
                                     tree.status().message());
    }
    return tree;
  }
  if (!setup_dir.empty()) {
    Result<CutlassTree> tree = CutlassTreeAt(setup_dir, "scripts/setup's copy");
    if (tree.ok()) return tree;
  }
  return Status::NotFound(
      "no CUTLASS found: give --cutlass-dir DIR, set " + std::string(kCutlassDirVariable) +
      "=DIR, or run scripts/setup (it installs the nvidia-cutlass wheel into " + setup_dir + ")");
}

Result<CutlassTree> LocateCutlass(const std::string& flag_dir) {
  const char* env = std::getenv(kCutlassDirVariable);
  return LocateCutlass(flag_dir, env == nullptr ? "" : env, SetupCutlassDir());
}

}  // namespace kernelpro::cutlass
