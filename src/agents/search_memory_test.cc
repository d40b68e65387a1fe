// The search memory: what is stored once and how it reads in the prompt, that a resumed run keeps
// it, and that extraction runs beside the search without slowing it or trusting a bad reply.
#include "agents/search_memory.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>

#include "llm/cassette.h"
#include "llm/scripted_backend_testing.h"

namespace kernelpro::agents {
namespace agents_search_memory_test {

using llm::testing::ScriptedBackend;
using llm::testing::TextResponse;
using namespace std::chrono_literals;

constexpr MemorySection kFindings = MemorySection::kSearchFindings;
constexpr MemorySection kErrors = MemorySection::kErrorsAndCorrections;
constexpr MemorySection kPatterns = MemorySection::kSuccessfulPatterns;
constexpr MemorySection kFiles = MemorySection::kKeyFiles;
constexpr MemorySection kLearnings = MemorySection::kLearnings;

std::string FreshPath(const std::string& name) {
  std::string path = ::testing::TempDir() + "/search_memory_test_" + name + ".jsonl";
  std::remove(path.c_str());
  return path;
}

std::vector<std::string> Lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Collects log lines from any thread.
struct LogSink {
  std::mutex mu;
  std::vector<std::string> lines;

  MemoryLog Callback() {
    return [this](const std::string& line) {
      std::lock_guard<std::mutex> lock(mu);
      lines.push_back(line);
    };
  }
  std::vector<std::string> Lines() {
    std::lock_guard<std::mutex> lock(mu);
    return lines;
  }
  // The one line that mentions `part`, or "" when none does.
  std::string Find(const std::string& part) {
    for (const std::string& line : Lines()) {
      if (Contains(line, part)) return line;
    }
    return "";
  }
};

// A one-shot latch a test opens; waiting on it gives up after a generous bound so a broken
// implementation fails instead of hanging.
class Gate {
 public:
  void Open() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = true;
    cv_.notify_all();
  }
  bool Wait(std::chrono::seconds limit = 30s) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, limit, [this] { return open_; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
};

// ---------------------------------------------------------------------------------------------
// The store

TEST(MemorySectionTest, NamesAndTitles) {
  EXPECT_EQ(ToString(MemorySection::kErrorsAndCorrections), "errors_and_corrections");
  EXPECT_EQ(Title(MemorySection::kErrorsAndCorrections), "Errors & Corrections");
  EXPECT_EQ(ParseMemorySection("Key_Files"), MemorySection::kKeyFiles);
  EXPECT_FALSE(ParseMemorySection("key files").has_value());
}

TEST(SearchMemoryTest, SameSectionAndNormalisedTextIsOneEntryKeepingTheFirstIteration) {
  SearchMemory memory;
  EXPECT_TRUE(memory.Add(kLearnings, "Use float4 loads for the\n   input tensor.", 2));
  EXPECT_FALSE(memory.Add(kLearnings, "  use FLOAT4 loads for the input tensor", 5));
  EXPECT_FALSE(memory.Add(kLearnings, "Use float4 loads for the input tensor!!", 6));
  // The same words in another section are another entry.
  EXPECT_TRUE(memory.Add(kPatterns, "Use float4 loads for the input tensor.", 7));
  // Nothing left after normalisation is not an entry.
  EXPECT_FALSE(memory.Add(kLearnings, " \n\t ", 8));
  EXPECT_FALSE(memory.Add(kLearnings, "...", 8));

  std::vector<MemoryEntry> entries = memory.Entries();
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].section, kLearnings);
  EXPECT_EQ(entries[0].text, "Use float4 loads for the input tensor.");
  EXPECT_EQ(entries[0].iteration, 2);
  EXPECT_EQ(entries[1].section, kPatterns);
  EXPECT_EQ(entries[1].iteration, 7);
}

TEST(SearchMemoryTest, EmptyStoreRendersNothing) {
  SearchMemory memory;
  EXPECT_TRUE(memory.empty());
  EXPECT_EQ(memory.Render(100000), "");
}

