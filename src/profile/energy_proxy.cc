#include "profile/energy_proxy.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "core/text.h"
#include "profile/derived_metrics.h"
#include "profile/ncu_runner.h"

namespace kernelpro::profile {
namespace {

std::string Number(double value) { return FormatSignificant(value, 4); }

// "1.234e+06 pJ (1.23 µJ)": pJ as asked, with a unit a person reads at a glance.
std::string Energy(double pj) {
  std::string text = Number(pj) + " pJ";
  if (pj >= 1e6) {
    text += " (" + Number(pj * 1e-6) + " µJ)";
  } else if (pj >= 1e3) {
    text += " (" + Number(pj * 1e-3) + " nJ)";
  }
  return text;
}

// r0 of one kernel and where it came from.
struct Baseline {
  double sectors = kCoalescedSectorsPerRequest;
  std::string source;
};

// The same kernel, named mangled (SASS) or as ncu printed it (mangled or demangled).
bool SameKernel(const std::string& a, const std::string& b) {
  if (a == b) return true;
  const std::string base = KernelBaseName(a);
  return !base.empty() && base == KernelBaseName(b);
}

// The widest global load of the SASS kernel named `name`, in sectors per coalesced warp request
// (LDG.128: 16); nullopt when the SASS has no such kernel or it loads nothing from global memory.
std::optional<double> WidestLoadSectors(const SassView* sass, const std::string& name) {
  if (sass == nullptr) return std::nullopt;
  for (const SassKernel& k : sass->kernels) {
    if (!SameKernel(k.name, name)) continue;
    double widest = 0;
    for (const auto& [category, count] : k.categories) {
      if (count <= 0 || !category.starts_with("global_load_")) continue;
      const std::string width = category.substr(std::string("global_load_").size());
      // 32 threads x bits / 8 bytes / 32 bytes per sector; narrow loads keep Eq. 4's 4.
      const double sectors =
          width == "narrow" ? kCoalescedSectorsPerRequest : std::strtod(width.c_str(), nullptr) / 8;
      widest = std::max(widest, sectors);
    }
    if (widest > 0) return widest;
  }
  return std::nullopt;
}

Baseline KernelBaseline(const NcuKernel& k, const EnergyProxyOptions& options,
                        const SassView* sass) {
  if (options.baseline == CoalescedBaseline::kPaper)
    return {kCoalescedSectorsPerRequest, "Eq. 4's 4 sectors"};
  auto asked = k.values.find(kGlobalLoadBytesAsked);
  auto requests = k.values.find(kGlobalLoadRequests);
  if (asked != k.values.end() && requests != k.values.end() && requests->second > 0 &&
      asked->second > 0 && std::isfinite(asked->second)) {
    const double r0 = std::max(1.0, asked->second / 32 / requests->second);
    return {r0, "requested bytes (ncu): " + Number(r0)};
  }
  if (auto widest = WidestLoadSectors(sass, k.name)) {
    return {*widest, "widest SASS load: " + Number(*widest)};
  }
  return {kCoalescedSectorsPerRequest, "4 (no access width known)"};
}

}  // namespace

const char* CoalescedBaselineName(CoalescedBaseline baseline) {
  return baseline == CoalescedBaseline::kPaper ? "paper" : "access-width";
}

std::optional<CoalescedBaseline> ParseCoalescedBaseline(const std::string& name) {
  if (name == "paper") return CoalescedBaseline::kPaper;
  if (name == "access-width") return CoalescedBaseline::kAccessWidth;
  return std::nullopt;
}

EnergyProxyOptions EnergyProxyOptionsNamed(const std::string& name) {
  EnergyProxyOptions options;
  options.baseline = ParseCoalescedBaseline(name).value_or(CoalescedBaseline::kAccessWidth);
  return options;
}

const std::vector<std::string>& EnergyProxyCounters() {
  static const std::vector<std::string> kCounters = {
      kDramBytesRead,    kDramBytesWrite,    kGlobalLoadSectors,   kGlobalLoadSectorsPerRequest,
      kLocalLoadSectors, kLocalStoreSectors, kInstructionsExecuted};
  return kCounters;
}

EnergyProxyEstimate ComputeEnergyProxy(const NcuView& ncu, const EnergyProxyOptions& options,
                                       const SassView* sass) {
  EnergyProxyEstimate estimate;
  if (ncu.kernels.empty()) {
    estimate.missing = EnergyProxyCounters();
    return estimate;
  }
  for (const std::string& counter : EnergyProxyCounters()) {
    for (const NcuKernel& kernel : ncu.kernels) {
      auto it = kernel.values.find(counter);
      if (it == kernel.values.end() || !std::isfinite(it->second)) {
        estimate.missing.push_back(counter);
        break;
      }
    }
  }
  if (!estimate.missing.empty()) return estimate;

  EnergyProxy proxy;
  EnergyProxyInputs& in = proxy.inputs;
  for (const NcuKernel& k : ncu.kernels) {
    const auto value = [&](const char* counter) { return k.values.at(counter); };
    in.dram_bytes += value(kDramBytesRead) + value(kDramBytesWrite);
    const double sectors = value(kGlobalLoadSectors);
    in.global_load_sectors += sectors;
    // Per kernel: a coalesced kernel and a scattered one must not average each other out.
    const Baseline baseline = KernelBaseline(k, options, sass);
    in.excess_load_sectors +=
        sectors * std::max(0.0, value(kGlobalLoadSectorsPerRequest) / baseline.sectors - 1);
    if (in.baseline.find(baseline.source) == std::string::npos) {
      in.baseline += (in.baseline.empty() ? "" : "; ") + baseline.source;
    }
    in.local_sectors += value(kLocalLoadSectors) + value(kLocalStoreSectors);
    in.instructions += value(kInstructionsExecuted);
    ++proxy.kernels;
  }
  proxy.terms.dram_pj = kDramPjPerByte * in.dram_bytes;
  proxy.terms.uncoalesced_pj = kUncoalescedPjPerSector * in.excess_load_sectors;
  proxy.terms.spills_pj = kLocalPjPerSector * in.local_sectors;
  proxy.terms.instructions_pj = kPjPerInstruction * in.instructions;
  proxy.total_pj = proxy.terms.dram_pj + proxy.terms.uncoalesced_pj + proxy.terms.spills_pj +
                   proxy.terms.instructions_pj;
  estimate.proxy = proxy;
  return estimate;
}

EnergyProxyEstimate ComputeEnergyProxy(const Metrics& metrics, const EnergyProxyOptions& options) {
  if (!metrics.ncu) {
    EnergyProxyEstimate estimate;
    estimate.missing = EnergyProxyCounters();
    return estimate;
  }
  return ComputeEnergyProxy(*metrics.ncu, options, metrics.sass ? &*metrics.sass : nullptr);
}

EnergyProxyEstimate ComputeEnergyProxyFromJson(const Json& metrics,
                                               const EnergyProxyOptions& options) {
  // The SASS kernels' load categories, for r0 (the rest of the SASS view is not needed).
  SassView sass;
  const Json sass_json = JsonGet<Json>(metrics, "sass", Json());
  if (sass_json.is_object()) {
    for (const Json& k : JsonGet<Json>(sass_json, "kernels", Json::array())) {
      SassKernel kernel;
      kernel.name = JsonGet<std::string>(k, "name", "");
      const Json categories = JsonGet<Json>(k, "categories", Json::object());
      if (!categories.is_object()) continue;
      for (const auto& [name, count] : categories.items()) {
        if (count.is_number_integer()) kernel.categories[name] = count.get<std::int64_t>();
      }
      sass.kernels.push_back(std::move(kernel));
    }
  }
  NcuView ncu;
  const Json view = JsonGet<Json>(metrics, "ncu", Json());
  if (view.is_object()) {
    for (const Json& k : JsonGet<Json>(view, "kernels", Json::array())) {
      NcuKernel kernel;
      kernel.name = JsonGet<std::string>(k, "name", "");
      const Json values = JsonGet<Json>(k, "values", Json::object());
      if (!values.is_object()) continue;
      for (const auto& [name, value] : values.items()) {
        if (value.is_number()) kernel.values[name] = value.get<double>();
      }
      DeriveMissingMetrics(kernel);  // a profile recorded before the derivations
      ncu.kernels.push_back(std::move(kernel));
    }
  }
  return ComputeEnergyProxy(ncu, options, &sass);
}

std::optional<double> EnergyReduction(double reference_pj, double candidate_pj) {
  if (!std::isfinite(reference_pj) || !std::isfinite(candidate_pj) || reference_pj <= 0 ||
      candidate_pj <= 0) {
    return std::nullopt;
  }
  return reference_pj / candidate_pj;
}

Json EnergyProxyJson(const EnergyProxyEstimate& estimate) {
  if (!estimate.proxy) return Json();
  const EnergyProxyTerms& t = estimate.proxy->terms;
  return Json{{"total_pj", estimate.proxy->total_pj},
              {"terms",
               {{"dram", t.dram_pj},
                {"uncoalesced", t.uncoalesced_pj},
                {"spills", t.spills_pj},
                {"instructions", t.instructions_pj}}},
              {"coalesced_baseline", estimate.proxy->inputs.baseline}};
}

std::string RenderEnergyProxy(const EnergyProxyEstimate& estimate) {
  if (!estimate.proxy) {
    std::string text = "Energy proxy: none (ncu did not report ";
    for (std::size_t i = 0; i < estimate.missing.size(); ++i) {
      text += (i ? ", " : "") + estimate.missing[i];
    }
    return text + ")\n";
  }
  const EnergyProxy& p = *estimate.proxy;
  const EnergyProxyInputs& in = p.inputs;
  std::string text = "Energy proxy (paper Eq. 4, from ncu counters, " + std::to_string(p.kernels) +
                     (p.kernels == 1 ? " kernel" : " kernels") + "): " + Energy(p.total_pj) + "\n";
  text += "  dram          " + Energy(p.terms.dram_pj) + " = 20 pJ/B x " + Number(in.dram_bytes) +
          " B [" + kDramBytesRead + " + " + kDramBytesWrite + "]\n";
  text += "  uncoalesced   " + Energy(p.terms.uncoalesced_pj) + " = 100 pJ x " +
          Number(in.excess_load_sectors) + " excess of " + Number(in.global_load_sectors) +
          " load sectors [" + kGlobalLoadSectors + " x max(0, " + kGlobalLoadSectorsPerRequest +
          " / r0 - 1); r0, sectors of a coalesced request: " + in.baseline + "]\n";
  text += "  spills        " + Energy(p.terms.spills_pj) + " = 80 pJ x " +
          Number(in.local_sectors) + " sectors [" + kLocalLoadSectors + " + " + kLocalStoreSectors +
          "]\n";
  text += "  instructions  " + Energy(p.terms.instructions_pj) + " = 3 pJ x " +
          Number(in.instructions) + " warp instructions [" + kInstructionsExecuted + "]\n";
  return text;
}

}  // namespace kernelpro::profile
