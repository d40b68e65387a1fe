#include "eval/speed_of_light.h"

#include <algorithm>
#include <chrono>

#include "core/text.h"
#include "roofline/hardware.h"
#include "roofline/reference_analysis.h"

namespace kernelpro::eval {
namespace {

constexpr int kFactsTimeoutS = 600;

// The highest peak of any precision `gpu` has: a kernel may run the work in any of them.
double HighestPeak(const roofline::GpuSpec& gpu) {
  return std::max({gpu.fp64, gpu.fp32, gpu.fp16, gpu.bf16, gpu.fp64_tensor, gpu.tf32_tensor,
                   gpu.fp16_tensor, gpu.bf16_tensor, gpu.fp8_tensor, gpu.int8_tensor});
}

std::string Threads(int n) { return std::to_string(n) + (n == 1 ? " thread" : " threads"); }

// The CPU as the roofline sees it: every precision at the higher of the calibrated matmul and
// vector rates (a torch with a slow BLAS multiplies matrices below its element-wise kernels'
// rate), the calibrated copy bandwidth as its memory's.
Result<roofline::GpuSpec> CalibratedCpu(const Json& calibration) {
  const double matmul = JsonGet<double>(calibration, "matmul_flops_per_s", 0.0);
  const double vector = JsonGet<double>(calibration, "vector_flops_per_s", 0.0);
  const double flops = std::max(matmul, vector);
  const double bandwidth = JsonGet<double>(calibration, "copy_bytes_per_s", 0.0);
  if (!(flops > 0) || !(bandwidth > 0)) {
    return Status::InvalidArgument("the CPU calibration measured no rate");
  }
  roofline::GpuSpec cpu;
  cpu.key = "cpu";
  cpu.name = "this CPU";
  cpu.source = "calibrated in the referee: a " +
               FormatSi(JsonGet<double>(calibration, "copy_bytes", 0.0), "B") + " tensor copy at " +
               FormatSi(bandwidth, "B/s") + ", a float32 matmul at " + FormatSi(matmul, "FLOP/s") +
               (vector > 0 ? ", float32 vector work at " + FormatSi(vector, "FLOP/s") : "") +
               " on " + Threads(JsonGet<int>(calibration, "threads", 0));
  if (const int n = JsonGet<int>(calibration, "calibrations", 1); n > 1) {
    cpu.source += ", each the best of " + std::to_string(n) + " calibrations";
  }
  cpu.fp64 = cpu.fp32 = cpu.fp16 = cpu.bf16 = flops;
  cpu.fp64_tensor = cpu.tf32_tensor = cpu.fp16_tensor = cpu.bf16_tensor = flops;
  cpu.dram_bytes_per_s = bandwidth;
  return cpu;
}

SpeedOfLight Unavailable(std::string why) {
  SpeedOfLight sol;
  sol.note = std::move(why);
  return sol;
}

// The time a median-and-spread summary can be trusted to lie above: its median plus its IQR.
double UpperTime(const TimingSummary& t) { return 1e-3 * (t.summary.median + t.summary.iqr); }

}  // namespace

SpeedOfLight SpeedOfLightFromFacts(const Json& facts, const std::string& problem,
                                   const EvalOptions& options) {
  if (JsonGet<std::string>(facts, "status", "ok") != "ok") {
    return Unavailable("the reference's work could not be counted: " +
                       JsonGet<std::string>(facts, "message", "no reason given"));
  }
  const Json analysis = JsonGet<Json>(facts, "analysis", Json::object());
  const bool cpu = JsonGet<std::string>(analysis, "device", "cpu") != "cuda";
  Result<roofline::GpuSpec> machine =
      cpu ? CalibratedCpu(JsonGet<Json>(facts, "calibration", Json::object()))
          : roofline::FindGpu(JsonGet<std::string>(analysis, "device_name", ""));
  if (!machine.ok()) return Unavailable("no peaks for this machine: " + machine.status().message());
  roofline::RooflineOptions roofline_options;
  auto stage1 = roofline::AnalyzeReference(analysis, problem, *machine, roofline_options);
  if (!stage1.ok()) {
    return Unavailable("the reference's work could not be counted: " + stage1.status().message());
  }
  if (!(stage1->roofline.attainable_time_s > 0)) {
    return Unavailable("the reference's work counts to no time at all");
  }
  SpeedOfLight sol;
  sol.available = true;
  sol.bound_s = stage1->roofline.attainable_time_s;
  const double headroom = cpu ? kCpuHeadroom : 1.0;
  const double peak = HighestPeak(*machine) * headroom;
  const double bandwidth = machine->dram_bytes_per_s * headroom;
  const double counted_flops = std::max(0.0, stage1->flops - stage1->flops_estimated);
  const bool inputs_from_dram = cpu || options.flush_bytes != 0;
  sol.floor_s = std::max(peak > 0 ? counted_flops / peak : 0.0,
                         inputs_from_dram ? stage1->input_bytes / bandwidth : 0.0);
  sol.basis =
      cpu ? machine->source + (" (the floor allows " + FormatFixed(headroom, 0) + "x these rates)")
          : machine->name + ": " + FormatSi(machine->dram_bytes_per_s, "B/s") + " DRAM, " +
                FormatSi(stage1->peak_flops, "FLOP/s") + " " + stage1->precision + " (" +
                machine->source + ")";
  if (cpu) {
    sol.no_fraction =
        "no fraction of the speed of light on the CPU: its rates are what torch reached on this "
        "machine, not peaks a kernel cannot pass; only the floor (" +
        FormatFixed(headroom, 0) + "x those rates) is used, to catch impossible times";
  }
  if (!inputs_from_dram) {
    sol.note =
        "the L2 is not flushed before timed calls (--flush-bytes 0), so the floor counts "
        "FLOPs only";
  }
  return sol;
}

SpeedOfLight PlaceAgainst(SpeedOfLight sol, const EvalResult& result) {
  if (!sol.available || !result.candidate_time || !result.reference_time) return sol;
  const double candidate_s = result.candidate_time->summary.median * 1e-3;
  const double reference_s = result.reference_time->summary.median * 1e-3;
  sol.fraction = candidate_s > 0 ? sol.bound_s / candidate_s : 0;
  sol.reference_fraction = reference_s > 0 ? sol.bound_s / reference_s : 0;
  sol.enforced = sol.floor_s > 0;
  if (sol.enforced && UpperTime(*result.reference_time) < sol.floor_s) {
    sol.enforced = false;
    sol.note = "the reference itself runs in " + FormatDuration(reference_s) +
               ", below the floor of " + FormatDuration(sol.floor_s) +
               ": the counted work overstates what this problem needs, so no time is judged by it";
  }
  return sol;
}

bool BelowFloor(const SpeedOfLight& placed, const EvalResult& result) {
  return placed.enforced && result.candidate_time &&
         UpperTime(*result.candidate_time) < placed.floor_s;
}

bool JudgeSpeedOfLight(SpeedOfLight sol, EvalResult& result) {
  const SpeedOfLight placed = PlaceAgainst(std::move(sol), result);
  result.speed_of_light = placed;
  if (!BelowFloor(placed, result)) return true;
  std::string why =
      "faster than the speed of light: its median time " +
      FormatDuration(result.candidate_time->summary.median * 1e-3) + " (IQR included) is below " +
      FormatDuration(placed.floor_s) +
      ", the least time this machine needs to read the problem's inputs once and do its counted "
      "arithmetic (" +
      placed.basis +
      "). Either the timing is wrong (a timer patched in the candidate's process) or the kernel "
      "skips work in its timed calls (work left running after the call returns); it is not "
      "accepted as faster";
  result.status = EvalStatus::kIncorrect;
  result.message = why;
  result.findings.push_back({"speed_of_light", "fail", why});
  return false;
}

bool ApplySpeedOfLight(WorkerSession& referee, const Json& base_request, const std::string& problem,
                       const EvalOptions& options, EvalResult& result) {
  Json request = base_request;
  request["problem"] = problem;
  request["seed"] = options.seed;
  auto ask = [&](bool recalibrate) -> std::optional<Json> {
    request["recalibrate"] = recalibrate;
    SessionReply reply =
        referee.Call("speed_of_light", request, std::chrono::seconds(kFactsTimeoutS));
    if (!reply.result) {
      result.speed_of_light = Unavailable("the referee ended before it counted the work" +
                                          (reply.error.empty() ? "" : ": " + reply.error));
    }
    return reply.result;
  };
  std::optional<Json> facts = ask(false);
  if (!facts) return true;
  SpeedOfLight sol = SpeedOfLightFromFacts(*facts, problem, options);
  // A calibration (the CPU's) is one moment of a machine that may have been busy then: before a
  // time is called impossible, the referee measures again and keeps each rate at its best.
  if (facts->contains("calibration") && BelowFloor(PlaceAgainst(sol, result), result)) {
    if (std::optional<Json> again = ask(true))
      sol = SpeedOfLightFromFacts(*again, problem, options);
  }
  return JudgeSpeedOfLight(std::move(sol), result);
}

std::string DescribeSpeedOfLight(const SpeedOfLight& sol, double measured_ms) {
  if (!sol.available || !sol.no_fraction.empty() || measured_ms <= 0) return "";
  return FormatFixed(100 * sol.bound_s / (measured_ms * 1e-3), 0) + " % of the speed of light (" +
         FormatDuration(measured_ms * 1e-3) + " measured, " + FormatDuration(sol.bound_s) +
         " possible)";
}

Json ToJson(const SpeedOfLight& sol) {
  if (!sol.available) return Json{{"available", false}, {"note", sol.note}};
  const bool shown = sol.no_fraction.empty();
  Json out{{"available", true},
           {"bound_s", sol.bound_s},
           {"floor_s", sol.floor_s},
           {"fraction", shown ? Json(sol.fraction) : Json(nullptr)},
           {"reference_fraction", shown ? Json(sol.reference_fraction) : Json(nullptr)},
           {"enforced", sol.enforced},
           {"basis", sol.basis},
           {"note", sol.note}};
  if (!shown) out["no_fraction"] = sol.no_fraction;
  return out;
}

}  // namespace kernelpro::eval