TEST(SearchMemoryTest, RendersSectionsInOrderWithEntriesOldestFirst) {
  SearchMemory memory;
  memory.Add(kLearnings, "Occupancy is capped at 50% by 96 registers per thread.", 3);
  memory.Add(kErrors, "atomicAdd on __half needs sm_70; compile with the arch flag.", 1);
  memory.Add(kFindings, "cuBLAS handle is created per call in the reference.", 1);
  memory.Add(kErrors, "Tile of 64 overflowed 48 KB static shared memory; use dynamic.", 4);

  EXPECT_EQ(memory.Render(100000),
            "## Search Findings\n"
            "- [iteration 1] cuBLAS handle is created per call in the reference.\n"
            "\n"
            "## Errors & Corrections\n"
            "- [iteration 1] atomicAdd on __half needs sm_70; compile with the arch flag.\n"
            "- [iteration 4] Tile of 64 overflowed 48 KB static shared memory; use dynamic.\n"
            "\n"
            "## Learnings\n"
            "- [iteration 3] Occupancy is capped at 50% by 96 registers per thread.\n");
}

// How many entries a rendered section shows and how many it says it left out.
struct SectionView {
  int shown = 0;
  int left_out = 0;
};

SectionView View(const std::string& block, const std::string& title) {
  SectionView view;
  size_t start = block.find("## " + title + "\n");
  if (start == std::string::npos) return view;
  std::istringstream lines(block.substr(start));
  std::string line;
  std::getline(lines, line);  // the title
  while (std::getline(lines, line) && !line.empty()) {
    int n = 0;
    if (std::sscanf(line.c_str(), "- (%d", &n) == 1) {
      view.left_out = n;
    } else {
      ++view.shown;
    }
  }
  return view;
}

TEST(SearchMemoryTest, RenderWithinBudgetKeepsTheNewestAndSaysWhatWasLeftOut) {
  SearchMemory memory;
  for (int i = 1; i <= 12; ++i) {
    memory.Add(kLearnings, "Learning number " + std::to_string(i) + " about this kernel.", i);
  }
  for (int i = 1; i <= 3; ++i) {
    memory.Add(kErrors, "Error number " + std::to_string(i) + " and how it was fixed.", i);
  }
  const std::string full = memory.Render(100000);

  std::string block = memory.Render(500);
  ASSERT_LE(block.size(), 500u);
  ASSERT_LT(block.size(), full.size());
  SectionView learnings = View(block, "Learnings");
  EXPECT_GT(learnings.shown, 0);
  EXPECT_EQ(learnings.shown + learnings.left_out, 12);
  EXPECT_TRUE(Contains(
      block, "- (" + std::to_string(learnings.left_out) + " older entries left out for space)"));
  EXPECT_TRUE(Contains(block, "Learning number 12 "));  // the newest is kept
  EXPECT_FALSE(Contains(block, "Learning number 1 "));  // the oldest is not
  // The short section keeps its newest entries too.
  EXPECT_TRUE(Contains(block, "Error number 3 "));
  // The same entries give the same block.
  EXPECT_EQ(memory.Render(500), block);

  // Whatever the budget: never over it, and every entry is either shown or counted.
  for (size_t budget = 0; budget <= full.size() + 10; budget += 7) {
    std::string b = memory.Render(budget);
    ASSERT_LE(b.size(), budget);
    if (b.empty()) continue;
    SectionView l = View(b, "Learnings"), e = View(b, "Errors & Corrections");
    EXPECT_EQ(l.shown + l.left_out, 12) << b;
    EXPECT_EQ(e.shown + e.left_out, 3) << b;
  }
}

