// Where every LLM exchange of a run goes, and how a journal step finds the replies it already
// received.
//
// Each exchange becomes one autocommitted row of the run store the moment it returns (its cost is
// never lost), tagged with the purpose ("programmer", "profiling", "memory"), iteration and
// journal step that the calling thread declared with a ScopedExchangeTag. The client layers are
// synchronous, so the hook runs on the thread that made the call and a thread-local carries the
// tag to the sink without a lock.
//
// Thread-safety: ExchangeSink may be called from any thread (the memory extractor's worker too).
// A ScopedExchangeTag affects only its own thread.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "core/status.h"
#include "llm/client.h"
#include "llm/types.h"
#include "store/run_store.h"

namespace kernelpro::search {

struct ExchangeTag {
  std::string purpose;  // "programmer", "profiling", "memory"
  int iteration = 0;
  std::string step_key;  // store::StepKeyText of the journal step
};

// Tags the LLM exchanges this thread makes while it lives; restores the previous tag after.
class ScopedExchangeTag {
 public:
  explicit ScopedExchangeTag(ExchangeTag tag);
  ~ScopedExchangeTag();
  ScopedExchangeTag(const ScopedExchangeTag&) = delete;
  ScopedExchangeTag& operator=(const ScopedExchangeTag&) = delete;

 private:
  ExchangeTag saved_;
  bool saved_set_ = false;
};

// Give Hook() to llm::BackendDependencies::on_exchange before the run exists; Attach() connects
// the sink to the store. Exchanges that arrive before Attach are kept and written then. An
// exchange made with no tag is stored as purpose "untagged".
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

// The replies an earlier process received for a journal step, in the order its calls got them, as
// the calls will want them again. A reply is worth serving again when it was paid for and the
// caller saw it: a response, or a malformed reply whose text the caller still reads. A response
// cut off at max_tokens that is followed by another exchange was an attempt truncation recovery
// repeated (the caller never saw it), so it is skipped; transient failures are asked again.
Result<std::vector<llm::Outcome>> StoredReplies(store::RunStore& store, const store::StepKey& key);

}  // namespace kernelpro::search
