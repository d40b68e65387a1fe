#include "eval/candidate_step.h"

#include <algorithm>
#include <filesystem>
#include <tuple>

namespace kernelpro::eval {

CandidateBatch CandidateBatch::Of(const std::vector<std::string>& paths) {
  CandidateBatch batch;
  batch.results.resize(paths.size());
  batch.items.resize(paths.size());
  for (std::size_t i = 0; i < paths.size(); ++i) {
    batch.items[i] = {static_cast<int>(i + 1), static_cast<int>(paths.size()),
                      std::filesystem::path(paths[i]).filename().string(), ""};
  }
  batch.proceed.assign(paths.size(), true);
  return batch;
}

std::vector<std::size_t> CandidateBatch::Pending() const {
  std::vector<std::size_t> pending;
  for (std::size_t i = 0; i < proceed.size(); ++i) {
    if (proceed[i]) pending.push_back(i);
  }
  return pending;
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::string AbsolutePath(const std::string& path) {
  return std::filesystem::absolute(path).lexically_normal().string();
}

ProcessLimits StepLimits(int timeout_s) {
  ProcessLimits limits;
  limits.wall_timeout = std::chrono::seconds(timeout_s);
  // CPU time may exceed wall time (compiler threads, torch's intra-op pool), but not without bound.
  limits.cpu_seconds = timeout_s * 8;
  limits.max_file_bytes = 64ull << 30;
  limits.max_open_files = 4096;
  return limits;
}

ProcessLimits CandidateProcessLimits(const EvalOptions& options) {
  ProcessLimits limits = StepLimits(options.build_timeout_s + 4 * options.step_timeout_s);
  limits.wall_timeout = std::chrono::milliseconds(0);
  return limits;
}

std::vector<Finding> FindingsFrom(const Json& result) {
  std::vector<Finding> findings;
  for (const Json& f : JsonGet<Json>(result, "findings", Json::array())) {
    findings.push_back({JsonGet<std::string>(f, "rule", ""),
                        JsonGet<std::string>(f, "severity", "warn"),
                        JsonGet<std::string>(f, "message", "")});
  }
  return findings;
}

std::string MergeFindings(std::vector<Finding>& into, const std::vector<Finding>& from) {
  std::string failures;
  for (const Finding& f : from) {
    bool seen = std::any_of(into.begin(), into.end(), [&](const Finding& g) {
      return g.rule == f.rule && g.message == f.message;
    });
    if (seen) continue;
    into.push_back(f);
    if (f.severity == "fail") failures += (failures.empty() ? "" : "; ") + f.message;
  }
  return failures;
}

std::pair<EvalStatus, std::string> DescribeMissingResult(const std::string& step,
                                                         const WorkerOutcome& outcome) {
  if (!outcome.result_error.empty()) {
    return {EvalStatus::kRuntimeError,
            "the worker's result could not be read (" + step + " step): " + outcome.result_error};
  }
  return ClassifyProcessFailure(step, outcome.process);
}

Json PickFields(const Json& meta, std::initializer_list<const char*> keys) {
  Json picked = Json::object();
  for (const char* key : keys) picked[key] = JsonGet<Json>(meta, key, nullptr);
  return picked;
}

std::optional<Json> AskSession(WorkerSession& session, const std::string& step, const Json& request,
                               int timeout_s, EvalResult& result, std::string* reference_changed) {
  SessionReply reply = session.Call(step, request, std::chrono::seconds(timeout_s));
  if (!reply.result) {
    const ProcessResult& process = *reply.ended;
    if (!process.started) {
      result.status = EvalStatus::kRuntimeError;
      result.message = "could not start the " + session.role() + " process: " + process.start_error;
    } else if (process.cancelled && reply.error.starts_with("timed out")) {
      result.status = EvalStatus::kTimeout;
      result.message = reply.error + " (an endless loop or a hung kernel?)";
    } else {
      std::tie(result.status, result.message) =
          ClassifyProcessFailure("the " + step + " step", process);
      if (process.cancelled && !reply.error.empty()) result.message = reply.error;
    }
    if (session.role() == "referee" && result.status != EvalStatus::kTimeout) {
      result.message = "the referee failed: " + result.message;
    }
    return std::nullopt;
  }
  Json& json = *reply.result;
  result.step_costs.Add(session.role(), step, json);
  std::string status = JsonGet<std::string>(json, "status", "ok");
  if (status == "reference_changed" && reference_changed) {
    *reference_changed = JsonGet<std::string>(json, "message", "the reference's files changed");
    result.status = EvalStatus::kRuntimeError;
    result.message = *reference_changed;
    return std::nullopt;
  }
  if (status != "ok" && status != "unavailable") {
    result.status = StatusFromWorker(status);
    result.message = JsonGet<std::string>(json, "message", status);
    if (status == "worker_error")
      result.message = "worker error during " + step + ": " + result.message;
    return std::nullopt;
  }
  return std::move(json);
}

ProgressStep StepOf(const ProgressStep& item, const char* step) {
  ProgressStep s = item;
  s.step = step;
  return s;
}

CandidateStep::CandidateStep(ProgressSink* sink, ProgressStep step, const EvalResult& result)
    : sink_(sink), step_(std::move(step)), result_(result) {
  if (sink_) sink_->StepStarted(step_);
}

// How a step that left `result` as it is ended, for its progress line: "" (done) or the verdict.
void CandidateStep::End() {
  EndAs(result_.status == EvalStatus::kCorrect ? "" : EvalStatusName(result_.status));
}

void CandidateStep::EndAs(const std::string& outcome) {
  if (sink_) sink_->StepFinished(step_, outcome);
  sink_ = nullptr;
}

}  // namespace kernelpro::eval
