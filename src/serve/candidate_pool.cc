#include "serve/candidate_pool.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <vector>

#include "core/json_io.h"

namespace kernelpro::serve {
namespace {

namespace fs = std::filesystem;

bool Below(const std::string& path, const std::string& root) {
  return path == root || (path.size() > root.size() && path.compare(0, root.size(), root) == 0 &&
                          (root.back() == '/' || path[root.size()] == '/'));
}

// Writes `text` into the existing file `path` without replacing it: a bind mount made of the file
// keeps showing the inode it was made with.
Status WriteInPlace(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) return Status::IoError("cannot write " + path);
  return Status::Ok();
}

// `from`'s tree into the empty folder `to`: hard links (the same files, instantly), copies where
// the two are on different file systems.
Status LinkTree(const std::string& from, const std::string& to) {
  std::error_code ec;
  if (!fs::is_directory(from, ec)) return Status::Ok();  // nothing built (a plain candidate)
  for (auto it = fs::recursive_directory_iterator(from, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    const fs::path target = fs::path(to) / fs::relative(it->path(), from, ec);
    if (it->is_directory(ec)) {
      fs::create_directories(target, ec);
    } else if (it->is_regular_file(ec)) {
      fs::create_hard_link(it->path(), target, ec);
      if (ec) fs::copy_file(it->path(), target, fs::copy_options::overwrite_existing, ec);
    }
    if (ec) return Status::IoError("cannot link " + it->path().string() + ": " + ec.message());
  }
  if (ec) return Status::IoError("cannot read the build scope " + from + ": " + ec.message());
  return Status::Ok();
}

}  // namespace

std::string UncoveredMount(const eval::SandboxMounts& wanted, const eval::SandboxMounts& have) {
  auto covered = [](const std::string& path, const std::vector<std::string>& roots) {
    for (const std::string& root : roots) {
      if (Below(path, root)) return true;
    }
    return false;
  };
  for (const std::string& path : wanted.writable) {
    if (!covered(path, have.writable)) return path + " (writable)";
  }
  for (const std::string& path : wanted.read_only) {
    if (!covered(path, have.read_only) && !covered(path, have.writable)) return path;
  }
  return "";
}

CandidatePool::CandidatePool(eval::WorkerClient worker, CandidatePoolConfig config)
    : worker_(std::move(worker)), config_(std::move(config)) {}

CandidatePool::~CandidatePool() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::error_code ec;
  for (auto& blank : waiting_) {
    blank->session.reset();
    fs::remove_all(blank->folder, ec);
  }
}

void CandidatePool::Prepare() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::erase_if(waiting_, [](const auto& blank) { return !blank->session->alive(); });
  // The folders of blank workers used since: their candidates' processes are over.
  std::vector<fs::path> used;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(config_.root, ec)) {
    const std::string path = entry.path().string();
    const bool waiting = std::any_of(waiting_.begin(), waiting_.end(),
                                     [&](const auto& blank) { return blank->folder == path; });
    if (!waiting && entry.path().filename().string().rfind("blank-", 0) == 0) {
      used.push_back(entry.path());
    }
  }
  for (const fs::path& path : used) fs::remove_all(path, ec);
  TopUp(/*device=*/true);
}

void CandidatePool::TopUp(bool device) {
  std::error_code ec;
  const std::string outputs = config_.work_dir + "/candidates";
  fs::create_directories(outputs, ec);
  fs::create_directories(config_.cache_dir + "/inputs", ec);
  fs::create_directories(config_.cache_dir + "/pch", ec);
  while (static_cast<int>(waiting_.size()) < config_.depth) {
    auto blank = std::make_unique<Blank>();
    blank->folder = config_.root + "/blank-" + std::to_string(next_++);
    fs::create_directories(blank->folder + "/src", ec);
    fs::create_directories(blank->folder + "/build", ec);
    for (const char* file : {"/src/problem.py", "/src/candidate.py"}) {
      std::ofstream(blank->folder + file).close();
    }
    blank->mounts = Json{{"candidate", blank->folder + "/src/candidate.py"},
                         {"problem", blank->folder + "/src/problem.py"},
                         {"build_root", blank->folder + "/build"},
                         {"inputs_dir", config_.cache_dir + "/inputs"},
                         {"pch_dir", config_.cache_dir + "/pch"},
                         {"out_dir", outputs},
                         {"prepare", {{"device", config_.device}, {"start_device", device}}}};
    if (!config_.cutlass.is_null()) blank->mounts["cutlass"] = config_.cutlass;
    auto started = eval::WorkerSession::Start(worker_, "candidate", blank->mounts, config_.limits,
                                              config_.env, eval::Confinement::kSandbox);
    if (!started.ok()) {
      counts_.last_reason = "no blank worker could start: " + started.status().message();
      fs::remove_all(blank->folder, ec);
      return;
    }
    blank->session = std::move(*started);
    waiting_.push_back(std::move(blank));
  }
}

