#include "agents/search_memory.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <fstream>
#include <utility>

#include "core/enum_names.h"
#include "core/text.h"
#include "llm/structured.h"
#include "llm/types.h"

namespace kernelpro::agents {
namespace {

constexpr std::array<std::pair<MemorySection, const char*>, 5> kSections = {
    {{MemorySection::kSearchFindings, "search_findings"},
     {MemorySection::kErrorsAndCorrections, "errors_and_corrections"},
     {MemorySection::kSuccessfulPatterns, "successful_patterns"},
     {MemorySection::kKeyFiles, "key_files"},
     {MemorySection::kLearnings, "learnings"}}};
// The headings of the memory block the programmer reads.
constexpr std::array<std::pair<MemorySection, const char*>, 5> kSectionTitles = {
    {{MemorySection::kSearchFindings, "Search Findings"},
     {MemorySection::kErrorsAndCorrections, "Errors & Corrections"},
     {MemorySection::kSuccessfulPatterns, "Successful Patterns"},
     {MemorySection::kKeyFiles, "Key Files"},
     {MemorySection::kLearnings, "Learnings"}}};

constexpr std::array<MemorySection, 5> kAllSections = {
    MemorySection::kSearchFindings, MemorySection::kErrorsAndCorrections,
    MemorySection::kSuccessfulPatterns, MemorySection::kKeyFiles, MemorySection::kLearnings};

// `text` cut to at most `max_bytes` bytes, ending in "..." when cut.
std::string CapEntry(std::string text, size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  text.resize(Utf8Prefix(text, max_bytes - 3));
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text + "...";
}

// What makes two entries of a section the same: ASCII case and trailing punctuation ignored.
std::string DedupKey(const std::string& text) {
  std::string key = text;
  for (char& c : key) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  while (!key.empty() && std::strchr(".,;:!? ", key.back()) != nullptr) key.pop_back();
  return key;
}

std::string EntryLine(const MemoryEntry& entry) {
  return "- [iteration " + std::to_string(entry.iteration) + "] " + entry.text + "\n";
}

std::string LeftOutLine(size_t left_out, bool kept_some) {
  return "- (" + std::to_string(left_out) + (kept_some ? " older" : "") +
         (left_out == 1 ? " entry" : " entries") + " left out for space)\n";
}

// Text `max_bytes` long at most, with a note of how much was cut: for the extractor's prompt.
std::string Excerpt(const std::string& text, size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  size_t keep = Utf8Prefix(text, max_bytes);
  return text.substr(0, keep) + "\n[... " + std::to_string(text.size() - keep) +
         " more bytes not shown]";
}

std::string OrNone(const std::string& text) { return text.empty() ? "(none)" : text; }

}  // namespace

std::string ToString(MemorySection section) { return NameOf(kSections, section); }
std::string Title(MemorySection section) { return NameOf(kSectionTitles, section); }
std::optional<MemorySection> ParseMemorySection(const std::string& text) {
  return ValueOf(kSections, Lower(text));
}

// ---------------------------------------------------------------------------------------------
// SearchMemory

SearchMemory::SearchMemory(SearchMemoryOptions options) : options_(std::move(options)) {}

SearchMemory::~SearchMemory() {
  if (fd_ >= 0) ::close(fd_);
}

Result<std::unique_ptr<SearchMemory>> SearchMemory::Open(const std::string& path,
                                                         SearchMemoryOptions options) {
  auto memory = std::make_unique<SearchMemory>(std::move(options));
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) {
    return Status::IoError("cannot open search memory " + path + ": " + std::strerror(errno));
  }
  memory->fd_ = fd;
  memory->path_ = path;
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IoError("cannot read search memory " + path);
  std::string line;
  bool ends_with_newline = true;
  for (int number = 1; std::getline(in, line); ++number) {
    ends_with_newline = !in.eof();
    if (CollapseWhitespace(line).empty()) continue;
    auto skip = [&](const std::string& why) {
      ++memory->skipped_lines_;
      memory->Log(path + ":" + std::to_string(number) + ": " + why + "; line skipped");
    };
    Json json = Json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (json.is_discarded() || !json.is_object()) {
      skip("not a JSON object");
      continue;
    }
    auto section = ParseMemorySection(JsonGet<std::string>(json, "section", ""));
    if (!section) {
      skip("no known \"section\"");
      continue;
    }
    if (!json.contains("text") || !json["text"].is_string()) {
      skip("no \"text\" string");
      continue;
    }
    memory->Insert({*section, json["text"].get<std::string>(), JsonGet<int>(json, "iteration", 0)},
                   /*persist=*/false);
  }
  // A crash in the middle of a write leaves a partial last line; start the next one on its own
  // line so the damage stays confined to the line already reported.
  if (!ends_with_newline && ::write(fd, "\n", 1) != 1) {
    memory->Log("cannot append to search memory " + path + ": " + std::strerror(errno));
  }
  return memory;
}

