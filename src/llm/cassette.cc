#include "llm/cassette.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "core/hash.h"
#include "llm/types.h"

namespace kernelpro::llm {
namespace {

std::string UtcNow() {
  auto now = std::chrono::system_clock::now();
  std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  auto millis =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()) % 1000;
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%S", &utc);
  char out[40];
  std::snprintf(out, sizeof(out), "%s.%03dZ", text, static_cast<int>(millis.count()));
  return out;
}

// ---------------------------------------------------------------------------------------------
// Recording

class RecordingBackend : public Backend {
 public:
  RecordingBackend(std::unique_ptr<Backend> inner, std::string path, int fd)
      : inner_(std::move(inner)), path_(std::move(path)), fd_(fd) {}
  ~RecordingBackend() override { ::close(fd_); }
  RecordingBackend(const RecordingBackend&) = delete;
  RecordingBackend& operator=(const RecordingBackend&) = delete;

  std::string provider() const override { return inner_->provider(); }
  std::string model() const override { return inner_->model(); }

  Outcome Complete(const Request& request) override {
    Outcome outcome = inner_->Complete(request);
    std::string model = inner_->model();
    Json line = {{"fingerprint", Fingerprint(request, model)},
                 {"model", model},
                 {"provider", inner_->provider()},
                 {"recorded_at", UtcNow()},
                 {"request", ToJson(request)}};
    if (outcome.ok()) {
      line["response"] = ToJson(outcome.response());
    } else {
      line["error"] = ToJson(outcome.error());
    }
    std::string text = DumpJson(line) + "\n";
    std::lock_guard<std::mutex> lock(mu_);
    if (std::string problem = Append(text); !problem.empty()) {
      return MakeError(ErrorKind::kConfig,
                       "cassette " + path_ + ": " + problem + "; this exchange was not recorded");
    }
    return outcome;
  }

 private:
  // Writes the whole line, then fsyncs it. "" on success, else what failed.
  std::string Append(const std::string& text) {
    size_t done = 0;
    while (done < text.size()) {
      ssize_t n = ::write(fd_, text.data() + done, text.size() - done);
      if (n < 0) {
        if (errno == EINTR) continue;
        return std::string("write failed: ") + std::strerror(errno);
      }
      done += static_cast<size_t>(n);
    }
    if (::fsync(fd_) != 0) return std::string("fsync failed: ") + std::strerror(errno);
    return "";
  }

  std::unique_ptr<Backend> inner_;
  const std::string path_;
  const int fd_;
  std::mutex mu_;
};

// ---------------------------------------------------------------------------------------------
// Replay

struct Recording {
  int line = 0;
  std::string model;
  std::string fingerprint;  // recomputed from the request
  std::string stream;       // ReplayStream of the request (kSequential)
  Json request;             // ToJson of the parsed request: the same form live requests take
  Outcome outcome;
};

// A short excerpt of `text` around `at`, quoted, so a diff shows where two texts part ways.
std::string Excerpt(const std::string& text, size_t at) {
  constexpr size_t kBefore = 15, kLength = 50;
  size_t start = at > kBefore ? at - kBefore : 0;
  std::string out = text.substr(start, kLength);
  for (char& c : out) {
    if (c == '\n' || c == '\t') c = ' ';
  }
  return std::string(start > 0 ? "\"..." : "\"") + out +
         (start + kLength < text.size() ? "...\"" : "\"");
}

std::string TextDifference(const std::string& what, const std::string& recorded,
                           const std::string& now) {
  size_t at = 0;
  while (at < recorded.size() && at < now.size() && recorded[at] == now[at]) ++at;
  return what + " differs at character " + std::to_string(at + 1) + ": recorded " +
         Excerpt(recorded, at) + ", now " + Excerpt(now, at);
}

std::string ValueDifference(const std::string& what, const Json& recorded, const Json& now) {
  auto shown = [](const Json& j) {
    std::string s = j.is_null() ? "unset" : DumpJson(j);
    return s.size() > 80 ? s.substr(0, 80) + "..." : s;
  };
  return what + " differs: recorded " + shown(recorded) + ", now " + shown(now);
}

Json Field(const Json& object, const char* key) {
  auto it = object.find(key);
  return it == object.end() ? Json() : *it;
}

// How far a recorded request is from a live one: how many parts differ, and the first of them in
// reading order (model, system prompt, messages, tools, sampling settings).
struct Difference {
  int parts = 0;
  std::string first;