TEST(SearchMemoryTest, AnEntryIsCappedSoItCannotFillTheBlock) {
  SearchMemoryOptions options;
  options.max_entry_chars = 60;
  SearchMemory memory(options);
  std::string runaway;
  for (int i = 0; i < 1000; ++i) runaway += "é";  // two bytes each: the cut must not split one
  memory.Add(kLearnings, runaway, 1);

  std::string text = memory.Entries().at(0).text;
  EXPECT_LE(text.size(), 60u);
  ASSERT_GE(text.size(), 5u);
  EXPECT_EQ(text.substr(text.size() - 3), "...");
  EXPECT_EQ((text.size() - 3) % 2, 0u) << "a character was split: " << text;
  EXPECT_EQ(text.substr(0, 4), "éé");
  // A longer entry with the same start is the same capped entry.
  EXPECT_FALSE(memory.Add(kLearnings, runaway + " and more", 2));

  SearchMemory defaults;
  defaults.Add(kLearnings, std::string(5000, 'x'), 1);
  EXPECT_EQ(defaults.Entries().at(0).text.size(), 400u);
}

TEST(SearchMemoryTest, PersistedEntriesComeBackWhenARunResumes) {
  std::string path = FreshPath("resume");
  {
    auto memory = SearchMemory::Open(path);
    ASSERT_TRUE(memory.ok()) << memory.status().ToString();
    (*memory)->Add(kErrors, "Missing __syncthreads after the shared-memory load.", 1);
    (*memory)->Add(kFiles, "problems/gemm/problem.py holds the reference.", 1);
    (*memory)->Add(kErrors, "missing __syncthreads after the shared-memory load", 2);  // same
    (*memory)->Add(kPatterns, "Double buffering gave 1.4x.", 3);
  }
  EXPECT_EQ(Lines(path).size(), 3u);

  auto resumed = SearchMemory::Open(path);
  ASSERT_TRUE(resumed.ok()) << resumed.status().ToString();
  std::vector<MemoryEntry> entries = (*resumed)->Entries();
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_EQ(entries[0].section, kErrors);
  EXPECT_EQ(entries[0].text, "Missing __syncthreads after the shared-memory load.");
  EXPECT_EQ(entries[0].iteration, 1);
  EXPECT_EQ(entries[2].section, kPatterns);
  EXPECT_EQ(entries[2].iteration, 3);
  EXPECT_EQ((*resumed)->skipped_lines(), 0);

  // What was learnt before the resume still deduplicates; new entries are appended.
  EXPECT_FALSE((*resumed)->Add(kPatterns, "double buffering gave 1.4x", 7));
  EXPECT_TRUE((*resumed)->Add(kLearnings, "K tiles of 32 keep occupancy at 75%.", 7));
  EXPECT_EQ(Lines(path).size(), 4u);
  EXPECT_EQ((*resumed)->path(), path);
}

TEST(SearchMemoryTest, MalformedPersistedLinesAreReportedAndSkipped) {
  std::string path = FreshPath("malformed");
  WriteFile(path,
            "{\"iteration\":1,\"section\":\"learnings\",\"text\":\"first\"}\n"
            "this is not json\n"
            "{\"iteration\":2,\"section\":\"gossip\",\"text\":\"x\"}\n"
            "\n"
            "{\"iteration\":3,\"section\":\"key_files\",\"text\":\"second\"}\n"
            "{\"iteration\":4,\"section\":\"learnings\",\"te");  // a write cut off by a crash
  LogSink log;
  SearchMemoryOptions options;
  options.log = log.Callback();
  auto memory = SearchMemory::Open(path, options);
  ASSERT_TRUE(memory.ok()) << memory.status().ToString();
  EXPECT_EQ((*memory)->size(), 2u);
  EXPECT_EQ((*memory)->skipped_lines(), 3);
  EXPECT_EQ(log.Find(":2:"), path + ":2: not a JSON object; line skipped");
  EXPECT_EQ(log.Find(":3:"), path + ":3: no known \"section\"; line skipped");
  EXPECT_EQ(log.Find(":6:"), path + ":6: not a JSON object; line skipped");

  // The next entry starts on a line of its own, so it survives the next resume.
  EXPECT_TRUE((*memory)->Add(kLearnings, "third", 5));
  memory->reset();  // closes the file, as the end of the run would
  auto again = SearchMemory::Open(path);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ((*again)->size(), 3u);
  EXPECT_EQ((*again)->skipped_lines(), 3);
  EXPECT_EQ((*again)->Entries().back().text, "third");
}

