#include "search/journal.h"

#include "search/exchange_sink.h"

namespace kernelpro::search {

Result<std::optional<Json>> Journal::Done(const store::StepKey& key) {
  auto step = store_.GetStep(key);
  if (!step.ok()) return step.status();
  if (*step && (*step)->state == store::StepState::kDone)
    return std::optional<Json>((*step)->payload);
  return std::optional<Json>();
}

Status Journal::Start(const store::StepKey& key) {
  auto started = store_.StartStep(key);
  return started.ok() ? Status::Ok() : started.status();
}

Result<Json> Journal::Record(const store::StepKey& key,
                             const std::function<Result<Json>()>& write) {
  auto done = store_.RecordStep(key, write);
  if (!done.ok()) return done.status();
  if (on_done_) on_done_(key);
  return std::move(done->payload);
}

Result<std::unique_ptr<llm::StoredReplyBackend>> Journal::Backend(const store::StepKey& key,
                                                                  const std::string& purpose,
                                                                  llm::Backend& inner) {
  auto stored = StoredReplies(store_, key);
  if (!stored.ok()) return stored.status();
  ExchangeTag tag{purpose, key.iteration, store::StepKeyText(key)};
  return std::make_unique<llm::StoredReplyBackend>(
      inner, std::move(*stored), [tag](const std::function<llm::Outcome()>& call) {
        ScopedExchangeTag scoped(tag);
        return call();
      });
}

}  // namespace kernelpro::search
