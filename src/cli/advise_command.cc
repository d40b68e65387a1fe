// `kernelpro advise`: the micro-profiling tools without any LLM. Profiles a candidate on the GPU
// (or reads saved artifacts), runs every relevant tool and prints the "Automated Bottleneck
// Analysis" a kernel engineer can act on.
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/option_groups.h"
#include "eval/profile_runner.h"
#include "profile/collect.h"
#include "profile/energy_proxy.h"
#include "roofline/reference_analysis.h"
#include "tools/render.h"
#include "tools/work_check.h"

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

// What was profiled: its metrics, and the name the output gives it.
struct ProfiledSubject {
  profile::Metrics metrics;
  std::string subject;
};

// Metrics from saved artifacts (--from DIR --name NAME). None after printing why there are none.
std::optional<ProfiledSubject> ReadSavedArtifacts(const AdviseArgs& args) {
  if (args.name.empty()) {
    std::cerr << "kernelpro advise: --from needs --name\n";
    return std::nullopt;
  }
  profile::ArtifactPaths paths = profile::ArtifactsIn(args.from, args.name);
  if (paths.empty()) {
    std::cerr << "kernelpro advise: no artifacts named " << args.name << ".* in " << args.from
              << "\n";
    return std::nullopt;
  }
  return ProfiledSubject{profile::CollectFromArtifacts(paths), args.from + "/" + args.name};
}

// Profiles --candidate (or the reference) of --problem on the device, after a theoretical Stage 1
// into `stage1` when neither --analysis nor --class gave the class (when Stage 1 cannot run, the
// profile's first note says why). None after printing why nothing was profiled.
std::optional<ProfiledSubject> ProfileOnDevice(AdviseArgs& args,
                                               const tools::AnalysisOptions& options,
                                               std::optional<roofline::ReferenceAnalysis>& stage1) {
  std::optional<CreatedDirectory> saved;
  if (!args.profile.artifacts_dir.empty()) {
    auto made = CreatedDirectory::Create(args.profile.artifacts_dir, "--save");
    if (!made.ok()) {
      std::cerr << "kernelpro advise: " << made.status().message() << "\n";
      return std::nullopt;
    }
    saved = std::move(*made);
  }
  auto executor = MakeExecutor(args.eval, args.python, "advise");
  if (!executor) {
    if (saved) saved->RemoveIfEmpty();
    return std::nullopt;
  }
  std::string
      stage1_note;  // why no Stage-1 class could be computed (kept with the profile's notes)
  if (!stage1 && !options.bottleneck) {
    std::optional<roofline::GpuSpec> forced;
    if (!args.gpu.empty()) {
      auto gpu = roofline::FindGpu(args.gpu);
      if (!gpu.ok()) {
        std::cerr << "kernelpro advise: " << gpu.status().message() << "\n";
        return std::nullopt;
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
    return std::nullopt;
  }
  ProfiledSubject out{std::move(*profiled),
                      args.candidate.empty() ? args.problem + " (reference)" : args.candidate};
  if (!stage1_note.empty()) out.metrics.notes.insert(out.metrics.notes.begin(), stage1_note);
  return out;
}

// Where the candidate stands against the reference's roofline, and what its time was measured
// from.
struct RooflinePlacement {
  std::optional<roofline::RooflinePosition> position;
  std::string measured_from;
};

// Its GPU time in the recorded forward call (timeline), else the ncu kernel durations (replayed
// with caches flushed), against Stage 1's roofline. No position without Stage 1 or a time.
RooflinePlacement PlaceOnRoofline(const std::optional<roofline::ReferenceAnalysis>& stage1,
                                  const profile::Metrics& metrics) {
  RooflinePlacement placement;
  if (!stage1) return placement;
  double seconds = 0;
  if (metrics.timeline && metrics.timeline->gpu_busy_us > 0) {
    seconds = metrics.timeline->gpu_busy_us * 1e-6;
    placement.measured_from = "GPU busy time of one forward call (timeline)";
  } else if (metrics.ncu && !metrics.ncu->kernels.empty()) {
    for (const profile::NcuKernel& k : metrics.ncu->kernels) seconds += k.duration_ns() * 1e-9;
    placement.measured_from = "summed ncu kernel durations";
  }
  if (seconds > 0) placement.position = roofline::PositionAgainstRoofline(*stage1, seconds);
  return placement;
}

// What advise found, ready to print.
struct Advice {
  ProfiledSubject profiled;
  std::optional<roofline::ReferenceAnalysis> stage1;
  bool class_given = false;  // --class, or the class Stage 1 gave
  RooflinePlacement placement;
  std::optional<tools::WorkCheck> work;  // counters against Stage 1's bytes and FLOPs
  tools::Analysis analysis;
  std::string guidance;
  profile::EnergyProxyEstimate energy;
};

void PrintJson(const Advice& advice) {
  const std::optional<roofline::ReferenceAnalysis>& stage1 = advice.stage1;
  const std::optional<roofline::RooflinePosition>& position = advice.placement.position;
  Json j = ToJson(advice.analysis);
  j["subject"] = advice.profiled.subject;
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
                              {"measured_from", advice.placement.measured_from},
                              {"summary", position->summary}};
  }
  if (advice.work) j["verified_work"] = tools::ToJson(*advice.work);
  j["notes"] = advice.profiled.metrics.notes;
  j["energy_proxy"] = profile::EnergyProxyJson(advice.energy);
  j["energy_proxy_missing"] = advice.energy.missing;
  j["guidance"] = advice.guidance;
  std::cout << DumpJson(j) << "\n";
}

