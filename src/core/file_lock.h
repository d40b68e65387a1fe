// flock(2) on a file: the lock that keeps one writer on a run directory (store/run_lock.h) and on a
// suite (suite/suite_lock.h). The kernel releases it when its holder dies, even of SIGKILL, so a
// lock left by a dead process is never in the way. The file names its last holder (PID, command,
// start time) so that a refusal can say who holds it.
#pragma once

#include <string>

#include "core/status.h"

namespace kernelpro {

class FileLock {
 public:
  enum class Mode {
    kExclusive,  // alone
    kShared,     // beside other shared holders, never beside an exclusive one
  };

  // Who held a lock that was refused: fields of its file, each "" when unknown.
  struct Holder {
    std::string pid, command, since;
    // "kernelpro suite eval (PID 123, since 2026-12-04T10:00:00Z)", or "another kernelpro process".
    std::string Describe() const;
  };

  // Takes the lock of `path` (created, with its folder, if missing) without waiting, and writes
  // this process's line into it. When another process holds it against `mode`: Unavailable with
  // a message that starts with the holder's description, and `holder` (if given) filled in.
  // IoError when the file cannot be made or locked.
  static Result<FileLock> Acquire(const std::string& path, Mode mode, const std::string& command,
                                  Holder* holder = nullptr);

  FileLock(FileLock&& other) noexcept;
  FileLock& operator=(FileLock&& other) noexcept;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  ~FileLock();  // releases the lock

 private:
  explicit FileLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace kernelpro
