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
//              without a build; a reply with nothing usable becomes one compile_error child
//              without a candidate, so the tree still grows.
//   evaluate   key "candidate:ID": the evaluator builds every pending candidate of the iteration
//              in one call (builds run in parallel inside it), then each verdict is journaled on
//              its own, so a crash between two of them redoes only the second. A source stored
//              by an earlier iteration keeps its verdict (and its profile): it is not built,
//              checked, timed or profiled again.
//   profile    key "candidate:ID", correct candidates on cuda only: profile (ncu, SASS, timeline),
//              the tool registry's analysis, the profiling agent's LLM call → the feedback the
//              next optimise prompt from this node receives. On cpu nothing is profiled (a note
//              says so) and the feedback is empty, as with --feedback none. With one GPU the
//              children are profiled one by one. With several (OptimizeOptions::gpus > 1), the
//              steps of the children still to profile are all journaled started first, their
//              evaluator Profile calls (the slow part) run at once, up to one per GPU, and then
//              the analysis, the agent's call and the step's rows follow child by child in child
//              order, exactly as with one GPU; the store is only used from the orchestrator's
//              thread. A crash during the concurrent part leaves those steps started: redone.
//   record     rewards, strategy.Record (attach, backpropagate, mark terminals), the tree's nodes
//              written to the store, and the whole tree as JSON in the step's payload. A resumed
//              run rebuilds its strategy from the last recorded tree.
//
// After `record` the iteration is handed to the search memory's extractor (background thread).
//
// Noise-aware acceptance: a correct child counts as faster than its parent only when
// ClearlyFaster(child interval, parent interval) holds; the parent of a seed (ROOT) or of a
// repair (a FAILED node) is the reference, 1x. The verdict is stored with the node and shown in
// reports; the search itself still ranks by reward, and the answer is the global best
// (Tree::BestNode), with a note when its interval overlaps its parent's.
//
// Resume, precisely. A step whose journal entry is done is never redone: its payload gives what
// it produced. A step started and not done is redone; its rows are written with the "done" mark
// in one transaction, so it leaves no half. The slow work of a step (LLM call, build, GPU run)
// happens outside any transaction. An LLM exchange is stored the moment it returns (the client's
// exchange hook, one autocommitted row tagged with the step it was made for); when a step is
// redone, its stored replies are served again in order instead of asking the model (see
// ExchangeSink), so a reply that arrived before the crash is never paid for twice. Files written
// by a step (candidate sources) are written before its commit under names fixed by their rows, so
// a redo rewrites the same file.
//
// The search memory lives in RUN_DIR/memory.jsonl (SearchMemory::Open: loaded on resume,
// appended line by line). The extractor's calls are tagged (t, "memory"); on resume, every
// recorded iteration whose extraction exchange is not in the store is submitted again.
//
// Thread-safety: an Orchestrator is driven by one thread. The ExchangeSink is called from any
// thread (the extractor's worker too).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "agents/benchmarking_agent.h"
#include "agents/feedback_mode.h"
#include "agents/gpu_target.h"
#include "agents/prompt_mode.h"
#include "agents/search_memory.h"
#include "core/json_io.h"
#include "core/status.h"
#include "eval/executor.h"
#include "eval/profile_runner.h"
#include "llm/backend.h"
#include "llm/client.h"
#include "profile/metrics.h"
#include "roofline/reference_analysis.h"
#include "search/strategy.h"
#include "search/tree.h"
#include "store/run_store.h"
#include "tools/registry.h"