void SearchMemory::Log(const std::string& line) const {
  if (options_.log) options_.log(line);
}

bool SearchMemory::Add(MemorySection section, std::string_view text, int iteration) {
  return Insert({section, std::string(text), iteration}, /*persist=*/true);
}

bool SearchMemory::Insert(MemoryEntry entry, bool persist) {
  const MemorySection section = entry.section;
  entry.text =
      CapEntry(CollapseWhitespace(entry.text), std::max<size_t>(options_.max_entry_chars, 8));
  std::string key = DedupKey(entry.text);
  if (key.empty()) return false;
  std::string problem;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!keys_.emplace(section, std::move(key)).second) return false;
    entries_.push_back(entry);
    if (persist) problem = AppendLine(entry);
  }
  if (!problem.empty()) Log(problem);
  return true;
}

std::string SearchMemory::AppendLine(const MemoryEntry& entry) {
  if (fd_ < 0) return "";
  std::string line = DumpJson(Json{{"iteration", entry.iteration},
                                   {"section", ToString(entry.section)},
                                   {"text", entry.text}}) +
                     "\n";
  size_t done = 0;
  while (done < line.size()) {
    ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      std::string problem = "cannot append to search memory " + path_ + ": " +
                            std::strerror(errno) + "; entries from now on are kept in memory only";
      ::close(fd_);
      fd_ = -1;
      return problem;
    }
    done += static_cast<size_t>(n);
  }
  return "";
}

std::vector<MemoryEntry> SearchMemory::Entries() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_;
}

size_t SearchMemory::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.size();
}

std::string SearchMemory::Render(size_t max_chars) const {
  std::array<std::vector<MemoryEntry>, kAllSections.size()> by_section;
  for (const MemoryEntry& e : Entries()) by_section[static_cast<size_t>(e.section)].push_back(e);

  // The block when each section shows only its `keep[i]` newest entries.
  auto compose = [&](const std::array<size_t, kAllSections.size()>& keep) {
    std::string out;
    bool any = false;
    for (size_t i = 0; i < kAllSections.size(); ++i) {
      const std::vector<MemoryEntry>& entries = by_section[i];
      if (entries.empty()) continue;
      if (any) out += "\n";
      any = true;
      out += "## " + Title(kAllSections[i]) + "\n";
      if (keep[i] < entries.size()) out += LeftOutLine(entries.size() - keep[i], keep[i] > 0);
      for (size_t j = entries.size() - keep[i]; j < entries.size(); ++j) {
        out += EntryLine(entries[j]);
      }
    }
    return out;
  };

  std::array<size_t, kAllSections.size()> keep{};
  for (size_t i = 0; i < keep.size(); ++i) keep[i] = by_section[i].size();
  std::string all = compose(keep);
  if (all.size() <= max_chars) return all;

  // Sections take turns adding their next-newest entry; a section stops at the first entry that
  // does not fit, so what it shows is always its newest entries, contiguous.
  keep.fill(0);
  if (compose(keep).size() > max_chars) return "";
  std::array<bool, kAllSections.size()> full{};
  for (bool grew = true; grew;) {
    grew = false;
    for (size_t i = 0; i < keep.size(); ++i) {
      if (full[i] || keep[i] == by_section[i].size()) continue;
      ++keep[i];
      if (compose(keep).size() <= max_chars) {
        grew = true;
      } else {
        --keep[i];
        full[i] = true;
      }
    }
  }
  return compose(keep);
}

