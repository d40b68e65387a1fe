// A decorator that answers with replies received earlier before it asks the model again.
//
// A resumed run redoes a journal step that crashed after some of its LLM calls came back; those
// replies are in the run store, paid for. StoredReplyBackend serves them first, in the order the
// step's calls received them, and only then forwards requests to the inner backend, so no reply
// is paid for twice. What counts as a stored reply, and where it comes from, is the caller's
// business (search/exchange_sink.h reads them from the store).
//
// Thread-safety: one step's calls are sequential; use one StoredReplyBackend per step and per
// thread. The inner backend may be shared.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "llm/backend.h"

namespace kernelpro::llm {

class StoredReplyBackend : public Backend {
 public:
  // Wraps each call that reaches `inner` (e.g. to tag the exchange it stores); empty: called as is.
  using AroundCall = std::function<Outcome(const std::function<Outcome()>&)>;

  StoredReplyBackend(Backend& inner, std::vector<Outcome> stored, AroundCall around = nullptr)
      : inner_(inner), stored_(std::move(stored)), around_(std::move(around)) {}

  std::string provider() const override { return inner_.provider(); }
  std::string model() const override { return inner_.model(); }
  Outcome Complete(const Request& request) override;

  // How many stored replies were served.
  std::size_t reused() const { return next_; }

 private:
  Backend& inner_;
  std::vector<Outcome> stored_;
  std::size_t next_ = 0;
  AroundCall around_;
};

}  // namespace kernelpro::llm
