#include "search/orchestrator.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <utility>

#include "agents/profiling_agent.h"
#include "agents/programmer.h"
#include "agents/prompt_builder.h"
#include "core/stats.h"
#include "core/text.h"
#include "search/greedy.h"
#include "search/mcts.h"
#include "search/reward.h"
#include "tools/render.h"

namespace kernelpro::search {
namespace {

namespace fs = std::filesystem;

// ---------------------------------------------------------------------------------------------
// Exchange tags: which step the calling thread's LLM calls belong to. The exchange hook runs on
// the thread that made the call (the client layers are synchronous), so a thread-local carries
// the tag from the orchestrator (or the extractor's backend) to the sink without any lock.

struct ExchangeTag {
  bool set = false;
  std::string purpose;
  int iteration = 0;
  std::string step_key;
};

thread_local ExchangeTag tls_tag;

class ScopedTag {
 public:
  explicit ScopedTag(ExchangeTag tag) : saved_(std::move(tls_tag)) { tls_tag = std::move(tag); }
  ~ScopedTag() { tls_tag = std::move(saved_); }
  ScopedTag(const ScopedTag&) = delete;
  ScopedTag& operator=(const ScopedTag&) = delete;

 private:
  ExchangeTag saved_;
};

// The replies an earlier process received for a step, in the order its calls got them, as the
// calls will want them again. A reply is worth serving again when it was paid for and the caller
// saw it: a response, or a malformed reply whose text the caller still reads. A response cut off
// at max_tokens that is followed by another exchange was an attempt truncation recovery repeated
// (the caller never saw it), so it is skipped; transient failures are asked again.
Result<std::vector<llm::Outcome>> StoredReplies(store::RunStore& store, const store::StepKey& key) {
  auto records = store.ListLlmExchangesForStep(key);
  if (!records.ok()) return records.status();
  std::vector<llm::Outcome> replies;
  for (size_t i = 0; i < records->size(); ++i) {
    const store::LlmExchangeRecord& r = (*records)[i];
    if (r.response) {
      auto response = llm::ResponseFromJson(*r.response);
      if (!response.ok()) continue;
      if (response->stop_reason == llm::FinishReason::kLength && i + 1 < records->size()) continue;
      replies.emplace_back(std::move(*response));
    } else if (r.error) {
      auto error = llm::ErrorFromJson(*r.error);
      if (!error.ok()) continue;
      if (error->kind == llm::ErrorKind::kMalformed && !error->reply_text.empty()) {
        replies.emplace_back(std::move(*error));
      }
    }
  }
  return replies;
}

// The backend one journal step talks to: it first serves the replies stored for the step by an
// earlier process (nothing is paid twice), then asks the real backend with the step's tag set so
// the exchange is stored under it.
class StepBackend : public llm::Backend {
 public:
  StepBackend(llm::Backend& inner, std::vector<llm::Outcome> stored, ExchangeTag tag)
      : inner_(inner), stored_(std::move(stored)), tag_(std::move(tag)) {}
  std::string provider() const override { return inner_.provider(); }
  std::string model() const override { return inner_.model(); }
  llm::Outcome Complete(const llm::Request& request) override {
    if (next_ < stored_.size()) return stored_[next_++];
    ScopedTag tag(tag_);
    return inner_.Complete(request);
  }
  size_t reused() const { return next_; }

 private:
  llm::Backend& inner_;
  std::vector<llm::Outcome> stored_;
  size_t next_ = 0;
  ExchangeTag tag_;
};

class ExecutorEvaluator : public CandidateEvaluator {
 public:
  ExecutorEvaluator(Executor& executor, ProfileOptions profile)
      : executor_(executor), profile_(std::move(profile)) {}
  Result<std::vector<EvalResult>> Evaluate(const std::string& problem,
                                           const std::vector<std::string>& candidates) override {
    auto report = executor_.Evaluate(problem, candidates);
    if (!report.ok()) return report.status();
    return std::move(report->results);
  }
  Result<Metrics> Profile(const std::string& problem, const std::string& candidate) override {
    return ProfileCandidate(executor_, problem, candidate, profile_);
  }

 private:
  Executor& executor_;
  ProfileOptions profile_;
};

Json IntervalJson(const std::optional<RatioInterval>& r) {
  if (!r) return nullptr;
  return Json{
      {"estimate", r->estimate}, {"low", r->low}, {"high", r->high}, {"confidence", r->confidence}};
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

std::optional<double> OptionalDouble(const Json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_number()) return std::nullopt;
  return j[key].get<double>();
}

std::optional<EvalStatus> ParseEvalStatus(const std::string& text) {
  for (EvalStatus s : {EvalStatus::kCompileError, EvalStatus::kRuntimeError, EvalStatus::kTimeout,
                       EvalStatus::kIncorrect, EvalStatus::kCorrect}) {
    if (text == EvalStatusName(s)) return s;
  }
  return std::nullopt;
}

Json NodeInfoJson(int tree_id, const NodeInfo& n) {
  return Json{{"tree_id", tree_id},
              {"node_id", n.node_id},
              {"candidate_id", n.candidate_id},
              {"iteration", n.iteration},
              {"strategy", n.strategy},
              {"file", n.file},
              {"errors", n.errors},
              {"feedback", n.feedback},
              {"verdict", n.verdict},
              {"tools_fired", n.tools_fired},
              {"candidate_ms", n.candidate_ms ? Json(*n.candidate_ms) : Json(nullptr)}};
}

NodeInfo NodeInfoFromJson(const Json& j) {
  NodeInfo n;
  n.node_id = JsonGet<std::int64_t>(j, "node_id", 0);
  n.candidate_id = JsonGet<std::int64_t>(j, "candidate_id", 0);
  n.iteration = JsonGet<int>(j, "iteration", 0);
  n.strategy = JsonGet<std::string>(j, "strategy", "");
  n.file = JsonGet<std::string>(j, "file", "");
  n.errors = JsonGet<std::string>(j, "errors", "");
  n.feedback = JsonGet<std::string>(j, "feedback", "");
  n.verdict = JsonGet<std::string>(j, "verdict", "");
  n.tools_fired = JsonGet<std::vector<std::string>>(j, "tools_fired", {});
  n.candidate_ms = OptionalDouble(j, "candidate_ms");
  return n;
}

Status WriteFileAtomically(const std::string& path, const std::string& text) {
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    if (!out) return Status::IoError("cannot write " + tmp);
  }
  fs::rename(tmp, path, ec);
  if (ec) return Status::IoError("cannot rename " + tmp + " to " + path + ": " + ec.message());
  return Status::Ok();
}

std::string CandidateFileName(std::int64_t candidate_id) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "candidates/%04lld.py", static_cast<long long>(candidate_id));
  return buf;
}