// ---------------------------------------------------------------------------------------------
// MemoryExtractor

namespace {

constexpr const char* kExtractorSystemPrompt =
    "You keep the notes of an automated CUDA kernel optimisation run. Another model writes the "
    "kernels, one iteration at a time; it reads these notes at the start of every iteration and "
    "remembers nothing else of earlier attempts. You are shown one finished iteration: the tools "
    "it called, its outcome, and every candidate it produced with its strategy, code, verdict, "
    "speedup and feedback (the errors of a failed one, the profiling summary of a profiled one). "
    "Write down what later iterations should know, from the failed candidates as much as from "
    "the fast ones.\n"
    "\n"
    "Put each note in one of five lists:\n"
    "- search_findings: facts found through the tool calls, such as a file path, an API "
    "signature, a hardware limit or a profiler measurement.\n"
    "- errors_and_corrections: what failed and why, with the fix when the feedback shows one: a "
    "compiler error and its cause, a wrong result and what produced it, a slowdown and its "
    "reason.\n"
    "- successful_patterns: a technique that gave a measured speedup, with the number.\n"
    "- key_files: source files worth reading again, each with what it contains.\n"
    "- learnings: principles for this problem that follow from the outcome, such as a tile size "
    "that limits occupancy.\n"
    "\n"
    "Rules:\n"
    "- Record only what this iteration shows. No guesses, no ideas that were not tried, no "
    "general CUDA advice.\n"
    "- One sentence per note, under 300 characters, specific enough to act on: name the "
    "technique, the error, the numbers.\n"
    "- Do not repeat a note that is already in the memory.\n"
    "- Leave a list empty when the iteration taught nothing for it; five empty lists are a valid "
    "answer.\n"
    "- Answer with the JSON object only.";

std::string SpeedupText(const std::optional<double>& speedup) {
  if (!speedup) return "not measured";
  char text[64];
  std::snprintf(text, sizeof(text), "%.2fx the reference's speed", *speedup);
  return text;
}

// Each candidate of the iteration, its code and feedback capped to an equal share of the budgets
// (never below a readable minimum).
std::string DescribeChildren(const std::vector<ChildRecord>& children,
                             const MemoryExtractorOptions& options) {
  const size_t n = children.size();
  const size_t code_cap = std::max<size_t>(options.max_approach_chars / n, 800);
  const size_t feedback_cap = std::max<size_t>(options.max_feedback_chars / n, 500);
  std::string text;
  for (size_t i = 0; i < n; ++i) {
    const ChildRecord& c = children[i];
    text += "\n\n## Candidate " + std::to_string(i + 1) + " of " + std::to_string(n) +
            (c.name.empty() ? "" : " (" + c.name + ")") + ": " + OrNone(c.verdict) +
            "\n\nStrategy: " + OrNone(c.strategy) + "\nSpeedup: " + SpeedupText(c.speedup) +
            "\n\nCode:\n" + OrNone(Excerpt(c.code, code_cap)) + "\n\nFeedback:\n" +
            OrNone(Excerpt(c.feedback, feedback_cap));
  }
  return text;
}

std::string DescribeIteration(const IterationRecord& record, const std::string& known,
                              const MemoryExtractorOptions& options) {
  const bool children = !record.children.empty();
  std::string text =
      "Iteration " + std::to_string(record.iteration) + " (" + OrNone(record.mode) + ")";
  if (!children) {
    text += "\n\nStrategy: " + OrNone(record.strategy) + "\n\nCode:\n" +
            OrNone(Excerpt(record.approach, options.max_approach_chars));
  }
  text += "\n\nTool calls:";
  if (record.tool_calls.empty()) text += " none";
  for (size_t i = 0; i < record.tool_calls.size(); ++i) {
    if (i == options.max_tool_calls) {
      text += "\n- ... and " + std::to_string(record.tool_calls.size() - i) + " more";
      break;
    }
    text += "\n- " + CapEntry(CollapseWhitespace(record.tool_calls[i]), 300);
  }
  text += "\n\nOutcome: " + OrNone(record.outcome);
  if (children) {
    text += DescribeChildren(record.children, options);
  } else {
    text += "\nSpeedup: " + SpeedupText(record.speedup);
    text +=
        "\n\nFeedback:\n" + OrNone(Excerpt(record.feedback_excerpt, options.max_feedback_chars));
  }
  if (!known.empty()) {
    text += "\n\nAlready in the search memory (do not repeat these):\n" + known;
  }
  return text;
}

// The entries of a valid reply, or why it is not valid.
Result<std::vector<MemoryEntry>> ParseReply(const llm::Response& response, int iteration,
                                            const MemoryExtractorOptions& options) {
  std::optional<Json> json = response.structured;
  if (!json) json = llm::ExtractJson(response.text);
  if (!json) {
    return Status::InvalidArgument("the reply holds no JSON: \"" + llm::Snippet(response.text) +
                                   "\"");
  }
  if (!json->is_object()) return Status::InvalidArgument("the reply is not a JSON object");
  for (const auto& [key, value] : json->items()) {
    std::optional<MemorySection> section = ParseMemorySection(key);
    if (!section || ToString(*section) != key) {
      return Status::InvalidArgument("unknown key \"" + key + "\"");
    }
  }
  std::vector<MemoryEntry> entries;
  for (const MemorySection section : kAllSections) {
    auto it = json->find(ToString(section));
    if (it == json->end() || it->is_null()) continue;
    const std::string name = "\"" + ToString(section) + "\"";
    if (!it->is_array()) return Status::InvalidArgument(name + " is not a list");
    if (it->size() > options.max_items_per_list) {
      return Status::InvalidArgument(name + " holds " + std::to_string(it->size()) +
                                     " items (at most " +
                                     std::to_string(options.max_items_per_list) + ")");
    }
    for (const Json& item : *it) {
      if (!item.is_string()) {
        return Status::InvalidArgument(name +
                                       " holds a non-string: " + llm::Snippet(DumpJson(item), 80));
      }
      const std::string& text = item.get_ref<const std::string&>();
      if (CollapseWhitespace(text).empty()) {
        return Status::InvalidArgument(name + " holds an empty string");
      }
      if (text.size() > options.max_reply_string_chars) {
        return Status::InvalidArgument(name + " holds a string of " + std::to_string(text.size()) +
                                       " bytes (at most " +
                                       std::to_string(options.max_reply_string_chars) + ")");
      }
      entries.push_back({section, text, iteration});
    }
  }
  return entries;
}

}  // namespace