  void Add(std::string what) {
    if (parts++ == 0) first = std::move(what);
  }
};

void CompareMessage(size_t index, const Json& recorded, const Json& now, Difference& diff) {
  std::string where = "message " + std::to_string(index + 1);
  if (Field(recorded, "role") != Field(now, "role")) {
    diff.Add(ValueDifference(where + " role", Field(recorded, "role"), Field(now, "role")));
    return;
  }
  std::string recorded_text = recorded.value("text", ""), now_text = now.value("text", "");
  if (recorded_text != now_text) {
    diff.Add(TextDifference(where + " text", recorded_text, now_text));
  } else if (Field(recorded, "tool_calls") != Field(now, "tool_calls")) {
    diff.Add(ValueDifference(where + " tool calls", Field(recorded, "tool_calls"),
                             Field(now, "tool_calls")));
  } else if (Field(recorded, "tool_result") != Field(now, "tool_result")) {
    Json r = Field(recorded, "tool_result"), n = Field(now, "tool_result");
    if (r.is_object() && n.is_object() && r.value("content", "") != n.value("content", "")) {
      diff.Add(
          TextDifference(where + " tool result", r.value("content", ""), n.value("content", "")));
    } else {
      diff.Add(ValueDifference(where + " tool result", r, n));
    }
  }
}

Difference Compare(const Recording& recorded, const Json& now, const std::string& model) {
  Difference diff;
  if (recorded.model != model) {
    diff.Add("model differs: recorded \"" + recorded.model + "\", now \"" + model + "\"");
  }
  const Json& rec = recorded.request;
  if (rec.value("system", "") != now.value("system", "")) {
    diff.Add(TextDifference("system prompt", rec.value("system", ""), now.value("system", "")));
  }
  Json rec_messages = rec.value("messages", Json::array());
  Json now_messages = now.value("messages", Json::array());
  size_t common = std::min(rec_messages.size(), now_messages.size());
  for (size_t i = 0; i < common; ++i) CompareMessage(i, rec_messages[i], now_messages[i], diff);
  if (rec_messages.size() != now_messages.size()) {
    int extra = static_cast<int>(rec_messages.size() > now_messages.size()
                                     ? rec_messages.size() - now_messages.size()
                                     : now_messages.size() - rec_messages.size());
    diff.Add("recorded request has " + std::to_string(rec_messages.size()) +
             " messages, this one " + std::to_string(now_messages.size()));
    diff.parts += extra - 1;
  }
  for (const char* key :
       {"tools", "max_tokens", "temperature", "seed", "stop", "response_schema"}) {
    if (Field(rec, key) != Field(now, key)) {
      diff.Add(ValueDifference(key, Field(rec, key), Field(now, key)));
    }
  }
  return diff;
}

Result<Recording> ParseRecording(const std::string& text, int line_number,
                                 const std::string& where) {
  Json j = Json::parse(text, nullptr, false);
  if (j.is_discarded()) return Status::InvalidArgument(where + ": not valid JSON");
  if (!j.is_object()) return Status::InvalidArgument(where + ": not a JSON object");
  if (!j.contains("request")) return Status::InvalidArgument(where + ": no \"request\"");
  Result<Request> request = RequestFromJson(j["request"]);
  if (!request.ok()) return Status::InvalidArgument(where + ": " + request.status().message());
  std::string model = JsonGet<std::string>(j, "model", "");
  if (model.empty()) return Status::InvalidArgument(where + ": no \"model\"");
  bool has_response = j.contains("response"), has_error = j.contains("error");
  if (has_response == has_error) {
    return Status::InvalidArgument(where + ": needs exactly one of \"response\" and \"error\"");
  }
  std::optional<Outcome> outcome;
  if (has_response) {
    Result<Response> response = ResponseFromJson(j["response"]);
    if (!response.ok()) return Status::InvalidArgument(where + ": " + response.status().message());
    outcome.emplace(std::move(*response));
  } else {
    Result<Error> error = ErrorFromJson(j["error"]);
    if (!error.ok()) return Status::InvalidArgument(where + ": " + error.status().message());
    outcome.emplace(std::move(*error));
  }
  return Recording{line_number,
                   model,
                   Fingerprint(*request, model),
                   ReplayStream(*request),
                   ToJson(*request),
                   std::move(*outcome)};
}

class ReplayBackend : public Backend {
 public:
  ReplayBackend(std::string path, ReplayMode mode, std::string model,
                std::vector<Recording> recordings, std::map<std::string, size_t> skip)
      : path_(std::move(path)),
        mode_(mode),
        model_(std::move(model)),
        recordings_(std::move(recordings)),
        served_(recordings_.size(), false) {
    if (mode_ != ReplayMode::kSequential) return;
    // A resumed run was served the first `skip[stream]` recordings of each stream already.
    for (size_t i = 0; i < recordings_.size(); ++i) {
      size_t& left = skip[recordings_[i].stream];
      if (left > 0) {
        served_[i] = true;
        --left;
      }
    }
  }

