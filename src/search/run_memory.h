// The search memory of a run (agents/search_memory.h) as the orchestrator keeps it, out of the
// algorithm's file: RUN_DIR/memory.jsonl (store/run_layout.h; loaded on resume, appended line by
// line) and the extractor that learns from each recorded iteration in the background.
//
// Each extraction's LLM call is tagged with the iteration it learns from (journal step "memory",
// search/exchange_sink.h). On resume, every recorded iteration whose extraction has no reply in the
// store is submitted again, from the payload of its "record" step.
//
// Thread-safety: one orchestrator thread calls it; the extractor runs its calls on its own thread.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "agents/search_memory.h"
#include "core/json_io.h"
#include "core/status.h"
#include "llm/backend.h"
#include "search/journal.h"

namespace kernelpro::search {

class RunMemory {
 public:
  // Opens the memory file `path` and starts the extractor on `backend`; iterations 1..`recorded`
  // (those the run recorded) are checked for a missing extraction. `journal` must outlive the call
  // only; `log` takes notes that do not stop the run.
  static Result<std::unique_ptr<RunMemory>> Start(
      const std::string& path, std::shared_ptr<llm::Backend> backend, Journal& journal,
      int recorded, const std::function<void(const std::string&)>& log);

  // What the prompts read and the programmer's tool calls add to.
  agents::SearchMemory& memory() { return *memory_; }
  // Queues an iteration's record (its "record" step's "memory_record"); anything but an object (an
  // iteration that taught nothing) is ignored.
  void Submit(const Json& record);
  // Waits until every submitted record has been extracted, ignored or dropped.
  void Drain() { extractor_->Drain(); }

 private:
  RunMemory() = default;
  std::unique_ptr<agents::SearchMemory> memory_;
  std::unique_ptr<agents::MemoryExtractor> extractor_;  // uses memory_: declared after it
};

}  // namespace kernelpro::search
