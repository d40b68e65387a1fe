#include "search/tree.h"

#include <array>
#include <cmath>
#include <utility>

#include "core/enum_names.h"
#include "search/best_rule.h"

namespace kernelpro::search {
namespace {

constexpr int kFormatVersion = 1;

// Stored in tree JSON and run databases: never rename.
constexpr std::array<std::pair<NodeKind, const char*>, 4> kNodeKindNames = {
    {{NodeKind::kRoot, "root"},
     {NodeKind::kFailed, "failed"},
     {NodeKind::kWorking, "working"},
     {NodeKind::kLlmError, "llm_error"}}};

// The kind a node of this status has.
NodeKind KindOf(eval::EvalStatus status) {
  switch (status) {
    case eval::EvalStatus::kCorrect:
      return NodeKind::kWorking;
    case eval::EvalStatus::kLlmError:
      return NodeKind::kLlmError;
    default:
      return NodeKind::kFailed;
  }
}

// JSON has no NaN or infinity (they would come back as null), so a non-finite measurement is
// kept as unknown from the start; the tree then round-trips exactly.
std::optional<double> Finite(std::optional<double> value) {
  return value && std::isfinite(*value) ? value : std::nullopt;
}

std::optional<RatioInterval> Finite(const std::optional<RatioInterval>& interval) {
  if (!interval || !std::isfinite(interval->estimate) || !std::isfinite(interval->low) ||
      !std::isfinite(interval->high) || !std::isfinite(interval->confidence)) {
    return std::nullopt;
  }
  return interval;
}

Json OptionalNumber(const std::optional<double>& value) {
  return value ? Json(*value) : Json(nullptr);
}

Json NodeJson(const Node& node) {
  return {{"id", node.id},
          {"parent", node.parent},
          {"kind", NodeKindName(node.kind)},
          {"depth", node.depth},
          {"mode", node.mode ? Json(agents::ToString(*node.mode)) : Json(nullptr)},
          {"expansion", node.expansion},
          {"candidate", node.candidate},
          {"status", node.status ? Json(eval::EvalStatusName(*node.status)) : Json(nullptr)},
          {"speedup", IntervalJson(node.speedup)},
          {"error_magnitude", OptionalNumber(node.error_magnitude)},
          {"energy_reduction", OptionalNumber(node.energy_reduction)},
          {"reward", node.reward},
          {"visits", node.visits},
          {"total_reward", node.total_reward},
          {"terminal", node.terminal},
          {"noisy_timing", node.noisy_timing}};
}

// Reads one node's fields; the structure across nodes is checked by the caller.
Result<Node> NodeFromJson(const Json& json, int index) {
  auto error = [index](const std::string& what) {
    return Status::InvalidArgument("search tree JSON: node " + std::to_string(index) + ": " + what);
  };
  if (!json.is_object()) return error("not an object");
  for (const char* key : {"id", "parent", "depth", "expansion", "visits"}) {
    if (!json.contains(key) || !json[key].is_number_integer())
      return error(key + std::string(" is not an integer"));
  }
  for (const char* key : {"reward", "total_reward"}) {
    if (!json.contains(key) || !json[key].is_number())
      return error(key + std::string(" is not a number"));
  }
  Node node;
  node.id = json["id"].get<int>();
  node.parent = json["parent"].get<int>();
  node.depth = json["depth"].get<int>();
  node.expansion = json["expansion"].get<int>();
  node.visits = json["visits"].get<int>();
  node.reward = json["reward"].get<double>();
  node.total_reward = json["total_reward"].get<double>();
  node.terminal = JsonGet<bool>(json, "terminal", false);
  node.noisy_timing = JsonGet<bool>(json, "noisy_timing", false);
  node.candidate = JsonGet<std::string>(json, "candidate", "");

  auto kind = ValueOf(kNodeKindNames, JsonGet<std::string>(json, "kind", ""));
  if (!kind) return error("unknown kind");
  node.kind = *kind;
  if (json.contains("status") && !json["status"].is_null()) {
    node.status = eval::ParseEvalStatus(JsonGet<std::string>(json, "status", ""));
    if (!node.status) return error("unknown status");
  }
  if (json.contains("mode") && !json["mode"].is_null()) {
    node.mode = agents::ParsePromptMode(JsonGet<std::string>(json, "mode", ""));
    if (!node.mode) return error("unknown mode");
  }
  if (json.contains("speedup") && !json["speedup"].is_null()) {
    const Json& s = json["speedup"];
    for (const char* key : {"estimate", "low", "high", "confidence"}) {
      if (!s.is_object() || !s.contains(key) || !s[key].is_number()) {
        return error("speedup." + std::string(key) + " is not a number");
      }
    }
    node.speedup = RatioInterval{s["estimate"].get<double>(), s["low"].get<double>(),
                                 s["high"].get<double>(), s["confidence"].get<double>()};
  }
  for (auto [key, field] : {std::pair{"error_magnitude", &node.error_magnitude},
                            std::pair{"energy_reduction", &node.energy_reduction}}) {
    if (!json.contains(key) || json[key].is_null()) continue;
    if (!json[key].is_number()) return error(key + std::string(" is not a number"));
    *field = json[key].get<double>();
  }
  // A tree written before the field: its noisy intervals are still noisy.
  node.noisy_timing = node.noisy_timing || (node.speedup && NoisyInterval(*node.speedup));
  return node;
}

}  // namespace

const char* NodeKindName(NodeKind kind) { return NameOf(kNodeKindNames, kind); }

bool BetterSolution(const Node& a, const Node& b) {
  if (a.correct() != b.correct()) return a.correct();
  if (a.speedup.has_value() != b.speedup.has_value()) return a.speedup.has_value();
  if (a.speedup && a.speedup->estimate != b.speedup->estimate) {
    return a.speedup->estimate > b.speedup->estimate;
  }
  // Equally fast: the energy-aware search (the only one that sets energy_reduction on nodes)
  // prefers the kernel that spends less.
  if (a.energy_reduction && b.energy_reduction && *a.energy_reduction != *b.energy_reduction) {
    return *a.energy_reduction > *b.energy_reduction;
  }
  return a.id < b.id;
}

bool ClearlyFaster(const RatioInterval& child, const RatioInterval& parent) {
  return child.low > parent.high && !NoisyInterval(child);
}

Tree::Tree() {
  Node root;
  root.id = kRootId;
  root.kind = NodeKind::kRoot;
  nodes_.push_back(std::move(root));
}

Result<std::vector<int>> Tree::AddExpansion(int parent, agents::PromptMode mode,
                                            const std::vector<CandidateOutcome>& outcomes,
                                            const std::vector<double>& rewards) {
  if (!Contains(parent)) {
    return Status::InvalidArgument("no node " + std::to_string(parent) + " in the search tree");
  }
  if (outcomes.empty()) return Status::InvalidArgument("an expansion needs at least one outcome");
  if (rewards.size() != outcomes.size()) {
    return Status::InvalidArgument("one reward per outcome is needed");
  }
  for (double reward : rewards) {
    if (!std::isfinite(reward)) return Status::InvalidArgument("rewards must be finite");
  }
  std::vector<int> ids;
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    const CandidateOutcome& outcome = outcomes[i];
    Node child;
    child.id = size();
    child.parent = parent;
    child.kind = KindOf(outcome.status);
    child.depth = nodes_[parent].depth + 1;
    child.mode = mode;
    child.expansion = expansions_;
    child.candidate = outcome.candidate;
    child.status = outcome.status;
    child.speedup = Finite(outcome.speedup);
    child.error_magnitude = Finite(outcome.error_magnitude);
    child.energy_reduction = Finite(outcome.energy_reduction);
    child.noisy_timing =
        outcome.noisy_timing || (child.speedup.has_value() && NoisyInterval(*child.speedup));
    nodes_[parent].children.push_back(child.id);
    ids.push_back(child.id);
    if (child.llm_error()) {
      // Not the kernel's failure, and no kernel to repair: nothing to learn, nothing to select.
      child.terminal = true;
      nodes_[parent].llm_error_children += 1;
      nodes_.push_back(std::move(child));
      continue;
    }
    child.reward = rewards[i];
    child.visits = 1;
    child.total_reward = rewards[i];
    nodes_.push_back(std::move(child));
    for (int a = parent; a >= 0; a = nodes_[a].parent) {
      nodes_[a].visits += 1;
      nodes_[a].total_reward += rewards[i];
    }
  }
  ++expansions_;
  return ids;
}

