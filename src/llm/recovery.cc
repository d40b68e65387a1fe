#include "llm/recovery.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace kernelpro::llm {
namespace {

class TruncationRecoveringBackend : public Backend {
 public:
  TruncationRecoveringBackend(std::unique_ptr<Backend> inner, RecoveryOptions options)
      : inner_(std::move(inner)), options_(std::move(options)) {}

  std::string provider() const override { return inner_->provider(); }
  std::string model() const override { return inner_->model(); }

  Outcome Complete(const Request& request) override {
    Totals totals;
    Outcome first = Attempt(request, totals);
    if (!Truncated(first)) return first;

    std::vector<int> budgets = {request.max_tokens};
    Request larger = request;
    larger.max_tokens =
        static_cast<int>(std::min<long long>(2LL * request.max_tokens, options_.max_tokens_cap));
    if (larger.max_tokens > request.max_tokens) {
      budgets.push_back(larger.max_tokens);
      Outcome second = Attempt(larger, totals);
      if (!Truncated(second)) return totals.Apply(std::move(second));
    } else {
      larger.max_tokens = request.max_tokens;  // at or above the cap already: keep its budget
    }

    Request concise = larger;
    AppendDirective(concise);
    budgets.push_back(concise.max_tokens);
    Outcome third = Attempt(concise, totals);
    if (!Truncated(third)) return totals.Apply(std::move(third));

    std::string tried;
    for (int b : budgets) tried += (tried.empty() ? "" : ", ") + std::to_string(b);
    Error e = MakeError(ErrorKind::kTruncated,
                        "still cut off at the token limit after " + std::to_string(budgets.size()) +
                            " tries with max_tokens " + tried +
                            " (the last with a directive to answer concisely)");
    e.attempts = totals.attempts;
    return e;
  }

 private:
  // What every attempt so far cost, carried into the final outcome.
  struct Totals {
    Usage usage;
    double latency_ms = 0;
    int attempts = 0;

    Outcome Apply(Outcome outcome) const {
      if (outcome.ok()) {
        outcome.response().usage = usage;
        outcome.response().latency_ms = latency_ms;
        outcome.response().attempts = attempts;
      } else {
        outcome.error().attempts = attempts;
      }
      return outcome;
    }
  };

  Outcome Attempt(const Request& request, Totals& totals) {
    Outcome outcome = inner_->Complete(request);
    if (outcome.ok()) {
      totals.usage.input_tokens += outcome.response().usage.input_tokens;
      totals.usage.output_tokens += outcome.response().usage.output_tokens;
      totals.latency_ms += outcome.response().latency_ms;
      totals.attempts += outcome.response().attempts;
    } else {
      totals.attempts += outcome.error().attempts;
    }
    return outcome;
  }

  static bool Truncated(const Outcome& outcome) {
    return outcome.ok() && outcome.response().stop_reason == FinishReason::kLength;
  }

  // Joined onto a trailing user message rather than sent as a second user turn in a row, which
  // some providers (Bedrock's Converse) reject.
  void AppendDirective(Request& request) const {
    if (!request.messages.empty() && request.messages.back().role == Role::kUser) {
      std::string& text = request.messages.back().text;
      text += text.empty() ? options_.concise_directive : "\n\n" + options_.concise_directive;
    } else {
      request.messages.push_back(Message::User(options_.concise_directive));
    }
  }

  std::unique_ptr<Backend> inner_;
  const RecoveryOptions options_;
};

}  // namespace

std::unique_ptr<Backend> MakeTruncationRecoveringBackend(std::unique_ptr<Backend> inner,
                                                         RecoveryOptions options) {
  return std::make_unique<TruncationRecoveringBackend>(std::move(inner), std::move(options));
}

}  // namespace kernelpro::llm
