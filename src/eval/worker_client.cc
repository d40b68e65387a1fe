#include "eval/worker_client.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>

namespace kernelpro::eval {
namespace {

namespace fs = std::filesystem;

std::string EnvOr(const char* name, const std::string& fallback) {
  const char* value = std::getenv(name);
  return value && *value ? value : fallback;
}

// The interpreter always runs isolated: -I (no user site, no PYTHON* variables, no script
// directory on sys.path), -B (no .pyc written), -u (unbuffered). The worker package is put on
// sys.path by this bootstrap, since PYTHONPATH is ignored under -I.
std::vector<std::string> InterpreterArgs(const std::string& python) {
  return {python,
          "-I",
          "-B",
          "-u",
          "-c",
          "import sys, runpy; sys.path.insert(0, sys.argv.pop(1)); "
          "runpy.run_module('kernelpro_worker', run_name='__main__', alter_sys=True)"};
}

// Where the interpreter's own files live (prefixes, sys.path, torch), asked of the interpreter
// itself in isolated mode, without importing torch (which takes seconds). Empty when it cannot
// find torch.
std::optional<std::vector<std::string>> InterpreterPaths(const std::string& python) {
  ProcessOptions probe;
  probe.argv = {python, "-I", "-B", "-c",
                "import importlib.util, os, sys\n"
                "spec = importlib.util.find_spec('torch')\n"
                "if spec is None: sys.exit(3)\n"
                "paths = [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,\n"
                "         os.path.dirname(sys.executable),\n"
                "         os.path.dirname(os.path.realpath(sys.executable))]\n"
                "paths += [p for p in sys.path if p]\n"
                "paths += list(spec.submodule_search_locations or [])\n"
                "paths += [os.path.realpath(p) for p in paths]\n"
                "print('\\n'.join(p for p in paths if os.path.exists(p)))\n"};
  probe.inherit_env = false;
  probe.env = WorkerEnvironment({}, {});
  probe.limits.wall_timeout = std::chrono::seconds(60);
  auto result = RunProcess(probe);
  if (!result.ok() || !result->exited || result->exit_code != 0) return std::nullopt;
  std::vector<std::string> paths;
  std::size_t start = 0;
  const std::string& text = result->stdout_text;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    if (!line.empty() && std::find(paths.begin(), paths.end(), line) == paths.end()) {
      paths.push_back(line);
    }
    start = end + 1;
  }
  return paths;
}

// A Python file and the Python files beside it.
void AddSourceWithSiblings(const std::string& path, std::vector<std::string>& into) {
  if (path.empty()) return;
  into.push_back(path);
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(fs::path(path).parent_path(), ec)) {
    if (entry.path().extension() == ".py" && entry.is_regular_file(ec)) {
      into.push_back(entry.path().string());
    }
  }
}

}  // namespace

SandboxMounts MountsForRequest(const std::string& step, const Json& request) {
  SandboxMounts mounts;
  auto path = [&request](const char* key) { return JsonGet<std::string>(request, key, ""); };
  if (!path("out_dir").empty()) mounts.writable.push_back(path("out_dir"));
  if (!path("trace_path").empty()) {
    mounts.writable.push_back(fs::path(path("trace_path")).parent_path().string());
  }
  if (!path("build_root").empty()) {
    (step == "build" ? mounts.writable : mounts.read_only).push_back(path("build_root"));
  }
  // Precompiled headers are shared by every candidate: read-only for every step, the build too.
  if (!path("pch_dir").empty()) mounts.read_only.push_back(path("pch_dir"));
  // The CUTLASS tree builds of CUTLASS/CuTe code compile against (a load that rebuilds too).
  const std::string cutlass_include =
      JsonGet<std::string>(JsonGet<Json>(request, "cutlass", Json::object()), "include_dir", "");
  if (!cutlass_include.empty()) {
    mounts.read_only.push_back(cutlass_include);
    const fs::path util = fs::path(cutlass_include).parent_path() / "tools" / "util" / "include";
    std::error_code ec;
    if (fs::is_directory(util, ec)) mounts.read_only.push_back(util.string());
  }
  AddSourceWithSiblings(path("candidate"), mounts.read_only);
  // The energy step (eval/energy.h) loads several candidates in one process, and NVML from a
  // library a test may name.
  for (const Json& arm : JsonGet<Json>(request, "candidates", Json::array())) {
    AddSourceWithSiblings(JsonGet<std::string>(arm, "candidate", ""), mounts.read_only);
    const std::string scope = JsonGet<std::string>(arm, "build_root", "");
    if (!scope.empty()) mounts.read_only.push_back(scope);
  }
  if (!path("nvml_library").empty()) mounts.read_only.push_back(path("nvml_library"));
  AddSourceWithSiblings(path("problem"), mounts.read_only);
  // Inputs too large to store are regenerated from the problem (the reference step's recipe).
  const Json recipe = JsonGet<Json>(request, "inputs_recipe", Json::object());
  const std::string regenerate_from = JsonGet<std::string>(recipe, "problem", "");
  if (!regenerate_from.empty() && regenerate_from != path("problem")) {
    AddSourceWithSiblings(regenerate_from, mounts.read_only);
  }
  if (!path("inputs_dir").empty()) mounts.read_only.push_back(path("inputs_dir"));
  return mounts;
}

