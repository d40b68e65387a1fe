#include "store/run_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>
#include <filesystem>
#include <string>
#include <system_error>
#include <utility>

namespace kernelpro::store {
namespace {

std::string ErrnoText(int error) { return std::system_category().message(error); }

std::string Now() {
  std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

// "pid=123 command=optimize since=..." -> the value of `key`, or "".
std::string Field(const std::string& text, const std::string& key) {
  const std::string needle = key + "=";
  std::size_t at = text.find(needle);
  if (at == std::string::npos) return "";
  at += needle.size();
  return text.substr(at, text.find_first_of(" \n", at) - at);
}

}  // namespace

Result<RunDirectoryLock> RunDirectoryLock::Acquire(const std::string& run_dir,
                                                   const std::string& command) {
  std::error_code ec;
  std::filesystem::create_directories(run_dir, ec);
  if (ec)
    return Status::IoError("cannot create the run directory " + run_dir + ": " + ec.message());
  const std::string path = RunLayout(run_dir).lock();
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return Status::IoError("cannot open " + path + ": " + ErrnoText(errno));
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    std::string holder(256, '\0');
    const ssize_t n = pread(fd, holder.data(), holder.size(), 0);
    holder.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
    close(fd);
    if (error != EWOULDBLOCK)
      return Status::IoError("cannot lock " + path + ": " + ErrnoText(error));
    const std::string pid = Field(holder, "pid");
    const std::string by = Field(holder, "command");
    const std::string since = Field(holder, "since");
    std::string who = "another kernelpro process";
    if (!pid.empty()) {
      who = "kernelpro " + (by.empty() ? std::string("(unknown command)") : by) + " (PID " + pid +
            (since.empty() ? "" : ", since " + since) + ")";
    }
    return Status::Unavailable(run_dir + " is in use by " + who +
                               "; one process at a time works on a run directory. Wait for it "
                               "to finish" +
                               (pid.empty() ? "" : " or stop it (kill " + pid + ")") +
                               ", then run kernelpro resume " + run_dir);
  }
  const std::string holder =
      "pid=" + std::to_string(getpid()) + " command=" + command + " since=" + Now() + "\n";
  if (ftruncate(fd, 0) != 0 || pwrite(fd, holder.data(), holder.size(), 0) < 0) {
    const int error = errno;
    close(fd);
    return Status::IoError("cannot write " + path + ": " + ErrnoText(error));
  }
  return RunDirectoryLock(fd);
}

RunDirectoryLock::RunDirectoryLock(RunDirectoryLock&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)) {}

RunDirectoryLock& RunDirectoryLock::operator=(RunDirectoryLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

RunDirectoryLock::~RunDirectoryLock() {
  if (fd_ >= 0) close(fd_);  // closing the only descriptor releases the flock
}

}  // namespace kernelpro::store
