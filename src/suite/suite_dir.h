// A suite directory: everything of one suite in one folder, safe to share between the processes
// of one host and the tasks of a Slurm job array on other hosts (a shared file system), and
// consistent after a kill -9 at any instant.
//
//   SUITE/suite.json                the manifest: what the suite is (mode, problems with their
//                                   content hashes, tasks, options), written once, atomically
//         tasks/<task>/claim.json   who runs the task now (host, pid, shard, heartbeat)
//         tasks/<task>/result.json  its outcome, written last, atomically: present = finished
//         tasks/<task>/candidates/<i>.json  eval: each candidate's full verdict, as it finishes
//         tasks/<task>/run/         optimize: the task's own run directory (resumable by itself)
//         tasks/<task>/log.txt      optimize: what its `kernelpro optimize` printed
//         slurm/                    job scripts, submissions.jsonl, the tasks' Slurm logs
//         report/                   the suite's reports
//
// Why files and not one SQLite store: the shards of a Slurm array run on several hosts, and
// SQLite's locking is unreliable on network file systems; a file per task that only its claimant
// writes (and rename() to publish) is safe there. Each run of an optimize task keeps its own
// SQLite run store, which only one process at a time opens (store/run_lock.h).
//
// A task id is the problem's key ("level1/19_ReLU"), plus "/seed-K" when a suite runs several
// seeds. Tasks are sharded statically: task i (manifest order) belongs to shard i % shards.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/json_io.h"
#include "core/status.h"
#include "suite/problem_set.h"

namespace kernelpro::suite {

struct SuiteTask {
  std::string id;                       // "level1/19_ReLU", "level1/19_ReLU/seed-2"
  std::size_t problem = 0;              // index into SuiteManifest::problems
  std::uint64_t seed = 0;               // optimize: the run's --seed
  std::optional<double> temperature;    // optimize: the run's --temperature (--protocol)
  std::vector<std::string> candidates;  // eval: absolute candidate files (may be empty)
};

struct SuiteManifest {
  std::string mode;            // "eval" | "optimize"
  std::string problems_dir;    // absolute, as given
  std::string candidates_dir;  // eval: absolute, as given
  std::vector<SuiteProblem> problems;
  std::vector<std::string> problem_sha256;  // per problem, of its file when the suite began
  std::vector<SuiteTask> tasks;
  // What every task runs with. eval: {"executor": ToJson(EvalOptions) without the machine's own
  // fields, "python": "..."}; optimize: {"llm": ..., "llm_config": ..., "args": [...], ...}.
  Json options = Json::object();
  std::string created_at;  // UTC, ISO 8601
  std::string version;     // kernelpro's
};

Json ToJson(const SuiteManifest& manifest);
Result<SuiteManifest> ManifestFromJson(const Json& json);

// Paths of one suite directory (a value; touches no file).
class SuiteDir {
 public:
  explicit SuiteDir(std::string dir);
  const std::string& dir() const { return dir_; }
  std::string manifest() const { return dir_ + "/suite.json"; }
  std::string task_dir(const std::string& task) const { return dir_ + "/tasks/" + task; }
  std::string result(const std::string& task) const { return task_dir(task) + "/result.json"; }
  std::string claim(const std::string& task) const { return task_dir(task) + "/claim.json"; }
  std::string candidate_result(const std::string& task, std::size_t index) const;
  std::string run_dir(const std::string& task) const { return task_dir(task) + "/run"; }
  std::string log(const std::string& task) const { return task_dir(task) + "/log.txt"; }
  std::string slurm_dir() const { return dir_ + "/slurm"; }
  std::string report_dir() const { return dir_ + "/report"; }
  // `path` relative to the suite directory when it is inside it, else unchanged.
  std::string Relative(const std::string& path) const;

 private:
  std::string dir_;  // absolute, normalised
};

// Creates the suite (its folder and manifest) or opens the one `dir` holds. An existing suite
// must be the same suite: the same mode, problems, tasks and options, else InvalidArgument naming
// the first difference (use another --dir, or `kernelpro suite resume` to continue it). Refused
// too when a problem file changed since the suite began (its results would mix two problems).
Result<SuiteManifest> CreateOrOpenSuite(const SuiteDir& dir, const SuiteManifest& requested);
// Reads the manifest of an existing suite. To run its tasks (`check_problems`), its problem files
// must be where they were and unchanged; reading its results (status, report) needs neither, so
// a suite copied to another machine can still be reported.
Result<SuiteManifest> OpenSuite(const SuiteDir& dir, bool check_problems = true);

// Shard `shard` of `shards`: the indices of its tasks.
std::vector<std::size_t> ShardTasks(const SuiteManifest& manifest, int shard, int shards);

// ---- claims: which process runs a task

struct Claim {
  std::string host;
  long pid = 0;
  int shard = 0;
  double started_at = 0;    // unix seconds
  double heartbeat_at = 0;  // refreshed while the claimant lives
};

// A claim of another process is stale (its holder died: kill -9, a pre-empted Slurm task) when
// its pid is gone on this host, or, on another host, when its heartbeat is this old.
inline constexpr double kStaleHeartbeatSeconds = 600;
inline constexpr double kHeartbeatSeconds = 30;
bool ClaimIsStale(const Claim& claim, double now);

std::optional<Claim> ReadClaim(const SuiteDir& dir, const std::string& task);

// Takes the task for this process: creates its claim file exclusively, replacing a stale one.
// Returns false when another live process holds it. Errors are I/O failures.
Result<bool> TryClaim(const SuiteDir& dir, const std::string& task, int shard);
// Refreshes this process's claim's heartbeat (no-op when the claim is not ours).
void Heartbeat(const SuiteDir& dir, const std::string& task);
// Removes this process's claim (no-op when it is not ours).
void ReleaseClaim(const SuiteDir& dir, const std::string& task);

// ---- task states, as `suite status` shows them

enum class TaskState {
  kPending,      // not started, or started and stopped before a result (see kInterrupted)
  kRunning,      // a live claim
  kInterrupted,  // a stale claim and no result: killed or pre-empted; resume reruns it
  kDone,         // a result; the kernel may still be incorrect (that is a score, not a failure)
  kFailed,       // a result saying the task itself could not run (status "error"); resume retries
  kDamaged,      // a result file that is not a result (cut short, not JSON, no status): resume
                 // reruns the task; never read as a score, a failure or as pending
};
const char* TaskStateName(TaskState state);

struct TaskStatus {
  TaskState state = TaskState::kPending;
  std::optional<Claim> claim;
  std::optional<Json> result;
};
TaskStatus ReadTaskStatus(const SuiteDir& dir, const std::string& task, double now);

double NowSeconds();
std::string IsoTime(double unix_seconds);
std::string HostName();
// Whether process `pid` of this host lives (one of another user counts as alive).
bool PidAlive(long pid);

}  // namespace kernelpro::suite
