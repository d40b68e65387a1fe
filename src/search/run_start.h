// What a run starts from before its first iteration, out of the algorithm's file: the search
// strategy rebuilt from the recorded tree (search/strategy.h says why the tree is its whole
// state), and Stage 1's analysis of the reference, made once and kept with the run.
//
// Thread-safety: the orchestrator's thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "agents/benchmarking_agent.h"
#include "roofline/reference_analysis.h"
#include "search/run_config.h"
#include "search/strategy.h"
#include "search/tree.h"
#include "store/run_store.h"

namespace kernelpro::search {

// The run's strategy (RunConfig::search) on `tree`, with its options: the seed, and energy in the
// reward only for an energy-aware run (measure records energy and leaves the search as off does).
std::unique_ptr<SearchStrategy> NewRunStrategy(const RunConfig& config, Tree tree);

// Stage 1 of the run `run_id`: the analysis stored with it, else `agent`'s (saved to the file
// `saved` and stored with the run). nullopt without an agent (the caller chose to run without
// Stage 1 and says why), or when the analysis failed: then `note_and_log` tells why, and every
// speed tool runs. A store that does not take the analysis is only logged.
std::optional<roofline::ReferenceAnalysis> StageOneOfRun(
    store::RunStore& store, std::int64_t run_id, agents::BenchmarkingAgent* agent,
    const std::string& problem, const std::string& saved,
    const std::function<void(const std::string&)>& note_and_log,
    const std::function<void(const std::string&)>& log);

}  // namespace kernelpro::search
