#include "suite/slurm.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "core/subprocess.h"
#include "core/text.h"

namespace kernelpro::suite {

namespace fs = std::filesystem;

namespace {

// sbatch answers within seconds; a controller that does not answer at all must not hang a suite.
constexpr std::chrono::seconds kSlurmCommandTimeout{60};

std::string UtcNow() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

std::string Absolute(const std::string& path) {
  std::error_code error;
  fs::path absolute = fs::absolute(path, error);
  return error ? path : absolute.lexically_normal().string();
}

Result<ProcessResult> RunSlurmCommand(std::vector<std::string> argv) {
  ProcessOptions options;
  options.argv = std::move(argv);
  options.limits.wall_timeout = kSlurmCommandTimeout;
  return RunProcess(options);
}

// Why a Slurm command did not succeed, in one line: what it said on stderr (its lines joined by
// "; "), else on stdout, and how it ended.
std::string FailureText(const ProcessResult& result) {
  std::vector<std::string> lines;
  for (const std::string& line : SplitLines(result.stderr_text)) {
    if (!Trim(line).empty()) lines.emplace_back(Trim(line));
  }
  if (lines.empty()) {
    for (const std::string& line : SplitLines(result.stdout_text)) {
      if (!Trim(line).empty()) lines.emplace_back(Trim(line));
    }
  }
  const std::string said = Join(lines, "; ");
  return said.empty() ? result.Describe() : said + " (" + result.Describe() + ")";
}

Status SlurmToolMissing(const std::string& tool) {
  return Status::Unavailable("Slurm's " + tool +
                             " is not on PATH; install slurm-wlm or drop --slurm");
}

bool AllDigits(std::string_view text) {
  return !text.empty() &&
         std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// "4711_3" -> 3 and "4711_[3-5%2]" -> {3,4,5}, for lines of job `job_id`; other ids -> nothing.
std::vector<int> ShardsOfTaskId(std::string_view id, const std::string& job_id) {
  if (!id.starts_with(job_id + "_")) return {};
  auto shards = ParseArraySpec(id.substr(job_id.size() + 1));
  return shards.ok() ? shards.value() : std::vector<int>{};
}

// "CANCELLED by 0" -> "CANCELLED"; "completed" -> "COMPLETED".
std::string NormalState(std::string_view state) {
  state = Trim(state);
  return Upper(state.substr(0, state.find(' ')));
}

// Fills `states` from "ID|STATE" lines (squeue -o "%i|%T", sacct -P -o JobID,State) without
// overwriting what an earlier, more live source said.
void ReadStateLines(const std::string& text, const std::string& job_id, const std::set<int>& wanted,
                    std::map<int, std::string>& states) {
  for (const std::string& line : SplitLines(text)) {
    const std::size_t bar = line.find('|');
    if (bar == std::string::npos) continue;
    const std::string state = NormalState(std::string_view(line).substr(bar + 1));
    if (state.empty()) continue;
    for (int shard : ShardsOfTaskId(Trim(std::string_view(line).substr(0, bar)), job_id)) {
      if (wanted.contains(shard)) states.emplace(shard, state);
    }
  }
}

Result<std::string> NextScriptPath(const std::string& slurm_dir) {
  // O_EXCL: two submissions at once never share a number.
  for (int n = 1; n < 100000; ++n) {
    std::string path = slurm_dir + "/job-" + std::to_string(n) + ".sh";
    const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0755);
    if (fd >= 0) {
      close(fd);
      return path;
    }
    if (errno != EEXIST) {
      return Status::IoError("cannot create " + path + ": " + std::strerror(errno));
    }
  }
  return Status::IoError("no free job script name in " + slurm_dir);
}

Status WriteScript(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
  out.close();
  if (!out) return Status::IoError("cannot write " + path);
  // Executable: a user may run the script by hand to reproduce a task.
  chmod(path.c_str(), 0755);
  return Status::Ok();
}

Status AppendLine(const std::string& path, const std::string& line) {
  // One write(2) with O_APPEND: a line is never interleaved with another submitter's.
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd < 0) return Status::IoError("cannot open " + path + ": " + std::strerror(errno));
  const std::string text = line + "\n";
  const ssize_t written = write(fd, text.data(), text.size());
  close(fd);
  if (written != static_cast<ssize_t>(text.size())) {
    return Status::IoError("cannot append to " + path);
  }
  return Status::Ok();
}

}  // namespace