TEST(SearchMemoryTest, OpeningWhereNoFileCanBeCreatedIsAnError) {
  auto memory = SearchMemory::Open(::testing::TempDir() + "/no/such/dir/memory.jsonl");
  ASSERT_FALSE(memory.ok());
  EXPECT_EQ(memory.status().code(), Status::Code::kIoError);
  EXPECT_TRUE(Contains(memory.status().message(), "no/such/dir/memory.jsonl"));
}

TEST(SearchMemoryTest, ConcurrentAddsLoseAndDuplicateNothing) {
  std::string path = FreshPath("threads");
  auto memory = SearchMemory::Open(path);
  ASSERT_TRUE(memory.ok());
  constexpr int kThreads = 8, kEach = 100;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        (*memory)->Add(kLearnings, "thread " + std::to_string(t) + " note " + std::to_string(i), i);
        (*memory)->Add(kErrors, "shared note " + std::to_string(i), i);  // every thread adds it
        if (i % 10 == 0) (*memory)->Render(2000);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ((*memory)->size(), static_cast<size_t>(kThreads * kEach + kEach));
  std::vector<std::string> lines = Lines(path);
  ASSERT_EQ(lines.size(), static_cast<size_t>(kThreads * kEach + kEach));
  for (const std::string& line : lines) {
    ASSERT_FALSE(Json::parse(line, nullptr, false).is_discarded()) << line;
  }
}

// ---------------------------------------------------------------------------------------------
// The extractor

IterationRecord Record(int iteration, std::string outcome = "correct",
                       std::optional<double> speedup = 1.5) {
  IterationRecord r;
  r.iteration = iteration;
  r.mode = "optimize";
  r.strategy = "tile the K loop through shared memory";
  r.approach = "__global__ void gemm(...) { __shared__ float a[32][32]; ... }";
  r.tool_calls = {"ncu_memory_chart(kernel=gemm)"};
  r.outcome = std::move(outcome);
  r.speedup = speedup;
  r.feedback_excerpt = "L2 hit rate 41%";
  return r;
}

llm::Response JsonReply(const Json& reply) { return TextResponse(DumpJson(reply)); }

