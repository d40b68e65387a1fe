#include "suite/protocol.h"

#include <map>

#include "core/text.h"
#include "eval/eval_options.h"
#include "search/run_config.h"

namespace kernelpro::suite {

std::optional<Protocol> FindProtocol(const std::string& name) {
  if (name != "paper") return std::nullopt;
  return Protocol{"paper", {0.2, 0.33, 0.45, 0.57, 0.7}, 3, 30, 2, 25};
}

Json ToJson(const Protocol& p) {
  return Json{{"name", p.name},
              {"temperatures", p.temperatures},
              {"rounds", p.rounds},
              {"iterations", p.iterations},
              {"candidates", p.candidates},
              {"cap", p.cap}};
}

std::optional<Protocol> ProtocolFromJson(const Json& j) {
  if (!j.is_object()) return std::nullopt;
  Protocol p;
  p.name = JsonGet<std::string>(j, "name", "");
  p.temperatures = JsonGet<std::vector<double>>(j, "temperatures", {});
  p.rounds = JsonGet<int>(j, "rounds", 1);
  p.iterations = JsonGet<int>(j, "iterations", 0);
  p.candidates = JsonGet<int>(j, "candidates", 0);
  p.cap = JsonGet<double>(j, "cap", 0);
  if (p.name.empty()) return std::nullopt;
  return p;
}

std::string DescribeProtocol(const Protocol& p) {
  std::string temperatures;
  for (double t : p.temperatures)
    temperatures += (temperatures.empty() ? "" : ", ") + FormatSignificant(t);
  std::string text = p.name + ": " + std::to_string(p.runs()) + " runs per task (temperatures " +
                     temperatures + " x " + std::to_string(p.rounds) + " rounds), best of runs; " +
                     std::to_string(p.iterations) + " iterations x " +
                     std::to_string(p.candidates) + " candidates; unsolved = 1.0x";
  if (p.cap > 0) text += "; speedups capped at " + FormatSignificant(p.cap) + "x";
  return text;
}

std::string ConditionsOf(const std::vector<std::string>& args) {
  const search::RunConfig defaults;
  std::map<std::string, std::string> c = {
      {"correctness", eval::CorrectnessCriterion(defaults.executor)},
      {"energy", search::EnergyModeName(defaults.energy)},
      {"feedback", agents::ToString(defaults.feedback)},
      {"memory", defaults.memory ? "on" : "off"},
      {"search", defaults.search}};
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    for (const char* name : {"feedback", "search", "correctness", "energy"}) {
      const std::string flag = std::string("--") + name;
      if (a == flag && i + 1 < args.size()) c[name] = args[i + 1];
      if (a.rfind(flag + "=", 0) == 0) c[name] = a.substr(flag.size() + 1);
    }
    if (a == "--no-memory") c["memory"] = "off";
  }
  std::string line;
  for (const auto& [name, value] : c) line += (line.empty() ? "" : ", ") + name + " " + value;
  return line;
}

}  // namespace kernelpro::suite
