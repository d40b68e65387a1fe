// The search memory (paper §3.4): what earlier iterations of one optimisation run learnt, kept so
// that later iterations neither repeat a failed approach nor lose a discovery.
//
// Two parts:
//
//   SearchMemory      the store. Five sections (MemorySection), append-only for the run,
//                     deduplicated, optionally persisted to a JSON Lines file in the run
//                     directory so a resumed run keeps what it learnt. Render() formats it as the
//                     block the programmer's system prompt carries.
//   MemoryExtractor   after each iteration the orchestrator hands it an IterationRecord; a
//                     separate LLM call on a background thread turns the record into entries.
//                     Submit never waits for that call, so extraction never delays the search.
//
//      iteration N ──Submit(record)──► queue ──worker──► LLM ──validated reply──► SearchMemory
//      iteration N+1 ◄──────────────── Render() ◄──────────────────────────────────┘
//
// Memory is optional (--no-memory): a run without it holds neither object, and Render of an empty
// store is "" so a prompt builder needs no special case.
//
// Thread-safety: every SearchMemory method may be called from any thread at any time. A
// MemoryExtractor's methods may be called from any thread; its worker is its own thread. See the
// class comments for what callbacks may do.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "core/json_io.h"
#include "core/status.h"
#include "llm/backend.h"

namespace kernelpro::agents {

// The five sections of the search memory (paper §3.4).
enum class MemorySection {
  kSearchFindings,
  kErrorsAndCorrections,
  kSuccessfulPatterns,
  kKeyFiles,
  kLearnings
};
// "search_findings", ...: stored in the memory file and the run store, never renamed.
std::string ToString(MemorySection section);
std::string Title(MemorySection section);  // "Search Findings", ...: the prompt's headings
std::optional<MemorySection> ParseMemorySection(const std::string& text);  // any case

struct MemoryEntry {
  MemorySection section = MemorySection::kLearnings;
  std::string text;
  int iteration = 0;  // the iteration it was learnt in
};

// Told about problems that do not stop the run (a persisted line that cannot be read, a write that
// failed, an extraction reply that was ignored). One line of text, no trailing newline.
using MemoryLog = std::function<void(const std::string& line)>;

struct SearchMemoryOptions {
  // Longest entry, in bytes. Longer text is cut at a UTF-8 character boundary and ends in "...",
  // so one runaway entry cannot fill the prompt block. Values below 8 are treated as 8.
  size_t max_entry_chars = 400;
  // Unset: problems are not reported anywhere (they are still counted).
  MemoryLog log;
};

// An append-only, deduplicated store of MemoryEntry values.
//
// Text is stored with its whitespace collapsed (newlines and runs of blanks become one space, ends
// trimmed) and capped at max_entry_chars. Two entries are the same when they are in the same
// section and their texts agree ignoring ASCII case and trailing punctuation; the first one seen
// is kept with its iteration, later ones are not added. Entries keep the order they were added in.
//
// Persistence (Open): one JSON object per line,
//   {"iteration": 3, "section": "errors_and_corrections", "text": "..."}
// Every new entry is appended as one whole line with write(2), under the store's lock and with
// no user-space buffer, so a crash of kernelpro loses nothing already added and lines never
// interleave (a crash of the machine may lose the last lines: there is no fsync; the memory is an
// aid, not a record). If a write fails, that is logged once and the store keeps going in memory
// only.
//
// Thread-safety: all methods are safe to call concurrently. `log` is called without the store's
// lock held, possibly from several threads at once when several threads add entries.
// How much of the programmer's prompt the memory block may take by default.
inline constexpr size_t kDefaultMemoryChars = 6000;

class SearchMemory {
 public:
  // A store kept in memory only.
  explicit SearchMemory(SearchMemoryOptions options = {});
  ~SearchMemory();
  SearchMemory(const SearchMemory&) = delete;
  SearchMemory& operator=(const SearchMemory&) = delete;

  // A store persisted to `path` (created when missing). Entries already in the file are loaded
  // first, so a resumed run continues with its memory. A line that cannot be read (not JSON, an
  // unknown section, no text) is logged as "<path>:<line>: <why>; line skipped", counted in
  // skipped_lines(), and does not stop the load. Fails only when the file cannot be opened for
  // reading and appending.
  static Result<std::unique_ptr<SearchMemory>> Open(const std::string& path,
                                                    SearchMemoryOptions options = {});