// The largest absolute error among the compare step's rows, for greedy's repair priority.
std::optional<double> ErrorMagnitude(const Json& correctness) {
  std::optional<double> worst;
  if (!correctness.is_array()) return worst;
  for (const Json& row : correctness) {
    auto v = OptionalDouble(row, "max_abs_err");
    if (v && std::isfinite(*v)) worst = std::max(worst.value_or(*v), *v);
  }
  return worst;
}

// A failed candidate's errors as the debug prompt shows them.
std::string FailureText(EvalStatus status, const std::string& message,
                        const std::string& diagnostics) {
  std::string text = std::string(EvalStatusName(status)) + ": " + message;
  if (!diagnostics.empty()) text += "\n" + diagnostics;
  return agents::TrimBuildErrors(text, 6000);
}

// What an evaluate step's payload holds, from the stored verdict: what the tree and the next
// prompts need of it.
Json VerdictPayload(const store::EvaluationRecord& e, std::int64_t evaluation_id) {
  const EvalStatus status = ParseEvalStatus(e.status).value_or(EvalStatus::kRuntimeError);
  Json payload{{"status", e.status},
               {"speedup", nullptr},
               {"error_magnitude", nullptr},
               {"candidate_ms", e.candidate_ms ? Json(*e.candidate_ms) : Json(nullptr)},
               {"errors", ""},
               {"evaluation_id", evaluation_id}};
  if (status == EvalStatus::kCorrect && e.speedup) {
    payload["speedup"] = IntervalJson(RatioInterval{
        *e.speedup, e.speedup_lo.value_or(*e.speedup), e.speedup_hi.value_or(*e.speedup),
        JsonGet<double>(e.result, "speedup_confidence", 0.95)});
  }
  if (status != EvalStatus::kCorrect) {
    const Json build = JsonGet<Json>(e.result, "build", Json::object());
    payload["errors"] =
        FailureText(status, e.message, JsonGet<std::string>(build, "diagnostics", ""));
  }
  if (auto m = ErrorMagnitude(JsonGet<Json>(e.result, "correctness", Json::array()))) {
    payload["error_magnitude"] = *m;
  }
  return payload;
}

// Whether a rejected candidate is an attempt worth a node (a check that failed), rather than
// bookkeeping of the reply (a duplicate, one beyond the N asked for, an empty entry).
bool RejectionIsAttempt(const std::string& reason) {
  return reason.rfind("duplicate", 0) != 0 && reason.rfind("beyond", 0) != 0 && reason != "no code";
}

}  // namespace

// ---------------------------------------------------------------------------------------------

const char* StopReasonName(StopReason reason) {
  switch (reason) {
    case StopReason::kIterations:
      return "iterations";
    case StopReason::kCost:
      return "cost";
    case StopReason::kTimeLimit:
      return "time_limit";
    case StopReason::kExhausted:
      return "exhausted";
  }
  return "iterations";
}

