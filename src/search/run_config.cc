#include "search/run_config.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/version.h"
#include "search/tree.h"

namespace kernelpro::search {
namespace {

Json ToJson(const tools::ToolConfig& t) {
  return Json{{"plugins", t.plugins},
              {"rule_files", t.rule_files},
              {"thresholds", t.thresholds},
              {"no_energy", t.no_energy},
              {"energy_proxy", t.energy_proxy}};
}

tools::ToolConfig ToolConfigFromJson(const Json& j) {
  tools::ToolConfig t;
  t.plugins = JsonGet<std::vector<std::string>>(j, "plugins", t.plugins);
  t.rule_files = JsonGet<std::vector<std::string>>(j, "rule_files", t.rule_files);
  t.thresholds = JsonGet<std::vector<std::string>>(j, "thresholds", t.thresholds);
  t.no_energy = JsonGet<bool>(j, "no_energy", t.no_energy);
  t.energy_proxy = JsonGet<std::string>(j, "energy_proxy", t.energy_proxy);
  return t;
}

}  // namespace

const char* EnergyModeName(EnergyMode mode) {
  switch (mode) {
    case EnergyMode::kOff:
      return "off";
    case EnergyMode::kMeasure:
      return "measure";
    case EnergyMode::kAware:
      return "aware";
  }
  return "off";
}

std::optional<EnergyMode> ParseEnergyMode(const std::string& name) {
  for (EnergyMode mode : {EnergyMode::kOff, EnergyMode::kMeasure, EnergyMode::kAware}) {
    if (name == EnergyModeName(mode)) return mode;
  }
  return std::nullopt;
}

Json ToJson(const RunConfig& o) {
  return Json{{"problem", o.problem},
              {"iterations", o.iterations},
              {"candidates", o.candidates},
              {"search", o.search},
              {"feedback", agents::ToString(o.feedback)},
              {"memory", o.memory},
              {"seed", o.seed},
              {"seed_given", o.seed_given},
              {"run_dir", o.run_dir},
              {"max_cost_usd", NumberOrNull(o.max_cost_usd)},
              {"time_limit_s", NumberOrNull(o.time_limit_s)},
              {"device", o.device},
              {"gpus", o.gpus},
              {"gpu", {{"arch", o.gpu.arch}, {"name", o.gpu.name}}},
              {"gpu_name", o.gpu_name},
              {"cutlass_dir", o.cutlass_dir},
              {"cutlass_tools", o.cutlass_tools},
              {"cutlass_search_budget", o.cutlass_search_budget},
              {"python", o.python},
              {"programmer_max_tokens", o.programmer_max_tokens},
              {"temperatures", o.temperatures},
              {"memory_chars", o.memory_chars},
              {"tools", ToJson(o.tools)},
              {"energy", EnergyModeName(o.energy)},
              {"energy_kernels", o.energy_kernels},
              {"timeline", o.timeline},
              {"energy_windows", o.energy_windows},
              {"energy_window_s", o.energy_window_s},
              {"llm", llm::ToJson(o.llm)},
              {"executor", ToJson(o.executor)},
              {"worker_python", o.worker_python}};
}

std::optional<std::uint64_t> ProgrammerSeed(const RunConfig& config, int iteration) {
  if (!config.seed_given) return std::nullopt;
  // Unsigned arithmetic wraps modulo 2^64, a multiple of 2^31: the result is exact for any seed.
  constexpr std::uint64_t kMask = (std::uint64_t{1} << 31) - 1;
  return (config.seed * 1000003u + static_cast<std::uint64_t>(iteration) * 1000u) & kMask;
}

Result<RunConfig> RunConfigFromJson(const Json& j) {
  if (!j.is_object()) return Status::InvalidArgument("run options: not a JSON object");
  RunConfig o;
  o.problem = JsonGet<std::string>(j, "problem", o.problem);
  o.iterations = JsonGet<int>(j, "iterations", o.iterations);
  o.candidates = JsonGet<int>(j, "candidates", o.candidates);
  o.search = JsonGet<std::string>(j, "search", o.search);
  auto feedback = agents::ParseFeedbackMode(JsonGet<std::string>(j, "feedback", "tools"));
  if (!feedback) return Status::InvalidArgument("run options: unknown feedback mode");
  o.feedback = *feedback;
  o.memory = JsonGet<bool>(j, "memory", o.memory);
  o.seed = JsonGet<std::uint64_t>(j, "seed", o.seed);
  o.seed_given = JsonGet<bool>(j, "seed_given", o.seed_given);
  o.run_dir = JsonGet<std::string>(j, "run_dir", o.run_dir);
  o.max_cost_usd = JsonNumber(j, "max_cost_usd");
  o.time_limit_s = JsonNumber(j, "time_limit_s");
  o.device = JsonGet<std::string>(j, "device", o.device);
  o.gpus = JsonGet<int>(j, "gpus", o.gpus);
  Json gpu = JsonGet<Json>(j, "gpu", Json::object());
  o.gpu.arch = JsonGet<std::string>(gpu, "arch", o.gpu.arch);
  o.gpu.name = JsonGet<std::string>(gpu, "name", o.gpu.name);
  o.cutlass_dir = JsonGet<std::string>(j, "cutlass_dir", o.cutlass_dir);
  o.cutlass_tools = JsonGet<bool>(j, "cutlass_tools", o.cutlass_tools);
  o.cutlass_search_budget = JsonGet<int>(j, "cutlass_search_budget", o.cutlass_search_budget);
  o.python = JsonGet<std::string>(j, "python", o.python);
  o.programmer_max_tokens = JsonGet<int>(j, "programmer_max_tokens", o.programmer_max_tokens);
  o.memory_chars = JsonGet<std::size_t>(j, "memory_chars", o.memory_chars);
  o.temperatures = JsonGet<std::vector<double>>(j, "temperatures", o.temperatures);
  // Runs recorded before RunConfig kept what only the command line knew under "frontend".
  const Json legacy = JsonGet<Json>(j, "frontend", Json::object());
  auto section = [&](const char* key, const char* legacy_key) {
    return JsonGet<Json>(j, key, JsonGet<Json>(legacy, legacy_key, Json::object()));
  };
  o.llm = llm::LlmConfigFromJson(section("llm", "llm"));
  o.executor = eval::EvalOptionsFromJson(section("executor", "eval"));
  o.tools = ToolConfigFromJson(section("tools", "tools"));
  auto energy = ParseEnergyMode(JsonGet<std::string>(j, "energy", "off"));
  if (!energy) return Status::InvalidArgument("run options: energy must be off, measure or aware");
  o.energy = *energy;
  o.energy_kernels = JsonGet<int>(j, "energy_kernels", o.energy_kernels);
  o.timeline = JsonGet<std::string>(j, "timeline", o.timeline);
  o.energy_windows = JsonGet<int>(j, "energy_windows", o.energy_windows);
  o.energy_window_s = JsonGet<double>(j, "energy_window_s", o.energy_window_s);
  o.worker_python =
      JsonGet<std::string>(j, "worker_python", JsonGet<std::string>(legacy, "python", ""));
  o.gpu_name = JsonGet<std::string>(j, "gpu_name", JsonGet<std::string>(legacy, "gpu", ""));
  if (o.search != "mcts" && o.search != "greedy") {
    return Status::InvalidArgument("run options: search must be mcts or greedy, not '" + o.search +
                                   "'");
  }
  if (o.device != "cuda" && o.device != "cpu") {
    return Status::InvalidArgument("run options: device must be cuda or cpu, not '" + o.device +
                                   "'");
  }
  if (o.iterations < 0) return Status::InvalidArgument("run options: iterations must be >= 0");
  if (o.gpus < 1) return Status::InvalidArgument("run options: gpus must be >= 1");
  if (o.energy_kernels < 0 || o.energy_windows < 1 || !(o.energy_window_s > 0)) {
    return Status::InvalidArgument(
        "run options: energy_kernels must be >= 0, energy_windows >= 1, energy_window_s > 0");
  }
  if (o.candidates < 1 || o.candidates > 16) {
    return Status::InvalidArgument("run options: candidates must be 1 to 16");
  }
  return o;
}

Result<RunConfig> StoredRunConfig(store::RunStore& store) {
  auto runs = store.ListRuns();
  if (!runs.ok()) return runs.status();
  if (runs->empty()) return Status::NotFound("the run store " + store.path() + " holds no run");
  return RunConfigFromJson(runs->front().config);
}

namespace {

Result<std::string> ReadFileText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound("cannot read " + path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

Result<OpenedRun> OpenStoredRun(store::RunStore& store, const store::RunRecord& run,
                                const RunConfig& requested) {
  OpenedRun opened;
  opened.run_id = run.id;
  opened.resumed = true;
  auto stored = RunConfigFromJson(run.config);
  if (!stored.ok()) return stored.status();
  opened.config = *stored;
  opened.config.iterations = requested.iterations;
  opened.config.max_cost_usd = requested.max_cost_usd;
  opened.config.time_limit_s = requested.time_limit_s;
  if (!requested.run_dir.empty()) opened.config.run_dir = requested.run_dir;
  // The machine's own: where the interpreter with torch is, which GPUs there are.
  opened.config.gpus = requested.gpus;
  opened.config.executor.gpus = requested.executor.gpus;
  opened.config.python = requested.python;
  opened.config.worker_python = requested.worker_python;
  opened.config.nvml_library = requested.nvml_library;
  const std::string& problem = opened.config.problem;
  auto text = ReadFileText(problem);
  if (!text.ok()) return Status::NotFound("the run's problem file is gone: " + problem);
  if (store::RunStore::Sha256Hex(*text) != run.problem_hash) {
    return Status::InvalidArgument("the problem file " + problem +
                                   " changed since the run began; resume needs the same problem");
  }
  auto nodes = store.ListNodes(run.id);
  if (!nodes.ok()) return nodes.status();
  for (const store::NodeRecord& n : *nodes) {
    if (!n.parent_id) {
      opened.root_node_id = n.id;
      break;
    }
  }
  if (opened.root_node_id == 0) return Status::Internal("the run store holds no root node");
  return opened;
}

}  // namespace

Result<OpenedRun> OpenRun(store::RunStore& store, RunConfig requested) {
  auto runs = store.ListRuns();
  if (!runs.ok()) return runs.status();
  if (!runs->empty()) return OpenStoredRun(store, runs->front(), requested);

  if (requested.problem.empty()) return Status::InvalidArgument("no problem given");
  requested.problem = std::filesystem::absolute(requested.problem).lexically_normal().string();
  auto text = ReadFileText(requested.problem);
  if (!text.ok()) return Status::NotFound("cannot read the problem " + requested.problem);
  store::RunRecord run;
  run.problem_path = requested.problem;
  run.problem_hash = store::RunStore::Sha256Hex(*text);
  run.config = ToJson(requested);
  run.kernelpro_version = kKernelproVersion;
  OpenedRun opened;
  opened.config = std::move(requested);
  auto tx = store.Begin();
  if (!tx.ok()) return tx.status();
  auto id = store.CreateRun(run);
  if (!id.ok()) return id.status();
  opened.run_id = *id;
  store::NodeRecord root;
  root.run_id = opened.run_id;
  root.kind = NodeKindName(NodeKind::kRoot);
  auto root_id = store.AddNode(root);
  if (!root_id.ok()) return root_id.status();
  opened.root_node_id = *root_id;
  if (Status s = tx->Commit(); !s.ok()) return s;
  return opened;
}

}  // namespace kernelpro::search
