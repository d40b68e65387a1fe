#include "suite/suite_lock.h"

#include <utility>

namespace kernelpro::suite {
namespace {

Status Refused(const SuiteDir& dir, const FileLock::Holder& holder, const std::string& what) {
  return Status::Unavailable(
      dir.dir() + " is being run by " + holder.Describe() + " (" + what +
      "); one process runs a suite's tasks at a time, so that no two are built or timed side by "
      "side. Follow it with `kernelpro suite status " +
      dir.dir() + "`; once it has ended, `kernelpro suite resume " + dir.dir() +
      "` finishes what is left" +
      (holder.pid.empty() ? "" : " (or stop it first: kill " + holder.pid + ")"));
}

}  // namespace

Result<SuiteLock> SuiteLock::Acquire(const SuiteDir& dir, int shard, int shards,
                                     const std::string& command) {
  SuiteLock lock;
  FileLock::Holder holder;
  const bool whole = shards <= 1;
  auto suite = FileLock::Acquire(dir.dir() + "/suite.lock",
                                 whole ? FileLock::Mode::kExclusive : FileLock::Mode::kShared,
                                 command, &holder);
  if (!suite.ok()) {
    if (suite.status().code() != Status::Code::kUnavailable) return suite.status();
    return Refused(dir, holder, whole ? "the suite or a shard of it" : "the whole suite");
  }
  lock.locks_.push_back(std::move(*suite));
  if (!whole) {
    const std::string name = std::to_string(shard) + "-of-" + std::to_string(shards);
    auto own = FileLock::Acquire(dir.dir() + "/shards/" + name + ".lock",
                                 FileLock::Mode::kExclusive, command, &holder);
    if (!own.ok()) {
      if (own.status().code() != Status::Code::kUnavailable) return own.status();
      return Refused(dir, holder,
                     "shard " + std::to_string(shard) + " of " + std::to_string(shards));
    }
    lock.locks_.push_back(std::move(*own));
  }
  return lock;
}

}  // namespace kernelpro::suite