Json ToJson(const OptimizeOptions& o) {
  return Json{{"problem", o.problem},
              {"iterations", o.iterations},
              {"candidates", o.candidates},
              {"search", o.search},
              {"feedback", agents::ToString(o.feedback)},
              {"memory", o.memory},
              {"seed", o.seed},
              {"run_dir", o.run_dir},
              {"max_cost_usd", o.max_cost_usd ? Json(*o.max_cost_usd) : Json(nullptr)},
              {"time_limit_s", o.time_limit_s ? Json(*o.time_limit_s) : Json(nullptr)},
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
  o.max_cost_usd = OptionalDouble(j, "max_cost_usd");
  o.time_limit_s = OptionalDouble(j, "time_limit_s");
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

std::unique_ptr<CandidateEvaluator> NewExecutorEvaluator(Executor& executor,
                                                         ProfileOptions profile) {
  return std::make_unique<ExecutorEvaluator>(executor, std::move(profile));
}

// ---------------------------------------------------------------------------------------------
// ExchangeSink

std::function<void(const llm::Exchange&)> ExchangeSink::Hook() {
  return [this](const llm::Exchange& exchange) { Record(exchange); };
}

void ExchangeSink::Record(const llm::Exchange& e) {
  store::LlmExchangeRecord r;
  r.iteration = tls_tag.iteration;
  r.purpose = tls_tag.set ? tls_tag.purpose : "untagged";
  r.step_key = tls_tag.step_key;
  r.provider = e.provider;
  r.model = e.model;
  r.input_tokens = e.usage.input_tokens;
  r.output_tokens = e.usage.output_tokens;
  r.cost_usd = e.cost_usd;
  r.cost_known = e.cost_known;
  r.latency_ms = e.latency_ms;
  r.attempts = e.attempts;
  r.request = llm::ToJson(e.request);
  if (e.response) r.response = llm::ToJson(*e.response);
  if (e.error) r.error = llm::ToJson(*e.error);
  r.started_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(e.started.time_since_epoch()).count();
  Write(std::move(r));
}

void ExchangeSink::Write(store::LlmExchangeRecord record) {
  std::function<void(const store::LlmExchangeRecord&)> stored;
  std::string failure;
  {
    std::lock_guard<std::mutex> lock(mu_);
    cost_usd_ += record.cost_usd;
    ++exchanges_;
    if (!store_) {
      pending_.push_back(std::move(record));
      return;
    }
    record.run_id = run_id_;
    auto id = store_->AddLlmExchange(record);
    if (!id.ok()) {
      failure = "could not store an LLM exchange: " + id.status().message();
    } else {
      record.id = *id;
      stored = on_stored;
    }
  }
  if (!failure.empty() && log) log(failure);
  if (stored) stored(record);
}

void ExchangeSink::Attach(store::RunStore* store, std::int64_t run_id) {
  std::vector<store::LlmExchangeRecord> pending;
  {
    std::lock_guard<std::mutex> lock(mu_);
    store_ = store;
    run_id_ = run_id;
    pending.swap(pending_);
    // Earlier processes of the run count towards its cost; the pending ones are added back below.
    auto totals = store->LlmTotalsForRun(run_id);
    cost_usd_ = totals.ok() ? totals->cost_usd : 0;
    exchanges_ = totals.ok() ? totals->exchanges : 0;
  }
  for (store::LlmExchangeRecord& r : pending) Write(std::move(r));
}

double ExchangeSink::cost_usd() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cost_usd_;
}

std::int64_t ExchangeSink::exchanges() const {
  std::lock_guard<std::mutex> lock(mu_);
  return exchanges_;
}

// ---------------------------------------------------------------------------------------------
// Orchestrator

struct Orchestrator::Child {
  std::int64_t candidate_id = 0;  // 0: the programmer produced nothing usable
  std::string strategy;
  std::string file;      // RUN_DIR-relative
  std::string rejected;  // the programmer's check failed: a compile_error without a build
  std::string nothing;   // no candidate at all: why (the LLM error)

  // Evaluation.
  EvalStatus status = EvalStatus::kCompileError;
  std::optional<RatioInterval> speedup;
  std::optional<double> error_magnitude;
  std::optional<double> candidate_ms;
  std::string errors;

  // Profiling.
  std::string feedback;
  std::vector<std::string> tools_fired;
};

Orchestrator::Orchestrator(OptimizeOptions options, OrchestratorDependencies deps)
    : options_(std::move(options)), deps_(std::move(deps)) {}

Orchestrator::~Orchestrator() = default;

const Tree& Orchestrator::tree() const { return strategy_->tree(); }

void Orchestrator::Log(const std::string& line) const {
  if (deps_.log) deps_.log(line);
}

store::StepKey Orchestrator::Key(int iteration, const std::string& step,
                                 const std::string& key) const {
  return store::StepKey{run_id_, iteration, step, key};
}

Status Orchestrator::StepDone(const store::StepKey& key) {
  if (deps_.on_step_done) deps_.on_step_done(key);
  return Status::Ok();
}

Status Orchestrator::OpenRun(bool& resumed) {
  store::RunStore& store = *deps_.store;
  auto runs = store.ListRuns();
  if (!runs.ok()) return runs.status();
  if (!runs->empty()) {
    const store::RunRecord& run = runs->front();
    run_id_ = run.id;
    resumed = true;
    auto stored = OptimizeOptionsFromJson(run.config);
    if (!stored.ok()) return stored.status();
    // The run's own choices win; this process may bring more budget.
    OptimizeOptions merged = *stored;
    merged.iterations = options_.iterations;
    merged.max_cost_usd = options_.max_cost_usd;
    merged.time_limit_s = options_.time_limit_s;
    merged.run_dir = options_.run_dir.empty() ? stored->run_dir : options_.run_dir;
    options_ = merged;
    std::ifstream in(options_.problem, std::ios::binary);
    if (!in) return Status::NotFound("the run's problem file is gone: " + options_.problem);
    std::stringstream text;
    text << in.rdbuf();
    if (store::RunStore::Sha256Hex(text.str()) != run.problem_hash) {
      return Status::InvalidArgument("the problem file " + options_.problem +
                                     " changed since the run began; resume needs the same problem");
    }
    auto nodes = store.ListNodes(run_id_);
    if (!nodes.ok()) return nodes.status();
    for (const store::NodeRecord& n : *nodes) {
      if (!n.parent_id) {
        root_node_id_ = n.id;
        break;
      }
    }
    if (root_node_id_ == 0) return Status::Internal("the run store holds no root node");
    return Status::Ok();
  }

  if (options_.problem.empty()) return Status::InvalidArgument("no problem given");
  options_.problem = fs::absolute(options_.problem).lexically_normal().string();
  std::ifstream in(options_.problem, std::ios::binary);
  if (!in) return Status::NotFound("cannot read the problem " + options_.problem);
  std::stringstream text;
  text << in.rdbuf();
  store::RunRecord run;
  run.problem_path = options_.problem;
  run.problem_hash = store::RunStore::Sha256Hex(text.str());
  run.config = ToJson(options_);
  run.kernelpro_version = "0.1.0";
  // The run and its ROOT appear together or not at all.
  auto tx = store.Begin();
  if (!tx.ok()) return tx.status();
  auto id = store.CreateRun(run);
  if (!id.ok()) return id.status();
  run_id_ = *id;
  store::NodeRecord root;
  root.run_id = run_id_;
  root.kind = NodeKindName(NodeKind::kRoot);
  auto root_id = store.AddNode(root);
  if (!root_id.ok()) return root_id.status();
  root_node_id_ = *root_id;
  return tx->Commit();
}

Status Orchestrator::RestoreFromStore() {
  store::RunStore& store = *deps_.store;
  info_.clear();
  NodeInfo root;
  root.node_id = root_node_id_;
  info_[Tree::kRootId] = root;
  std::optional<Json> last_tree;
  auto last = store.LastJournaledIteration(run_id_);
  if (!last.ok()) return last.status();
  for (int it = 1; it <= last->value_or(0); ++it) {
    auto step = store.GetStep(Key(it, "record"));
    if (!step.ok()) return step.status();
    if (!*step || (*step)->state != store::StepState::kDone) continue;
    const Json& payload = (*step)->payload;
    last_tree = JsonGet<Json>(payload, "tree", Json());
    for (const Json& j : JsonGet<Json>(payload, "attached", Json::array())) {
      info_[JsonGet<int>(j, "tree_id", -1)] = NodeInfoFromJson(j);
    }
  }
  Tree tree;
  if (last_tree) {
    auto parsed = TreeFromJson(*last_tree);
    if (!parsed.ok())
      return Status::Internal("the stored search tree: " + parsed.status().message());
    tree = std::move(*parsed);
  }
  if (options_.search == "greedy") {
    strategy_ = NewGreedyStrategy(GreedyOptions{}, std::move(tree));
  } else {
    MctsOptions mcts;
    mcts.seed = options_.seed;
    strategy_ = NewMctsStrategy(mcts, std::move(tree));
  }
  return Status::Ok();
}

void Orchestrator::RunStageOne() {
  store::RunStore& store = *deps_.store;
  auto run = store.GetRun(run_id_);
  if (run.ok() && run->reference_analysis) {
    auto parsed = ReferenceAnalysisFromJson(*run->reference_analysis);
    if (parsed.ok()) {
      stage1_ = std::move(*parsed);
      return;
    }
  }
  if (!deps_.benchmarking) return;  // the caller chose to run without Stage 1 and says why
  auto analysis = deps_.benchmarking->Analyze(options_.problem, options_.run_dir);
  if (!analysis.ok()) {
    notes_.push_back("stage 1: " + analysis.status().message() + "; every speed tool runs");
    Log(notes_.back());
    return;
  }
  stage1_ = std::move(*analysis);
  Status s = store.SetReferenceAnalysis(run_id_, ToJson(*stage1_));
  if (!s.ok()) Log("stage 1: could not store the analysis: " + s.message());
}

Result<OptimizeSummary> Orchestrator::Run() {
  const auto started = std::chrono::steady_clock::now();
  if (!deps_.backend || !deps_.evaluator || !deps_.store || !deps_.exchanges) {
    return Status::InvalidArgument(
        "orchestrator: backend, evaluator, store and exchange sink are "
        "required");
  }
  bool resumed = false;
  if (Status s = OpenRun(resumed); !s.ok()) return s;
  deps_.exchanges->Attach(deps_.store, run_id_);
  if (Status s = RestoreFromStore(); !s.ok()) return s;
  if (resumed) deps_.store->SetRunStatus(run_id_, store::RunStatus::kRunning);
  RunStageOne();

  auto problem = agents::ReadProblemSource(options_.problem);
  if (!problem.ok()) return problem.status();

  if (options_.memory && deps_.memory_backend) {
    agents::SearchMemoryOptions memory_options;
    memory_options.log = deps_.log;
    auto memory = agents::SearchMemory::Open(options_.run_dir + "/memory.jsonl", memory_options);
    if (!memory.ok()) return memory.status();
    memory_ = std::move(*memory);
    agents::MemoryExtractorOptions extractor_options;
    extractor_options.log = deps_.log;
    extractor_options.max_queue = 16;
    // Each extraction is tagged with the iteration it learns from (its journal step "memory").
    extractor_options.around_call = [](const agents::IterationRecord& record,
                                       const std::function<llm::Outcome()>& call) {
      ScopedTag tag(ExchangeTag{true, "memory", record.iteration, "memory"});
      return call();
    };
    extractor_ = std::make_unique<agents::MemoryExtractor>(deps_.memory_backend, *memory_,
                                                           extractor_options);
    // Iterations recorded by an earlier process whose extraction never came back.
    for (int it = 1; it <= strategy_->tree().expansions(); ++it) {
      auto exchanges = deps_.store->ListLlmExchangesForStep(Key(it, "memory"));
      bool answered =
          exchanges.ok() && std::any_of(exchanges->begin(), exchanges->end(),
                                        [](const auto& e) { return e.response.has_value(); });
      if (answered) continue;
      auto step = deps_.store->GetStep(Key(it, "record"));
      if (step.ok() && *step)
        SubmitMemory(JsonGet<Json>((*step)->payload, "memory_record", Json()));
    }
  } else if (options_.memory) {
    notes_.push_back("search memory: off (no backend for the extractor)");
  }

  OptimizeSummary summary;
  Status failure = Status::Ok();
  while (true) {
    const int next = strategy_->tree().expansions() + 1;
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (next > options_.iterations) {
      summary.stop = StopReason::kIterations;
      summary.stop_message = std::to_string(options_.iterations) + " iterations done";
      break;
    }
    if (options_.max_cost_usd && deps_.exchanges->cost_usd() >= *options_.max_cost_usd) {
      summary.stop = StopReason::kCost;
      summary.stop_message = "the LLM cost $" + FormatFixed(deps_.exchanges->cost_usd(), 4) +
                             " reached the limit of $" + FormatFixed(*options_.max_cost_usd, 4);
      break;
    }
    if (options_.time_limit_s && elapsed >= *options_.time_limit_s) {
      summary.stop = StopReason::kTimeLimit;
      summary.stop_message =
          "the time limit of " + FormatFixed(*options_.time_limit_s, 0) + " s was reached";
      break;
    }
    if (strategy_->Exhausted()) {
      summary.stop = StopReason::kExhausted;
      summary.stop_message = "the search has nothing left to expand";
      break;
    }
    bool replayed = false;
    failure = RunIteration(next, replayed);
    if (!failure.ok()) break;
  }
  if (extractor_) extractor_->Drain();

  summary.iterations_done = strategy_->tree().expansions();
  summary.best = strategy_->BestNode();
  summary.cost_usd = deps_.exchanges->cost_usd();
  summary.exchanges = deps_.exchanges->exchanges();
  summary.notes = notes_;
  if (!failure.ok()) {
    deps_.store->SetRunStatus(run_id_, store::RunStatus::kFailed, failure.message());
    return failure;
  }
  deps_.store->SetRunStatus(
      run_id_, store::RunStatus::kFinished,
      std::string(StopReasonName(summary.stop)) + ": " + summary.stop_message);
  return summary;
}

Status Orchestrator::RunIteration(int iteration, bool& replayed) {
  store::RunStore& store = *deps_.store;
  const Selection selection = strategy_->Next();
  const store::StepKey select_key = Key(iteration, "select");
  auto select = store.GetStep(select_key);
  if (!select.ok()) return select.status();
  if (*select && (*select)->state == store::StepState::kDone) {
    replayed = true;
    const Json& p = (*select)->payload;
    if (JsonGet<int>(p, "node", -1) != selection.node ||
        JsonGet<int>(p, "expansion", -1) != selection.expansion) {
      return Status::Internal("iteration " + std::to_string(iteration) +
                              ": the rebuilt search selects another node than the stored one");
    }
  } else {
    Json payload{{"node", selection.node},
                 {"mode", agents::ToString(selection.mode)},
                 {"expansion", selection.expansion},
                 {"node_id", info_[selection.node].node_id}};
    auto done = store.RecordStep(select_key, [&]() -> Result<Json> { return payload; });
    if (!done.ok()) return done.status();
    StepDone(select_key);
  }

  auto children = Generate(iteration, selection);
  if (!children.ok()) return children.status();
  if (Status s = EvaluateChildren(iteration, *children); !s.ok()) return s;
  if (Status s = ProfileChildren(iteration, *children); !s.ok()) return s;
  IterationProgress progress;
  if (Status s = RecordChildren(iteration, selection, *children, progress); !s.ok()) return s;
  progress.resumed = replayed;
  if (deps_.progress) deps_.progress(progress);
  return Status::Ok();
}

Result<std::vector<Orchestrator::Child>> Orchestrator::Generate(int iteration,
                                                                const Selection& selection) {
  store::RunStore& store = *deps_.store;
  const store::StepKey key = Key(iteration, "generate");
  auto step = store.GetStep(key);
  if (!step.ok()) return step.status();
  auto from_payload = [](const Json& payload) {
    std::vector<Child> children;
    for (const Json& j : JsonGet<Json>(payload, "children", Json::array())) {
      Child c;
      c.candidate_id = JsonGet<std::int64_t>(j, "candidate_id", 0);
      c.strategy = JsonGet<std::string>(j, "strategy", "");
      c.file = JsonGet<std::string>(j, "file", "");
      c.rejected = JsonGet<std::string>(j, "rejected", "");
      c.nothing = JsonGet<std::string>(j, "nothing", "");
      children.push_back(std::move(c));
    }
    return children;
  };
  if (*step && (*step)->state == store::StepState::kDone) return from_payload((*step)->payload);
  if (auto started = store.StartStep(key); !started.ok()) return started.status();

  auto problem = agents::ReadProblemSource(options_.problem);
  if (!problem.ok()) return problem.status();
  agents::PromptContext context;
  context.mode = selection.mode;
  context.device = options_.device;
  context.problem = std::move(*problem);
  context.gpu = options_.gpu;
  context.num_candidates = options_.candidates;
  context.cutlass_dir = options_.cutlass_dir;
  if (memory_) context.memory_block = memory_->Render(options_.memory_chars);
  if (auto parent = selection.parent()) {
    const NodeInfo& info = info_[*parent];
    if (info.candidate_id != 0) {
      auto candidate = store.GetCandidate(info.candidate_id);
      if (!candidate.ok()) return candidate.status();
      context.parent_code = candidate->source;
    } else {
      context.parent_code =
          "# (no code: the previous reply held no usable candidate; write one from scratch)\n";
    }
    if (selection.mode == agents::PromptMode::kDebug) {
      context.feedback = info.errors.empty() ? "the candidate failed" : info.errors;
    } else {
      context.feedback = info.feedback;
      const Node& node = strategy_->tree().node(*parent);
      if (node.speedup) context.parent_speedup = node.speedup->estimate;
    }
  }
  auto prompt = agents::BuildPrompt(context);
  if (!prompt.ok()) return prompt.status();

  auto stored = StoredReplies(store, key);
  if (!stored.ok()) return stored.status();
  StepBackend backend(*deps_.backend, std::move(*stored),
                      ExchangeTag{true, "programmer", iteration, store::StepKeyText(key)});
  agents::ProgrammerOptions programmer;
  programmer.num_candidates = options_.candidates;
  programmer.max_tokens = options_.programmer_max_tokens;
  programmer.python = options_.python;
  programmer.device = options_.device;
  agents::ProgrammerResult result = agents::RunProgrammer(backend, *prompt, programmer);

  // The children: the checked candidates; else the rejected attempts (compile errors without a
  // build); else one child that records that nothing came back.
  struct Planned {
    std::string strategy, code, rejected, nothing;
  };
  std::vector<Planned> planned;
  for (const agents::Candidate& c : result.candidates)
    planned.push_back({c.strategy, c.code, "", ""});
  if (planned.empty()) {
    for (const agents::RejectedCandidate& r : result.rejected) {
      if (static_cast<int>(planned.size()) >= options_.candidates) break;
      if (RejectionIsAttempt(r.reason)) planned.push_back({r.strategy, r.code, r.reason, ""});
    }
  }
  if (planned.empty()) {
    std::string why = result.error ? result.error->ToString() : "the reply held no candidate";
    planned.push_back({"", "", "", "no candidate: " + why});
  }
  Json rejected = Json::array();
  for (const agents::RejectedCandidate& r : result.rejected) {
    rejected.push_back({{"strategy", r.strategy}, {"reason", r.reason}});
  }

  std::vector<Child> children;
  auto done = store.RecordStep(key, [&]() -> Result<Json> {
    children.clear();
    Json list = Json::array();
    for (const Planned& p : planned) {
      Child c;
      c.strategy = p.strategy;
      c.rejected = p.rejected;
      c.nothing = p.nothing;
      if (!p.code.empty()) {
        auto added = store.AddCandidate(run_id_, iteration, p.strategy, p.code);
        if (!added.ok()) return added.status();
        c.candidate_id = added->id;
        c.file = CandidateFileName(added->id);
        Status written = WriteFileAtomically(options_.run_dir + "/" + c.file, p.code);
        if (!written.ok()) return written;
      }
      list.push_back({{"candidate_id", c.candidate_id},
                      {"strategy", c.strategy},
                      {"file", c.file},
                      {"rejected", c.rejected},
                      {"nothing", c.nothing}});
      children.push_back(std::move(c));
    }
    return Json{{"children", list},
                {"rejected", rejected},
                {"error", result.error ? result.error->ToString() : ""},
                {"notes", result.notes},
                {"prompt_sections", prompt->sections},
                {"prompt_trimmed", prompt->trimmed},
                {"reused_replies", backend.reused()}};
  });
  if (!done.ok()) return done.status();
  StepDone(key);
  return children;
}

Status Orchestrator::EvaluateChildren(int iteration, std::vector<Child>& children) {
  store::RunStore& store = *deps_.store;
  auto fill = [](Child& c, const Json& p) {
    c.status =
        ParseEvalStatus(JsonGet<std::string>(p, "status", "")).value_or(EvalStatus::kRuntimeError);
    c.speedup = IntervalFromJson(JsonGet<Json>(p, "speedup", Json()));
    c.error_magnitude = OptionalDouble(p, "error_magnitude");
    c.candidate_ms = OptionalDouble(p, "candidate_ms");
    c.errors = JsonGet<std::string>(p, "errors", "");
  };
  auto record = [&](Child& c, const store::StepKey& key, EvalResult result) -> Status {
    store::EvaluationRecord e;
    e.candidate_id = c.candidate_id;
    e.status = EvalStatusName(result.status);
    e.message = result.message;
    if (result.speedup) {
      e.speedup = result.speedup->estimate;
      e.speedup_lo = result.speedup->low;
      e.speedup_hi = result.speedup->high;
    }
    if (result.reference_time) e.reference_ms = result.reference_time->summary.median;
    if (result.candidate_time) e.candidate_ms = result.candidate_time->summary.median;
    e.total_seconds = result.total_seconds;
    e.result = ToJson(result);
    auto done = store.RecordStep(key, [&]() -> Result<Json> {
      auto id = store.AddEvaluation(e);
      if (!id.ok()) return id.status();
      return VerdictPayload(e, *id);
    });
    if (!done.ok()) return done.status();
    fill(c, done->payload);
    return StepDone(key);
  };

  std::vector<size_t> pending;
  for (size_t i = 0; i < children.size(); ++i) {
    Child& c = children[i];
    if (c.candidate_id == 0) {
      c.status = EvalStatus::kCompileError;
      c.errors = c.nothing;
      continue;
    }
    const store::StepKey key =
        Key(iteration, "evaluate", "candidate:" + std::to_string(c.candidate_id));
    auto step = store.GetStep(key);
    if (!step.ok()) return step.status();
    if (*step && (*step)->state == store::StepState::kDone) {
      fill(c, (*step)->payload);
      continue;
    }
    // The same source as an earlier iteration's candidate: its verdict stands. Nothing is built,
    // checked or timed again, and no second evaluation row is written.
    auto earlier = store.LatestEvaluation(c.candidate_id);
    if (!earlier.ok()) return earlier.status();
    if (*earlier) {
      const Json payload = VerdictPayload(**earlier, (*earlier)->id);
      auto done = store.RecordStep(key, [&]() -> Result<Json> {
        Json p = payload;
        p["reused"] = true;
        return p;
      });
      if (!done.ok()) return done.status();
      fill(c, done->payload);
      if (Status s = StepDone(key); !s.ok()) return s;
      continue;
    }
    if (!c.rejected.empty()) {
      EvalResult result;
      result.candidate = options_.run_dir + "/" + c.file;
      result.status = EvalStatus::kCompileError;
      result.message = "rejected before the build: " + c.rejected;
      if (Status s = record(c, key, std::move(result)); !s.ok()) return s;
      continue;
    }
    pending.push_back(i);
  }
  if (pending.empty()) return Status::Ok();

  std::vector<std::string> paths;
  for (size_t i : pending) {
    const store::StepKey key =
        Key(iteration, "evaluate", "candidate:" + std::to_string(children[i].candidate_id));
    if (auto s = store.StartStep(key); !s.ok()) return s.status();
    paths.push_back(options_.run_dir + "/" + children[i].file);
  }
  auto results = deps_.evaluator->Evaluate(options_.problem, paths);
  if (!results.ok()) return results.status();
  if (results->size() != pending.size()) {
    return Status::Internal("evaluation: " + std::to_string(results->size()) + " verdicts for " +
                            std::to_string(pending.size()) + " candidates");
  }
  for (size_t k = 0; k < pending.size(); ++k) {
    Child& c = children[pending[k]];
    const store::StepKey key =
        Key(iteration, "evaluate", "candidate:" + std::to_string(c.candidate_id));
    if (Status s = record(c, key, std::move((*results)[k])); !s.ok()) return s;
  }
  return Status::Ok();
}

Result<std::map<std::int64_t, Result<Metrics>>> Orchestrator::ProfileConcurrently(
    int iteration, const std::vector<Child>& children) {
  store::RunStore& store = *deps_.store;
  // The children ProfileChildren's loop would profile: correct, step not done, source not
  // profiled by an earlier iteration; a candidate twice in the iteration once.
  std::vector<std::pair<std::int64_t, std::string>> todo;  // candidate id, file
  for (const Child& c : children) {
    if (c.status != EvalStatus::kCorrect || c.candidate_id == 0) continue;
    if (std::any_of(todo.begin(), todo.end(),
                    [&](const auto& t) { return t.first == c.candidate_id; })) {
      continue;
    }
    auto step =
        store.GetStep(Key(iteration, "profile", "candidate:" + std::to_string(c.candidate_id)));
    if (!step.ok()) return step.status();
    if (*step && (*step)->state == store::StepState::kDone) continue;
    auto earlier = store.LatestProfileAnalysis(c.candidate_id);
    if (!earlier.ok()) return earlier.status();
    if (*earlier) continue;
    todo.emplace_back(c.candidate_id, options_.run_dir + "/" + c.file);
  }
  std::map<std::int64_t, Result<Metrics>> fetched;
  if (todo.size() < 2) return fetched;  // nothing to overlap: the loop profiles it as usual
  for (const auto& t : todo) {
    const store::StepKey key = Key(iteration, "profile", "candidate:" + std::to_string(t.first));
    if (auto s = store.StartStep(key); !s.ok()) return s.status();
  }
  // Only the evaluator is used off this thread; the store is not.
  std::vector<std::optional<Result<Metrics>>> results(todo.size());
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t i; (i = next++) < todo.size();) {
      try {
        results[i].emplace(deps_.evaluator->Profile(options_.problem, todo[i].second));
      } catch (const std::exception& e) {
        results[i].emplace(Status::Internal(std::string("profile: ") + e.what()));
      }
    }
  };
  const std::size_t threads =
      std::min<std::size_t>(static_cast<std::size_t>(options_.gpus), todo.size());
  std::vector<std::thread> pool;
  for (std::size_t t = 0; t < threads; ++t) pool.emplace_back(work);
  for (std::thread& t : pool) t.join();
  for (std::size_t i = 0; i < todo.size(); ++i) {
    fetched.emplace(todo[i].first, std::move(*results[i]));
  }
  return fetched;
}

