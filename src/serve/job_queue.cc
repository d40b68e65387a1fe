#include "serve/job_queue.h"

#include <cstdio>
#include <exception>
#include <random>

namespace kernelpro::serve {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// The phases of a verdict's "phase_seconds" that the latency histograms keep.
constexpr const char* kVerdictPhases[] = {"reference", "build", "load", "check", "time"};

}  // namespace

std::string NewJobId() {
  std::random_device random;  // the kernel's random source on Linux
  std::string id;
  for (int i = 0; i < 4; ++i) {
    char part[9];
    std::snprintf(part, sizeof part, "%08x", static_cast<unsigned>(random()));
    id += part;
  }
  return id;
}

JobQueue::JobQueue(JobEvaluator& evaluator, JobJournal* journal, ServeMetrics& metrics,
                   QueueOptions options, std::vector<JobRecord> recovered)
    : evaluator_(evaluator), journal_(journal), metrics_(metrics), options_(options) {
  for (JobRecord& record : recovered) {
    const std::string id = record.id;
    jobs_[id] = Entry{std::move(record), std::nullopt, Clock::now()};
    finished_order_.push_back(id);
  }
  Forget();
  const std::size_t slots = std::max<std::size_t>(1, evaluator_.slots());
  for (std::size_t slot = 0; slot < slots; ++slot) {
    slots_.emplace_back([this, slot] { SlotLoop(slot); });
  }
}

JobQueue::~JobQueue() {
  Drain();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    work_.notify_all();
  }
  for (std::thread& t : slots_) t.join();
}

JobQueue::Submitted JobQueue::Submit(EvalJob job) {
  std::string id = NewJobId();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (draining_) {
      return {"", Refusal::kDraining, "the server is shutting down and takes no new evaluations"};
    }
    if (queued_.size() >= options_.max_queued) {
      return {"", Refusal::kQueueFull,
              "the queue is full (" + std::to_string(queued_.size()) +
                  " evaluations waiting); try again later"};
    }
  }
  // Journaled before the job can start, so that a restart knows of every job it accepted.
  if (journal_) {
    if (Status s = journal_->Accepted(id); !s.ok()) {
      return {"", Refusal::kJournal, "cannot journal the evaluation: " + s.message()};
    }
  }
  std::lock_guard<std::mutex> lock(mutex_);
  if (draining_) {  // Drain began while journaling: the job ends as it would have in the queue
    JobRecord record{id, JobState::kCancelled, Json(), "cancelled: the server is shutting down", 0};
    jobs_[id] = Entry{record, std::nullopt, Clock::now()};
    finished_order_.push_back(id);
    if (journal_) (void)journal_->Finished(record);
    return {"", Refusal::kDraining, "the server is shutting down and takes no new evaluations"};
  }
  jobs_[id] = Entry{JobRecord{id, JobState::kQueued, Json(), "", 0}, std::move(job), Clock::now()};
  queued_.push_back(id);
  work_.notify_one();
  return {id, Refusal::kNone, ""};
}

std::optional<JobRecord> JobQueue::Get(const std::string& id) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return std::nullopt;
  return it->second.record;
}

std::optional<JobRecord> JobQueue::Wait(const std::string& id) {
  std::unique_lock<std::mutex> lock(mutex_);
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return std::nullopt;
  changed_.wait(lock, [&] {
    it = jobs_.find(id);
    return it == jobs_.end() || Finished(it->second.record.state);
  });
  if (it == jobs_.end()) return std::nullopt;
  return it->second.record;
}

void JobQueue::Drain() {
  std::vector<JobRecord> cancelled;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    draining_ = true;
    for (const std::string& id : queued_) {
      Entry& entry = jobs_[id];
      entry.job.reset();
      entry.record.state = JobState::kCancelled;
      entry.record.error = "cancelled: the server is shutting down";
      cancelled.push_back(entry.record);
      finished_order_.push_back(id);
    }
    queued_.clear();
    work_.notify_all();
    changed_.notify_all();
  }
  for (const JobRecord& record : cancelled) {
    if (journal_) (void)journal_->Finished(record);
  }
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return running_ == 0; });
  Forget();
}

ServeMetrics::Gauges JobQueue::Gauges() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return {static_cast<int>(queued_.size()), running_, draining_};
}

void JobQueue::SlotLoop(std::size_t slot) {
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (draining_ && queued_.empty()) return;
    }
    evaluator_.PrepareSlot(slot);
    std::string id;
    EvalJob job;
    Clock::time_point accepted;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      work_.wait(lock, [&] { return draining_ || !queued_.empty(); });
      if (queued_.empty()) return;  // draining, nothing left
      id = queued_.front();
      queued_.pop_front();
      Entry& entry = jobs_[id];
      job = std::move(*entry.job);
      entry.job.reset();
      entry.record.state = JobState::kRunning;
      accepted = entry.accepted;
      ++running_;
    }
    metrics_.ObservePhase("queue", Seconds(Clock::now() - accepted));
    JobRecord record{id, JobState::kDone, Json(), "", 0};
    try {
      Result<Json> verdict = evaluator_.Evaluate(slot, id, job);
      if (verdict.ok()) {
        record.result = std::move(*verdict);
      } else {
        const Status::Code code = verdict.status().code();
        record.state = JobState::kFailed;
        record.error = verdict.status().message();
        record.http_code =
            code == Status::Code::kInvalidArgument || code == Status::Code::kNotFound ? 422 : 500;
      }
    } catch (const std::exception& e) {  // never lose the slot's thread
      record.state = JobState::kFailed;
      record.error = std::string("internal error: ") + e.what();
      record.http_code = 500;
    }
    // Observed before the waiters are woken: a client that got its verdict finds it counted.
    metrics_.ObservePhase("total", Seconds(Clock::now() - accepted));
    Finish(id, std::move(record));
  }
}

void JobQueue::Finish(const std::string& id, JobRecord record) {
  if (record.state == JobState::kDone) {
    metrics_.CountVerdict(JsonGet<std::string>(record.result, "status", "unknown"));
    const Json phases = JsonGet<Json>(record.result, "phase_seconds", Json::object());
    for (const char* phase : kVerdictPhases) {
      if (auto s = JsonNumber(phases, phase)) metrics_.ObservePhase(phase, *s);
    }
  } else {
    metrics_.CountVerdict(JobStateName(record.state));
  }
  // Durable before anyone is told: a verdict a client saw survives kill -9.
  if (journal_) {
    if (Status s = journal_->Finished(record); !s.ok()) {
      std::fprintf(stderr, "kernelpro serve: %s\n", s.message().c_str());
    }
  }
  std::lock_guard<std::mutex> lock(mutex_);
  jobs_[id].record = std::move(record);
  finished_order_.push_back(id);
  --running_;
  Forget();
  changed_.notify_all();
}

void JobQueue::Forget() {
  while (finished_order_.size() > options_.keep) {
    jobs_.erase(finished_order_.front());
    finished_order_.pop_front();
  }
}

}  // namespace kernelpro::serve
