#include "cli/commands.h"

#include <array>
#include <string>

namespace kernelpro::cli {
namespace {

constexpr std::array<Subcommand, 13> kSubcommands = {{
    {"eval", RegisterEvalCommand},
    {"profile", RegisterProfileCommand},
    {"collect", RegisterCollectCommand},
    {"advise", RegisterAdviseCommand},
    {"tools", RegisterToolsCommand},
    {"analyze", RegisterAnalyzeCommand},
    {"llm", RegisterLlmCommand},
    {"prompt", RegisterPromptCommand},
    {"optimize", RegisterOptimizeCommand},
    {"resume", RegisterResumeCommand},
    {"doctor", RegisterDoctorCommand},
    {"new-problem", RegisterNewProblemCommand},
    {"cache", RegisterCacheCommand},
}};

}  // namespace

std::span<const Subcommand> Subcommands() { return kSubcommands; }

std::vector<std::pair<CLI::App*, CommandRunner>> RegisterSubcommands(CLI::App& app) {
  std::vector<std::pair<CLI::App*, CommandRunner>> registered;
  for (const Subcommand& subcommand : Subcommands()) {
    CommandRunner runner = subcommand.Register(app);
    // Looked up by name (CLI11 2.1 has no non-throwing get_subcommand).
    std::vector<CLI::App*> named = app.get_subcommands(
        [&](CLI::App* sub) { return sub->get_name() == std::string(subcommand.name); });
    registered.emplace_back(named.empty() ? nullptr : named.front(), std::move(runner));
  }
  return registered;
}

}  // namespace kernelpro::cli