Status Orchestrator::ProfileChildren(int iteration, std::vector<Child>& children) {
  const bool any_correct = std::any_of(children.begin(), children.end(), [](const Child& c) {
    return c.status == EvalStatus::kCorrect && c.candidate_id != 0;
  });
  if (!any_correct) return Status::Ok();
  if (options_.device != "cuda") {
    const std::string note = "profiling: skipped on device " + options_.device +
                             " (no GPU profile); optimise prompts carry no profiling feedback";
    if (std::find(notes_.begin(), notes_.end(), note) == notes_.end()) notes_.push_back(note);
    return Status::Ok();
  }
  if (options_.feedback == agents::FeedbackMode::kNone) return Status::Ok();
  store::RunStore& store = *deps_.store;
  const ToolRegistry* registry = deps_.registry;
  ToolRegistry builtin;
  if (!registry) {
    builtin = BuiltinRegistry();
    registry = &builtin;
  }
  // With several GPUs, the evaluator profiles the children still to profile at once (their steps
  // journaled started first); the loop below then takes their metrics instead of calling Profile.
  std::map<std::int64_t, Result<Metrics>> prefetched;
  if (options_.gpus > 1) {
    auto fetched = ProfileConcurrently(iteration, children);
    if (!fetched.ok()) return fetched.status();
    prefetched = std::move(*fetched);
  }
  for (Child& c : children) {
    if (c.status != EvalStatus::kCorrect || c.candidate_id == 0) continue;
    const store::StepKey key =
        Key(iteration, "profile", "candidate:" + std::to_string(c.candidate_id));
    auto step = store.GetStep(key);
    if (!step.ok()) return step.status();
    if (*step && (*step)->state == store::StepState::kDone) {
      c.feedback = JsonGet<std::string>((*step)->payload, "feedback", "");
      c.tools_fired = JsonGet<std::vector<std::string>>((*step)->payload, "tools_fired", {});
      continue;
    }
    // An earlier iteration profiled this very source: its analysis stands.
    auto earlier = store.LatestProfileAnalysis(c.candidate_id);
    if (!earlier.ok()) return earlier.status();
    if (*earlier) {
      std::vector<std::string> fired;
      auto tools = store.LatestToolOutput(c.candidate_id);
      if (tools.ok() && *tools && options_.feedback == agents::FeedbackMode::kTools) {
        for (const Json& f : JsonGet<Json>((*tools)->analysis, "findings", Json::array())) {
          fired.push_back(JsonGet<std::string>(f, "tool", ""));
        }
      }
      const std::string feedback = (*earlier)->feedback;
      auto done = store.RecordStep(key, [&]() -> Result<Json> {
        return Json{{"feedback", feedback}, {"tools_fired", fired}, {"reused", true}};
      });
      if (!done.ok()) return done.status();
      c.feedback = feedback;
      c.tools_fired = fired;
      StepDone(key);
      continue;
    }
    std::optional<Result<Metrics>> profiled;
    if (auto it = prefetched.find(c.candidate_id); it != prefetched.end()) {
      profiled.emplace(std::move(it->second));  // its step was started before it ran
      prefetched.erase(it);
    } else {
      if (auto s = store.StartStep(key); !s.ok()) return s.status();
      profiled.emplace(deps_.evaluator->Profile(options_.problem, options_.run_dir + "/" + c.file));
    }
    Metrics metrics;
    if (profiled->ok()) {
      metrics = std::move(**profiled);
    } else {
      metrics.notes.push_back("profile failed: " + profiled->status().message());
    }
    AnalysisOptions analysis_options;
    if (stage1_) analysis_options.bottleneck = stage1_->bottleneck;
    Analysis analysis = registry->Analyze(metrics, analysis_options);
    const std::string guidance = RenderGuidance(analysis);

    auto candidate = store.GetCandidate(c.candidate_id);
    agents::ProfilingInput input(metrics);
    input.stage1 = stage1_;
    input.registry = registry;
    if (candidate.ok()) input.candidate_code = candidate->source;
    if (c.speedup) input.speedup = c.speedup->estimate;
    agents::ProfilingOptions profiling;
    profiling.mode = options_.feedback;
    auto stored = StoredReplies(store, key);
    if (!stored.ok()) return stored.status();
    StepBackend backend(*deps_.backend, std::move(*stored),
                        ExchangeTag{true, "profiling", iteration, store::StepKeyText(key)});
    agents::ProfilingResult result = agents::RunProfilingAgent(backend, input, profiling);

    std::vector<std::string> fired;
    if (options_.feedback == agents::FeedbackMode::kReactive) {
      fired = result.tool_calls;
    } else if (options_.feedback == agents::FeedbackMode::kTools) {
      for (const ToolOutput& f : analysis.findings) fired.push_back(f.tool);
    }
    auto done = store.RecordStep(key, [&]() -> Result<Json> {
      store::MetricsRecord m;
      m.candidate_id = c.candidate_id;
      m.metrics = ToJson(metrics);
      if (auto id = store.AddMetrics(m); !id.ok()) return id.status();
      store::ToolOutputRecord t;
      t.candidate_id = c.candidate_id;
      t.analysis = ToJson(analysis);
      t.guidance = guidance;
      if (auto id = store.AddToolOutput(t); !id.ok()) return id.status();
      store::ProfileAnalysisRecord a;
      a.candidate_id = c.candidate_id;
      a.feedback_mode = agents::ToString(options_.feedback);
      if (result.analysis) {
        a.bottleneck = result.analysis->bottleneck;
        a.severity = result.analysis->severity;
        a.analysis = agents::ToJson(*result.analysis);
      }
      a.feedback = result.feedback;
      if (auto id = store.AddProfileAnalysis(a); !id.ok()) return id.status();
      double gpu_s = 0;
      if (metrics.timeline && metrics.timeline->gpu_busy_us > 0)
        gpu_s = metrics.timeline->gpu_busy_us * 1e-6;
      return Json{{"feedback", result.feedback},
                  {"tools_fired", fired},
                  {"error", result.error ? result.error->ToString() : ""},
                  {"notes", metrics.notes},
                  {"gpu_busy_s", gpu_s}};
    });
    if (!done.ok()) return done.status();
    c.feedback = result.feedback;
    c.tools_fired = fired;
    StepDone(key);
  }
  return Status::Ok();
}

