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
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "agents/programmer.h"
#include "agents/search_memory.h"
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
  eval::EvalStatus status = eval::EvalStatus::kCompileError;
  std::optional<RatioInterval> speedup;
  std::optional<double> error_magnitude;  // how far an incorrect output was (greedy's repairs)
  std::optional<double> candidate_ms;     // median time, when timed
  // Its time against the speed of light (eval/speed_of_light.h: the bound over its median), when
  // the evaluation could make a bound.
  std::optional<double> sol_fraction;
  // The timing was too noisy to rank by (core/stats.h: a wide interval, or a side's IQR above its
  // median): shown as "noisy timing", never accepted.
  bool noisy_timing = false;
  std::string errors;  // a failed node: its trimmed build, runtime or correctness errors
  // A correct node's shape generality (eval/shape_check.h ShapeGeneralityText): "shapes: 3/3",
  // "fixed-shape", or "" when no shape variants were checked.
  std::string shapes;

  // Profiling.
  std::string feedback;                  // a correct node's profiling feedback ("" when none)
  std::vector<std::string> tools_fired;  // the micro-profiling tools that triggered
  // --energy measure|aware: the energy proxy of its profile in pJ (profile/energy_proxy.h), and
  // reference proxy / this one when the reference's is known. Unset under --energy off, and when
  // the profile lacks a counter.
  std::optional<double> energy_proxy_pj;
  std::optional<double> energy_reduction;

  // Noise-aware verdict of a correct node against its parent (the reference for seeds and
  // repairs): "accepted" (clearly faster), "not accepted" (also every noisy timing); "" for
  // failed nodes.
  std::string verdict;
};

// The whole node, as the record step's payload keeps it ("tree_id" names its tree node).
Json ToJson(int tree_id, const NodeInfo& info);
// Reads ToJson's form, and the generate step's shorter one; missing keys keep their defaults.
NodeInfo NodeInfoFromJson(const Json& json);
// The generate step's payload entry: only what the programmer decided.
Json CandidateJson(const NodeInfo& info);

// A child the programmer's reply brings, before it is recorded: the candidate row and its file
// come when the generate step records it.
struct PlannedChild {
  NodeInfo info;  // strategy, rejected, nothing
  std::string code;
};
// The children of a reply: its checked candidates, then its rejected attempts (compile errors
// without a build) up to `max_children` in all; else one child that records that nothing came
// back.
std::vector<PlannedChild> PlanChildren(const agents::ProgrammerResult& reply, int max_children);
// What the generate step's payload says about the reply: its rejections, error and notes, and
// when tools were offered, "tools_offered" and "tool_calls" (ToolCallsJson).
Json ReplySummary(const agents::ProgrammerResult& reply);

// The programmer's tool calls as the generate step's payload keeps them: name, arguments, the
// result cut to kStoredToolResultBytes (the whole exchange, uncut, is in llm_exchanges), is_error.
inline constexpr std::size_t kStoredToolResultBytes = 4000;
Json ToolCallsJson(const std::vector<agents::ProgrammerToolCall>& calls);
std::vector<agents::ProgrammerToolCall> ToolCallsFromJson(const Json& json);

// The evaluate step's payload: what the tree and the next prompts need of a stored verdict.
Json VerdictPayload(const store::EvaluationRecord& evaluation, std::int64_t evaluation_id);
// Fills the evaluation fields of `info` from a VerdictPayload.
void ApplyVerdict(const Json& payload, NodeInfo& info);
// Fills the profiling fields of `info` from a profile step's payload.
void ApplyProfile(const Json& payload, NodeInfo& info);
// The evaluation row of a verdict.
store::EvaluationRecord EvaluationRow(std::int64_t candidate_id, const eval::EvalResult& result);
// The payload of a verdict an earlier iteration stored for the same source (marked "reused");
// none when the candidate was never evaluated.
Result<std::optional<Json>> ReusedVerdictPayload(store::RunStore& store, std::int64_t candidate_id);

// What the search strategy learns of the node.
CandidateOutcome ToOutcome(const NodeInfo& info);
// The node's run store row: its place in the tree, its verdict and its MCTS statistics.
store::NodeRecord NodeRow(std::int64_t run_id, std::int64_t parent_node_id, const Node& node,
                          const NodeInfo& info);
// After a strategy's Record: the rows of the nodes from `first_new` on (their node_id is set in
// `infos`), and the changed statistics (visits, total reward, terminal) of the nodes before them.
Status StoreTreeNodes(store::RunStore& store, std::int64_t run_id, const Tree& tree, int first_new,
                      std::map<int, NodeInfo>& infos);

// What the search memory's extractor learns from one iteration: every child attached from
// `first_new` on (its code, verdict, speedup, and its errors or profiling feedback), `verdicts`
// holding each one's in order; the record's top-level fields describe the best child.
agents::IterationRecord IterationSummary(store::RunStore& store, const Tree& tree,
                                         const std::map<int, NodeInfo>& infos, int first_new,
                                         agents::PromptMode mode,
                                         const std::vector<std::string>& verdicts);

// The search as the record steps left it: the last recorded tree and every attached node's facts
// (ROOT's row id included), rebuilt from the record payloads of iterations 1..last.
struct RecordedSearch {
  Tree tree;
  std::map<int, NodeInfo> infos;  // by tree id
};
class Journal;
// By iteration, the programmer's tool calls the generate steps of iterations 1..last_iteration
// stored (iterations without any are left out).
Result<std::map<int, std::vector<agents::ProgrammerToolCall>>> ReadProgrammerToolCalls(
    Journal& journal, int last_iteration);

Result<RecordedSearch> ReadRecordedSearch(Journal& journal, int last_iteration,
                                          std::int64_t root_node_id);

}  // namespace kernelpro::search