  // Adds an entry learnt in `iteration`. True when it is new; false when it is empty after
  // normalisation or the same as an entry already stored.
  bool Add(MemorySection section, std::string_view text, int iteration);
  bool Add(const MemoryEntry& entry) { return Add(entry.section, entry.text, entry.iteration); }

  // Every entry, in the order added (loaded entries first).
  std::vector<MemoryEntry> Entries() const;
  size_t size() const;
  bool empty() const { return size() == 0; }

  // The block for the programmer's system prompt, at most `max_chars` bytes (the prompt builder
  // puts its own "Search memory" heading above it): for each non-empty section (in
  // MemorySection order) a "## Title" line and one bullet per entry, oldest
  // first, each tagged with its iteration. When everything does not fit, each section keeps its
  // newest entries (sections take turns, one entry at a time, until nothing more fits) and says
  // how many older entries it left out. The same entries always give the same text. "" when the
  // store is empty or the budget cannot hold, per section, its title and the count of entries
  // left out.
  std::string Render(size_t max_chars) const;

  // The file this store persists to; "" when it is kept in memory only.
  const std::string& path() const { return path_; }
  // Lines of the persisted file that Open could not read.
  int skipped_lines() const { return skipped_lines_; }

 private:
  // Add, with the choice of writing the entry to the file (not when loading it from there).
  bool Insert(MemoryEntry entry, bool persist);
  void Log(const std::string& line) const;
  // With mu_ held. The problem to log when the append failed; "" otherwise.
  std::string AppendLine(const MemoryEntry& entry);

  const SearchMemoryOptions options_;
  std::string path_;
  int fd_ = -1;  // the persisted file, open for appending; -1 when none or after a failed write
  int skipped_lines_ = 0;

