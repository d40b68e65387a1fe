// `kernelpro profile` (collect on a GPU) and `kernelpro collect` (parse saved artifacts).
#include <algorithm>
#include <iostream>
#include <memory>
#include <sstream>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/option_groups.h"
#include "eval/profile_runner.h"
#include "profile/collect.h"
#include "profile/ncu_catalog.h"

namespace kernelpro::cli {
namespace {

int Print(const profile::Metrics& metrics, bool json) {
  if (json) {
    std::cout << DumpJson(ToJson(metrics)) << "\n";
  } else {
    std::cout << profile::RenderMetrics(metrics);
  }
  return 0;
}

// The catalog, one metric per line (category, name, description), or as a JSON array.
int ListMetrics(bool json) {
  if (json) {
    Json list = Json::array();
    for (const profile::NcuMetric& m : profile::NcuMetricCatalog()) {
      list.push_back({{"name", m.name},
                      {"category", m.category},
                      {"description", m.description},
                      {"aggregation", m.aggregation}});
    }
    std::cout << DumpJson(list) << "\n";
    return 0;
  }
  for (const profile::NcuMetric& m : profile::NcuMetricCatalog()) {
    std::cout << m.category << std::string(14 - std::min<std::size_t>(m.category.size(), 13), ' ')
              << m.name << "\n    " << m.description << "\n";
  }
  return 0;
}

struct ProfileArgs {
  std::string problem, candidate, python, metrics;
  bool json = false, no_ncu = false, no_sass = false, no_timeline = false, list_metrics = false;
  bool quiet = false;  // --quiet: no progress on stderr
  eval::EvalOptions eval;
  eval::ProfileOptions profile;
};

struct CollectArgs {
  profile::ArtifactPaths paths;
  std::string from, name;
  bool json = false;
};

}  // namespace

CommandRunner RegisterProfileCommand(CLI::App& app) {
  auto args = std::make_shared<ProfileArgs>();
  CLI::App* cmd = app.add_subcommand(
      "profile", "Profile a candidate on a GPU: ncu counters, SASS of the built .so, timeline");
  cmd->option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  cmd->footer("--json prints the Metrics record (with --list-metrics, the catalog as an array)");
  AddOption(*cmd, kProblemOption, args->problem)->check(InputFile());
  AddOption(*cmd, kCandidateOption, args->candidate)->check(InputFile());
  AddDeviceOption(*cmd, args->eval.device);
  cmd->add_option("--metrics", args->metrics, "Comma-separated ncu metrics instead of the catalog");
  AddOption(*cmd, kNoNcuOption, args->no_ncu);
  cmd->add_flag("--no-sass", args->no_sass, "Skip the SASS analysis");
  cmd->add_flag("--no-timeline", args->no_timeline, "Skip the PyTorch profiler timeline");
  cmd->add_flag(
      "--ncu-lock-clocks", args->profile.ncu_options.lock_clocks,
      "Let ncu lock clocks to base (changes GPU state; off by default, never on shared GPUs)");
  AddOption(*cmd, kTimelineOption, args->profile.timeline_source)
      ->check(CLI::IsMember({"torch", "nsys"}))
      ->capture_default_str();
  AddOption(*cmd, kNcuTimeoutOption, args->profile.ncu_options.timeout_s)
      ->check(WholeRange(1, 86400))
      ->capture_default_str();
  AddOption(*cmd, kSaveOption, args->profile.artifacts_dir);
  AddOption(*cmd, kNameOption, args->profile.artifacts_name)->capture_default_str();
  AddWorkerOptions(*cmd, args->eval, args->python);
  AddSandboxOptions(*cmd, args->eval);
  AddOption(*cmd, kJsonOption, args->json);
  AddProgressOptions(*cmd, args->quiet);
  cmd->add_flag("--list-metrics", args->list_metrics, "Print the ncu metric catalog and exit");
  return [args] {
    if (args->list_metrics) return ListMetrics(args->json);
    if (args->problem.empty()) {
      std::cerr << "kernelpro profile: --problem is required\n";
      return 2;
    }
    // The --save directory is made first: a path that cannot hold the outputs fails before the
    // minutes of profiling, not after them.
    std::optional<CreatedDirectory> saved;
    if (!args->profile.artifacts_dir.empty()) {
      auto made = CreatedDirectory::Create(args->profile.artifacts_dir, "--save");
      if (!made.ok()) {
        std::cerr << "kernelpro profile: " << made.status().message() << "\n";
        return 2;
      }
      saved = std::move(*made);
    }
    auto executor = MakeExecutor(args->eval, args->python, "profile");
    if (!executor) {
      if (saved) saved->RemoveIfEmpty();
      return 2;
    }
    args->profile.ncu = !args->no_ncu;
    args->profile.sass = !args->no_sass;
    args->profile.timeline = !args->no_timeline;
    std::stringstream list(args->metrics);
    for (std::string m; std::getline(list, m, ',');) {
      if (!m.empty()) args->profile.ncu_options.metrics.push_back(m);
    }
    std::unique_ptr<ProgressReporter> progress = MakeProgress("profile", args->quiet);
    executor->set_progress(progress.get());
    auto metrics = eval::ProfileCandidate(*executor, args->problem, args->candidate, args->profile);
    if (progress) progress->Finish();
    if (!metrics.ok()) {
      if (saved) saved->RemoveIfEmpty();
      std::cerr << "kernelpro profile: " << metrics.status().message() << "\n";
      return 2;
    }
    return Print(*metrics, args->json);
  };
}

CommandRunner RegisterCollectCommand(CLI::App& app) {
  auto args = std::make_shared<CollectArgs>();
  CLI::App* cmd = app.add_subcommand(
      "collect", "Build the Metrics record from saved profiler outputs (no GPU needed)");
  cmd->option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  cmd->add_option("--ncu-csv", args->paths.ncu_csv,
                  "ncu --csv --page raw --print-units base output")
      ->check(InputFile());
  cmd->add_option("--sass", args->paths.sass, "cuobjdump --dump-sass output")->check(InputFile());
  cmd->add_option("--res-usage", args->paths.res_usage, "cuobjdump -res-usage output")
      ->check(InputFile());
  cmd->add_option("--symbols", args->paths.symbols, "cuobjdump -symbols output")
      ->check(InputFile());
  cmd->add_option("--nm", args->paths.nm, "nm -D output of the built .so")->check(InputFile());
  cmd->add_option("--trace", args->paths.trace,
                  "PyTorch profiler trace (.json) or nsys SQLite export")
      ->check(InputFile());
  cmd->footer("--json prints the Metrics record");
  AddOption(*cmd, kFromOption, args->from)->check(CLI::ExistingDirectory);
  AddOption(*cmd, kNameOption, args->name);
  AddOption(*cmd, kJsonOption, args->json);
  return [args] {
    profile::ArtifactPaths paths = args->paths;
    if (!args->from.empty()) {
      if (args->name.empty()) {
        std::cerr << "kernelpro collect: --from needs --name\n";
        return 2;
      }
      profile::ArtifactPaths found = profile::ArtifactsIn(args->from, args->name);
      for (auto [mine, theirs] : {std::pair{&paths.ncu_csv, &found.ncu_csv},
                                  {&paths.sass, &found.sass},
                                  {&paths.res_usage, &found.res_usage},
                                  {&paths.symbols, &found.symbols},
                                  {&paths.nm, &found.nm},
                                  {&paths.trace, &found.trace}}) {
        if (mine->empty()) *mine = *theirs;
      }
    }
    if (paths.empty()) {
      std::cerr << "kernelpro collect: no artifacts given (or none found under --from with that "
                   "--name)\n";
      return 2;
    }
    return Print(profile::CollectFromArtifacts(paths), args->json);
  };
}

}  // namespace kernelpro::cli