namespace kernelpro::search {

struct OptimizeOptions {
  std::string problem;          // the problem file (absolute once the run is created)
  int iterations = 30;          // T: expansions of the tree
  int candidates = 2;           // N: candidates asked for per expansion
  std::string search = "mcts";  // mcts | greedy
  agents::FeedbackMode feedback = agents::FeedbackMode::kTools;  // tools | reactive | raw | none
  bool memory = true;      // search memory and its extractor (--no-memory: off)
  std::uint64_t seed = 0;  // recorded with the run (the strategies make no random choice)
  std::string run_dir;     // run.db, stage1.json, candidates/, memory.jsonl, best.py, report.*
  std::optional<double> max_cost_usd;  // stop before an iteration once the exchanges cost this
  std::optional<double> time_limit_s;  // stop before an iteration once this process ran this long
  std::string device = "cuda";         // cuda | cpu (C++ CPU extensions, no profiling)
  agents::GpuTarget gpu;               // the GPU the prompts are written for
  std::string cutlass_dir;             // "" = CUTLASS off in the prompts
  std::string python = "python3";      // the programmer's syntax check
  int programmer_max_tokens = 16384;
  std::size_t memory_chars = agents::kDefaultMemoryChars;  // the prompt's memory block
  // GPUs the evaluator runs on (--gpus): how many children's profiles may run at once.
  int gpus = 1;
  // Whatever the front end needs to resume the run (the LLM config, executor options), stored
  // with the run and handed back untouched. Never holds secrets.
  Json frontend = Json::object();
};

Json ToJson(const OptimizeOptions& options);
// Reads what ToJson wrote; missing fields keep their defaults, bad values are InvalidArgument.
Result<OptimizeOptions> OptimizeOptionsFromJson(const Json& json);

// The options a stored run was created with (`kernelpro resume` starts from them). NotFound when
// the store holds no run.
Result<OptimizeOptions> StoredRunOptions(store::RunStore& store);

// The evaluation seam: the orchestrator evaluates and profiles through this, so tests script
// verdicts without building anything. ExecutorEvaluator is the real one.
//
// Thread-safety: Evaluate is called from the orchestrator's thread only. Profile is called from
// up to OptimizeOptions::gpus threads at once (the children of one iteration, never during an
// Evaluate): an implementation must allow concurrent Profile calls. ExecutorEvaluator does; each
// of its profiles leases a GPU of the executor's pool.
class CandidateEvaluator {
 public:
  virtual ~CandidateEvaluator() = default;
  // One verdict per candidate file, in order. An error means the evaluation could not run at all
  // (a broken problem, no device); a failed candidate is a verdict.
  virtual Result<std::vector<EvalResult>> Evaluate(const std::string& problem,
                                                   const std::vector<std::string>& candidates) = 0;
  // The profile of a correct candidate; may come back with notes and no views.
  virtual Result<Metrics> Profile(const std::string& problem, const std::string& candidate) = 0;
};

// Executor::Evaluate and ProfileCandidate. The executor must outlive it.
std::unique_ptr<CandidateEvaluator> NewExecutorEvaluator(Executor& executor,
                                                         ProfileOptions profile = {});

// Where every LLM exchange of a run goes: give Hook() to llm::BackendDependencies::on_exchange
// before the run exists; Attach() connects it to the store. Exchanges that arrive before Attach
// are kept and written then. Each row is tagged with the purpose, iteration and journal step that
// the calling thread declared (the orchestrator does it around each agent call).
class ExchangeSink {
 public:
  std::function<void(const llm::Exchange&)> Hook();
  void Attach(store::RunStore* store, std::int64_t run_id);
  // The cost of every exchange stored for the run, earlier processes included.
  double cost_usd() const;
  std::int64_t exchanges() const;
  // Called after each stored exchange (tests kill the process here). May be empty.
  std::function<void(const store::LlmExchangeRecord&)> on_stored;
  // Told about exchanges that could not be stored.
  std::function<void(const std::string&)> log;

  void Record(const llm::Exchange& exchange);  // what Hook() calls

 private:
  void Write(store::LlmExchangeRecord record);

