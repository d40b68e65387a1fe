// The counter-based energy proxy (paper Eq. 4, §5.5; DESIGN §6): a deterministic estimate of one
// run's dynamic energy from ncu counters kernelpro already collects, weighted by the per-operation
// energy hierarchy (Horowitz 2014, AccelWattch):
//
//   E = 20 pJ/B · DRAM bytes read + written                         B1 dram
//     + 100 pJ  · global-load sectors · max(0, sectors/request / r0 − 1)  B2 uncoalesced
//     + 80 pJ   · local-memory sectors, loads + stores                B3 spills
//     + 3 pJ    · warp-level instructions executed                    B4 instructions
//
// r0 is the sectors a coalesced request of the kernel's loads touches. Eq. 4 as printed fixes it
// at 4, right for 4-byte loads only: a coalesced warp of 8- or 16-byte loads touches 8 or 16
// sectors, and Eq. 4 would charge a float4 kernel as uncoalesced. So by default (kAccessWidth) r0
// comes from what the loads asked for, per kernel: ncu's requested bytes
// (smsp__sass_data_bytes_mem_global_op_ld.sum / 32 / requests, exact), else the kernel's widest
// global load in its SASS (LDG.128 gives 16: an upper bound on r0, so B2 is then a lower bound),
// else 4. kPaper keeps Eq. 4's 4 for reproducing the paper. The proxy says which r0 it used.
//
// Computed per kernel and summed over the kernels ncu profiled (a reference made of several kernels
// costs the sum of its kernels; B2's ratio is per kernel, so it is never taken from a mean). The
// ratio proxy(reference) / proxy(candidate) is the energy_reduction of the energy-aware reward.
// It is a ranking device, not a measurement: NVML gives millijoules.
//
// A counter missing from any kernel gives no proxy and names the counter; nothing is defaulted.
// Pure functions; safe from any thread.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/json_io.h"
#include "profile/metrics.h"

namespace kernelpro::profile {

// The weights of Eq. 4.
inline constexpr double kDramPjPerByte = 20;
inline constexpr double kUncoalescedPjPerSector = 100;
inline constexpr double kCoalescedSectorsPerRequest = 4;  // a 32-bit warp load: 4 sectors
inline constexpr double kLocalPjPerSector = 80;
inline constexpr double kPjPerInstruction = 3;

// The counters each term reads (ncu metric names).
inline constexpr const char* kDramBytesRead = "dram__bytes_read.sum";
inline constexpr const char* kDramBytesWrite = "dram__bytes_write.sum";
inline constexpr const char* kGlobalLoadSectors = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum";
inline constexpr const char* kGlobalLoadSectorsPerRequest =
    "l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_ld.ratio";
inline constexpr const char* kLocalLoadSectors = "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum";
inline constexpr const char* kLocalStoreSectors = "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum";
inline constexpr const char* kInstructionsExecuted = "smsp__inst_executed.sum";
// For r0 (optional: without them the SASS, else 4).
inline constexpr const char* kGlobalLoadRequests =
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum";
inline constexpr const char* kGlobalLoadBytesAsked = "smsp__sass_data_bytes_mem_global_op_ld.sum";

// What a coalesced global-load request costs in sectors (r0 above).
enum class CoalescedBaseline {
  kAccessWidth,  // from the bytes the loads asked for, or their SASS width (the default)
  kPaper,        // Eq. 4 as printed: 4 sectors, whatever the width
};
struct EnergyProxyOptions {
  CoalescedBaseline baseline = CoalescedBaseline::kAccessWidth;
};
// "access-width" | "paper", and back (nullopt for any other text).
const char* CoalescedBaselineName(CoalescedBaseline baseline);
std::optional<CoalescedBaseline> ParseCoalescedBaseline(const std::string& name);
// The options of `--energy-proxy NAME` (tools::ToolConfig::energy_proxy); any other name is the
// default.
EnergyProxyOptions EnergyProxyOptionsNamed(const std::string& name);

// Every counter the proxy needs, in term order.
const std::vector<std::string>& EnergyProxyCounters();

struct EnergyProxyTerms {
  double dram_pj = 0;
  double uncoalesced_pj = 0;
  double spills_pj = 0;
  double instructions_pj = 0;
};

// The proxy's inputs summed over the kernels (for showing where each term came from).
struct EnergyProxyInputs {
  double dram_bytes = 0;           // read + written
  double excess_load_sectors = 0;  // Σ sectors · max(0, r/4 − 1)
  double global_load_sectors = 0;  // Σ sectors
  double local_sectors = 0;        // loads + stores
  double instructions = 0;         // warp-level
  // Where r0 came from, over the kernels: "Eq. 4's 4 sectors", "requested bytes (ncu): 16",
  // "widest SASS load: 16", "4 (no access width known)", joined with "; " when kernels differ.
  std::string baseline;
};

struct EnergyProxy {
  double total_pj = 0;
  EnergyProxyTerms terms;
  EnergyProxyInputs inputs;
  int kernels = 0;  // how many kernels were summed
};

// The proxy, or why there is none: `missing` names the counters absent from some kernel (all of
// them when there is no ncu view or it holds no kernel).
struct EnergyProxyEstimate {
  std::optional<EnergyProxy> proxy;
  std::vector<std::string> missing;
};

// With the SASS (Metrics) the kernels' load widths can give r0; an NcuView alone has only ncu's
// requested bytes.
EnergyProxyEstimate ComputeEnergyProxy(const Metrics& metrics,
                                       const EnergyProxyOptions& options = {});
EnergyProxyEstimate ComputeEnergyProxy(const NcuView& ncu, const EnergyProxyOptions& options = {},
                                       const SassView* sass = nullptr);
// The same from the JSON form of Metrics (ToJson(Metrics), as the run store keeps profiles).
EnergyProxyEstimate ComputeEnergyProxyFromJson(const Json& metrics,
                                               const EnergyProxyOptions& options = {});

// proxy(reference) / proxy(candidate); nullopt unless both are positive and finite.
std::optional<double> EnergyReduction(double reference_pj, double candidate_pj);

// {"total_pj", "terms": {"dram", "uncoalesced", "spills", "instructions"}} in pJ; null without a
// proxy.
Json EnergyProxyJson(const EnergyProxyEstimate& estimate);
// The "Energy proxy" text block: the total, each term in pJ with the counters it came from, or the
// missing counters. Ends with a newline.
std::string RenderEnergyProxy(const EnergyProxyEstimate& estimate);

}  // namespace kernelpro::profile
