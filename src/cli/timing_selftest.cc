#include "cli/timing_selftest.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>

#include "core/text.h"
#include "eval/worker_client.h"

namespace kernelpro::cli {
namespace {

std::string Signed(double value) { return (value >= 0 ? "+" : "") + FormatFixed(value, 2); }

// The self-test's allowance (python/kernelpro_worker/selftest.py): 0.5 us for a span against a
// gated reading, 1 us for summed kernel durations.
std::string Allowed(double reference, double abs_us = 0.5) {
  return "allowed max(" + FormatFixed(abs_us, abs_us < 1 ? 1 : 0) +
         " us, 3 %) = " + FormatFixed(std::max(abs_us, 0.03 * reference), 2) + " us";
}

// "span  2x+1, relu 2^10 (3 kernels): timer 24.86 us, the same calls read apart 24.86 us (diff
// +0.00 us, allowed ...); device work 3.10 us, a plain loop's 3.05 us (diff +0.05 us, allowed
// ...); a plain loop's span 22.80 us"
std::string SpanLine(const Json& c) {
  const double timer = JsonGet<double>(c, "timer_us", NAN);
  const std::string head = "span  " + JsonGet<std::string>(c, "case", "?");
  if (!JsonNumber(c, "profiler_us")) {
    return head + ": timer " + FormatFixed(timer, 2) + " us, no profiler reading (" +
           JsonGet<std::string>(c, "note", "none made") + ")";
  }
  const double same = JsonGet<double>(c, "profiler_us", NAN);
  const int kernels = JsonGet<int>(c, "kernels", 1);
  std::string line = head + " (" + std::to_string(kernels) +
                     (kernels == 1 ? " kernel" : " kernels") + "): timer " + FormatFixed(timer, 2) +
                     " us, the same calls read apart " + FormatFixed(same, 2) + " us (diff " +
                     Signed(timer - same) + " us, " + Allowed(same) + ")";
  if (JsonNumber(c, "device_us") && JsonNumber(c, "plain_device_us")) {
    const double device = JsonGet<double>(c, "device_us", NAN);
    const double plain = JsonGet<double>(c, "plain_device_us", NAN);
    line += "; device work " + FormatFixed(device, 2) + " us, a plain loop's " +
            FormatFixed(plain, 2) + " us (diff " + Signed(device - plain) + " us, " +
            Allowed(plain, 1.0) + ")";
  }
  if (JsonNumber(c, "plain_gated_us")) {
    const double gated = JsonGet<double>(c, "plain_gated_us", NAN);
    line += "; a plain loop's gated span " + FormatFixed(gated, 2) + " us (diff " +
            Signed(timer - gated) + " us, " + Allowed(gated) + ")";
  }
  if (JsonNumber(c, "plain_us")) {
    line += "; ungated " + FormatFixed(JsonGet<double>(c, "plain_us", NAN), 2) + " us";
  }
  if (!JsonGet<bool>(c, "gate_held", true)) {
    line += "; the gate did not hold: " + JsonGet<std::string>(c, "gate_note", "no reason given");
  }
  return line;
}

// Where a plain loop's ungated calls of several Python-launched kernels read longer than the
// timer's gated ones, why (once, after the checks).
std::string HostNote(const Json& checks) {
  double widest = 0;
  for (const Json& c : checks) {
    if (JsonGet<int>(c, "kernels", 1) < 2 || !JsonNumber(c, "plain_us")) continue;
    const double diff = JsonGet<double>(c, "plain_us", NAN) - JsonGet<double>(c, "timer_us", NAN);
    if (std::abs(diff) > std::abs(widest)) widest = diff;
  }
  if (std::abs(widest) <= 1.0) return "";
  return "note: ungated, calls of several kernels launched one by one from Python read up to " +
         Signed(widest) +
         " us longer: the gaps between their kernels are then the host's launch time. kernelpro "
         "queues each timed call's launches behind a gate, so its times hold the device's work "
         "and its own gaps only; host_ms in `eval --json` keeps the host-inclusive time.\n";
}

std::string SelfLine(const Json& c) {
  const double ratio = JsonGet<double>(c, "ratio", NAN);
  std::string line = "self  " + JsonGet<std::string>(c, "case", "?") + " (" +
                     FormatFixed(JsonGet<double>(c, "median_us", NAN), 1) +
                     " us) against itself: " + FormatFixed(ratio, 4) + "x (allowed 1 +- 0.01)";
  Json mhz = JsonGet<Json>(c, "sm_mhz", Json(nullptr));
  if (mhz.is_array() && mhz.size() == 2) {
    line += ", SM " + std::to_string(mhz[0].get<int>()) + "-" + std::to_string(mhz[1].get<int>()) +
            " MHz";
  }
  return line;
}

}  // namespace

Result<Json> RunTimingSelftest(const std::string& python) {
  eval::WorkerOptions options;
  options.python = python;
  options.scratch_dir = std::filesystem::temp_directory_path().string();
  options.sandbox.enabled = false;  // only kernelpro's own code runs
  auto client = eval::WorkerClient::Create(options);
  if (!client.ok()) return client.status();
  ProcessLimits limits;
  limits.wall_timeout = std::chrono::seconds(600);
  auto outcome = client->Run("timing_selftest", Json{{"calls", 30}, {"rounds", 20}}, limits);
  if (!outcome.ok()) return outcome.status();
  if (!outcome->result) {
    return Status::Internal("the timing self-test ended without a result: " +
                            outcome->process.Describe());
  }
  if (JsonGet<std::string>(*outcome->result, "status", "") != "ok") {
    return Status::Unavailable("the timing self-test could not run: " +
                               JsonGet<std::string>(*outcome->result, "message", "no reason"));
  }
  return *outcome->result;
}

std::string RenderTimingSelftest(const Json& result) {
  std::string text = "timing self-test on " + JsonGet<std::string>(result, "device", "?") + " (" +
                     JsonGet<std::string>(result, "capability", "?") + "), torch " +
                     JsonGet<std::string>(result, "torch", "?") + ", clocks as found\n";
  text += "method: " + JsonGet<std::string>(result, "method", "") + "\n";
  if (auto note = JsonGet<std::string>(result, "clock_note", ""); !note.empty()) {
    text += "clock: " + note + "\n";
  }
  int failed = 0, total = 0;
  for (const Json& c : JsonGet<Json>(result, "checks", Json::array())) {
    const bool passed = JsonGet<bool>(c, "passed", false);
    failed += passed ? 0 : 1;
    ++total;
    text += std::string(passed ? "pass  " : "FAIL  ") +
            (JsonGet<std::string>(c, "check", "") == "self" ? SelfLine(c) : SpanLine(c)) + "\n";
  }
  text += HostNote(JsonGet<Json>(result, "checks", Json::array()));
  text += std::to_string(total - failed) + " of " + std::to_string(total) + " checks passed in " +
          FormatFixed(JsonGet<double>(result, "seconds", 0), 0) + " s: ";
  text += failed == 0 ? "kernelpro's times can be trusted on this GPU\n"
                      : "kernelpro's times on this GPU are off by more than the allowance; "
                        "speedups near 1x measured here are not evidence\n";
  return text;
}

int TimingSelftestExitCode(const Json& result) {
  for (const Json& c : JsonGet<Json>(result, "checks", Json::array())) {
    if (!JsonGet<bool>(c, "passed", false)) return 1;
  }
  return JsonGet<Json>(result, "checks", Json::array()).empty() ? 1 : 0;
}

}  // namespace kernelpro::cli
