#include "core/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <functional>
#include <limits>
#include <mutex>
#include <set>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>

extern char** environ;

namespace kernelpro {
namespace {

using Clock = std::chrono::steady_clock;

// After the direct child exits its group is killed; a grandchild that escaped the group (setsid)
// may still hold a pipe open, and we stop waiting for its EOF after this long.
constexpr auto kGraceAfterExit = std::chrono::milliseconds(250);
// How often to check for the child's exit when the kernel has no pidfd_open (before Linux 5.3).
constexpr auto kExitCheckInterval = std::chrono::milliseconds(10);
constexpr std::size_t kIoChunkBytes = 64 * 1024;
constexpr const char* kDefaultPath = "/usr/bin:/bin";

std::string ErrnoMessage(int error) { return std::system_category().message(error); }

// Owns one file descriptor.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    Reset(std::exchange(other.fd_, -1));
    return *this;
  }
  ~UniqueFd() { Reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  void Reset(int fd = -1) {
    if (fd_ >= 0) close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

struct Pipe {
  UniqueFd read;
  UniqueFd write;
};

struct ChildPipes {
  Pipe stdin_pipe;
  Pipe stdout_pipe;
  Pipe stderr_pipe;
  Pipe exec_error;  // the child reports a failure before exec here; exec closes it
};

// Close-on-exec everywhere: a child forked concurrently by another thread must not keep our pipes
// open, or our reader would wait for an EOF that the other child holds back.
Result<ChildPipes> MakeChildPipes() {
  ChildPipes pipes;
  for (Pipe* pipe :
       {&pipes.stdin_pipe, &pipes.stdout_pipe, &pipes.stderr_pipe, &pipes.exec_error}) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return Status::IoError("pipe2: " + ErrnoMessage(errno));
    pipe->read.Reset(fds[0]);
    pipe->write.Reset(fds[1]);
  }
  return pipes;
}

// Keeps the first and last halves of `capacity` bytes of a stream and counts the rest.
class HeadTailCapture {
 public:
  explicit HeadTailCapture(std::size_t capacity)
      : head_capacity_(capacity / 2), tail_capacity_(capacity - capacity / 2) {}

  void Append(std::string_view data) {
    total_ += data.size();
    const std::size_t to_head = std::min(data.size(), head_capacity_ - head_.size());
    head_.append(data.substr(0, to_head));
    data.remove_prefix(to_head);
    if (data.size() >= tail_capacity_) {
      tail_.assign(data.substr(data.size() - tail_capacity_));
    } else {
      tail_.append(data);
      if (tail_.size() > tail_capacity_) tail_.erase(0, tail_.size() - tail_capacity_);
    }
  }

  std::uint64_t total() const { return total_; }

  std::string Text() const {
    const std::uint64_t dropped = total_ - head_.size() - tail_.size();
    if (dropped == 0) return head_ + tail_;
    return head_ + "\n[... " + std::to_string(dropped) + " bytes dropped ...]\n" + tail_;
  }

 private:
  std::size_t head_capacity_;
  std::size_t tail_capacity_;
  std::string head_;
  std::string tail_;
  std::uint64_t total_ = 0;
};

// The process groups of the children being supervised, for KillAllChildren.
std::mutex& LiveGroupsMutex() {
  static std::mutex mutex;
  return mutex;
}
std::set<pid_t>& LiveGroups() {
  static std::set<pid_t> groups;
  return groups;
}

std::atomic<bool>& StoppingFlag() {
  static std::atomic<bool> stopping{false};
  return stopping;
}

// The signal a child ended by, also as a wrapper's (bwrap, a shell) exit code 128 + n for the
// signals that stop a whole job; 0 when it was not ended by one, or kernelpro itself ended it.
int EndingSignal(const ProcessResult& result) {
  if (result.timed_out || result.cancelled || result.output_limit_hit) return 0;
  if (result.term_signal != 0) return result.term_signal;
  if (!result.exited) return 0;
  const int n = result.exit_code - 128;
  return n == SIGTERM || n == SIGINT || n == SIGHUP || n == SIGKILL ? n : 0;
}

// See BeginStopping: never returns when the child was stopped together with kernelpro.
void WaitIfStoppedTogether(const ProcessResult& result) {
  const int signal_number = EndingSignal(result);
  if (signal_number == 0) return;
  const bool job_signal =
      signal_number == SIGTERM || signal_number == SIGINT || signal_number == SIGHUP;
  if (!job_signal && !StoppingFlag()) return;
  const auto give_up = std::chrono::steady_clock::now() + kStopGrace;
  while (!StoppingFlag() && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (!StoppingFlag()) return;  // the child's own ending: the caller records it
  for (;;) std::this_thread::sleep_for(std::chrono::hours(1));  // the handler ends the process
}

// Registers a child's group while it may run: from fork until it is reaped.
class LiveGroup {
 public:
  explicit LiveGroup(pid_t pid) : pid_(pid) {
    std::lock_guard<std::mutex> lock(LiveGroupsMutex());
    LiveGroups().insert(pid_);
  }
  ~LiveGroup() {
    std::lock_guard<std::mutex> lock(LiveGroupsMutex());
    LiveGroups().erase(pid_);
  }
  LiveGroup(const LiveGroup&) = delete;
  LiveGroup& operator=(const LiveGroup&) = delete;

 private:
  pid_t pid_;
};

// The child's environment as "NAME=value" strings: the parent's (unless inherit_env is false),
// minus unset_env, with env applied.
std::vector<std::string> ChildEnvironment(const ProcessOptions& options) {
  std::set<std::string, std::less<>> removed(options.unset_env.begin(), options.unset_env.end());
  for (const auto& [name, value] : options.env) removed.insert(name);
  std::vector<std::string> result;
  for (char** entry = environ; options.inherit_env && *entry != nullptr; ++entry) {
    std::string_view text(*entry);
    if (!removed.contains(text.substr(0, text.find('=')))) result.emplace_back(text);
  }
  for (const auto& [name, value] : options.env) result.push_back(name + "=" + value);
  return result;
}

// Resolves argv[0] the way execvp would, but in the parent: execvp may allocate, which is not
// allowed between fork and exec in a multithreaded program. The child's PATH is used, as `env`
// does. Names with a slash are taken as they are.
std::optional<std::string> FindProgram(const std::string& name,
                                       const std::vector<std::string>& environment) {
  if (name.find('/') != std::string::npos) return name;
  if (name.empty()) return std::nullopt;
  std::string_view search_path = kDefaultPath;
  for (const std::string& entry : environment) {
    if (entry.starts_with("PATH=")) search_path = std::string_view(entry).substr(5);
  }
  while (true) {
    const std::size_t colon = search_path.find(':');
    std::string dir(search_path.substr(0, colon));
    std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    struct stat info;
    if (stat(candidate.c_str(), &info) == 0 && S_ISREG(info.st_mode) &&
        access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
    if (colon == std::string_view::npos) return std::nullopt;
    search_path.remove_prefix(colon + 1);
  }
}

std::vector<char*> NullTerminated(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (std::string& s : strings) pointers.push_back(s.data());
  pointers.push_back(nullptr);
  return pointers;
}

struct ResourceLimit {
  int resource;
  rlimit limit;
};

// Limits are computed here, in the parent, and never above the current hard limit, which an
// unprivileged child could not raise.
std::vector<ResourceLimit> ChildResourceLimits(const ProcessLimits& limits) {
  std::vector<ResourceLimit> result;
  auto add = [&result](int resource, rlim_t soft, rlim_t hard) {
    rlimit current;
    if (getrlimit(resource, &current) == 0 && current.rlim_max != RLIM_INFINITY) {
      hard = std::min(hard, current.rlim_max);
      soft = std::min(soft, hard);
    }
    result.push_back({resource, {soft, hard}});
  };
  add(RLIMIT_CORE, 0, 0);
  // The hard CPU limit sits one second above the soft one so that a child which handles SIGXCPU
  // still gets SIGKILL.
  if (limits.cpu_seconds > 0) add(RLIMIT_CPU, limits.cpu_seconds, limits.cpu_seconds + 1);
  if (limits.max_file_bytes > 0) add(RLIMIT_FSIZE, limits.max_file_bytes, limits.max_file_bytes);
  if (limits.max_open_files > 0) add(RLIMIT_NOFILE, limits.max_open_files, limits.max_open_files);
  return result;
}

// What the child reports through the exec-error pipe when a step before exec fails.
enum class ChildStep : int { kProcessGroup, kStdio, kWorkingDir, kResourceLimits, kExec };
struct ChildFailure {
  ChildStep step;
  int error;
};

// Everything the child needs, prepared before fork.
struct ChildPlan {
  const char* program;
  char* const* argv;
  char* const* envp;
  const char* working_dir;  // null: inherit
  const std::vector<ResourceLimit>* limits;
  int stdio[3];  // the child's ends of the stdin, stdout and stderr pipes
  int error_fd;  // close-on-exec write end of the exec-error pipe
  pid_t parent;  // getpid() before fork: the death signal's race check
};

// Moves a descriptor above 0-2 so that placing the stdio pipes on 0-2 cannot clobber it (pipe2
// hands out 0-2 when the parent runs with its own stdio closed).
int LiftAboveStdio(int fd) { return fd > 2 ? fd : fcntl(fd, F_DUPFD_CLOEXEC, 3); }

// Runs in the forked child of a possibly multithreaded parent: only async-signal-safe calls and no
// allocation until execve.
[[noreturn]] void RunChild(const ChildPlan& plan) {
  int error_fd = plan.error_fd;
  auto fail = [&error_fd](ChildStep step) {
    const ChildFailure failure{step, errno};
    [[maybe_unused]] ssize_t written = write(error_fd, &failure, sizeof(failure));
    _exit(127);
  };

  if (setpgid(0, 0) != 0) fail(ChildStep::kProcessGroup);
  // Dies with kernelpro, even of SIGKILL. If the parent died before prctl took effect, the child
  // has been re-parented already and must not run on.
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) fail(ChildStep::kProcessGroup);
  if (getppid() != plan.parent) _exit(127);

  error_fd = LiftAboveStdio(error_fd);
  if (error_fd < 0) fail(ChildStep::kStdio);
  int stdio[3];
  for (int i = 0; i < 3; ++i) {
    stdio[i] = LiftAboveStdio(plan.stdio[i]);
    if (stdio[i] < 0) fail(ChildStep::kStdio);
  }
  for (int i = 0; i < 3; ++i) {
    if (dup2(stdio[i], i) < 0) fail(ChildStep::kStdio);
  }
#ifdef SYS_close_range
  // Descriptors the parent opened without close-on-exec (a library's sockets, a log file) must not
  // leak into untrusted work. Best effort: kernels before 5.9 lack close_range.
  if (error_fd > 3) syscall(SYS_close_range, 3u, static_cast<unsigned>(error_fd - 1), 0u);
  syscall(SYS_close_range, static_cast<unsigned>(error_fd + 1), ~0u, 0u);
#endif

  // Ignored signals stay ignored across exec. A parent that ignores SIGPIPE would otherwise leave
  // a child like `yes` spinning on EPIPE, and the caller's blocked signals would stay blocked.
  struct sigaction default_action = {};
  default_action.sa_handler = SIG_DFL;
  for (int signal_number = 1; signal_number < NSIG; ++signal_number) {
    sigaction(signal_number, &default_action, nullptr);  // fails harmlessly for SIGKILL etc.
  }
  sigset_t no_signals;
  sigemptyset(&no_signals);
  sigprocmask(SIG_SETMASK, &no_signals, nullptr);

  if (plan.working_dir != nullptr && chdir(plan.working_dir) != 0) fail(ChildStep::kWorkingDir);
  for (const ResourceLimit& limit : *plan.limits) {
    if (setrlimit(limit.resource, &limit.limit) != 0) fail(ChildStep::kResourceLimits);
  }
  execve(plan.program, plan.argv, plan.envp);
  fail(ChildStep::kExec);
  _exit(127);  // unreachable: fail() exits; keeps [[noreturn]] provable to the compiler
}

std::string DescribeChildFailure(const ChildFailure& failure, const ChildPlan& plan) {
  const std::string reason = ErrnoMessage(failure.error);
  switch (failure.step) {
    case ChildStep::kProcessGroup:
      return "cannot create a process group: " + reason;
    case ChildStep::kStdio:
      return "cannot set up stdin/stdout/stderr: " + reason;
    case ChildStep::kWorkingDir:
      return "cannot change to working directory '" + std::string(plan.working_dir) +
             "': " + reason;
    case ChildStep::kResourceLimits:
      return "cannot set resource limits: " + reason;
    case ChildStep::kExec:
      return "cannot execute '" + std::string(plan.program) + "': " + reason;
  }
  return reason;
}

// Waits until exec succeeded (the pipe closes with nothing in it) or the child reported a failure.
std::optional<ChildFailure> ReadChildFailure(int fd) {
  ChildFailure failure;
  ssize_t n;
  do {
    n = read(fd, &failure, sizeof(failure));
  } while (n < 0 && errno == EINTR);
  // Writes up to PIPE_BUF are atomic, so the report arrives whole or not at all.
  if (n == static_cast<ssize_t>(sizeof(failure))) return failure;
  return std::nullopt;
}

// True once the child has exited, without reaping it: while it is an unreaped zombie its pid, and
// so its process group id, cannot be reused, and killing the group cannot hit a stranger.
bool ChildHasExited(pid_t pid) {
  siginfo_t info = {};
  if (waitid(P_PID, pid, &info, WEXITED | WNOHANG | WNOWAIT) != 0) {
    return errno != EINTR;  // ECHILD: someone else reaped it (e.g. SIGCHLD ignored); it is gone
  }
  return info.si_pid != 0;
}

std::optional<int> Reap(pid_t pid) {
  int status;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return std::nullopt;
  }
  return status;
}

// A descriptor that becomes readable when the child exits, so poll wakes at once instead of on a
// timer. Invalid on kernels without pidfd_open (before 5.3); the caller then polls on a timer.
UniqueFd OpenExitNotifier(pid_t pid) {
#ifdef SYS_pidfd_open
  return UniqueFd(static_cast<int>(syscall(SYS_pidfd_open, pid, 0)));
#else
  return UniqueFd();
#endif
}

// Writing to a child that has closed its stdin raises SIGPIPE, which would kill kernelpro. Pipes
// have no MSG_NOSIGNAL, so SIGPIPE is blocked in this thread (the signal goes to the writing
// thread) while the child runs, and the ones our writes raised are discarded before unblocking.
class ScopedSigpipeBlock {
 public:
  ScopedSigpipeBlock() {
    sigemptyset(&sigpipe_);
    sigaddset(&sigpipe_, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &sigpipe_, &previous_mask_);
    sigset_t pending;
    sigpending(&pending);
    was_pending_ = sigismember(&pending, SIGPIPE) == 1;
  }
  ~ScopedSigpipeBlock() {
    if (!was_pending_) {
      const timespec no_wait = {};
      while (sigtimedwait(&sigpipe_, nullptr, &no_wait) == SIGPIPE) {
      }
    }
    pthread_sigmask(SIG_SETMASK, &previous_mask_, nullptr);
  }
  ScopedSigpipeBlock(const ScopedSigpipeBlock&) = delete;
  ScopedSigpipeBlock& operator=(const ScopedSigpipeBlock&) = delete;

 private:
  sigset_t sigpipe_;
  sigset_t previous_mask_;
  bool was_pending_ = false;
};

// Rounded up, so that poll does not wake just before a deadline and spin until it passes.
int PollTimeoutMs(Clock::duration wait) {
  const auto ms = std::chrono::ceil<std::chrono::milliseconds>(wait).count();
  return static_cast<int>(std::clamp<decltype(ms)>(ms, 0, std::numeric_limits<int>::max()));
}

// Feeds stdin and drains stdout/stderr until the child has exited and its pipes are closed (or the
// grace period after its exit has passed), enforcing the wall timeout and the output limit. The
// child's process group is killed once the child exits. Fills the output and kill fields.
Status Supervise(pid_t pid, ChildPipes& pipes, const ProcessOptions& options,
                 Clock::time_point start, ProcessResult& result) {
  ScopedSigpipeBlock sigpipe_block;
  UniqueFd& stdin_fd = pipes.stdin_pipe.write;
  UniqueFd* outputs[2] = {&pipes.stdout_pipe.read, &pipes.stderr_pipe.read};
  HeadTailCapture captures[2] = {HeadTailCapture(options.capture_bytes),
                                 HeadTailCapture(options.capture_bytes)};
  std::string_view unwritten = options.stdin_data;
  if (unwritten.empty()) {
    stdin_fd.Reset();
  } else if (fcntl(stdin_fd.get(), F_SETFL, O_NONBLOCK) != 0) {
    kill(-pid, SIGKILL);
    return Status::IoError("fcntl(O_NONBLOCK) on stdin pipe: " + ErrnoMessage(errno));
  }
  UniqueFd exit_notifier = OpenExitNotifier(pid);
  std::optional<Clock::time_point> deadline;
  if (options.limits.wall_timeout.count() > 0) deadline = start + options.limits.wall_timeout;
  std::optional<Clock::time_point> grace_end;  // set once the child has exited
  bool killed = false;
  std::vector<char> buffer(kIoChunkBytes);

  while (true) {
    const Clock::time_point now = Clock::now();
    if (!grace_end && ChildHasExited(pid)) {
      kill(-pid, SIGKILL);  // grandchildren left behind
      grace_end = now + kGraceAfterExit;
      stdin_fd.Reset();
      exit_notifier.Reset();
    } else if (!grace_end && !killed && deadline && now >= *deadline) {
      kill(-pid, SIGKILL);
      killed = result.timed_out = true;
    }
    const bool outputs_open = outputs[0]->valid() || outputs[1]->valid();
    if (grace_end && (!outputs_open || now >= *grace_end)) break;

    std::optional<Clock::time_point> wake;
    auto wake_by = [&wake](Clock::time_point t) { wake = wake ? std::min(*wake, t) : t; };
    if (!killed && deadline) wake_by(*deadline);
    if (grace_end) wake_by(*grace_end);
    if (!grace_end && !exit_notifier.valid()) wake_by(now + kExitCheckInterval);
    const int timeout_ms = wake ? PollTimeoutMs(*wake - now) : -1;

    pollfd fds[5] = {{stdin_fd.get(), POLLOUT, 0},
                     {outputs[0]->get(), POLLIN, 0},
                     {outputs[1]->get(), POLLIN, 0},
                     {exit_notifier.get(), POLLIN, 0},
                     {killed ? -1 : options.cancel_fd, POLLIN, 0}};
    if (poll(fds, 5, timeout_ms) < 0) {
      if (errno == EINTR) continue;
      kill(-pid, SIGKILL);
      return Status::IoError("poll: " + ErrnoMessage(errno));
    }

    if (fds[4].revents != 0 && !killed) {
      kill(-pid, SIGKILL);
      killed = result.cancelled = true;
    }
    if (fds[0].revents != 0) {
      const ssize_t n =
          write(stdin_fd.get(), unwritten.data(), std::min(unwritten.size(), kIoChunkBytes));
      if (n > 0) {
        unwritten.remove_prefix(n);
      } else if (errno != EAGAIN && errno != EINTR) {
        unwritten = {};  // EPIPE: the child closed its stdin and will not read the rest
      }
      if (unwritten.empty()) stdin_fd.Reset();
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[1 + i].revents == 0) continue;
      const ssize_t n = read(outputs[i]->get(), buffer.data(), buffer.size());
      if (n > 0) {
        captures[i].Append(std::string_view(buffer.data(), n));
      } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
        outputs[i]->Reset();
      }
    }
    const std::uint64_t printed = captures[0].total() + captures[1].total();
    if (!killed && options.kill_after_output_bytes > 0 &&
        printed > options.kill_after_output_bytes) {
      kill(-pid, SIGKILL);
      killed = result.output_limit_hit = true;
    }
  }

