#include "eval/worker_client.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>

namespace kernelpro {
namespace {

std::string EnvOr(const char* name, const std::string& fallback) {
  const char* value = std::getenv(name);
  return value && *value ? value : fallback;
}

bool CanImportTorch(const std::string& python) {
  ProcessOptions probe;
  probe.argv = {python, "-c",
                "import importlib.util, sys; sys.exit(0 if importlib.util.find_spec('torch') else 1)"};
  probe.limits.wall_timeout = std::chrono::seconds(30);
  auto result = RunProcess(probe);
  return result.ok() && result->exited && result->exit_code == 0;
}

}  // namespace

Result<WorkerClient> WorkerClient::Create(WorkerOptions options) {
  if (options.worker_path.empty()) {
    options.worker_path = EnvOr("KERNELPRO_WORKER_PATH", KERNELPRO_PYTHON_DIR);
  }
  if (!std::filesystem::exists(std::filesystem::path(options.worker_path) / "kernelpro_worker")) {
    return Status::NotFound("kernelpro_worker package not found under " + options.worker_path +
                            " (set KERNELPRO_WORKER_PATH to the directory holding it)");
  }
  if (options.python.empty()) options.python = EnvOr("KERNELPRO_PYTHON", "");
  if (options.python.empty()) {
    for (const char* candidate : {"python3", "/usr/bin/python3"}) {
      if (CanImportTorch(candidate)) {
        options.python = candidate;
        break;
      }
    }
    if (options.python.empty()) {
      return Status::Unavailable(
          "no Python interpreter with torch found (tried python3 and /usr/bin/python3); install "
          "torch or set KERNELPRO_PYTHON to an interpreter that has it");
    }
  } else if (!CanImportTorch(options.python)) {
    return Status::Unavailable(options.python + " cannot import torch (from KERNELPRO_PYTHON or "
                               "--python)");
  }
  std::filesystem::create_directories(options.scratch_dir);
  return WorkerClient(std::move(options));
}

Result<WorkerOutcome> WorkerClient::Run(const std::string& step, const Json& request,
                                        const ProcessLimits& limits,
                                        const std::map<std::string, std::string>& extra_env,
                                        const std::vector<std::string>& launcher,
                                        std::size_t capture_bytes) const {
  static std::atomic<int> counter{0};
  std::string stem = options_.scratch_dir + "/" + step + "-" + std::to_string(::getpid()) + "-" +
                     std::to_string(counter++);
  std::string request_path = stem + ".request.json";
  std::string result_path = stem + ".result.json";
  std::filesystem::remove(result_path);
  if (Status s = WriteJsonFile(request_path, request); !s.ok()) return s;

  ProcessOptions process;
  process.argv = launcher;
  for (const std::string& arg : {options_.python, std::string("-m"), std::string("kernelpro_worker"),
                                 step, request_path, result_path}) {
    process.argv.push_back(arg);
  }
  process.env = options_.env;
  for (const auto& [key, value] : extra_env) process.env[key] = value;
  std::string pythonpath = options_.worker_path;
  if (const char* existing = std::getenv("PYTHONPATH"); existing && *existing) {
    pythonpath += std::string(":") + existing;
  }
  process.env["PYTHONPATH"] = pythonpath;
  process.env["PYTHONUNBUFFERED"] = "1";
  process.env["PYTHONDONTWRITEBYTECODE"] = "1";
  process.limits = limits;
  process.capture_bytes = capture_bytes;
  process.kill_after_output_bytes = std::max<std::uint64_t>(64ull << 20, 4 * capture_bytes);

  auto ran = RunProcess(process);
  if (!ran.ok()) return ran.status();
  WorkerOutcome outcome{std::move(*ran), std::nullopt, ""};
  if (!outcome.process.started) {
    return Status::Unavailable("cannot start " + options_.python + ": " + outcome.process.start_error);
  }
  if (std::filesystem::exists(result_path)) {
    auto parsed = ReadJsonFile(result_path);
    if (parsed.ok()) {
      outcome.result = std::move(*parsed);
    } else {
      outcome.result_error = parsed.status().message();
    }
  }
  std::error_code ignored;
  std::filesystem::remove(request_path, ignored);
  std::filesystem::remove(result_path, ignored);
  return outcome;
}

}  // namespace kernelpro