  mutable std::mutex mu_;
  std::vector<MemoryEntry> entries_;                      // in the order added
  std::set<std::pair<MemorySection, std::string>> keys_;  // what makes entries the same
};

// One candidate of a finished iteration, failed or not (paper §3.4: the memory learns from dead
// ends as well as from what worked).
struct ChildRecord {
  std::string name;      // the node, "n3"
  std::string strategy;  // its optimisation idea, in a sentence
  std::string code;      // its source (the extractor caps it)
  std::string verdict;   // "compile_error", "incorrect", "correct 1.42x accepted", an LLM error
  std::optional<double> speedup;  // over the reference, when measured
  std::string feedback;           // a failed child's errors; a profiled child's profiling summary
};

// What the orchestrator knows about one finished iteration, for the extractor.
struct IterationRecord {
  int iteration = 0;
  std::string mode;                     // initial | debug | optimize
  std::string strategy;                 // the candidate's optimisation idea, in a sentence
  std::string approach;                 // a summary or excerpt of the code (the extractor caps it)
  std::vector<std::string> tool_calls;  // "name(arguments)" of each tool call made
  std::string outcome;                  // "compile_error: ...", "incorrect: ...", "correct", ...
  std::optional<double> speedup;        // over the reference, when measured
  std::string feedback_excerpt;         // compiler, correctness or profiling feedback (capped)
  // Every candidate of the iteration. When set, the extractor is shown these (each capped to its
  // share of max_approach_chars and max_feedback_chars) instead of strategy, approach, speedup and
  // feedback_excerpt, which then describe the best child only (records stored before children
  // existed have only those).
  std::vector<ChildRecord> children;
};

// The record as the run store's journal keeps it (the orchestrator's record step), and back;
// missing keys keep their defaults.
Json ToJson(const IterationRecord& record);
IterationRecord IterationRecordFromJson(const Json& json);

// What the destructor does with work that is not done yet.
enum class ExtractorShutdown {
  // Extract every queued record, waiting at most `shutdown_timeout`; after that, as kAbandon.
  kFinish,
  // Drop the queued records and do not wait for the call in flight: its reply is thrown away
  // when it comes.
  kAbandon,
};

struct MemoryExtractorOptions {
  // Records waiting behind the call in flight. When the queue is full, Submit drops the oldest
  // waiting record (counted in stats().dropped and logged): newer iterations are the ones worth
  // learning from, and a slow model must not build an unbounded backlog. Values below 1 act as 1.
  size_t max_queue = 4;
  // The extraction call's limits. Temperature 0: the same iteration should give the same notes.
  int max_tokens = 1024;
  std::optional<double> temperature = 0.0;
  // How much of a record the model is shown, in bytes.
  size_t max_approach_chars = 6000;
  size_t max_feedback_chars = 3000;
  size_t max_tool_calls = 20;
  // Bytes of the current memory shown to the model so that it does not repeat it (0: none).
  size_t known_memory_chars = 3000;
  // A reply is ignored whole when one of its lists holds more items than this, or one of its
  // strings is longer than max_reply_string_chars (a model that ignores these bounds is not
  // writing notes). Strings within the bound but longer than the store's cap are cut there.
  size_t max_items_per_list = 8;
  size_t max_reply_string_chars = 2000;
  ExtractorShutdown on_shutdown = ExtractorShutdown::kFinish;
  // kFinish: the longest the destructor waits for the queue to empty.
  std::chrono::milliseconds shutdown_timeout{std::chrono::seconds(60)};
  // Told about ignored replies, backend errors and dropped records. Calls are serialised (never
  // two at once), come from the worker thread or from Submit's caller, and never come after the
  // destructor has returned. It may call stats(); it must not call Submit, Drain or WaitIdle.
  MemoryLog log;
  // Wraps each extraction call on the worker thread: `call` makes it. The search orchestrator
  // uses it to tag the exchange with the record's iteration. Empty: the call is made as is.
  std::function<llm::Outcome(const IterationRecord& record,
                             const std::function<llm::Outcome()>& call)>
      around_call;
};

struct ExtractorStats {
  int submitted = 0;      // records given to Submit
  int extracted = 0;      // replies that passed validation (possibly with empty lists)
  int ignored = 0;        // records whose call failed or whose reply was invalid
  int dropped = 0;        // records never sent: pushed out of a full queue, or at shutdown
  int entries_added = 0;  // new entries stored (duplicates of stored entries not counted)
};

// The JSON Schema an extraction reply must follow: an object with the five section names as keys
// (ToString(MemorySection)), each a list of short strings.
Json MemoryExtractionSchema(size_t max_items_per_list = 8);

// Turns finished iterations into SearchMemory entries with one LLM call per iteration, on a
// background thread, at most one call in flight.
//
// A reply is accepted only when it is one JSON object (the backend's structured answer, or else
// the JSON found in its text) whose keys are all section names, each a list of non-empty strings
// within the bounds above; missing sections count as empty lists. Anything else (no JSON, another
// type, an unknown key, an empty or overlong string), like a backend error, is logged, counted
// in stats().ignored, and adds nothing; the next record is extracted as usual.
//
// Lifetime: `memory` must outlive the extractor. The backend is shared because an abandoned call
// may still be running in the backend after the destructor returns; the worker then holds the
// last reference to it and never touches `memory` or `log` again.
//
// The destructor returns after at most `shutdown_timeout` (kFinish) or at once (kAbandon), plus
// the time the worker needs to finish storing a reply it already has. It never waits on a call
// that is still running beyond that: such a call is abandoned and its thread detached.
class MemoryExtractor {
 public:
  MemoryExtractor(std::shared_ptr<llm::Backend> backend, SearchMemory& memory,
                  MemoryExtractorOptions options = {});
  ~MemoryExtractor();
  MemoryExtractor(const MemoryExtractor&) = delete;
  MemoryExtractor& operator=(const MemoryExtractor&) = delete;

  // Queues the record and returns without waiting for any LLM call.
  void Submit(IterationRecord record);

  // Waits until every submitted record has been extracted, ignored or dropped. Drain waits as long
  // as the backend takes (its own timeouts bound it); WaitIdle gives up after `timeout` and says
  // whether the extractor is idle.
  void Drain();
  bool WaitIdle(std::chrono::milliseconds timeout);

  ExtractorStats stats() const;

 private:
  struct State;
  std::shared_ptr<State> state_;
  std::thread worker_;
};

}  // namespace kernelpro::agents