  result.stdout_bytes = captures[0].total();
  result.stderr_bytes = captures[1].total();
  result.stdout_text = captures[0].Text();
  result.stderr_text = captures[1].Text();
  return Status::Ok();
}

std::string FormatSeconds(std::chrono::milliseconds duration) {
  const double seconds = duration.count() / 1000.0;
  char text[32];
  std::snprintf(text, sizeof(text), "%.*f s", seconds >= 10 ? 0 : 1, seconds);
  return text;
}

}  // namespace

Result<ProcessResult> RunProcess(const ProcessOptions& options) {
  if (options.argv.empty()) return Status::InvalidArgument("RunProcess: argv is empty");
  ProcessResult result;
  std::vector<std::string> environment = ChildEnvironment(options);
  const std::optional<std::string> program = FindProgram(options.argv[0], environment);
  if (!program) {
    result.start_error = "cannot run '" + options.argv[0] + "': not found on PATH";
    return result;
  }
  std::vector<std::string> argv_strings = options.argv;
  const std::vector<char*> argv = NullTerminated(argv_strings);
  const std::vector<char*> envp = NullTerminated(environment);
  const std::vector<ResourceLimit> limits = ChildResourceLimits(options.limits);
  Result<ChildPipes> pipes = MakeChildPipes();
  if (!pipes.ok()) return pipes.status();

  const ChildPlan plan = {
      .program = program->c_str(),
      .argv = argv.data(),
      .envp = envp.data(),
      .working_dir = options.working_dir.empty() ? nullptr : options.working_dir.c_str(),
      .limits = &limits,
      .stdio = {pipes->stdin_pipe.read.get(), pipes->stdout_pipe.write.get(),
                pipes->stderr_pipe.write.get()},
      .error_fd = pipes->exec_error.write.get(),
      .parent = getpid(),
  };
  const Clock::time_point start = Clock::now();
  const pid_t pid = fork();
  if (pid < 0) {
    result.start_error = "fork: " + ErrnoMessage(errno);
    return result;
  }
  if (pid == 0) RunChild(plan);
  // Unregistered before the reap: once reaped, the pid (and group id) may belong to a stranger.
  std::optional<LiveGroup> live_group;
  live_group.emplace(pid);

  // Only the child keeps these ends; closing ours lets EOF and EPIPE reach us.
  pipes->stdin_pipe.read.Reset();
  pipes->stdout_pipe.write.Reset();
  pipes->stderr_pipe.write.Reset();
  pipes->exec_error.write.Reset();
  if (const std::optional<ChildFailure> failure = ReadChildFailure(pipes->exec_error.read.get())) {
    live_group.reset();
    Reap(pid);
    result.start_error = DescribeChildFailure(*failure, plan);
    return result;
  }
  result.started = true;

  const Status supervised = Supervise(pid, *pipes, options, start, result);
  live_group.reset();
  const std::optional<int> status = Reap(pid);
  result.wall_time = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
  if (!supervised.ok()) return supervised;
  if (status && WIFEXITED(*status)) {
    result.exited = true;
    result.exit_code = WEXITSTATUS(*status);
  } else if (status && WIFSIGNALED(*status)) {
    result.term_signal = WTERMSIG(*status);
  }
  WaitIfStoppedTogether(result);
  return result;
}