Json MemoryExtractionSchema(size_t max_items_per_list) {
  Json properties = Json::object();
  Json required = Json::array();
  for (const MemorySection section : kAllSections) {
    properties[ToString(section)] = {
        {"type", "array"}, {"items", {{"type", "string"}}}, {"maxItems", max_items_per_list}};
    required.push_back(ToString(section));
  }
  return {{"type", "object"},
          {"properties", properties},
          {"required", required},
          {"additionalProperties", false}};
}

struct MemoryExtractor::State {
  State(std::shared_ptr<llm::Backend> b, SearchMemory* m, MemoryExtractorOptions o)
      : backend(std::move(b)), memory(m), options(std::move(o)) {}

  const std::shared_ptr<llm::Backend> backend;
  SearchMemory* const memory;  // touched only under use_mu and while not abandoned
  const MemoryExtractorOptions options;

  // Guards everything below it up to use_mu.
  std::mutex mu;
  std::condition_variable cv;
  std::deque<IterationRecord> queue;
  bool in_flight = false;  // a record has left the queue and is not finished yet
  bool stopping = false;   // the destructor runs: no more records will come
  bool abandoned = false;  // the destructor gave up: touch nothing the caller owns
  bool finished = false;   // the worker's loop has ended
  ExtractorStats stats;

