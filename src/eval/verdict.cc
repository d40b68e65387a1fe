#include "eval/verdict.h"

#include <array>
#include <cmath>
#include <iomanip>
#include <optional>
#include <sstream>
#include <utility>

#include "core/enum_names.h"
#include "eval/speed_of_light.h"

namespace kernelpro::eval {

namespace {

// Stored in run databases and tree JSON: never rename.
constexpr std::array<std::pair<EvalStatus, const char*>, 6> kEvalStatusNames = {
    {{EvalStatus::kCompileError, "compile_error"},
     {EvalStatus::kRuntimeError, "runtime_error"},
     {EvalStatus::kTimeout, "timeout"},
     {EvalStatus::kIncorrect, "incorrect"},
     {EvalStatus::kCorrect, "correct"},
     {EvalStatus::kLlmError, "llm_error"}}};

}  // namespace

const char* EvalStatusName(EvalStatus status) { return NameOf(kEvalStatusNames, status); }

std::optional<EvalStatus> ParseEvalStatus(std::string_view text) {
  return ValueOf(kEvalStatusNames, text);
}

EvalStatus StatusFromWorker(const std::string& worker_status) {
  if (worker_status == "compile_error") return EvalStatus::kCompileError;
  if (worker_status == "timeout") return EvalStatus::kTimeout;
  if (worker_status == "incorrect") return EvalStatus::kIncorrect;
  return EvalStatus::kRuntimeError;
}

namespace {

std::string LastLines(const std::string& text, std::size_t max_lines, std::size_t max_chars) {
  std::string trimmed = text;
  while (!trimmed.empty() && (trimmed.back() == '\n' || trimmed.back() == ' ')) trimmed.pop_back();
  std::size_t start = trimmed.size();
  for (std::size_t n = 0; n < max_lines && start > 0; ++n) {
    std::size_t newline = trimmed.rfind('\n', start - 1);
    start = newline == std::string::npos ? 0 : newline;
  }
  std::string tail = trimmed.substr(start);
  if (!tail.empty() && tail.front() == '\n') tail.erase(0, 1);
  if (tail.size() > max_chars) tail = tail.substr(tail.size() - max_chars);
  return tail;
}

}  // namespace

std::pair<EvalStatus, std::string> ClassifyProcessFailure(const std::string& step,
                                                          const ProcessResult& process) {
  std::string where = " during " + step;
  if (process.timed_out) {
    return {EvalStatus::kTimeout,
            process.Describe() + where + " (an endless loop or a hung kernel?)"};
  }
  if (process.output_limit_hit) {
    return {EvalStatus::kRuntimeError, process.Describe() + where};
  }
  // torch prints this on every CPU-only import; it is never the reason a worker died.
  std::string stderr_text = process.stderr_text;
  for (std::string noise = "No CUDA runtime is found";;) {
    std::size_t at = stderr_text.find(noise);
    if (at == std::string::npos) break;
    std::size_t end = stderr_text.find('\n', at);
    stderr_text.erase(at, end == std::string::npos ? std::string::npos : end - at + 1);
  }
  std::string tail = LastLines(stderr_text, 6, 1500);
  // The worker's own watchdog (faulthandler, armed by KERNELPRO_STEP_TIMEOUT_S) ended it: it
  // prints "Timeout (0:05:00)!" and every thread's stack, then exits with status 1.
  if (process.exited && process.exit_code == 1) {
    std::size_t at = stderr_text.find("Timeout (");
    std::size_t end = at == std::string::npos ? at : stderr_text.find(")!", at);
    if (end != std::string::npos && end - at < 40) {
      std::string limit = stderr_text.substr(at + 9, end - at - 9);
      std::string message = "timed out: the worker stopped itself at its time limit (" + limit +
                            ")" + where + " (an endless loop or a hung kernel?)";
      if (!tail.empty()) message += "; where it was: " + tail;
      return {EvalStatus::kTimeout, message};
    }
  }
  std::string message = "worker " + process.Describe() + where;
  if (process.exited && process.exit_code == 0) {
    message += " without writing its result (did the candidate end the process, e.g. os._exit?)";
  }
  if (!tail.empty()) message += ": " + tail;
  return {EvalStatus::kRuntimeError, message};
}

std::string NoisyTimingReason(const EvalResult& r) {
  if (!r.speedup) return "";
  auto percent = [](double fraction) {
    return std::to_string(static_cast<long long>(std::llround(100 * fraction))) + "%";
  };
  std::string reason;
  auto add = [&reason](const std::string& part) { reason += (reason.empty() ? "" : "; ") + part; };
  if (NoisyInterval(*r.speedup)) {
    add("the " + percent(r.speedup->confidence) + " interval spans " +
        percent((r.speedup->high - r.speedup->low) / r.speedup->estimate) + " of the estimate");
  }
  for (const auto& [name, time] :
       {std::pair{"reference", &r.reference_time}, std::pair{"candidate", &r.candidate_time}}) {
    if (*time && NoisySpread((*time)->summary)) {
      add(std::string("the ") + name + "'s IQR is " + percent((*time)->summary.relative_spread) +
          " of its median");
    }
  }
  return reason;
}

Json ToJson(const EvalResult& r) {
  auto number_or_null = [](const std::optional<double>& v) -> Json {
    return v && std::isfinite(*v) ? Json(*v) : Json(nullptr);
  };
  auto timing = [](const std::optional<TimingSummary>& t) -> Json {
    if (!t) return nullptr;
    return Json{{"median_ms", t->summary.median}, {"mean_ms", t->summary.mean},
                {"min_ms", t->summary.min},       {"max_ms", t->summary.max},
                {"p10_ms", t->summary.p10},       {"p90_ms", t->summary.p90},
                {"iqr_ms", t->summary.iqr},       {"relative_spread", t->summary.relative_spread},
                {"count", t->summary.count},      {"block_medians_ms", t->block_medians}};
  };
  Json findings = Json::array();
  for (const Finding& f : r.findings) {
    findings.push_back({{"rule", f.rule}, {"severity", f.severity}, {"message", f.message}});
  }
  Json j{
      {"candidate", r.candidate},
      {"status", EvalStatusName(r.status)},
      {"message", r.message},
      {"findings", findings},
      {"precision_warning", r.precision_warning},
      {"gpu", r.gpu},
      {"sandbox", r.sandbox},
      {"sandboxed", r.sandboxed},
      {"reference_ms",
       number_or_null(r.reference_time ? std::optional<double>(r.reference_time->summary.median)
                                       : std::nullopt)},
      {"candidate_ms",
       number_or_null(r.candidate_time ? std::optional<double>(r.candidate_time->summary.median)
                                       : std::nullopt)},
      {"speedup",
       number_or_null(r.speedup ? std::optional<double>(r.speedup->estimate) : std::nullopt)},
      {"speedup_interval",
       r.speedup ? Json::array({r.speedup->low, r.speedup->high}) : Json(nullptr)},
      {"speedup_confidence", r.speedup ? Json(r.speedup->confidence) : Json(nullptr)},
      {"noisy_timing", NoisyTimingReason(r)},
      {"sol_fraction",
       r.speed_of_light && r.speed_of_light->available && r.speed_of_light->no_fraction.empty()
           ? number_or_null(r.speed_of_light->fraction)
           : Json(nullptr)},
      {"speed_of_light", r.speed_of_light ? ToJson(*r.speed_of_light) : Json(nullptr)},
      {"timing_method", r.timing_method},
      {"criterion", r.criterion},
      {"device_records", r.device_records},
      {"process_spread", r.process_spread},
      {"speedup_in_process", number_or_null(r.speedup_in_process)},
      {"host_launch_us", number_or_null(r.candidate_calls.LaunchMedianUs())},
      {"reference_host_ms", number_or_null(r.reference_calls.HostMedianMs())},
      {"candidate_host_ms", number_or_null(r.candidate_calls.HostMedianMs())},
      {"reference_calls", CallFactsJson(r.reference_calls)},
      {"candidate_calls", CallFactsJson(r.candidate_calls)},
      {"peak_device_bytes", PeakDeviceBytesJson(r.step_costs)},
      {"step_seconds", StepSecondsJson(r.step_costs)},
      {"reference_timing", timing(r.reference_time)},
      {"candidate_timing", timing(r.candidate_time)},
      {"compiled_timing", timing(r.compiled_time)},
      {"speedup_vs_compiled",
       number_or_null(r.speedup_vs_compiled ? std::optional<double>(r.speedup_vs_compiled->estimate)
                                            : std::nullopt)},
      {"compiled_note", r.compiled_note},
      {"correctness", r.correctness},
      {"build",
       {{"cached", r.build_cached},
        {"shared_objects", r.shared_objects},
        {"diagnostics", r.diagnostics},
        {"notes", r.build_notes}}},
      {"phase_seconds",
       {{"scan", r.scan_seconds},
        {"reference", r.reference_seconds},
        {"build", r.build_seconds},
        {"load", r.load_seconds},
        {"check", r.check_seconds},
        {"time", r.time_seconds},
        {"total", r.total_seconds}}},
  };
  j["shapes"] = ToJson(r.shapes);
  return j;
}

}  // namespace kernelpro::eval
