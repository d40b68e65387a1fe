#include "search/exchange_sink.h"

#include <chrono>
#include <utility>

namespace kernelpro::search {
namespace {

struct ThreadTag {
  bool set = false;
  ExchangeTag tag;
};

thread_local ThreadTag tls_tag;

}  // namespace

ScopedExchangeTag::ScopedExchangeTag(ExchangeTag tag)
    : saved_(std::move(tls_tag.tag)), saved_set_(tls_tag.set) {
  tls_tag.set = true;
  tls_tag.tag = std::move(tag);
}

ScopedExchangeTag::~ScopedExchangeTag() {
  tls_tag.set = saved_set_;
  tls_tag.tag = std::move(saved_);
}

std::function<void(const llm::Exchange&)> ExchangeSink::Hook() {
  return [this](const llm::Exchange& exchange) { Record(exchange); };
}

void ExchangeSink::Record(const llm::Exchange& e) {
  store::LlmExchangeRecord r;
  r.iteration = tls_tag.tag.iteration;
  r.purpose = tls_tag.set ? tls_tag.tag.purpose : "untagged";
  r.step_key = tls_tag.tag.step_key;
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

}  // namespace kernelpro::search
