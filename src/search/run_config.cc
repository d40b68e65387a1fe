#include "search/run_config.h"

namespace kernelpro::search {
Json ToJson(const OptimizeOptions& o) {
  return Json{{"problem", o.problem},
              {"iterations", o.iterations},
              {"candidates", o.candidates},
              {"search", o.search},
              {"feedback", agents::ToString(o.feedback)},
              {"memory", o.memory},
              {"seed", o.seed},
              {"run_dir", o.run_dir},
              {"max_cost_usd", NumberOrNull(o.max_cost_usd)},
              {"time_limit_s", NumberOrNull(o.time_limit_s)},
              {"device", o.device},
              {"gpus", o.gpus},
              {"gpu", {{"arch", o.gpu.arch}, {"name", o.gpu.name}}},
              {"cutlass_dir", o.cutlass_dir},
              {"python", o.python},
              {"programmer_max_tokens", o.programmer_max_tokens},
              {"memory_chars", o.memory_chars},
              {"frontend", o.frontend}};
}

Result<OptimizeOptions> OptimizeOptionsFromJson(const Json& j) {
  if (!j.is_object()) return Status::InvalidArgument("run options: not a JSON object");
  OptimizeOptions o;
  o.problem = JsonGet<std::string>(j, "problem", o.problem);
  o.iterations = JsonGet<int>(j, "iterations", o.iterations);
  o.candidates = JsonGet<int>(j, "candidates", o.candidates);
  o.search = JsonGet<std::string>(j, "search", o.search);
  auto feedback = agents::ParseFeedbackMode(JsonGet<std::string>(j, "feedback", "tools"));
  if (!feedback) return Status::InvalidArgument("run options: unknown feedback mode");
  o.feedback = *feedback;
  o.memory = JsonGet<bool>(j, "memory", o.memory);
  o.seed = JsonGet<std::uint64_t>(j, "seed", o.seed);
  o.run_dir = JsonGet<std::string>(j, "run_dir", o.run_dir);
  o.max_cost_usd = JsonNumber(j, "max_cost_usd");
  o.time_limit_s = JsonNumber(j, "time_limit_s");
  o.device = JsonGet<std::string>(j, "device", o.device);
  o.gpus = JsonGet<int>(j, "gpus", o.gpus);
  Json gpu = JsonGet<Json>(j, "gpu", Json::object());
  o.gpu.arch = JsonGet<std::string>(gpu, "arch", o.gpu.arch);
  o.gpu.name = JsonGet<std::string>(gpu, "name", o.gpu.name);
  o.cutlass_dir = JsonGet<std::string>(j, "cutlass_dir", o.cutlass_dir);
  o.python = JsonGet<std::string>(j, "python", o.python);
  o.programmer_max_tokens = JsonGet<int>(j, "programmer_max_tokens", o.programmer_max_tokens);
  o.memory_chars = JsonGet<std::size_t>(j, "memory_chars", o.memory_chars);
  o.frontend = JsonGet<Json>(j, "frontend", Json::object());
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
  if (o.candidates < 1 || o.candidates > 16) {
    return Status::InvalidArgument("run options: candidates must be 1 to 16");
  }
  return o;
}

Result<OptimizeOptions> StoredRunOptions(store::RunStore& store) {
  auto runs = store.ListRuns();
  if (!runs.ok()) return runs.status();
  if (runs->empty()) return Status::NotFound("the run store " + store.path() + " holds no run");
  return OptimizeOptionsFromJson(runs->front().config);
}

}  // namespace kernelpro::search
