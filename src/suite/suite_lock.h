// One writer per suite (per shard of it): what keeps two processes from running a suite's tasks
// at once on one machine, where their builds and timings would share the cores and the GPU and
// the report would quote numbers taken side by side.
//
// A process running every task of a suite (`suite eval|optimize|resume|run` without shards) holds
// SUITE/suite.lock exclusively. A shard of a job array holds it shared, and its own
// SUITE/shards/K-of-N.lock exclusively: shards run beside each other (on their own GPUs or
// hosts), never beside a whole-suite run nor a second copy of themselves. flock(2) is released
// when its holder dies, even of SIGKILL, so a lock left by a killed run is taken over at once
// (core/file_lock.h).
#pragma once

#include <string>
#include <vector>

#include "core/file_lock.h"
#include "core/status.h"
#include "suite/suite_dir.h"

namespace kernelpro::suite {

class SuiteLock {
 public:
  // Locks shard `shard` of `shards` (shards == 1: the whole suite) for `command` ("suite eval").
  // Unavailable when another process holds what this needs: the message names the holder (its
  // command and PID) and how to follow it (`kernelpro suite status`) and to continue after it.
  static Result<SuiteLock> Acquire(const SuiteDir& dir, int shard, int shards,
                                   const std::string& command);

 private:
  SuiteLock() = default;
  std::vector<FileLock> locks_;  // released with this object
};

}  // namespace kernelpro::suite
