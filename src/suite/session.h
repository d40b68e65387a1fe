// What a suite's worker is doing, for `suite status` and the suite's clock: each process running
// a suite (or one shard of it) keeps SUITE/sessions/<shard>.json up to date: when work on the
// suite first began (kept across resumes), when this process began, how many tasks it runs at
// once, and its phase ("building 11 candidates, 2 at a time", "running tasks", "finished") with
// the time it entered it. The elapsed clock then covers every phase, the builds before the first
// task included, and the time-left estimate divides by the parallelism the worker was given, not
// by how many tasks happen to be running at the moment of asking.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "suite/suite_dir.h"

namespace kernelpro::suite {

struct SuiteSession {
  int shard = 0;
  double first_started_at = 0;  // the earliest session of this shard, ever
  double started_at = 0;        // this process's
  double phase_since = 0;
  double finished_at = 0;  // 0 while it runs (or after it died)
  std::string phase;
  int parallel = 1;
  std::string host;
  int pid = 0;
  // Still running: not finished, and (on this host) its process is alive.
  bool live = false;
};

// Written by the process that holds the suite lock (suite/suite_lock.h); writes are atomic, and a
// failure to write is ignored (the record is for people, never for correctness).
class SessionRecorder {
 public:
  SessionRecorder(const SuiteDir& dir, int shard, int parallel);
  ~SessionRecorder();  // phase "finished"
  SessionRecorder(const SessionRecorder&) = delete;
  SessionRecorder& operator=(const SessionRecorder&) = delete;

  void Phase(const std::string& phase);

 private:
  void Write();
  std::string path_;
  SuiteSession session_;
};

// Every shard's record; unreadable ones are skipped.
std::vector<SuiteSession> ReadSessions(const SuiteDir& dir);

}  // namespace kernelpro::suite
