#include "app/executor_setup.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <utility>

namespace kernelpro::app {

namespace fs = std::filesystem;

Result<CreatedDirectory> CreatedDirectory::Create(const std::string& path,
                                                  const std::string& label) {
  CreatedDirectory made;
  std::error_code ec;
  fs::path absolute = fs::absolute(path, ec);
  made.path_ = (ec ? fs::path(path) : absolute).lexically_normal().string();
  if (made.path_.size() > 1 && made.path_.back() == '/') made.path_.pop_back();
  const fs::file_status status = fs::status(path, ec);
  if (fs::exists(status)) {
    if (!fs::is_directory(status)) {
      return Status::IoError("cannot create " + label + " " + path +
                             ": it exists and is not a directory");
    }
    for (fs::directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
      made.before_.insert(it->path().filename().string());
    }
    return made;
  }
  // The topmost missing ancestor is what Undo removes: everything below it is this command's.
  fs::path missing = made.path_;
  for (fs::path parent = missing.parent_path(); !parent.empty() && parent != missing;
       parent = parent.parent_path()) {
    if (fs::exists(fs::status(parent, ec))) break;
    missing = parent;
  }
  fs::create_directories(path, ec);
  if (ec) {
    // Parents made before the failing component are taken back at once.
    std::error_code ignored;
    fs::remove_all(missing, ignored);
    return Status::IoError("cannot create " + label + " " + path + ": " + ec.message());
  }
  made.created_root_ = missing.string();
  return made;
}

void CreatedDirectory::Undo() {
  std::error_code ec;
  if (!created_root_.empty()) {
    fs::remove_all(created_root_, ec);
  } else if (!path_.empty()) {
    std::vector<fs::path> added;
    for (fs::directory_iterator it(path_, ec), end; !ec && it != end; it.increment(ec)) {
      if (!before_.contains(it->path().filename().string())) added.push_back(it->path());
    }
    for (const fs::path& entry : added) fs::remove_all(entry, ec);
  }
  path_.clear();
  created_root_.clear();
}

void CreatedDirectory::RemoveIfEmpty() {
  std::error_code ec;
  if (!created_root_.empty()) {
    // Deepest first; fs::remove refuses a directory that is not empty, which ends the walk.
    for (fs::path dir = path_; fs::remove(dir, ec) && !ec; dir = dir.parent_path()) {
      if (dir == created_root_) break;
    }
  }
  path_.clear();
  created_root_.clear();
}

std::string DefaultCacheDir() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return std::string(xdg) + "/kernelpro";
  if (const char* home = std::getenv("HOME"); home && *home)
    return std::string(home) + "/.cache/kernelpro";
  return ".kernelpro/cache";
}

Status NormalizeGpus(std::vector<std::string>& gpus) {
  std::vector<std::string> split;
  for (const std::string& value : gpus) {
    std::size_t start = 0;
    for (;;) {
      std::size_t comma = value.find(',', start);
      split.push_back(value.substr(start, comma == std::string::npos ? comma : comma - start));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  for (std::size_t i = 0; i < split.size(); ++i) {
    const std::string& gpu = split[i];
    if (gpu.empty()) {
      return Status::InvalidArgument(
          "--gpus: an empty GPU ordinal; give ordinals separated by commas, e.g. --gpus 0,1");
    }
    if (!std::all_of(gpu.begin(), gpu.end(), [](unsigned char c) { return std::isdigit(c); })) {
      return Status::InvalidArgument("--gpus: '" + gpu +
                                     "' is not a GPU ordinal (digits only, e.g. --gpus 0,1); to "
                                     "name the GPU model the prompts target, use --gpu");
    }
    if (std::find(split.begin(), split.begin() + i, gpu) != split.begin() + i) {
      return Status::InvalidArgument("--gpus: GPU " + gpu + " is listed twice");
    }
  }
  gpus = std::move(split);
  return Status::Ok();
}

Result<eval::Executor> StartExecutor(eval::EvalOptions& options, const std::string& python,
                                     bool runs_candidates) {
  if (Status s = NormalizeGpus(options.gpus); !s.ok()) return s;
  auto fail = [](const std::string& message) -> Result<eval::Executor> {
    return Status::InvalidArgument(message);
  };
  const bool default_work_dir = options.work_dir.empty();
  if (options.cache_dir.empty()) options.cache_dir = DefaultCacheDir();
  if (default_work_dir) {
    std::error_code ec;
    fs::path temp = fs::temp_directory_path(ec);
    if (ec) return fail("no usable temporary directory (TMPDIR): " + ec.message());
    options.work_dir = (temp / "kernelpro-work").string();
  }
  // Made here, without exceptions, so that a path that cannot be a directory is a clear error and
  // not an abort deeper down.
  auto cache = CreatedDirectory::Create(options.cache_dir, "--cache-dir");
  if (!cache.ok()) return fail(cache.status().message());
  auto work = CreatedDirectory::Create(options.work_dir,
                                       default_work_dir ? "the work directory" : "--work-dir");
  if (!work.ok()) {
    cache->RemoveIfEmpty();
    return fail(work.status().message());
  }
  eval::WorkerOptions worker_options;
  worker_options.python = python;
  worker_options.scratch_dir = options.work_dir + "/requests";
  worker_options.pass_env = options.pass_env;
  worker_options.sandbox.enabled = !options.unsafe_no_sandbox;
  worker_options.sandbox.read_only = options.sandbox_read_only;
  for (const char* name : {"CUTLASS_DIR", "KERNELPRO_CUTLASS_DIR"}) {
    if (const char* dir = std::getenv(name); dir && *dir) {
      worker_options.sandbox.read_only.push_back(dir);
    }
  }
  auto scratch = CreatedDirectory::Create(worker_options.scratch_dir, "the request directory");
  Result<eval::WorkerClient> worker = scratch.ok() ? eval::WorkerClient::Create(worker_options)
                                                   : Result<eval::WorkerClient>(scratch.status());
  if (!worker.ok()) {
    // Cache and work directories may be shared with other kernelpro processes: only what this one
    // made and left empty goes.
    if (scratch.ok()) scratch->RemoveIfEmpty();
    work->RemoveIfEmpty();
    cache->RemoveIfEmpty();
    return fail(worker.status().message());
  }
  // Refused here, before a run directory or anything else is made, not at the first candidate.
  if (runs_candidates && !worker->SandboxReady().ok()) {
    scratch->RemoveIfEmpty();
    work->RemoveIfEmpty();
    cache->RemoveIfEmpty();
    return fail(worker->SandboxReady().message());
  }
  return eval::Executor(std::move(*worker), options);
}

Result<Json> InspectDevice(const eval::Executor& executor, const std::string& device) {
  ProcessLimits limits;
  limits.wall_timeout = std::chrono::seconds(120);
  eval::GpuPool::Lease lease = executor.gpu_pool().Acquire();
  auto outcome = executor.worker().Run("inspect", Json{{"device", device}}, limits, lease.Env());
  if (!outcome.ok()) return outcome.status();
  if (!outcome->result) {
    return Status::Internal("the inspect step died: " + outcome->process.Describe());
  }
  return JsonGet<Json>(*outcome->result, "info", Json::object());
}

}  // namespace kernelpro::app
