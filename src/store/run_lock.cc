#include "store/run_lock.h"

#include <filesystem>
#include <string>
#include <system_error>
#include <utility>

namespace kernelpro::store {

Result<RunDirectoryLock> RunDirectoryLock::Acquire(const std::string& run_dir,
                                                   const std::string& command) {
  std::error_code ec;
  std::filesystem::create_directories(run_dir, ec);
  if (ec)
    return Status::IoError("cannot create the run directory " + run_dir + ": " + ec.message());
  FileLock::Holder holder;
  auto lock =
      FileLock::Acquire(RunLayout(run_dir).lock(), FileLock::Mode::kExclusive, command, &holder);
  if (lock.ok()) return RunDirectoryLock(std::move(*lock));
  if (lock.status().code() != Status::Code::kUnavailable) return lock.status();
  return Status::Unavailable(run_dir + " is in use by " + holder.Describe() +
                             "; one process at a time works on a run directory. Wait for it "
                             "to finish" +
                             (holder.pid.empty() ? "" : " or stop it (kill " + holder.pid + ")") +
                             ", then run kernelpro resume " + run_dir);
}

}  // namespace kernelpro::store
