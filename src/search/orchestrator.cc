#include "search/orchestrator.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <filesystem>
#include <utility>

#include "agents/cutlass_tools.h"
#include "agents/programmer.h"
#include "agents/prompt_builder.h"
#include "core/enum_names.h"
#include "core/json_io.h"
#include "core/parallel.h"
#include "core/text.h"
#include "profile/energy_proxy.h"
#include "search/greedy.h"
#include "search/mcts.h"
#include "search/profile_feedback.h"
#include "search/reward.h"

namespace kernelpro::search {
namespace {

// A run stops after this many iterations in a row whose LLM call failed (transient errors: each
// one is an llm_error node; the run goes on after fewer).
constexpr int kMaxLlmErrorsInARow = 3;

// "server error (HTTP 500) after 4 attempts: ..." from a child's `nothing` ("no candidate: ..."),
// on one line of at most 160 characters.
std::string LlmErrorReason(const std::string& nothing) {
  std::string reason = nothing;
  if (reason.starts_with("no candidate: ")) reason = reason.substr(14);
  for (char& c : reason) {
    if (c == '\n') c = ' ';
  }
  if (reason.size() > 160) reason = reason.substr(0, 157) + "...";
  return reason;
}

// "llm_error: replay miss: ...": the iteration line's form of an LLM failure.
std::string LlmErrorText(const std::string& nothing) {
  return "llm_error: " + LlmErrorReason(nothing);
}

std::string CandidateKey(std::int64_t candidate_id) {
  return "candidate:" + std::to_string(candidate_id);
}

// What the programmer's reply became before it is recorded, and what the payload says of it.
struct GeneratedReply {
  std::vector<PlannedChild> children;
  Json about = Json::object();
};

}  // namespace

const char* StopReasonName(StopReason reason) {
  static constexpr std::array<std::pair<StopReason, const char*>, 5> kNames = {{
      {StopReason::kIterations, "iterations"},
      {StopReason::kCost, "cost"},
      {StopReason::kTimeLimit, "time_limit"},
      {StopReason::kExhausted, "exhausted"},
      {StopReason::kLlmError, "llm_error"},
  }};
  return NameOf(kNames, reason);
}

Orchestrator::Orchestrator(RunConfig config, OrchestratorDependencies deps)
    : config_(std::move(config)), deps_(std::move(deps)) {}

Orchestrator::~Orchestrator() = default;

const Tree& Orchestrator::tree() const { return strategy_->tree(); }

void Orchestrator::Log(const std::string& line) const {
  if (deps_.log) deps_.log(line);
}

void Orchestrator::Note(const std::string& note) {
  if (std::find(notes_.begin(), notes_.end(), note) == notes_.end()) notes_.push_back(note);
}

Status Orchestrator::RestoreFromStore() {
  auto last = deps_.store->LastJournaledIteration(run_id_);
  if (!last.ok()) return last.status();
  auto recorded = ReadRecordedSearch(*journal_, last->value_or(0), root_node_id_);
  if (!recorded.ok()) return recorded.status();
  info_ = std::move(recorded->infos);
  // Only an energy-aware run lets energy into the reward; measure records it and leaves it out.
  const double epsilon = config_.energy == EnergyMode::kAware ? kDefaultEnergyEpsilon : 0;
  if (config_.search == "greedy") {
    GreedyOptions greedy;
    greedy.energy_epsilon = epsilon;
    strategy_ = NewGreedyStrategy(greedy, std::move(recorded->tree));
  } else {
    MctsOptions mcts;
    mcts.seed = config_.seed;
    mcts.energy_epsilon = epsilon;
    strategy_ = NewMctsStrategy(mcts, std::move(recorded->tree));
  }
  return Status::Ok();
}

void Orchestrator::RunStageOne() {
  store::RunStore& store = *deps_.store;
  auto run = store.GetRun(run_id_);
  if (run.ok() && run->reference_analysis) {
    auto parsed = roofline::ReferenceAnalysisFromJson(*run->reference_analysis);
    if (parsed.ok()) {
      stage1_ = std::move(*parsed);
      return;
    }
  }
  if (!deps_.benchmarking) return;  // the caller chose to run without Stage 1 and says why
  auto analysis = deps_.benchmarking->Analyze(config_.problem, layout_.stage1());
  if (!analysis.ok()) {
    Note("stage 1: " + analysis.status().message() + "; every speed tool runs");
    Log(notes_.back());
    return;
  }
  stage1_ = std::move(*analysis);
  Status s = store.SetReferenceAnalysis(run_id_, ToJson(*stage1_));
  if (!s.ok()) Log("stage 1: could not store the analysis: " + s.message());
}

Status Orchestrator::StartMemory() {
  if (!config_.memory) return Status::Ok();
  if (!deps_.memory_backend) {
    Note("search memory: off (no backend for the extractor)");
    return Status::Ok();
  }
  agents::SearchMemoryOptions memory_options;
  memory_options.log = deps_.log;
  auto memory = agents::SearchMemory::Open(layout_.memory(), memory_options);
  if (!memory.ok()) return memory.status();
  memory_ = std::move(*memory);
  agents::MemoryExtractorOptions extractor_options;
  extractor_options.log = deps_.log;
  extractor_options.max_queue = 16;
  // Each extraction is tagged with the iteration it learns from (its journal step "memory").
  extractor_options.around_call = [](const agents::IterationRecord& record,
                                     const std::function<llm::Outcome()>& call) {
    ScopedExchangeTag tag(ExchangeTag{"memory", record.iteration, "memory"});
    return call();
  };
  extractor_ =
      std::make_unique<agents::MemoryExtractor>(deps_.memory_backend, *memory_, extractor_options);
  // Iterations recorded by an earlier process whose extraction never came back.
  for (int it = 1; it <= strategy_->tree().expansions(); ++it) {
    auto exchanges = deps_.store->ListLlmExchangesForStep(journal_->Key(it, "memory"));
    if (!exchanges.ok()) return exchanges.status();
    if (std::any_of(exchanges->begin(), exchanges->end(),
                    [](const auto& e) { return e.response.has_value(); })) {
      continue;
    }
    auto payload = journal_->Done(journal_->Key(it, "record"));
    if (!payload.ok()) return payload.status();
    if (*payload) SubmitMemory(JsonGet<Json>(**payload, "memory_record", Json()));
  }
  return Status::Ok();
}

Result<OptimizeSummary> Orchestrator::Run() {
  const auto started = std::chrono::steady_clock::now();
  if (!deps_.backend || !deps_.evaluator || !deps_.store || !deps_.exchanges) {
    return Status::InvalidArgument(
        "orchestrator: backend, evaluator, store and exchange sink are required");
  }
  auto opened = OpenRun(*deps_.store, config_);
  if (!opened.ok()) return opened.status();
  config_ = std::move(opened->config);
  run_id_ = opened->run_id;
  root_node_id_ = opened->root_node_id;
  layout_ = store::RunLayout(config_.run_dir);
  journal_ = std::make_unique<Journal>(*deps_.store, run_id_, deps_.on_step_done);
  deps_.exchanges->Attach(deps_.store, run_id_);
  if (Status s = RestoreFromStore(); !s.ok()) return s;
  if (opened->resumed) {
    if (Status s = deps_.store->SetRunStatus(run_id_, store::RunStatus::kRunning); !s.ok()) {
      return s;
    }
  }
  RunStageOne();
  if (auto problem = agents::ReadProblemSource(config_.problem); !problem.ok()) {
    return problem.status();
  }
  if (Status s = StartMemory(); !s.ok()) return s;
  if (config_.seed_given && !llm::ProviderTakesSeed(deps_.backend->provider())) {
    Note("--seed: the " + deps_.backend->provider() +
         " API has no seed parameter; the programmer's requests record their seeds but are sent "
         "without them");
    Log(notes_.back());
  }

  OptimizeSummary summary;
  Status failure = Status::Ok();
  while (true) {
    const int next = strategy_->tree().expansions() + 1;
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (next > config_.iterations) {
      summary.stop = StopReason::kIterations;
      summary.stop_message = std::to_string(config_.iterations) + " iterations done";
      break;
    }
    if (config_.max_cost_usd && deps_.exchanges->cost_usd() >= *config_.max_cost_usd) {
      summary.stop = StopReason::kCost;
      summary.stop_message = "the LLM cost $" + FormatFixed(deps_.exchanges->cost_usd(), 4) +
                             " reached the limit of $" + FormatFixed(*config_.max_cost_usd, 4);
      break;
    }
    if (config_.time_limit_s && elapsed >= *config_.time_limit_s) {
      summary.stop = StopReason::kTimeLimit;
      summary.stop_message =
          "the time limit of " + FormatFixed(*config_.time_limit_s, 0) + " s was reached";
      break;
    }
    if (strategy_->Exhausted()) {
      summary.stop = StopReason::kExhausted;
      summary.stop_message = "the search has nothing left to expand";
      break;
    }
    failure = RunIteration(next);
    if (!failure.ok() && permanent_llm_error_) {
      // Not a failure of kernelpro's: the run ends cleanly, its iteration unrecorded (resume
      // redoes it once the cause is fixed).
      summary.stop = StopReason::kLlmError;
      summary.stop_message = "the LLM call of iteration " + std::to_string(next) +
                             " failed and asking again cannot help: " + *permanent_llm_error_;
      failure = Status::Ok();
      break;
    }
    if (!failure.ok()) break;
    if (llm_errors_in_a_row_ >= kMaxLlmErrorsInARow) {
      summary.stop = StopReason::kLlmError;
      summary.stop_message = "the model failed " + std::to_string(llm_errors_in_a_row_) +
                             " iterations in a row: " + last_llm_error_;
      break;
    }
  }
  if (extractor_) extractor_->Drain();
  if (failure.ok()) MeasureBestEnergy(summary);

  summary.iterations_done = strategy_->tree().expansions();
  summary.best = strategy_->BestNode();
  summary.cost_usd = deps_.exchanges->cost_usd();
  summary.exchanges = deps_.exchanges->exchanges();
  summary.notes = notes_;
  if (!failure.ok()) {
    // The failure is what the caller must see; a store that cannot take the mark is logged.
    Status marked =
        deps_.store->SetRunStatus(run_id_, store::RunStatus::kFailed, failure.message());
    if (!marked.ok()) Log("could not mark the run failed: " + marked.message());
    return failure;
  }
  Status marked = deps_.store->SetRunStatus(
      run_id_, store::RunStatus::kFinished,
      std::string(StopReasonName(summary.stop)) + ": " + summary.stop_message);
  if (!marked.ok()) return marked;
  return summary;
}

// One iteration of Algorithm 1: select → generate → evaluate → profile → record.
Status Orchestrator::RunIteration(int iteration) {
  if (deps_.iteration_started) deps_.iteration_started(iteration, config_.iterations);
  const Selection selection = strategy_->Next();
  auto replayed = Select(iteration, selection);
  if (!replayed.ok()) return replayed.status();
  auto children = Generate(iteration, selection);
  if (!children.ok()) return children.status();
  if (Status s = Evaluate(iteration, *children); !s.ok()) return s;
  if (Status s = Profile(iteration, *children); !s.ok()) return s;
  if (config_.energy != EnergyMode::kOff) MeasureEnergy(*children);
  auto recorded = Record(iteration, selection, *children);
  if (!recorded.ok()) return recorded.status();
  // Counted in this process only: a resumed run gets its own tries.
  const bool llm_failed = std::all_of(children->begin(), children->end(), [](const NodeInfo& c) {
    return c.status == eval::EvalStatus::kLlmError;
  });
  if (llm_failed) {
    ++llm_errors_in_a_row_;
    last_llm_error_ = LlmErrorReason(children->back().nothing);
  } else {
    llm_errors_in_a_row_ = 0;
  }

  const Tree& tree = strategy_->tree();
  IterationProgress progress;
  progress.iteration = iteration;
  progress.iterations = config_.iterations;
  progress.mode = selection.mode;
  progress.parent = selection.node;
  progress.outcome = JsonGet<std::string>(*recorded, "outcome", "");
  if (auto best = tree.BestNode()) progress.best = tree.node(*best).speedup;
  progress.cost_usd = deps_.exchanges->cost_usd();
  progress.resumed = *replayed;
  if (extractor_) SubmitMemory(JsonGet<Json>(*recorded, "memory_record", Json()));
  if (deps_.progress) deps_.progress(progress);
  return Status::Ok();
}

// select: the strategy's choice is journaled; a resumed run's rebuilt strategy must choose the
// same node again, or the stored steps of the iteration would belong to another expansion.
Result<bool> Orchestrator::Select(int iteration, const Selection& selection) {
  const store::StepKey key = journal_->Key(iteration, "select");
  auto done = journal_->Done(key);
  if (!done.ok()) return done.status();
  if (*done) {
    if (JsonGet<int>(**done, "node", -1) != selection.node ||
        JsonGet<int>(**done, "expansion", -1) != selection.expansion) {
      return Status::Internal("iteration " + std::to_string(iteration) +
                              ": the rebuilt search selects another node than the stored one");
    }
    return true;
  }
  const Json payload{{"node", selection.node},
                     {"mode", agents::ToString(selection.mode)},
                     {"expansion", selection.expansion},
                     {"node_id", info_[selection.node].node_id}};
  auto recorded = journal_->Record(key, [&]() -> Result<Json> { return payload; });
  if (!recorded.ok()) return recorded.status();
  return false;
}

// generate: the prompt for the selected node, the programmer's call, and the children it brings:
// the checked candidates; else the rejected attempts (compile errors without a build); else one
// child that records that nothing came back.
Result<Orchestrator::Children> Orchestrator::Generate(int iteration, const Selection& selection) {
  store::RunStore& store = *deps_.store;
  const store::StepKey key = journal_->Key(iteration, "generate");
  auto work = [&]() -> Result<GeneratedReply> {
    auto problem = agents::ReadProblemSource(config_.problem);
    if (!problem.ok()) return problem.status();
    agents::PromptContext context;
    context.mode = selection.mode;
    context.device = config_.device;
    context.problem = std::move(*problem);
    context.gpu = config_.gpu;
    // Several temperatures: one request per candidate, each prompt asking for one.
    const bool per_candidate = config_.temperatures.size() > 1;
    context.num_candidates = per_candidate ? 1 : config_.candidates;
    context.cutlass_dir = config_.cutlass_dir;
    if (deps_.cutlass != nullptr && !config_.cutlass_dir.empty() &&
        agents::ConstraintsApplyTo(config_.gpu)) {
      context.cutlass_constraints = deps_.cutlass->constraints_markdown();
    }
    if (memory_) context.memory_block = memory_->Render(config_.memory_chars);
    context.energy_preferences = config_.energy == EnergyMode::kAware;
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
    auto backend = journal_->Backend(key, "programmer", *deps_.backend);
    if (!backend.ok()) return backend.status();
    agents::ProgrammerOptions programmer;
    programmer.num_candidates = config_.candidates;
    programmer.max_tokens = config_.programmer_max_tokens;
    programmer.python = config_.python;
    programmer.device = config_.device;
    programmer.seed = ProgrammerSeed(config_, iteration);
    // CUTLASS: the tools of this iteration (fresh budgets) and the constraint validator.
    agents::ProgrammerTools tools;
    if (deps_.cutlass != nullptr && !config_.cutlass_dir.empty()) {
      tools = deps_.cutlass->ForIteration();
      // Once the backend refused them, asking with tools again would only cost a request more.
      if (!tools.definitions.empty() && !tools_refused_) programmer.tools = &tools;
      const agents::CutlassKit* kit = deps_.cutlass;
      programmer.pre_build_check = [kit](const std::string& code) { return kit->Validate(code); };
    }
    ProgressScope asking(deps_.step_progress, {0, 0, "programmer", "asking the model"});
    const agents::ProgrammerResult result =
        agents::RunProgrammerAtTemperatures(**backend, *prompt, programmer, config_.temperatures);
    if (result.candidates.empty()) asking.set_outcome("no candidate");

    GeneratedReply reply;
    reply.children = PlanChildren(result, config_.candidates);
    // Nothing came back, and asking again cannot help (a spent cassette, a refused key, an unknown
    // model): the step stays undone and the run stops (Run) rather than fail every iteration left.
    const bool nothing = reply.children.size() == 1 && !reply.children.front().info.nothing.empty();
    if (nothing && result.error && result.error->permanent()) {
      permanent_llm_error_ = result.error->ToString();
      return Status::Unavailable("the LLM call failed: " + *permanent_llm_error_);
    }
    // A backend that refused the tools: said once in the run's notes (report) and on stderr.
    if (!result.tools_refused.empty() && !tools_refused_) {
      tools_refused_ = true;
      Note("CUTLASS tools: " + result.tools_refused + "; the rest of the run asks without them");
      Log(notes_.back());
    }
    if (memory_) {
      for (const agents::MemoryEntry& entry : agents::ToolCallMemory(result.tool_calls, iteration))
        memory_->Add(entry);
    }
    reply.about = ReplySummary(result);
    reply.about["prompt_sections"] = prompt->sections;
    reply.about["prompt_trimmed"] = prompt->trimmed;
    reply.about["reused_replies"] = (*backend)->reused();
    return reply;
  };
  // Inside the step's transaction: each candidate's row, then its file under the row's name.
  auto encode = [&](GeneratedReply& reply) -> Result<Json> {
    Json payload = reply.about;
    payload["children"] = Json::array();
    for (PlannedChild& child : reply.children) {
      if (!child.code.empty()) {
        auto added = store.AddCandidate(run_id_, iteration, child.info.strategy, child.code);
        if (!added.ok()) return added.status();
        child.info.candidate_id = added->id;
        child.info.file = store::RunLayout::CandidateFile(added->id);
        Status written = WriteFileAtomically(layout_.Path(child.info.file), child.code);
        if (!written.ok()) return written;
      }
      payload["children"].push_back(CandidateJson(child.info));
    }
    return payload;
  };
  auto decode = [&](const Json& payload) -> Result<Children> {
    Children children;
    for (const Json& j : JsonGet<Json>(payload, "children", Json::array())) {
      children.push_back(NodeInfoFromJson(j));
      children.back().iteration = iteration;
    }
    return children;
  };
  return journal_->RunStep(key, work, encode, decode);
}

// evaluate: one step per candidate ("candidate:ID"), the builds of the iteration in one evaluator
// call. A source an earlier iteration evaluated keeps its verdict: nothing is built, checked or
// timed again, and no second evaluation row is written.
Status Orchestrator::Evaluate(int iteration, Children& children) {
  store::RunStore& store = *deps_.store;
  auto record = [&](NodeInfo& child, const eval::EvalResult& result) -> Status {
    const store::EvaluationRecord row = EvaluationRow(child.candidate_id, result);
    auto payload =
        journal_->Record(journal_->Key(iteration, "evaluate", CandidateKey(child.candidate_id)),
                         [&]() -> Result<Json> {
                           auto id = store.AddEvaluation(row);
                           if (!id.ok()) return id.status();
                           return VerdictPayload(row, *id);
                         });
    if (!payload.ok()) return payload.status();
    ApplyVerdict(*payload, child);
    return Status::Ok();
  };

  std::vector<NodeInfo*> pending;
  for (NodeInfo& child : children) {
    if (child.candidate_id == 0) {
      // No candidate: the LLM failed (search/strategy.h), nothing to build.
      child.status = eval::EvalStatus::kLlmError;
      std::string reason = child.nothing;
      if (reason.starts_with("no candidate: ")) reason = reason.substr(14);
      child.errors = "llm_error: " + reason;  // as a verdict's errors read ("compile_error: ...")
      continue;
    }
    const store::StepKey key =
        journal_->Key(iteration, "evaluate", CandidateKey(child.candidate_id));
    auto done = journal_->Done(key);
    if (!done.ok()) return done.status();
    if (*done) {
      ApplyVerdict(**done, child);
      continue;
    }
    auto reused = ReusedVerdictPayload(store, child.candidate_id);
    if (!reused.ok()) return reused.status();
    if (*reused) {
      auto payload = journal_->Record(key, [&]() -> Result<Json> { return **reused; });
      if (!payload.ok()) return payload.status();
      ApplyVerdict(*payload, child);
      continue;
    }
    if (!child.rejected.empty()) {
      eval::EvalResult result;
      result.candidate = layout_.Path(child.file);
      result.status = eval::EvalStatus::kCompileError;
      result.message = "rejected before the build: " + child.rejected;
      if (Status s = record(child, result); !s.ok()) return s;
      continue;
    }
    pending.push_back(&child);
  }
  if (pending.empty()) return Status::Ok();

  std::vector<std::string> paths;
  for (NodeInfo* child : pending) {
    const store::StepKey key =
        journal_->Key(iteration, "evaluate", CandidateKey(child->candidate_id));
    if (Status s = journal_->Start(key); !s.ok()) return s;
    paths.push_back(layout_.Path(child->file));
  }
  auto results = deps_.evaluator->Evaluate(config_.problem, paths);
  if (!results.ok()) return results.status();
  if (results->size() != pending.size()) {
    return Status::Internal("evaluation: " + std::to_string(results->size()) + " verdicts for " +
                            std::to_string(pending.size()) + " candidates");
  }
  for (size_t k = 0; k < pending.size(); ++k) {
    if (Status s = record(*pending[k], (*results)[k]); !s.ok()) return s;
  }
  return Status::Ok();
}

// profile: correct children on cuda, one step per candidate. With several GPUs the profiles still
// to take run at once first (their steps journaled started); the analysis, the agent's call and
// the rows then follow child by child, in child order, exactly as with one GPU.
Status Orchestrator::Profile(int iteration, Children& children) {
  const bool any_correct = std::any_of(children.begin(), children.end(), [](const NodeInfo& c) {
    return c.status == eval::EvalStatus::kCorrect && c.candidate_id != 0;
  });
  if (!any_correct) return Status::Ok();
  if (config_.device != "cuda") {
    Note("profiling: skipped on device " + config_.device +
         " (no GPU profile); optimise prompts carry no profiling feedback");
    return Status::Ok();
  }
  if (config_.feedback == agents::FeedbackMode::kNone) return Status::Ok();
  store::RunStore& store = *deps_.store;

  std::map<std::int64_t, Result<profile::Metrics>> prefetched;
  if (config_.gpus > 1) {
    auto ids = ToProfile(iteration, children);
    if (!ids.ok()) return ids.status();
    if (ids->size() >= 2) {
      for (std::int64_t id : *ids) {
        if (Status s = journal_->Start(journal_->Key(iteration, "profile", CandidateKey(id)));
            !s.ok()) {
          return s;
        }
      }
      prefetched = ProfileAtOnce(children, *ids);
    }
  }
  for (NodeInfo& child : children) {
    if (child.status != eval::EvalStatus::kCorrect || child.candidate_id == 0) continue;
    const store::StepKey key =
        journal_->Key(iteration, "profile", CandidateKey(child.candidate_id));
    auto done = journal_->Done(key);
    if (!done.ok()) return done.status();
    if (*done) {
      ApplyProfile(**done, child);
      continue;
    }
    // An earlier iteration profiled this very source: its analysis stands.
    auto reused = ReusedProfilePayload(store, child.candidate_id, config_.feedback);
    if (!reused.ok()) return reused.status();
    if (*reused) {
      auto payload = journal_->Record(key, [&]() -> Result<Json> { return **reused; });
      if (!payload.ok()) return payload.status();
      ApplyProfile(*payload, child);
      continue;
    }
    std::optional<Result<profile::Metrics>> metrics;
    if (auto it = prefetched.find(child.candidate_id); it != prefetched.end()) {
      metrics.emplace(std::move(it->second));  // its step was started before it ran
      prefetched.erase(it);
    }
    if (Status s = ProfileOne(iteration, child, std::move(metrics)); !s.ok()) return s;
  }
  return Status::Ok();
}

// The candidates Profile's loop would profile afresh: correct, step not done, source not profiled
// by an earlier iteration; a candidate twice in the iteration once.
Result<std::vector<std::int64_t>> Orchestrator::ToProfile(int iteration, const Children& children) {
  std::vector<std::int64_t> ids;
  for (const NodeInfo& c : children) {
    if (c.status != eval::EvalStatus::kCorrect || c.candidate_id == 0) continue;
    if (std::find(ids.begin(), ids.end(), c.candidate_id) != ids.end()) continue;
    auto done = journal_->Done(journal_->Key(iteration, "profile", CandidateKey(c.candidate_id)));
    if (!done.ok()) return done.status();
    if (*done) continue;
    auto earlier = deps_.store->LatestProfileAnalysis(c.candidate_id);
    if (!earlier.ok()) return earlier.status();
    if (!*earlier) ids.push_back(c.candidate_id);
  }
  return ids;
}

// Up to one profile per GPU at a time; only the evaluator is used off this thread, the store not.
std::map<std::int64_t, Result<profile::Metrics>> Orchestrator::ProfileAtOnce(
    const Children& children, const std::vector<std::int64_t>& ids) {
  std::vector<std::string> files;
  for (std::int64_t id : ids) {
    auto child = std::find_if(children.begin(), children.end(),
                              [&](const NodeInfo& c) { return c.candidate_id == id; });
    files.push_back(layout_.Path(child->file));
  }
  std::vector<std::optional<Result<profile::Metrics>>> results(ids.size());
  ParallelFor(ids.size(), static_cast<std::size_t>(config_.gpus), [&](std::size_t i) {
    try {
      results[i].emplace(deps_.evaluator->Profile(config_.problem, files[i]));
    } catch (const std::exception& e) {
      results[i].emplace(Status::Internal(std::string("profile: ") + e.what()));
    }
  });
  std::map<std::int64_t, Result<profile::Metrics>> fetched;
  for (std::size_t i = 0; i < ids.size(); ++i) fetched.emplace(ids[i], std::move(*results[i]));
  return fetched;
}

// One child's profile step: its metrics (taken now unless prefetched), the tools' analysis, the
// profiling agent's feedback, and the rows of all three.
Status Orchestrator::ProfileOne(int iteration, NodeInfo& child,
                                std::optional<Result<profile::Metrics>> profiled) {
  store::RunStore& store = *deps_.store;
  const store::StepKey key = journal_->Key(iteration, "profile", CandidateKey(child.candidate_id));
  if (!profiled) {
    if (Status s = journal_->Start(key); !s.ok()) return s;
    profiled.emplace(deps_.evaluator->Profile(config_.problem, layout_.Path(child.file)));
  }
  const tools::ToolRegistry* registry = deps_.registry;
  if (!registry) {
    if (builtin_registry_.tools().empty()) builtin_registry_ = tools::BuiltinRegistry();
    registry = &builtin_registry_;
  }
  auto candidate = store.GetCandidate(child.candidate_id);
  if (!candidate.ok()) return candidate.status();
  ProfileFeedbackInput input;
  input.registry = registry;
  input.stage1 = stage1_;
  input.mode = config_.feedback;
  input.energy_tools = config_.energy == EnergyMode::kAware;
  input.candidate_code = candidate->source;
  if (child.speedup) input.speedup = child.speedup->estimate;
  auto backend = journal_->Backend(key, "profiling", *deps_.backend);
  if (!backend.ok()) return backend.status();
  const ProfileFeedback feedback = [&] {
    ProgressScope analysing(deps_.step_progress,
                            {0, 0, "profiling agent", "reading the profile of " + child.file});
    return AnalyzeProfile(std::move(*profiled), input, **backend);
  }();
  auto payload = journal_->Record(key, [&] {
    return StoreProfileFeedback(store, child.candidate_id, config_.feedback, feedback);
  });
  if (!payload.ok()) return payload.status();
  ApplyProfile(*payload, child);
  return Status::Ok();
}

void Orchestrator::MeasureBestEnergy(OptimizeSummary& summary) {
  if (config_.energy == EnergyMode::kOff || config_.energy_kernels <= 0) return;
  const std::vector<int> nodes = EnergyNodes(strategy_->tree(), info_, config_.energy_kernels);
  if (nodes.empty()) return;  // nothing correct, nothing to measure
  const store::StepKey key = journal_->Key(0, kEnergyStep, EnergyStepKey(nodes));
  auto note = [this](const std::string& text) {
    Note("energy (NVML): " + text);
    Log(notes_.back());
  };
  auto done = journal_->Done(key);
  if (!done.ok()) return note("the journal could not be read: " + done.status().message());
  if (*done) {
    auto stored = MeasuredEnergyFromJson(**done);
    if (!stored.ok())
      return note("the stored measurement is unreadable: " + stored.status().message());
    summary.energy = std::move(*stored);
    return;
  }
  if (!deps_.measure_energy) return note("not measured (this process has no NVML meter)");
  std::vector<std::string> files;
  std::string names;
  for (int id : nodes) {
    files.push_back((std::filesystem::path(config_.run_dir) / info_.at(id).file).string());
    names += (names.empty() ? "n" : ", n") + std::to_string(id);
  }
  const double minutes =
      (1.0 + nodes.size()) * config_.energy_windows * config_.energy_window_s / 60.0;
  Log("energy: measuring the reference and " + names + " with NVML (" +
      std::to_string(config_.energy_windows) + " windows of " +
      FormatFixed(config_.energy_window_s, 1) + " s each, about " + FormatFixed(minutes, 1) +
      " min plus warm-ups)");
  auto step = deps_.measure_energy(files, config_);
  if (!step.ok()) return note("not measured: " + step.status().message());
  MeasuredEnergy measured{nodes, std::move(*step)};
  auto recorded = journal_->Record(key, [&]() -> Result<Json> { return ToJson(measured); });
  if (!recorded.ok())
    note("measured, but the run store did not take it: " + recorded.status().message());
  summary.energy = std::move(measured);
}

void Orchestrator::MeasureEnergy(Children& children) {
  std::optional<double> reference;
  if (stage1_) reference = stage1_->energy_proxy_pj;
  if (!reference) {
    std::string why = "no ncu profile of the reference (Stage 1)";
    if (stage1_ && !stage1_->energy_proxy_missing.empty()) {
      why = "its ncu profile lacks " + Join(stage1_->energy_proxy_missing, ", ");
    }
    Note("energy: the reference's energy proxy is unknown (" + why +
         "): candidates' proxies are recorded without an energy reduction");
  }
  for (NodeInfo& child : children) {
    if (child.status != eval::EvalStatus::kCorrect || child.candidate_id == 0) continue;
    auto metrics = deps_.store->LatestMetrics(child.candidate_id);
    if (!metrics.ok() || !metrics->has_value()) continue;  // not profiled (cpu, --feedback none)
    const profile::EnergyProxyEstimate energy =
        profile::ComputeEnergyProxyFromJson((*metrics)->metrics);
    if (!energy.proxy) continue;
    child.energy_proxy_pj = energy.proxy->total_pj;
    if (reference) {
      child.energy_reduction = profile::EnergyReduction(*reference, *child.energy_proxy_pj);
    }
  }
}

// record: rewards, the strategy's Record (attach, backpropagate, mark terminals), the noise-aware
// verdicts, the new nodes' rows and the changed statistics of the path above them, and the tree.
// Returns the step's payload (its outcome text and the memory extractor's record).
Result<Json> Orchestrator::Record(int iteration, const Selection& selection, Children& children) {
  store::RunStore& store = *deps_.store;
  std::vector<CandidateOutcome> outcomes;
  for (const NodeInfo& c : children) {
    outcomes.push_back(ToOutcome(c));
    // Energy reaches the search only when it is asked to act on it; measure leaves the tree as
    // off makes it.
    if (config_.energy == EnergyMode::kAware) outcomes.back().energy_reduction = c.energy_reduction;
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
  for (int id = before; id < tree.size(); ++id) {
    NodeInfo info = children[id - before];
    const Node& node = tree.node(id);
    std::string text = eval::EvalStatusName(info.status);
    // No candidate at all: the LLM call failed or its reply held none. That is the LLM's failure,
    // not a kernel's, and is shown as one.
    if (info.candidate_id == 0 && !info.nothing.empty()) text = LlmErrorText(info.nothing);
    if (node.correct()) {
      // A noisy timing is never accepted: ClearlyFaster refuses a wide interval, and a spread
      // above the median on either side is refused here.
      const bool accepted =
          node.speedup && !info.noisy_timing && ClearlyFaster(*node.speedup, baseline);
      info.verdict = accepted ? "accepted" : "not accepted";
      info.noisy_timing = info.noisy_timing || (node.speedup && NoisyInterval(*node.speedup));
      if (node.speedup) text += " " + RatioText(*node.speedup);
      text += info.noisy_timing ? std::string(" noisy timing") : " " + info.verdict;
    }
    outcome_text += (outcome_text.empty() ? "" : ", ") + text;
    info_[id] = std::move(info);
  }

  // An iteration whose LLM call failed teaches the search memory nothing: no record, no extraction.
  bool evaluated = false;
  for (int id = before; id < tree.size(); ++id) evaluated = evaluated || !tree.node(id).llm_error();
  const Json memory_record = evaluated
                                 ? agents::ToJson(IterationSummary(store, tree, info_, before,
                                                                   selection.mode, outcome_text))
                                 : Json();
  return journal_->Record(journal_->Key(iteration, "record"), [&]() -> Result<Json> {
    if (Status s = StoreTreeNodes(store, run_id_, tree, before, info_); !s.ok()) return s;
    Json list = Json::array();
    for (int id = before; id < tree.size(); ++id) list.push_back(ToJson(id, info_[id]));
    return Json{{"tree", ToJson(tree)},
                {"attached", list},
                {"outcome", outcome_text},
                {"memory_record", memory_record}};
  });
}

void Orchestrator::SubmitMemory(const Json& record) {
  if (extractor_ && record.is_object()) extractor_->Submit(agents::IterationRecordFromJson(record));
}

}  // namespace kernelpro::search
