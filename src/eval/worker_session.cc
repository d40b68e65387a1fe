#include "eval/worker_session.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

namespace kernelpro::eval {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// A reply larger than this is not the harness's (replies carry times and names, not tensors).
constexpr std::size_t kMaxReplyBytes = 64u << 20;

void CloseFd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

void Signal(int event_fd) {
  const std::uint64_t one = 1;
  [[maybe_unused]] ssize_t n = ::write(event_fd, &one, sizeof(one));
}

int PollMs(Clock::time_point deadline) {
  auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::clamp<long long>(left, 0, 1 << 30));
}

}  // namespace

Result<std::unique_ptr<WorkerSession>> WorkerSession::Start(
    const WorkerClient& client, const std::string& role, const Json& mounts_request,
    const ProcessLimits& limits, const std::map<std::string, std::string>& env,
    Confinement confinement) {
  if (confinement == Confinement::kSandbox && !client.SandboxReady().ok()) {
    return client.SandboxReady();
  }
  auto io_dir = client.MakeIoDir("serve-" + role);
  if (!io_dir.ok()) return io_dir.status();
  std::unique_ptr<WorkerSession> session(new WorkerSession());
  session->role_ = role;
  session->io_dir_ = *io_dir;
  session->client_ = &client;
  session->sandboxed_ = client.Sandboxed(confinement);
  const std::string to_worker = *io_dir + "/to-worker";
  const std::string from_worker = *io_dir + "/from-worker";
  for (const std::string& fifo : {to_worker, from_worker}) {
    if (::mkfifo(fifo.c_str(), 0600) != 0) {
      return Status::IoError("cannot create the FIFO " + fifo + ": " + std::strerror(errno));
    }
  }
  // Read-write: opening never waits for the other side, and the worker's exit is seen through
  // the process thread rather than through an EOF that a grandchild could hold back.
  session->request_fd_ = ::open(to_worker.c_str(), O_RDWR | O_CLOEXEC | O_NONBLOCK);
  session->reply_fd_ = ::open(from_worker.c_str(), O_RDWR | O_CLOEXEC | O_NONBLOCK);
  session->cancel_fd_ = ::eventfd(0, EFD_CLOEXEC);
  session->done_fd_ = ::eventfd(0, EFD_CLOEXEC);
  if (session->request_fd_ < 0 || session->reply_fd_ < 0 || session->cancel_fd_ < 0 ||
      session->done_fd_ < 0) {
    return Status::IoError("cannot open the worker session's channels in " + *io_dir + ": " +
                           std::strerror(errno));
  }
  Json setup{{"role", role}, {"to_worker", to_worker}, {"from_worker", from_worker}};
  if (mounts_request.contains("prepare")) setup["prepare"] = mounts_request["prepare"];
  if (Status s = WriteJsonFile(*io_dir + "/request.json", setup); !s.ok()) return s;

  ProcessOptions process =
      client.StepProcess("serve", mounts_request, *io_dir, limits, env, {}, 64 * 1024, confinement);
  process.cancel_fd = session->cancel_fd_;
  WorkerSession* raw = session.get();
  session->thread_ = std::thread([raw, process = std::move(process)] {
    raw->outcome_ = RunProcess(process);
    Signal(raw->done_fd_);
  });
  return session;
}

WorkerSession::~WorkerSession() {
  Close();
  CloseFd(request_fd_);
  CloseFd(reply_fd_);
  CloseFd(cancel_fd_);
  CloseFd(done_fd_);
  std::error_code ec;
  if (!io_dir_.empty()) fs::remove_all(io_dir_, ec);
}

SessionReply WorkerSession::Ended() {
  if (!ended_) {
    if (thread_.joinable()) thread_.join();
    ProcessResult process;
    if (outcome_.ok()) {
      process = *outcome_;
    } else {
      process.start_error = outcome_.status().message();
    }
    if (!process.started && process.start_error.empty()) process.start_error = "did not start";
    client_->ReadSignalExit(sandboxed_, process);
    ended_ = std::move(process);
  }
  SessionReply reply;
  reply.ended = ended_;
  reply.error = kill_reason_;
  return reply;
}

