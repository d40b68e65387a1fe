// `kernelpro energy`: energy per call of the reference and candidates, from NVML's total-energy
// counter (eval/energy.h, docs/energy-nvml.md).
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/option_groups.h"
#include "eval/energy.h"

namespace kernelpro::cli {
namespace {

struct EnergyArgs {
  std::string problem;
  std::vector<std::string> candidates;
  std::string python;
  bool json = false;
  bool quiet = false;
  eval::EvalOptions eval;
  eval::EnergyOptions energy;
};

std::string EnergyNum(double v, const char* fmt = "%.4g") {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

void PrintArm(const eval::ArmEnergy& a, std::ostream& out) {
  out << "energy      " << EnergyNum(a.per_call.median) << " mJ per call  ["
      << EnergyNum(a.per_call.low) << ", " << EnergyNum(a.per_call.high) << "] "
      << EnergyNum(100 * a.per_call.confidence, "%.1f") << "% interval over "
      << a.mj_per_call.size() << " windows (" << a.calls << " calls, "
      << EnergyNum(a.median_watts, "%.1f") << " W)\n";
  if (!a.warmup_settled) {
    out << "warning     its warm-up stopped at the " << EnergyNum(a.warmup_s, "%.1f")
        << " s cap before the power settled\n";
  }
  if (a.per_call.low <= 0) {
    out << "warning     dynamic energy at or below zero in some windows: the calls draw too little "
           "above idle for this counter to resolve\n";
  }
}

void PrintEnergy(const eval::EnergyReport& r, const std::string& device, std::ostream& out) {
  out << "problem     " << r.problem << "\n";
  out << "device      " << (r.device.empty() ? std::string("(unnamed)") : r.device) << " (NVML)\n";
  if (device == "cpu") {
    out << "note        --device cpu: the calls run on the CPU while NVML reads the GPU; only "
           "meaningful with a fake NVML library (tests)\n";
  }
  out << "method      " << r.method << "\n";
  for (std::size_t i = 0; i < r.arms.size(); ++i) {
    const eval::ArmEnergy& a = r.arms[i];
    out << "\n"
        << (i == 0 ? "reference   the problem's baseline"
                   : "candidate   " + std::filesystem::path(a.label).filename().string())
        << "\n";
    PrintArm(a, out);
    if (i > 0) {
      const RatioInterval& q = r.ratios[i - 1];
      out << "ratio       " << EnergyNum(q.estimate, "%.3f") << "x  [" << EnergyNum(q.low, "%.3f")
          << ", " << EnergyNum(q.high, "%.3f") << "] " << EnergyNum(100 * q.confidence, "%.0f")
          << "% bootstrap interval: reference energy per call / candidate's\n";
    }
  }
}

int RunEnergy(EnergyArgs& args) {
  auto executor = MakeExecutor(args.eval, args.python, "energy");
  if (!executor) return 2;
  std::unique_ptr<ProgressReporter> progress = MakeProgress("energy", args.quiet);
  executor->set_progress(progress.get());
  auto report = eval::MeasureEnergy(*executor, args.problem, args.candidates, args.energy);
  if (progress) progress->Finish();
  if (!report.ok()) {
    if (args.json) {
      std::cout << DumpJson(Json{{"error", report.status().message()}, {"status", nullptr}})
                << "\n";
    }
    std::cerr << "kernelpro energy: " << report.status().message() << "\n";
    return 2;
  }
  if (args.json) {
    Json j = eval::ToJson(*report);
    j["device_kind"] = args.eval.device;
    std::cout << DumpJson(j) << "\n";
  } else {
    PrintEnergy(*report, args.eval.device, std::cout);
  }
  return 0;
}

}  // namespace

CommandRunner RegisterEnergyCommand(CLI::App& app) {
  auto args = std::make_shared<EnergyArgs>();
  CLI::App* cmd = app.add_subcommand(
      "energy",
      "Energy per call (mJ) of the reference and candidates, from NVML's total-energy counter");
  cmd->option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  cmd->footer(
      "Measures; does not check correctness (run eval for that). --json prints one object: "
      "method, clocks, idle power and per arm the energy per call with its interval");
  AddOption(*cmd, kProblemOption, args->problem)->required()->check(InputFile());
  AddOption(*cmd, kCandidateOption, args->candidates)
      ->required()
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->check(InputFile());
  AddDeviceOption(*cmd, args->eval.device);
  eval::EnergyOptions& e = args->energy;
  cmd->add_option("--window-s", e.window_s, "Length of one measured window, seconds")
      ->check(CLI::Range(0.01, 600.0))
      ->capture_default_str();
  cmd->add_option("--windows", e.windows, "Measured windows per arm, interleaved round by round")
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();
  cmd->add_option("--idle-windows", e.idle_windows,
                  "Idle windows (sleeping) before the arms; one fewer follow them")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  cmd->add_option("--warmup-cap-s", e.warmup_cap_s,
                  "Longest warm-up per arm, seconds, when its power has not settled before")
      ->check(CLI::Range(0.0, 3600.0))
      ->capture_default_str();
  cmd->add_flag("--lock-clocks", e.lock_clocks,
                "Lock the SM clock at its warmed-up value while measuring, then unlock (changes "
                "GPU state: off by default, never on shared GPUs)");
  AddOption(*cmd, kNvmlLibraryOption, e.nvml_library)->check(InputFile());
  AddWorkerOptions(*cmd, args->eval, args->python);
  AddSandboxOptions(*cmd, args->eval);
  AddOption(*cmd, kJsonOption, args->json);
  AddProgressOptions(*cmd, args->quiet);
  return [args] { return RunEnergy(*args); };
}

}  // namespace kernelpro::cli
