// `kernelpro doctor`: what this machine can and cannot do for kernelpro, one check per line, each
// with a status and, when not ok, the fix. The checks, in order:
//
//   python, torch, torch CUDA   the interpreter the worker would use (--python, KERNELPRO_PYTHON,
//                               else the worker's own lookup) and what its torch sees
//   c++ compiler, nvcc          what load_inline builds with (CXX, else c++; nvcc for CUDA)
//   gpu                         nvidia-smi: each GPU with its driver
//   ncu, gpu counters           Nsight Compute, and whether the driver lets this user read the
//                               performance counters (ncu's ERR_NVGPUCTRPERM)
//   cuobjdump                   SASS analysis (kernelpro's tool lookup: KERNELPRO_CUOBJDUMP, PATH,
//                               CUDA, .tools/)
//   sandbox                     bubblewrap's trial run, as eval and optimize make it
//   openai, anthropic, bedrock  whether credentials are present: "set" or "not set", never a value
//   cache                       the cache's size, split into builds, reference outputs, headers
//
// A check that cannot pass on this machine but leaves kernelpro usable (no GPU: --device cpu
// still works) is a warning; one that stops evaluation everywhere (no torch, no compiler, no
// sandbox) is a failure. The command exits 1 when any check fails.
//
// Everything doctor learns about the machine goes through Machine, so tests describe a machine
// (a GPU without nvcc, a driver that restricts counters) instead of depending on this one.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/json_io.h"
#include "core/status.h"
#include "core/subprocess.h"
#include "eval/cache.h"
#include "llm/environment.h"

namespace kernelpro::cli {

enum class CheckStatus { kOk, kWarn, kFail };

// "ok", "warn", "fail".
const char* CheckStatusName(CheckStatus status);

struct DoctorCheck {
  std::string name;  // "python", "nvcc", "gpu counters", ...
  CheckStatus status = CheckStatus::kOk;
  std::string detail;  // what was found
  std::string fix;     // what to do; empty when ok
};

// The machine, as doctor may look at it.
struct Machine {
  // Runs `argv` (argv[0] a name looked up on PATH, or a path) for at most `timeout`; a
  // ProcessResult with started = false when it cannot be started.
  std::function<ProcessResult(const std::vector<std::string>& argv, std::chrono::seconds timeout)>
      run;
  // A file's contents; nullopt when it cannot be read.
  std::function<std::optional<std::string>(const std::string& path)> read_file;
  // kernelpro's lookup of an external program (core/tool_paths.h); "" when it is nowhere.
  std::function<std::string(const std::string& name)> find_tool;
  llm::EnvLookup getenv;
  // The interpreter the worker would use, given --python ("" when not given), or why there is
  // none (eval::WorkerClient's lookup: it must import torch in isolated mode).
  std::function<Result<std::string>(const std::string& python)> worker_python;
  // The sandbox's trial run (eval::Sandbox::Create): its one-line description, or why it fails.
  std::function<Result<std::string>()> sandbox;
  std::function<Result<eval::CacheUsage>(const std::string& dir)> measure_cache;
  bool is_root = false;
};

// This machine.
Machine RealMachine();

struct DoctorOptions {
  std::string python;     // --python / KERNELPRO_PYTHON; "" = the worker's lookup
  std::string cache_dir;  // --cache-dir / KERNELPRO_CACHE_DIR; "" = the default
};

// Every check, in the order above.
std::vector<DoctorCheck> RunDoctor(const Machine& machine, const DoctorOptions& options);

// One line per check ("ok    nvcc           12.4 (/usr/local/cuda/bin/nvcc)"), a "fix:" line
// under each that is not ok, then a summary line.
std::string RenderDoctorText(const std::vector<DoctorCheck>& checks);

// {"checks": [{"name", "status", "detail", "fix"}], "ok": bool, "warnings": n, "failures": n}.
Json DoctorJson(const std::vector<DoctorCheck>& checks);

// 1 when any check failed, else 0.
int DoctorExitCode(const std::vector<DoctorCheck>& checks);

}  // namespace kernelpro::cli