  // Held while touching `memory` or calling `options.log`; the destructor takes it once after
  // setting `abandoned`, so after that nothing the caller owns is touched again. Lock order:
  // use_mu before mu.
  std::mutex use_mu;

  bool Abandoned() {
    std::lock_guard<std::mutex> lock(mu);
    return abandoned;
  }

  // With use_mu held.
  void LogLocked(const std::string& line) {
    if (!options.log || Abandoned()) return;
    try {
      options.log(line);
    } catch (...) {
      // A log callback that throws must not take the worker thread, and the run, down with it.
    }
  }

  void Log(const std::string& line) {
    std::lock_guard<std::mutex> use(use_mu);
    LogLocked(line);
  }

  void Run() {
    for (;;) {
      IterationRecord record;
      {
        std::unique_lock<std::mutex> lock(mu);
        cv.wait(lock, [&] { return abandoned || stopping || !queue.empty(); });
        if (abandoned || queue.empty()) break;
        record = std::move(queue.front());
        queue.pop_front();
        in_flight = true;
      }
      Extract(record);
      {
        std::lock_guard<std::mutex> lock(mu);
        in_flight = false;
      }
      cv.notify_all();
    }
    {
      std::lock_guard<std::mutex> lock(mu);
      finished = true;
    }
    cv.notify_all();
  }

  void Extract(const IterationRecord& record) {
    std::optional<llm::Request> request;
    {
      std::lock_guard<std::mutex> use(use_mu);
      if (!Abandoned()) {
        llm::Request r;
        r.system = kExtractorSystemPrompt;
        std::string known =
            options.known_memory_chars > 0 ? memory->Render(options.known_memory_chars) : "";
        r.messages.push_back(llm::Message::User(DescribeIteration(record, known, options)));
        r.max_tokens = options.max_tokens;
        r.temperature = options.temperature;
        r.response_schema = llm::ResponseSchema{"search_memory_notes",
                                                MemoryExtractionSchema(options.max_items_per_list)};
        request = std::move(r);
      }
    }
    if (!request) return;
    const auto call = [&] { return backend->Complete(*request); };
    llm::Outcome outcome = options.around_call ? options.around_call(record, call) : call();

    std::lock_guard<std::mutex> use(use_mu);
    if (Abandoned()) return;
    const std::string where = "search memory: iteration " + std::to_string(record.iteration);
    if (!outcome.ok()) {
      Count([](ExtractorStats& s) { ++s.ignored; });
      LogLocked(where + ": extraction failed, nothing learnt: " + outcome.error().ToString());
      return;
    }
    Result<std::vector<MemoryEntry>> entries =
        ParseReply(outcome.response(), record.iteration, options);
    if (!entries.ok()) {
      Count([](ExtractorStats& s) { ++s.ignored; });
      LogLocked(where + ": reply ignored: " + entries.status().message());
      return;
    }
    int added = 0;
    for (const MemoryEntry& entry : *entries) added += memory->Add(entry) ? 1 : 0;
    Count([added](ExtractorStats& s) {
      ++s.extracted;
      s.entries_added += added;
    });
  }

  template <typename F>
  void Count(F update) {
    std::lock_guard<std::mutex> lock(mu);
    update(stats);
  }
};

MemoryExtractor::MemoryExtractor(std::shared_ptr<llm::Backend> backend, SearchMemory& memory,
                                 MemoryExtractorOptions options)
    : state_(std::make_shared<State>(std::move(backend), &memory, std::move(options))) {
  // The thread owns a reference to the state, so a detached worker never outlives what it uses.
  worker_ = std::thread([state = state_] { state->Run(); });
}

