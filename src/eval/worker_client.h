// WorkerClient: runs one step of the Python worker (python/kernelpro_worker) in its own process.
//
// Every evaluation step (scan, reference, build, check, compare, time, run, inspect) is a fresh
// worker process started through RunProcess: its own process group, a wall-clock timeout,
// CPU-time/file-size/open-file limits and bounded output capture. The request goes to the worker
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

namespace kernelpro {

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
};

struct WorkerOutcome {
  ProcessResult process;
  std::optional<Json> result;  // the worker's result file, when it wrote one
  // Why a result file the worker did write could not be used (not JSON, e.g. NaN in it); empty
  // when `result` is set or there was no file.
  std::string result_error;
};

class WorkerClient {
 public:
  // Resolves the interpreter and worker path; fails clearly when no python can import torch.
  static Result<WorkerClient> Create(WorkerOptions options);

  // Runs `step` with `request`; `limits` bound the process, `extra_env` is added to it.
  // `launcher` is put before the interpreter (e.g. ncu and its options).
  Result<WorkerOutcome> Run(const std::string& step, const Json& request, const ProcessLimits& limits,
                            const std::map<std::string, std::string>& extra_env = {},
                            const std::vector<std::string>& launcher = {},
                            std::size_t capture_bytes = 16 * 1024) const;

  const std::string& python() const { return options_.python; }
  const std::string& worker_path() const { return options_.worker_path; }

 private:
  explicit WorkerClient(WorkerOptions options) : options_(std::move(options)) {}
  WorkerOptions options_;
};

}  // namespace kernelpro