void PrintText(const Advice& advice) {
  const std::optional<roofline::ReferenceAnalysis>& stage1 = advice.stage1;
  std::cout << "kernelpro advise: " << advice.profiled.subject << "\n";
  if (stage1) {
    std::cout << "stage 1: " << roofline::BottleneckName(stage1->bottleneck) << "-bound on "
              << stage1->gpu_name << " (" << stage1->precision << ", confidence "
              << stage1->confidence << "): " << stage1->roofline.reason << "\n";
  } else if (!advice.class_given) {
    std::cout << "(no Stage-1 class given: every speed tool ran; --class "
                 "memory|compute|latency|mixed filters them)\n";
  }
  if (advice.placement.position) {
    std::cout << "roofline: " << advice.placement.position->summary << " ["
              << advice.placement.measured_from << "]\n";
  }
  if (advice.work) std::cout << tools::RenderWorkCheck(*advice.work) << "\n";
  for (const std::string& note : advice.profiled.metrics.notes) {
    std::cout << "note: " << note << "\n";
  }
  std::cout << "\n" << profile::RenderEnergyProxy(advice.energy);
  std::cout << "\n" << advice.guidance;
}

int Advise(AdviseArgs& args) {
  auto registry = tools::BuildRegistry(args.tools);
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
  Advice advice;
  if (!args.analysis_file.empty()) {
    auto parsed = roofline::ReadReferenceAnalysisFile(args.analysis_file);
    if (!parsed.ok()) {
      std::cerr << "kernelpro advise: --analysis " << args.analysis_file << ": "
                << parsed.status().message() << "\n";
      return 2;
    }
    advice.stage1 = std::move(*parsed);
  }
  std::optional<ProfiledSubject> profiled;
  if (!args.from.empty()) {
    profiled = ReadSavedArtifacts(args);
  } else if (!args.problem.empty()) {
    profiled = ProfileOnDevice(args, options, advice.stage1);
  } else {
    std::cerr << "kernelpro advise: give --problem P [--candidate C] (profile on the GPU) or "
                 "--from DIR --name NAME\n";
    return 2;
  }
  if (!profiled) return 2;
  advice.profiled = std::move(*profiled);

  if (advice.stage1 && !options.bottleneck) options.bottleneck = advice.stage1->bottleneck;
  advice.class_given = options.bottleneck.has_value();
  advice.placement = PlaceOnRoofline(advice.stage1, advice.profiled.metrics);
  if (advice.stage1) {
    options.work = tools::ProblemWorkOf(*advice.stage1);
    advice.work = tools::CheckWork(advice.profiled.metrics, *options.work);
  }
  advice.analysis = registry->Analyze(advice.profiled.metrics, options);
  tools::RenderOptions render;
  render.max_chars = args.max_chars;
  advice.guidance = tools::RenderGuidance(advice.analysis, render);
  // The energy proxy (paper Eq. 4) of the profiled run, from its ncu counters; never a default.
  advice.energy = profile::ComputeEnergyProxy(
      advice.profiled.metrics, profile::EnergyProxyOptionsNamed(args.tools.energy_proxy));
  if (args.json) {
    PrintJson(advice);
  } else {
    PrintText(advice);
  }
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
  AddOption(*cmd, kTimelineOption, args->profile.timeline_source)
      ->check(CLI::IsMember({"torch", "nsys"}))
      ->capture_default_str();
  cmd->add_option("--save-name", args->profile.artifacts_name, "NAME of the saved artifacts")
      ->capture_default_str();
  AddDeviceOption(*cmd, args->eval.device);
  AddWorkerOptions(*cmd, args->eval, args->python);
  AddOption(*cmd, kJsonOption, args->json);
  AddToolOptions(*cmd, args->tools);
  return [args] { return Advise(*args); };
}

}  // namespace kernelpro::cli