std::string CandidatePool::HandOver(Blank& blank, const Json& mounts) const {
  const std::string problem = JsonGet<std::string>(mounts, "problem", "");
  const std::string candidate = JsonGet<std::string>(mounts, "candidate", "");
  const std::string scope = JsonGet<std::string>(mounts, "build_root", "");
  if (problem.empty() || candidate.empty() || scope.empty()) {
    return "the candidate's request names no problem, candidate or build scope";
  }
  blank.session->set_path_view({{problem, blank.folder + "/src/problem.py"},
                                {candidate, blank.folder + "/src/candidate.py"},
                                {scope, blank.folder + "/build"}});
  const eval::SandboxMounts wanted =
      eval::MountsForRequest("serve", blank.session->InProcessView(mounts));
  const eval::SandboxMounts have = eval::MountsForRequest("serve", blank.mounts);
  if (std::string missing = UncoveredMount(wanted, have); !missing.empty()) {
    blank.session->set_path_view({});
    return "the blank worker does not see " + missing;
  }
  auto problem_text = ReadFileText(problem);
  auto candidate_text = ReadFileText(candidate);
  if (!problem_text.ok() || !candidate_text.ok()) return "cannot read the problem or candidate";
  for (Status s : {WriteInPlace(blank.folder + "/src/problem.py", *problem_text),
                   WriteInPlace(blank.folder + "/src/candidate.py", *candidate_text),
                   LinkTree(scope, blank.folder + "/build")}) {
    if (!s.ok()) return s.message();
  }
  // What an earlier candidate of this slot left among the candidate folders is no one's now; not
  // even this candidate's folder keeps anything (one could have been made there ahead of it).
  const std::string out = JsonGet<std::string>(mounts, "out_dir", "");
  std::vector<fs::path> stale;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(config_.work_dir + "/candidates", ec)) {
    if (entry.path().string() != out) stale.push_back(entry.path());
  }
  for (const auto& entry : fs::directory_iterator(out, ec)) stale.push_back(entry.path());
  for (const fs::path& path : stale) fs::remove_all(path, ec);
  return "";
}

Result<std::unique_ptr<eval::WorkerSession>> CandidatePool::Start(
    const eval::WorkerClient& /*worker: the pool's own, the same*/, const Json& mounts,
    const ProcessLimits& limits, const std::map<std::string, std::string>& env) {
  std::unique_ptr<Blank> blank;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    while (!waiting_.empty() && !blank) {
      blank = std::move(waiting_.front());
      waiting_.pop_front();
      if (!blank->session->alive()) blank.reset();
    }
    TopUp(/*device=*/false);  // a job is on the GPU now: no CUDA in the new ones
  }
  std::string reason = "no blank worker was waiting alive";
  if (blank) {
    reason = env == config_.env ? HandOver(*blank, mounts) : "the blank worker is on another GPU";
    if (reason.empty()) {
      std::lock_guard<std::mutex> lock(mutex_);
      ++counts_.handed_over;
      return std::move(blank->session);
    }
  }
  return Fresh(mounts, limits, env, reason);
}

Result<std::unique_ptr<eval::WorkerSession>> CandidatePool::Fresh(
    const Json& mounts, const ProcessLimits& limits, const std::map<std::string, std::string>& env,
    const std::string& reason) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ++counts_.started_fresh;
    counts_.last_reason = reason;
  }
  return eval::WorkerSession::Start(worker_, "candidate", mounts, limits, env,
                                    eval::Confinement::kSandbox);
}

CandidatePool::Counts CandidatePool::counts() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return counts_;
}

}  // namespace kernelpro::serve