Json SlurmSubmission::ToJson() const {
  return Json{{"job_id", job_id},
              {"shards", shards},
              {"array", array_spec},
              {"sbatch_args", sbatch_args},
              {"submitted_at", submitted_at},
              {"script", script}};
}

SlurmSubmission SlurmSubmission::FromJson(const Json& json) {
  SlurmSubmission s;
  s.job_id = JsonGet<std::string>(json, "job_id", "");
  s.shards = JsonGet<int>(json, "shards", 0);
  s.array_spec = JsonGet<std::string>(json, "array", "");
  s.sbatch_args = JsonGet<std::vector<std::string>>(json, "sbatch_args", {});
  s.submitted_at = JsonGet<std::string>(json, "submitted_at", "");
  s.script = JsonGet<std::string>(json, "script", "");
  return s;
}

Result<std::vector<std::string>> SplitShellWords(std::string_view text) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;  // "" is a word: --comment=""
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (IsAsciiSpace(c)) {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
      continue;
    }
    in_word = true;
    if (c == '\\') {
      if (i + 1 == text.size()) {
        return Status::InvalidArgument("--slurm options end with a lone backslash: " +
                                       std::string(text));
      }
      word += text[++i];
    } else if (c == '\'') {
      const std::size_t close = text.find('\'', i + 1);
      if (close == std::string_view::npos) {
        return Status::InvalidArgument("--slurm options have an unbalanced ' quote: " +
                                       std::string(text));
      }
      word += text.substr(i + 1, close - i - 1);
      i = close;
    } else if (c == '"') {
      std::size_t j = i + 1;
      for (; j < text.size() && text[j] != '"'; ++j) {
        if (text[j] == '\\' && j + 1 < text.size() &&
            std::string_view("\"\\$`").find(text[j + 1]) != std::string_view::npos) {
          ++j;
        }
        word += text[j];
      }
      if (j == text.size()) {
        return Status::InvalidArgument("--slurm options have an unbalanced \" quote: " +
                                       std::string(text));
      }
      i = j;
    } else {
      word += c;
    }
  }
  if (in_word) words.push_back(std::move(word));
  return words;
}

std::string ShellQuote(std::string_view word) {
  const bool plain = !word.empty() && std::all_of(word.begin(), word.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) ||
           std::string_view("_-./=:,+%@").find(c) != std::string_view::npos;
  });
  if (plain) return std::string(word);
  std::string quoted = "'";
  for (char c : word) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

std::string ArraySpec(std::vector<int> shards) {
  std::sort(shards.begin(), shards.end());
  shards.erase(std::unique(shards.begin(), shards.end()), shards.end());
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < shards.size();) {
    std::size_t j = i;
    while (j + 1 < shards.size() && shards[j + 1] == shards[j] + 1) ++j;
    parts.push_back(j == i ? std::to_string(shards[i])
                           : std::to_string(shards[i]) + "-" + std::to_string(shards[j]));
    i = j + 1;
  }
  return Join(parts, ",");
}

Result<std::vector<int>> ParseArraySpec(std::string_view spec) {
  std::string_view body = Trim(spec);
  if (body.starts_with('[') && body.ends_with(']')) body = body.substr(1, body.size() - 2);
  body = body.substr(0, body.find('%'));
  const auto invalid = [&] {
    return Status::InvalidArgument("not a Slurm array spec: '" + std::string(spec) + "'");
  };
  std::set<int> shards;
  for (const std::string& part : Split(body, ',')) {
    const std::size_t dash = part.find('-');
    const std::string first = part.substr(0, dash);
    const std::string last = dash == std::string::npos ? first : part.substr(dash + 1);
    if (!AllDigits(first) || !AllDigits(last) || first.size() > 7 || last.size() > 7) {
      return invalid();
    }
    const int from = std::stoi(first);
    const int to = std::stoi(last);
    if (to < from) return invalid();
    for (int k = from; k <= to; ++k) shards.insert(k);
  }
  return std::vector<int>(shards.begin(), shards.end());
}

