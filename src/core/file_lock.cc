#include "core/file_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>
#include <filesystem>
#include <system_error>
#include <utility>

namespace kernelpro {
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

// "pid=123 command=suite eval since=..." -> the value of `key` (up to the next key), or "".
std::string Field(const std::string& text, const std::string& key, const std::string& next) {
  const std::string needle = key + "=";
  std::size_t at = text.find(needle);
  if (at == std::string::npos) return "";
  at += needle.size();
  std::size_t end = next.empty() ? text.find('\n', at) : text.find(" " + next + "=", at);
  if (end == std::string::npos) end = text.find('\n', at);
  return text.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

}  // namespace

std::string FileLock::Holder::Describe() const {
  if (pid.empty()) return "another kernelpro process";
  return "kernelpro " + (command.empty() ? std::string("(unknown command)") : command) + " (PID " +
         pid + (since.empty() ? "" : ", since " + since) + ")";
}

Result<FileLock> FileLock::Acquire(const std::string& path, Mode mode, const std::string& command,
                                   Holder* holder) {
  std::error_code ec;
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  if (ec) return Status::IoError("cannot create " + parent.string() + ": " + ec.message());
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return Status::IoError("cannot open " + path + ": " + ErrnoText(errno));
  if (flock(fd, (mode == Mode::kExclusive ? LOCK_EX : LOCK_SH) | LOCK_NB) != 0) {
    const int error = errno;
    std::string text(512, '\0');
    const ssize_t n = pread(fd, text.data(), text.size(), 0);
    text.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
    close(fd);
    if (error != EWOULDBLOCK)
      return Status::IoError("cannot lock " + path + ": " + ErrnoText(error));
    Holder found{Field(text, "pid", "command"), Field(text, "command", "since"),
                 Field(text, "since", "")};
    if (holder != nullptr) *holder = found;
    return Status::Unavailable(found.Describe() + " holds " + path);
  }
  const std::string line =
      "pid=" + std::to_string(getpid()) + " command=" + command + " since=" + Now() + "\n";
  if (ftruncate(fd, 0) != 0 || pwrite(fd, line.data(), line.size(), 0) < 0) {
    const int error = errno;
    close(fd);
    return Status::IoError("cannot write " + path + ": " + ErrnoText(error));
  }
  return FileLock(fd);
}

FileLock::FileLock(FileLock&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

FileLock& FileLock::operator=(FileLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

FileLock::~FileLock() {
  if (fd_ >= 0) close(fd_);  // closing the only descriptor releases the flock
}

}  // namespace kernelpro
