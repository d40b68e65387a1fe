// The generate step's pieces, out of the algorithm's file (search/orchestrator.h says what the
// step journals): what the programmer's prompt is built from for the node an iteration selected,
// and what the step writes for the programmer's reply, its candidates' rows and files and its
// payload, and reads back from that payload.
//
// The prompt's context holds the problem, the run's device, GPU and candidate count, and, below
// ROOT, the parent's code with its errors (debug) or its profiling feedback and speedup
// (optimize). The run's extras (the search memory, the CUTLASS constraints) are added by the
// orchestrator, which holds them.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "agents/prompt_builder.h"
#include "core/json_io.h"
#include "core/status.h"
#include "roofline/reference_analysis.h"
#include "search/node_info.h"
#include "search/run_config.h"
#include "search/strategy.h"
#include "search/tree.h"
#include "store/run_layout.h"
#include "store/run_store.h"

namespace kernelpro::search {

// Reads the problem file and the parent's candidate from `store`; their errors are returned.
// `stage1` (may be null) becomes the prompt's Stage-1 part in every mode (BuildPrompt leaves it
// out for a CPU target).
Result<agents::PromptContext> IterationPromptContext(
    const RunConfig& config, const Selection& selection, const Tree& tree,
    const std::map<int, NodeInfo>& infos, store::RunStore& store,
    const roofline::ReferenceAnalysis* stage1 = nullptr);

// What the programmer's reply became before it is recorded, and what the payload says of it
// (ReplySummary and the prompt's sections).
struct GeneratedReply {
  std::vector<PlannedChild> children;
  Json about = Json::object();
};

// Inside the step's transaction: each candidate's row, then its file under the row's name
// (RUN_DIR/candidates/NNNN.py, written atomically, so a redone step rewrites the same file); sets
// the children's candidate ids and files. Returns the step's payload.
Result<Json> StoreGeneratedReply(store::RunStore& store, const store::RunLayout& layout,
                                 std::int64_t run_id, int iteration, GeneratedReply& reply);

// The children a generate step's payload names, as the iteration continues with them.
std::vector<NodeInfo> GeneratedChildren(const Json& payload, int iteration);

}  // namespace kernelpro::search
