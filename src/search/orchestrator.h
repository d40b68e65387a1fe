// The search orchestrator (paper §3.3, Algorithm 1): one optimisation run from the reference to
// the fastest validated kernel, iteration by iteration, every step journaled in the run store so
// that a run killed at any instant resumes with nothing lost and nothing done twice.
//
// One iteration t (1-based), each numbered step a journal entry of the run store keyed
// (t, step, key):
//
//   select     strategy.Next() → node and mode (ROOT → initial, FAILED → debug, WORKING → optimize)
//   generate   BuildPrompt (parent code; debug: its trimmed errors; optimize: its profiling
//              feedback; the search memory) → RunProgrammer → candidates, stored once per source
//              and written as RUN_DIR/candidates/NNNN.py. A candidate the programmer's cheap check
//              rejected (syntax, no ModelNew, no kernel source) becomes a compile_error child
//              without a build; a reply with nothing usable (the LLM call failed, or its reply
//              held no candidate) becomes one llm_error child without a candidate, so the
//              iteration is spent and shown (search/strategy.h says what the search makes of it).
//   evaluate   key "candidate:ID": the evaluator builds every pending candidate of the iteration
//              in one call (builds run in parallel inside it), then each verdict is journaled on
//              its own, so a crash between two of them redoes only the second. A source stored
//              by an earlier iteration keeps its verdict (and its profile): it is not built,
//              checked, timed or profiled again.
//   profile    key "candidate:ID", correct candidates on cuda only: profile (ncu, SASS, timeline),
//              the tool registry's analysis, the profiling agent's LLM call → the feedback the
//              next optimise prompt from this node receives. On cpu nothing is profiled (a note
//              says so) and the feedback is empty, as with --feedback none. With one GPU the
//              children are profiled one by one. With several (RunConfig::gpus > 1), the
//              steps of the children still to profile are all journaled started first, their
//              evaluator Profile calls (the slow part) run at once, up to one per GPU, and then
//              the analysis, the agent's call and the step's rows follow child by child in child
//              order, exactly as with one GPU; the store is only used from the orchestrator's
//              thread. A crash during the concurrent part leaves those steps started: redone.
//   record     rewards, strategy.Record (attach, backpropagate, mark terminals), the tree's nodes
//              written to the store, and the whole tree as JSON in the step's payload. A resumed
//              run rebuilds its strategy from the last recorded tree.
//
// After `record` the iteration is handed to the search memory's extractor (background thread),
// unless its LLM call failed.
//
// After the last iteration, with --energy measure|aware: step (0, "energy", "n3,n7") measures
// NVML's energy per call of the reference and the RunConfig::energy_kernels fastest correct
// kernels (search/measured_energy.h); a run resumed with the same best kernels reuses it.
//
// LLM failures. A permanent one (llm::Error::permanent: a spent or missing replay cassette, HTTP
// 401/403, a model the server does not know) stops the run at once: the generate step stays
// undone, no node is attached, the summary says StopReason::kLlmError with the error, and the run
// is marked finished, so `kernelpro resume RUN_DIR --llm ...` redoes that iteration once the cause
// is fixed. A transient one (429 or 5xx after the client's retries, a timeout, a malformed reply)
// makes an llm_error node and the run goes on; after 3 such iterations in a row (counted in this
// process) it stops the same way ("the model failed 3 iterations in a row: ...").
//
// Noise-aware acceptance: a correct child counts as faster than its parent only when
// ClearlyFaster(child interval, parent interval) holds; the parent of a seed (ROOT) or of a
// repair (a FAILED node) is the reference, 1x. The verdict is stored with the node and shown in
// reports; the search itself still ranks by reward, and the answer is the global best
// (Tree::BestNode), with a note when its interval overlaps its parent's.
//
// Resume, precisely (search/journal.h). A step whose journal entry is done is never redone: its
// payload gives what it produced, and a fresh step hands on the same decoded payload. A step
// started and not done is redone; its rows are written with the "done" mark in one transaction,
// so it leaves no half. The slow work of a step (LLM call, build, GPU run) happens outside any
// transaction. An LLM exchange is stored the moment it returns (search/exchange_sink.h: one
// autocommitted row tagged with the step it was made for); when a step is redone, its stored
// replies are served again in order instead of asking the model, so a reply that arrived before
// the crash is never paid for twice. Files written by a step (candidate sources) are written
// before its commit under names fixed by their rows, so a redo rewrites the same file.
//
// The search memory lives in RUN_DIR/memory.jsonl (SearchMemory::Open: loaded on resume,
// appended line by line). The extractor's calls are tagged (t, "memory"); on resume, every
// recorded iteration whose extraction exchange is not in the store is submitted again.
//
// Thread-safety: an Orchestrator is driven by one thread. The ExchangeSink is called from any
// thread (the extractor's worker too).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agents/benchmarking_agent.h"
#include "agents/cutlass_tools.h"
#include "agents/prompt_mode.h"
#include "agents/search_memory.h"
#include "core/progress.h"
#include "core/status.h"
#include "llm/backend.h"
#include "roofline/reference_analysis.h"
#include "search/candidate_evaluator.h"
#include "search/exchange_sink.h"
#include "search/journal.h"
#include "search/measured_energy.h"
#include "search/node_info.h"
#include "search/programmer_cutlass.h"
#include "search/run_config.h"
#include "search/run_energy.h"
#include "search/run_memory.h"
#include "search/strategy.h"
#include "search/tree.h"
#include "store/run_store.h"
#include "tools/registry.h"

