#include "eval/energy.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

namespace kernelpro::eval {
namespace {

// P(Binomial(n, 1/2) <= k).
double BinomialHalfCdf(int n, int k) {
  double sum = 0;
  double term = std::pow(0.5, n);  // C(n, 0) / 2^n
  for (int i = 0; i <= k; ++i) {
    sum += term;
    term = term * (n - i) / (i + 1);
  }
  return sum;
}

ClockState ClockStateFromJson(const Json& j) {
  ClockState s;
  s.sm_mhz = JsonGet<int>(j, "sm_mhz", 0);
  s.mem_mhz = JsonGet<int>(j, "mem_mhz", 0);
  s.power_limit_w = JsonGet<double>(j, "power_limit_w", 0);
  s.temperature_c = JsonGet<int>(j, "temperature_c", 0);
  return s;
}

std::string Format(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

Json IntervalJson(const MedianInterval& m) {
  return {{"median", m.median}, {"low", m.low}, {"high", m.high}, {"confidence", m.confidence}};
}

}  // namespace

MedianInterval MedianWithInterval(std::vector<double> values, double confidence) {
  MedianInterval out;
  if (values.empty()) return out;
  out.median = Median(values);
  std::sort(values.begin(), values.end());
  const int n = static_cast<int>(values.size());
  // The largest k (1-based) whose [x_k, x_{n-k+1}] still covers the median with `confidence`.
  int k = 1;
  out.confidence = 1 - 2 * BinomialHalfCdf(n, 0);
  for (int candidate = 2; candidate <= (n + 1) / 2; ++candidate) {
    const double coverage = 1 - 2 * BinomialHalfCdf(n, candidate - 1);
    if (coverage < confidence) break;
    k = candidate;
    out.confidence = coverage;
  }
  out.low = values[k - 1];
  out.high = values[n - k];
  return out;
}

Result<EnergyReport> EnergyReportFromStep(const Json& result) {
  if (!result.is_object() || !result.contains("arms") || !result["arms"].is_array() ||
      result["arms"].empty()) {
    return Status::InvalidArgument("the energy step's result has no arms");
  }
  EnergyReport report;
  report.step = result;
  report.window_s = JsonGet<double>(result, "window_s", 0);
  report.windows = JsonGet<int>(result, "windows", 0);
  report.idle_watts = JsonGet<double>(JsonGet<Json>(result, "idle", Json::object()), "watts", 0);
  report.before = ClockStateFromJson(JsonGet<Json>(result, "before", Json::object()));
  report.after = ClockStateFromJson(JsonGet<Json>(result, "after", Json::object()));
  report.device = JsonGet<std::string>(JsonGet<Json>(result, "device", Json::object()), "name", "");
  if (result.contains("clocks_locked_sm_mhz") && result["clocks_locked_sm_mhz"].is_number()) {
    report.locked_sm_mhz = result["clocks_locked_sm_mhz"].get<int>();
  }
  for (const Json& arm : result["arms"]) {
    ArmEnergy a;
    a.name = JsonGet<std::string>(arm, "name", "");
    a.label = JsonGet<std::string>(arm, "label", "");
    std::vector<double> watts;
    for (const Json& w : JsonGet<Json>(arm, "windows", Json::array())) {
      a.mj_per_call.push_back(JsonGet<double>(w, "mj_per_call", 0));
      watts.push_back(JsonGet<double>(w, "watts", 0));
      a.calls += JsonGet<long long>(w, "calls", 0);
    }
    if (a.mj_per_call.empty()) {
      return Status::InvalidArgument("the energy step measured no window of " + a.name);
    }
    a.per_call = MedianWithInterval(a.mj_per_call);
    a.median_watts = Median(watts);
    const Json warmup = JsonGet<Json>(arm, "warmup", Json::object());
    a.warmup_settled = JsonGet<bool>(warmup, "settled", false);
    a.warmup_s = JsonGet<double>(warmup, "seconds", 0);
    report.arms.push_back(std::move(a));
  }
  for (std::size_t i = 1; i < report.arms.size(); ++i) {
    report.ratios.push_back(
        BootstrapMedianRatio(report.arms[0].mj_per_call, report.arms[i].mj_per_call));
  }
  report.method = EnergyMethod(report);
  return report;
}

std::string EnergyMethod(const EnergyReport& r) {
  std::string line = "NVML total energy counter, " + std::to_string(r.windows) + " windows of " +
                     Format("%.1f", r.window_s) + " s, idle " + Format("%.1f", r.idle_watts) +
                     " W subtracted, ";
  line += r.locked_sm_mhz ? "SM clock locked at " + std::to_string(*r.locked_sm_mhz) +
                                " MHz (--lock-clocks): SM "
                          : std::string("clocks as found: SM ");
  line += std::to_string(r.before.sm_mhz) + " MHz, MEM " + std::to_string(r.before.mem_mhz) +
          " MHz, power limit " + Format("%.0f", r.before.power_limit_w) + " W, " +
          std::to_string(r.before.temperature_c) + "\u2192" +
          std::to_string(r.after.temperature_c) + " \u00b0C";
  if (r.after.sm_mhz != r.before.sm_mhz || r.after.mem_mhz != r.before.mem_mhz) {
    line += " (after: SM " + std::to_string(r.after.sm_mhz) + " MHz, MEM " +
            std::to_string(r.after.mem_mhz) + " MHz)";
  }
  return line;
}

Result<EnergyReport> MeasureEnergy(Executor& executor, const std::string& problem,
                                   const std::vector<std::string>& candidates,
                                   const EnergyOptions& options) {
  if (Status s = executor.worker().SandboxReady(); !s.ok()) return s;
  auto reference = executor.PrepareReference(std::filesystem::absolute(problem).string());
  if (!reference.ok()) return reference.status();
  Json request;
  Json arms = Json::array();
  for (const std::string& given : candidates) {
    const std::string candidate = std::filesystem::absolute(given).string();
    EvalResult built;
    built.candidate = candidate;
    executor.Build(candidate, built);
    if (built.status != EvalStatus::kCorrect) {
      return Status::InvalidArgument("candidate " + given + " did not build: " +
                                     EvalStatusName(built.status) + ": " + built.message);
    }
    Json one = executor.CandidateRequest(candidate, *reference);
    if (one.is_null()) return Status::NotFound("cannot read the candidate file " + given);
    arms.push_back({{"candidate", candidate}, {"build_root", one["build_root"]}});
    if (request.is_null()) request = one;
  }
  if (request.is_null()) request = executor.CandidateRequest(problem, *reference);
  // The candidates travel as `candidates` (each mounted read-only in the sandbox); no single one
  // is the step's `candidate`.
  request.erase("candidate");
  request.erase("build_root");
  request["problem"] = std::filesystem::absolute(problem).string();
  request["candidates"] = arms;
  request["window_s"] = options.window_s;
  request["windows"] = options.windows;
  request["idle_windows"] = options.idle_windows;
  request["warmup_cap_s"] = options.warmup_cap_s;
  request["lock_clocks"] = options.lock_clocks;
  if (!options.nvml_library.empty()) {
    request["nvml_library"] = std::filesystem::absolute(options.nvml_library).string();
  }
  const double arms_count = 1.0 + candidates.size();
  const double expected_s =
      arms_count * (options.windows * options.window_s + options.warmup_cap_s) +
      2.0 * options.idle_windows * options.window_s;
  ProcessLimits limits;
  limits.wall_timeout = std::chrono::seconds(static_cast<long long>(expected_s * 1.5) +
                                             executor.options().step_timeout_s);
  GpuPool::Lease lease = executor.gpu_pool().Acquire();
  auto outcome = executor.worker().Run("energy", request, limits, lease.Env(), {}, 64 * 1024,
                                       Confinement::kSandbox);
  if (!outcome.ok()) return outcome.status();
  if (!outcome->result) {
    return Status::Internal(
        "the energy step ended without a result: " + outcome->process.Describe() +
        (outcome->result_error.empty() ? "" : " (" + outcome->result_error + ")"));
  }
  const std::string status = JsonGet<std::string>(*outcome->result, "status", "");
  const std::string message = JsonGet<std::string>(*outcome->result, "message", "");
  if (status.starts_with("nvml_")) return Status::Unavailable(message);
  if (status != "ok") return Status::InvalidArgument(status + ": " + message);
  auto report = EnergyReportFromStep(*outcome->result);
  if (report.ok()) report->problem = problem;
  return report;
}

Json ToJson(const EnergyReport& r) {
  Json arms = Json::array();
  for (std::size_t i = 0; i < r.arms.size(); ++i) {
    const ArmEnergy& a = r.arms[i];
    Json arm = {{"name", a.name},
                {"label", a.label},
                {"mj_per_call", IntervalJson(a.per_call)},
                {"calls", a.calls},
                {"median_watts", a.median_watts},
                {"warmup", {{"settled", a.warmup_settled}, {"seconds", a.warmup_s}}},
                {"windows_mj_per_call", a.mj_per_call}};
    if (i > 0) {
      const RatioInterval& q = r.ratios[i - 1];
      arm["reference_over_candidate"] = {
          {"estimate", q.estimate}, {"low", q.low}, {"high", q.high}, {"confidence", q.confidence}};
    }
    arms.push_back(std::move(arm));
  }
  auto state = [](const ClockState& s) {
    return Json{{"sm_mhz", s.sm_mhz},
                {"mem_mhz", s.mem_mhz},
                {"power_limit_w", s.power_limit_w},
                {"temperature_c", s.temperature_c}};
  };
  return {{"problem", r.problem},
          {"device", r.device},
          {"method", r.method},
          {"window_s", r.window_s},
          {"windows", r.windows},
          {"idle_watts", r.idle_watts},
          {"clocks_before", state(r.before)},
          {"clocks_after", state(r.after)},
          {"clocks_locked_sm_mhz", r.locked_sm_mhz ? Json(*r.locked_sm_mhz) : Json(nullptr)},
          {"arms", arms},
          {"step", r.step}};
}

}  // namespace kernelpro::eval