std::optional<int> Tree::FastestCorrectNode() const {
  std::optional<int> best;
  for (const Node& node : nodes_) {
    if (!node.correct()) continue;
    if (!best || BetterSolution(node, nodes_[*best])) best = node.id;
  }
  return best;
}

std::optional<int> Tree::FastestNode() const {
  std::vector<BestContender> contenders;
  std::vector<int> ids;
  for (const Node& node : nodes_) {
    if (!node.correct() || !node.speedup) continue;
    contenders.push_back({*node.speedup, node.noisy_timing});
    ids.push_back(node.id);
  }
  const std::optional<std::size_t> pick = PickBest(contenders);
  if (!pick) return std::nullopt;
  return ids[*pick];
}

std::optional<int> Tree::BestNode() const {
  const std::optional<int> fastest = FastestNode();
  if (!fastest) return fastest;
  const Node& f = nodes_[*fastest];
  if (!f.energy_reduction || f.noisy_timing) return fastest;
  int best = *fastest;
  for (const Node& n : nodes_) {
    if (!n.correct() || !n.speedup || !n.energy_reduction || n.id == *fastest) continue;
    // The same speed as far as the harness can tell: neither is clearly faster than the other
    // (the acceptance rule's test), n is shown faster than the reference too, and n's timing is
    // not noisy (f's is not, above).
    const bool same_speed = !n.noisy_timing && ShownFasterThanReference(*n.speedup) &&
                            !ClearlyFaster(*f.speedup, *n.speedup) &&
                            !ClearlyFaster(*n.speedup, *f.speedup);
    if (!same_speed) continue;
    const Node& b = nodes_[best];
    if (*n.energy_reduction > *b.energy_reduction ||
        (*n.energy_reduction == *b.energy_reduction && BetterSolution(n, b))) {
      best = n.id;
    }
  }
  return best;
}

