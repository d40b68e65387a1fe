// `kernelpro advise`: the micro-profiling tools without any LLM. Profiles a candidate on the GPU
// (or reads saved artifacts), runs every relevant tool and prints the "Automated Bottleneck
// Analysis" a kernel engineer can act on.
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/tool_options.h"
#include "eval/profile_runner.h"
#include "profile/collect.h"
#include "tools/render.h"

namespace kernelpro::cli {
namespace {

struct AdviseArgs {
  std::string problem, candidate, from, name, bottleneck, python;
  bool json = false;
  std::size_t max_chars = RenderOptions{}.max_chars;
  EvalOptions eval;
  ProfileOptions profile;
  ToolOptions tools;
};

int Advise(AdviseArgs& args) {
  auto registry = BuildRegistry(args.tools);
  if (!registry.ok()) {
    std::cerr << "kernelpro advise: " << registry.status().message() << "\n";
    return 2;
  }
  auto overrides = ParseThresholds(args.tools, *registry);
  if (!overrides.ok()) {
    std::cerr << "kernelpro advise: " << overrides.status().message() << "\n";
    return 2;
  }
  AnalysisOptions options;
  options.energy = !args.tools.no_energy;
  options.overrides = *overrides;
  if (!args.bottleneck.empty()) options.bottleneck = ParseBottleneck(args.bottleneck).value();

  Metrics metrics;
  std::string subject;
  if (!args.from.empty()) {
    if (args.name.empty()) {
      std::cerr << "kernelpro advise: --from needs --name\n";
      return 2;
    }
    ArtifactPaths paths = ArtifactsIn(args.from, args.name);
    if (paths.ncu_csv.empty() && paths.sass.empty() && paths.res_usage.empty() && paths.symbols.empty() &&
        paths.nm.empty() && paths.trace.empty()) {
      std::cerr << "kernelpro advise: no artifacts named " << args.name << ".* in " << args.from << "\n";
      return 2;
    }
    metrics = CollectFromArtifacts(paths);
    subject = args.from + "/" + args.name;
  } else if (!args.problem.empty()) {
    auto executor = MakeExecutor(args.eval, args.python, "advise");
    if (!executor) return 2;
    auto profiled = ProfileCandidate(*executor, args.problem, args.candidate, args.profile);
    if (!profiled.ok()) {
      std::cerr << "kernelpro advise: " << profiled.status().message() << "\n";
      return 2;
    }
    metrics = std::move(*profiled);
    subject = args.candidate.empty() ? args.problem + " (reference)" : args.candidate;
  } else {
    std::cerr << "kernelpro advise: give --problem P [--candidate C] (profile on the GPU) or --from DIR --name NAME\n";
    return 2;
  }

  Analysis analysis = registry->Analyze(metrics, options);
  RenderOptions render;
  render.max_chars = args.max_chars;
  std::string guidance = RenderGuidance(analysis, render);
  if (args.json) {
    Json j = ToJson(analysis);
    j["subject"] = subject;
    j["notes"] = metrics.notes;
    j["guidance"] = guidance;
    std::cout << DumpJson(j) << "\n";
    return 0;
  }
  std::cout << "kernelpro advise: " << subject << "\n";
  if (!options.bottleneck) {
    std::cout << "(no Stage-1 class given: every speed tool ran; --class memory|compute|latency|mixed filters them)\n";
  }
  for (const std::string& note : metrics.notes) std::cout << "note: " << note << "\n";
  std::cout << "\n" << guidance;
  return 0;
}

}  // namespace

CommandRunner RegisterAdviseCommand(CLI::App& app) {
  auto args = std::make_shared<AdviseArgs>();
  CLI::App* cmd = app.add_subcommand(
      "advise", "Run the micro-profiling tools on a profiled candidate (GPU) or on saved artifacts");
  cmd->add_option("--problem", args->problem, "Problem file (profile on the GPU)")->check(CLI::ExistingFile);
  cmd->add_option("--candidate", args->candidate, "Candidate file (omit to advise on the reference)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--from", args->from, "Directory of saved artifacts (the layout of `kernelpro collect --from`)")
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--name", args->name, "NAME of the artifacts in --from");
  cmd->add_option("--class", args->bottleneck, "Stage-1 bottleneck class: filters the tools that run")
      ->check(CLI::IsMember({"compute", "memory", "latency", "mixed"}));
  cmd->add_option("--max-chars", args->max_chars, "Bound on the rendered analysis")->capture_default_str();
  cmd->add_option("--save", args->profile.artifacts_dir, "With --problem: keep the raw profiler outputs in DIR");
  cmd->add_option("--save-name", args->profile.artifacts_name, "NAME of the saved artifacts")->capture_default_str();
  cmd->add_option("--device", args->eval.device, "cuda (profiling needs a GPU)")
      ->check(CLI::IsMember({"cuda", "cpu"}))->capture_default_str();
  cmd->add_option("--cache-dir", args->eval.cache_dir, "Builds and reference outputs")->envname("KERNELPRO_CACHE_DIR");
  cmd->add_option("--python", args->python, "Interpreter with torch")->envname("KERNELPRO_PYTHON");
  cmd->add_flag("--json", args->json, "An object with findings, skipped, quiet and filtered tools, and the guidance");
  AddToolOptions(*cmd, args->tools);
  args->eval.cache_dir.clear();
  return [args] { return Advise(*args); };
}

}  // namespace kernelpro::cli
