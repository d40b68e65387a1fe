#include "eval/device_timing.h"

#include <chrono>
#include <vector>

#include "eval/candidate_step.h"
#include "eval/timing_stats.h"

namespace kernelpro::eval {
namespace {

// One candidate's timing against the reference (TimeAgainstReference): the rounds, the
// verification of the sampled calls, and the conclusion.
class CandidateTiming {
 public:
  CandidateTiming(const EvalContext& context, const std::string& problem, const Json& reference,
                  WorkerSession& referee, WorkerSession& candidate, const Json& candidate_request,
                  const std::string& work, EvalResult& result, std::string& changed);

  bool Run();

 private:
  enum class Block { kTimed, kFailed, kStartOver };

  // Times one side's block of `round`.
  Block TimeBlock(int round, int slot);
  // A block whose request failed: the verdict, unless the reference's files changed.
  void RecordFailedBlock(bool candidate_turn, const EvalResult& scratch);
  // A process could not read the device's activity records: everything timed so far is dropped
  // and both sides are timed with CUDA events from the first round on.
  void StartOverWithEvents(bool candidate_turn, const Json& timed);
  void KeepBlock(bool candidate_turn, const Json& timed);
  // The timed calls' own outputs must be right too (no cache, no replay, no shortcut while
  // timed): the referee rebuilds the sampled calls' inputs and runs the reference on them.
  bool VerifySamples();

  const EvalContext& context_;
  const EvalOptions& options_;
  const std::string& problem_;
  WorkerSession& referee_;
  WorkerSession& candidate_;
  const std::string& work_;
  EvalResult& result_;
  std::string& changed_;

