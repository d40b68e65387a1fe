// `kernelpro advise`: the micro-profiling tools without any LLM. Profiles a candidate on the GPU
// (or reads saved artifacts), runs every relevant tool and prints the "Automated Bottleneck
// Analysis" a kernel engineer can act on.
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/option_groups.h"
#include "eval/profile_runner.h"
#include "profile/collect.h"
#include "profile/energy_proxy.h"
#include "roofline/reference_analysis.h"
#include "tools/render.h"

namespace kernelpro::cli {
namespace {

struct AdviseArgs {
  std::string problem, candidate, from, name, bottleneck, python, analysis_file, gpu;
  bool json = false;
  std::size_t max_chars = tools::RenderOptions{}.max_chars;
  eval::EvalOptions eval;
  eval::ProfileOptions profile;
  tools::ToolConfig tools;
};

int Advise(AdviseArgs& args) {
  auto registry = BuildRegistry(args.tools);
  if (!registry.ok()) {
    std::cerr << "kernelpro advise: " << registry.status().message() << "\n";
    return 2;
  }
  // The registry holds the --threshold values and, under --no-energy, no energy tools.
  tools::AnalysisOptions options;
  if (!args.bottleneck.empty())
    options.bottleneck = roofline::ParseBottleneck(args.bottleneck).value();
  // Stage 1: a saved ReferenceAnalysis, or (when profiling a problem without --class) a fresh
  // theoretical one. It gives the class that filters the tools and the roofline to place the
  // candidate against.
  std::optional<roofline::ReferenceAnalysis> stage1;
  if (!args.analysis_file.empty()) {
    auto parsed = roofline::ReadReferenceAnalysisFile(args.analysis_file);
    if (!parsed.ok()) {
      std::cerr << "kernelpro advise: --analysis " << args.analysis_file << ": "
                << parsed.status().message() << "\n";
      return 2;
    }
    stage1 = std::move(*parsed);
  }

  profile::Metrics metrics;
  std::string subject;
  std::string
      stage1_note;  // why no Stage-1 class could be computed (kept with the profile's notes)
  if (!args.from.empty()) {
    if (args.name.empty()) {
      std::cerr << "kernelpro advise: --from needs --name\n";
      return 2;
    }
    profile::ArtifactPaths paths = profile::ArtifactsIn(args.from, args.name);
    if (paths.empty()) {
      std::cerr << "kernelpro advise: no artifacts named " << args.name << ".* in " << args.from
                << "\n";
      return 2;
    }
    metrics = profile::CollectFromArtifacts(paths);
    subject = args.from + "/" + args.name;
  } else if (!args.problem.empty()) {
    std::optional<CreatedDirectory> saved;
    if (!args.profile.artifacts_dir.empty()) {
      auto made = CreatedDirectory::Create(args.profile.artifacts_dir, "--save");
      if (!made.ok()) {
        std::cerr << "kernelpro advise: " << made.status().message() << "\n";
        return 2;
      }
      saved = std::move(*made);
    }
    auto executor = MakeExecutor(args.eval, args.python, "advise");
    if (!executor) {
      if (saved) saved->RemoveIfEmpty();
      return 2;
    }
    if (!stage1 && !options.bottleneck) {
      std::optional<roofline::GpuSpec> forced;
      if (!args.gpu.empty()) {
        auto gpu = roofline::FindGpu(args.gpu);
        if (!gpu.ok()) {
          std::cerr << "kernelpro advise: " << gpu.status().message() << "\n";
          return 2;
        }
        forced = *gpu;
      }
      auto analysis = RunStageOne(*executor, args.problem, forced, roofline::RooflineOptions{});
      if (analysis.ok()) {
        stage1 = std::move(*analysis);
      } else {
        stage1_note = "stage 1: " + analysis.status().message() + "; every speed tool runs";
      }
    }
    auto profiled = eval::ProfileCandidate(*executor, args.problem, args.candidate, args.profile);
    if (!profiled.ok()) {
      if (saved) saved->RemoveIfEmpty();
      std::cerr << "kernelpro advise: " << profiled.status().message() << "\n";
      return 2;
    }
    metrics = std::move(*profiled);
    if (!stage1_note.empty()) metrics.notes.insert(metrics.notes.begin(), stage1_note);
    subject = args.candidate.empty() ? args.problem + " (reference)" : args.candidate;
  } else {
    std::cerr << "kernelpro advise: give --problem P [--candidate C] (profile on the GPU) or "
                 "--from DIR --name NAME\n";
    return 2;
  }

  if (stage1 && !options.bottleneck) options.bottleneck = stage1->bottleneck;
  // Where the candidate stands against the reference's roofline: its GPU time in the recorded
  // forward call (timeline), else the ncu kernel durations (replayed with caches flushed).
  std::optional<roofline::RooflinePosition> position;
  std::string measured_from;
  if (stage1) {
    double seconds = 0;
    if (metrics.timeline && metrics.timeline->gpu_busy_us > 0) {
      seconds = metrics.timeline->gpu_busy_us * 1e-6;
      measured_from = "GPU busy time of one forward call (timeline)";
    } else if (metrics.ncu && !metrics.ncu->kernels.empty()) {
      for (const profile::NcuKernel& k : metrics.ncu->kernels) seconds += k.duration_ns() * 1e-9;
      measured_from = "summed ncu kernel durations";
    }
    if (seconds > 0) position = roofline::PositionAgainstRoofline(*stage1, seconds);
  }
  tools::Analysis analysis = registry->Analyze(metrics, options);
  tools::RenderOptions render;
  render.max_chars = args.max_chars;
  std::string guidance = tools::RenderGuidance(analysis, render);
  // The energy proxy (paper Eq. 4) of the profiled run, from its ncu counters; never a default.
  const profile::EnergyProxyEstimate energy = profile::ComputeEnergyProxy(metrics);
  if (args.json) {
    Json j = ToJson(analysis);
    j["subject"] = subject;
    if (stage1) {
      j["stage1"] = {{"bottleneck", roofline::BottleneckName(stage1->bottleneck)},
                     {"confidence", stage1->confidence},
                     {"gpu", stage1->gpu},
                     {"precision", stage1->precision},
                     {"attainable_time_s", stage1->roofline.attainable_time_s}};
    }
    if (position) {
      j["roofline_position"] = {{"measured_time_s", position->measured_time_s},
                                {"attainable_time_s", position->attainable_time_s},
                                {"fraction_of_bound", position->fraction_of_bound},
                                {"measured_from", measured_from},
                                {"summary", position->summary}};
    }
    j["notes"] = metrics.notes;
    j["energy_proxy"] = profile::EnergyProxyJson(energy);
    j["energy_proxy_missing"] = energy.missing;
    j["guidance"] = guidance;
    std::cout << DumpJson(j) << "\n";
    return 0;
  }
  std::cout << "kernelpro advise: " << subject << "\n";
  if (stage1) {
    std::cout << "stage 1: " << roofline::BottleneckName(stage1->bottleneck) << "-bound on "
              << stage1->gpu_name << " (" << stage1->precision << ", confidence "
              << stage1->confidence << "): " << stage1->roofline.reason << "\n";
  } else if (!options.bottleneck) {
    std::cout << "(no Stage-1 class given: every speed tool ran; --class "
                 "memory|compute|latency|mixed filters them)\n";
  }
  if (position) std::cout << "roofline: " << position->summary << " [" << measured_from << "]\n";
  for (const std::string& note : metrics.notes) std::cout << "note: " << note << "\n";
  std::cout << "\n" << profile::RenderEnergyProxy(energy);
  std::cout << "\n" << guidance;
  return 0;
}

}  // namespace

CommandRunner RegisterAdviseCommand(CLI::App& app) {
  auto args = std::make_shared<AdviseArgs>();
  CLI::App* cmd = app.add_subcommand(
      "advise",
      "Run the micro-profiling tools on a profiled candidate (GPU) or on saved artifacts");
  cmd->footer(
      "--json prints an object with the findings, the skipped, quiet and filtered tools, "
      "the energy proxy (energy_proxy, or null and energy_proxy_missing) and the guidance");
  AddOption(*cmd, kProblemOption, args->problem)->check(InputFile());
  AddOption(*cmd, kCandidateOption, args->candidate)->check(InputFile());
  AddSandboxOptions(*cmd, args->eval);
  AddOption(*cmd, kFromOption, args->from)->check(CLI::ExistingDirectory);
  AddOption(*cmd, kNameOption, args->name);
  cmd->add_option("--class", args->bottleneck,
                  "Stage-1 bottleneck class: filters the tools that run")
      ->check(CLI::IsMember({"compute", "memory", "latency", "mixed"}));
  AddOption(*cmd, kAnalysisOption, args->analysis_file)->check(InputFile());
  AddOption(*cmd, kGpuOption, args->gpu);
  AddOption(*cmd, kMaxCharsOption, args->max_chars)
      ->check(WholeRange(1, 1e8))
      ->capture_default_str();
  AddOption(*cmd, kSaveOption, args->profile.artifacts_dir);
  cmd->add_option("--save-name", args->profile.artifacts_name, "NAME of the saved artifacts")
      ->capture_default_str();
  AddDeviceOption(*cmd, args->eval.device);
  AddWorkerOptions(*cmd, args->eval, args->python);
  AddOption(*cmd, kJsonOption, args->json);
  AddToolOptions(*cmd, args->tools);
  return [args] { return Advise(*args); };
}

}  // namespace kernelpro::cli
