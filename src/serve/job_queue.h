// The server's job queue: accepts evaluations, runs them one per slot (one per GPU: a timing
// never shares its device with another job's), and remembers how each ended.
//
//   Submit ─► journal "accepted" ─► queued ─► a slot's thread takes it (oldest first) ─►
//   running ─► JobEvaluator::Evaluate ─► journal "finished" (durable) ─► done | failed ─►
//   waiters woken
//
// Drain (SIGTERM): new jobs are refused, the queued ones cancelled, the running ones finish;
// returns when the slots are idle. A job's record stays for GET /v1/jobs/{id} until `keep` newer
// jobs have finished. Thread-safe: the HTTP handlers submit and wait from many threads.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "serve/job.h"
#include "serve/job_evaluator.h"
#include "serve/job_journal.h"
#include "serve/metrics.h"

namespace kernelpro::serve {

struct QueueOptions {
  std::size_t max_queued = 256;  // jobs waiting beyond this are refused (429)
  std::size_t keep = 10000;      // finished jobs remembered (and kept in the journal)
};

class JobQueue {
 public:
  // `journal` may be null (nothing durable: tests); `recovered` are the journal's jobs.
  JobQueue(JobEvaluator& evaluator, JobJournal* journal, ServeMetrics& metrics,
           QueueOptions options, std::vector<JobRecord> recovered = {});
  ~JobQueue();  // drains
  JobQueue(const JobQueue&) = delete;
  JobQueue& operator=(const JobQueue&) = delete;

  enum class Refusal { kNone, kDraining, kQueueFull, kJournal };
  struct Submitted {
    std::string id;  // empty when refused
    Refusal refusal = Refusal::kNone;
    std::string why;
  };
  Submitted Submit(EvalJob job);

  // The job's record now; nullopt when no such job is known.
  std::optional<JobRecord> Get(const std::string& id) const;
  // Waits until the job finished and returns its record (nullopt: unknown id).
  std::optional<JobRecord> Wait(const std::string& id);

  // Refuses new jobs, cancels the queued ones, waits for the running ones.
  void Drain();

  ServeMetrics::Gauges Gauges() const;
  // The evaluator's own facts for GET /v1/health (JobEvaluator::Facts).
  Json EvaluatorFacts() const { return evaluator_.Facts(); }

 private:
  struct Entry {
    JobRecord record;
    std::optional<EvalJob> job;  // until it starts
    std::chrono::steady_clock::time_point accepted;
  };
  void SlotLoop(std::size_t slot);
  void Finish(const std::string& id, JobRecord record);  // under no lock
  void Forget();                                         // under mutex_: keeps `keep` finished

  JobEvaluator& evaluator_;
  JobJournal* journal_;
  ServeMetrics& metrics_;
  const QueueOptions options_;

  mutable std::mutex mutex_;
  std::condition_variable work_;     // a job was queued, or the queue drains
  std::condition_variable changed_;  // a job finished, or a slot went idle
  std::map<std::string, Entry> jobs_;
  std::deque<std::string> queued_;
  std::deque<std::string> finished_order_;
  int running_ = 0;
  bool draining_ = false;
  std::vector<std::thread> slots_;
};

// A new job id: 32 hex digits from the system's random source (no client can guess another's).
std::string NewJobId();

}  // namespace kernelpro::serve
