// WorkerClient: runs one step of the Python worker (python/kernelpro_worker) in its own process.
//
// Every evaluation step (scan, reference, build, check, compare, time, run, inspect) is a fresh
// worker process started through RunProcess: its own process group, a wall-clock timeout (which
// the worker also enforces on itself, in case kernelpro dies), a parent-death signal,
// CPU-time/file-size/open-file limits and bounded output capture. The interpreter runs isolated
// (`python -I`: no user site, no PYTHON* variables) with an allow-listed environment, and steps
// given SandboxMounts run inside the sandbox (eval/sandbox.h). The request goes to the worker
// as a JSON file and the result comes back as a JSON file, so a candidate that floods stdout
// cannot corrupt it. A worker that dies without writing a result is described by WorkerOutcome's
// `process`. Thread-safe: steps may run concurrently from several threads.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/json_io.h"
#include "core/status.h"
#include "core/subprocess.h"
#include "eval/sandbox.h"

namespace kernelpro::eval {

struct WorkerOptions {
  // Interpreter that has torch. Empty: $KERNELPRO_PYTHON, else the first of python3 and
  // /usr/bin/python3 that can import torch.
  std::string python;
  // Directory holding the kernelpro_worker package. Empty: $KERNELPRO_WORKER_PATH, else the
  // source tree this binary was built from.
  std::string worker_path;
  // Scratch directory for request/result files.
  std::string scratch_dir = "/tmp";
  // Extra environment for every step (e.g. CUDA_VISIBLE_DEVICES, MAX_JOBS).
  std::map<std::string, std::string> env;
  // Names of kernelpro's environment variables passed to workers beyond the allow-list
  // (--pass-env); credentials never are.
  std::vector<std::string> pass_env;
  // The sandbox for steps that run candidate code; enabled = false is --unsafe-no-sandbox.
  SandboxOptions sandbox;
};

struct WorkerOutcome {
  ProcessResult process;
  std::optional<Json> result;  // the worker's result file, when it wrote one
  // Why a result file the worker did write could not be used (not JSON, e.g. NaN in it); empty
  // when `result` is set or there was no file.
  std::string result_error;
};

// Where a step runs: unconfined (steps that never import candidate code: reference, compare,
// inspect, analyze) or in the sandbox, seeing what MountsForRequest lets through.
enum class Confinement { kNone, kSandbox };

// What a sandboxed step may see, from the paths its request names (docs/worker-protocol.md):
// read-only: "candidate" and "problem" (each with the Python files beside it, which it may
// import; also the problem that "inputs_recipe" regenerates large inputs from), "inputs_dir",
// "build_root", "pch_dir" (for every step), the CUTLASS tree of "cutlass" (its "include_dir" and
// the tools/util/include beside it, which builds of CUTLASS code read); writable: "out_dir", the
// folder of "trace_path", and for the build step "build_root". Nothing else a request names is
// mounted — in particular no reference outputs and no cache directory.
SandboxMounts MountsForRequest(const std::string& step, const Json& request);

class WorkerClient {
 public:
  // Resolves the interpreter and worker path and tries the sandbox; fails clearly when no python
  // can import torch in isolated mode. A sandbox that cannot be set up is not an error here (steps
  // that never run candidate code need none) but in SandboxReady() and in every sandboxed Run.
  static Result<WorkerClient> Create(WorkerOptions options);

  // OK when sandboxed steps can run: the sandbox works, or the user chose --unsafe-no-sandbox.
  // Otherwise the reason and what to do; callers check it before evaluating anything.
  const Status& SandboxReady() const { return sandbox_status_; }

  // Runs `step` with `request`; `limits` bound the process, `extra_env` is added to it.
  // `launcher` is put before the interpreter (e.g. ncu and its options). With
  // Confinement::kSandbox the step (launcher included) runs in the sandbox and sees only the
  // paths MountsForRequest(step, request) gives it besides the system's. A readable `cancel_fd`
  // ends the step (ProcessOptions::cancel_fd).
  Result<WorkerOutcome> Run(const std::string& step, const Json& request,
                            const ProcessLimits& limits,
                            const std::map<std::string, std::string>& extra_env = {},
                            const std::vector<std::string>& launcher = {},
                            std::size_t capture_bytes = 16 * 1024,
                            Confinement confinement = Confinement::kNone, int cancel_fd = -1) const;

  // The pieces of Run, for a worker that serves many requests (worker_session.h): a fresh
  // request/result folder under the scratch directory; the process that runs `step` with that
  // folder (writable in the sandbox, with MountsForRequest(step, request)); whether a step of
  // that confinement runs sandboxed; and bwrap's "exit 128 + signal" turned back into the signal.
  Result<std::string> MakeIoDir(const std::string& step) const;
  ProcessOptions StepProcess(const std::string& step, const Json& request,
                             const std::string& io_dir, const ProcessLimits& limits,
                             const std::map<std::string, std::string>& extra_env,
                             const std::vector<std::string>& launcher, std::size_t capture_bytes,
                             Confinement confinement) const;
  bool Sandboxed(Confinement confinement) const {
    return confinement == Confinement::kSandbox && sandbox_.active();
  }
  void ReadSignalExit(bool sandboxed, ProcessResult& process) const;

  const std::string& python() const { return options_.python; }
  const std::string& worker_path() const { return options_.worker_path; }
  const Sandbox& sandbox() const { return sandbox_; }

 private:
  WorkerClient(WorkerOptions options, Sandbox sandbox, Status sandbox_status)
      : options_(std::move(options)),
        sandbox_(std::move(sandbox)),
        sandbox_status_(std::move(sandbox_status)) {}
  WorkerOptions options_;
  Sandbox sandbox_;
  Status sandbox_status_;
};

}  // namespace kernelpro::eval