TEST(MemoryExtractorTest, EntriesLandAfterDrainFromARequestThatDescribesTheIteration) {
  auto backend = std::make_shared<ScriptedBackend>();
  backend->Push(JsonReply({{"successful_patterns", {"Shared-memory K tiles gave 1.5x."}},
                           {"learnings", {"L2 hit rate was 41% before tiling."}},
                           {"search_findings", Json::array()}}));
  llm::Response structured = TextResponse("(answer given as structured output)");
  structured.structured = Json{{"errors_and_corrections", {"Tile 64 spilled registers."}},
                               {"successful_patterns", {"shared-memory K tiles gave 1.5x"}}};
  backend->Push(structured);
  SearchMemory memory;
  MemoryExtractor extractor(backend, memory);
  extractor.Submit(Record(1));
  extractor.Drain();
  extractor.Submit(Record(2, "incorrect: max abs error 3.2", std::nullopt));
  extractor.Drain();

  std::vector<MemoryEntry> entries = memory.Entries();
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_EQ(entries[0].section, kPatterns);
  EXPECT_EQ(entries[0].iteration, 1);
  EXPECT_EQ(entries[1].section, kLearnings);
  EXPECT_EQ(entries[2].section, kErrors);
  EXPECT_EQ(entries[2].iteration, 2);
  ExtractorStats stats = extractor.stats();
  EXPECT_EQ(stats.submitted, 2);
  EXPECT_EQ(stats.extracted, 2);
  EXPECT_EQ(stats.ignored, 0);
  EXPECT_EQ(stats.entries_added, 3);  // the repeated pattern is not added twice

  std::vector<llm::Request> requests = backend->Requests();
  ASSERT_EQ(requests.size(), 2u);
  const llm::Request& first = requests[0];
  ASSERT_TRUE(first.response_schema.has_value());
  EXPECT_EQ(first.response_schema->schema, MemoryExtractionSchema());
  for (const char* key : {"search_findings", "errors_and_corrections", "successful_patterns",
                          "key_files", "learnings"}) {
    EXPECT_TRUE(first.response_schema->schema["properties"].contains(key)) << key;
  }
  EXPECT_TRUE(Contains(first.system, "errors_and_corrections"));
  ASSERT_EQ(first.messages.size(), 1u);
  const std::string& user = first.messages[0].text;
  EXPECT_TRUE(Contains(user, "Iteration 1 (optimize)"));
  EXPECT_TRUE(Contains(user, "tile the K loop through shared memory"));
  EXPECT_TRUE(Contains(user, "ncu_memory_chart(kernel=gemm)"));
  EXPECT_TRUE(Contains(user, "Speedup: 1.50x"));
  EXPECT_TRUE(Contains(user, "L2 hit rate 41%"));
  EXPECT_FALSE(Contains(user, "Already in the search memory"));
  // The second call is shown what the memory holds, so it need not repeat it.
  const std::string& second = requests[1].messages[0].text;
  EXPECT_TRUE(Contains(second, "Already in the search memory"));
  EXPECT_TRUE(Contains(second, "Shared-memory K tiles gave 1.5x."));
  EXPECT_TRUE(Contains(second, "incorrect: max abs error 3.2"));
  EXPECT_TRUE(Contains(second, "Speedup: not measured"));
}

TEST(MemoryExtractorTest, ALongRecordIsCappedInThePrompt) {
  auto backend = std::make_shared<ScriptedBackend>();
  backend->Push(JsonReply(Json::object()));
  SearchMemory memory;
  MemoryExtractorOptions options;
  options.max_approach_chars = 1000;
  MemoryExtractor extractor(backend, memory, options);
  IterationRecord record = Record(1);
  record.approach = std::string(50000, 'c');
  extractor.Submit(record);
  extractor.Drain();
  const std::string user = backend->Requests().at(0).messages.at(0).text;
  EXPECT_LT(user.size(), 5000u);
  EXPECT_TRUE(Contains(user, "[... 49000 more bytes not shown]"));
  EXPECT_EQ(extractor.stats().extracted, 1);  // an empty object is a valid "nothing learnt"
}

