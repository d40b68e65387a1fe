// One writer per run directory: the lock `optimize` and `resume` (and later suite shards) hold for
// as long as they work on a run.
//
// Two processes on one run would both evaluate the same iterations and interleave their rows. The
// lock is flock(2) on RUN_DIR/run.lock (core/file_lock.h), so the kernel releases it when its
// holder dies, even of SIGKILL: a lock left by a dead process is never in the way. The file names
// its holder (PID, command, start time) so that a refusal can say who holds it.
#pragma once

#include <string>
#include <utility>

#include "core/file_lock.h"
#include "core/status.h"
#include "store/run_layout.h"

namespace kernelpro::store {

class RunDirectoryLock {
 public:
  // Takes the lock of `run_dir` (created if missing) for `command` ("optimize", "resume"), without
  // waiting. Unavailable, naming the holder's PID and command, when another process holds it;
  // IoError when the directory or the lock file cannot be made.
  static Result<RunDirectoryLock> Acquire(const std::string& run_dir, const std::string& command);

 private:
  explicit RunDirectoryLock(FileLock lock) : lock_(std::move(lock)) {}
  FileLock lock_;  // released with this object
};

}  // namespace kernelpro::store
