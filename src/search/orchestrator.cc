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
#include "core/text.h"
#include "search/generate_step.h"
#include "search/profile_batch.h"
#include "search/profile_feedback.h"
#include "search/reward.h"
#include "search/run_start.h"

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
    : config_(std::move(config)), deps_(std::move(deps)), cutlass_(deps_.cutlass) {}

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
  strategy_ = NewRunStrategy(config_, std::move(recorded->tree));
  return Status::Ok();
}

void Orchestrator::RunStageOne() {
  stage1_ = StageOneOfRun(
      *deps_.store, run_id_, deps_.benchmarking, config_.problem, layout_.stage1(),
      [this](const std::string& note) {
        Note(note);
        Log(notes_.back());
      },
      [this](const std::string& line) { Log(line); });
}

Status Orchestrator::StartMemory() {
  if (!config_.memory) return Status::Ok();
  if (!deps_.memory_backend) {
    Note("search memory: off (no backend for the extractor)");
    return Status::Ok();
  }
  auto memory = RunMemory::Start(layout_.memory(), deps_.memory_backend, *journal_,
                                 strategy_->tree().expansions(), deps_.log);
  if (!memory.ok()) return memory.status();
  memory_ = std::move(*memory);
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
  if (memory_) memory_->Drain();
  if (failure.ok()) {
    summary.energy = MeasureBestEnergy(
        *journal_, strategy_->tree(), info_, config_, deps_.measure_energy,
        [this](const std::string& note) {
          Note(note);
          Log(notes_.back());
        },
        [this](const std::string& line) { Log(line); });
  }

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
  if (config_.energy != EnergyMode::kOff) {
    AttachEnergyProxies(
        *deps_.store, stage1_, *children, [this](const std::string& note) { Note(note); },
        profile::EnergyProxyOptionsNamed(config_.tools.energy_proxy));
  }
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
  if (auto best = tree.BestNode()) {
    progress.best_node = *best;
    progress.best = tree.node(*best).speedup;
  }
  progress.cost_usd = deps_.exchanges->cost_usd();
  progress.resumed = *replayed;
  if (memory_) memory_->Submit(JsonGet<Json>(*recorded, "memory_record", Json()));
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
    auto context = IterationPromptContext(config_, selection, strategy_->tree(), info_, store,
                                          stage1_ ? &*stage1_ : nullptr);
    if (!context.ok()) return context.status();
    context->cutlass_constraints = cutlass_.PromptConstraints(config_);
    if (memory_) context->memory_block = memory_->memory().Render(config_.memory_chars);
    auto prompt = agents::BuildPrompt(*context);
    if (!prompt.ok()) return prompt.status();
    auto backend = journal_->Backend(key, "programmer", *deps_.backend);
    if (!backend.ok()) return backend.status();
    agents::ProgrammerOptions programmer;
    programmer.num_candidates = config_.candidates;
    programmer.max_tokens = config_.programmer_max_tokens;
    programmer.python = config_.python;
    programmer.device = config_.device;
    programmer.seed = ProgrammerSeed(config_, iteration);
    agents::ProgrammerTools tools;  // CUTLASS: this iteration's tools and the validator
    cutlass_.Equip(config_, programmer, tools);
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
    if (auto refused = cutlass_.RefusalNote(result)) {
      Note(*refused);
      Log(notes_.back());
    }
    if (memory_) {
      for (const agents::MemoryEntry& entry : agents::ToolCallMemory(result.tool_calls, iteration))
        memory_->memory().Add(entry);
    }
    reply.about = ReplySummary(result);
    reply.about["prompt_sections"] = prompt->sections;
    reply.about["prompt_trimmed"] = prompt->trimmed;
    reply.about["reused_replies"] = (*backend)->reused();
    return reply;
  };
  auto encode = [&](GeneratedReply& reply) {
    return StoreGeneratedReply(store, layout_, run_id_, iteration, reply);
  };
  auto decode = [&](const Json& payload) -> Result<Children> {
    return GeneratedChildren(payload, iteration);
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
        journal_->Record(journal_->Key(iteration, "evaluate", CandidateStepKey(child.candidate_id)),
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
        journal_->Key(iteration, "evaluate", CandidateStepKey(child.candidate_id));
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
        journal_->Key(iteration, "evaluate", CandidateStepKey(child->candidate_id));
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
    auto ids = CandidatesToProfile(*journal_, iteration, children);
    if (!ids.ok()) return ids.status();
    if (ids->size() >= 2) {
      for (std::int64_t id : *ids) {
        if (Status s = journal_->Start(journal_->Key(iteration, "profile", CandidateStepKey(id)));
            !s.ok()) {
          return s;
        }
      }
      prefetched =
          ProfileAtOnce(*deps_.evaluator, config_.problem, layout_, children, *ids, config_.gpus);
    }
  }
  for (NodeInfo& child : children) {
    if (child.status != eval::EvalStatus::kCorrect || child.candidate_id == 0) continue;
    const store::StepKey key =
        journal_->Key(iteration, "profile", CandidateStepKey(child.candidate_id));
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

// One child's profile step: its metrics (taken now unless prefetched), the tools' analysis, the
// profiling agent's feedback, and the rows of all three.
Status Orchestrator::ProfileOne(int iteration, NodeInfo& child,
                                std::optional<Result<profile::Metrics>> profiled) {
  store::RunStore& store = *deps_.store;
  const store::StepKey key =
      journal_->Key(iteration, "profile", CandidateStepKey(child.candidate_id));
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
  std::vector<std::string> verdicts;  // each child's, in order
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
    verdicts.push_back(std::move(text));
    info_[id] = std::move(info);
  }

  // An iteration whose LLM call failed teaches the search memory nothing: no record, no extraction.
  bool evaluated = false;
  for (int id = before; id < tree.size(); ++id) evaluated = evaluated || !tree.node(id).llm_error();
  const Json memory_record =
      evaluated
          ? agents::ToJson(IterationSummary(store, tree, info_, before, selection.mode, verdicts))
          : Json();
  return journal_->Record(journal_->Key(iteration, "record"), [&]() -> Result<Json> {
    if (Status s = StoreTreeNodes(store, run_id_, tree, before, info_); !s.ok()) return s;
    Json list = Json::array();
    for (int id = before; id < tree.size(); ++id) list.push_back(ToJson(id, info_[id]));
    return Json{{"tree", ToJson(tree)},
                {"attached", list},
                {"outcome", Join(verdicts, ", ")},
                {"memory_record", memory_record}};
  });
}

}  // namespace kernelpro::search
