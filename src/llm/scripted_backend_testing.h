// An in-memory Backend for testing the provider-independent layers (retries, recovery, cassettes,
// the tool loop) without any network.
//
// A test queues the Outcomes the backend returns, in order, and afterwards reads every Request it
// received. When the queue is empty it answers a kMalformed error saying so, so a layer that calls
// more often than the test expects fails loudly. `on_call` runs inside each Complete, before the
// outcome is taken, outside the backend's lock, so tests can block there to observe concurrency.
// Safe to call from several threads at once.
#pragma once

#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "llm/backend.h"

namespace kernelpro::llm::testing {

class ScriptedBackend : public Backend {
 public:
  explicit ScriptedBackend(std::string model = "scripted-model", std::string provider = "scripted")
      : model_(std::move(model)), provider_(std::move(provider)) {}

  std::string provider() const override { return provider_; }
  std::string model() const override { return model_; }

  Outcome Complete(const Request& request) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      requests_.push_back(request);
    }
    if (on_call) on_call(request);
    std::lock_guard<std::mutex> lock(mu_);
    if (outcomes_.empty()) {
      return MakeError(ErrorKind::kMalformed, "scripted backend: no outcome left");
    }
    Outcome next = std::move(outcomes_.front());
    outcomes_.pop_front();
    return next;
  }

  void Push(Outcome outcome) {
    std::lock_guard<std::mutex> lock(mu_);
    outcomes_.push_back(std::move(outcome));
  }
  std::vector<Request> Requests() const {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }
  int calls() const {
    std::lock_guard<std::mutex> lock(mu_);
    return static_cast<int>(requests_.size());
  }

  // Runs at the start of every Complete (set it before the first call).
  std::function<void(const Request&)> on_call;

 private:
  const std::string model_;
  const std::string provider_;
  mutable std::mutex mu_;
  std::deque<Outcome> outcomes_;
  std::vector<Request> requests_;
};

// A finished text answer.
inline Response TextResponse(std::string text, Usage usage = {},
                             FinishReason stop = FinishReason::kEnd) {
  Response r;
  r.text = std::move(text);
  r.usage = usage;
  r.stop_reason = stop;
  r.model = "scripted-model";
  return r;
}

// The model asking for tool calls.
inline Response ToolUseResponse(std::vector<ToolCall> calls, Usage usage = {}) {
  Response r;
  r.tool_calls = std::move(calls);
  r.usage = usage;
  r.stop_reason = FinishReason::kToolUse;
  r.model = "scripted-model";
  return r;
}

inline Error ErrorWithRetryAfter(ErrorKind kind, int http_status, double retry_after_s) {
  Error e = MakeError(kind, "scripted", http_status);
  e.retry_after_s = retry_after_s;
  return e;
}

}  // namespace kernelpro::llm::testing