std::string RenderSlurmScript(const SlurmArrayRequest& request, const std::string& array_spec) {
  const std::string suite_dir = Absolute(request.suite_dir);
  std::string command = "exec " + ShellQuote(Absolute(request.kernelpro_binary)) + " suite run " +
                        ShellQuote(suite_dir) + " --shard \"$SLURM_ARRAY_TASK_ID\" --shards " +
                        std::to_string(request.shards);
  for (const std::string& arg : request.run_args) command += " " + ShellQuote(arg);
  // #SBATCH lines are read by sbatch, not by a shell: no quoting there (a path with spaces in
  // --output would not survive either way).
  return "#!/bin/bash\n"
         "# Written by kernelpro: one Slurm array task = one shard of the suite.\n"
         "#SBATCH --array=" +
         array_spec +
         "\n"
         "#SBATCH --output=" +
         suite_dir +
         "/slurm/slurm-%A_%a.out\n"
         "#SBATCH --job-name=kernelpro-suite\n" +
         command + "\n";
}

Result<SlurmSubmission> SubmitSlurmArray(const SlurmArrayRequest& request) {
  if (request.shards < 1) {
    return Status::InvalidArgument("--shards must be at least 1, not " +
                                   std::to_string(request.shards));
  }
  std::vector<int> shards = request.only_shards;
  if (shards.empty()) {
    for (int k = 0; k < request.shards; ++k) shards.push_back(k);
  }
  for (int k : shards) {
    if (k < 0 || k >= request.shards) {
      return Status::InvalidArgument("shard " + std::to_string(k) + " is not in 0.." +
                                     std::to_string(request.shards - 1));
    }
  }
  auto options = SplitShellWords(request.sbatch_options);
  if (!options.ok()) return options.status();
  for (const std::string& option : *options) {
    if (option == "-a" || option.starts_with("--array") ||
        (option.starts_with("-a") && option.size() > 2 && option[2] != '-')) {
      return Status::InvalidArgument("--slurm must not set " + option +
                                     ": kernelpro sets the job array from --shards");
    }
  }

  const std::string suite_dir = Absolute(request.suite_dir);
  const std::string slurm_dir = suite_dir + "/slurm";
  std::error_code error;
  fs::create_directories(slurm_dir, error);
  if (error) return Status::IoError("cannot create " + slurm_dir + ": " + error.message());
  auto script = NextScriptPath(slurm_dir);
  if (!script.ok()) return script.status();
  const std::string array_spec = ArraySpec(shards);
  if (Status written = WriteScript(*script, RenderSlurmScript(request, array_spec));
      !written.ok()) {
    return written;
  }

  std::vector<std::string> argv = {"sbatch", "--parsable"};
  argv.insert(argv.end(), options->begin(), options->end());
  argv.push_back(*script);
  auto run = RunSlurmCommand(argv);
  // --parsable prints "<job id>" or "<job id>;<cluster>" (after any warnings on stderr).
  std::string job_id;
  if (run.ok() && run->exited && run->exit_code == 0) {
    const std::vector<std::string> lines = SplitLines(run->stdout_text);
    const std::string last = lines.empty() ? "" : std::string(Trim(lines.back()));
    job_id = last.substr(0, last.find(';'));
  }
  if (!AllDigits(job_id)) {
    // Nothing was submitted: the script goes, so that job-<n>.sh are exactly the submissions.
    fs::remove(*script, error);
    if (!run.ok()) return run.status();
    if (!run->started) return SlurmToolMissing("sbatch");
    if (!run->exited || run->exit_code != 0) {
      return Status::Unavailable("sbatch refused the job array: " + FailureText(*run));
    }
    return Status::Internal("sbatch printed no job id (expected a number from --parsable): '" +
                            std::string(Trim(run->stdout_text)) + "'");
  }

  SlurmSubmission submission;
  submission.job_id = job_id;
  submission.shards = request.shards;
  submission.array_spec = array_spec;
  submission.sbatch_args = *options;
  submission.submitted_at = UtcNow();
  submission.script = *script;
  if (Status recorded = AppendLine(slurm_dir + "/submissions.jsonl", DumpJson(submission.ToJson()));
      !recorded.ok()) {
    return Status::IoError("job " + job_id +
                           " was submitted but not recorded: " + recorded.message());
  }
  return submission;
}

