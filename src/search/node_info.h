// One tree node's facts beyond the tree (search/tree.h holds the shape and the MCTS statistics):
// its candidate, its verdict, its errors or profiling feedback, and its row in the run store.
//
// NodeInfo is the one shape a node has between the orchestrator's steps and the store: the
// generate step fills the candidate, evaluate the verdict, profile the feedback, record the
// acceptance and the store row. The codecs below are the only place that knows how these facts
// are written in journal payloads and run store rows; their JSON keys are stable (runs written by
// earlier versions resume).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/json_io.h"
#include "core/stats.h"
#include "eval/verdict.h"
#include "search/tree.h"
#include "store/run_store.h"

namespace kernelpro::search {

struct NodeInfo {
  std::int64_t node_id = 0;       // run store row; 0 until recorded
  std::int64_t candidate_id = 0;  // 0: no candidate (the programmer produced nothing usable)
  int iteration = 0;
  std::string strategy;  // the programmer's name for the approach
  std::string file;      // RUN_DIR-relative candidate file; "" when none
  std::string rejected;  // the programmer's check failed: a compile_error without a build
  std::string nothing;   // no candidate at all: why (the LLM error)

  // Evaluation.
  EvalStatus status = EvalStatus::kCompileError;
  std::optional<RatioInterval> speedup;
  std::optional<double> error_magnitude;  // how far an incorrect output was (greedy's repairs)
  std::optional<double> candidate_ms;     // median time, when timed
  std::string errors;  // a failed node: its trimmed build, runtime or correctness errors

  // Profiling.
  std::string feedback;                  // a correct node's profiling feedback ("" when none)
  std::vector<std::string> tools_fired;  // the micro-profiling tools that triggered

  // Noise-aware verdict of a correct node against its parent (the reference for seeds and
  // repairs): "accepted" (clearly faster), "not accepted"; "" for failed nodes.
  std::string verdict;
};

// The whole node, as the record step's payload keeps it ("tree_id" names its tree node).
Json ToJson(int tree_id, const NodeInfo& info);
// Reads ToJson's form, and the generate step's shorter one; missing keys keep their defaults.
NodeInfo NodeInfoFromJson(const Json& json);
// The generate step's payload entry: only what the programmer decided.
Json CandidateJson(const NodeInfo& info);

// The evaluate step's payload: what the tree and the next prompts need of a stored verdict.
Json VerdictPayload(const store::EvaluationRecord& evaluation, std::int64_t evaluation_id);
// Fills the evaluation fields of `info` from a VerdictPayload.
void ApplyVerdict(const Json& payload, NodeInfo& info);
// The evaluation row of a verdict.
store::EvaluationRecord EvaluationRow(std::int64_t candidate_id, const EvalResult& result);

// What the search strategy learns of the node.
Outcome ToOutcome(const NodeInfo& info);
// The node's run store row: its place in the tree, its verdict and its MCTS statistics.
store::NodeRecord NodeRow(std::int64_t run_id, std::int64_t parent_node_id, const Node& node,
                          const NodeInfo& info);

}  // namespace kernelpro::search
