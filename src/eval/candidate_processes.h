// CandidateProcesses: where the device runner gets a candidate's sandboxed process from. Without
// one (EvalContext::candidate_processes null) the runner starts a process per candidate, ahead of
// its turn where it can (device_runner.h). The evaluation server hands over blank workers it
// started before the request came (serve/candidate_pool.h): torch imported, CUDA up, nothing of
// any candidate loaded; each is used by one candidate and ended with it, as a fresh one would be.
//
// Threading: called from the device threads, one call per candidate, each holding its GPU's lease.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "core/json_io.h"
#include "core/status.h"
#include "core/subprocess.h"
#include "eval/worker_client.h"
#include "eval/worker_session.h"

namespace kernelpro::eval {

class CandidateProcesses {
 public:
  virtual ~CandidateProcesses() = default;
  // A process for the candidate whose starting request is `mounts` (what the runner would start
  // a fresh process with: the candidate, its build scope, the problem, the inputs tree, the
  // headers, its work folder `out_dir`, `prepare`), under `limits` and `env` (the GPU lease's).
  // Called once the candidate's build is done. The process may see those files at other places:
  // then its path view says where (WorkerSession::set_path_view). An error when none can be had.
  virtual Result<std::unique_ptr<WorkerSession>> Start(
      const WorkerClient& worker, const Json& mounts, const ProcessLimits& limits,
      const std::map<std::string, std::string>& env) = 0;
};

}  // namespace kernelpro::eval
