// The CUTLASS kit (agents/cutlass_tools.h) as the orchestrator's generate step uses it, kept out of
// the algorithm's file: the prompt's constraints section, the programmer's code-search tools with
// the iteration's fresh budgets, the pre-build validator, and a backend that refuses tool calls
// (the rest of the run then asks without them, and says so once).
//
// Everything here applies only with RunConfig::cutlass_dir and a kit; without either the
// programmer gets no tools, no validator and no constraints (the prompt's CUTLASS section still
// follows cutlass_dir alone, agents/prompt_builder.h).
//
// Thread-safety: one orchestrator thread.
#pragma once

#include <optional>
#include <string>

#include "agents/cutlass_tools.h"
#include "agents/gpu_target.h"
#include "agents/programmer.h"
#include "search/run_config.h"

namespace kernelpro::search {

class ProgrammerCutlass {
 public:
  // `kit` may be null; it must outlive this object.
  explicit ProgrammerCutlass(const agents::CutlassKit* kit) : kit_(kit) {}

  // The constraints section of the prompt ("" when there is no kit, CUTLASS is off, or the
  // constraints do not apply to the run's GPU).
  std::string PromptConstraints(const RunConfig& config) const;

  // Gives `programmer` the iteration's tools (fresh budgets; none once a backend refused them) and
  // the validator. `tools` holds the tools the programmer borrows: it must outlive the call.
  void Equip(const RunConfig& config, agents::ProgrammerOptions& programmer,
             agents::ProgrammerTools& tools) const;

  // After a reply: the run's note when the backend refused the tools for the first time; nullopt
  // otherwise.
  std::optional<std::string> RefusalNote(const agents::ProgrammerResult& result);

 private:
  bool Active(const RunConfig& config) const {
    return kit_ != nullptr && !config.cutlass_dir.empty();
  }

  const agents::CutlassKit* kit_;
  bool refused_ = false;  // asking with tools again would only cost a request more
};

}  // namespace kernelpro::search