void BeginStopping() { StoppingFlag() = true; }

int KillAllChildren() {
  std::lock_guard<std::mutex> lock(LiveGroupsMutex());
  int signalled = 0;
  for (pid_t group : LiveGroups()) {
    if (kill(-group, SIGKILL) == 0) ++signalled;
  }
  return signalled;
}

std::string ProcessResult::Describe() const {
  if (!started) return "failed to start: " + start_error;
  if (timed_out) return "timed out after " + FormatSeconds(wall_time) + " (killed)";
  if (cancelled) return "stopped by kernelpro after " + FormatSeconds(wall_time);
  // The limit itself is not recorded here; what was read before the kill is a lower bound.
  if (output_limit_hit) {
    return "killed: printed more than " + std::to_string(stdout_bytes + stderr_bytes) + " bytes";
  }
  if (exited) return "exit " + std::to_string(exit_code);
  if (term_signal != 0) return "killed by " + SignalDescription(term_signal);
  return "ended, status unknown";
}

std::string SignalDescription(int signal_number) {
  static constexpr struct {
    int number;
    const char* description;
  } kKnownSignals[] = {
      {SIGSEGV, "SIGSEGV (segmentation fault)"},
      {SIGABRT, "SIGABRT (abort)"},
      {SIGKILL, "SIGKILL (killed)"},
      {SIGBUS, "SIGBUS (bus error)"},
      {SIGFPE, "SIGFPE (floating-point exception)"},
      {SIGILL, "SIGILL (illegal instruction)"},
      {SIGTERM, "SIGTERM (terminated)"},
      {SIGINT, "SIGINT (interrupted)"},
      {SIGPIPE, "SIGPIPE (broken pipe)"},
      {SIGXCPU, "SIGXCPU (CPU time limit exceeded)"},
      {SIGXFSZ, "SIGXFSZ (file size limit exceeded)"},
  };
  for (const auto& known : kKnownSignals) {
    if (known.number == signal_number) return known.description;
  }
  return "signal " + std::to_string(signal_number);
}

}  // namespace kernelpro