namespace kernelpro::search {

// What one iteration did, for the progress display.
struct IterationProgress {
  int iteration = 0;
  int iterations = 0;  // the run's budget
  agents::PromptMode mode = agents::PromptMode::kInitial;
  int parent = Tree::kRootId;    // tree node expanded
  std::string outcome;           // "correct 1.52x [1.48, 1.55] accepted, compile_error"
  std::optional<int> best_node;  // the global best so far (Tree::BestNode); none: the reference
  std::optional<RatioInterval> best;  // its speedup
  double cost_usd = 0;
  bool resumed = false;  // the iteration was finished by an earlier process (replayed)
};

// kLlmError: the LLM failed for good (Error::permanent) or 3 iterations in a row (see the file
// comment).
enum class StopReason { kIterations, kCost, kTimeLimit, kExhausted, kLlmError };
// "iterations", "cost", "time_limit", "exhausted", "llm_error".
const char* StopReasonName(StopReason reason);

struct OptimizeSummary {
  StopReason stop = StopReason::kIterations;
  std::string stop_message;  // "3 iterations done", "cost $2.01 reached the limit of $2.00"
  int iterations_done = 0;
  std::optional<int> best;  // tree node of the global best; none when nothing is correct
  double cost_usd = 0;
  std::int64_t exchanges = 0;
  std::vector<std::string> notes;  // stage 1 failures, profiling skipped, ...
  // --energy measure|aware: NVML's energy per call of the reference and the fastest kernels,
  // measured after the search (search/measured_energy.h); unset when not measured (a note says
  // why, unless no kernel was correct or RunConfig::energy_kernels is 0).
  std::optional<MeasuredEnergy> energy;
};

struct OrchestratorDependencies {
  llm::Backend* backend = nullptr;               // programmer and profiling agent
  std::shared_ptr<llm::Backend> memory_backend;  // the extractor's; null: `backend` is not
                                                 // shared, so memory extraction is off
  CandidateEvaluator* evaluator = nullptr;
  store::RunStore* store = nullptr;
  ExchangeSink* exchanges = nullptr;                  // required: tags the agents' calls
  agents::BenchmarkingAgent* benchmarking = nullptr;  // Stage 1; null: no class, a note
  const tools::ToolRegistry* registry = nullptr;      // null: the built-in tools
  // With RunConfig::cutlass_dir: the programmer's CUTLASS tools, the prompt's constraints and the
  // pre-build validator (agents/cutlass_tools.h). Null: none of them (the prompt's CUTLASS
  // section still appears with cutlass_dir).
  const agents::CutlassKit* cutlass = nullptr;
  std::function<void(const IterationProgress&)> progress;  // after each iteration
  // Before each iteration (iteration, the run's budget): the progress display's heading.
  std::function<void(int, int)> iteration_started;
  // Where the slow steps of an iteration that are not the evaluator's are reported while they
  // run: the programmer's and the profiling agent's LLM calls (core/progress.h); null: nowhere.
  // The evaluator reports its own builds, checks, timings and profiles.
  ProgressSink* step_progress = nullptr;
  // After every journal step is recorded done (tests kill the process here).
  std::function<void(const store::StepKey&)> on_step_done;
  std::function<void(const std::string&)> log;  // notes that do not stop the run
  // --energy measure|aware, after the search: NVML's meter (search/run_energy.h). Null: not
  // measured, a note says so.
  EnergyMeter measure_energy;
};

class Orchestrator {
 public:
  Orchestrator(RunConfig config, OrchestratorDependencies deps);
  ~Orchestrator();
  Orchestrator(const Orchestrator&) = delete;
  Orchestrator& operator=(const Orchestrator&) = delete;