MemoryExtractor::~MemoryExtractor() {
  State& s = *state_;
  auto abandon_locked = [&s] {
    s.abandoned = true;
    s.stats.dropped += static_cast<int>(s.queue.size());
    s.queue.clear();
  };
  {
    std::unique_lock<std::mutex> lock(s.mu);
    s.stopping = true;
    if (s.options.on_shutdown == ExtractorShutdown::kAbandon) {
      abandon_locked();
    } else {
      s.cv.notify_all();
      if (!s.cv.wait_for(lock, s.options.shutdown_timeout, [&s] { return s.finished; })) {
        abandon_locked();
      }
    }
  }
  s.cv.notify_all();
  // Wait out a reply being stored or a log line being written; none starts after this.
  { std::lock_guard<std::mutex> use(s.use_mu); }
  bool call_running;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    call_running = s.in_flight && !s.finished;
  }
  // An idle worker sees `abandoned` or `stopping` and ends at once; one inside a call may never
  // come back, and owns what it needs.
  if (call_running) {
    worker_.detach();
  } else {
    worker_.join();
  }
}

Json ToJson(const IterationRecord& r) {
  Json j{{"iteration", r.iteration},
         {"mode", r.mode},
         {"strategy", r.strategy},
         {"approach", r.approach},
         {"outcome", r.outcome},
         {"speedup", NumberOrNull(r.speedup)},
         {"feedback_excerpt", r.feedback_excerpt},
         {"tool_calls", r.tool_calls}};
  if (!r.children.empty()) {
    Json children = Json::array();
    for (const ChildRecord& c : r.children) {
      children.push_back(Json{{"name", c.name},
                              {"strategy", c.strategy},
                              {"code", c.code},
                              {"verdict", c.verdict},
                              {"speedup", NumberOrNull(c.speedup)},
                              {"feedback", c.feedback}});
    }
    j["children"] = std::move(children);
  }
  return j;
}

IterationRecord IterationRecordFromJson(const Json& j) {
  IterationRecord r;
  r.iteration = JsonGet<int>(j, "iteration", 0);
  r.mode = JsonGet<std::string>(j, "mode", "");
  r.strategy = JsonGet<std::string>(j, "strategy", "");
  r.approach = JsonGet<std::string>(j, "approach", "");
  r.outcome = JsonGet<std::string>(j, "outcome", "");
  r.speedup = JsonNumber(j, "speedup");
  r.feedback_excerpt = JsonGet<std::string>(j, "feedback_excerpt", "");
  r.tool_calls = JsonGet<std::vector<std::string>>(j, "tool_calls", {});
  for (const Json& c : JsonGet<Json>(j, "children", Json::array())) {
    r.children.push_back(
        {JsonGet<std::string>(c, "name", ""), JsonGet<std::string>(c, "strategy", ""),
         JsonGet<std::string>(c, "code", ""), JsonGet<std::string>(c, "verdict", ""),
         JsonNumber(c, "speedup"), JsonGet<std::string>(c, "feedback", "")});
  }
  return r;
}

void MemoryExtractor::Submit(IterationRecord record) {
  State& s = *state_;
  std::optional<int> dropped_iteration;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    ++s.stats.submitted;
    if (s.queue.size() >= std::max<size_t>(s.options.max_queue, 1)) {
      dropped_iteration = s.queue.front().iteration;
      s.queue.pop_front();
      ++s.stats.dropped;
    }
    s.queue.push_back(std::move(record));
  }
  s.cv.notify_all();
  if (dropped_iteration) {
    s.Log("search memory: iteration " + std::to_string(*dropped_iteration) +
          " dropped without extraction: the extractor is " +
          std::to_string(std::max<size_t>(s.options.max_queue, 1)) + " records behind");
  }
}

void MemoryExtractor::Drain() {
  State& s = *state_;
  std::unique_lock<std::mutex> lock(s.mu);
  s.cv.wait(lock, [&s] { return s.queue.empty() && !s.in_flight; });
}

bool MemoryExtractor::WaitIdle(std::chrono::milliseconds timeout) {
  State& s = *state_;
  std::unique_lock<std::mutex> lock(s.mu);
  return s.cv.wait_for(lock, timeout, [&s] { return s.queue.empty() && !s.in_flight; });
}

ExtractorStats MemoryExtractor::stats() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->stats;
}

}  // namespace kernelpro::agents
