#include "search/run_memory.h"

#include <algorithm>
#include <utility>

#include "search/exchange_sink.h"

namespace kernelpro::search {

Result<std::unique_ptr<RunMemory>> RunMemory::Start(
    const std::string& path, std::shared_ptr<llm::Backend> backend, Journal& journal, int recorded,
    const std::function<void(const std::string&)>& log) {
  agents::SearchMemoryOptions memory_options;
  memory_options.log = log;
  auto memory = agents::SearchMemory::Open(path, memory_options);
  if (!memory.ok()) return memory.status();
  std::unique_ptr<RunMemory> run(new RunMemory());
  run->memory_ = std::move(*memory);
  agents::MemoryExtractorOptions extractor_options;
  extractor_options.log = log;
  extractor_options.max_queue = 16;
  // Each extraction is tagged with the iteration it learns from (its journal step "memory").
  extractor_options.around_call = [](const agents::IterationRecord& record,
                                     const std::function<llm::Outcome()>& call) {
    ScopedExchangeTag tag(ExchangeTag{"memory", record.iteration, "memory"});
    return call();
  };
  run->extractor_ = std::make_unique<agents::MemoryExtractor>(std::move(backend), *run->memory_,
                                                              extractor_options);
  // Iterations recorded by an earlier process whose extraction never came back.
  for (int it = 1; it <= recorded; ++it) {
    auto exchanges = journal.store().ListLlmExchangesForStep(journal.Key(it, "memory"));
    if (!exchanges.ok()) return exchanges.status();
    if (std::any_of(exchanges->begin(), exchanges->end(),
                    [](const auto& e) { return e.response.has_value(); })) {
      continue;
    }
    auto payload = journal.Done(journal.Key(it, "record"));
    if (!payload.ok()) return payload.status();
    if (*payload) run->Submit(JsonGet<Json>(**payload, "memory_record", Json()));
  }
  return run;
}

void RunMemory::Submit(const Json& record) {
  if (record.is_object()) extractor_->Submit(agents::IterationRecordFromJson(record));
}

}  // namespace kernelpro::search
