#include "profile/energy_proxy.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace kernelpro::profile {
namespace {

std::string Number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4g", value);
  return text;
}

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

}  // namespace

const std::vector<std::string>& EnergyProxyCounters() {
  static const std::vector<std::string> kCounters = {
      kDramBytesRead,    kDramBytesWrite,    kGlobalLoadSectors,   kGlobalLoadSectorsPerRequest,
      kLocalLoadSectors, kLocalStoreSectors, kInstructionsExecuted};
  return kCounters;
}

EnergyProxyEstimate ComputeEnergyProxy(const NcuView& ncu) {
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
    in.excess_load_sectors +=
        sectors *
        std::max(0.0, value(kGlobalLoadSectorsPerRequest) / kCoalescedSectorsPerRequest - 1);
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

EnergyProxyEstimate ComputeEnergyProxy(const Metrics& metrics) {
  if (!metrics.ncu) {
    EnergyProxyEstimate estimate;
    estimate.missing = EnergyProxyCounters();
    return estimate;
  }
  return ComputeEnergyProxy(*metrics.ncu);
}

EnergyProxyEstimate ComputeEnergyProxyFromJson(const Json& metrics) {
  NcuView ncu;
  const Json view = JsonGet<Json>(metrics, "ncu", Json());
  if (view.is_object()) {
    for (const Json& k : JsonGet<Json>(view, "kernels", Json::array())) {
      NcuKernel kernel;
      const Json values = JsonGet<Json>(k, "values", Json::object());
      if (!values.is_object()) continue;
      for (const auto& [name, value] : values.items()) {
        if (value.is_number()) kernel.values[name] = value.get<double>();
      }
      ncu.kernels.push_back(std::move(kernel));
    }
  }
  return ComputeEnergyProxy(ncu);
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
                {"instructions", t.instructions_pj}}}};
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
          " / 4 - 1)]\n";
  text += "  spills        " + Energy(p.terms.spills_pj) + " = 80 pJ x " +
          Number(in.local_sectors) + " sectors [" + kLocalLoadSectors + " + " + kLocalStoreSectors +
          "]\n";
  text += "  instructions  " + Energy(p.terms.instructions_pj) + " = 3 pJ x " +
          Number(in.instructions) + " warp instructions [" + kInstructionsExecuted + "]\n";
  return text;
}

}  // namespace kernelpro::profile