Result<WorkerClient> WorkerClient::Create(WorkerOptions options) {
  if (options.worker_path.empty()) {
    options.worker_path = EnvOr("KERNELPRO_WORKER_PATH", KERNELPRO_PYTHON_DIR);
  }
  options.worker_path = fs::absolute(options.worker_path).lexically_normal().string();
  if (!fs::exists(fs::path(options.worker_path) / "kernelpro_worker")) {
    return Status::NotFound("kernelpro_worker package not found under " + options.worker_path +
                            " (set KERNELPRO_WORKER_PATH to the directory holding it)");
  }
  if (options.python.empty()) options.python = EnvOr("KERNELPRO_PYTHON", "");
  std::optional<std::vector<std::string>> paths;
  if (options.python.empty()) {
    for (const char* candidate : {"python3", "/usr/bin/python3"}) {
      if ((paths = InterpreterPaths(candidate))) {
        options.python = candidate;
        break;
      }
    }
    if (options.python.empty()) {
      return Status::Unavailable(
          "no Python interpreter with torch found (tried python3 and /usr/bin/python3, in "
          "isolated mode: python -I ignores PYTHONPATH and the user site); install torch or set "
          "KERNELPRO_PYTHON to an interpreter that has it");
    }
  } else if (!(paths = InterpreterPaths(options.python))) {
    return Status::Unavailable(options.python +
                               " cannot import torch in isolated mode (python -I ignores "
                               "PYTHONPATH and the user site; from KERNELPRO_PYTHON or --python)");
  }
  // Absolute: a sandboxed step starts in a directory of its own, not in ours.
  options.scratch_dir = fs::absolute(options.scratch_dir).lexically_normal().string();
  std::error_code ec;
  fs::create_directories(options.scratch_dir, ec);
  if (ec) {
    return Status::IoError("cannot create the scratch directory " + options.scratch_dir + ": " +
                           ec.message());
  }
  SandboxOptions sandbox_options = options.sandbox;
  sandbox_options.read_only.insert(sandbox_options.read_only.end(), paths->begin(), paths->end());
  sandbox_options.read_only.push_back(options.worker_path);
  auto sandbox = Sandbox::Create(sandbox_options);
  if (!sandbox.ok()) {
    return WorkerClient(std::move(options), Sandbox::Unconfined(), sandbox.status());
  }
  return WorkerClient(std::move(options), std::move(*sandbox), Status::Ok());
}

Result<std::string> WorkerClient::MakeIoDir(const std::string& step) const {
  static std::atomic<int> counter{0};
  // One directory per call for the request and the result: a sandboxed step sees this directory
  // and no other part of the scratch directory.
  const std::string io_dir = options_.scratch_dir + "/kernelpro-" + step + "-" +
                             std::to_string(::getpid()) + "-" + std::to_string(counter++);
  std::error_code ec;
  fs::remove_all(io_dir, ec);
  fs::create_directories(io_dir, ec);
  if (ec) return Status::IoError("cannot create " + io_dir + ": " + ec.message());
  return io_dir;
}