TEST(MemoryExtractorTest, EveryChildOfTheIterationIsShownFailedOnesWithTheirErrors) {
  // Paper §3.4: dead ends are remembered too. A failed child's code and error reach the model
  // beside the best child's profile, each within its share of the budget.
  auto backend = std::make_shared<ScriptedBackend>();
  backend->Push(JsonReply({{"errors_and_corrections", {"__hmul2 needs cuda_fp16.h."}}}));
  SearchMemory memory;
  MemoryExtractorOptions options;
  options.max_approach_chars = 2000;
  MemoryExtractor extractor(backend, memory, options);
  IterationRecord record = Record(4);
  record.children = {
      {"n7", "half2 arithmetic", "__global__ void k() { __hmul2(a, b); }", "compile_error",
       std::nullopt, "kernel.cu(14): error: identifier \"__hmul2\" is undefined"},
      {"n8", "float4 loads", std::string(9000, 'x'), "correct 1.42x [1.40, 1.44] accepted", 1.42,
       "dram throughput 91% of peak"}};
  extractor.Submit(record);
  extractor.Drain();
  const std::string user = backend->Requests().at(0).messages.at(0).text;
  EXPECT_TRUE(Contains(user, "## Candidate 1 of 2 (n7): compile_error")) << user;
  EXPECT_TRUE(Contains(user, "__global__ void k() { __hmul2(a, b); }")) << user;
  EXPECT_TRUE(Contains(user, "identifier \"__hmul2\" is undefined")) << user;
  EXPECT_TRUE(Contains(user, "## Candidate 2 of 2 (n8): correct 1.42x")) << user;
  EXPECT_TRUE(Contains(user, "Speedup: 1.42x")) << user;
  EXPECT_TRUE(Contains(user, "dram throughput 91% of peak")) << user;
  EXPECT_TRUE(Contains(user, "[... 8000 more bytes not shown]")) << "each child gets its share";
  EXPECT_TRUE(Contains(backend->Requests().at(0).system, "from the failed candidates as much"));
  EXPECT_TRUE(Contains(memory.Render(2000), "__hmul2 needs cuda_fp16.h."));
  // The record survives the journal (a resumed run resubmits it) with its children.
  const IterationRecord back = IterationRecordFromJson(ToJson(record));
  ASSERT_EQ(back.children.size(), 2u);
  EXPECT_EQ(back.children[0].verdict, "compile_error");
  EXPECT_EQ(back.children[1].speedup, 1.42);
  EXPECT_EQ(back.children[1].code, record.children[1].code);
}

TEST(MemoryExtractorTest, SubmitReturnsWhileTheModelIsStillThinking) {
  auto backend = std::make_shared<ScriptedBackend>();
  Gate entered, release;
  bool release_timed_out = false;
  backend->on_call = [&](const llm::Request&) {
    entered.Open();
    if (!release.Wait()) release_timed_out = true;
  };
  for (int i = 1; i <= 3; ++i) {
    backend->Push(JsonReply({{"learnings", {"note from iteration " + std::to_string(i)}}}));
  }
  SearchMemory memory;
  MemoryExtractor extractor(backend, memory);
  // The backend cannot answer until this thread opens `release`, so each Submit returning here
  // proves it did not wait for the call.
  extractor.Submit(Record(1));
  ASSERT_TRUE(entered.Wait());
  extractor.Submit(Record(2));
  extractor.Submit(Record(3));
  EXPECT_FALSE(extractor.WaitIdle(50ms));
  EXPECT_EQ(backend->calls(), 1);  // at most one call in flight
  EXPECT_TRUE(memory.empty());
  EXPECT_EQ(extractor.stats().submitted, 3);

  release.Open();
  extractor.Drain();
  EXPECT_FALSE(release_timed_out);
  EXPECT_EQ(memory.size(), 3u);
  EXPECT_EQ(backend->calls(), 3);
  EXPECT_EQ(extractor.stats().extracted, 3);
}

