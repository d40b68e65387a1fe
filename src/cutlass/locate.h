// Finding the CUTLASS tree kernelpro searches, probes and builds against, and reading its version.
//
// The tree comes from one of three places, in this order: --cutlass-dir, the environment variable
// KERNELPRO_CUTLASS_DIR (the same variable for every command; CLI11 also fills --cutlass-dir from
// it), or the copy scripts/setup installs into <source tree>/.tools/cutlass (PyPI's
// nvidia-cutlass wheel, which ships the whole C++ tree). Two layouts are accepted wherever a
// directory is given:
//   - a CUTLASS checkout's root: include/cutlass/cutlass.h below it;
//   - the wheel: the folder it was installed into (pip --target, site-packages), its
//     cutlass_library/ or cutlass_library/source/ (which is laid out like a checkout's root);
// and, for convenience, an include/ folder itself (cute/ and cutlass/ in it).
// Nothing here keeps state but the test seam OverrideSetupCutlassDir; every function is safe to
// call from any thread once it is set.
#pragma once

#include <string>

#include "core/status.h"

namespace kernelpro::cutlass {

// The one environment variable that names a CUTLASS tree, for every command.
inline constexpr char kCutlassDirVariable[] = "KERNELPRO_CUTLASS_DIR";

struct CutlassTree {
  std::string root;         // like a checkout's root: include/ (and tools/util/include/) below it
  std::string include_dir;  // root + "/include": the folder holding cute/ and cutlass/
  std::string version;      // "4.2.0" from cutlass/version.h; "" when it has none
  std::string origin;       // how it was found: "--cutlass-dir", "KERNELPRO_CUTLASS_DIR" or
                            // "scripts/setup's copy"
};

// The tree at `dir`, in any accepted layout; InvalidArgument naming the layouts when `dir` holds
// none of them. `origin` is copied into the result.
Result<CutlassTree> CutlassTreeAt(const std::string& dir, const std::string& origin = "");

// Where scripts/setup installs the wheel: <source tree>/.tools/cutlass, unless a test moved it.
std::string SetupCutlassDir();

// Test seam: SetupCutlassDir() answers `dir` from now on, so the tests of "no tree anywhere" run
// on a machine where scripts/setup ran. Only the tests' binary calls it (cli/cli_main.h), first
// thing in main, before any thread starts.
void OverrideSetupCutlassDir(const std::string& dir);

// The tree from `flag_dir` (--cutlass-dir), else `env_dir` (the variable's value), else
// `setup_dir`; a directory given but wrong is an error (never silently skipped for the next
// source). NotFound, naming the three ways to give one, when none is given and `setup_dir` holds
// no tree.
Result<CutlassTree> LocateCutlass(const std::string& flag_dir, const std::string& env_dir,
                                  const std::string& setup_dir);
// The same with the process's KERNELPRO_CUTLASS_DIR and SetupCutlassDir().
Result<CutlassTree> LocateCutlass(const std::string& flag_dir);

// "4.2.0" from the CUTLASS_MAJOR/MINOR/PATCH defines of `include_dir`/cutlass/version.h; "" when
// the file is missing or has no such defines.
std::string ReadCutlassVersion(const std::string& include_dir);

}  // namespace kernelpro::cutlass
