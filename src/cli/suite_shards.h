// How `kernelpro suite` (suite_command.cc) runs a suite's tasks: here, all of them or one shard,
// on this machine's GPUs (or CPU cores), or submitted as a Slurm job array whose tasks each run
// one shard with `suite run`; and the options of the machine they run on, which are not part of
// the suite (another host may differ). The subcommands that start work (eval, optimize, run,
// resume) share it; what they print on stderr starts with kCommand.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "eval/executor.h"
#include "suite/suite_dir.h"

namespace kernelpro::cli::suite_shards {

inline constexpr char kCommand[] = "kernelpro suite";
inline constexpr char kShardsHelp[] =
    "How many shards the tasks are split into (task i in shard i mod N); with --slurm, one array "
    "task each (default: one per task, at most 64)";

// Prints "kernelpro suite: MESSAGE" on stderr and returns `code`, the exit status.
int Fail(const std::string& message, int code = 2);

// A time span as the progress lines show it: "42s", "3m07s", "2h05m".
std::string Duration(double seconds);

// The options of the machine a shard runs on (not part of the suite: another host may differ).
struct MachineArgs {
  std::vector<std::string> gpus;
  std::string python;
  int parallel = 1;
  bool quiet = false;
  // Only its machine fields are read when tasks run (cache, work dir, sandbox, jobs); `suite eval`
  // also parses the suite's own executor options into it.
  eval::EvalOptions executor;
  // --cutlass-dir: the CUTLASS tree CUTLASS/CuTe candidates build against on this machine (a
  // machine's path, so not in the suite's manifest); else KERNELPRO_CUTLASS_DIR or the setup copy.
  std::string cutlass_dir;
  std::string slurm;  // sbatch options: submit shards instead of running here
  int shards = 0;     // with --slurm: array tasks (default: one per task, at most 64)
};

// --parallel, --quiet and (with_slurm) --slurm, --shards.
void AddRunOptions(CLI::App& cmd, MachineArgs& m, bool with_slurm);

// What `eval`'s executor options do not already give: GPUs, worker and sandbox, then the above.
void AddMachineOptions(CLI::App& cmd, MachineArgs& m, bool with_slurm);

// Runs the tasks of shard `shard` of `shards` (0 of 1: every task) here, with a progress line after
// each. The exit status: 0 when all ran, 1 when one failed or is held by another process, 2 when
// none could run (no device, a wrong CUTLASS tree, an unreadable suite).
int RunHere(const suite::SuiteDir& dir, const suite::SuiteManifest& manifest, MachineArgs m,
            int shard, int shards);

// Every task: run here, or under --slurm submitted as an array of --shards shards (default: one
// per task, at most 64). --shards without --slurm is an error.
int Dispatch(const suite::SuiteDir& dir, const suite::SuiteManifest& manifest,
             const MachineArgs& m);

// What is not done yet: run here (Dispatch), or under --slurm the shards that still have work and
// are neither queued nor running, with the shard count of the last submission (the static
// assignment of tasks to shards must not change) unless --shards gives one.
int Resume(const suite::SuiteDir& dir, const suite::SuiteManifest& manifest, const MachineArgs& m);

}  // namespace kernelpro::cli::suite_shards