TEST(MemoryExtractorTest, BadRepliesAndBackendErrorsAreIgnoredAndLoggedAndLaterRecordsExtract) {
  auto backend = std::make_shared<ScriptedBackend>();
  backend->Push(TextResponse("I think the kernel was pretty good overall!"));
  backend->Push(JsonReply({{"learnings", "a string where a list belongs"}}));
  backend->Push(JsonReply({{"learnings", {42}}}));
  backend->Push(JsonReply({{"learnings", {"fine"}}, {"musings", {"not a section"}}}));
  backend->Push(JsonReply({{"learnings", {""}}}));
  backend->Push(JsonReply({{"learnings", {std::string(5000, 'z')}}}));
  backend->Push(llm::MakeError(llm::ErrorKind::kRateLimited, "slow down", 429));
  backend->Push(JsonReply({{"errors_and_corrections", {"Forgot the bounds check on the tail."}}}));
  LogSink log;
  MemoryExtractorOptions options;
  options.log = log.Callback();
  SearchMemory memory;
  MemoryExtractor extractor(backend, memory, options);
  for (int i = 1; i <= 8; ++i) {
    extractor.Submit(Record(i));
    extractor.Drain();  // one at a time, so no record is pushed out of the queue
  }

  ASSERT_EQ(memory.size(), 1u);
  EXPECT_EQ(memory.Entries()[0].text, "Forgot the bounds check on the tail.");
  EXPECT_EQ(memory.Entries()[0].iteration, 8);
  ExtractorStats stats = extractor.stats();
  EXPECT_EQ(stats.submitted, 8);
  EXPECT_EQ(stats.ignored, 7);
  EXPECT_EQ(stats.extracted, 1);
  EXPECT_EQ(stats.dropped, 0);
  EXPECT_EQ(stats.entries_added, 1);

  EXPECT_TRUE(Contains(log.Find("iteration 1:"), "reply ignored: the reply holds no JSON"));
  EXPECT_TRUE(Contains(log.Find("iteration 2:"), "\"learnings\" is not a list"));
  EXPECT_TRUE(Contains(log.Find("iteration 3:"), "\"learnings\" holds a non-string: 42"));
  EXPECT_TRUE(Contains(log.Find("iteration 4:"), "unknown key \"musings\""));
  EXPECT_TRUE(Contains(log.Find("iteration 5:"), "\"learnings\" holds an empty string"));
  EXPECT_TRUE(Contains(log.Find("iteration 6:"), "a string of 5000 bytes"));
  EXPECT_TRUE(Contains(log.Find("iteration 7:"), "extraction failed"));
  EXPECT_TRUE(Contains(log.Find("iteration 7:"), "slow down"));
  EXPECT_EQ(log.Find("iteration 8:"), "");
  EXPECT_EQ(log.Lines().size(), 7u);
}

TEST(MemoryExtractorTest, AFullQueueDropsTheOldestWaitingRecord) {
  auto backend = std::make_shared<ScriptedBackend>();
  Gate entered, release;
  backend->on_call = [&](const llm::Request&) {
    entered.Open();
    release.Wait();
  };
  for (int i = 0; i < 3; ++i) backend->Push(JsonReply(Json::object()));
  LogSink log;
  MemoryExtractorOptions options;
  options.max_queue = 2;
  options.log = log.Callback();
  SearchMemory memory;
  MemoryExtractor extractor(backend, memory, options);
  extractor.Submit(Record(1));
  ASSERT_TRUE(entered.Wait());  // record 1 is in flight; the queue holds what follows
  extractor.Submit(Record(2));
  extractor.Submit(Record(3));
  extractor.Submit(Record(4));  // the queue is full: record 2 goes
  EXPECT_EQ(extractor.stats().dropped, 1);
  release.Open();
  extractor.Drain();

  std::vector<llm::Request> requests = backend->Requests();
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_TRUE(Contains(requests[0].messages[0].text, "Iteration 1 ("));
  EXPECT_TRUE(Contains(requests[1].messages[0].text, "Iteration 3 ("));
  EXPECT_TRUE(Contains(requests[2].messages[0].text, "Iteration 4 ("));
  ExtractorStats stats = extractor.stats();
  EXPECT_EQ(stats.submitted, 4);
  EXPECT_EQ(stats.extracted, 3);
  EXPECT_EQ(stats.dropped, 1);
  EXPECT_TRUE(Contains(log.Find("dropped"), "iteration 2 dropped without extraction"));
}

TEST(MemoryExtractorTest, DestructorFinishesQueuedRecordsByDefault) {
  auto backend = std::make_shared<ScriptedBackend>();
  for (int i = 1; i <= 3; ++i) {
    backend->Push(JsonReply({{"learnings", {"lesson " + std::to_string(i)}}}));
  }
  SearchMemory memory;
  {
    MemoryExtractor extractor(backend, memory);
    for (int i = 1; i <= 3; ++i) extractor.Submit(Record(i));
  }
  EXPECT_EQ(memory.size(), 3u);
}

