// The step journal of one run, as the orchestrator walks it: every step of an iteration is done
// once, even across crashes and resumes (paper §3.3; the store's side is in store/run_store.h).
//
// The life of one step, RunStep(key, work, encode, decode):
//
//   done already?  ── yes ──▶ decode(stored payload)                         (a resumed run)
//        │ no
//   Start(key)                 journal: started (attempts + 1)
//   work()                     the slow part: LLM call, build, GPU run; no transaction held
//   Record(key, encode)        in ONE transaction: encode writes the step's rows and returns its
//                              payload; the step is marked done with it; on_done(key) follows
//   decode(payload)            the value the caller continues with
//
// A fresh run and a resumed one continue from the same decoded payload, so what a step hands on
// never depends on whether it ran in this process. A crash before Record commits leaves the step
// started and none of its rows: it is redone. Every Status along the way is returned, none is
// dropped. Steps that share one slow call (a batch of builds, concurrent profiles) use the pieces:
// Done, Start for each, the shared work, then Record for each.
//
// An LLM call made inside a step goes through Backend(key, ...): it serves the replies an earlier
// attempt of the step already received (paid once) and tags the new exchanges with the step.
//
// Thread-safety: one thread drives a Journal; the store it wraps is thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "core/json_io.h"
#include "core/status.h"
#include "llm/backend.h"
#include "llm/stored_reply_backend.h"
#include "store/run_store.h"

namespace kernelpro::search {

class Journal {
 public:
  // on_done: called after each step is recorded done (tests kill the process there); may be empty.
  Journal(store::RunStore& store, std::int64_t run_id,
          std::function<void(const store::StepKey&)> on_done = nullptr)
      : store_(store), run_id_(run_id), on_done_(std::move(on_done)) {}

  store::StepKey Key(int iteration, const std::string& step, const std::string& key = "") const {
    return store::StepKey{run_id_, iteration, step, key};
  }
  // The payload of a step already done; nullopt when it is not (never started, or only started).
  Result<std::optional<Json>> Done(const store::StepKey& key);
  Status Start(const store::StepKey& key);
  // The step's rows (written by `write`, which returns the payload) and its "done" mark in one
  // transaction. Returns the payload stored; a step already done keeps its payload.
  Result<Json> Record(const store::StepKey& key, const std::function<Result<Json>()>& write);

  // The whole life of one step (above). work: () → Result<W>; encode: (W&) → Result<Json>, runs
  // inside the transaction; decode: (const Json&) → Result<T>. Returns decode's result.
  template <typename Work, typename Encode, typename Decode>
  auto RunStep(const store::StepKey& key, Work&& work, Encode&& encode, Decode&& decode)
      -> decltype(decode(std::declval<const Json&>())) {
    auto done = Done(key);
    if (!done.ok()) return done.status();
    if (*done) return decode(**done);
    if (Status s = Start(key); !s.ok()) return s;
    auto produced = work();
    if (!produced.ok()) return produced.status();
    auto payload = Record(key, [&]() -> Result<Json> { return encode(*produced); });
    if (!payload.ok()) return payload.status();
    return decode(*payload);
  }

  // The backend a step's LLM calls go through: the step's stored replies first, then `inner`
  // with the exchanges tagged (purpose, the key's iteration, the key).
  Result<std::unique_ptr<llm::StoredReplyBackend>> Backend(const store::StepKey& key,
                                                           const std::string& purpose,
                                                           llm::Backend& inner);

  store::RunStore& store() { return store_; }
  std::int64_t run_id() const { return run_id_; }

 private:
  store::RunStore& store_;
  std::int64_t run_id_;
  std::function<void(const store::StepKey&)> on_done_;
};

}  // namespace kernelpro::search
