// WorkerSession: one worker process that serves many requests, for the steps whose start-up
// (importing torch, initialising CUDA, importing a candidate) would otherwise dominate.
//
// Life-cycle:
//   Start(client, role, ...)  starts `python -m kernelpro_worker serve` (sandboxed or not, like
//                             WorkerClient::Run) on a thread of its own; it returns at once.
//   Call(command, request)    sends one request and waits for its reply, at most `timeout`; a
//                             worker that passes the timeout is killed, and so is one whose
//                             reply is not the harness's (not one JSON object on one line, over
//                             the size limit, or not answering this request's id).
//   Close()                   asks the worker to exit, then kills what is left; the destructor
//                             does the same.
// After the worker died or was killed, every Call answers with `ended` set: the ProcessResult
// that says how (a signal, a timeout, an exit), with its stderr, for ClassifyProcessFailure.
//
// Requests and replies travel as JSON lines through two FIFOs in the session's own folder under
// the scratch directory (the only scratch folder its sandbox sees); the worker's stdout and
// stderr stay free for whatever the code it runs prints (captured, bounded, as in RunProcess).
// The binary holds both FIFOs open read-write, so opening them never blocks on either side and a
// dead worker is seen through the process thread, not through EOF. Not thread-safe: one caller at
// a time (the executor leases a GPU around each use).
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/json_io.h"
#include "core/status.h"
#include "core/subprocess.h"
#include "eval/worker_client.h"

namespace kernelpro::eval {

struct SessionReply {
  std::optional<Json> result;          // the worker's reply
  std::optional<ProcessResult> ended;  // set instead when the worker is gone (or was killed)
  std::string error;  // why the worker was killed by the session (timeout, a bad reply), if so
};

class WorkerSession {
 public:
  // `role` is "referee" (unconfined: never imports candidate code) or "candidate" (sandboxed
  // under Confinement::kSandbox, seeing what MountsForRequest("serve", mounts_request) gives).
  // `limits` bound the whole process (no wall-clock limit: each Call has its own).
  // `mounts_request["prepare"]`, when present, reaches the worker at its start: what it may do
  // before its first request ({"device": "cuda", "start_device": true}: see session.py's _prepare).
  static Result<std::unique_ptr<WorkerSession>> Start(const WorkerClient& client,
                                                      const std::string& role,
                                                      const Json& mounts_request,
                                                      const ProcessLimits& limits,
                                                      const std::map<std::string, std::string>& env,
                                                      Confinement confinement);

  ~WorkerSession();
  WorkerSession(const WorkerSession&) = delete;
  WorkerSession& operator=(const WorkerSession&) = delete;

  SessionReply Call(const std::string& command, const Json& request,
                    std::chrono::milliseconds timeout);
  void Close();
  bool alive() const { return !ended_; }

  // Where this process sees files the binary names elsewhere: pairs of (the binary's path, the
  // process's path). Every string of a request that is one of those paths, or lies below one, is
  // rewritten before it is sent. A process started ahead of its candidate (a blank worker of the
  // evaluation server, serve/candidate_pool.h) sees the candidate's files at the places it
  // mounted when it started, where they were copied or linked since.
  void set_path_view(std::vector<std::pair<std::string, std::string>> view) {
    path_view_ = std::move(view);
  }
  // `request` with the path view applied.
  Json InProcessView(const Json& request) const;
  const std::string& role() const { return role_; }

 private:
  WorkerSession() = default;
  void Kill(const std::string& why);
  SessionReply Ended();

  std::string role_;
  std::string io_dir_;
  int request_fd_ = -1;
  int reply_fd_ = -1;
  int cancel_fd_ = -1;  // eventfd: RunProcess kills the worker when it is written
  int done_fd_ = -1;    // eventfd: written by the process thread when RunProcess returned
  std::thread thread_;
  std::optional<ProcessResult> ended_;  // set once the process thread has finished
  Result<ProcessResult> outcome_ = Status::Internal("not run");
  bool sandboxed_ = false;
  const WorkerClient* client_ = nullptr;
  std::string kill_reason_;
  std::string pending_;  // bytes read after the last reply's newline
  long long next_id_ = 1;
  std::vector<std::pair<std::string, std::string>> path_view_;
};

}  // namespace kernelpro::eval
