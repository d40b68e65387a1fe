// The evaluation server's blank workers: per slot (GPU), `depth` candidate processes started
// before any request needs them (torch imported: seconds), each handed to one candidate the slot
// evaluates (eval/candidate_processes.h). Nothing is shared between candidates: a blank worker
// has loaded no candidate code, serves one candidate and ends with it. Those started while the
// slot is idle (Prepare) also start CUDA and the profiler; those started to replace one handed
// over, while a job runs on the GPU, do not (a CUDA context made during a timing would disturb
// it): their candidate's first request starts CUDA, as a fresh process's would.
//
// A blank worker is started in the sandbox `eval` uses, seeing a folder of its own, made for it:
//   STATE/slots/<slot>/blank-<n>/src/problem.py, src/candidate.py   empty until the hand-over
//   STATE/slots/<slot>/blank-<n>/build/                               empty until the hand-over
// besides the cache's inputs tree and precompiled headers (read-only) and the slot's candidate
// folders (work_dir/candidates, writable; never work_dir/requests, where the steps' request pipes
// are), as a fresh candidate process would see its own. At the hand-over
// the candidate's and the problem's text are written into the two files (in place: a bind mount
// shows the file it was made with), its build scope is linked into build/, and the session's path
// view (WorkerSession::set_path_view) maps the paths the runner names to those. The hand-over
// checks that every path the candidate's own sandbox would mount is one the blank worker mounted
// (or lies below one, writable only where it was); when one is not, or the worker died, or its GPU
// is not the lease's, the candidate gets a fresh process as in `eval` and the pool says why.
//
// Thread-safety: Prepare and Start may run on different threads (the slot's, a device thread).
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "eval/candidate_processes.h"
#include "eval/worker_client.h"

namespace kernelpro::serve {

struct CandidatePoolConfig {
  std::string root;       // this slot's folder: STATE/slots/<slot>
  std::string work_dir;   // the slot executor's work_dir (absolute): candidates/ is mounted
  std::string cache_dir;  // the executor's cache (absolute): its inputs/ and pch/ are mounted
  std::string device;     // "cuda" or "cpu"
  std::map<std::string, std::string> env;  // the slot's GPU (CUDA_VISIBLE_DEVICES), or none
  Json cutlass;                            // {"include_dir", "version"} or null
  ProcessLimits limits;                    // the whole process's (no wall-clock limit)
  int depth = 2;                           // blank workers kept waiting
};

class CandidatePool : public eval::CandidateProcesses {
 public:
  CandidatePool(eval::WorkerClient worker, CandidatePoolConfig config);
  ~CandidatePool() override;

  // The slot is idle: tops the waiting blank workers up to `depth`, CUDA started in the new
  // ones; removes the folders of those used since.
  void Prepare();

  Result<std::unique_ptr<eval::WorkerSession>> Start(
      const eval::WorkerClient& worker, const Json& mounts, const ProcessLimits& limits,
      const std::map<std::string, std::string>& env) override;

  struct Counts {
    int handed_over = 0;      // candidates given a blank worker
    int started_fresh = 0;    // candidates given a fresh process instead
    std::string last_reason;  // why the last one was
  };
  Counts counts() const;

 private:
  struct Blank {
    std::string folder;
    Json mounts;  // what it was started with
    std::unique_ptr<eval::WorkerSession> session;
  };
  // Makes `blank`'s folder show the candidate of `mounts`; "" or why it cannot.
  std::string HandOver(Blank& blank, const Json& mounts) const;
  // Starts blank workers until `depth` wait (under mutex_); `device`: CUDA started too.
  void TopUp(bool device);
  Result<std::unique_ptr<eval::WorkerSession>> Fresh(const Json& mounts,
                                                     const ProcessLimits& limits,
                                                     const std::map<std::string, std::string>& env,
                                                     const std::string& reason);

  const eval::WorkerClient worker_;
  const CandidatePoolConfig config_;
  mutable std::mutex mutex_;
  std::deque<std::unique_ptr<Blank>> waiting_;  // oldest first
  int next_ = 0;
  Counts counts_;
};

// Whether every path `wanted` mounts is one `have` mounts or lies below one, a writable one only
// where `have`'s is writable; "" when so, else the first that is not.
std::string UncoveredMount(const eval::SandboxMounts& wanted, const eval::SandboxMounts& have);

}  // namespace kernelpro::serve
