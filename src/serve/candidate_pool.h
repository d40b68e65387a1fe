// The evaluation server's blank workers: per slot (GPU), one candidate process started before
// any request needs it (torch imported, CUDA up, the profiler started: seconds), and handed to
// the next candidate the slot evaluates (eval/candidate_processes.h). Nothing is shared between
// candidates: a blank worker has loaded no candidate code, serves one candidate and ends with it;
// the next is started once that job is over, while its GPU is idle (a CUDA context made during a
// timing would disturb it).
//
// A blank worker is started in the sandbox `eval` uses, seeing a folder of its own, made for it:
//   STATE/slots/<slot>/blank-<n>/src/problem.py, src/candidate.py   empty until the hand-over
//   STATE/slots/<slot>/blank-<n>/build/                               empty until the hand-over
// besides the cache's inputs tree and precompiled headers (read-only) and the slot's work folder
// (the slot executor's work_dir, writable), as a fresh candidate process would. At the hand-over
// the candidate's and the problem's text are written into the two files (in place: a bind mount
// shows the file it was made with), its build scope is linked into build/, and the session's path
// view (WorkerSession::set_path_view) maps the paths the runner names to those. The hand-over
// checks that every path the candidate's own sandbox would mount is one the blank worker mounted
// (or lies below one, writable only where it was); when one is not, or the worker died, or its GPU
// is not the lease's, the candidate gets a fresh process as in `eval` and the pool says why.
//
// Thread-safety: Prepare and Start may run on different threads (the slot's, a device thread).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "eval/candidate_processes.h"
#include "eval/worker_client.h"

namespace kernelpro::serve {

struct CandidatePoolConfig {
  std::string root;       // this slot's folder: STATE/slots/<slot>
  std::string work_dir;   // the slot executor's work_dir (absolute): candidates' outputs
  std::string cache_dir;  // the executor's cache (absolute): its inputs/ and pch/ are mounted
  std::string device;     // "cuda" or "cpu"
  std::map<std::string, std::string> env;  // the slot's GPU (CUDA_VISIBLE_DEVICES), or none
  Json cutlass;                            // {"include_dir", "version"} or null
  ProcessLimits limits;                    // the whole process's (no wall-clock limit)
};

class CandidatePool : public eval::CandidateProcesses {
 public:
  CandidatePool(eval::WorkerClient worker, CandidatePoolConfig config);
  ~CandidatePool() override;

  // Starts a blank worker unless one is waiting and alive; removes the folders of those used.
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
  Result<std::unique_ptr<eval::WorkerSession>> Fresh(const Json& mounts,
                                                     const ProcessLimits& limits,
                                                     const std::map<std::string, std::string>& env,
                                                     const std::string& reason);

  const eval::WorkerClient worker_;
  const CandidatePoolConfig config_;
  mutable std::mutex mutex_;
  std::unique_ptr<Blank> waiting_;
  int next_ = 0;
  Counts counts_;
};

// Whether every path `wanted` mounts is one `have` mounts or lies below one, a writable one only
// where `have`'s is writable; "" when so, else the first that is not.
std::string UncoveredMount(const eval::SandboxMounts& wanted, const eval::SandboxMounts& have);

}  // namespace kernelpro::serve
