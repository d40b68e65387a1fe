#include "suite/baselines.h"

#include <cctype>
#include <filesystem>

#include "core/hash.h"
#include "suite/suite_dir.h"

namespace kernelpro::suite {
namespace {

std::string Slug(const std::string& text) {
  std::string out;
  for (char c : text) {
    out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  }
  return out.empty() ? "default" : out;
}

}  // namespace

Result<Json> CachedBaselines(eval::Executor& executor, const std::string& problem_path,
                             const std::string& problem_sha256, const std::string& gpu_name) {
  const eval::EvalOptions& o = executor.options();
  // What the times depend on besides the problem and the GPU model.
  const Json timing = {{"device", o.device},           {"trials", o.timing_trials},
                       {"rounds", o.timing_rounds},    {"inputs", o.timing_inputs},
                       {"flush_bytes", o.flush_bytes}, {"seed", o.seed},
                       {"init_seed", o.init_seed}};
  const std::string file = o.cache_dir + "/baselines/" + Slug(gpu_name) + "/" +
                           problem_sha256.substr(0, 16) + "-" +
                           Sha256Hex(DumpJson(timing)).substr(0, 8) + ".json";
  if (auto cached = ReadJsonFile(file); cached.ok() && cached->contains("compile_speedup")) {
    Json out = *cached;
    out["cached"] = true;
    out["file"] = file;
    return out;
  }
  auto measured = executor.MeasureBaselines(problem_path);
  if (!measured.ok()) return measured.status();
  Json out = {
      {"eager_ms", measured->eager.summary.median},
      {"compile_ms", measured->compiled.summary.median},
      {"compile_speedup", measured->compile_speedup.estimate},
      {"compile_speedup_interval", {measured->compile_speedup.low, measured->compile_speedup.high}},
      {"calls_per_side", measured->eager.summary.count},
      {"rounds", measured->eager.block_medians.size()},
      {"method", measured->method},
      {"gpu_name", gpu_name},
      {"timing", timing},
      {"measured_at", IsoTime(NowSeconds())}};
  (void)WriteJsonFile(file, out);  // a cache: a failed write only means measuring again
  out["cached"] = false;
  out["file"] = file;
  return out;
}

}  // namespace kernelpro::suite
