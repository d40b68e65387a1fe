// The server's journal: one JSON line per event, appended and made durable (fdatasync) before the
// server answers for it, so that a server killed at any moment (kill -9, a power cut) loses no
// verdict it returned or journaled. A restarted server reads it back: every finished job is
// served again by GET /v1/jobs/{id}; a job it accepted and never finished comes back as
// "interrupted" (the client submits it again).
//
//   {"event": "accepted", "job": ID}
//   {"event": "finished", "job": ID, "state": ..., "result" | "error": ..., "http_code": ...}
//
// A torn last line (the server died mid-write) is skipped. When the file holds more than twice
// `keep` finished jobs, Open rewrites it with the last `keep` (atomically: a new file renamed over
// the old). Thread-safe: the job threads append at once.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/status.h"
#include "serve/job.h"

namespace kernelpro::serve {

class JobJournal {
 public:
  // Opens `path` (created with its folder when missing) for appending. `recovered`: the jobs it
  // held, oldest first (finished ones as they ended; unfinished ones as interrupted, journaled so
  // now), at most `keep` of them.
  static Result<std::unique_ptr<JobJournal>> Open(const std::string& path, std::size_t keep,
                                                  std::vector<JobRecord>* recovered);
  ~JobJournal();
  JobJournal(const JobJournal&) = delete;
  JobJournal& operator=(const JobJournal&) = delete;

  Status Accepted(const std::string& id);
  Status Finished(const JobRecord& record);

 private:
  explicit JobJournal(int fd) : fd_(fd) {}
  Status Append(const std::string& line);

  std::mutex mutex_;
  int fd_ = -1;
};

}  // namespace kernelpro::serve
