// `kernelpro eval`: evaluates candidate kernels against a problem and prints the verdict.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <sstream>

#include "agents/problem_source.h"
#include "app/eval_json.h"
#include "cli/cli_main.h"
#include "cli/commands.h"
#include "cli/common.h"
#include "cli/option_groups.h"
#include "eval/executor.h"
#include "eval/speed_of_light.h"
#include "roofline/reference_analysis.h"

namespace kernelpro::cli {
namespace {

struct EvalArgs {
  std::string problem;
  std::vector<std::string> candidates;
  std::string python;
  bool json = false;
  bool quiet = false;         // --quiet: no progress on stderr
  std::string analysis_file;  // --analysis: Stage-1 ReferenceAnalysis for roofline positions
  std::string cutlass_dir;    // --cutlass-dir: the tree CUTLASS/CuTe candidates build against
  eval::EvalOptions options;
};

std::string Ms(double ms) {
  char buf[64];
  std::snprintf(buf, sizeof buf, ms < 1 ? "%.4f ms" : "%.3f ms", ms);
  return buf;
}

std::string Num(double v, const char* fmt = "%.3g") {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

// "sol         candidate 83 % of the speed of light (...); the reference 41 %", then the peaks.
void PrintSpeedOfLight(const eval::SpeedOfLight& sol, const eval::EvalResult& r,
                       std::ostream& out) {
  if (!sol.available) {
    out << "sol         no speed of light: " << sol.note << "\n";
    return;
  }
  if (!sol.no_fraction.empty()) {
    out << "sol         " << sol.no_fraction << "\n"
        << "            rates: " << sol.basis << "\n";
  } else {
    out << "sol         candidate "
        << eval::DescribeSpeedOfLight(sol, r.candidate_time->summary.median) << "; the reference "
        << Num(100 * sol.reference_fraction, "%.0f") << " %\n"
        << "            peaks: " << sol.basis << "\n";
  }
  if (!sol.note.empty()) out << "            " << sol.note << "\n";
}

void PrintHuman(const eval::EvalReport& report, const eval::EvalOptions& options,
                const std::optional<roofline::ReferenceAnalysis>& stage1, std::ostream& out) {
  const Json& ref = report.reference;
  out << "problem     " << DisplayPath(report.problem) << "\n";
  // A program (docs/programs.md): which file is timed and which gives the expected outputs.
  const auto source = agents::ReadProblemSource(report.problem);
  const bool program = source.ok() && source->program;
  if (program) {
    out << "baseline    " << std::filesystem::path(source->path).filename().string() << " ("
        << agents::ProgramKindName(source->kind) << " program, ENTRY " << source->entry
        << "): the time to beat\n";
    out << "reference   "
        << (source->reference_path.empty()
                ? std::string(
                      "the program itself (no REFERENCE): its outputs are the expected ones")
                : std::filesystem::path(source->reference_path).filename().string() +
                      " (PyTorch): the expected outputs; the program matched them before any "
                      "candidate was compared")
        << "\n";
  }
  if (auto v = JsonGet<std::string>(ref, "vacuous", ""); !v.empty()) {
    out << "warning     vacuous problem: " << v << "; outputs are also held to a relative error of "
        << options.vacuous_rel_tol << "\n";
  }
  for (const std::string& note : JsonGet<std::vector<std::string>>(ref, "notes", {})) {
    out << "note        " << note << "\n";
  }
  for (const eval::EvalResult& r : report.results) {
    out << "\ncandidate   " << DisplayPath(r.candidate) << "\n";
    bool built = options.build_only && r.status == eval::EvalStatus::kCorrect;
    out << "status      " << (built ? "built" : eval::EvalStatusName(r.status));
    // Shapes the benchmark never showed (eval/shape_check.h): "correct (all 3 shapes)".
    if (!built && r.status == eval::EvalStatus::kCorrect && !r.shapes.checked.empty()) {
      out << " " << eval::ShapeStatusText(r.shapes);
    }
    out << "\n";
    if (!r.gpu.empty()) out << "gpu         " << r.gpu << " (CUDA_VISIBLE_DEVICES)\n";
    if (!r.sandbox.empty() && !r.sandboxed) out << "UNSAFE      no sandbox: " << r.sandbox << "\n";
    if (!r.message.empty()) {
      std::istringstream lines(r.message);
      std::string line;
      bool first = true;
      int shown = 0;
      while (std::getline(lines, line) && shown++ < 30) {
        out << (first ? "message     " : "            ") << line << "\n";
        first = false;
      }
    }
    for (const eval::Finding& f : r.findings) {
      if (f.severity == "warn") out << "warning     " << f.message << "\n";
    }
    if (!r.precision_warning.empty()) out << "warning     " << r.precision_warning << "\n";
    if (!r.correctness.empty()) {
      // The trials (the same input sets every run) apart from the timed calls sampled at random
      // for verification, whose number varies by design (docs/eval.md, "Checks").
      double max_abs = 0, max_fp64 = -1;
      int trials = 0, trials_passed = 0, timed = 0, timed_passed = 0;
      for (const Json& row : r.correctness) {
        const bool passed = JsonGet<bool>(row, "passed", false);
        const bool sampled = JsonGet<std::string>(row, "trial", "").starts_with("timed call");
        (sampled ? timed : trials) += 1;
        (sampled ? timed_passed : trials_passed) += passed ? 1 : 0;
        max_abs = std::max(max_abs, JsonGet<double>(row, "max_abs_err", 0.0));
        max_fp64 = std::max(max_fp64, JsonGet<double>(row, "fp64_relative_error", -1.0));
      }
      out << "checks      " << trials_passed << "/" << trials
          << " trial input sets within atol=" << options.atol << " rtol=" << options.rtol
          << " (max abs error " << Num(max_abs) << ")";
      if (max_fp64 >= 0) out << "; vs fp64: relative error " << Num(max_fp64);
      out << "\n";
      if (timed > 0) {
        out << "            and " << timed_passed << "/" << timed
            << " timed calls sampled at random (how many varies by design)\n";
      }
      out << "criterion   " << r.criterion << ": " << eval::DescribeCorrectness(options) << "\n";
    }
    if (r.reference_time && r.candidate_time && r.speedup) {
      auto line = [&](const char* label, const eval::TimingSummary& t) {
        out << label << Ms(t.summary.median) << "  median of " << t.summary.count << " calls, IQR "
            << Num(100 * t.summary.relative_spread, "%.1f") << "%\n";
      };
      line(program ? "baseline    " : "reference   ", *r.reference_time);
      line("candidate   ", *r.candidate_time);
      out << "speedup     " << Num(r.speedup->estimate, "%.3f") << "x  ["
          << Num(r.speedup->low, "%.3f") << ", " << Num(r.speedup->high, "%.3f") << "] "
          << Num(100 * r.speedup->confidence, "%.0f") << "% interval over "
          << r.reference_time->block_medians.size() << " interleaved rounds";
      if (r.process_spread > 0) {
        out << ", widened by the " << Num(100 * r.process_spread, "%.1f")
            << "% the reference's time differs between the two processes";
      }
      out << "\n";
      if (std::string noisy = eval::NoisyTimingReason(r); !noisy.empty()) {
        out << "warning     noisy timing: " << noisy
            << "; this speedup is not evidence either way (rerun on a quieter machine)\n";
      }
      if (!r.timing_method.empty()) out << "timing      " << r.timing_method << "\n";
      out << eval::HostAndClockLines(r.reference_calls, r.candidate_calls);
      if (r.speed_of_light) PrintSpeedOfLight(*r.speed_of_light, r, out);
      if (auto p = app::RooflinePlace(stage1, r.candidate_time))
        out << "roofline    candidate " << p->summary << "\n";
      if (auto p = app::RooflinePlace(stage1, r.reference_time))
        out << "            reference " << p->summary << "\n";
    }
    if (r.compiled_time && r.speedup_vs_compiled) {
      out << "compiled    " << Ms(r.compiled_time->summary.median)
          << "  torch.compile(Model); speedup " << Num(r.speedup_vs_compiled->estimate, "%.3f")
          << "x  [" << Num(r.speedup_vs_compiled->low, "%.3f") << ", "
          << Num(r.speedup_vs_compiled->high, "%.3f") << "]\n";
    } else if (!r.compiled_note.empty()) {
      out << "compiled    " << r.compiled_note << "\n";
    }
    out << eval::DeviceMemoryLine(r.step_costs);
    if (!r.shared_objects.empty()) {
      out << "build       " << (r.build_cached ? "cached" : "compiled") << " in "
          << Num(r.build_seconds, "%.1f") << " s: " << DisplayPath(r.shared_objects.front())
          << "\n";
    }
  }
}

// What `eval` exits with once it evaluated: 0 only when every candidate is correct (a script's
// `kernelpro eval ... && deploy` must not pass a crashing kernel), 1 when one is not, 2 when there
// was nothing to evaluate.
int ExitCode(const std::vector<eval::EvalResult>& results) {
  if (results.empty()) return 2;
  for (const eval::EvalResult& r : results) {
    if (r.status != eval::EvalStatus::kCorrect) return 1;
  }
  return 0;
}

int Run(EvalArgs args) {
  std::optional<roofline::ReferenceAnalysis> stage1;
  if (!args.analysis_file.empty()) {
    auto parsed = roofline::ReadReferenceAnalysisFile(args.analysis_file);
    if (!parsed.ok()) {
      std::cerr << "kernelpro eval: --analysis " << args.analysis_file << ": "
                << parsed.status().message() << "\n";
      return 2;
    }
    stage1 = std::move(*parsed);
  }
  if (Status s = LocateCutlassForBuilds(args.cutlass_dir, args.options); !s.ok()) {
    std::cerr << "kernelpro eval: " << s.message() << "\n";
    return 2;
  }
  auto executor = MakeExecutor(args.options, args.python, "eval");
  if (!executor) return 2;
  std::unique_ptr<ProgressReporter> progress = MakeProgress("eval", args.quiet);
  executor->set_progress(progress.get());
  if (const auto& decorate = InstalledCliHooks().device_runner) {
    executor->set_device_runner(decorate(executor->device_runner()));
  }
  auto report = executor->Evaluate(args.problem, args.candidates);
  if (progress) progress->Finish();
  EnforceCacheLimit(args.options.cache_dir, "eval");
  if (!report.ok()) {
    if (args.json) {
      std::cout << DumpJson(Json{{"error", report.status().message()}, {"status", nullptr}})
                << "\n";
    }
    std::cerr << "kernelpro eval: " << report.status().message() << "\n";
    return 2;
  }
  if (args.json) {
    for (const eval::EvalResult& r : report->results) {
      std::cout << DumpJson(app::EvalResultJson(*report, r, stage1, args.options.build_only))
                << "\n";
    }
  } else {
    PrintHuman(*report, args.options, stage1, std::cout);
  }
  return ExitCode(report->results);
}

}  // namespace

CommandRunner RegisterEvalCommand(CLI::App& app) {
  auto args = std::make_shared<EvalArgs>();
  eval::EvalOptions& o = args->options;
  CLI::App* cmd = app.add_subcommand(
      "eval", "Build, check and time candidate kernels against a problem's PyTorch reference");
  // A repeated option takes its last value, as in most command-line tools.
  cmd->option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  cmd->footer(
      "--json prints one JSON object per candidate, one per line.\n"
      "Exit codes: 0 every candidate evaluated is correct (built, with --build-only); 1 one is "
      "not (incorrect, runtime_error, timeout, compile_error); 2 bad input, or nothing could be "
      "evaluated");
  AddOption(*cmd, kProblemOption, args->problem)->required()->check(InputFile());
  AddOption(*cmd, kCandidateOption, args->candidates)
      ->required()
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->check(InputFile());
  AddDeviceOption(*cmd, o.device);
  AddOption(*cmd, kBuildOnlyOption, o.build_only);
  AddOption(*cmd, kSeedOption, o.seed)->capture_default_str();
  AddExecutorOptions(*cmd, o, args->python);
  AddCutlassOptions(*cmd, args->cutlass_dir);
  AddOption(*cmd, kJsonOption, args->json);
  AddProgressOptions(*cmd, args->quiet);
  AddOption(*cmd, kAnalysisOption, args->analysis_file)->check(InputFile());
  return [args] { return Run(*args); };
}

}  // namespace kernelpro::cli