void WorkerSession::Kill(const std::string& why) {
  if (ended_) return;
  if (kill_reason_.empty()) kill_reason_ = why;
  Signal(cancel_fd_);
  Ended();
}

Json WorkerSession::InProcessView(const Json& request) const {
  if (path_view_.empty()) return request;
  if (request.is_string()) {
    const std::string& text = request.get_ref<const std::string&>();
    for (const auto& [outside, inside] : path_view_) {
      if (text == outside) return inside;
      if (text.size() > outside.size() && text.compare(0, outside.size(), outside) == 0 &&
          text[outside.size()] == '/') {
        return inside + text.substr(outside.size());
      }
    }
    return request;
  }
  if (request.is_object() || request.is_array()) {
    Json mapped = request;
    for (auto& item : mapped) item = InProcessView(item);
    return mapped;
  }
  return request;
}

SessionReply WorkerSession::Call(const std::string& command, const Json& request,
                                 std::chrono::milliseconds timeout) {
  if (ended_) return Ended();
  const auto deadline = Clock::now() + timeout;
  const long long id = next_id_++;
  Json message{{"id", id},
               {"command", command},
               {"timeout_s", std::chrono::duration<double>(timeout).count()},
               {"request", InProcessView(request)}};
  std::string line = message.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
  std::string_view unwritten = line;
  while (!unwritten.empty()) {
    pollfd fds[2] = {{request_fd_, POLLOUT, 0}, {done_fd_, POLLIN, 0}};
    int ready = ::poll(fds, 2, PollMs(deadline));
    if (ready < 0 && errno == EINTR) continue;
    if (fds[1].revents != 0) return Ended();
    if (ready == 0) {
      Kill("the worker did not take the " + command + " request within its time limit");
      return Ended();
    }
    ssize_t n = ::write(request_fd_, unwritten.data(), unwritten.size());
    if (n > 0) unwritten.remove_prefix(static_cast<std::size_t>(n));
  }

  char buffer[64 * 1024];
  for (;;) {
    std::size_t newline = pending_.find('\n');
    if (newline != std::string::npos) {
      std::string text = pending_.substr(0, newline);
      pending_.erase(0, newline + 1);
      Json parsed = Json::parse(text, nullptr, /*allow_exceptions=*/false);
      if (parsed.is_discarded() || !parsed.is_object() ||
          JsonGet<long long>(parsed, "id", -1) != id || !parsed.contains("result") ||
          !parsed["result"].is_object()) {
        Kill("the worker's reply to " + command + " is not the harness's (" +
             (parsed.is_discarded() ? "not JSON" : "wrong shape or id") + ")");
        return Ended();
      }
      SessionReply reply;
      reply.result = std::move(parsed["result"]);
      return reply;
    }
    if (pending_.size() > kMaxReplyBytes) {
      Kill("the worker's reply to " + command + " exceeds " + std::to_string(kMaxReplyBytes >> 20) +
           " MiB");
      return Ended();
    }
    pollfd fds[2] = {{reply_fd_, POLLIN, 0}, {done_fd_, POLLIN, 0}};
    int ready = ::poll(fds, 2, PollMs(deadline));
    if (ready < 0 && errno == EINTR) continue;
    if (fds[0].revents != 0) {
      ssize_t n = ::read(reply_fd_, buffer, sizeof(buffer));
      if (n > 0) pending_.append(buffer, static_cast<std::size_t>(n));
      continue;  // a reply written just before the worker exited is still read
    }
    if (fds[1].revents != 0) return Ended();
    if (ready == 0) {
      Kill("timed out after " + std::to_string(timeout.count() / 1000) + " s during " + command);
      return Ended();
    }
  }
}

void WorkerSession::Close() {
  if (ended_ || !thread_.joinable()) {
    if (thread_.joinable()) thread_.join();
    return;
  }
  SessionReply bye = Call("exit", Json::object(), std::chrono::seconds(10));
  if (!bye.ended) {
    pollfd done = {done_fd_, POLLIN, 0};
    ::poll(&done, 1, 5000);
  }
  Kill("closed");
  kill_reason_.clear();
}

}  // namespace kernelpro::eval
