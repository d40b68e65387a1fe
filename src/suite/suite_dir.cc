#include "suite/suite_dir.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>

#include "core/hash.h"
#include "core/version.h"

namespace kernelpro::suite {
namespace fs = std::filesystem;
namespace {

Json ProblemJson(const SuiteProblem& p, const std::string& sha) {
  Json j = {
      {"key", p.key}, {"name", p.name}, {"level", p.level}, {"path", p.path}, {"sha256", sha}};
  j["task"] = p.task ? Json(*p.task) : Json(nullptr);
  return j;
}

Result<std::string> FileSha(const std::string& path) {
  auto text = ReadFileText(path);
  if (!text.ok()) return text.status();
  return Sha256Hex(*text);
}

// What makes two manifests the same suite (not when or by which version it was created).
Json Identity(const SuiteManifest& m) {
  Json j = ToJson(m);
  j.erase("created_at");
  j.erase("version");
  return j;
}

// The first place two JSON values differ, as a path ("options.args[2]").
std::string FirstDifference(const Json& a, const Json& b, const std::string& at) {
  if (a.type() != b.type()) return at.empty() ? "(top)" : at;
  if (a.is_object()) {
    for (auto it = a.begin(); it != a.end(); ++it) {
      std::string here = at.empty() ? it.key() : at + "." + it.key();
      if (!b.contains(it.key())) return here;
      if (std::string d = FirstDifference(*it, b.at(it.key()), here); !d.empty()) return d;
    }
    for (auto it = b.begin(); it != b.end(); ++it) {
      if (!a.contains(it.key())) return at.empty() ? it.key() : at + "." + it.key();
    }
    return "";
  }
  if (a.is_array()) {
    for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
      if (std::string d = FirstDifference(a[i], b[i], at + "[" + std::to_string(i) + "]");
          !d.empty()) {
        return d;
      }
    }
    return a.size() == b.size() ? ""
                                : at + " (" + std::to_string(a.size()) + " vs " +
                                      std::to_string(b.size()) + " entries)";
  }
  return a == b ? "" : at;
}

Status CheckProblemsUnchanged(const SuiteManifest& m) {
  for (std::size_t i = 0; i < m.problems.size(); ++i) {
    auto sha = FileSha(m.problems[i].path);
    if (!sha.ok()) {
      return Status::InvalidArgument("problem " + m.problems[i].key + ": " + m.problems[i].path +
                                     " is gone (the suite needs its problem files where they "
                                     "were)");
    }
    if (i < m.problem_sha256.size() && *sha != m.problem_sha256[i]) {
      return Status::InvalidArgument(
          "problem " + m.problems[i].key + ": " + m.problems[i].path +
          " changed since the suite began; its results would mix two problems (start a new "
          "suite with another --dir)");
    }
  }
  return Status::Ok();
}

Json ClaimJson(const Claim& c) {
  return {{"host", c.host},
          {"pid", c.pid},
          {"shard", c.shard},
          {"started_at", c.started_at},
          {"heartbeat_at", c.heartbeat_at}};
}

bool Ours(const Claim& c) { return c.host == HostName() && c.pid == static_cast<long>(::getpid()); }

}  // namespace

double NowSeconds() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