// Waits until the extractor's worker has let go of the backend, i.e. has ended.
bool WorkerGone(const std::shared_ptr<ScriptedBackend>& backend) {
  for (int i = 0; i < 3000 && backend.use_count() > 1; ++i) std::this_thread::sleep_for(10ms);
  return backend.use_count() == 1;
}

TEST(MemoryExtractorTest, DestructorDoesNotWaitForAHungCallAndItsLateReplyIsDiscarded) {
  for (ExtractorShutdown policy : {ExtractorShutdown::kAbandon, ExtractorShutdown::kFinish}) {
    auto backend = std::make_shared<ScriptedBackend>();
    auto entered = std::make_shared<Gate>(), release = std::make_shared<Gate>();
    auto waited_out = std::make_shared<std::atomic<bool>>(false);
    backend->on_call = [entered, release, waited_out](const llm::Request&) {
      entered->Open();
      if (!release->Wait()) *waited_out = true;  // the destructor waited for the call after all
    };
    backend->Push(JsonReply({{"learnings", {"late lesson"}}}));
    LogSink log;
    MemoryExtractorOptions options;
    options.on_shutdown = policy;
    options.shutdown_timeout = 100ms;
    options.log = log.Callback();
    SearchMemory memory;
    {
      MemoryExtractor extractor(backend, memory, options);
      extractor.Submit(Record(1));
      extractor.Submit(Record(2));
      ASSERT_TRUE(entered->Wait());
    }  // returns although the call is still blocked
    release->Open();
    ASSERT_TRUE(WorkerGone(backend));
    EXPECT_FALSE(*waited_out);
    EXPECT_TRUE(memory.empty());
    EXPECT_EQ(backend->calls(), 1);  // the queued record was never sent
    EXPECT_TRUE(log.Lines().empty());
  }
}

TEST(MemoryExtractorTest, ReplaysARecordedRunIncludingAGarbageAnswer) {
  auto replay = llm::MakeReplayBackend(
      std::string(KERNELPRO_SOURCE_DIR) + "/tests/fixtures/cassettes/memory_extraction.jsonl",
      llm::ReplayMode::kSequential);
  ASSERT_TRUE(replay.ok()) << replay.status().ToString();
  std::shared_ptr<llm::Backend> backend = std::move(*replay);
  LogSink log;
  MemoryExtractorOptions options;
  options.log = log.Callback();
  SearchMemory memory;
  MemoryExtractor extractor(backend, memory, options);

  IterationRecord first;
  first.iteration = 1;
  first.mode = "initial";
  first.strategy = "one thread per output element, naive GEMM";
  first.outcome = "compile_error: identifier \"__hmul2\" is undefined";
  first.feedback_excerpt = "kernel.cu(14): error: identifier \"__hmul2\" is undefined";
  IterationRecord second = first;
  second.iteration = 2;
  second.mode = "debug";
  second.outcome = "incorrect: max abs error 0.31 at index 4095";
  IterationRecord third = first;
  third.iteration = 3;
  third.mode = "optimize";
  third.strategy = "32x32 shared-memory tiles with float4 loads";
  third.outcome = "correct";
  third.speedup = 2.1;
  for (const IterationRecord& r : {first, second, third}) extractor.Submit(r);
  extractor.Drain();

  ExtractorStats stats = extractor.stats();
  EXPECT_EQ(stats.extracted, 2);
  EXPECT_EQ(stats.ignored, 1);
  EXPECT_TRUE(Contains(log.Find("iteration 2:"), "the reply holds no JSON"));
  std::string block = memory.Render(4000);
  EXPECT_TRUE(Contains(block, "[iteration 1] __hmul2 needs cuda_fp16.h"));
  EXPECT_TRUE(Contains(block, "[iteration 3] 32x32 shared-memory tiles with float4 loads"));
  EXPECT_FALSE(Contains(block, "[iteration 2]"));
}

}  // namespace agents_search_memory_test
}  // namespace kernelpro::agents
