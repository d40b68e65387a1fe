#include "suite/session.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "core/json_io.h"

namespace kernelpro::suite {
namespace fs = std::filesystem;
namespace {

std::string SessionsDir(const SuiteDir& dir) { return dir.dir() + "/sessions"; }

std::string SessionPath(const SuiteDir& dir, int shard) {
  return SessionsDir(dir) + "/" + std::to_string(shard) + ".json";
}

std::optional<SuiteSession> ReadSession(const std::string& path) {
  auto json = ReadJsonFile(path);
  if (!json.ok() || !json->is_object()) return std::nullopt;
  SuiteSession s;
  s.shard = JsonGet<int>(*json, "shard", 0);
  s.first_started_at = JsonGet<double>(*json, "first_started_at", 0);
  s.started_at = JsonGet<double>(*json, "started_at", 0);
  s.phase_since = JsonGet<double>(*json, "phase_since", 0);
  s.finished_at = JsonGet<double>(*json, "finished_at", 0);
  s.phase = JsonGet<std::string>(*json, "phase", "");
  s.parallel = std::max(1, JsonGet<int>(*json, "parallel", 1));
  s.host = JsonGet<std::string>(*json, "host", "");
  s.pid = JsonGet<int>(*json, "pid", 0);
  if (s.started_at <= 0) return std::nullopt;
  if (s.first_started_at <= 0) s.first_started_at = s.started_at;
  // A process on another host cannot be asked; its record is believed until it says finished.
  const bool alive = s.host != HostName() || PidAlive(s.pid);
  s.live = s.finished_at <= 0 && alive;
  return s;
}

}  // namespace

SessionRecorder::SessionRecorder(const SuiteDir& dir, int shard, int parallel)
    : path_(SessionPath(dir, shard)) {
  std::error_code ec;
  fs::create_directories(SessionsDir(dir), ec);
  const double now = NowSeconds();
  session_.shard = shard;
  session_.started_at = now;
  session_.first_started_at = now;
  if (auto before = ReadSession(path_)) {
    session_.first_started_at = std::min(now, before->first_started_at);
  }
  session_.parallel = std::max(1, parallel);
  session_.host = HostName();
  session_.pid = static_cast<int>(::getpid());
  session_.phase = "starting";
  session_.phase_since = now;
  Write();
}

SessionRecorder::~SessionRecorder() {
  session_.finished_at = NowSeconds();
  Phase("finished");
}

void SessionRecorder::Phase(const std::string& phase) {
  session_.phase = phase;
  session_.phase_since = NowSeconds();
  Write();
}

void SessionRecorder::Write() {
  const SuiteSession& s = session_;
  Json json{{"shard", s.shard},
            {"first_started_at", s.first_started_at},
            {"started_at", s.started_at},
            {"started", IsoTime(s.started_at)},
            {"phase", s.phase},
            {"phase_since", s.phase_since},
            {"parallel", s.parallel},
            {"host", s.host},
            {"pid", s.pid}};
  if (s.finished_at > 0) json["finished_at"] = s.finished_at;
  (void)WriteFileAtomically(path_, DumpJson(json, 1) + "\n");
}

std::vector<SuiteSession> ReadSessions(const SuiteDir& dir) {
  std::vector<SuiteSession> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(SessionsDir(dir), ec)) {
    if (entry.path().extension() != ".json") continue;
    if (auto s = ReadSession(entry.path().string())) out.push_back(std::move(*s));
  }
  std::sort(out.begin(), out.end(),
            [](const SuiteSession& a, const SuiteSession& b) { return a.shard < b.shard; });
  return out;
}

}  // namespace kernelpro::suite
