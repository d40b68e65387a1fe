#include "suite/protocol.h"

#include "core/text.h"

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

}  // namespace kernelpro::suite
