#include "serve/job_journal.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>

#include "core/json_io.h"

namespace kernelpro::serve {
namespace {

namespace fs = std::filesystem;

struct Replayed {
  std::vector<JobRecord> jobs;  // in the order they were accepted
  std::size_t finished = 0;
};

// The jobs the journal's lines tell of: each accepted one with its last state.
Replayed Replay(const std::string& path) {
  Replayed out;
  std::map<std::string, std::size_t> index;  // id -> position in out.jobs
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    Json event = Json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!event.is_object()) continue;  // a torn line
    const std::string kind = JsonGet<std::string>(event, "event", "");
    const std::string id = JsonGet<std::string>(event, "job", "");
    if (id.empty()) continue;
    auto it = index.find(id);
    if (kind == "accepted" && it == index.end()) {
      index[id] = out.jobs.size();
      out.jobs.push_back({id, JobState::kQueued, Json(), "", 0});
    } else if (kind == "finished") {
      auto record = JobRecordFromJson(event);
      if (!record || !Finished(record->state)) continue;
      if (it == index.end()) {
        index[id] = out.jobs.size();
        out.jobs.push_back(*record);
      } else {
        out.jobs[it->second] = *record;
      }
    }
  }
  for (const JobRecord& job : out.jobs) out.finished += serve::Finished(job.state) ? 1 : 0;
  return out;
}

std::string FinishedLine(const JobRecord& record) {
  Json j = ToJson(record, /*with_code=*/true);
  j["event"] = "finished";
  return DumpJson(j) + "\n";
}

std::string Errno(const std::string& what, const std::string& path) {
  return what + " " + path + ": " + std::strerror(errno);
}

}  // namespace

Result<std::unique_ptr<JobJournal>> JobJournal::Open(const std::string& path, std::size_t keep,
                                                     std::vector<JobRecord>* recovered) {
  std::error_code ec;
  if (fs::path(path).has_parent_path()) fs::create_directories(fs::path(path).parent_path(), ec);
  Replayed replayed = Replay(path);
  std::vector<JobRecord> jobs = std::move(replayed.jobs);
  std::vector<JobRecord> interrupted;
  for (JobRecord& job : jobs) {
    if (serve::Finished(job.state)) continue;
    job.state = JobState::kInterrupted;
    job.error = "the server stopped before this evaluation finished; submit it again";
    interrupted.push_back(job);
  }
  if (jobs.size() > keep) jobs.erase(jobs.begin(), jobs.end() - static_cast<long>(keep));
  if (replayed.finished > 2 * keep) {
    std::string text;
    for (const JobRecord& job : jobs) text += FinishedLine(job);
    if (Status s = WriteFileAtomically(path, text); !s.ok()) return s;
    interrupted.clear();  // written above, as finished lines
  }
  int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return Status::IoError(Errno("cannot open the journal", path));
  std::unique_ptr<JobJournal> journal(new JobJournal(fd));
  for (const JobRecord& job : interrupted) {
    if (Status s = journal->Finished(job); !s.ok()) return s;
  }
  if (recovered) *recovered = std::move(jobs);
  return journal;
}

JobJournal::~JobJournal() {
  if (fd_ >= 0) ::close(fd_);
}

Status JobJournal::Accepted(const std::string& id) {
  return Append(DumpJson(Json{{"event", "accepted"}, {"job", id}}) + "\n");
}

Status JobJournal::Finished(const JobRecord& record) { return Append(FinishedLine(record)); }

Status JobJournal::Append(const std::string& line) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::size_t written = 0;
  while (written < line.size()) {
    ssize_t n = ::write(fd_, line.data() + written, line.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::IoError(Errno("cannot append to the journal", "file"));
    written += static_cast<std::size_t>(n);
  }
  if (::fdatasync(fd_) != 0) return Status::IoError(Errno("cannot sync the journal", "file"));
  return Status::Ok();
}

}  // namespace kernelpro::serve
