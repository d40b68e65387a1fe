// A JobEvaluator for the queue's and the API's tests: no process, a verdict made from the job's
// candidate text. "sleep:<ms>" holds the job that long, "block" until Release(), "problem-error"
// fails as a problem that does not load, "server-error" as the server itself; anything else is
// correct. It counts the jobs running at once per slot and in all.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "serve/job_evaluator.h"

namespace kernelpro::serve::testing {

class FakeEvaluator : public JobEvaluator {
 public:
  explicit FakeEvaluator(std::size_t slots = 1) : slots_(slots) {}

  std::size_t slots() const override { return slots_; }

  Result<Json> Evaluate(std::size_t slot, const std::string& id, const EvalJob& job) override {
    const int now = ++running_;
    int seen = max_running_.load();
    while (now > seen && !max_running_.compare_exchange_weak(seen, now)) {
    }
    started_.fetch_add(1);
    const std::string& text = job.candidate_source;
    if (text.rfind("sleep:", 0) == 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(std::stoi(text.substr(6))));
    } else if (text == "block") {
      std::unique_lock<std::mutex> lock(mutex_);
      released_.wait(lock, [&] { return released_flag_; });
    }
    --running_;
    if (text == "problem-error") return Status::InvalidArgument("problem error: no Model");
    if (text == "server-error") return Status::Internal("the worker could not start");
    return Json{{"status", "correct"},
                {"slot", slot},
                {"job", id},
                {"timing_trials", job.options.timing_trials},
                {"phase_seconds", {{"build", 0.5}, {"check", 0.25}, {"time", 1.0}}}};
  }

  void Release() {
    std::lock_guard<std::mutex> lock(mutex_);
    released_flag_ = true;
    released_.notify_all();
  }
  int max_running() const { return max_running_.load(); }
  int started() const { return started_.load(); }

 private:
  const std::size_t slots_;
  std::atomic<int> running_{0};
  std::atomic<int> max_running_{0};
  std::atomic<int> started_{0};
  std::mutex mutex_;
  std::condition_variable released_;
  bool released_flag_ = false;
};

}  // namespace kernelpro::serve::testing