Json ToJson(const Tree& tree) {
  Json nodes = Json::array();
  for (const Node& node : tree.nodes()) nodes.push_back(NodeJson(node));
  return {{"version", kFormatVersion}, {"expansions", tree.expansions()}, {"nodes", nodes}};
}

Result<Tree> TreeFromJson(const Json& json) {
  auto error = [](const std::string& what) {
    return Status::InvalidArgument("search tree JSON: " + what);
  };
  if (!json.is_object()) return error("not an object");
  if (JsonGet<int>(json, "version", 0) != kFormatVersion) {
    return error("unsupported version (expected " + std::to_string(kFormatVersion) + ")");
  }
  if (!json.contains("expansions") || !json["expansions"].is_number_integer() ||
      json["expansions"].get<int>() < 0) {
    return error("expansions is not a count");
  }
  if (!json.contains("nodes") || !json["nodes"].is_array() || json["nodes"].empty()) {
    return error("nodes is not a non-empty array");
  }
  Tree tree;
  tree.expansions_ = json["expansions"].get<int>();
  tree.nodes_.clear();
  const Json& nodes = json["nodes"];
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const int index = static_cast<int>(i);
    auto parsed = NodeFromJson(nodes[i], index);
    if (!parsed.ok()) return parsed.status();
    Node node = std::move(parsed).value();
    auto node_error = [&](const std::string& what) {
      return error("node " + std::to_string(index) + ": " + what);
    };
    if (node.id != index) return node_error("id " + std::to_string(node.id) + " out of order");
    if (index == 0) {
      if (node.kind != NodeKind::kRoot || node.parent != -1 || node.depth != 0 || node.status ||
          node.mode || node.expansion != -1) {
        return node_error("the first node must be a bare ROOT");
      }
    } else {
      if (node.parent < 0 || node.parent >= index) {
        return node_error("parent " + std::to_string(node.parent) + " is not an earlier node");
      }
      if (!node.status || !node.mode) return node_error("status and mode are required");
      if (node.kind != KindOf(*node.status)) return node_error("kind does not match status");
      if (tree.nodes_[node.parent].llm_error()) {
        return node_error("an llm_error node has no children");
      }
      if (node.depth != tree.nodes_[node.parent].depth + 1) return node_error("wrong depth");
      if (node.expansion < 0 || node.expansion >= tree.expansions_ ||
          node.expansion < tree.nodes_.back().expansion) {
        return node_error("expansion out of range or out of order");
      }
      tree.nodes_[node.parent].children.push_back(index);
      if (node.llm_error()) tree.nodes_[node.parent].llm_error_children += 1;
    }
    tree.nodes_.push_back(std::move(node));
  }
  // Visits are integers, so their consistency is exact: one per node in the subtree (ROOT has none
  // of its own). Total rewards are floating-point sums taken in backpropagation order and are kept
  // as written.
  for (int id = tree.size() - 1; id >= 0; --id) {
    const Node& node = tree.nodes_[id];
    int expected = node.is_root() || node.llm_error() ? 0 : 1;
    for (int child : node.children) expected += tree.nodes_[child].visits;
    if (node.visits != expected) {
      return error("node " + std::to_string(id) + ": visits " + std::to_string(node.visits) +
                   " do not match its subtree (" + std::to_string(expected) + ")");
    }
  }
  return tree;
}

Json IntervalJson(const std::optional<RatioInterval>& interval) {
  if (!interval) return nullptr;
  return {{"estimate", interval->estimate},
          {"low", interval->low},
          {"high", interval->high},
          {"confidence", interval->confidence}};
}

std::optional<RatioInterval> IntervalFromJson(const Json& j) {
  if (!j.is_object()) return std::nullopt;
  RatioInterval r;
  r.estimate = JsonGet<double>(j, "estimate", 0);
  r.low = JsonGet<double>(j, "low", r.estimate);
  r.high = JsonGet<double>(j, "high", r.estimate);
  r.confidence = JsonGet<double>(j, "confidence", 0.95);
  return r;
}

}  // namespace kernelpro::search