Result<std::vector<SlurmSubmission>> ReadSlurmSubmissions(const std::string& suite_dir) {
  const std::string path = suite_dir + "/slurm/submissions.jsonl";
  std::vector<SlurmSubmission> submissions;
  std::ifstream in(path);
  if (!in) {
    if (!fs::exists(path)) return submissions;
    return Status::IoError("cannot read " + path);
  }
  std::string line;
  while (std::getline(in, line)) {
    if (Trim(line).empty()) continue;
    Json json = Json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!json.is_object()) continue;
    SlurmSubmission submission = SlurmSubmission::FromJson(json);
    if (!submission.job_id.empty()) submissions.push_back(std::move(submission));
  }
  return submissions;
}

Result<std::map<int, std::string>> QuerySlurmArrayStates(const SlurmSubmission& submission) {
  auto named = ParseArraySpec(submission.array_spec);
  if (!named.ok()) return named.status();
  const std::set<int> wanted(named->begin(), named->end());
  std::map<int, std::string> states;

  // -t all: finished tasks too, for as long as the controller keeps them (MinJobAge).
  auto live =
      RunSlurmCommand({"squeue", "-h", "-t", "all", "-j", submission.job_id, "-r", "-o", "%i|%T"});
  if (!live.ok()) return live.status();
  if (!live->started) return SlurmToolMissing("squeue");
  if (live->exited && live->exit_code == 0) {
    ReadStateLines(live->stdout_text, submission.job_id, wanted, states);
  } else if (!Contains(live->stderr_text, "Invalid job id")) {
    // Not knowing the job is an answer (it ended long ago); anything else is not.
    return Status::Unavailable("squeue failed for job " + submission.job_id + ": " +
                               FailureText(*live));
  }

  if (states.size() < wanted.size()) {
    // Without accounting sacct fails ("Slurm accounting storage is disabled"): those tasks
    // are then simply gone.
    auto past =
        RunSlurmCommand({"sacct", "-n", "-P", "-X", "-j", submission.job_id, "-o", "JobID,State"});
    if (past.ok() && past->exited && past->exit_code == 0) {
      ReadStateLines(past->stdout_text, submission.job_id, wanted, states);
    }
  }
  for (int shard : wanted) states.emplace(shard, "gone");
  return states;
}

Result<std::set<int>> ActiveSlurmShards(const std::string& suite_dir) {
  auto submissions = ReadSlurmSubmissions(suite_dir);
  if (!submissions.ok()) return submissions.status();
  std::set<int> active;
  for (const SlurmSubmission& submission : *submissions) {
    auto states = QuerySlurmArrayStates(submission);
    if (!states.ok()) return states.status();
    for (const auto& [shard, state] : *states) {
      if (SlurmStateIsActive(state)) active.insert(shard);
    }
  }
  return active;
}

bool SlurmStateIsActive(std::string_view state) {
  static const std::set<std::string, std::less<>> kActive = {
      "PENDING",      "RUNNING",  "CONFIGURING", "COMPLETING", "REQUEUED", "REQUEUE_FED",
      "REQUEUE_HOLD", "RESIZING", "SUSPENDED",   "STAGE_OUT",  "SIGNALING"};
  return kActive.contains(state);
}

}  // namespace kernelpro::suite