Status Orchestrator::RecordChildren(int iteration, const Selection& selection,
                                    std::vector<Child>& children, IterationProgress& progress) {
  store::RunStore& store = *deps_.store;
  const store::StepKey key = Key(iteration, "record");
  std::vector<CandidateOutcome> outcomes;
  for (const Child& c : children) {
    CandidateOutcome o;
    o.candidate = c.candidate_id ? std::to_string(c.candidate_id) : "";
    o.status = c.status;
    o.speedup = c.speedup;
    o.error_magnitude = c.error_magnitude;
    outcomes.push_back(std::move(o));
  }
  const int before = strategy_->tree().size();
  if (Status s = strategy_->Record(selection, outcomes); !s.ok()) return s;
  const Tree& tree = strategy_->tree();

  // Noise-aware acceptance against the parent, or against the reference (1x) for a seed or a
  // repair.
  const Node& parent = tree.node(selection.node);
  const RatioInterval reference{1, 1, 1, 0};
  const RatioInterval baseline = parent.correct() && parent.speedup ? *parent.speedup : reference;
  std::string outcome_text;
  std::vector<int> attached;
  for (int id = before; id < tree.size(); ++id) {
    const Child& c = children[id - before];
    const Node& node = tree.node(id);
    NodeInfo info;
    info.candidate_id = c.candidate_id;
    info.iteration = iteration;
    info.strategy = c.strategy;
    info.file = c.file;
    info.errors = c.errors;
    info.feedback = c.feedback;
    info.tools_fired = c.tools_fired;
    info.candidate_ms = c.candidate_ms;
    std::string text = EvalStatusName(c.status);
    if (node.correct()) {
      info.verdict =
          node.speedup && ClearlyFaster(*node.speedup, baseline) ? "accepted" : "not accepted";
      if (node.speedup) text += " " + RatioText(*node.speedup);
      text += " " + info.verdict;
    }
    outcome_text += (outcome_text.empty() ? "" : ", ") + text;
    info_[id] = std::move(info);
    attached.push_back(id);
  }

  // The memory extractor's view of the iteration: its best child.
  int best_child = attached.front();
  for (int id : attached) {
    if (BetterSolution(tree.node(id), tree.node(best_child))) best_child = id;
  }
  std::string strategies;
  for (const Child& c : children) {
    if (!c.strategy.empty()) strategies += (strategies.empty() ? "" : "; ") + c.strategy;
  }
  std::string approach;
  if (info_[best_child].candidate_id) {
    auto candidate = store.GetCandidate(info_[best_child].candidate_id);
    if (candidate.ok()) approach = candidate->source;
  }
  const Node& best_node = tree.node(best_child);
  Json memory_record{
      {"iteration", iteration},
      {"mode", agents::ToString(selection.mode)},
      {"strategy", strategies},
      {"approach", approach},
      {"outcome", outcome_text},
      {"speedup", best_node.correct() && best_node.speedup ? Json(best_node.speedup->estimate)
                                                           : Json(nullptr)},
      {"feedback_excerpt",
       best_node.correct() ? info_[best_child].feedback : info_[best_child].errors},
      {"tool_calls", info_[best_child].tools_fired}};

  auto done = store.RecordStep(key, [&]() -> Result<Json> {
    for (int id : attached) {
      const Node& node = tree.node(id);
      store::NodeRecord r;
      r.run_id = run_id_;
      r.parent_id = info_[node.parent].node_id;
      r.kind = NodeKindName(node.kind);
      r.mode = node.mode ? agents::ToString(*node.mode) : "";
      r.iteration = iteration;
      r.status = node.status ? EvalStatusName(*node.status) : "";
      r.reward = node.reward;
      if (node.speedup) {
        r.speedup = node.speedup->estimate;
        r.speedup_lo = node.speedup->low;
        r.speedup_hi = node.speedup->high;
      }
      r.visits = node.visits;
      r.total_reward = node.total_reward;
      r.terminal = node.terminal;
      if (info_[id].candidate_id) r.candidate_id = info_[id].candidate_id;
      auto node_id = store.AddNode(r);
      if (!node_id.ok()) return node_id.status();
      info_[id].node_id = *node_id;
    }
    // Backpropagation and terminal marking changed the statistics of the path above.
    for (const Node& node : tree.nodes()) {
      if (node.id >= before) continue;
      auto stored = store.GetNode(info_[node.id].node_id);
      if (!stored.ok()) return stored.status();
      store::NodeRecord r = *stored;
      if (r.visits == node.visits && r.total_reward == node.total_reward &&
          r.terminal == node.terminal) {
        continue;
      }
      r.visits = node.visits;
      r.total_reward = node.total_reward;
      r.terminal = node.terminal;
      if (Status s = store.UpdateNode(r); !s.ok()) return s;
    }
    Json list = Json::array();
    for (int id : attached) list.push_back(NodeInfoJson(id, info_[id]));
    return Json{{"tree", ToJson(tree)},
                {"attached", list},
                {"outcome", outcome_text},
                {"memory_record", memory_record}};
  });
  if (!done.ok()) return done.status();
  StepDone(key);

  progress.iteration = iteration;
  progress.iterations = options_.iterations;
  progress.mode = selection.mode;
  progress.parent = selection.node;
  progress.outcome = outcome_text;
  if (auto best = tree.BestNode()) progress.best = tree.node(*best).speedup;
  progress.cost_usd = deps_.exchanges->cost_usd();
  if (extractor_) SubmitMemory(memory_record);
  return Status::Ok();
}

void Orchestrator::SubmitMemory(const Json& record) {
  if (!extractor_ || !record.is_object()) return;
  agents::IterationRecord r;
  r.iteration = JsonGet<int>(record, "iteration", 0);
  r.mode = JsonGet<std::string>(record, "mode", "");
  r.strategy = JsonGet<std::string>(record, "strategy", "");
  r.approach = JsonGet<std::string>(record, "approach", "");
  r.outcome = JsonGet<std::string>(record, "outcome", "");
  r.speedup = OptionalDouble(record, "speedup");
  r.feedback_excerpt = JsonGet<std::string>(record, "feedback_excerpt", "");
  r.tool_calls = JsonGet<std::vector<std::string>>(record, "tool_calls", {});
  extractor_->Submit(std::move(r));
}

}  // namespace kernelpro::search
