#include "profile/ncu_runner.h"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <sstream>

#include "core/text.h"
#include "profile/ncu_catalog.h"
#include "profile/ncu_csv.h"

namespace kernelpro::profile {
namespace {

std::string RegexEscape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (std::string_view("\\^$.|?*+()[]{}").find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

std::string DemangleKernelName(const std::string& name) {
  if (!name.starts_with("_Z")) return name;
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> demangled(
      abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status), std::free);
  return status == 0 && demangled ? std::string(demangled.get()) : name;
}

std::string KernelBaseName(const std::string& name) {
  std::string text = DemangleKernelName(name);
  if (text.starts_with("void ")) text = text.substr(5);
  // Cut the parameter list: the first '(' outside template brackets.
  int depth = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '<') ++depth;
    if (text[i] == '>') --depth;
    if (text[i] == '(' && depth == 0) {
      text = text.substr(0, i);
      break;
    }
  }
  if (std::size_t lt = text.find('<'); lt != std::string::npos) text = text.substr(0, lt);
  if (std::size_t colon = text.rfind("::"); colon != std::string::npos)
    text = text.substr(colon + 2);
  return text;
}

std::vector<std::string> NcuArgv(const std::string& ncu_path, const NcuOptions& options,
                                 const std::vector<std::string>& kernel_names) {
  const std::string metrics =
      options.metrics.empty() ? NcuMetricArgument() : Join(options.metrics, ",");
  // "--cache-control all" is ncu's default, spelled out: every kernel replay starts with L1/L2
  // flushed, so dram__bytes_read counts each input from DRAM (tools/work_check.h relies on it).
  std::vector<std::string> argv = {ncu_path,
                                   "--csv",
                                   "--page",
                                   "raw",
                                   "--print-units",
                                   "base",
                                   "--clock-control",
                                   options.lock_clocks ? "base" : "none",
                                   "--cache-control",
                                   "all",
                                   "--nvtx",
                                   "--nvtx-include",
                                   options.nvtx_range + "/",
                                   "--disable-extra-suffixes",
                                   "--metrics",
                                   metrics};
  if (!kernel_names.empty()) {
    std::string regex = "regex:^(";
    for (std::size_t i = 0; i < kernel_names.size(); ++i) {
      regex += (i ? "|" : "") + RegexEscape(kernel_names[i]);
    }
    regex += ")$";
    argv.insert(argv.end(), {"--kernel-name-base", "mangled", "--kernel-name", regex});
  }
  // Mangled names in the report, so kernels match the .so's entry points exactly.
  argv.insert(argv.end(), {"--print-kernel-base", "mangled"});
  return argv;
}

std::string TrimNcuOutput(std::string_view text) {
  std::string kept;
  std::istringstream in{std::string(text)};
  bool in_csv = false;
  for (std::string line; std::getline(in, line);) {
    if (!in_csv && line.starts_with("\"ID\",")) in_csv = true;
    if (in_csv || line.starts_with("==")) kept += line + "\n";
  }
  return kept;
}

CandidateKernelMatcher::CandidateKernelMatcher(std::vector<std::string> entry_points)
    : entry_points_(std::move(entry_points)) {
  for (const std::string& e : entry_points_) entry_bases_.push_back(KernelBaseName(e));
}

bool CandidateKernelMatcher::IsOwn(const std::string& kernel_name) const {
  if (std::find(entry_points_.begin(), entry_points_.end(), kernel_name) != entry_points_.end()) {
    return true;
  }
  if (entry_bases_.empty()) return false;
  return std::find(entry_bases_.begin(), entry_bases_.end(), KernelBaseName(kernel_name)) !=
         entry_bases_.end();
}

std::vector<std::size_t> LongestOtherKernels(const std::vector<double>& durations,
                                             const std::vector<bool>& own, bool calls_libraries) {
  const bool any_own = std::find(own.begin(), own.end(), true) != own.end();
  if (any_own && !calls_libraries) return {};
  std::vector<std::size_t> order(durations.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return durations[a] > durations[b]; });
  double total = 0, kept_time = 0;
  for (double d : durations) total += d;
  std::vector<std::size_t> others;
  for (std::size_t i : order) {
    if (others.size() >= kMaxLongestOtherKernels || (total > 0 && kept_time >= 0.95 * total)) break;
    kept_time += durations[i];
    if (!own[i]) others.push_back(i);
  }
  std::sort(others.begin(), others.end());
  return others;
}

std::string KernelSelectionNote(std::size_t own, std::size_t longest, std::size_t profiled) {
  if (own == 0) {
    return "none of the candidate's own entry kernels ran (a library call?); kept the " +
           std::to_string(longest) + " longest of " + std::to_string(profiled) + " kernels";
  }
  if (longest > 0) {
    return "kept the candidate's " + std::to_string(own) + " own kernel launch(es) and the " +
           std::to_string(longest) + " longest other(s) of " + std::to_string(profiled) +
           " profiled (it calls a library)";
  }
  if (own != profiled) {
    return "kept the candidate's " + std::to_string(own) + " own kernel launch(es) of " +
           std::to_string(profiled) + " profiled";
  }
  return "";
}

void SelectCandidateKernels(NcuView& view, const std::vector<std::string>& entry_points,
                            bool calls_libraries, std::vector<std::string>& notes) {
  if (view.kernels.empty()) return;
  const CandidateKernelMatcher matcher(entry_points);
  std::vector<double> durations;
  std::vector<bool> own;
  std::size_t own_count = 0;
  for (const NcuKernel& k : view.kernels) {
    durations.push_back(k.duration_ns());
    own.push_back(matcher.IsOwn(k.name));
    own_count += own.back();
  }
  const std::vector<std::size_t> others = LongestOtherKernels(durations, own, calls_libraries);
  const std::size_t profiled = view.kernels.size();
  std::vector<NcuKernel> kept;
  for (std::size_t i = 0, next_other = 0; i < profiled; ++i) {
    const bool other = next_other < others.size() && others[next_other] == i;
    if (other) ++next_other;
    if (own[i] || other) kept.push_back(std::move(view.kernels[i]));
  }
  view.kernels = std::move(kept);  // launch order preserved
  if (std::string note = KernelSelectionNote(own_count, others.size(), profiled); !note.empty()) {
    notes.push_back("ncu: " + note);
  }
  view.aggregate = AggregateKernels(view.kernels);
}

}  // namespace kernelpro::profile