  const RoundPlan plan_;
  Json ref_request_, cand_request_;
  InterleavedTimes times_;                      // first: the reference, second: the candidate
  std::vector<double> reference_in_candidate_;  // the reference timed in the candidate's process
  Json samples_ = Json::array();                // the candidate's calls kept for verification
  bool spans_;                                  // timed from the device's activity records
};

CandidateTiming::CandidateTiming(const EvalContext& context, const std::string& problem,
                                 const Json& reference, WorkerSession& referee,
                                 WorkerSession& candidate, const Json& candidate_request,
                                 const std::string& work, EvalResult& result, std::string& changed)
    : context_(context),
      options_(context.options),
      problem_(problem),
      referee_(referee),
      candidate_(candidate),
      work_(work),
      result_(result),
      changed_(changed),
      plan_(PlanRounds(options_.timing_trials, options_.timing_rounds)),
      spans_(options_.device == "cuda") {
  const double sample_p = VerifySampleProbability(
      JsonGet<Json>(reference, "outputs", Json::array()), options_.verify_bytes, plan_.planned());
  ref_request_ = context.base_request;
  ref_request_["problem"] = problem;
  ref_request_["flush_bytes"] = options_.flush_bytes;
  cand_request_ = candidate_request;
  cand_request_["flush_bytes"] = options_.flush_bytes;
  cand_request_["out_dir"] = work + "/timed";
  cand_request_["sample_p"] = sample_p;
  cand_request_["problem"] = problem;  // the reference is timed there too: the process spread
}

bool CandidateTiming::Run() {
  auto started = std::chrono::steady_clock::now();
  for (int round = 0; round < plan_.rounds; ++round) {
    if (round >= 2 && SecondsSince(started) > 2 * options_.time_budget_s) break;
    for (int slot = 0; slot < 2; ++slot) {
      const Block block = TimeBlock(round, slot);
      if (block == Block::kFailed) return false;
      if (block == Block::kStartOver) {
        round = -1;  // the rounds start over, from the first
        break;
      }
    }
  }
  result_.device_records = spans_;
  times_.SummarizeSides();
  const TimingSummary& ref_time = times_.first;
  const TimingSummary& cand_time = times_.second;
  if (!cand_time.samples.empty() && !ref_time.samples.empty()) {
    MergeFindings(result_.findings, CallFactsFindings(result_.candidate_calls,
                                                      cand_time.summary.median, "candidate"));
    MergeFindings(result_.findings,
                  CallFactsFindings(result_.reference_calls, ref_time.summary.median, "reference"));
  }
  if (!VerifySamples()) return false;
  result_.speedup = times_.Ratio();
  if (auto spread = WidenByProcessSpread(reference_in_candidate_, ref_time.summary.median,
                                         cand_time.summary.median, *result_.speedup)) {
    result_.process_spread = spread->spread;
    result_.speedup_in_process = spread->speedup_in_process;
  }
  result_.reference_time = std::move(times_.first);
  result_.candidate_time = std::move(times_.second);
  return true;
}

CandidateTiming::Block CandidateTiming::TimeBlock(int round, int slot) {
  const bool candidate_turn = SecondSideTurn(round, slot);
  Json request = candidate_turn ? cand_request_ : ref_request_;
  request["calls"] = plan_.calls;
  request["spans"] = spans_;
  request["warmup_s"] = WarmupSeconds(round, slot);
  request["warmup_calls"] = WarmupCalls(round, plan_.calls);
  EvalResult scratch;
  EvalResult& sink = candidate_turn ? result_ : scratch;
  auto timed = AskSession(candidate_turn ? candidate_ : referee_, "time", request,
                          options_.step_timeout_s, sink, &changed_);
  if (!timed) {
    RecordFailedBlock(candidate_turn, scratch);
    return Block::kFailed;
  }
  if (std::string fail = MergeFindings(result_.findings, FindingsFrom(*timed)); !fail.empty()) {
    result_.status = EvalStatus::kIncorrect;
    result_.message = fail;
    return Block::kFailed;
  }
  // Verification samples stay valid whatever happens to the timing below.
  if (candidate_turn) {
    for (const Json& sample : JsonGet<Json>(*timed, "samples", Json::array())) {
      samples_.push_back(sample);
    }
  }
  if (spans_ && !JsonGet<bool>(*timed, "spans", false)) {
    StartOverWithEvents(candidate_turn, *timed);
    return Block::kStartOver;
  }
  KeepBlock(candidate_turn, *timed);
  return Block::kTimed;
}

void CandidateTiming::RecordFailedBlock(bool candidate_turn, const EvalResult& scratch) {
  if (!changed_.empty()) return;
  if (!candidate_turn) {
    result_.status =
        scratch.status == EvalStatus::kTimeout ? EvalStatus::kRuntimeError : scratch.status;
    result_.message = "timing the reference failed: " + scratch.message;
  } else if (result_.message.find("while being timed") == std::string::npos) {
    result_.message = "while being timed: " + result_.message;
  }
}

void CandidateTiming::StartOverWithEvents(bool candidate_turn, const Json& timed) {
  spans_ = false;
  times_ = InterleavedTimes();
  reference_in_candidate_.clear();
  result_.reference_calls = result_.candidate_calls = CallFacts();
  MergeFindings(result_.findings,
                {{"no_device_records", "warn",
                  std::string("the device's activity records could not be read in the ") +
                      (candidate_turn ? "candidate's" : "referee's") + " process (" +
                      JsonGet<std::string>(timed, "spans_note", "no reason given") +
                      "); both sides were timed with CUDA events around the call, which "
                      "count the host's time to launch it"}});
}

void CandidateTiming::KeepBlock(bool candidate_turn, const Json& timed) {
  const std::vector<double> times_ms = JsonGet<std::vector<double>>(timed, "times_ms", {});
  times_.AddBlock(candidate_turn, times_ms);
  (candidate_turn ? result_.candidate_calls : result_.reference_calls).Add(timed);
  if (!candidate_turn) return;
  auto here = JsonGet<std::vector<double>>(timed, "reference_times_ms", {});
  reference_in_candidate_.insert(reference_in_candidate_.end(), here.begin(), here.end());
  if (auto note = JsonGet<std::string>(timed, "reference_note", ""); !note.empty()) {
    MergeFindings(result_.findings,
                  {{"process_spread", "warn",
                    note + "; the interval is not widened by the spread between processes"}});
  }
  result_.timing_method = JsonGet<std::string>(timed, "method", "");
}

bool CandidateTiming::VerifySamples() {
  if (samples_.empty()) return true;
  Json verify = context_.base_request;
  verify["problem"] = problem_;
  verify["actual_dir"] = work_ + "/timed";
  verify["samples"] = samples_;
  verify["vacuous_rel_tol"] = options_.vacuous_rel_tol;
  auto verified =
      AskSession(referee_, "verify", verify, options_.step_timeout_s, result_, &changed_);
  if (!verified) {
    if (changed_.empty()) result_.message = "verifying the timed calls failed: " + result_.message;
    return false;
  }
  for (const Json& row : JsonGet<Json>(*verified, "trials", Json::array())) {
    result_.correctness.push_back(row);
  }
  if (!JsonGet<bool>(*verified, "passed", false)) {
    result_.status = EvalStatus::kIncorrect;
    result_.message =
        "while being timed: " + JsonGet<std::string>(*verified, "message", "mismatch");
    return false;
  }
  return true;
}

}  // namespace

bool TimeAgainstReference(const EvalContext& context, const std::string& problem,
                          const Json& reference, WorkerSession& referee, WorkerSession& candidate,
                          const Json& candidate_request, const std::string& work,
                          EvalResult& result, std::string& changed) {
  return CandidateTiming(context, problem, reference, referee, candidate, candidate_request, work,
                         result, changed)
      .Run();
}

void TimeCompiledBaseline(const EvalContext& context, const std::string& problem,
                          WorkerSession& referee, EvalResult& result) {
  const EvalOptions& options = context.options;
  Json request = context.base_request;
  request["problem"] = problem;
  request["compiled"] = true;
  request["spans"] = result.device_records;  // timed as the candidate was
  request["calls"] = options.timing_trials;
  request["warmup_s"] = 0.5;
  request["warmup_calls"] = 3;
  request["flush_bytes"] = options.flush_bytes;
  EvalResult scratch;
  auto compiled = AskSession(referee, "time", request, options.step_timeout_s, scratch);
  if (!compiled) {
    result.compiled_note = "torch.compile baseline failed: " + scratch.message;
  } else if (JsonGet<std::string>(*compiled, "status", "ok") != "ok") {
    result.compiled_note = JsonGet<std::string>(*compiled, "message", "unavailable");
  } else {
    TimingSummary t = OneBlockTiming(JsonGet<std::vector<double>>(*compiled, "times_ms", {}));
    result.speedup_vs_compiled = BootstrapMedianRatio(t.samples, result.candidate_time->samples);
    result.compiled_time = std::move(t);
  }
}

Result<BaselineTimes> TimeBaselines(const EvalContext& context, const std::string& problem,
                                    WorkerSession& referee, const std::string& gpu) {
  const EvalOptions& options = context.options;
  const RoundPlan plan = PlanRounds(options.timing_trials, options.timing_rounds);
  BaselineTimes out;
  out.gpu = gpu;
  InterleavedTimes times;  // first: eager, second: torch.compile
  for (int round = 0; round < plan.rounds; ++round) {
    for (int slot = 0; slot < 2; ++slot) {
      // A B B A A B ..., as candidates are timed against the reference.
      const bool compiled_turn = SecondSideTurn(round, slot);
      Json request = context.base_request;
      request["problem"] = problem;
      request["flush_bytes"] = options.flush_bytes;
      request["compiled"] = compiled_turn;
      request["calls"] = plan.calls;
      request["warmup_s"] = WarmupSeconds(round, slot);
      request["warmup_calls"] = WarmupCalls(round, plan.calls);
      // The first compiled call compiles: it gets the build timeout.
      const int timeout = round == 0 ? options.build_timeout_s : options.step_timeout_s;
      SessionReply reply = referee.Call("time", request, std::chrono::seconds(timeout));
      if (!reply.result) {
        std::string why = reply.error;
        if (reply.ended) why += (why.empty() ? "" : ": ") + reply.ended->Describe();
        return Status::Internal("timing the baselines failed: " + why);
      }
      if (JsonGet<std::string>(*reply.result, "status", "ok") != "ok") {
        return Status::Unavailable("torch.compile baseline: " +
                                   JsonGet<std::string>(*reply.result, "message", "unavailable"));
      }
      times.AddBlock(compiled_turn, JsonGet<std::vector<double>>(*reply.result, "times_ms", {}));
      out.method = JsonGet<std::string>(*reply.result, "method", out.method);
    }
  }
  times.SummarizeSides();
  out.compile_speedup = times.Ratio();
  out.eager = std::move(times.first);
  out.compiled = std::move(times.second);
  return out;
}

}  // namespace kernelpro::eval
