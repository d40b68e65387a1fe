// `kernelpro prompt`: prints the exact prompt the Programmer Agent would send for a problem, in
// any mode, without calling an LLM or touching a GPU, so that a user can read, diff and review it.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include "agents/cutlass_tools.h"
#include "agents/prompt_builder.h"
#include "agents/search_memory.h"
#include "cli/commands.h"
#include "cli/common.h"
#include "cli/option_groups.h"
#include "core/json_io.h"
#include "roofline/reference_analysis.h"

namespace kernelpro::cli {
namespace {

struct PromptArgs {
  std::string device = "cuda";
  std::string mode, problem, parent, feedback, gpu, cutlass_dir, memory, candidates, max_chars,
      speedup, analysis;
  bool json = false;
};

int PromptFail(const std::string& message) {
  std::cerr << "kernelpro prompt: " << message << "\n";
  return 2;
}

Result<std::string> ReadText(const std::string& flag, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound(flag + " " + path + ": cannot be read");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

int RunPrompt(const PromptArgs& args) {
  using agents::PromptContext;
  PromptContext context;
  if (args.mode.empty()) return PromptFail("--mode initial|debug|optimize is required");
  auto mode = agents::ParsePromptMode(args.mode);
  if (!mode) return PromptFail("--mode '" + args.mode + "': give initial, debug or optimize");
  context.mode = *mode;
  context.device = args.device;
  if (args.problem.empty())
    return PromptFail("--problem FILE is required (a KernelBench-style file)");
  auto problem = agents::ReadProblemSource(args.problem);
  if (!problem.ok()) return PromptFail("--problem: " + problem.status().message());
  context.problem = std::move(*problem);

  if (context.mode == agents::PromptMode::kInitial &&
      (!args.parent.empty() || !args.feedback.empty() || !args.speedup.empty())) {
    return PromptFail("--parent, --feedback-file and --speedup are for --mode debug or optimize");
  }
  if (!args.parent.empty()) {
    auto parent = ReadText("--parent", args.parent);
    if (!parent.ok()) return PromptFail(parent.status().message());
    context.parent_code = std::move(*parent);
  }
  if (!args.feedback.empty()) {
    auto feedback = ReadText("--feedback-file", args.feedback);
    if (!feedback.ok()) return PromptFail(feedback.status().message());
    context.feedback = std::move(*feedback);
  }
  // Numbers are checked as every command checks them (cli/common.h), here after the mode so that
  // every error of this command reads "kernelpro prompt: ...".
  if (!args.speedup.empty()) {
    std::string problem = CheckNumber(args.speedup, {.min = 0, .min_exclusive = true});
    if (!problem.empty()) return PromptFail("--speedup " + problem + ", such as 1.8");
    context.parent_speedup = std::strtod(args.speedup.c_str(), nullptr);
  }
  if (!args.memory.empty() && args.memory.ends_with(".jsonl")) {
    // A run's search-memory store: rendered as the run would inject it.
    std::error_code ec;
    if (!std::filesystem::exists(args.memory, ec))
      return PromptFail("--memory " + args.memory + " does not exist");
    auto store = agents::SearchMemory::Open(args.memory);
    if (!store.ok()) return PromptFail(store.status().message());
    context.memory_block = (*store)->Render(agents::kDefaultMemoryChars);
  } else if (!args.memory.empty()) {
    auto memory = ReadText("--memory", args.memory);
    if (!memory.ok()) return PromptFail(memory.status().message());
    context.memory_block = std::move(*memory);
  }
  if (!args.analysis.empty()) {
    auto analysis = roofline::ReadReferenceAnalysisFile(args.analysis);
    if (!analysis.ok()) return PromptFail("--analysis " + analysis.status().message());
    context.stage1 = roofline::RenderStageOneBrief(*analysis);
  }
  Result<std::string> cutlass_root = CheckCutlassDir(args.cutlass_dir);
  if (!cutlass_root.ok()) return PromptFail(cutlass_root.status().message());
  context.cutlass_dir = *cutlass_root;
  if (!args.gpu.empty()) {
    auto gpu = agents::ParseGpuTarget(args.gpu);
    if (!gpu.ok()) return PromptFail("--gpu: " + gpu.status().message());
    context.gpu = *gpu;
  }
  // What optimize's programmer reads with this tree: the mined constraints too (on Hopper).
  if (!context.cutlass_dir.empty() && agents::ConstraintsApplyTo(context.gpu)) {
    auto tree = cutlass::CutlassTreeAt(context.cutlass_dir);
    if (!tree.ok()) return PromptFail("--cutlass-dir " + tree.status().message());
    agents::CutlassKitOptions kit_options;
    kit_options.tools = false;
    auto kit = agents::CutlassKit::Load(*tree, kit_options);
    if (!kit.ok()) return PromptFail("--cutlass-dir " + kit.status().message());
    context.cutlass_constraints = (*kit)->constraints_markdown();
  }
  if (!args.candidates.empty()) {
    std::string problem = CheckNumber(args.candidates, {.min = 1, .max = 16, .whole = true});
    if (!problem.empty()) return PromptFail("--candidates " + problem);
    context.num_candidates = std::stoi(args.candidates);
  }
  if (!args.max_chars.empty()) {
    std::string problem = CheckNumber(args.max_chars, {.min = 1, .max = 1e8, .whole = true});
    if (!problem.empty()) return PromptFail("--max-chars " + problem);
    context.max_chars = static_cast<size_t>(std::stoll(args.max_chars));
  }

  auto prompt = agents::BuildPrompt(context);
  if (!prompt.ok()) {
    std::string message = prompt.status().message();
    if (message.find("max_chars") != std::string::npos) message += " (--max-chars)";
    return PromptFail(message);
  }
  if (args.gpu.empty()) {
    // Detecting the GPU needs the worker and a device; a prompt is often read on a laptop.
    std::cerr << "kernelpro prompt: no --gpu given, and this command detects no GPU: the prompt "
                 "is written for sm_90 (H100, H200)\n";
  }
  if (args.analysis.empty() && context.device == "cuda") {
    std::cerr << "kernelpro prompt: no --analysis: a run's prompts also show Stage 1's analysis "
                 "of the problem (kernelpro analyze PROBLEM --json > a.json, then --analysis "
                 "a.json)\n";
  } else if (!args.analysis.empty() && context.device != "cuda") {
    std::cerr << "kernelpro prompt: --analysis is not shown for --device cpu (no GPU roofline "
                 "describes a CPU target), as in a run\n";
  }
  if (args.json) {
    Json j = {{"system", prompt->system},
              {"user", prompt->user},
              {"sections", prompt->sections},
              {"trimmed", prompt->trimmed}};
    std::cout << DumpJson(j, 2) << "\n";
    return 0;
  }
  std::cout << "=== system ===\n" << prompt->system << "=== user ===\n" << prompt->user;
  std::cerr << "kernelpro prompt: " << prompt->system.size() + prompt->user.size()
            << " characters (system " << prompt->system.size() << ", user " << prompt->user.size()
            << ")\n";
  for (const std::string& trimmed : prompt->trimmed) {
    std::cerr << "kernelpro prompt: trimmed " << trimmed << "\n";
  }
  return 0;
}

}  // namespace

CommandRunner RegisterPromptCommand(CLI::App& app) {
  auto args = std::make_shared<PromptArgs>();
  CLI::App* cmd = app.add_subcommand(
      "prompt", "Print the exact prompt the programmer would send (no LLM, no GPU)");
  cmd->footer(
      "Without --gpu the prompt is written for sm_90 (H100, H200): this command detects "
      "no GPU. --json prints an object with system, user, sections and trimmed");
  cmd->add_option("--mode", args->mode, "initial | debug | optimize");
  AddOption(*cmd, kProblemOption, args->problem)->check(InputFile());
  cmd->add_option("--parent", args->parent,
                  "debug: the failing candidate; optimize: the working candidate to improve")
      ->check(InputFile());
  cmd->add_option("--feedback-file", args->feedback,
                  "Text file. debug: the compiler/runtime/correctness errors; optimize: the "
                  "profiling analysis (`kernelpro advise` output)")
      ->check(InputFile());
  cmd->add_option("--speedup", args->speedup, "optimize: the parent's measured speedup");
  AddOption(*cmd, kGpuOption, args->gpu);
  AddDeviceOption(*cmd, args->device);
  AddOption(*cmd, kCandidatesOption, args->candidates);
  AddCutlassOptions(*cmd, args->cutlass_dir);
  cmd->add_option(
         "--memory", args->memory,
         "A run's search-memory store (.jsonl), or a text file with a rendered memory block")
      ->check(InputFile());
  AddOption(*cmd, kAnalysisOption, args->analysis)->check(InputFile());
  AddOption(*cmd, kMaxCharsOption, args->max_chars);
  AddOption(*cmd, kJsonOption, args->json);
  return [args] { return RunPrompt(*args); };
}

}  // namespace kernelpro::cli
