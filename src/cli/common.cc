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

CLI::Validator NumberValidator(const NumberRange& range) {
  return CLI::Validator([range](std::string& text) { return CheckNumber(text, range); },
                        BoundsText(range));
}

}  // namespace

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

std::optional<eval::Executor> MakeExecutor(eval::EvalOptions& options, const std::string& python,
                                           const char* command_name, bool runs_candidates) {
  auto started = app::StartExecutor(options, python, runs_candidates);
  if (!started.ok()) {
    std::cerr << "kernelpro " << command_name << ": " << started.status().message() << "\n";
    return std::nullopt;
  }
  if (options.unsafe_no_sandbox) {
    std::cerr << "kernelpro " << command_name << ": " << app::kUnsafeNoSandboxWarning << "\n";
  }
  return std::move(*started);
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
