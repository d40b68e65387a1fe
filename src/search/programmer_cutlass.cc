#include "search/programmer_cutlass.h"

namespace kernelpro::search {

std::string ProgrammerCutlass::PromptConstraints(const RunConfig& config) const {
  if (!Active(config) || !agents::ConstraintsApplyTo(config.gpu)) return "";
  return kit_->constraints_markdown();
}

void ProgrammerCutlass::Equip(const RunConfig& config, agents::ProgrammerOptions& programmer,
                              agents::ProgrammerTools& tools) const {
  if (!Active(config)) return;
  tools = kit_->ForIteration();
  if (!tools.definitions.empty() && !refused_) programmer.tools = &tools;
  const agents::CutlassKit* kit = kit_;
  programmer.pre_build_check = [kit](const std::string& code) { return kit->Validate(code); };
}

std::optional<std::string> ProgrammerCutlass::RefusalNote(const agents::ProgrammerResult& result) {
  if (result.tools_refused.empty() || refused_) return std::nullopt;
  refused_ = true;
  return "CUTLASS tools: " + result.tools_refused + "; the rest of the run asks without them";
}

}  // namespace kernelpro::search
