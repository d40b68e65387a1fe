#include "profile/derived_metrics.h"

#include <cmath>
#include <functional>
#include <optional>
#include <set>

namespace kernelpro::profile {
namespace {

struct Derivation {
  const char* name;
  const char* unit;
  const char* formula;  // for the note
  std::vector<const char*> inputs;
  std::function<std::optional<double>(const std::vector<double>&)> compute;
};

std::optional<double> Ratio(const std::vector<double>& v) {
  if (v[1] <= 0) return std::nullopt;
  return v[0] / v[1];
}

const std::vector<Derivation>& Derivations() {
  static const std::vector<Derivation> kDerivations = {
      {"l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_ld.ratio",
       "",
       "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum / "
       "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
       {"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
        "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"},
       Ratio},
      {"l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_st.ratio",
       "",
       "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum / "
       "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
       {"l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
        "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"},
       Ratio},
      {"smsp__thread_inst_executed_per_inst_executed.ratio",
       "",
       "smsp__thread_inst_executed.sum / smsp__inst_executed.sum",
       {"smsp__thread_inst_executed.sum", "smsp__inst_executed.sum"},
       Ratio},
  };
  return kDerivations;
}

}  // namespace

std::vector<std::string> DeriveMissingMetrics(NcuKernel& kernel) {
  std::vector<std::string> added;
  for (const Derivation& d : Derivations()) {
    if (kernel.values.contains(d.name)) continue;
    std::vector<double> inputs;
    for (const char* input : d.inputs) {
      auto it = kernel.values.find(input);
      if (it == kernel.values.end() || !std::isfinite(it->second)) break;
      inputs.push_back(it->second);
    }
    if (inputs.size() != d.inputs.size()) continue;
    std::optional<double> value = d.compute(inputs);
    if (!value || !std::isfinite(*value)) continue;
    kernel.values[d.name] = *value;
    kernel.units[d.name] = d.unit;
    added.push_back(d.name);
  }
  return added;
}

void DeriveMissingMetrics(NcuView& view) {
  std::set<std::string> derived;
  for (NcuKernel& kernel : view.kernels) {
    for (std::string& name : DeriveMissingMetrics(kernel)) derived.insert(std::move(name));
  }
  for (std::string& name : DeriveMissingMetrics(view.aggregate)) derived.insert(std::move(name));
  for (const Derivation& d : Derivations()) {
    if (derived.contains(d.name)) {
      view.notes.push_back(std::string("derived ") + d.name + " = " + d.formula +
                           ": ncu did not report it");
    }
  }
}

}  // namespace kernelpro::profile