ProcessOptions WorkerClient::StepProcess(const std::string& step, const Json& request,
                                         const std::string& io_dir, const ProcessLimits& limits,
                                         const std::map<std::string, std::string>& extra_env,
                                         const std::vector<std::string>& launcher,
                                         std::size_t capture_bytes, Confinement confinement) const {
  std::vector<std::string> command = launcher;
  for (const std::string& arg : InterpreterArgs(options_.python)) command.push_back(arg);
  for (const std::string& arg :
       {options_.worker_path, step, io_dir + "/request.json", io_dir + "/result.json"}) {
    command.push_back(arg);
  }
  ProcessOptions process;
  if (Sandboxed(confinement)) {
    SandboxMounts mounts = MountsForRequest(step, request);
    mounts.writable.push_back(io_dir);
    process.argv = sandbox_.Wrap(command, mounts);
  } else {
    process.argv = command;
  }
  std::map<std::string, std::string> set = options_.env;
  for (const auto& [key, value] : extra_env) set[key] = value;
  if (limits.wall_timeout.count() > 0) {
    // The worker's own watchdog, for when kernelpro is gone: a little before ours, so that the
    // worker's stack dump (where it hung) reaches the verdict; ours still kills what ignores it.
    const auto seconds = std::chrono::ceil<std::chrono::seconds>(limits.wall_timeout).count();
    set["KERNELPRO_STEP_TIMEOUT_S"] = std::to_string(seconds > 10 ? seconds - 2 : seconds + 1);
  }
  process.inherit_env = false;
  process.env = WorkerEnvironment(options_.pass_env, set);
  process.limits = limits;
  process.capture_bytes = capture_bytes;
  process.kill_after_output_bytes = std::max<std::uint64_t>(64ull << 20, 4 * capture_bytes);
  return process;
}

void WorkerClient::ReadSignalExit(bool sandboxed, ProcessResult& process) const {
  // bwrap reports a sandboxed process killed by a signal as exit 128 + signal.
  if (sandboxed && process.exited && sandbox_.ExitCodeIsSignal(process.exit_code)) {
    process.exited = false;
    process.term_signal = process.exit_code - 128;
  }
}

Result<WorkerOutcome> WorkerClient::Run(const std::string& step, const Json& request,
                                        const ProcessLimits& limits,
                                        const std::map<std::string, std::string>& extra_env,
                                        const std::vector<std::string>& launcher,
                                        std::size_t capture_bytes, Confinement confinement,
                                        int cancel_fd) const {
  if (confinement == Confinement::kSandbox && !sandbox_status_.ok()) return sandbox_status_;
  auto made = MakeIoDir(step);
  if (!made.ok()) return made.status();
  const std::string io_dir = *made;
  std::error_code ec;
  const std::string request_path = io_dir + "/request.json";
  const std::string result_path = io_dir + "/result.json";
  if (Status s = WriteJsonFile(request_path, request); !s.ok()) {
    fs::remove_all(io_dir, ec);
    return s;
  }
  const bool sandboxed = Sandboxed(confinement);
  ProcessOptions process =
      StepProcess(step, request, io_dir, limits, extra_env, launcher, capture_bytes, confinement);
  process.cancel_fd = cancel_fd;
  auto ran = RunProcess(process);
  if (!ran.ok()) {
    fs::remove_all(io_dir, ec);
    return ran.status();
  }
  WorkerOutcome outcome{std::move(*ran), std::nullopt, ""};
  if (!outcome.process.started) {
    fs::remove_all(io_dir, ec);
    return Status::Unavailable("cannot start " + process.argv[0] + ": " +
                               outcome.process.start_error);
  }
  ReadSignalExit(sandboxed, outcome.process);
  if (fs::exists(result_path)) {
    auto parsed = ReadJsonFile(result_path);
    if (parsed.ok()) {
      outcome.result = std::move(*parsed);
    } else {
      outcome.result_error = parsed.status().message();
    }
  }
  fs::remove_all(io_dir, ec);
  return outcome;
}

}  // namespace kernelpro::eval