std::string IsoTime(double unix_seconds) {
  std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

bool PidAlive(long pid) {
  if (pid <= 0) return false;
  if (::kill(static_cast<pid_t>(pid), 0) == 0) return true;
  return errno == EPERM;
}

std::string HostName() {
  char buf[256] = {0};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "localhost";
  return buf;
}

Json ToJson(const SuiteManifest& m) {
  Json problems = Json::array();
  for (std::size_t i = 0; i < m.problems.size(); ++i) {
    problems.push_back(
        ProblemJson(m.problems[i], i < m.problem_sha256.size() ? m.problem_sha256[i] : ""));
  }
  Json tasks = Json::array();
  for (const SuiteTask& t : m.tasks) {
    Json task = {
        {"id", t.id}, {"problem", t.problem}, {"seed", t.seed}, {"candidates", t.candidates}};
    if (t.temperature) task["temperature"] = *t.temperature;
    tasks.push_back(std::move(task));
  }
  return {{"mode", m.mode},
          {"problems_dir", m.problems_dir},
          {"candidates_dir", m.candidates_dir},
          {"problems", problems},
          {"tasks", tasks},
          {"options", m.options},
          {"created_at", m.created_at},
          {"version", m.version}};
}

Result<SuiteManifest> ManifestFromJson(const Json& j) {
  if (!j.is_object() || !j.contains("problems") || !j.contains("tasks")) {
    return Status::InvalidArgument("not a suite manifest (no problems or tasks)");
  }
  SuiteManifest m;
  m.mode = JsonGet<std::string>(j, "mode", "");
  if (m.mode != "eval" && m.mode != "optimize") {
    return Status::InvalidArgument("suite manifest: unknown mode '" + m.mode + "'");
  }
  m.problems_dir = JsonGet<std::string>(j, "problems_dir", "");
  m.candidates_dir = JsonGet<std::string>(j, "candidates_dir", "");
  for (const Json& p : j.at("problems")) {
    SuiteProblem problem;
    problem.key = JsonGet<std::string>(p, "key", "");
    problem.name = JsonGet<std::string>(p, "name", "");
    problem.level = JsonGet<int>(p, "level", 0);
    problem.path = JsonGet<std::string>(p, "path", "");
    if (auto task = JsonNumber(p, "task")) problem.task = static_cast<int>(*task);
    if (problem.key.empty() || problem.path.empty()) {
      return Status::InvalidArgument("suite manifest: a problem without key or path");
    }
    m.problems.push_back(problem);
    m.problem_sha256.push_back(JsonGet<std::string>(p, "sha256", ""));
  }
  for (const Json& t : j.at("tasks")) {
    SuiteTask task;
    task.id = JsonGet<std::string>(t, "id", "");
    task.problem = JsonGet<std::size_t>(t, "problem", m.problems.size());
    task.seed = JsonGet<std::uint64_t>(t, "seed", 0);
    task.candidates = JsonGet<std::vector<std::string>>(t, "candidates", {});
    task.temperature = JsonNumber(t, "temperature");
    if (task.id.empty() || task.problem >= m.problems.size()) {
      return Status::InvalidArgument("suite manifest: a task without id or with no problem");
    }
    m.tasks.push_back(std::move(task));
  }
  m.options = JsonGet<Json>(j, "options", Json::object());
  m.created_at = JsonGet<std::string>(j, "created_at", "");
  m.version = JsonGet<std::string>(j, "version", "");
  return m;
}

SuiteDir::SuiteDir(std::string dir)
    : dir_(fs::absolute(fs::path(dir)).lexically_normal().string()) {
  while (dir_.size() > 1 && dir_.back() == '/') dir_.pop_back();
}

std::string SuiteDir::candidate_result(const std::string& task, std::size_t index) const {
  char name[32];
  std::snprintf(name, sizeof name, "%03zu.json", index);
  return task_dir(task) + "/candidates/" + name;
}

std::string SuiteDir::Relative(const std::string& path) const {
  if (path.size() > dir_.size() + 1 && path.compare(0, dir_.size(), dir_) == 0 &&
      path[dir_.size()] == '/') {
    return path.substr(dir_.size() + 1);
  }
  return path;
}

// A damaged suite.json: what is wrong, once, and the way out (the tasks' results survive it).
Status DamagedManifest(const SuiteDir& dir, const std::string& what) {
  return Status::InvalidArgument(
      dir.manifest() + " is damaged (" + what + "). Move it aside (mv " + dir.manifest() + " " +
      dir.manifest() +
      ".damaged) and run the command that made the suite again: the results "
      "already under " +
      dir.dir() + "/tasks are kept and not redone");
}

Result<SuiteManifest> OpenSuite(const SuiteDir& dir, bool check_problems) {
  auto json = ReadJsonFile(dir.manifest());
  if (!json.ok()) {
    if (json.status().code() == Status::Code::kNotFound) {
      return Status::NotFound(dir.dir() +
                              " holds no suite (no suite.json); start one with "
                              "`kernelpro suite eval` or `kernelpro suite optimize`");
    }
    // ReadJsonFile names the file; said once here.
    return DamagedManifest(dir, json.status().code() == Status::Code::kInvalidArgument
                                    ? "not valid JSON"
                                    : json.status().message());
  }
  auto manifest = ManifestFromJson(*json);
  if (!manifest.ok()) return DamagedManifest(dir, manifest.status().message());
  if (check_problems) {
    if (Status s = CheckProblemsUnchanged(*manifest); !s.ok()) return s;
  }
  return manifest;
}

Result<SuiteManifest> CreateOrOpenSuite(const SuiteDir& dir, const SuiteManifest& requested) {
  std::error_code ec;
  if (fs::exists(dir.manifest(), ec)) {
    auto stored = OpenSuite(dir);
    if (!stored.ok()) return stored.status();
    SuiteManifest wanted = requested;
    wanted.problem_sha256 = stored->problem_sha256;
    if (Identity(*stored) != Identity(wanted)) {
      return Status::InvalidArgument(dir.dir() + " holds another suite (" +
                                     FirstDifference(Identity(*stored), Identity(wanted), "") +
                                     " differs); continue it with `kernelpro suite resume " +
                                     dir.dir() + "`, or give another --dir");
    }
    return stored;
  }
  SuiteManifest m = requested;
  m.problem_sha256.clear();
  for (const SuiteProblem& p : m.problems) {
    auto sha = FileSha(p.path);
    if (!sha.ok())
      return Status::InvalidArgument("problem " + p.key + ": " + sha.status().message());
    m.problem_sha256.push_back(*sha);
  }
  m.created_at = IsoTime(NowSeconds());
  m.version = kKernelproVersion;
  fs::create_directories(dir.dir(), ec);
  if (ec) return Status::IoError("cannot create " + dir.dir() + ": " + ec.message());
  if (Status s = WriteJsonFile(dir.manifest(), ToJson(m)); !s.ok()) return s;
  return m;
}

std::vector<std::size_t> ShardTasks(const SuiteManifest& manifest, int shard, int shards) {
  std::vector<std::size_t> out;
  if (shards < 1) shards = 1;
  for (std::size_t i = 0; i < manifest.tasks.size(); ++i) {
    if (static_cast<int>(i % static_cast<std::size_t>(shards)) == shard) out.push_back(i);
  }
  return out;
}

bool ClaimIsStale(const Claim& claim, double now) {
  if (claim.host == HostName()) return !PidAlive(claim.pid);
  return now - claim.heartbeat_at > kStaleHeartbeatSeconds;
}

std::optional<Claim> ReadClaim(const SuiteDir& dir, const std::string& task) {
  auto json = ReadJsonFile(dir.claim(task));
  if (!json.ok()) return std::nullopt;
  Claim c;
  c.host = JsonGet<std::string>(*json, "host", "");
  c.pid = JsonGet<long>(*json, "pid", 0);
  c.shard = JsonGet<int>(*json, "shard", 0);
  c.started_at = JsonGet<double>(*json, "started_at", 0);
  c.heartbeat_at = JsonGet<double>(*json, "heartbeat_at", 0);
  return c;
}

Result<bool> TryClaim(const SuiteDir& dir, const std::string& task, int shard) {
  std::error_code ec;
  fs::create_directories(dir.task_dir(task), ec);
  if (ec) return Status::IoError("cannot create " + dir.task_dir(task) + ": " + ec.message());
  const std::string path = dir.claim(task);
  for (int attempt = 0; attempt < 2; ++attempt) {
    Claim c;
    c.host = HostName();
    c.pid = static_cast<long>(::getpid());
    c.shard = shard;
    c.started_at = c.heartbeat_at = NowSeconds();
    // Written beside the claim first, then linked into place: link() fails when the claim
    // exists, so of two processes exactly one gets the task, and the claim is never half written.
    const std::string tmp = path + ".new" + std::to_string(c.pid);
    if (Status s = WriteFileAtomically(tmp, DumpJson(ClaimJson(c), 1) + "\n"); !s.ok()) return s;
    const int linked = ::link(tmp.c_str(), path.c_str());
    const int link_errno = errno;
    ::unlink(tmp.c_str());
    if (linked == 0) return true;
    if (link_errno != EEXIST) {
      return Status::IoError("cannot claim " + task + ": " + std::strerror(link_errno));
    }
    auto held = ReadClaim(dir, task);
    if (held && Ours(*held)) return true;
    if (held && !ClaimIsStale(*held, NowSeconds())) return false;
    ::unlink(path.c_str());  // stale (or unreadable): take its place
  }
  return false;
}

void Heartbeat(const SuiteDir& dir, const std::string& task) {
  auto held = ReadClaim(dir, task);
  if (!held || !Ours(*held)) return;
  held->heartbeat_at = NowSeconds();
  (void)WriteFileAtomically(dir.claim(task), DumpJson(ClaimJson(*held), 1) + "\n");
}

void ReleaseClaim(const SuiteDir& dir, const std::string& task) {
  auto held = ReadClaim(dir, task);
  if (held && Ours(*held)) ::unlink(dir.claim(task).c_str());
}

const char* TaskStateName(TaskState state) {
  switch (state) {
    case TaskState::kPending:
      return "pending";
    case TaskState::kRunning:
      return "running";
    case TaskState::kInterrupted:
      return "interrupted";
    case TaskState::kDone:
      return "done";
    case TaskState::kFailed:
      return "failed";
    case TaskState::kDamaged:
      return "damaged";
  }
  return "pending";
}

TaskStatus ReadTaskStatus(const SuiteDir& dir, const std::string& task, double now) {
  TaskStatus status;
  status.claim = ReadClaim(dir, task);
  auto result = ReadJsonFile(dir.result(task));
  if (result.ok() &&
      (!result->is_object() || !result->contains("status") || !(*result)["status"].is_string())) {
    result = Status::InvalidArgument("not a task result");
  }
  if (!result.ok() && result.status().code() != Status::Code::kNotFound) {
    // The file is there but holds no result: damaged, unless a live claim is rewriting it.
    status.state = status.claim && !ClaimIsStale(*status.claim, now) ? TaskState::kRunning
                                                                     : TaskState::kDamaged;
    return status;
  }
  if (result.ok()) {
    status.result = *result;
    status.state = JsonGet<std::string>(*result, "status", "") == "error" ? TaskState::kFailed
                                                                          : TaskState::kDone;
    // A retry of a failed task is running: show it as such.
    if (status.state == TaskState::kFailed && status.claim && !ClaimIsStale(*status.claim, now)) {
      status.state = TaskState::kRunning;
    }
    return status;
  }
  if (status.claim) {
    status.state = ClaimIsStale(*status.claim, now) ? TaskState::kInterrupted : TaskState::kRunning;
  }
  return status;
}

}  // namespace kernelpro::suite