  mutable std::mutex mu_;
  store::RunStore* store_ = nullptr;
  std::int64_t run_id_ = 0;
  std::vector<store::LlmExchangeRecord> pending_;  // before Attach
  double cost_usd_ = 0;
  std::int64_t exchanges_ = 0;
};

// What one iteration did, for the progress display.
struct IterationProgress {
  int iteration = 0;
  int iterations = 0;  // the run's budget
  agents::PromptMode mode = agents::PromptMode::kInitial;
  int parent = Tree::kRootId;         // tree node expanded
  std::string outcome;                // "correct 1.52x [1.48, 1.55] accepted, compile_error"
  std::optional<RatioInterval> best;  // the global best speedup so far
  double cost_usd = 0;
  bool resumed = false;  // the iteration was finished by an earlier process (replayed)
};

// What the orchestrator knows about a tree node beyond the tree itself.
struct NodeInfo {
  std::int64_t node_id = 0;       // run store row
  std::int64_t candidate_id = 0;  // 0: no candidate (the programmer produced nothing)
  int iteration = 0;
  std::string strategy;
  std::string file;      // RUN_DIR-relative candidate file; "" when none
  std::string errors;    // a failed node: its trimmed build, runtime or correctness errors
  std::string feedback;  // a correct node: the profiling feedback ("" when none)
  // Noise-aware verdict of a correct node against its parent (the reference for seeds and
  // repairs): "accepted" (clearly faster), "not accepted"; "" for failed nodes.
  std::string verdict;
  std::vector<std::string> tools_fired;  // the micro-profiling tools that triggered
  std::optional<double> candidate_ms;    // median time, when timed
};

enum class StopReason { kIterations, kCost, kTimeLimit, kExhausted };
const char* StopReasonName(StopReason reason);  // "iterations", "cost", "time_limit", "exhausted"

struct OptimizeSummary {
  StopReason stop = StopReason::kIterations;
  std::string stop_message;  // "3 iterations done", "cost $2.01 reached the limit of $2.00"
  int iterations_done = 0;
  std::optional<int> best;  // tree node of the global best; none when nothing is correct
  double cost_usd = 0;
  std::int64_t exchanges = 0;
  std::vector<std::string> notes;  // stage 1 failures, profiling skipped, ...
};

struct OrchestratorDependencies {
  llm::Backend* backend = nullptr;               // programmer and profiling agent
  std::shared_ptr<llm::Backend> memory_backend;  // the extractor's; null: `backend` is not
                                                 // shared, so memory extraction is off
  CandidateEvaluator* evaluator = nullptr;
  store::RunStore* store = nullptr;
  ExchangeSink* exchanges = nullptr;                  // required: tags the agents' calls
  agents::BenchmarkingAgent* benchmarking = nullptr;  // Stage 1; null: no class, a note
  const ToolRegistry* registry = nullptr;             // null: the built-in tools
  std::function<void(const IterationProgress&)> progress;
  // After every journal step is recorded done (tests kill the process here).
  std::function<void(const store::StepKey&)> on_step_done;
  std::function<void(const std::string&)> log;  // notes that do not stop the run
};

class Orchestrator {
 public:
  Orchestrator(OptimizeOptions options, OrchestratorDependencies deps);
  ~Orchestrator();
  Orchestrator(const Orchestrator&) = delete;
  Orchestrator& operator=(const Orchestrator&) = delete;

  // Starts a new run in the store (which must hold none), or continues the one it holds with the
  // options it was created with (`iterations`, `max_cost_usd` and `time_limit_s` of this
  // orchestrator's options win, so a resumed run can be given more budget). Runs until a stop
  // condition; the run is marked finished with the reason. An error stops the run early and marks
  // it failed (resume continues it).
  Result<OptimizeSummary> Run();

  const OptimizeOptions& options() const { return options_; }
  std::int64_t run_id() const { return run_id_; }
  // Valid after Run() began.
  const Tree& tree() const;
  const std::map<int, NodeInfo>& nodes() const { return info_; }
  const std::optional<ReferenceAnalysis>& stage1() const { return stage1_; }

 private:
  struct Child;
  Status OpenRun(bool& resumed);
  Status RestoreFromStore();
  void RunStageOne();
  Status RunIteration(int iteration, bool& replayed);
  Result<std::vector<Child>> Generate(int iteration, const Selection& selection);
  Status EvaluateChildren(int iteration, std::vector<Child>& children);
  Status ProfileChildren(int iteration, std::vector<Child>& children);
  // With several GPUs: journals started, then profiles at once, the children ProfileChildren
  // would profile; their metrics (or failures) by candidate id. Empty when fewer than two.
  Result<std::map<std::int64_t, Result<Metrics>>> ProfileConcurrently(
      int iteration, const std::vector<Child>& children);
  Status RecordChildren(int iteration, const Selection& selection, std::vector<Child>& children,
                        IterationProgress& progress);
  void SubmitMemory(const Json& record);
  store::StepKey Key(int iteration, const std::string& step, const std::string& key = "") const;
  Status StepDone(const store::StepKey& key);
  void Log(const std::string& line) const;

  OptimizeOptions options_;
  OrchestratorDependencies deps_;
  std::int64_t run_id_ = 0;
  std::int64_t root_node_id_ = 0;
  std::unique_ptr<SearchStrategy> strategy_;
  std::map<int, NodeInfo> info_;  // by tree id
  std::optional<ReferenceAnalysis> stage1_;
  std::unique_ptr<agents::SearchMemory> memory_;
  std::unique_ptr<agents::MemoryExtractor> extractor_;
  std::vector<std::string> notes_;
};

}  // namespace kernelpro::search
