#include "profile/ncu_runner.h"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <sstream>

#include "profile/ncu_catalog.h"
#include "profile/ncu_csv.h"

namespace kernelpro {
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
  if (name.rfind("_Z", 0) != 0) return name;
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> demangled(
      abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status), std::free);
  return status == 0 && demangled ? std::string(demangled.get()) : name;
}

std::string KernelBaseName(const std::string& name) {
  std::string text = DemangleKernelName(name);
  if (text.rfind("void ", 0) == 0) text = text.substr(5);
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
  std::string metrics;
  if (options.metrics.empty()) {
    metrics = NcuMetricArgument();
  } else {
    for (const std::string& m : options.metrics) metrics += (metrics.empty() ? "" : ",") + m;
  }
  std::vector<std::string> argv = {ncu_path,
                                   "--csv",
                                   "--page",
                                   "raw",
                                   "--print-units",
                                   "base",
                                   "--clock-control",
                                   options.lock_clocks ? "base" : "none",
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
    if (!in_csv && line.rfind("\"ID\",", 0) == 0) in_csv = true;
    if (in_csv || line.rfind("==", 0) == 0) kept += line + "\n";
  }
  return kept;
}

void SelectCandidateKernels(NcuView& view, const std::vector<std::string>& entry_points,
                            bool calls_libraries, std::vector<std::string>& notes) {
  if (view.kernels.empty()) return;
  // Exact (mangled) names first; reports printed with demangled names match by base name.
  std::vector<std::string> entry_bases;
  for (const std::string& e : entry_points) entry_bases.push_back(KernelBaseName(e));
  auto is_own = [&](const NcuKernel& k) {
    return std::find(entry_points.begin(), entry_points.end(), k.name) != entry_points.end() ||
           std::find(entry_bases.begin(), entry_bases.end(), KernelBaseName(k.name)) !=
               entry_bases.end();
  };
  std::vector<bool> keep(view.kernels.size(), false);
  std::size_t own = 0;
  for (std::size_t i = 0; i < view.kernels.size(); ++i) {
    keep[i] = is_own(view.kernels[i]);
    own += keep[i];
  }
  std::size_t longest = 0;
  if (own == 0 || calls_libraries) {
    std::vector<std::size_t> order(view.kernels.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return view.kernels[a].duration_ns() > view.kernels[b].duration_ns();
    });
    double total = 0, kept_time = 0;
    for (const NcuKernel& k : view.kernels) total += k.duration_ns();
    for (std::size_t i : order) {
      if (longest >= 8 || (total > 0 && kept_time >= 0.95 * total)) break;
      kept_time += view.kernels[i].duration_ns();
      if (!keep[i]) {
        keep[i] = true;
        ++longest;
      }
    }
  }
  std::size_t profiled = view.kernels.size();
  std::vector<NcuKernel> kept;
  for (std::size_t i = 0; i < profiled; ++i) {
    if (keep[i]) kept.push_back(std::move(view.kernels[i]));
  }
  view.kernels = std::move(kept);  // launch order preserved
  if (own == 0) {
    notes.push_back(
        "ncu: none of the candidate's own entry kernels ran (a library call?); kept the " +
        std::to_string(longest) + " longest of " + std::to_string(profiled) + " kernels");
  } else if (longest > 0) {
    notes.push_back("ncu: kept the candidate's " + std::to_string(own) +
                    " own kernel launch(es) and the " + std::to_string(longest) +
                    " longest other(s) of " + std::to_string(profiled) +
                    " profiled (it calls a library)");
  } else if (own != profiled) {
    notes.push_back("ncu: kept the candidate's " + std::to_string(own) +
                    " own kernel launch(es) of " + std::to_string(profiled) + " profiled");
  }
  view.aggregate = AggregateKernels(view.kernels);
}

}  // namespace kernelpro
