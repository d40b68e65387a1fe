// The robustness layer every provider shares: retries with backoff, a bound on requests in
// flight, and one report per logical request.
//
// MakeReliableBackend wraps any Backend. A failed attempt is retried only when the error says a
// later attempt may succeed (Error::retryable(): connection failures, timeouts, HTTP 429 and 5xx);
// a rejected request, bad credentials or a malformed reply go straight back, because sending the
// same bytes again cannot fix them. Between attempts it waits with exponential backoff and full
// jitter (a random wait in [0, delay], so many clients that failed together do not retry
// together), and at least as long as the server's Retry-After asks, up to a cap. At most
// `max_concurrency` calls are inside the wrapped backend at once, across all threads; a call
// waiting out a backoff does not hold a slot. After the last attempt, the exchange hook gets one
// Exchange: the request, the response or error, attempts, total latency, tokens and cost. API keys
// live inside the provider backends and never enter a Request, so the hook cannot see them.
//
// Stacking: Reliable(provider) is the base; put truncation recovery (recovery.h) outside it so
// each recovery attempt is retried and reported with its own tokens, and the cassette recorder
// (cassette.h) outside or inside depending on whether the cassette should hold final outcomes or
// every attempt.
//
// The returned backend is safe to call from several threads at once; the hook and the sleep
// function may be called concurrently from those threads.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "llm/backend.h"
#include "llm/price.h"
#include "llm/types.h"

namespace kernelpro::llm {

// One logical request as the hook sees it, after all retries.
struct Exchange {
  std::string provider;  // the wrapped backend's provider()
  std::string model;     // the wrapped backend's model() (the configured name)
  Request request;
  std::optional<Response> response;  // set when the request succeeded
  std::optional<Error> error;        // set when it failed
  int attempts = 1;                  // attempts made, retries included
  double latency_ms = 0;             // from the first attempt to the final outcome, waits included
  Usage usage;                       // the tokens of the successful attempt (failures report none)
  double cost_usd = 0;               // usage priced by ClientOptions::prices; 0 when unknown
  bool cost_known = false;           // whether the price table has an entry for the model
  std::chrono::system_clock::time_point started;  // when the first attempt began
};

struct ClientOptions {
  // Attempts per logical request, the first included. Values below 1 mean 1.
  int max_attempts = 5;
  // The wait before the first retry; each later one multiplies it by `backoff_multiplier`.
  std::chrono::duration<double> initial_backoff = std::chrono::seconds(1);
  // No backoff wait exceeds this (before jitter).
  std::chrono::duration<double> max_backoff = std::chrono::seconds(60);
  // Growth of the backoff per retry.
  double backoff_multiplier = 2;
  // Full jitter: wait a uniformly random time in [0, backoff]. Off: wait exactly the backoff.
  bool jitter = true;
  // Seed of the jitter RNG; unset: seeded from std::random_device. Set it for reproducible waits.
  std::optional<std::uint64_t> seed;
  // A server's Retry-After is honoured (the wait is at least that) up to this long.
  std::chrono::duration<double> max_retry_after = std::chrono::seconds(120);
  // Calls inside the wrapped backend at once, across threads. 0: no bound.
  int max_concurrency = 4;
  // How waiting is done; unset: std::this_thread::sleep_for. Tests record the waits instead.
  std::function<void(std::chrono::duration<double>)> sleep;
  // Called once per logical request after its final attempt; unset: nothing. Must not throw.
  std::function<void(const Exchange&)> on_exchange;
  // Prices for the hook's cost; empty: every cost is 0 and unknown.
  PriceTable prices;
};

std::unique_ptr<Backend> MakeReliableBackend(std::unique_ptr<Backend> inner,
                                             ClientOptions options = {});

}  // namespace kernelpro::llm
