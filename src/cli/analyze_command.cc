// `kernelpro analyze`: the Stage-1 reference analysis of a problem.
//
//   worker `analyze` step (operations, FLOPs, minimum bytes, device name)
//        ─► hardware table (detected from torch's device name, or --gpu NAME)
//        ─► theoretical roofline class ─► ncu profile of the reference (cuda, unless --no-ncu)
//        ─► measured compute-vs-memory class ─► ReferenceAnalysis (summary or --json)
#include <filesystem>
#include <iostream>
#include <memory>

#include "agents/benchmarking_agent.h"
#include "cli/commands.h"
#include "cli/common.h"
#include "cli/option_groups.h"
#include "eval/profile_runner.h"
#include "profile/collect.h"
#include "roofline/reference_analysis.h"

namespace kernelpro::cli {
namespace {

struct AnalyzeArgs {
  std::string problem, python, gpu, profile_from, profile_name = "reference";
  bool json = false, no_ncu = false;
  bool quiet = false;  // --quiet: no progress on stderr
  double latency_us = 5;
  eval::EvalOptions eval;
  roofline::RooflineOptions roofline;
  profile::NcuOptions ncu;
};

int Fail(bool json, const std::string& message) {
  if (json) std::cout << DumpJson(Json{{"error", message}}) << "\n";
  std::cerr << "kernelpro analyze: " << message << "\n";
  return 2;
}

}  // namespace

CommandRunner RegisterAnalyzeCommand(CLI::App& app) {
  auto args = std::make_shared<AnalyzeArgs>();
  CLI::App* cmd = app.add_subcommand(
      "analyze",
      "Stage 1: roofline class of a problem's reference (FLOPs, bytes, ridge point, ncu check)");
  cmd->option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  cmd->footer(
      "--json prints the ReferenceAnalysis; with --device cpu, --gpu is required (the "
      "known GPUs: " +
      roofline::KnownGpuList() + ")");
  AddOption(*cmd, kProblemOption, args->problem)->required()->check(InputFile());
  AddDeviceOption(*cmd, args->eval.device);
  AddOption(*cmd, kGpuOption, args->gpu);
  AddOption(*cmd, kNoNcuOption, args->no_ncu);
  cmd->add_option(
         "--profile-from", args->profile_from,
         "Validate with a saved ncu profile of the reference (DIR/NAME.ncu.csv from `kernelpro "
         "profile --save DIR --name NAME`) instead of running ncu")
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--profile-name", args->profile_name, "NAME for --profile-from")
      ->capture_default_str();
  cmd->add_flag("--allow-tf32", args->roofline.allow_tf32,
                "fp32 GEMMs/convolutions may use TF32 tensor cores");
  cmd->add_option("--latency-us", args->latency_us,
                  "Roofline time below which a problem is latency-bound")
      ->check(FiniteRange(0, 1e6))
      ->capture_default_str();
  AddOption(*cmd, kNcuTimeoutOption, args->ncu.timeout_s)
      ->check(WholeRange(1, 86400))
      ->capture_default_str();
  AddWorkerOptions(*cmd, args->eval, args->python);
  AddOption(*cmd, kJsonOption, args->json);
  AddProgressOptions(*cmd, args->quiet);
  return [args] {
    std::optional<roofline::GpuSpec> forced;
    if (!args->gpu.empty()) {
      auto gpu = roofline::FindGpu(args->gpu);
      if (!gpu.ok()) return Fail(args->json, gpu.status().message());
      forced = *gpu;
    } else if (args->eval.device != "cuda") {
      return Fail(args->json, "--device " + args->eval.device +
                                  " has no GPU to detect; name the GPU to analyse "
                                  "for with --gpu NAME (" +
                                  roofline::KnownGpuList() + ")");
    }
    // The reference alone runs: no candidate code, no sandbox needed.
    auto executor = MakeExecutor(args->eval, args->python, "analyze", /*runs_candidates=*/false);
    if (!executor) return 2;
    args->roofline.latency_threshold_s = args->latency_us * 1e-6;
    // A saved profile replaces the ncu run; otherwise Stage 1 in full, as the agents run it.
    agents::BenchmarkingOptions stage_one;
    stage_one.gpu = forced;
    stage_one.roofline = args->roofline;
    stage_one.measure = !args->no_ncu && args->profile_from.empty();
    stage_one.ncu = args->ncu;
    std::unique_ptr<ProgressReporter> progress = MakeProgress("analyze", args->quiet);
    executor->set_progress(progress.get());
    auto analysis = agents::RunStageOneMeasured(*executor, args->problem, stage_one);
    if (progress) progress->Finish();
    if (!analysis.ok()) return Fail(args->json, analysis.status().message());
    if (!args->profile_from.empty()) {
      profile::ArtifactPaths paths;
      paths.ncu_csv = profile::ArtifactsIn(args->profile_from, args->profile_name).ncu_csv;
      if (paths.ncu_csv.empty()) {
        return Fail(args->json,
                    "no " + args->profile_name + ".ncu.csv under " + args->profile_from);
      }
      // The note RunStageOneMeasured left ("turned off") does not apply: the saved one measures.
      std::erase_if(analysis->notes, [](const std::string& n) {
        return n.find("ncu measurement turned off") != std::string::npos;
      });
      roofline::ValidateWithProfile(*analysis, profile::CollectFromArtifacts(paths));
      analysis->notes.push_back("measured side from the saved profile " + paths.ncu_csv);
    }
    if (args->json) {
      std::cout << DumpJson(ToJson(*analysis)) << "\n";
    } else {
      std::cout << roofline::RenderReferenceAnalysis(*analysis);
    }
    return 0;
  };
}

}  // namespace kernelpro::cli