  // Starts a new run in the store (which must hold none), or continues the one it holds with the
  // options it was created with (`iterations`, `max_cost_usd` and `time_limit_s` of this
  // orchestrator's options win, so a resumed run can be given more budget). Runs until a stop
  // condition; the run is marked finished with the reason. An error stops the run early and marks
  // it failed (resume continues it).
  Result<OptimizeSummary> Run();

  const RunConfig& config() const { return config_; }
  std::int64_t run_id() const { return run_id_; }
  // Valid after Run() began.
  const Tree& tree() const;
  const std::map<int, NodeInfo>& nodes() const { return info_; }
  const std::optional<roofline::ReferenceAnalysis>& stage1() const { return stage1_; }

 private:
  using Children = std::vector<NodeInfo>;
  Status RestoreFromStore();
  void RunStageOne();
  Status StartMemory();
  Status RunIteration(int iteration);
  // The algorithm's steps (the file comment above says what each journals).
  Result<bool> Select(int iteration, const Selection& selection);  // true: replayed
  Result<Children> Generate(int iteration, const Selection& selection);
  Status Evaluate(int iteration, Children& children);
  Status Profile(int iteration, Children& children);
  Result<Json> Record(int iteration, const Selection& selection, Children& children);
  // One child's profile analysis, agent call and rows (the batch with several GPUs:
  // search/profile_batch.h).
  Status ProfileOne(int iteration, NodeInfo& child,
                    std::optional<Result<profile::Metrics>> metrics);
  void Note(const std::string& note);
  void Log(const std::string& line) const;

  RunConfig config_;
  OrchestratorDependencies deps_;
  std::int64_t run_id_ = 0;
  std::int64_t root_node_id_ = 0;
  store::RunLayout layout_{""};  // of config_.run_dir, once the run is open
  std::unique_ptr<Journal> journal_;
  std::unique_ptr<SearchStrategy> strategy_;
  std::map<int, NodeInfo> info_;  // by tree id
  std::optional<roofline::ReferenceAnalysis> stage1_;
  tools::ToolRegistry builtin_registry_;  // when the dependencies bring none
  std::unique_ptr<RunMemory> memory_;     // with RunConfig::memory and a memory backend
  ProgrammerCutlass cutlass_{nullptr};    // deps_.cutlass, as the generate step uses it
  std::vector<std::string> notes_;
  // LLM failures in this process: iterations in a row that were all llm_error, the last one's
  // reason; a permanent error that stops the run (set by Generate).
  int llm_errors_in_a_row_ = 0;
  std::string last_llm_error_;
  std::optional<std::string> permanent_llm_error_;
};

}  // namespace kernelpro::search
