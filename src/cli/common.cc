#include "cli/common.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "agents/benchmarking_agent.h"
#include "core/text.h"
#include "eval/cache.h"

namespace kernelpro::cli {

std::string DisplayPath(const std::string& path) {
  namespace fs = std::filesystem;
  auto under = [](const fs::path& base, const fs::path& p) -> std::optional<fs::path> {
    if (base.empty() || !p.is_absolute()) return std::nullopt;
    const fs::path rel = p.lexically_normal().lexically_relative(base.lexically_normal());
    if (rel.empty() || *rel.begin() == "..") return std::nullopt;
    return rel;
  };
  std::error_code ec;
  const fs::path p(path);
  if (auto rel = under(fs::current_path(ec), p); rel && !ec) return rel->string();
  const char* home = std::getenv("HOME");
  if (home != nullptr && *home != '\0' && std::string(home) != "/") {
    if (auto rel = under(fs::path(home), p)) return "~/" + rel->string();
  }
  return path;
}
namespace {

namespace fs = std::filesystem;

// 1e+06 prints as 1000000, 0.001 as 0.001: bounds as a user would write them.
std::string BoundText(double bound) {
  if (bound == std::floor(bound) && std::fabs(bound) < 1e15) {
    return std::to_string(static_cast<long long>(bound));
  }
  std::string text = FormatFixed(bound, 6);
  while (text.back() == '0') text.pop_back();
  return text;
}

// ">= 0", "from 1 to 1000", "> 0 and <= 86400": the accepted values, for messages and --help.
std::string BoundsText(const NumberRange& r) {
  const bool no_max = r.max >= std::numeric_limits<double>::max();
  const bool no_min = r.min <= std::numeric_limits<double>::lowest();
  if (no_min && no_max) return "";
  if (no_max) return (r.min_exclusive ? "> " : ">= ") + BoundText(r.min);
  if (r.min_exclusive) return "> " + BoundText(r.min) + " and <= " + BoundText(r.max);
  if (no_min) return "<= " + BoundText(r.max);
  return "from " + BoundText(r.min) + " to " + BoundText(r.max);
}

CLI::Validator NumberValidator(const NumberRange& range) {
  return CLI::Validator([range](std::string& text) { return CheckNumber(text, range); },
                        BoundsText(range));
}

}  // namespace

std::string CheckNumber(const std::string& text, const NumberRange& range) {
  std::string_view digits = text;
  if (!digits.empty() && digits.front() == '+') digits.remove_prefix(1);
  double value = 0;
  bool parsed = false;
  if (range.whole) {
    long long whole = 0;
    auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), whole);
    parsed = !digits.empty() && error == std::errc() && end == digits.data() + digits.size();
    value = static_cast<double>(whole);
  } else {
    auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    parsed = !digits.empty() && error == std::errc() && end == digits.data() + digits.size() &&
             std::isfinite(value);
  }
  const bool below = range.min_exclusive ? !(value > range.min) : !(value >= range.min);
  if (!parsed || below || !(value <= range.max)) {
    const std::string bounds = BoundsText(range);
    return "'" + text + "' is not accepted: give " +
           (range.whole ? "a whole number" : "a finite number") +
           (bounds.empty() ? "" : " " + bounds);
  }
  return "";
}

CLI::Validator FiniteRange(double min, double max) {
  return NumberValidator({.min = min, .max = max});
}

CLI::Validator PositiveUpTo(double max) {
  return NumberValidator({.min = 0, .max = max, .min_exclusive = true});
}

CLI::Validator WholeRange(double min, double max) {
  return NumberValidator({.min = min, .max = max, .whole = true});
}

CLI::Validator InputFile() {
  return CLI::Validator(
      [](std::string& path) -> std::string {
        std::error_code ec;
        const fs::file_status status = fs::status(path, ec);
        if (!fs::exists(status)) return path + ": no such file";
        if (fs::is_directory(status)) return path + ": is a directory, not a file";
        if (::access(path.c_str(), R_OK) != 0) return path + ": not readable";
        return "";
      },
      "FILE");
}

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

void EnforceCacheLimit(const std::string& cache_dir, const char* command) {
  const char* env = std::getenv(kCacheMaxSizeEnv);
  auto limit = eval::ParseCacheLimit(env ? env : "");
  const std::string prefix = std::string("kernelpro ") + command + ": ";
  if (!limit.ok()) {
    std::cerr << prefix << kCacheMaxSizeEnv << ": " << limit.status().message()
              << "; the cache was not pruned\n";
    return;
  }
  if (!*limit) return;
  const std::string dir = cache_dir.empty() ? DefaultCacheDir() : cache_dir;
  eval::PruneOptions options;
  options.max_bytes = **limit;
  auto pruned = eval::PruneCache(dir, options);
  if (!pruned.ok()) {
    std::cerr << prefix
              << "could not hold the cache to its size limit: " << pruned.status().message()
              << "\n";
    return;
  }
  const std::string size = eval::FormatByteSize(**limit);
  if (pruned->freed_bytes > 0) {
    std::cerr << prefix << "the cache " << dir << " was over its " << size << " limit ("
              << kCacheMaxSizeEnv << "): removed " << pruned->removed.size()
              << " least recently used entries (" << eval::FormatByteSize(pruned->freed_bytes)
              << "); it holds " << eval::FormatByteSize(pruned->remaining_bytes) << "\n";
  }
  if (!pruned->target_reached) {
    std::cerr << prefix << "the cache " << dir << " holds "
              << eval::FormatByteSize(pruned->remaining_bytes) << ", above its " << size
              << " limit (" << kCacheMaxSizeEnv << "): the rest is in use or was used in the last "
              << "10 minutes\n";
  }
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

std::optional<eval::Executor> MakeExecutor(eval::EvalOptions& options, const std::string& python,
                                           const char* command_name, bool runs_candidates) {
  if (Status s = NormalizeGpus(options.gpus); !s.ok()) {
    std::cerr << "kernelpro " << command_name << ": " << s.message() << "\n";
    return std::nullopt;
  }
  auto fail = [&](const std::string& message) -> std::optional<eval::Executor> {
    std::cerr << "kernelpro " << command_name << ": " << message << "\n";
    return std::nullopt;
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
  if (options.unsafe_no_sandbox) {
    std::cerr << "kernelpro " << command_name
              << ": WARNING: --unsafe-no-sandbox: candidate code runs unconfined, with your "
                 "permissions, your files and the network\n";
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

Result<roofline::ReferenceAnalysis> RunStageOne(eval::Executor& executor,
                                                const std::string& problem,
                                                const std::optional<roofline::GpuSpec>& forced,
                                                const roofline::RooflineOptions& roofline) {
  return agents::RunStageOne(executor, problem, forced, roofline);
}

std::unique_ptr<ProgressReporter> MakeProgress(const std::string& label, bool quiet) {
  if (quiet) return nullptr;
  ProgressOptions options;
  options.terminal = ProgressReporter::StderrIsTerminal();
  if (options.terminal) options.width = ProgressReporter::StderrWidth();
  return std::make_unique<ProgressReporter>(std::cerr, label, options);
}

}  // namespace kernelpro::cli
