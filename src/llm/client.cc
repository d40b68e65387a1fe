#include "llm/client.h"

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <random>
#include <thread>
#include <utility>

namespace kernelpro::llm {
namespace {

using Seconds = std::chrono::duration<double>;

// A counting semaphore whose bound is chosen at run time (std::counting_semaphore fixes its
// maximum at compile time). A limit of 0 means unbounded.
class Slots {
 public:
  explicit Slots(int limit) : limit_(limit) {}

  void Acquire() {
    if (limit_ <= 0) return;
    std::unique_lock<std::mutex> lock(mu_);
    free_.wait(lock, [this] { return in_use_ < limit_; });
    ++in_use_;
  }
  void Release() {
    if (limit_ <= 0) return;
    {
      std::lock_guard<std::mutex> lock(mu_);
      --in_use_;
    }
    free_.notify_one();
  }

 private:
  const int limit_;
  std::mutex mu_;
  std::condition_variable free_;
  int in_use_ = 0;
};

class SlotHold {
 public:
  explicit SlotHold(Slots& slots) : slots_(slots) { slots_.Acquire(); }
  ~SlotHold() { slots_.Release(); }
  SlotHold(const SlotHold&) = delete;
  SlotHold& operator=(const SlotHold&) = delete;

 private:
  Slots& slots_;
};

class ReliableBackend : public Backend {
 public:
  ReliableBackend(std::unique_ptr<Backend> inner, ClientOptions options)
      : inner_(std::move(inner)),
        options_(std::move(options)),
        slots_(options_.max_concurrency),
        rng_(options_.seed ? *options_.seed : std::random_device{}()) {
    if (!options_.sleep) {
      options_.sleep = [](Seconds d) { std::this_thread::sleep_for(d); };
    }
  }

  std::string provider() const override { return inner_->provider(); }
  std::string model() const override { return inner_->model(); }

  Outcome Complete(const Request& request) override {
    auto started = std::chrono::system_clock::now();
    auto steady_start = std::chrono::steady_clock::now();
    int max_attempts = std::max(1, options_.max_attempts);
    int attempts = 0;
    for (int tries = 1;; ++tries) {
      Outcome outcome = [&] {
        SlotHold hold(slots_);
        return inner_->Complete(request);
      }();
      // The wrapped backend may itself make several attempts (a nested decorator); count them all.
      attempts += outcome.ok() ? outcome.response().attempts : outcome.error().attempts;
      if (outcome.ok() || !outcome.error().retryable() || tries >= max_attempts) {
        if (outcome.ok()) {
          outcome.response().attempts = attempts;
        } else {
          outcome.error().attempts = attempts;
        }
        Report(request, outcome, attempts, started, steady_start);
        return outcome;
      }
      options_.sleep(Wait(tries, outcome.error()));
    }
  }

 private:
  // The wait after failed try number `tries` (1-based).
  Seconds Wait(int tries, const Error& error) {
    double backoff = options_.initial_backoff.count();
    for (int i = 1; i < tries && backoff < options_.max_backoff.count(); ++i) {
      backoff *= options_.backoff_multiplier;
    }
    backoff = std::clamp(backoff, 0.0, std::max(0.0, options_.max_backoff.count()));
    double wait = backoff;
    if (options_.jitter && backoff > 0) {
      std::lock_guard<std::mutex> lock(rng_mu_);
      wait = std::uniform_real_distribution<double>(0.0, backoff)(rng_);
    }
    if (error.retry_after_s) {
      wait = std::max(wait, std::min(*error.retry_after_s, options_.max_retry_after.count()));
    }
    return Seconds(wait);
  }

  void Report(const Request& request, const Outcome& outcome, int attempts,
              std::chrono::system_clock::time_point started,
              std::chrono::steady_clock::time_point steady_start) const {
    if (!options_.on_exchange) return;
    Exchange exchange;
    exchange.provider = inner_->provider();
    exchange.model = inner_->model();
    exchange.request = request;
    exchange.attempts = attempts;
    exchange.started = started;
    exchange.latency_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - steady_start)
            .count();
    // A replayed reply is not bought again: it costs nothing, known, whatever it cost once.
    const bool replayed = exchange.provider == "replay";
    if (outcome.ok()) {
      exchange.response = outcome.response();
      exchange.usage = outcome.response().usage;
      if (replayed) exchange.cost_known = true;
      // The configured name first (what the user priced); else the name the server reported.
      for (const std::string& name : {exchange.model, outcome.response().model}) {
        if (!replayed && options_.prices.Find(name)) {
          exchange.cost_known = true;
          exchange.cost_usd = options_.prices.Cost(name, exchange.usage);
          break;
        }
      }
    } else {
      exchange.error = outcome.error();
      exchange.cost_known = replayed || options_.prices.Find(exchange.model).has_value();
    }
    options_.on_exchange(exchange);
  }

  std::unique_ptr<Backend> inner_;
  ClientOptions options_;
  Slots slots_;
  std::mutex rng_mu_;
  std::mt19937_64 rng_;
};

}  // namespace

std::unique_ptr<Backend> MakeReliableBackend(std::unique_ptr<Backend> inner,
                                             ClientOptions options) {
  return std::make_unique<ReliableBackend>(std::move(inner), std::move(options));
}

}  // namespace kernelpro::llm