  std::string provider() const override { return "replay"; }
  std::string model() const override { return model_; }

  Outcome Complete(const Request& request) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (mode_ == ReplayMode::kSequential) {
      const std::string stream = ReplayStream(request);
      size_t in_stream = 0;
      for (size_t i = 0; i < recordings_.size(); ++i) {
        if (recordings_[i].stream != stream) continue;
        ++in_stream;
        if (served_[i]) continue;
        served_[i] = true;
        return recordings_[i].outcome;
      }
      return Miss("exhausted: all " + std::to_string(in_stream) + " recordings of stream '" +
                  stream + "' were served already (sequential replay)");
    }
    std::string fingerprint = Fingerprint(request, model_);
    std::vector<int> lines;
    for (size_t i = 0; i < recordings_.size(); ++i) {
      if (recordings_[i].fingerprint != fingerprint) continue;
      if (!served_[i]) {
        served_[i] = true;
        return recordings_[i].outcome;
      }
      lines.push_back(recordings_[i].line);
    }
    if (!lines.empty()) {
      std::string list;
      for (int line : lines) list += (list.empty() ? "" : ", ") + std::to_string(line);
      return Miss("request fingerprint " + fingerprint + " was recorded " +
                  std::to_string(lines.size()) + " time(s) (line " + list +
                  ") and every recording was served already");
    }
    return Miss("no recording for request fingerprint " + fingerprint + Nearest(request));
  }

 private:
  Error Miss(const std::string& what) const {
    return MakeError(ErrorKind::kReplayMiss, "cassette " + path_ + ": " + what);
  }

  std::string Nearest(const Request& request) const {
    if (recordings_.empty()) return "; the cassette holds no recordings";
    Json now = ToJson(request);
    const Recording* best = nullptr;
    Difference best_diff;
    for (const Recording& r : recordings_) {
      Difference d = Compare(r, now, model_);
      if (best == nullptr || d.parts < best_diff.parts) {
        best = &r;
        best_diff = d;
      }
    }
    if (best_diff.parts == 0) {
      // Equal as JSON yet a different fingerprint: only the canonical text can differ.
      return "; the nearest recorded request (line " + std::to_string(best->line) +
             ") differs only in its serialised form";
    }
    return "; nearest recorded request (line " + std::to_string(best->line) +
           "): " + best_diff.first;
  }

  const std::string path_;
  const ReplayMode mode_;
  const std::string model_;
  const std::vector<Recording> recordings_;
  std::mutex mu_;
  std::vector<bool> served_;
};

}  // namespace

std::string ReplayStream(const Request& request) {
  if (request.response_schema) return "schema:" + request.response_schema->name;
  if (!request.tools.empty()) return "tools";
  return "text";
}

std::string Fingerprint(const Request& request, const std::string& model) {
  // nlohmann::json keeps object keys sorted, and DumpJson writes no whitespace: the dump is
  // canonical whatever order the fields were built or read in.
  return Sha256Hex(DumpJson(Json{{"model", model}, {"request", ToJson(request)}}));
}

Result<std::unique_ptr<Backend>> MakeRecordingBackend(std::unique_ptr<Backend> inner,
                                                      std::string cassette_path) {
  int fd = ::open(cassette_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) {
    return Status::IoError("cannot open cassette " + cassette_path +
                           " for recording: " + std::strerror(errno));
  }
  return std::unique_ptr<Backend>(
      std::make_unique<RecordingBackend>(std::move(inner), std::move(cassette_path), fd));
}

Result<std::unique_ptr<Backend>> MakeReplayBackend(std::string cassette_path, ReplayMode mode,
                                                   std::string model,
                                                   std::map<std::string, size_t> skip) {
  std::ifstream in(cassette_path);
  if (!in) return Status::NotFound("cannot open cassette " + cassette_path);
  std::vector<Recording> recordings;
  std::string text;
  for (int line = 1; std::getline(in, text); ++line) {
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;  // blank lines
    std::string where = cassette_path + ":" + std::to_string(line);
    Result<Recording> recording = ParseRecording(text, line, where);
    if (!recording.ok()) return recording.status();
    recordings.push_back(std::move(*recording));
  }
  if (model.empty() && !recordings.empty()) model = recordings.front().model;
  return std::unique_ptr<Backend>(std::make_unique<ReplayBackend>(
      std::move(cassette_path), mode, std::move(model), std::move(recordings), std::move(skip)));
}

}  // namespace kernelpro::llm
